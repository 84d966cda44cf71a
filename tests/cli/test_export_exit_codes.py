"""nertz export into a folder that is missing or blocked by a file: exit 1 (a folder could not
be written, README's exit status), one line naming the folder, nothing written."""
from __future__ import annotations

from pathlib import Path

from agents.cli import main as nertz_main

MODEL = Path(__file__).resolve().parents[2] / "agents" / "learned" / "models" / "learned.npz"


def test_a_missing_or_blocked_out_folder_exits_1(tmp_path, capsys):
    blocker = tmp_path / "afile"
    blocker.write_text("x")
    for out, says in ((blocker / "sub", "a file is in the way"),
                      (tmp_path / "missing" / "m", "does not exist")):
        assert nertz_main(["export", str(MODEL), str(out)]) == 1
        err = capsys.readouterr().err
        assert len(err.strip().splitlines()) == 1 and says in err and str(out.parent) in err, err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["afile"]
