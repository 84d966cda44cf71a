"""Tests of agents/stats/ratings.py: the batch Plackett-Luce fit and its deal bootstrap."""

import itertools
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agents.stats.ratings import DEFAULT_RIDGE, fit_ratings
from agents.stats.estimators import HandRecords

FIELDS = ("lineup", "deal", "rotation", "agent", "score", "called", "win")


def make_records(agent, score, deal=None):
    agent = np.asarray(agent, dtype=np.int64)
    score = np.asarray(score, dtype=np.float64)
    m, t = agent.shape
    zeros = np.zeros((m, t))
    deal = np.arange(m) if deal is None else np.asarray(deal)
    return HandRecords(lineup=np.zeros(m, dtype=np.int64), deal=deal,
                       rotation=np.zeros(m, dtype=np.int64), agent=agent, score=score,
                       called=zeros, win=zeros)


def take(records, rows):
    return HandRecords(**{f: getattr(records, f)[rows] for f in FIELDS})


def simulate(theta, hands, teams, rng):
    """Plackett-Luce hands: distinct agents per hand, score = theta + Gumbel (no ties)."""
    agent = np.argsort(rng.random((hands, len(theta))), axis=1)[:, :teams]
    return agent, theta[agent] + rng.gumbel(size=agent.shape)


def reference_objective(theta, agent, score, ridge=DEFAULT_RIDGE):
    """Slow, obvious penalized log-likelihood: each hand's Plackett-Luce log-likelihood
    averaged over every order of its tied positions."""
    total = 0.0
    for ag, sc in zip(agent.tolist(), score.tolist()):
        levels = sorted(set(sc), reverse=True)
        groups = [[p for p in range(len(sc)) if sc[p] == v] for v in levels]
        orders = [list(itertools.chain.from_iterable(combo)) for combo in
                  itertools.product(*(itertools.permutations(g) for g in groups))]
        acc = 0.0
        for order in orders:
            strengths = [theta[ag[p]] for p in order]
            for k in range(len(order)):
                acc += strengths[k] - math.log(sum(math.exp(x) for x in strengths[k:]))
        total += acc / len(orders)
    return total - 0.5 * ridge * float(np.sum(np.asarray(theta) ** 2))


# --------------------------------------------------------------------------
# the interface
# --------------------------------------------------------------------------


def test_output_keys_types_and_centring():
    rng = np.random.default_rng(0)
    agent, score = simulate(np.array([0.5, 0.0, -0.5]), 200, 2, rng)
    out = fit_ratings(make_records(agent, score, np.arange(200) // 4), 3, bootstrap=30)
    assert set(out) == {"rating", "ci_low", "ci_high", "order", "units"}
    for key in ("rating", "ci_low", "ci_high"):
        assert out[key].dtype == np.float64 and out[key].shape == (3,)
    assert out["order"].dtype == np.int64 and out["order"].tolist() == [0, 1, 2]
    assert out["units"] == 50 and isinstance(out["units"], int)
    assert abs(out["rating"].sum()) < 1e-12
    assert (out["ci_low"] <= out["rating"]).all() and (out["rating"] <= out["ci_high"]).all()


def test_no_bootstrap_gives_nan_intervals():
    out = fit_ratings(make_records([[0, 1], [1, 0]], [[2, 1], [2, 1]]), 2, bootstrap=0)
    assert np.isnan(out["ci_low"]).all() and np.isnan(out["ci_high"]).all()


def test_order_breaks_ties_by_index_and_puts_absent_agents_last():
    # agents 1 and 3 tie (symmetric results), agent 2 never plays, agent 0 beats everyone
    agent = [[1, 3], [3, 1], [0, 1], [0, 3]]
    score = [[1, 0], [1, 0], [5, 0], [5, 0]]
    out = fit_ratings(make_records(agent, score), 4, bootstrap=0)
    assert out["order"].tolist() == [0, 1, 3, 2]
    assert np.isnan(out["rating"][2])
    assert out["rating"][1] == pytest.approx(out["rating"][3], abs=1e-12)
    assert np.nansum(out["rating"]) == pytest.approx(0.0, abs=1e-12)


def test_agent_that_always_wins_gets_a_finite_rating():
    agent = [[0, 1, 2], [2, 0, 1], [1, 2, 0]] * 20
    score = [[9, 1, 0], [0, 9, 1], [1, 0, 9]] * 20   # agent 0 first, 1 second, 2 last
    out = fit_ratings(make_records(agent, score), 3, bootstrap=20)
    assert np.isfinite(out["rating"]).all() and np.isfinite(out["ci_high"]).all()
    assert out["order"].tolist() == [0, 1, 2]


def test_records_are_not_modified():
    rng = np.random.default_rng(1)
    agent, score = simulate(np.array([0.3, 0.0, -0.3, 0.1]), 60, 3, rng)
    rec = make_records(agent, score, np.arange(60) % 7)
    before = {f: getattr(rec, f).copy() for f in FIELDS}
    fit_ratings(rec, 4, bootstrap=10)
    for f in FIELDS:
        assert np.array_equal(getattr(rec, f), before[f]), f


# --------------------------------------------------------------------------
# order independence
# --------------------------------------------------------------------------


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), hands=st.integers(1, 25), teams=st.integers(2, 5),
       agents=st.integers(1, 5))
def test_ratings_identical_under_reordered_rows_and_positions(seed, hands, teams, agents):
    rng = np.random.default_rng(seed)
    agent = rng.integers(0, agents, size=(hands, teams))      # duplicates at a table
    score = rng.integers(0, 3, size=(hands, teams))           # many ties
    rec = make_records(agent, score, rng.integers(0, 6, size=hands))
    shuffled = take(rec, rng.permutation(hands))
    cols = np.argsort(rng.random((hands, teams)), axis=1)     # positions within each hand
    shuffled.agent = np.take_along_axis(shuffled.agent, cols, axis=1)
    shuffled.score = np.take_along_axis(shuffled.score, cols, axis=1)
    a = fit_ratings(rec, agents, bootstrap=20, seed=3)
    b = fit_ratings(shuffled, agents, bootstrap=20, seed=3)
    for key in ("rating", "ci_low", "ci_high"):
        np.testing.assert_allclose(a[key], b[key], rtol=0, atol=1e-9, equal_nan=True)
    assert a["order"].tolist() == b["order"].tolist() and a["units"] == b["units"]


def test_relabelling_agents_permutes_ratings():
    rng = np.random.default_rng(2)
    agent, score = simulate(np.array([0.4, -0.2, 0.1, -0.3, 0.0]), 300, 4, rng)
    relabel = np.array([3, 0, 4, 1, 2])
    a = fit_ratings(make_records(agent, score), 5, bootstrap=0)
    b = fit_ratings(make_records(relabel[agent], score), 5, bootstrap=0)
    np.testing.assert_allclose(b["rating"][relabel], a["rating"], atol=1e-9)


def test_many_agents_give_the_same_fit_as_few():
    # 40 agents do not fit one int64 row key at 2 teams: the other merging path must agree
    rng = np.random.default_rng(6)
    agent, score = simulate(np.array([0.5, 0.1, -0.2, -0.4]), 200, 2, rng)
    names = np.array([3, 17, 28, 39])
    few = fit_ratings(make_records(agent, score, np.arange(200) // 2), 4, bootstrap=20)
    many = fit_ratings(make_records(names[agent], score, np.arange(200) // 2), 40, bootstrap=20)
    for key in ("rating", "ci_low", "ci_high"):
        np.testing.assert_allclose(many[key][names], few[key], rtol=0, atol=1e-9)
        assert np.isnan(np.delete(many[key], names)).all()
    assert many["order"][:4].tolist() == names.tolist()


def test_online_openskill_depends_on_order_but_the_fit_does_not():
    models = pytest.importorskip("openskill.models")
    rng = np.random.default_rng(3)
    agent, score = simulate(np.array([0.5, 0.0, -0.5]), 300, 3, rng)
    rec = make_records(agent, score)

    def online_mu(rows):
        model = models.PlackettLuce()
        ratings = [model.rating() for _ in range(3)]
        for i in rows:
            new = model.rate([[ratings[a]] for a in agent[i]], scores=list(score[i]))
            for a, team in zip(agent[i], new):
                ratings[a] = team[0]
        return np.array([r.mu for r in ratings])

    by_score = np.argsort(score[:, 0] - score[:, 1], kind="stable")   # a legal other order
    assert np.abs(online_mu(range(300)) - online_mu(by_score)).max() > 0.5
    a = fit_ratings(rec, 3, bootstrap=0)["rating"]
    b = fit_ratings(take(rec, by_score), 3, bootstrap=0)["rating"]
    np.testing.assert_allclose(a, b, rtol=0, atol=1e-9)


# --------------------------------------------------------------------------
# the likelihood: ties and several positions of one agent
# --------------------------------------------------------------------------


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), hands=st.integers(2, 12), teams=st.integers(2, 4))
def test_fit_maximizes_the_reference_likelihood(seed, hands, teams):
    rng = np.random.default_rng(seed)
    agent = rng.integers(0, 3, size=(hands, teams))
    score = rng.integers(0, 3, size=(hands, teams))
    theta = fit_ratings(make_records(agent, score), 3, bootstrap=0)["rating"]
    theta = np.nan_to_num(theta)               # an absent agent sits at the prior mean 0
    h = 1e-5
    for i in range(3):
        e = np.zeros(3)
        e[i] = h
        grad = (reference_objective(theta + e, agent, score)
                - reference_objective(theta - e, agent, score)) / (2 * h)
        assert abs(grad) < 1e-5 * hands, (i, grad)


def test_tie_counts_as_every_order_of_the_tied_teams():
    # a hand with agents 0 and 1 tied above 2 is half (0 > 1 > 2) and half (1 > 0 > 2)
    other_agent = [[2, 0, 1], [1, 2, 0], [0, 2, 1]]
    other_score = [[3, 2, 1], [3, 2, 1], [2, 1, 0]]
    tied = make_records([[0, 1, 2]] * 2 + other_agent * 2, [[5, 5, 1]] * 2 + other_score * 2)
    split = make_records([[0, 1, 2], [1, 0, 2]] + other_agent * 2,
                         [[5, 4, 1], [5, 4, 1]] + other_score * 2)
    a = fit_ratings(tied, 3, bootstrap=0)["rating"]
    b = fit_ratings(split, 3, bootstrap=0)["rating"]
    np.testing.assert_allclose(a, b, rtol=0, atol=1e-9)
    assert abs(a[0] - a[1]) > 0.1              # the other hands do separate them


def test_all_tied_hands_rate_everyone_equal():
    agent = [[0, 1, 2], [2, 1, 0], [1, 1, 0]]
    out = fit_ratings(make_records(agent, [[4, 4, 4]] * 3), 3, bootstrap=5)
    np.testing.assert_allclose(out["rating"], 0.0, atol=1e-12)


def test_hands_of_one_agent_in_every_seat_change_nothing():
    rng = np.random.default_rng(4)
    agent, score = simulate(np.array([0.4, 0.0, -0.4]), 90, 2, rng)
    base = fit_ratings(make_records(agent, score), 3, bootstrap=0)["rating"]
    mirror = make_records(np.vstack([agent, [[1, 1]] * 5]),
                          np.vstack([score, rng.integers(0, 9, size=(5, 2))]))
    np.testing.assert_allclose(fit_ratings(mirror, 3, bootstrap=0)["rating"], base, atol=1e-9)


def test_two_seats_of_one_agent_share_its_strength():
    # agent 0 holds two of three seats; in this design agent 1 wins a third of the hands,
    # i.e. it is exactly as strong as each of agent 0's seats: equal ratings
    agent = [[0, 0, 1]] * 3
    score = [[3, 2, 1], [2, 1, 3], [1, 3, 2]]
    out = fit_ratings(make_records(agent, score), 2, bootstrap=0)
    np.testing.assert_allclose(out["rating"], 0.0, atol=1e-9)
    # when agent 1 always wins, agent 0's two seats do not make it stronger
    out = fit_ratings(make_records(agent, [[2, 1, 3]] * 3), 2, bootstrap=0)
    assert out["order"].tolist() == [1, 0]


# --------------------------------------------------------------------------
# statistics on simulated Plackett-Luce data
# --------------------------------------------------------------------------


@pytest.mark.parametrize("teams", [2, 3, 4])
def test_recovers_known_strengths(teams):
    theta = np.array([0.6, 0.2, -0.1, -0.7])
    agent, score = simulate(theta, 5000, teams, np.random.default_rng(teams))
    out = fit_ratings(make_records(agent, score), 4, bootstrap=0)
    np.testing.assert_allclose(out["rating"], theta, atol=0.1)
    assert out["order"].tolist() == [0, 1, 2, 3]


def test_deal_bootstrap_intervals_cover_the_true_strengths():
    # each deal is one Plackett-Luce hand replayed in 3 lineups: the copies are one unit, so
    # intervals that treated rows as independent would be sqrt(3) too narrow (~73% coverage)
    theta = np.array([0.6, 0.2, -0.1, -0.7])
    below, above = [], []
    for rep in range(50):
        rng = np.random.default_rng(100 + rep)
        agent, score = simulate(theta, 150, 3, rng)
        rec = make_records(np.repeat(agent, 3, axis=0), np.repeat(score, 3, axis=0),
                           np.repeat(np.arange(150), 3))
        rec.lineup = np.tile(np.arange(3), 150)
        out = fit_ratings(rec, 4, bootstrap=200, seed=rep)
        assert out["units"] == 150
        below.append(theta < out["ci_low"])
        above.append(theta > out["ci_high"])
    missed = np.mean(below) + np.mean(above)
    assert missed <= 0.15, missed                 # coverage >= 85% (measured: 92%)
    assert max(np.mean(below), np.mean(above)) <= 0.075   # 2.5% expected on each side


def test_same_seed_same_intervals_other_seed_other_draws():
    rng = np.random.default_rng(5)
    agent, score = simulate(np.array([0.3, 0.0, -0.3]), 120, 3, rng)
    rec = make_records(agent, score, np.arange(120) // 3)
    a, b = fit_ratings(rec, 3, seed=7), fit_ratings(rec, 3, seed=7)
    c = fit_ratings(rec, 3, seed=8)
    assert np.array_equal(a["ci_low"], b["ci_low"]) and np.array_equal(a["ci_high"], b["ci_high"])
    assert not np.array_equal(a["ci_low"], c["ci_low"])
    assert np.array_equal(a["rating"], c["rating"])


# --------------------------------------------------------------------------
# bad input
# --------------------------------------------------------------------------


GOOD = make_records([[0, 1], [1, 0]], [[2, 1], [3, 0]])


@pytest.mark.parametrize("kwargs, field", [
    ({"num_agents": 0}, "num_agents"),
    ({"num_agents": True}, "num_agents"),
    ({"num_agents": 2.0}, "num_agents"),
    ({"num_agents": 1}, "records.agent"),          # agent index 1 is out of range
    ({"bootstrap": -1}, "bootstrap"),
    ({"bootstrap": 1.5}, "bootstrap"),
    ({"bootstrap": False}, "bootstrap"),
    ({"seed": -3}, "seed"),
    ({"seed": "zero"}, "seed"),
    ({"ridge": 0.0}, "ridge"),
    ({"ridge": float("nan")}, "ridge"),
])
def test_bad_arguments_name_the_field(kwargs, field):
    args = {"num_agents": 2, **kwargs}
    num_agents = args.pop("num_agents")
    with pytest.raises(ValueError, match=field):
        fit_ratings(GOOD, num_agents, **args)


def _with(**fields):
    rec = take(GOOD, np.arange(2))
    for name, value in fields.items():
        object.__setattr__(rec, name, np.asarray(value))
    return rec


@pytest.mark.parametrize("records, field", [
    (_with(agent=[[0, -1], [1, 0]]), "records.agent"),
    (_with(agent=[[0, 5], [1, 0]]), "records.agent"),
    (_with(agent=[[0.0, 1.0], [1.0, 0.0]]), "records.agent"),
    (_with(agent=[0, 1]), "records.agent"),
    (_with(score=[[np.nan, 1.0], [3.0, 0.0]]), "records.score"),
    (_with(score=[[np.inf, 1.0], [3.0, 0.0]]), "records.score"),
    (_with(score=[[1.0, 2.0, 3.0], [1.0, 2.0, 3.0]]), "records.score"),
    (_with(deal=[0.5, 1.0]), "records.deal"),
    (_with(deal=[0]), "records.deal"),
    (_with(agent=[[0], [1]], score=[[1.0], [2.0]]), "team positions"),
    (take(GOOD, np.arange(0)), "records is empty"),
    ({"agent": [[0, 1]], "score": [[1, 0]]}, "records must be"),
])
def test_bad_records_name_the_field(records, field):
    with pytest.raises(ValueError, match=field):
        fit_ratings(records, 2)
