"""The benchmark scripts run (smoke): each section returns the figures the README quotes. No
speed is asserted here (benchmarks/ report what they measure; a unit test never judges it)."""
from __future__ import annotations

from benchmarks import throughput


def test_parallel_env_section_reports_paired_ratios(capsys):
    result = throughput.main(["--sections", "parallel_env", "--seconds", "0.05"])
    assert result["parallel_env_sps"] > 0 and result["null_parallel_env_sps"] > 0
    q1, q3 = result["parallel_env_ratio_iqr"]
    assert 0 < q1 <= result["parallel_env_ratio"] <= q3
    assert result["parallel_env_ratio_pooled"] > 0
    out = capsys.readouterr().out
    assert "median of 40 paired slices" in out and "python -m benchmarks.throughput" in out
