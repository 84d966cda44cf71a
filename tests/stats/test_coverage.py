"""Coverage of the tournament intervals (agents/stats/estimators.py) in a round-robin of different bots.

A fast numpy model of a duplicate round-robin (no engine): every lineup of T of the A agents
plays the same D deals at T cyclic seatings; a hand's score is

    luck[deal, seat] + skill[agent] + fit[deal, agent] + noise

where ``luck`` (the cards each seat gets) and ``fit`` (how well the deal suits each bot) are
shared by every lineup and seating of the deal, and ``noise`` is per hand.  The true points
per hand of agent a is skill[a] and the true paired difference skill[a] - skill[b].  The
intervals over deals must cover those truths in about 95% of repeated tournaments; the former
estimator, whose unit was (lineup, deal), under-covers on the very same data.
"""

import itertools
import math

import numpy as np
import pytest

from agents.stats import estimators as stats
from agents.stats.estimators import HandRecords, mean_ci, paired_differentials

REPEATS = 400
DEALS = 30
SKILL = {3: np.array([2.0, 1.0, 0.5, 0.0]), 4: np.array([2.0, 1.0, 0.5, 0.0, -1.0])}


def _design(n_agents, teams):
    lineups = list(itertools.combinations(range(n_agents), teams))
    lu = np.repeat(np.arange(len(lineups)), DEALS * teams)
    dd = np.tile(np.repeat(np.arange(DEALS), teams), len(lineups))
    rr = np.tile(np.arange(teams), len(lineups) * DEALS)
    arr = np.array(lineups)
    agent = arr[lu[:, None], (np.arange(teams)[None, :] + rr[:, None]) % teams]
    return lu, dd, rr, agent


def _simulate(rng, design, skill, teams):
    lu, dd, rr, agent = design
    luck = rng.normal(0.0, 5.0, size=(DEALS, teams))
    fit = rng.normal(0.0, 2.0, size=(DEALS, skill.shape[0]))
    score = (luck[dd] + skill[agent] + fit[dd[:, None], agent]
             + rng.normal(0.0, 1.0, size=agent.shape))
    win = (score == score.max(axis=1, keepdims=True)).astype(float)
    return HandRecords(lu, dd, rr, agent, score, win, win)


def _old_unit_pairs(rec, n_agents):
    """The former estimator, unit = (lineup, deal): {(i, j): (diff, half)}."""
    keys = rec.lineup * DEALS + rec.deal
    _, unit = np.unique(keys, return_inverse=True)
    t = rec.agent.shape[1]
    flat = np.repeat(unit, t) * n_agents + rec.agent.reshape(-1)
    size = (unit.max() + 1) * n_agents
    s = np.bincount(flat, weights=rec.score.reshape(-1), minlength=size)
    c = np.bincount(flat, minlength=size)
    with np.errstate(invalid="ignore", divide="ignore"):
        um = np.where(c > 0, s / np.maximum(c, 1), np.nan).reshape(-1, n_agents)
    out = {}
    for i, j in itertools.combinations(range(n_agents), 2):
        both = ~np.isnan(um[:, i]) & ~np.isnan(um[:, j])
        out[i, j] = mean_ci(um[both, i] - um[both, j])
    old_points = {a: mean_ci(um[~np.isnan(um[:, a]), a]) for a in range(n_agents)}
    return out, old_points


@pytest.mark.parametrize("teams", [3, 4])
def test_intervals_over_deals_cover_in_a_round_robin(teams, monkeypatch):
    monkeypatch.setattr(stats, "_fit_ratings", lambda *a, **k: None)  # ratings: not tested here
    skill = SKILL[teams]
    n = skill.shape[0]
    names = [f"bot{k}" for k in range(n)]
    design = _design(n, teams)
    rng = np.random.default_rng(20261201 + teams)
    hits = {"pairs": 0, "points": 0, "old pairs": 0, "old points": 0}
    n_pairs = n * (n - 1) // 2
    for _ in range(REPEATS):
        rec = _simulate(rng, design, skill, teams)
        pairs = paired_differentials(rec, names)
        assert len(pairs) == n_pairs
        for p in pairs:
            i, j = names.index(p["a"]), names.index(p["b"])
            assert p["units"] == DEALS and p["same_table"]
            hits["pairs"] += p["ci_low"] <= skill[i] - skill[j] <= p["ci_high"]
        for r in stats.leaderboard(rec, names):
            a = names.index(r["agent"])
            assert r["units"] == DEALS
            hits["points"] += abs(r["points"] - skill[a]) <= r["points_ci"]
        old_pairs, old_points = _old_unit_pairs(rec, n)
        for (i, j), (d, h) in old_pairs.items():
            hits["old pairs"] += abs(d - (skill[i] - skill[j])) <= h
        for a, (m, h) in old_points.items():
            hits["old points"] += abs(m - skill[a]) <= h
    cov = {k: v / (REPEATS * (n_pairs if "pairs" in k else n)) for k, v in hits.items()}
    print(f"teams={teams} coverage", {k: round(v, 3) for k, v in cov.items()})
    assert 0.92 <= cov["pairs"] <= 0.98, cov
    assert 0.92 <= cov["points"] <= 0.98, cov
    # the (lineup, deal) unit counts the lineups of one deal as independent: too narrow
    assert cov["old pairs"] < 0.90, cov
    assert cov["old points"] < 0.90, cov


def test_pairs_never_at_one_table_use_per_deal_means():
    # agents 0, 1 only ever meet 2, 3 (lineups (0, 2) and (1, 3)), never each other
    rng = np.random.default_rng(5)
    rows = {k: [] for k in ("lineup", "deal", "rotation", "agent", "score")}
    skill = np.array([1.0, 0.0, 0.0, 0.0])
    for li, lineup in enumerate([(0, 2), (1, 3)]):
        for d in range(8):
            for r in range(2):
                ag = np.array([lineup[(p + r) % 2] for p in range(2)])
                rows["lineup"].append(li)
                rows["deal"].append(d)
                rows["rotation"].append(r)
                rows["agent"].append(ag)
                rows["score"].append(skill[ag] + rng.normal(size=2))
    sc = np.array(rows["score"])
    rec = HandRecords(rows["lineup"], rows["deal"], rows["rotation"], np.array(rows["agent"]),
                      sc, np.zeros_like(sc), np.full_like(sc, 0.5))
    pairs = {(p["a"], p["b"]): p for p in paired_differentials(rec, list("wxyz"))}
    p = pairs["w", "x"]
    assert not p["same_table"] and p["units"] == 8
    dm = stats.deal_means(rec, 4)
    assert p["diff"] == pytest.approx(float(np.mean(dm[:, 0] - dm[:, 1])))
    assert pairs["w", "y"]["same_table"]
    assert not math.isnan(p["p_value"])
