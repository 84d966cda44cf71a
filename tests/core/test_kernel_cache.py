"""nertz_env/core/kernel_cache.py: a cached kernel is recompiled when a file it imports changes,
not only its own. numba alone keys a kernel's cache by its own file, so a caller cached before
its callee changed keeps running the old callee (the negative control below shows it does,
with this numba); with nertz_env's locators the caller sees the new callee. Each step runs
in a fresh process, as a user's next run after an edit or a `git pull` would."""
from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

from nertz_env.core import kernel_cache
from nertz_env.core import fork

CALLER = textwrap.dedent("""\
    from numba import njit
    from .callee import g


    @njit(cache=True)
    def f():
        return g()
""")
CALLEE = "from numba import njit\n\n\n@njit(cache=True)\ndef g():\n    return {}\n"


def _run(tmp: Path, ours: bool) -> str:
    """f() of the temporary package in a fresh process, its cache in tmp/cache; `ours`:
    nertz_env's locators cover the package (else numba's own stamps apply to it)."""
    script = textwrap.dedent(f"""\
        import sys
        sys.path.insert(0, {str(tmp)!r})
        import nertz_env.core.kernel_cache as kc
        if {ours!r}:
            kc.ROOTS.append({str(tmp / 'kcpkg')!r})
        from kcpkg.caller import f
        print(f())
    """)
    env = {"NUMBA_CACHE_DIR": str(tmp / "cache"), "PATH": "/usr/bin:/bin"}
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         env=env, cwd=Path(__file__).resolve().parents[2], timeout=300)
    assert out.returncode == 0, out.stderr
    return out.stdout.strip()


def _package(tmp: Path) -> Path:
    pkg = tmp / "kcpkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "caller.py").write_text(CALLER)
    (pkg / "callee.py").write_text(CALLEE.format(1))
    return pkg


def test_a_changed_callee_recompiles_its_cached_caller(tmp_path):
    pkg = _package(tmp_path / "ours")
    assert _run(tmp_path / "ours", True) == "1"                  # compiled and cached
    (pkg / "callee.py").write_text(CALLEE.format(22))
    assert _run(tmp_path / "ours", True) == "22"


def test_numba_alone_keeps_the_old_callee(tmp_path):
    """The hazard itself (negative control): without the closure stamp the cached caller
    still returns the old callee's value."""
    pkg = _package(tmp_path / "numba")
    assert _run(tmp_path / "numba", False) == "1"
    (pkg / "callee.py").write_text(CALLEE.format(22))
    assert _run(tmp_path / "numba", False) == "1"


def test_the_rollouts_closure_holds_the_net_and_the_constraint_code():
    names = {Path(p).name for p in kernel_cache.closure(fork.__file__)}
    assert {"fork.py", "net_policy.py", "constraint_rules.py", "tick.py"} <= names
    assert all(kernel_cache._root_of(p) for p in kernel_cache.closure(fork.__file__))
