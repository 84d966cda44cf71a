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
SEARCH_NOTICE = ("numba is compiling the search kernels (first use after install; cached for "
                 "later runs): 2 to 4 minutes on a busy 2-core machine, the progress bar waits "
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


def print_compile_notice(core, first_tables: int, batch_tables: int, agents=()) -> None:
    """COMPILE_NOTICE on stderr when the kernels this run will call are not cached: the
    Python path's when some agent is not a core bot (core[i] None), else the whole-game
    kernel that a batch of that many tables picks; SEARCH_NOTICE too when an agent's own
    kernels (its numba_kernels(): a `search:` agent's rollouts) are not."""
    if any(c is None for c in core):
        kernels = PYTHON_PATH_KERNELS
    else:
        kernels = (play_bots_batch if min(first_tables, batch_tables) >= PARALLEL_MIN_TABLES
                   else play_bots_range,)
    own = [k for a in agents if callable(getattr(a, "numba_kernels", None))
           for k in a.numba_kernels()]
    for note in (compile_notice(kernels), None if all(map(kernel_cached, own))
                 else SEARCH_NOTICE):
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


def trim_bar(bar, n) -> None:
    """Take n tables off the bar's total: a precision run's bar counts to its cap (so its
    percentage never goes backwards and its ETA is the most the run can take); a part that
    stops before its cap gives back the tables it did not play."""
    if n > 0:
        bar.total -= n
        bar.refresh()


def precision_line(target, first: int, cap: int, unit: str, cap_from: str, hands: int,
                   off: str) -> str:
    """The one line a precision run prints first: a target, not the deal count, decides
    how long it plays; how to bound it or turn it off."""
    return (f"precision target: {unit} play on past their first {first:,} deals until every "
            f"headline 95% half-width is <= {target:g}, up to {cap:,} deals each "
            f"({cap_from}; at most {hands:,} hands in all): bound it with --max-deals N, "
            f"or {off}")


STALL_SHARE = 0.5
"""A batch whose hands reach the tick cap this often is said on screen (note_stalls); so is
one whose tables are this often still playing past LONG_HAND of max_ticks (StallWatch)."""
STALL_S = 90.0
"""A batch of tables still playing after this many seconds may be said on screen
(StallWatch): a batch of bots plays in well under a second, one of nets in seconds."""
LONG_HAND = 0.5
"""The share of max_ticks past which a hand of the Python loop runs long (hands last about a
hundred ticks; a stalled one runs to the cap)."""
STALL_ADVICE = ("a weak agent (an untrained network, random moves) may stall hands until the "
                "tick cap, and the run takes far longer than usual")
RUNNING_LONG = "hands running long"


def say_once(bar, line: str, postfix: str) -> None:
    """line on stderr above the bar and postfix on it, once per bar (progress off: nothing)."""
    if isinstance(bar, NoBar) or getattr(bar, "stall_said", False):
        return
    bar.stall_said = True
    bar.set_postfix_str(postfix, refresh=True)
    if available("tqdm"):
        from tqdm.auto import tqdm
        tqdm.write(line, file=sys.stderr)
    else:  # pragma: no cover - a bar without tqdm is a NoBar
        print(line, file=sys.stderr, flush=True)


def note_stalls(bar, ticks, max_ticks: int) -> None:
    """After a batch: say_once when STALL_SHARE of its hands (ticks > 0: played) ended at
    the tick cap. Reads the ticks already recorded: costs one comparison per hand."""
    played = ticks[ticks > 0]
    share = float((played >= max_ticks).mean()) if played.size else 0.0
    if share >= STALL_SHARE:
        say_once(bar, f"hands are reaching the tick cap: {share:.0%} of this batch's hands "
                      f"ended at max_ticks={max_ticks}; {STALL_ADVICE}",
                 "hands reach the tick cap")


class StallWatch:
    """Says once (say_once) that a batch's hands are running long, while it plays.

    - A batch played inside numba (core bots, nets) shows nothing until it ends: a timer says
      it when the batch has played STALL_S seconds (such a batch takes seconds at most).
    - The Python loop (seat_loop.py) sees its ticks: it stops the timer (`by_ticks`) and asks
      `check` each tick, which says it only when the batch has played STALL_S seconds and
      STALL_SHARE of its tables are still playing past LONG_HAND of max_ticks. An agent
      that thinks long (a `search:` agent: seconds a tick over thousands of tables) on hands
      of normal length is never said to stall."""

    def __init__(self, bar, tables: int, max_ticks: int):
        import threading
        import time
        self.bar, self.tables, self.max_ticks = bar, tables, max_ticks
        self.clock = time.monotonic
        self.start = self.clock()
        self.long_tick = int(max_ticks * LONG_HAND)
        self.done = False
        line = (f"hands are running long: a batch of {tables:,} tables has played for "
                f"{STALL_S:.0f} s and not finished (a hand ends at max_ticks={max_ticks} at "
                f"the latest); {STALL_ADVICE}")
        self.timer = threading.Timer(STALL_S, say_once, (bar, line, RUNNING_LONG))
        self.timer.daemon = True
        self.timer.start()

    def cancel(self) -> None:
        self.timer.cancel()

    def by_ticks(self) -> None:
        """The loop reports its ticks: the timer stops, `check` decides."""
        self.timer.cancel()

    def due(self) -> bool:
        """Whether `check` may say anything yet (one clock read)."""
        return not self.done and self.clock() - self.start >= STALL_S

    def check(self, ticks) -> None:
        """ticks: the hand ticks of the batch's tables still playing."""
        long = int((ticks >= self.long_tick).sum())
        if long >= STALL_SHARE * self.tables:
            self.done = True
            say_once(self.bar, f"hands are running long: {long:,} of a batch of "
                               f"{self.tables:,} tables still playing past tick "
                               f"{self.long_tick} of max_ticks={self.max_ticks} after "
                               f"{self.clock() - self.start:.0f} s; {STALL_ADVICE}",
                     RUNNING_LONG)


def stall_watch(bar, tables: int, max_ticks: int):
    """A started StallWatch of a batch of `tables` tables (None when progress is off)."""
    if isinstance(bar, NoBar):
        return None
    return StallWatch(bar, tables, max_ticks)


def progress_bar(total, enabled, desc):
    """A tqdm bar of `total` tables (hands), or a NoBar when disabled or tqdm is missing."""
    if not enabled or not available("tqdm"):
        return NoBar()
    from tqdm.auto import tqdm
    return tqdm(total=total, desc=desc, unit="hand", leave=False)
