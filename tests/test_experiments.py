"""The Stream-withholding experiment script runs and reports paired rows."""
from __future__ import annotations

from benchmarks.experiments.stream_withholding import main, run


def test_stream_withholding_rows():
    rows = run([2, 3], deals=4, seed=0, speeds=True, progress=False)
    assert [(r["teams"], r["speeds"], r["variant"]) for r in rows] == [
        (t, sp, v) for t in (2, 3) for sp in ("all 1", "1,2,..") for v in ("when-useful", "never")]
    for r in rows:
        assert r["ci_low"] <= r["diff"] <= r["ci_high"]
        assert r["hands"] == 4 * r["teams"]
    # never playing Stream cards to the Lake strands the Nertz pile behind endless flips
    assert all(r["diff"] < 0 for r in rows if r["variant"] == "never")


def test_stream_withholding_cli_writes_files(tmp_path, capsys):
    assert main(["--teams", "2", "--deals", "3", "--no-speeds", "--out", str(tmp_path)]) == 0
    assert (tmp_path / "stream_withholding.csv").exists()
    assert "when-useful - always" in capsys.readouterr().out
