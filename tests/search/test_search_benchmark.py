"""benchmarks/search.py (search cost): a smoke run at a tiny size checks the shape of what it
prints and returns; no speed is asserted (benchmarks report, tests never judge a speed)."""
from __future__ import annotations

import json

import pytest

from benchmarks import search as bench_search

SPECS = ["search:worlds=1,horizon=2", "search:worlds=2,horizon=1"]


def test_search_benchmark_rows_table_and_json(capsys):
    argv = ["--teams", "2", "--deals", "2", "--spec", SPECS[0], "--spec", SPECS[1],
            "--threads", "1"]
    result = bench_search.main(argv)
    rows = result["rows"]
    assert [(r["spec"], r["teams"], r["threads"]) for r in rows] == [(s, 2, 1) for s in SPECS]
    for r in rows:
        assert r["hands"] == 4                    # two deals at both seatings, one search seat
        assert 0 <= r["deviations"] <= r["decisions"]
        assert r["cpu_s_per_hand"] == pytest.approx(r["cpu_s"] / 4, abs=1e-3)
        assert r["s_per_hand"] == pytest.approx(r["wall_s"] / 4, abs=1e-3)
        if r["decisions"]:
            assert r["cpu_ms_per_decision"] == pytest.approx(1000 * r["cpu_s"] / r["decisions"],
                                                          rel=0.05, abs=0.5)
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0] == "$ python -m benchmarks.search " + " ".join(argv)
    assert lines[1].startswith("| spec | teams | threads |") and lines[2].startswith("|---")
    assert [ln.split(" | ")[0] for ln in lines[3:5]] == [f"| `{s}`" for s in SPECS]
    assert json.loads(lines[5]) == result and len(lines) == 6


def test_search_benchmark_rows_at_one_and_two_threads(capsys):
    argv = ["--teams", "2", "--deals", "2", "--spec", SPECS[0], "--threads", "1,2"]
    rows = bench_search.main(argv)["rows"]
    assert [(r["spec"], r["threads"]) for r in rows] == [(SPECS[0], 1), (SPECS[0], 2)]
    assert rows[0]["decisions"] == rows[1]["decisions"]          # the same moves
    assert rows[0]["deviations"] == rows[1]["deviations"]
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[4].startswith(f"| `{SPECS[0]},threads=2` | 2 | 2 |")


@pytest.mark.parametrize("argv, words", [
    (["--spec", "greedy"], "must be a search: agent"),
    (["--spec", "search", "--threads", "1,999"], "threads='999' must be an int from 1"),
    (["--also", "no-such-revision"], "--also 'no-such-revision' must be a git revision"),
])
def test_search_benchmark_refuses_bad_input_before_any_run(argv, words, monkeypatch):
    monkeypatch.setattr(bench_search, "bench", lambda *a: pytest.fail("a row was run"))
    with pytest.raises(ValueError, match=words.replace("(", r"\(")):
        bench_search.main(["--teams", "2", "--deals", "2", *argv])
