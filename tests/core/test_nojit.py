"""The rule scenarios, the API error tests and a short differential run, again with
NUMBA_DISABLE_JIT=1: the kernels then run as plain Python, so coverage tools see inside them
and a numba-only behaviour (wrap-around, typing) cannot hide a rule bug. Runs in a subprocess
because the flag is read when numba is imported."""
from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]   # tests/


def test_rules_and_reference_agreement_without_jit():
    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    cmd = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist",
           str(HERE / "table" / "test_rules.py"), str(HERE / "table" / "test_api_errors.py"),
           str(HERE / "core" / "test_core_vs_reference.py") + "::test_core_agrees_with_reference[0]"]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=HERE.parent)
    assert out.returncode == 0, out.stdout[-3000:] + out.stderr[-3000:]
    assert " passed" in out.stdout and "failed" not in out.stdout
