"""numba's on-disk cache, made to follow a kernel's imports.

numba keeps a `@njit(cache=True)` kernel's compiled code keyed by a hash of the kernel's own
source file only. A kernel that calls another module's jitted function (fork.py's rollouts
call net_policy.py's forward and constraint_rules.py's rule code, core_layers.py calls the
same rule code, batch.py calls tick.py, ...) has that code compiled into it; change the callee
alone (an editable install after a `git pull`, a developer's edit) and the cached caller runs
the OLD callee: silently wrong moves. Seen in this project (c18f4e9: core/fork.py had a
hand-bumped NET_POLICY_REV for one such pair; this replaces it).

The fix here: for source files under ROOTS (the nertz_env and agents packages), the cache's
source stamp is the hash of the file itself AND of every file of those packages it imports,
transitively (read from the import statements with `ast`, nothing imported or run), so a
change anywhere in a kernel's import closure recompiles it, and nothing else does. Files
outside ROOTS keep numba's own stamp. The locators are numba's own three file-backed ones
(NUMBA_CACHE_DIR, the __pycache__ beside the file, the user-wide cache) with this stamp, put
first in numba's list (`install`, called by core/__init__.py before any kernel module is
imported, since numba picks a function's locator when it is decorated; every kernel of
nertz_env lives under core/, and agents' kernels import nertz_env first); a user's
NUMBA_CACHE_LOCATOR_CLASSES still overrides them. Where numba's caching internals are not as
this numba (0.68) has them, nothing is installed and numba's own stamps apply.
tests/core/test_kernel_cache.py: a callee changed in a fresh process recompiles its caller.
"""
from __future__ import annotations

import ast
import hashlib
import os
from functools import lru_cache

_NERTZ_ENV = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROOTS = [_NERTZ_ENV, os.path.join(os.path.dirname(_NERTZ_ENV), "agents")]


def _root_of(path: str):
    path = os.path.abspath(path)
    for root in ROOTS:
        if path.startswith(root + os.sep):
            return root
    return None


def _module_file(parent: str, dotted: str):
    """The file of module `dotted` (a.b.c) found under directory `parent`, or None."""
    base = os.path.join(parent, *dotted.split("."))
    for cand in (base + ".py", os.path.join(base, "__init__.py")):
        if os.path.isfile(cand):
            return cand
    return None


@lru_cache(maxsize=None)
def _imports(path: str, mtime_ns: int, size: int) -> tuple:
    """The files under ROOTS that `path` imports (any import statement, at any depth)."""
    try:
        with open(path, "rb") as f:
            tree = ast.parse(f.read(), path)
    except (OSError, SyntaxError, ValueError):
        return ()
    here = os.path.dirname(path)
    top = {os.path.basename(r): os.path.dirname(r) for r in ROOTS}     # package -> its parent
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                pkg = alias.name.split(".")[0]
                if pkg in top:
                    found.append(_module_file(top[pkg], alias.name))
        elif isinstance(node, ast.ImportFrom):
            if node.level:                                   # relative: from .x / from .. import
                base = here
                for _ in range(node.level - 1):
                    base = os.path.dirname(base)
                parent, dotted = base, node.module or ""
            else:
                pkg = (node.module or "").split(".")[0]
                if pkg not in top:
                    continue
                parent, dotted = top[pkg], node.module
            mod = _module_file(parent, dotted) if dotted else os.path.join(parent,
                                                                          "__init__.py")
            found.append(mod)
            for alias in node.names:                         # from pkg import module
                found.append(_module_file(parent, f"{dotted}.{alias.name}" if dotted
                                          else alias.name))
    return tuple(sorted({f for f in found if f and os.path.isfile(f) and _root_of(f)}))


@lru_cache(maxsize=None)
def _hashed(path: str, mtime_ns: int, size: int) -> bytes:
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).digest()


def closure(path: str) -> list:
    """`path` and every file under ROOTS it imports, transitively, sorted."""
    seen, todo = set(), [os.path.abspath(path)]
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        st = os.stat(p)
        todo.extend(f for f in _imports(p, st.st_mtime_ns, st.st_size) if f not in seen)
    return sorted(seen)


@lru_cache(maxsize=None)
def closure_stamp(path: str) -> str:
    """The hash of the contents of `path`'s closure (names relative to their root); once per
    file and process (numba asks it of every kernel as it is decorated)."""
    h = hashlib.sha256()
    for p in closure(path):
        st = os.stat(p)
        root = _root_of(p) or os.path.dirname(p)
        h.update(os.path.relpath(p, os.path.dirname(root)).encode())
        h.update(_hashed(p, st.st_mtime_ns, st.st_size))
    return h.hexdigest()


def install() -> bool:
    """Put the closure-stamped locators first in numba's list (once). False where numba's
    caching internals differ from what this module expects (then nothing changes)."""
    try:
        from numba.core import caching
        impl = getattr(caching, "CacheImpl", None) or caching._CacheImpl   # 0.68: CacheImpl
        bases = (caching.UserProvidedCacheLocator,
                 caching.InTreeCacheLocator, caching.UserWideCacheLocator)
        classes = impl._locator_classes
    except (ImportError, AttributeError):
        return False
    if any(getattr(c, "nertz_closure", False) for c in classes):
        return True
    ours = []
    for base in bases:
        def from_function(cls, py_func, py_file, _base=base):
            if _root_of(py_file) is None:
                return None                    # not ours: numba's own locators decide
            return _base.from_function.__func__(cls, py_func, py_file)

        def get_source_stamp(self, _base=base):
            return (_base.get_source_stamp(self), closure_stamp(self._py_file))

        ours.append(type(f"Closure{base.__name__}", (base,), {
            "nertz_closure": True, "from_function": classmethod(from_function),
            "get_source_stamp": get_source_stamp}))
    classes[:0] = ours
    return True
