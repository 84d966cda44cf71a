"""The benchmark scripts: their bookkeeping (which slice is paired with which, the figures
computed from the slices) on made-up rates, and a smoke run of the real section. No speed is
asserted here (benchmarks/ report what they measure; a unit test never judges it). The
judgements of models (grid, learning curve, exploitability) are agents/judging's, tested in
tests/judging/."""
from __future__ import annotations

import math

from benchmarks import throughput


def test_parallel_env_bench_pairs_back_to_back_slices(monkeypatch):
    """Each pair is one slice of each env, run back to back, the first alternating; the ratio
    of a pair divides that pair's own two rates."""
    calls, rates = [], {"ours": iter([1.0, 10, 20, 30, 40]), "null": iter([1.0, 2, 5, 4, 8])}
    null_sentinel = object()

    class FakeDriver:
        def __init__(self, env):
            self.kind = "null" if env is null_sentinel else "ours"

        def run(self, seconds):
            calls.append((self.kind, seconds))
            return next(rates[self.kind])

    monkeypatch.setattr(throughput, "ParallelEnvDriver", FakeDriver)
    monkeypatch.setattr(throughput, "null_parallel_env", lambda like: null_sentinel)
    ours, null, ratios = throughput.parallel_env_bench(3.0, pairs=4)
    assert calls == [("ours", 0.2), ("null", 0.2),                     # warm-up
                     ("ours", 0.3), ("null", 0.3), ("null", 0.3), ("ours", 0.3),
                     ("ours", 0.3), ("null", 0.3), ("null", 0.3), ("ours", 0.3)]
    assert ours == [10, 20, 30, 40] and null == [2, 5, 4, 8]
    assert ratios == [5.0, 4.0, 7.5, 5.0]


def test_main_reports_median_quartiles_and_pooled_of_the_pairs(monkeypatch, capsys):
    """Hand-computed figures of five made-up pairs: every summary differs from the others'
    formulas (median of ratios 0.6, ratio of medians 0.7, mean of ratios 0.62, pooled 7/12)."""
    ours, null = [9.0, 8.0, 7.0, 5.0, 6.0], [10.0, 20.0, 10.0, 10.0, 10.0]
    ratios = [x / y for x, y in zip(ours, null)]              # 0.9 0.4 0.7 0.5 0.6
    monkeypatch.setattr(throughput, "parallel_env_bench",
                        lambda seconds: (list(ours), list(null), list(ratios)))
    result = throughput.main(["--sections", "parallel_env", "--seconds", "0.05"])
    assert result["parallel_env_sps"] == 7 and result["null_parallel_env_sps"] == 10
    assert result["parallel_env_ratio"] == 0.6
    assert result["parallel_env_ratio_iqr"] == [0.5, 0.7]
    assert result["parallel_env_ratio_pooled"] == round(7 / 12, 3) == 0.583
    out = capsys.readouterr().out
    assert ("ratio nertz_v0 / do-nothing ParallelEnv: 0.60 (median of 5 paired slices, "
            "quartiles 0.50 - 0.70; pooled 0.58") in out
    assert "python -m benchmarks.throughput --sections parallel_env --seconds 0.05" in out


def test_parallel_env_section_runs_the_real_envs(capsys):
    result = throughput.main(["--sections", "parallel_env", "--seconds", "0.05"])
    figures = [result["parallel_env_sps"], result["null_parallel_env_sps"],
               result["parallel_env_ratio"], result["parallel_env_ratio_pooled"],
               *result["parallel_env_ratio_iqr"]]
    assert all(math.isfinite(x) and x > 0 for x in figures), figures
    assert len(result["parallel_env_ratio_iqr"]) == 2
    assert "median of 40 paired slices" in capsys.readouterr().out


def test_learned_move_times_every_piece_of_a_real_net(capsys):
    """benchmarks/learned_move.py on the shipped net at 2 teams, a few moves: one row per
    piece, 'move' the sum of the kernel's four pieces, and the recorded positions are one
    seat's in play order (consecutive rows share most entries)."""
    import json as _json

    from benchmarks import learned_move
    assert learned_move.main(["--teams", "2", "--ticks", "40", "--moves", "200",
                              "--repeats", "1", "--block", "8"]) == 0
    out = capsys.readouterr().out
    for piece in ("observation", "first layer", "later layers", "head", "legal moves",
                  "move"):
        assert f"| {piece} | " in out
    res = _json.loads(out.strip().splitlines()[-1])
    us = res["us_per_move"]
    parts = ("observation", "first layer", "later layers", "head")
    assert all(us[k] > 0 for k in parts + ("legal moves",))
    assert math.isclose(us["move"], sum(us[k] for k in parts))
    assert res["command"].endswith("--block 8") and res["teams"] == 2
    _, rows, masks = learned_move.record(__import__("nertz_env").RulesConfig(num_teams=2), 40, 0)
    assert rows.shape == (40, learned_move.OBS_DIM) and masks.shape[0] == 40
    near, far = (rows[1:] != rows[:-1]).sum(1).mean(), (rows[20:] != rows[:-20]).sum(1).mean()
    assert near < 0.5 * far, (near, far)
