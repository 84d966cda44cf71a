"""Tests of agents/stats/estimators.py (tournament statistics) and agents/stats/report.py (their tables and files)."""

import csv
import itertools
import json
import math

import numpy as np
import pytest

from agents.stats.report import (
    format_table,
    plot_leaderboard,
    write_csv,
    write_json,
    write_pairs_csv,
)
from agents.stats.estimators import (
    HandRecords,
    deal_means,
    holm,
    leaderboard,
    mean_ci,
    orient_pairs,
    paired_differentials,
    t_pvalue,
    t_quantile_975,
)


# --------------------------------------------------------------------------
# Student t
# --------------------------------------------------------------------------


@pytest.mark.parametrize("df,expected", [
    (1, 12.706), (2, 4.303), (10, 2.228), (30, 2.042), (100, 1.984),
    (math.inf, 1.960),
])
def test_t_quantile_known_values(df, expected):
    assert round(t_quantile_975(df), 3) == expected


def _t_cdf(x, df):
    """Numerical Student-t CDF (Simpson on the density), for self-checks."""
    c = math.exp(math.lgamma((df + 1) / 2) - math.lgamma(df / 2)) / math.sqrt(df * math.pi)
    n = 20000
    # substitution u = atan(t) maps [0, x] to a finite, smooth range
    u = np.linspace(0.0, math.atan(x), n + 1)
    t = np.tan(u)
    f = c * (1 + t * t / df) ** (-(df + 1) / 2) / np.cos(u) ** 2
    w = np.ones(n + 1)
    w[1:-1:2], w[2:-1:2] = 4, 2
    return 0.5 + float((w * f).sum()) * (u[1] - u[0]) / 3


@pytest.mark.parametrize("df", [1, 2, 3, 5, 7, 12, 19, 25, 29, 30, 31, 40, 60, 200, 1000])
def test_t_quantile_is_the_975_quantile(df):
    assert _t_cdf(t_quantile_975(df), df) == pytest.approx(0.975, abs=2e-7)


def test_t_quantile_monotone_and_errors():
    qs = [t_quantile_975(d) for d in [1, 1.5, 2, 2.5, 10, 29.5, 30, 30.5, 50, 1e6]]
    assert all(a > b for a, b in itertools.pairwise(qs))
    assert t_quantile_975(1e9) == pytest.approx(1.959964, abs=1e-6)
    for bad in (0, 0.5, -3, float("nan")):
        with pytest.raises(ValueError):
            t_quantile_975(bad)


def test_mean_ci_hand_computed():
    # values 1, 2, 3, 6: mean 3, squared deviations 4+1+0+9=14, var 14/3,
    # sd = 2.1602469, se = sd/2 = 1.0801234, t_{0.975,3} = 3.182446305
    mean, half = mean_ci([1.0, 2.0, 3.0, 6.0])
    assert mean == pytest.approx(3.0)
    assert half == pytest.approx(3.182446305 * math.sqrt(14 / 3) / 2, rel=1e-12)
    assert half == pytest.approx(3.43743, abs=1e-5)
    assert mean_ci(np.array([2.0, 2.0])) == (2.0, 0.0)
    m1, h1 = mean_ci([5.0])
    assert m1 == 5.0 and math.isnan(h1)
    m0, h0 = mean_ci([])
    assert math.isnan(m0) and math.isnan(h0)


# --------------------------------------------------------------------------
# synthetic duplicate tournaments
# --------------------------------------------------------------------------


def _duplicate_records(rng, lineups, n_deals, skill, luck_sd=5.0, noise_sd=3.0):
    """Records of a duplicate tournament: score = per-(deal, seat) luck
    shared by all rotations + the agent's skill + hand noise."""
    rows = {k: [] for k in ("lineup", "deal", "rotation", "agent", "score", "called", "win")}
    for li, lineup in enumerate(lineups):
        t = len(lineup)
        for d in range(n_deals):
            luck = rng.normal(0.0, luck_sd, size=t)
            for r in range(t):
                ag = np.array([lineup[(p + r) % t] for p in range(t)])
                sc = luck + np.asarray(skill)[ag] + rng.normal(0.0, noise_sd, size=t)
                top = sc == sc.max()
                rows["lineup"].append(li)
                rows["deal"].append(d)
                rows["rotation"].append(r)
                rows["agent"].append(ag)
                rows["score"].append(sc)
                rows["called"].append(top.astype(np.int8))
                rows["win"].append(top / top.sum())
    return HandRecords(**{k: np.array(v) for k, v in rows.items()})


def test_paired_ci_coverage_under_null():
    rng = np.random.default_rng(12345)
    repeats, covered = 1000, 0
    for _ in range(repeats):
        rec = _duplicate_records(rng, [(0, 1)], 30, skill=[0.0, 0.0])
        (p,) = paired_differentials(rec, ["a", "b"])
        assert p["units"] == 30
        covered += p["ci_low"] <= 0.0 <= p["ci_high"]
        assert p["significant"] == (not (p["ci_low"] <= 0.0 <= p["ci_high"]))
    assert 0.93 <= covered / repeats <= 0.97


def test_paired_detects_true_difference():
    rng = np.random.default_rng(777)
    repeats, flagged, diffs = 200, 0, []
    for _ in range(repeats):
        rec = _duplicate_records(rng, [(0, 1)], 200, skill=[1.0, 0.0])
        (p,) = paired_differentials(rec, ["good", "bad"])
        flagged += p["significant"] and p["diff"] > 0
        diffs.append(p["diff"])
    assert flagged / repeats >= 0.9
    assert np.mean(diffs) == pytest.approx(1.0, abs=0.05)


def test_paired_matches_hand_computation_and_luck_cancels():
    rng = np.random.default_rng(3)
    # huge shared luck, no noise: the paired difference is exactly the skill gap
    rec = _duplicate_records(rng, [(0, 1, 2)], 5, skill=[2.0, 0.5, 0.0],
                             luck_sd=50.0, noise_sd=0.0)
    pairs = paired_differentials(rec, ["x", "y", "z"])
    assert [(p["a"], p["b"]) for p in pairs] == [("x", "y"), ("x", "z"), ("y", "z")]
    for p, gap in zip(pairs, [1.5, 2.0, 0.5]):
        assert p["units"] == 5
        assert p["diff"] == pytest.approx(gap)
        assert p["ci_high"] - p["ci_low"] == pytest.approx(0.0, abs=1e-9)
        assert p["significant"]


def test_pairs_need_two_shared_units():
    rng = np.random.default_rng(4)
    # agents 0,1 share 3 deals; agent 2 meets 0 in a single deal only
    rec = HandRecords.concatenate([
        _duplicate_records(rng, [(0, 1)], 3, skill=[0, 0, 0]),
        _duplicate_records(rng, [(0, 2)], 1, skill=[0, 0, 0]),
    ])
    # both batches use lineup index 0: relabel the second one
    rec.lineup[-2:] = 1
    pairs = paired_differentials(rec, ["a", "b", "c"])
    assert [(p["a"], p["b"], p["units"]) for p in pairs] == [("a", "b", 3)]


# --------------------------------------------------------------------------
# leaderboard
# --------------------------------------------------------------------------


def _constructed():
    # 2 agents, lineup (0, 1), 2 deals x 2 rotations; agent 0 always wins
    agent = np.array([[0, 1], [1, 0], [0, 1], [1, 0]])
    score = np.array([[10.0, 2.0], [4.0, 8.0], [6.0, -1.0], [3.0, 5.0]])
    called = np.array([[1, 0], [0, 1], [0, 0], [0, 1]], dtype=np.int8)
    win = (score == score.max(axis=1, keepdims=True)).astype(float)
    return HandRecords(lineup=[0, 0, 0, 0], deal=[0, 0, 1, 1], rotation=[0, 1, 0, 1],
                       agent=agent, score=score, called=called, win=win)


def test_leaderboard_exact_values():
    rec = _constructed()
    rows = leaderboard(rec, ["alpha", "beta"], bootstrap=50)
    assert [r["agent"] for r in rows] == ["alpha", "beta"]
    a, b = rows
    assert a["hands"] == 4 and b["hands"] == 4
    assert a["points"] == pytest.approx((10 + 8 + 6 + 5) / 4)
    assert b["points"] == pytest.approx((2 + 4 - 1 + 3) / 4)
    assert a["win_share"] == 1.0 and b["win_share"] == 0.0
    assert a["nertz_rate"] == 0.75 and b["nertz_rate"] == 0.0
    # unit means: alpha 9, 5.5 -> CI over 2 units
    assert a["points_ci"] == pytest.approx(mean_ci([9.0, 5.5])[1])
    assert b["points_ci"] == pytest.approx(mean_ci([3.0, 1.0])[1])
    assert a["units"] == b["units"] == 2
    assert a["win_ci"] == pytest.approx(0.0) and b["win_ci"] == pytest.approx(0.0)
    assert a["nertz_ci"] == pytest.approx(mean_ci([1.0, 0.5])[1])  # deal 0: 1, 1; deal 1: 0, 1
    assert a["rating"] > b["rating"]
    assert a["rating_low"] <= a["rating"] <= a["rating_high"]
    (p,) = paired_differentials(rec, ["alpha", "beta"])
    assert p["diff"] == pytest.approx(np.mean([9 - 3, 5.5 - 1]))


def test_leaderboard_ties_share_wins_and_rank():
    rec = HandRecords(lineup=[0, 0], deal=[0, 0], rotation=[0, 1],
                      agent=[[0, 1], [1, 0]], score=[[5.0, 5.0], [5.0, 5.0]],
                      called=[[0, 0], [0, 0]], win=[[0.5, 0.5], [0.5, 0.5]])
    rows = leaderboard(rec, ["p", "q"], bootstrap=50)
    assert rows[0]["win_share"] == rows[1]["win_share"] == 0.5
    assert rows[0]["points"] == rows[1]["points"] == 5.0
    assert [r["agent"] for r in rows] == ["p", "q"]  # tie keeps names order


def test_leaderboard_agent_at_two_positions():
    # 3 teams, 2 agents: lineup (0, 0, 1); agent 1 is clearly weaker
    rng = np.random.default_rng(9)
    rec = _duplicate_records(rng, [(0, 0, 1)], 20, skill=[3.0, 0.0], luck_sd=2, noise_sd=1)
    rows = leaderboard(rec, ["double", "single", "absent"], bootstrap=50)
    by = {r["agent"]: r for r in rows}
    assert by["double"]["hands"] == 2 * 20 * 3
    assert by["single"]["hands"] == 20 * 3
    assert by["absent"]["hands"] == 0 and math.isnan(by["absent"]["points"])
    assert by["double"]["points"] == pytest.approx(rec.score[rec.agent == 0].mean())
    assert by["single"]["points"] == pytest.approx(rec.score[rec.agent == 1].mean())
    assert by["double"]["win_share"] == pytest.approx(rec.win[rec.agent == 0].mean())
    # one unit of win per hand is shared by the 2 + 1 seats
    assert (2 * by["double"]["win_share"] + by["single"]["win_share"]) == pytest.approx(1.0)
    assert by["double"]["rating"] > by["single"]["rating"]
    assert math.isnan(by["absent"]["rating"]) and by["absent"]["units"] == 0
    assert rows[0]["agent"] == "double"
    um = deal_means(rec, 3)
    assert um.shape == (20, 3) and np.isnan(um[:, 2]).all()
    (p,) = paired_differentials(rec, ["double", "single", "absent"])
    assert p["units"] == 20 and p["diff"] == pytest.approx(3.0, abs=0.6)


def test_leaderboard_deterministic_sorted_and_leaves_records_alone():
    def records():
        return _duplicate_records(np.random.default_rng(1), [(0, 1, 2), (2, 1, 0)], 6,
                                  skill=[3, 0, -3])

    rec = records()
    before = {k: np.array(getattr(rec, k), copy=True) for k in
              ("lineup", "deal", "rotation", "agent", "score", "called", "win")}
    rows = leaderboard(rec, list("abc"), bootstrap=50)
    for k, v in before.items():
        assert np.array_equal(getattr(rec, k), v), f"leaderboard changed records.{k}"
    assert rows == leaderboard(records(), list("abc"), bootstrap=50)  # same records, new objects
    assert [r["agent"] for r in rows] == ["a", "b", "c"]     # skills 3 > 0 > -3
    assert all(x["points"] > y["points"] for x, y in itertools.pairwise(rows))


# --------------------------------------------------------------------------
# writers
# --------------------------------------------------------------------------


def test_writers_round_trip(tmp_path):
    rng = np.random.default_rng(2)
    names = ["greedy", "random", "ppo"]
    rec = _duplicate_records(rng, [(0, 1, 2)], 10, skill=[2, -2, 0])
    rows = leaderboard(rec, names, bootstrap=50)
    pairs = paired_differentials(rec, names)

    write_csv(rows, tmp_path / "lb.csv")
    with open(tmp_path / "lb.csv") as fh:
        back = list(csv.DictReader(fh))
    assert [r["agent"] for r in back] == [r["agent"] for r in rows]
    for r, b in zip(rows, back):
        assert int(b["hands"]) == r["hands"]
        for k in ("points", "points_ci", "win_share", "win_ci", "rating", "rating_low"):
            assert float(b[k]) == r[k]

    write_pairs_csv(pairs, tmp_path / "pairs.csv")
    with open(tmp_path / "pairs.csv") as fh:
        pback = list(csv.DictReader(fh))
    assert len(pback) == 3
    assert [float(p["diff"]) for p in pback] == [p["diff"] for p in pairs]

    obj = {"leaderboard": rows, "pairs": pairs, "extra": {"nan": float("nan"),
                                                          "arr": np.arange(3)}}
    write_json(obj, tmp_path / "out.json")
    with open(tmp_path / "out.json") as fh:
        j = json.load(fh)
    assert list(j) == ["leaderboard", "pairs", "extra"]
    assert list(j["leaderboard"][0]) == list(rows[0])
    assert j["leaderboard"][0]["points"] == pytest.approx(rows[0]["points"], rel=1e-7)
    assert [p["significant"] for p in j["pairs"]] == [p["significant"] for p in pairs]
    assert j["extra"] == {"nan": None, "arr": [0, 1, 2]}

    png = tmp_path / "lb.png"
    plot_leaderboard(rows, pairs, png, title="test tournament")
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    text = format_table(rows, pairs)
    for n in names:
        assert n in text
    assert "*" in text  # greedy vs random is clearly significant
    lines = text.splitlines()
    assert len({len(l) for l in lines[1:3]}) == 1  # header aligned with rule

    # empty outputs still work
    write_csv([], tmp_path / "empty.csv")
    assert (tmp_path / "empty.csv").read_text().startswith("agent,")
    assert "no pair" in format_table(rows, [])


# --------------------------------------------------------------------------
# the deal as unit, p-values, Holm, rank order, the table's words
# --------------------------------------------------------------------------


def test_all_lineups_of_a_deal_form_one_unit():
    rng = np.random.default_rng(8)
    rec = _duplicate_records(rng, [(0, 1, 2), (0, 1, 3)], 7, skill=[1, 0, 0, 0])
    rec.deal[:] = np.concatenate([np.arange(7).repeat(3), np.arange(7).repeat(3)])
    (ab, *_) = paired_differentials(rec, list("abcd"))
    assert (ab["a"], ab["b"], ab["units"]) == ("a", "b", 7)   # 2 lineups x 7 deals = 7 units
    assert deal_means(rec, 4).shape == (7, 4)
    # per deal: mean over the 6 hands of both lineups of (a - b)
    ag, sc = rec.agent, rec.score
    d_ab = (sc * (ag == 0)).sum(1) - (sc * (ag == 1)).sum(1)
    per_deal = [d_ab[rec.deal == d].mean() for d in range(7)]
    assert ab["diff"] == pytest.approx(np.mean(per_deal))
    assert ab["ci_high"] - ab["diff"] == pytest.approx(mean_ci(per_deal)[1])
    rows = {r["agent"]: r for r in leaderboard(rec, list("abcd"), bootstrap=0)}
    assert rows["a"]["units"] == 7 and rows["c"]["units"] == 7
    assert rows["a"]["points_ci"] == pytest.approx(mean_ci(deal_means(rec, 4)[:, 0])[1])


@pytest.mark.parametrize("t,df", [(0.5, 3), (2.1, 10), (-3.0, 29), (1.96, 1000), (10.0, 2),
                                  (0.0, 5), (40.0, 1)])
def test_t_pvalue_matches_scipy(t, df):
    sst = _scipy_stats()
    assert t_pvalue(t, df) == pytest.approx(2 * sst.t.sf(abs(t), df), rel=1e-9, abs=1e-15)


@pytest.mark.parametrize("df", [1, 2, 3, 7, 15, 29, 30, 31, 45, 100, 1000, 10**6])
def test_t_quantile_matches_scipy(df):
    """The table (df <= 30, 9 decimals) and the Cornish-Fisher expansion beyond it."""
    assert t_quantile_975(df) == pytest.approx(_scipy_stats().t.ppf(0.975, df), abs=2e-6)


def _scipy_stats():
    """scipy.stats, a [test] requirement: a missing scipy fails these cross-checks (with the
    pip line), it never skips them."""
    from nertz_env.optional import require
    return require("scipy.stats", "test", "the statistics' cross-checks")


def test_t_pvalue_edges():
    assert t_pvalue(t_quantile_975(12), 12) == pytest.approx(0.05, abs=1e-9)
    assert t_pvalue(math.inf, 4) == 0.0 and math.isnan(t_pvalue(math.nan, 4))
    for bad in (0, 0.5, float("nan")):
        with pytest.raises(ValueError, match="degrees of freedom"):
            t_pvalue(1.0, bad)


def test_holm_hand_computed():
    # sorted 0.005 <= .05/4, 0.01 <= .05/3, 0.03 > .05/2: stop
    assert holm([0.01, 0.04, 0.03, 0.005]) == [True, False, False, True]
    assert holm([0.02, 0.02]) == [True, True]                  # 0.02 <= .025, then <= .05
    assert holm([0.03, 0.02]) == [True, True]                  # .02 <= .025, .03 <= .05
    assert holm([0.026, 0.03]) == [False, False]
    assert holm([float("nan"), 0.02]) == [False, True]         # NaN counts in the family
    assert holm([float("nan"), 0.03]) == [False, False]
    assert holm([]) == []


def test_pairs_have_pvalues_and_holm_over_the_family():
    rng = np.random.default_rng(21)
    rec = _duplicate_records(rng, [(0, 1, 2, 3)], 25, skill=[1.0, 0.0, 0.0, -0.2],
                             noise_sd=2.0)
    names = list("wxyz")
    pairs = paired_differentials(rec, names)
    assert len(pairs) == 6
    assert [p["holm"] for p in pairs] == holm([p["p_value"] for p in pairs])
    for p in pairs:
        assert 0.0 <= p["p_value"] <= 1.0
        assert p["significant"] == (p["p_value"] < 0.05)       # t-interval and t-test agree
        assert not p["holm"] or p["significant"]


def test_pairs_listed_by_rank():
    rng = np.random.default_rng(3)
    rec = _duplicate_records(rng, [(0, 1, 2)], 6, skill=[0.0, 2.0, 1.0], luck_sd=5.0)
    names = ["low", "high", "mid"]
    plain = paired_differentials(rec, names)
    rows = leaderboard(rec, names, bootstrap=0)
    assert [r["agent"] for r in rows] == ["high", "mid", "low"]
    ranked = paired_differentials(rec, names, rank=rows)
    assert [(p["a"], p["b"]) for p in ranked] == [("high", "mid"), ("high", "low"),
                                                  ("mid", "low")]
    assert all(p["diff"] > 0 for p in ranked)
    assert ranked == orient_pairs(plain, ["high", "mid", "low"])
    by = {(p["a"], p["b"]): p for p in plain}
    hl = by["low", "high"]
    assert ranked[1]["diff"] == -hl["diff"]
    assert (ranked[1]["ci_low"], ranked[1]["ci_high"]) == (-hl["ci_high"], -hl["ci_low"])
    assert (ranked[1]["p_value"], ranked[1]["holm"]) == (hl["p_value"], hl["holm"])
    with pytest.raises(ValueError, match="missing mid"):
        paired_differentials(rec, names, rank=["high", "low"])


def test_bad_agent_index_is_a_value_error_and_changes_nothing():
    rec = _constructed()
    before = rec.agent.copy()
    for f in (lambda: leaderboard(rec, ["only"]), lambda: paired_differentials(rec, ["only"]),
              lambda: deal_means(rec, 1)):
        with pytest.raises(ValueError, match="agent index out of range"):
            f()
    assert np.array_equal(rec.agent, before)


def test_table_names_the_ranking_legend_and_units():
    rng = np.random.default_rng(2)
    names = ["greedy", "random", "ppo"]
    rec = _duplicate_records(rng, [(0, 1, 2)], 10, skill=[2, -2, 0])
    rows = leaderboard(rec, names, bootstrap=20)
    pairs = paired_differentials(rec, names)       # names order: (greedy, random) etc.
    text = format_table(rows, pairs)
    head, rest = text.split("\n", 1)
    assert "ranked by mean points per hand" in head and "over 10 deals" in head
    assert "hands mode" in head
    table = rest.split("Paired differences")[1].split("Legend")[0]
    body = [l.split() for l in table.splitlines()[4:] if l.strip()]
    assert [(b[0], b[1]) for b in body] == [("greedy", "ppo"), ("greedy", "random"),
                                            ("ppo", "random")]
    assert all(float(b[3]) > 0 for b in body)      # listed by rank: differences read positive
    assert "holm" in table.splitlines()[2].split() and "Holm" in table.splitlines()[1]
    assert "3 intervals at once" in table and "~ after B" not in text
    legend = text.split("Legend")[1]
    for col in ("hands:", "deals:", "points:", "+/-95%:", "win:", "nertz:", "rating:",
                "rating 95% CI:", "holm:", "sig:"):
        assert col in legend, col
    games = format_table(rows, pairs, mode="games")
    assert "games mode" in games and "games:" in games and "share of games won" in games
    assert games.splitlines()[1].split()[2] == "games"
    with pytest.raises(ValueError, match="mode"):
        format_table(rows, pairs, mode="rounds")


def test_plot_wraps_a_long_title(tmp_path):
    rng = np.random.default_rng(2)
    names = ["greedy", "random"]
    rec = _duplicate_records(rng, [(0, 1)], 5, skill=[1, 0])
    rows = leaderboard(rec, names, bootstrap=0)
    pairs = paired_differentials(rec, names, rank=rows)
    title = "Nertz, 2 teams, 10 hands (hands, duplicate deals, seed 0) " * 4
    png = tmp_path / "lb.png"
    plot_leaderboard(rows, pairs, png, title=title, mode="hands")
    import matplotlib.image as mpimg

    img = mpimg.imread(png)
    # bbox_inches="tight" grows the canvas to the wrapped title instead of clipping it
    assert img.shape[1] < 1200 and img.shape[0] > 300
