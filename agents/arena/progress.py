"""What a long run shows on the terminal: its progress bar and, on a fresh install, the
notice that numba is compiling (probing numba's cache files for the kernels a run needs).

Changes no number: everything here writes to stderr or nowhere.
"""
from __future__ import annotations

import hashlib
import os
import sys

from nertz_env.core.batch import (deal_bots_range, play_bots_batch, play_bots_range, step_range,
                                  tick_inputs_tuples)
from nertz_env.engine import PARALLEL_MIN_TABLES
from nertz_env.optional import available

PYTHON_PATH_KERNELS = (deal_bots_range, step_range, tick_inputs_tuples)
COMPILE_NOTICE = ("numba is compiling the game kernels (first run after install; cached for "
                  "later runs): about a minute on a 2-core machine, the progress bar waits "
                  "at 0% meanwhile")


def numba_cache_dirs(py_file) -> list:
    """The directories where numba keeps the cache files of functions defined in py_file,
    in the order of its locators: NUMBA_CACHE_DIR if set (nothing else is then used), else
    the __pycache__ beside the file, then the user-wide cache (read-only installs)."""
    import numba

    src_dir = os.path.dirname(os.path.abspath(py_file))
    # numba's subfolder for a source folder: its name and a hash of its path
    sub = f"{os.path.basename(src_dir)}_{hashlib.sha1(src_dir.encode()).hexdigest()}"
    if numba.config.CACHE_DIR:
        return [os.path.join(numba.config.CACHE_DIR, sub)]
    dirs = [os.path.join(src_dir, "__pycache__")]
    try:
        from numba.misc.appdirs import AppDirs
        dirs.append(os.path.join(AppDirs(appname="numba", appauthor=False).user_cache_dir, sub))
    except ImportError:  # pragma: no cover - numba moved its vendored appdirs
        pass
    return dirs


def kernel_cached(kernel) -> bool:
    """Whether numba's cache holds an index (.nbi) for `kernel`, a @njit(cache=True)
    function: its file is named module.qualname-firstline.pyXY.nbi. True under
    NUMBA_DISABLE_JIT (nothing compiles) and for functions that are not dispatchers."""
    import numba

    py_func = getattr(kernel, "py_func", None)
    if numba.config.DISABLE_JIT or py_func is None:
        return True
    py_file = py_func.__code__.co_filename
    module = os.path.splitext(os.path.basename(py_file))[0]
    index = (f"{module}.{py_func.__qualname__}-{py_func.__code__.co_firstlineno}"
             f".py{sys.version_info[0]}{sys.version_info[1]}.nbi")
    return any(os.path.isfile(os.path.join(d, index)) for d in numba_cache_dirs(py_file))


def compile_notice(kernels) -> str | None:
    """COMPILE_NOTICE when any of `kernels` has no cache file yet (a fresh install), else None."""
    return None if all(kernel_cached(k) for k in kernels) else COMPILE_NOTICE


def print_compile_notice(core, first_tables: int, batch_tables: int) -> None:
    """COMPILE_NOTICE on stderr when the kernels this run will call are not cached: the
    Python path's when some agent is not a core bot (core[i] None), else the whole-game
    kernel that a batch of that many tables picks."""
    if any(c is None for c in core):
        kernels = PYTHON_PATH_KERNELS
    else:
        kernels = (play_bots_batch if min(first_tables, batch_tables) >= PARALLEL_MIN_TABLES
                   else play_bots_range,)
    note = compile_notice(kernels)
    if note:
        print(note, file=sys.stderr, flush=True)


class NoBar:
    """A progress bar that shows nothing (progress off, or on a Ray worker)."""
    total = 0

    def update(self, n):
        pass

    def refresh(self):
        pass

    def close(self):
        pass


def grow_bar(bar, n) -> None:
    """Add n tables to the bar's total (a precision run learns its size block by block)."""
    bar.total += n
    bar.refresh()


def progress_bar(total, enabled, desc):
    """A tqdm bar of `total` tables (hands), or a NoBar when disabled or tqdm is missing."""
    if not enabled or not available("tqdm"):
        return NoBar()
    from tqdm.auto import tqdm
    return tqdm(total=total, desc=desc, unit="hand", leave=False)
