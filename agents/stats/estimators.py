"""Statistics of Nertz bot tournaments (pure Python + numpy): the estimators only; tables,
files and plots of their results are agents/stats/report.py.

Design of the statistics
========================

Duplicate deals
    Nertz has a lot of luck: one deal can hand a team an easy Nertz pile and
    another a hopeless one.  A tournament therefore replays every deal at
    several seatings (and, in a round-robin, in every lineup), so the luck of
    the cards and of the seats is shared by all agents and cancels out of
    comparisons.

Unit: the deal
    Every lineup plays the same deal keys, so all the hands of one deal index
    -- every lineup and every seating -- share that deal's luck and are *not*
    independent.  The independent unit is the **deal**: all records with the
    same ``deal`` index form one cluster.  Every interval here (points per
    hand, win share, Nertz-call rate, paired differences) is a Student-t
    interval over per-deal values (``n`` = number of deals, ``n - 1`` degrees
    of freedom); the count of deals is reported as ``units``.  Treating
    lineups, seatings or seats of one deal as independent makes intervals too
    narrow (tests/stats/test_coverage.py shows the former per-(lineup, deal)
    estimator under-covering in a round-robin).

Per-agent values
    For each deal and agent: the mean of the agent's value over every hand
    and seat it played in that deal (NaN where it did not play); the
    leaderboard's ``points`` is the mean of those per-deal means over the
    deals the agent played (equal to the plain mean per hand when every deal
    has the same design), ``points_ci`` its 95% t half-width over deals.

Paired differences
    For agents A and B and each deal: the mean, over the hands of that deal
    where A and B sat at the same table, of (A's points - B's points) (an
    agent holding several seats of a hand counts with its mean over them).
    The paired difference is the mean of those per-deal values over the deals
    where the two met, with a t-interval and a two-sided paired t-test
    p-value over deals.  Because both saw the same cards, the deal's luck
    drops out.  If A and B never share a table anywhere in the records, the
    per-deal value is instead the difference of their per-deal means (luck
    still cancels across seatings, but not the opponents' strength); such a
    row has ``same_table = False``.
    ``significant``: the raw 95% interval excludes 0.  ``holm``: Holm's
    step-down verdict at family-wise alpha 0.05 over all pairs of the table
    (use it when reading many rows at once).

Ranking
    The leaderboard is ranked by mean points per hand over deals -- the same
    quantity the paired differences compare, so rank and pairs agree up to
    the pairs' opponents.  ``rating`` (``ci_low``/``ci_high`` as
    ``rating_low``/``rating_high``) is a Plackett-Luce log-strength fitted in
    one batch over all hands with a bootstrap over deals (agents/stats/ratings.py,
    independent of record order); it is reported, not used to rank.

Public API
==========
``deal_means``, ``leaderboard``, ``paired_differentials``, ``orient_pairs`` (and the row
keys ``LEADERBOARD_FIELDS``, ``PAIR_FIELDS``); ``HandRecords`` (agents/stats/records.py)
and ``t_quantile_975``, ``mean_ci``, ``t_pvalue``, ``holm`` (agents/stats/student_t.py)
are re-exported here, so ``from agents.stats.estimators import ...`` keeps working.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from .ratings import fit_ratings
from .records import HandRecords
from .student_t import HOLM_ALPHA, holm, mean_ci, t_pvalue, t_quantile_975

__all__ = [
    "LEADERBOARD_FIELDS",
    "PAIR_FIELDS",
    "HandRecords",
    "deal_means",
    "holm",
    "leaderboard",
    "mean_ci",
    "orient_pairs",
    "paired_differentials",
    "t_pvalue",
    "t_quantile_975",
]

LEADERBOARD_FIELDS = (
    "agent", "hands", "units", "points", "points_ci", "win_share", "win_ci",
    "nertz_rate", "nertz_ci", "rating", "rating_low", "rating_high",
)
PAIR_FIELDS = ("a", "b", "units", "diff", "ci_low", "ci_high", "p_value",
               "significant", "holm", "same_table")


# --------------------------------------------------------------------------
# aggregation over deals
# --------------------------------------------------------------------------


def _check_agents(records: HandRecords, num_agents: int) -> None:
    ag = records.agent
    if ag.size and (ag.min() < 0 or ag.max() >= num_agents):
        raise ValueError(f"agent index out of range of names: records hold agents "
                         f"{int(ag.min())}..{int(ag.max())}, names cover 0..{num_agents - 1}")


def _deal_index(records: HandRecords) -> tuple[np.ndarray, np.ndarray]:
    """(sorted distinct deal ids, each record's cluster index)."""
    deals, inv = np.unique(records.deal, return_inverse=True)
    return deals, np.asarray(inv).reshape(-1)


def deal_means(records: HandRecords, num_agents: int,
               values: np.ndarray | None = None) -> np.ndarray:
    """``[D, num_agents]`` matrix: per deal (rows in sorted deal order), each agent's mean
    of ``values`` (default: the score) over every hand and seat it played in that deal,
    across all lineups and seatings; NaN where it did not play that deal."""
    m, t = records.agent.shape
    if m == 0 or t == 0:
        return np.zeros((0, num_agents))
    _check_agents(records, num_agents)
    v = records.score if values is None else np.asarray(values, dtype=np.float64)
    deals, cl = _deal_index(records)
    n = deals.shape[0]
    flat = np.repeat(cl, t) * num_agents + records.agent.reshape(-1)
    size = n * num_agents
    sums = np.bincount(flat, weights=v.reshape(-1), minlength=size)
    counts = np.bincount(flat, minlength=size)
    with np.errstate(invalid="ignore", divide="ignore"):
        means = np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)
    return means.reshape(n, num_agents)


def _hand_means(records: HandRecords, num_agents: int) -> np.ndarray:
    """``[M, num_agents]``: each agent's mean score over its seats of each hand (NaN if absent)."""
    m, t = records.agent.shape
    flat = np.repeat(np.arange(m), t) * num_agents + records.agent.reshape(-1)
    size = m * num_agents
    sums = np.bincount(flat, weights=records.score.reshape(-1), minlength=size)
    counts = np.bincount(flat, minlength=size)
    with np.errstate(invalid="ignore", divide="ignore"):
        hm = np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)
    return hm.reshape(m, num_agents)


def _ci_over(col: np.ndarray) -> tuple[float, float, int]:
    x = col[~np.isnan(col)]
    mean, half = mean_ci(x)
    return mean, half, int(x.shape[0])


def _fit_ratings(records: HandRecords, n: int, bootstrap: int, seed: int) -> dict | None:
    if len(records) == 0 or records.num_teams < 2:
        return None
    return fit_ratings(records, n, bootstrap=bootstrap, seed=seed)


def leaderboard(records: HandRecords, names: Sequence[str], *,
                bootstrap: int = 200, seed: int = 0) -> list[dict]:
    """One row per agent of ``names``, ranked by mean points per hand over deals (desc;
    ties and NaN keep the ``names`` order, NaN last).

    Keys (``LEADERBOARD_FIELDS``): ``agent`` name, ``hands`` (team-positions played: hands,
    or games in games mode), ``units`` (deals played), ``points`` (mean over deals of the
    agent's per-deal mean points per hand), ``points_ci`` (95% t half-width over deals),
    ``win_share`` / ``win_ci`` and ``nertz_rate`` / ``nertz_ci`` (the same over deals),
    ``rating`` / ``rating_low`` / ``rating_high`` (Plackett-Luce log-strength, mean 0, and
    its 95% bootstrap interval over deals: agents/stats/ratings.py ``fit_ratings`` with
    ``bootstrap`` and ``seed``; NaN when it cannot be fitted).  Agents that never played
    get ``hands = 0`` and NaN statistics.
    """
    n = len(names)
    _check_agents(records, n)
    ag = records.agent.reshape(-1)
    hands = np.bincount(ag, minlength=n)[:n] if ag.size else np.zeros(n, np.int64)
    pts = deal_means(records, n)
    win = deal_means(records, n, records.win)
    nertz = deal_means(records, n, records.called)
    fit = _fit_ratings(records, n, bootstrap, seed)
    rows = []
    for i, name in enumerate(names):
        p, p_half, units = _ci_over(pts[:, i])
        w, w_half, _ = _ci_over(win[:, i])
        c, c_half, _ = _ci_over(nertz[:, i])
        if fit is None or hands[i] == 0:
            rating = lo = hi = float("nan")
        else:
            rating = float(fit["rating"][i])
            lo, hi = float(fit["ci_low"][i]), float(fit["ci_high"][i])
        rows.append({
            "agent": str(name), "hands": int(hands[i]), "units": units,
            "points": float(p), "points_ci": float(p_half),
            "win_share": float(w), "win_ci": float(w_half),
            "nertz_rate": float(c), "nertz_ci": float(c_half),
            "rating": rating, "rating_low": lo, "rating_high": hi,
        })
    order = sorted(range(n), key=lambda i: (math.isnan(rows[i]["points"]),
                                            -rows[i]["points"] if hands[i] else 0.0, i))
    return [rows[i] for i in order]


def _rank_of(rank: Sequence[Any] | None, names: Sequence[str]) -> dict[str, int] | None:
    if rank is None:
        return None
    seq = [str(r["agent"]) if isinstance(r, dict) else str(r) for r in rank]
    pos = {a: k for k, a in enumerate(seq)}
    missing = [str(a) for a in names if str(a) not in pos]
    if missing:
        raise ValueError(f"rank must list every agent; missing {', '.join(missing)}")
    return pos


def _flip(p: dict) -> dict:
    q = dict(p)
    q["a"], q["b"] = p["b"], p["a"]
    q["diff"] = -p["diff"]
    q["ci_low"], q["ci_high"] = -p["ci_high"], -p["ci_low"]
    return q


def orient_pairs(pairs: Sequence[dict], rank: Sequence[Any]) -> list[dict]:
    """``pairs`` re-listed by ``rank`` (agent names best first, or leaderboard rows): the
    higher-ranked agent as ``a`` (diff and interval negated where swapped), rows ordered by
    (rank of a, rank of b).  p-values and verdicts are unchanged by the swap."""
    names = sorted({str(p["a"]) for p in pairs} | {str(p["b"]) for p in pairs})
    pos = _rank_of(rank, names) or {}
    out = [(_flip(p) if pos[str(p["a"])] > pos[str(p["b"])] else dict(p)) for p in pairs]
    out.sort(key=lambda p: (pos[str(p["a"])], pos[str(p["b"])]))
    return out


def paired_differentials(records: HandRecords, names: Sequence[str],
                         min_units: int = 2, *, rank: Sequence[Any] | None = None,
                         alpha: float = HOLM_ALPHA) -> list[dict]:
    """Paired per-deal score differences for every agent pair (see module doc).

    Only pairs sharing at least ``min_units`` (>= 2) deals are reported.  Keys
    (``PAIR_FIELDS``): ``a``, ``b`` (names), ``units`` (deals), ``diff`` (mean over deals
    of A's minus B's points per hand), ``ci_low``, ``ci_high`` (95% paired t-interval over
    deals), ``p_value`` (two-sided paired t-test over deals), ``significant`` (the raw
    interval excludes 0), ``holm`` (Holm verdict at family-wise ``alpha`` over all reported
    pairs), ``same_table`` (False when A and B never shared a table and the difference of
    per-deal means is used).  Rows are in ``names`` order (a before b), or with ``rank``
    (names best first, or leaderboard rows) listed by rank as ``orient_pairs`` does.
    """
    n = len(names)
    min_units = max(2, int(min_units))
    _check_agents(records, n)
    out: list[dict] = []
    if len(records) and records.num_teams:
        _, cl = _deal_index(records)
        n_deals = int(cl.max()) + 1
        hm = _hand_means(records, n)
        present = ~np.isnan(hm)
        dm = deal_means(records, n)
        for i in range(n):
            for j in range(i + 1, n):
                both = present[:, i] & present[:, j]
                same = bool(both.any())
                if same:
                    d = hm[both, i] - hm[both, j]
                    c = cl[both]
                    s = np.bincount(c, weights=d, minlength=n_deals)
                    k = np.bincount(c, minlength=n_deals)
                    per_deal = s[k > 0] / k[k > 0]
                else:
                    ok = ~np.isnan(dm[:, i]) & ~np.isnan(dm[:, j])
                    per_deal = dm[ok, i] - dm[ok, j]
                units = int(per_deal.shape[0])
                if units < min_units:
                    continue
                mean, half = mean_ci(per_deal)
                sd = float(per_deal.std(ddof=1))
                if sd > 0.0:
                    pv = t_pvalue(mean / (sd / math.sqrt(units)), units - 1)
                else:
                    pv = 1.0 if mean == 0.0 else 0.0
                lo, hi = mean - half, mean + half
                out.append({
                    "a": str(names[i]), "b": str(names[j]), "units": units,
                    "diff": float(mean), "ci_low": float(lo), "ci_high": float(hi),
                    "p_value": float(pv), "significant": bool(lo > 0.0 or hi < 0.0),
                    "holm": False, "same_table": same,
                })
    for p, verdict in zip(out, holm([p["p_value"] for p in out], alpha)):
        p["holm"] = verdict
    if rank is not None:
        _rank_of(rank, names)
        out = orient_pairs(out, rank)
    return out
