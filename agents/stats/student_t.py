"""Student-t intervals and tests, and Holm's correction (pure Python + numpy, no scipy):
the distribution-level primitives under every interval of agents/stats/estimators.py.

Public API: ``t_quantile_975``, ``mean_ci``, ``t_pvalue``, ``holm``, ``HOLM_ALPHA``.
tests/stats/test_stats.py checks them against scipy.

Kept hand-written though scipy is now required, decided by measurement (2026-12-07):
scipy.stats.t is the same distribution but not the same bits. The quantile differs in the
last bits at large df (t.ppf(0.975, 999) ends ...493 where this gives ...489; equal at 2999)
and by up to ~1e-10 relative below df 200 (the table's 9 decimals, the expansion's error);
every p-value differs near the 14th digit. Every file in docs/experiments/results/*.json
prints half-widths (and the grids p-values) as full-precision floats, so a switch changes
all 33 of them (a grid rerun with scipy swapped in: 4 of 4 rows differ, in half_width, p,
ci_low/high and the arms' half-widths). 14 of them judged models that were never shipped
(runs/...), so their commands cannot be rerun to republish them; 2 retrain leagues for
hours; the other 17 (6 grids, 5 exploitability and 5 search studies, a probe) took about
100 minutes of wall time as published. tests/stats/test_student_t_scipy.py pins the values
they were made with.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence

import numpy as np

__all__ = ["HOLM_ALPHA", "holm", "mean_ci", "t_pvalue", "t_quantile_975"]

HOLM_ALPHA = 0.05

# t_{0.975, df} for df = 1..30 (standard tables, 9 decimals).
_T975 = (
    12.706204736, 4.302652730, 3.182446305, 2.776445105, 2.570581836,
    2.446911851, 2.364624252, 2.306004135, 2.262157163, 2.228138852,
    2.200985160, 2.178812830, 2.160368656, 2.144786688, 2.131449546,
    2.119905299, 2.109815578, 2.100922040, 2.093024054, 2.085963447,
    2.079613845, 2.073873068, 2.068657610, 2.063898562, 2.059538553,
    2.055529439, 2.051830516, 2.048407142, 2.045229642, 2.042272456,
)
_Z975 = 1.959963984540054


def _t975_expansion(df: float) -> float:
    """Cornish-Fisher expansion of the t quantile around the normal one
    (Abramowitz & Stegun 26.7.5); error < 1e-6 for df >= 30."""
    z = _Z975
    z2 = z * z
    g1 = (z2 + 1.0) * z / 4.0
    g2 = ((5.0 * z2 + 16.0) * z2 + 3.0) * z / 96.0
    g3 = (((3.0 * z2 + 19.0) * z2 + 17.0) * z2 - 15.0) * z / 384.0
    g4 = ((((79.0 * z2 + 776.0) * z2 + 1482.0) * z2 - 1920.0) * z2 - 945.0) * z / 92160.0
    return z + g1 / df + g2 / df ** 2 + g3 / df ** 3 + g4 / df ** 4


def t_quantile_975(df: float) -> float:
    """The 0.975 quantile of Student's t with ``df`` degrees of freedom.

    Exact table for integer df 1..30, the Cornish-Fisher expansion beyond,
    ``1.959964`` for ``df = inf``.  Non-integer df below 30 is interpolated
    linearly in ``1/df`` between table entries.  Raises for ``df < 1`` / NaN.
    """
    df = float(df)
    if math.isnan(df) or df < 1.0:
        raise ValueError(f"degrees of freedom must be >= 1, got {df}")
    if math.isinf(df):
        return _Z975
    if df >= 30.0:
        return _t975_expansion(df)
    lo = math.floor(df)
    if lo == df:
        return _T975[lo - 1]
    hi = lo + 1
    w = (1.0 / lo - 1.0 / df) / (1.0 / lo - 1.0 / hi)
    return (1.0 - w) * _T975[lo - 1] + w * _T975[hi - 1]


def mean_ci(values: Iterable[float]) -> tuple[float, float]:
    """Mean and half-width of the 95% Student-t interval of ``values``.

    ``half = t_{0.975, n-1} * sd / sqrt(n)`` with ``sd`` using ddof=1.
    Returns ``(nan, nan)`` for no values and ``(x, nan)`` for a single one.
    """
    x = np.asarray(list(values) if not isinstance(values, np.ndarray) else values,
                   dtype=np.float64).reshape(-1)
    n = x.shape[0]
    if n == 0:
        return float("nan"), float("nan")
    mean = float(x.mean())
    if n == 1:
        return mean, float("nan")
    sd = float(x.std(ddof=1))
    return mean, t_quantile_975(n - 1) * sd / math.sqrt(n)


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the regularized incomplete beta (Numerical Recipes 6.4)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 400):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        de = d * c
        h *= de
        if abs(de - 1.0) < 1e-15:
            break
    return h


def _betai(a: float, b: float, x: float) -> float:
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    lbt = (math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b)
           + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(lbt) * _betacf(a, b, x) / a
    return 1.0 - math.exp(lbt) * _betacf(b, a, 1.0 - x) / b


def t_pvalue(t: float, df: float) -> float:
    """Two-sided p-value ``P(|T| >= |t|)`` of Student's t with ``df`` degrees of freedom.

    NaN for NaN ``t``; ``df`` must be >= 1 (else ValueError).
    """
    df = float(df)
    if math.isnan(df) or df < 1.0:
        raise ValueError(f"degrees of freedom must be >= 1, got {df}")
    t = float(t)
    if math.isnan(t):
        return float("nan")
    if math.isinf(t):
        return 0.0
    return _betai(df / 2.0, 0.5, df / (df + t * t))


def holm(pvalues: Sequence[float], alpha: float = HOLM_ALPHA) -> list[bool]:
    """Holm's step-down rejections at family-wise level ``alpha`` (NaN p-values never reject
    but count in the family, so adding an untestable pair never loosens the others)."""
    p = [float(x) for x in pvalues]
    m = len(p)
    order = sorted(range(m), key=lambda i: (math.isnan(p[i]), p[i] if not math.isnan(p[i]) else 0.0, i))
    out = [False] * m
    for k, i in enumerate(order):
        if math.isnan(p[i]) or p[i] > alpha / (m - k):
            break
        out[i] = True
    return out
