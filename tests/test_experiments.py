"""The Stream-withholding experiment script runs and reports paired rows."""
from __future__ import annotations

import csv

import pytest

from agents.stats import orient_pairs
from agents.tournament import run_tournament
from benchmarks.experiments.stream_withholding import VARIANTS, main, run
from nertz_env import RulesConfig


def test_stream_withholding_rows():
    rows = run([2, 3], deals=4, seed=0, speeds=True, progress=False)
    assert [(r["teams"], r["speeds"], r["variant"]) for r in rows] == [
        (t, sp, v) for t in (2, 3) for sp in ("all 1", "1,2,..") for v in ("when-useful", "never")]
    for r in rows:
        assert r["baseline"] == "always" and r["deals"] == 4
        # every deal at every seating of the balanced design: 2 at 2 teams, 6 at 3 (A,A,B and A,B,B)
        assert r["hands"] == 4 * {2: 2, 3: 6}[r["teams"]]
        assert r["significant"] == (not r["ci_low"] <= 0.0 <= r["ci_high"])
    # never playing Stream cards to the Lake strands the Nertz pile behind endless flips
    assert all(r["diff"] < 0 for r in rows if r["variant"] == "never")
    # a row is the paired difference of the tournament it names (variant first, slow seats
    # 1, 3, ... when speeds are on): replayed here directly
    for r, cfg in ((rows[0], RulesConfig(num_teams=2)),
                   (rows[7], RulesConfig(num_teams=3, speeds=(1, 2, 1)))):
        assert (r["teams"], r["speeds"], r["variant"]) in ((2, "all 1", "when-useful"),
                                                           (3, "1,2,..", "never"))
        res = run_tournament([VARIANTS[r["variant"]], VARIANTS["always"]], config=cfg, deals=4,
                             seed=0, format="all-play-all", progress=False)
        (pair,) = orient_pairs(res.pairs, [VARIANTS[r["variant"]], VARIANTS["always"]])
        assert res.hands_played == r["hands"]
        for key in ("diff", "ci_low", "ci_high", "significant"):
            assert r[key] == pair[key], key


def test_stream_withholding_cli_writes_files(tmp_path, capsys):
    assert main(["--teams", "2", "--deals", "3", "--no-speeds", "--out", str(tmp_path)]) == 0
    with open(tmp_path / "stream_withholding.csv") as fh:
        back = list(csv.DictReader(fh))
    rows = run([2], deals=3, seed=0, speeds=False, progress=False)
    assert [(b["variant"], b["baseline"]) for b in back] == [("when-useful", "always"),
                                                            ("never", "always")]
    for b, r in zip(back, rows):
        assert float(b["diff"]) == pytest.approx(r["diff"])
    out = capsys.readouterr().out
    assert "when-useful - always" in out and f"{rows[1]['diff']:+6.2f}" in out
