"""`nertz train --out afile/sub` (a file in the way): exit 1 naming the path, and no line
claims a folder was removed that was never made (#40: it said 'afile/sub was removed')."""
from __future__ import annotations

import pytest

pytest.importorskip("torch")

from agents.cli import main as nertz_main  # noqa: E402

ARGS = ["--learner", "lean", "--num-envs", "8", "--n-steps", "16", "--batch-size", "64",
        "--max-ticks", "150", "--net-arch", "32,32", "--no-progress", "--torch-threads", "1",
        "--timesteps", "128", "--bc-rows", "0"]


def test_an_out_that_cannot_be_made_exits_1_without_an_untrue_line(tmp_path, capsys):
    blocker = tmp_path / "afile"
    blocker.write_text("x")
    assert nertz_main(["train", *ARGS, "--out", str(blocker / "sub")]) == 1
    out, err = capsys.readouterr()
    assert "afile" in err and len(err.strip().splitlines()) == 1, err
    assert "removed" not in out + err and "emptied" not in out + err, out + err
    assert blocker.read_text() == "x"
