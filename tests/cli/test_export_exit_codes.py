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


def test_a_run_folder_under_a_file_names_the_file(tmp_path, capsys):
    """nertz tournament --out afile/sub: exit 1 saying afile is a file (it said 'File exists')."""
    blocker = tmp_path / "afile"
    blocker.write_text("x")
    assert nertz_main(["tournament", "--agents", "random,greedy", "--teams", "2", "--deals", "2",
                       "--quiet", "--out", str(blocker / "sub")]) == 1
    err = capsys.readouterr().err
    assert f"{str(blocker)!r} is a file, not a folder" in err and "File exists" not in err, err
    assert blocker.read_text() == "x"
