"""`python -m benchmarks.learned_tournament --kernel-from REV` (README's speed table) plays an
old agents/learned/core_play.py beside today's. NumpyPolicy no longer carries the private names
an old kernel's Stack read (`_layers`, `_head_out`); the benchmark gives them to the policies it
stacks, so the old Stack holds the same arrays as today's."""
import subprocess
from pathlib import Path

import numpy as np
import pytest

from agents.learned import core_play
from agents.learned.weights import NumpyPolicy

ROOT = Path(__file__).resolve().parents[2]
LEARNED = ROOT / "agents" / "learned" / "models" / "learned.npz"
REV = "51f09cc"                   # the revision README's command names


def test_numpy_policy_has_no_private_layer_names():
    p = NumpyPolicy.load(LEARNED)
    assert not hasattr(p, "_layers") and not hasattr(p, "_head_out")


def test_the_old_kernels_stack_reads_todays_policy(tmp_path):
    if subprocess.run(["git", "cat-file", "-e", f"{REV}:agents/learned/core_play.py"], cwd=ROOT,
                      capture_output=True).returncode != 0:
        pytest.skip(f"no git history with {REV} (a shallow clone)")
    from benchmarks.learned_tournament import kernel_at
    old = kernel_at(REV, tmp_path)
    p = NumpyPolicy.load(LEARNED)
    a, b = old.Stack([(p, 3)]), core_play.Stack([(p, 3)])
    assert a.ok and b.ok
    for name in ("w0", "b0", "wh", "bh", "wa", "ba"):
        np.testing.assert_array_equal(getattr(a, name), getattr(b.nets, name), err_msg=name)
