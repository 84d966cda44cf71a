"""The benchmark scripts: their bookkeeping (which slice is paired with which, the figures
computed from the slices) on made-up rates, and a smoke run of the real section. No speed is
asserted here (benchmarks/ report what they measure; a unit test never judges it)."""
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
