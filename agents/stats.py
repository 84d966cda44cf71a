"""Statistics of Nertz bot tournaments (pure Python + numpy): the estimators only; tables,
files and plots of their results are agents/report.py.

Design of the statistics
========================

Duplicate deals
    Nertz has a lot of luck: one deal can hand a team an easy Nertz pile and
    another a hopeless one.  A tournament therefore replays every deal once per
    *rotation* ``r = 0..T-1``: in rotation ``r`` team position ``p`` is played
    by agent ``lineup[(p + r) % T]``.  Over the ``T`` rotations every agent of
    the lineup sits in every seat of the same deal, so the luck of the cards
    (and of the seat) is shared by all agents and cancels out of comparisons.

Unit
    The hands of one deal are *not* independent of each other (they share the
    cards).  The independent unit of observation is the **unit** =
    ``(lineup, deal)`` pair: all rotations of one deal in one lineup.  For each
    unit and agent we take the agent's mean score over all the hands and seats
    it played in that unit; confidence intervals are Student-t intervals over
    those per-unit means (``n`` = number of units, ``n - 1`` degrees of
    freedom).  Treating the ``T`` rotations (or ``T`` seats) as independent
    would shrink the intervals by a factor of about ``sqrt(T)`` and make them
    wrong.

Paired differentials
    ``paired_differentials`` compares two agents only on the units where both
    played and takes, per unit, the difference of their mean scores.  Because
    both saw the same cards in the same seats, the deal luck drops out of the
    difference and the variance is far smaller than the difference of two
    unpaired means: this is the primary, statistically sound result of a
    tournament (a paired t-interval; ``significant`` means the 95% interval
    excludes 0, with no correction for multiple comparisons).

Rating (OpenSkill Plackett-Luce)
    The leaderboard also reports a Bayesian skill rating from the ``openskill``
    package's ``PlackettLuce`` model (Weng & Lin 2011).  OpenSkill is chosen
    over TrueSkill because it is maintained, MIT-licensed, free of the
    patent/trademark restrictions of Microsoft's TrueSkill, handles an
    ``n``-team free-for-all with ties natively, and its pure-Python speed is
    ample for the number of hands a tournament plays.  Every hand is rated as a
    free-for-all of ``T`` teams ranked by that hand's score (higher score is
    better, equal scores tie).  When an agent fills several positions of one
    hand (more teams than agents), each position is rated as a separate team
    holding a copy of the agent's current rating, and the agent is then updated
    once with the *average* of those positions' updates (so a hand never counts
    more than once per agent, and an agent's seats playing "against
    themselves" largely cancel).  Hands are processed in record order, so the
    result is deterministic for a given record order.

    What the rating is NOT: it is not an estimate with a valid confidence
    interval, and it is not order-independent -- the online update depends on
    the order of the hands (the model's default dynamics ``tau`` also inflate
    ``sigma`` slightly before each hand).  It ignores the duplicate pairing and
    the margin of victory (only ranks matter).  Use it as a compact summary
    (``ordinal = mu - 3 * sigma``, a conservative skill estimate used for
    sorting); use ``points``/``points_ci`` and the paired differentials for
    conclusions.

Public API
==========
``HandRecords``, ``t_quantile_975``, ``mean_ci``, ``unit_means``,
``leaderboard``, ``paired_differentials`` (and the row keys ``LEADERBOARD_FIELDS``,
``PAIR_FIELDS``).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = [
    "LEADERBOARD_FIELDS",
    "PAIR_FIELDS",
    "HandRecords",
    "leaderboard",
    "mean_ci",
    "paired_differentials",
    "t_quantile_975",
    "unit_means",
]

LEADERBOARD_FIELDS = (
    "agent", "hands", "points", "points_ci", "win_share", "nertz_rate",
    "mu", "sigma", "ordinal",
)
PAIR_FIELDS = ("a", "b", "units", "diff", "ci_low", "ci_high", "significant")


# --------------------------------------------------------------------------
# records
# --------------------------------------------------------------------------


@dataclass
class HandRecords:
    """One row per hand (or per game in "game" mode) played by the runner.

    lineup:   int64 [M]     index of the lineup
    deal:     int64 [M]     index of the deal within that lineup (0..D-1)
    rotation: int64 [M]     rotation r; position p is lineup[(p + r) % T]
    agent:    int64 [M, T]  agent index at each team position
    score:    float64 [M, T] points of each team position in this hand
    called:   float64 [M, T] 1 if that team called Nertz (game mode: the share of the game's
              hands in which it did)
    win:      float64 [M, T] win share (1/k for each of k tied top teams)
    """

    lineup: np.ndarray
    deal: np.ndarray
    rotation: np.ndarray
    agent: np.ndarray
    score: np.ndarray
    called: np.ndarray
    win: np.ndarray

    def __post_init__(self) -> None:
        self.lineup = np.asarray(self.lineup, dtype=np.int64).reshape(-1)
        self.deal = np.asarray(self.deal, dtype=np.int64).reshape(-1)
        self.rotation = np.asarray(self.rotation, dtype=np.int64).reshape(-1)
        m = self.lineup.shape[0]
        self.agent = _as_2d(self.agent, np.int64, m)
        self.score = _as_2d(self.score, np.float64, m)
        self.called = _as_2d(self.called, np.float64, m)
        self.win = _as_2d(self.win, np.float64, m)
        if self.deal.shape[0] != m or self.rotation.shape[0] != m:
            raise ValueError("lineup, deal and rotation must have the same length")
        t = self.agent.shape[1]
        for name in ("score", "called", "win"):
            if getattr(self, name).shape != (m, t):
                raise ValueError(
                    f"{name} has shape {getattr(self, name).shape}, expected {(m, t)}"
                )

    def __len__(self) -> int:
        return int(self.lineup.shape[0])

    @property
    def num_teams(self) -> int:
        return int(self.agent.shape[1])

    @classmethod
    def concatenate(cls, parts: Sequence[HandRecords]) -> HandRecords:
        """Concatenate record batches (in order); all must have the same T."""
        parts = list(parts)
        if not parts:
            raise ValueError("nothing to concatenate")
        return cls(**{
            f: np.concatenate([getattr(p, f) for p in parts], axis=0)
            for f in ("lineup", "deal", "rotation", "agent", "score", "called", "win")
        })


def _as_2d(x: Any, dtype: Any, m: int) -> np.ndarray:
    a = np.asarray(x, dtype=dtype)
    if a.ndim == 1 and m == 0 and a.size == 0:
        a = a.reshape(0, 0)
    if a.ndim != 2 or a.shape[0] != m:
        raise ValueError(f"expected a [M={m}, T] array, got shape {a.shape}")
    return a


# --------------------------------------------------------------------------
# Student t
# --------------------------------------------------------------------------

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
    lo = int(math.floor(df))
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


# --------------------------------------------------------------------------
# aggregation
# --------------------------------------------------------------------------


def unit_means(records: HandRecords, num_agents: int) -> np.ndarray:
    """``[U, num_agents]`` matrix of each agent's mean score per unit.

    A unit is a distinct ``(lineup, deal)`` pair (rows in sorted unit order);
    the entry is the mean over every hand and seat the agent played in that
    unit, NaN where it did not play.
    """
    m, t = records.agent.shape
    if m == 0 or t == 0:
        return np.zeros((0, num_agents))
    keys = np.stack([records.lineup, records.deal], axis=1)
    _, unit = np.unique(keys, axis=0, return_inverse=True)
    unit = np.asarray(unit).reshape(-1)
    n_units = int(unit.max()) + 1
    ag = records.agent
    if ag.min() < 0 or ag.max() >= num_agents:
        raise ValueError("agent index out of range of names")
    flat = (np.repeat(unit, t) * num_agents + ag.reshape(-1))
    size = n_units * num_agents
    sums = np.bincount(flat, weights=records.score.reshape(-1), minlength=size)
    counts = np.bincount(flat, minlength=size)
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)
    return means.reshape(n_units, num_agents)


def _rate(records: HandRecords, num_agents: int, model: Any):
    if model is None:
        from openskill.models import PlackettLuce

        model = PlackettLuce()
    mus = [float(model.mu)] * num_agents
    sigmas = [float(model.sigma)] * num_agents
    m, t = records.agent.shape
    if t < 2:
        return model, mus, sigmas
    agents = records.agent.tolist()
    scores = records.score
    for i in range(m):
        row = agents[i]
        # dense ranks, 0 = best (highest score); equal scores tie
        _, inv = np.unique(-scores[i], return_inverse=True)
        ranks = [int(r) for r in np.asarray(inv).reshape(-1)]
        teams = [[model.rating(mu=mus[a], sigma=sigmas[a])] for a in row]
        new = model.rate(teams, ranks=ranks)
        if len(set(row)) == t:
            for a, team in zip(row, new):
                mus[a] = team[0].mu
                sigmas[a] = team[0].sigma
        else:
            acc: dict[int, list[float]] = {}
            for a, team in zip(row, new):
                s = acc.setdefault(a, [0.0, 0.0, 0])
                s[0] += team[0].mu
                s[1] += team[0].sigma
                s[2] += 1
            for a, (smu, ssig, k) in acc.items():
                mus[a] = smu / k
                sigmas[a] = ssig / k
    return model, mus, sigmas


def leaderboard(records: HandRecords, names: Sequence[str], *,
                model: Any = None) -> list[dict]:
    """One row per agent of ``names``, sorted by rating ordinal (desc).

    Keys (``LEADERBOARD_FIELDS``): ``agent`` name, ``hands`` (team-positions
    played), ``points`` (mean score per team-position), ``points_ci`` (95%
    t half-width over the agent's per-unit mean scores), ``win_share``,
    ``nertz_rate``, ``mu``, ``sigma``, ``ordinal`` (OpenSkill
    ``PlackettLuce``, or the given openskill ``model``; see module doc).
    Agents that never played get ``hands = 0``, NaN stats and the prior rating.
    Ties in ordinal keep the ``names`` order.
    """
    n = len(names)
    ag = records.agent.reshape(-1)
    hands = np.bincount(ag, minlength=n)[:n] if ag.size else np.zeros(n, np.int64)
    if ag.size and (ag.min() < 0 or ag.max() >= n):
        raise ValueError("agent index out of range of names")

    def per_agent_mean(v: np.ndarray) -> np.ndarray:
        if not ag.size:
            return np.full(n, np.nan)
        s = np.bincount(ag, weights=v.reshape(-1).astype(np.float64), minlength=n)
        with np.errstate(invalid="ignore", divide="ignore"):
            return np.where(hands > 0, s / np.maximum(hands, 1), np.nan)

    points = per_agent_mean(records.score)
    win = per_agent_mean(records.win)
    nertz = per_agent_mean(records.called)
    um = unit_means(records, n)
    model, mus, sigmas = _rate(records, n, model)
    rows = []
    for i, name in enumerate(names):
        col = um[:, i]
        _, half = mean_ci(col[~np.isnan(col)])
        r = model.rating(mu=mus[i], sigma=sigmas[i])
        rows.append({
            "agent": str(name),
            "hands": int(hands[i]),
            "points": float(points[i]),
            "points_ci": float(half),
            "win_share": float(win[i]),
            "nertz_rate": float(nertz[i]),
            "mu": float(mus[i]),
            "sigma": float(sigmas[i]),
            "ordinal": float(r.ordinal()),
        })
    order = sorted(range(n), key=lambda i: (-rows[i]["ordinal"], i))
    return [rows[i] for i in order]


def paired_differentials(records: HandRecords, names: Sequence[str],
                         min_units: int = 2) -> list[dict]:
    """Paired per-unit score differences for every agent pair ``a < b``.

    Only pairs sharing at least ``min_units`` (>= 2) units are reported.  Keys
    (``PAIR_FIELDS``): ``a``, ``b`` (names), ``units``, ``diff`` (mean over
    shared units of A's minus B's per-unit mean score), ``ci_low``,
    ``ci_high`` (95% paired t-interval), ``significant`` (interval excludes 0).
    """
    n = len(names)
    min_units = max(2, int(min_units))
    um = unit_means(records, n)
    present = ~np.isnan(um)
    out = []
    for i in range(n):
        for j in range(i + 1, n):
            both = present[:, i] & present[:, j]
            k = int(both.sum())
            if k < min_units:
                continue
            d = um[both, i] - um[both, j]
            mean, half = mean_ci(d)
            lo, hi = mean - half, mean + half
            out.append({
                "a": str(names[i]),
                "b": str(names[j]),
                "units": k,
                "diff": mean,
                "ci_low": lo,
                "ci_high": hi,
                "significant": bool(lo > 0.0 or hi < 0.0),
            })
    return out
