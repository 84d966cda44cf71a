"""train.expert_iteration's exit statuses (the project's: 2 bad input, 1 a file, 130 Ctrl-C),
each one line on stderr: a file that cannot be written and a Ctrl-C during a generation used
to leave a traceback (only ValueError was caught there)."""
from __future__ import annotations

import errno

import pytest

pytest.importorskip("torch")

import train.expert_iteration as ei  # noqa: E402

TINY = ["--formats", "2teams:4", "--search", "search:worlds=2,horizon=5", "--block", "2",
        "--epochs", "1", "--judge-deals", "2", "--generations", "1"]


@pytest.mark.parametrize("err, code, words", [
    (OSError(errno.ENOSPC, "No space left on device", "gen1/labels"), 1,
     "gen1/labels: No space left on device"),
    (KeyboardInterrupt(), 130, "interrupted (finished steps are kept"),
    (ValueError("labels: bad shard"), 2, "error: labels: bad shard"),
])
def test_a_stop_in_a_generation_is_one_line_and_its_status(tmp_path, capsys, monkeypatch,
                                                           err, code, words):
    def stop(*a, **k):
        raise err
    monkeypatch.setattr(ei, "generation", stop)
    assert ei.main(["--out", str(tmp_path / "run")] + TINY) == code
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith(ei.PROG) and words in lines[0], lines
    assert "Traceback" not in lines[0]


def test_anything_else_is_raised(tmp_path, monkeypatch):
    def stop(*a, **k):
        raise RuntimeError("a bug")
    monkeypatch.setattr(ei, "generation", stop)
    with pytest.raises(RuntimeError, match="a bug"):
        ei.main(["--out", str(tmp_path / "run")] + TINY)
