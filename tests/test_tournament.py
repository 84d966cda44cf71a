"""Tournaments: duplicate deals, the two play paths, determinism, confidence intervals."""
from __future__ import annotations

import numpy as np
import pytest

from agents import make_agent
from agents.base import Agent
from agents.stats import paired_differentials
from agents.tournament import deal_keys, make_lineups, run_tournament
from nertz_env import RulesConfig
from nertz_env.core.batch import deal_bots_range
from nertz_env.engine import Engine


class PythonOnly(Agent):
    """A shipped bot without its core policy: the runner must drive it from Python."""

    def __init__(self, spec):
        self.inner = make_agent(spec)
        self.name = f"py-{self.inner.name}"

    def act(self, observation, action_mask):
        return self.inner.act(observation, action_mask)


@pytest.mark.parametrize("mode, config", [
    ("hands", RulesConfig(num_teams=3)),
    ("hands", RulesConfig(num_teams=2, team_sizes=(2, 2), speeds=(1, 2, 2, 1))),
    ("games", RulesConfig(num_teams=2, target_score=40)),
])
def test_python_driven_play_equals_jitted_play(mode, config):
    """Same bots, same deals: the numba loop (play_bots_batch) and the Python loop (agents
    outside the core) give the same hands, scores, calls and tick counts."""
    specs = ["random", "greedy", "heuristic", "heuristic:style=lake-rush"]
    jit = run_tournament(specs, config=config, deals=6, seed=5, mode=mode, progress=False)
    py = run_tournament(["random"] + [PythonOnly(s) for s in specs[1:]], config=config, deals=6,
                        seed=5, mode=mode, progress=False)
    np.testing.assert_array_equal(jit.records.score, py.records.score)
    np.testing.assert_array_equal(jit.records.called, py.records.called)
    np.testing.assert_array_equal(jit.records.win, py.records.win)
    np.testing.assert_array_equal(jit.ticks, py.ticks)
    np.testing.assert_array_equal(jit.hands, py.hands)
    if mode == "games":
        assert (jit.hands > 1).any()


def test_duplicate_deals_replay_the_same_cards_across_rotations():
    """Every rotation of deal d gets the same cards at every team position (and each hand
    number its own cards); different deals differ."""
    cfg = RulesConfig(num_teams=4)
    dk, _ = deal_keys(9, 3)
    keys = np.repeat(dk, 4)                                  # 3 deals x 4 rotations
    eng = Engine(cfg, n_tables=12, parallel=False)
    for hand in (0, 1):
        hands = np.full(12, hand, np.int64)
        deal_bots_range(eng.state, eng.params, eng.scratch, eng.masks, keys, hands,
                        np.ones(12, np.int8), 0, 12)
        decks = eng.scratch.decks.copy()
        for d in range(3):
            for r in range(1, 4):
                np.testing.assert_array_equal(decks[4 * d], decks[4 * d + r])
                np.testing.assert_array_equal(eng.state.stream[4 * d], eng.state.stream[4 * d + r])
        assert not np.array_equal(decks[0], decks[4])
        if hand == 0:
            first = decks.copy()
        else:
            assert not np.array_equal(first[0], decks[0])


def test_rotations_seat_every_agent_at_every_position():
    res = run_tournament(["greedy", "random", "heuristic"], teams=3, deals=4, seed=0,
                         progress=False)
    rec = res.records
    for d in range(4):
        rows = rec.agent[rec.deal == d]
        assert rows.shape == (3, 3)
        for p in range(3):
            assert sorted(rows[:, p].tolist()) == [0, 1, 2]


def test_same_seed_same_numbers_and_deals_do_not_depend_on_count():
    a = run_tournament("random,greedy", teams=2, deals=8, seed=3, progress=False)
    b = run_tournament("random,greedy", teams=2, deals=8, seed=3, progress=False)
    c = run_tournament("random,greedy", teams=2, deals=12, seed=3, progress=False)
    d = run_tournament("random,greedy", teams=2, deals=8, seed=4, progress=False)
    np.testing.assert_array_equal(a.records.score, b.records.score)
    assert a.leaderboard == b.leaderboard and a.pairs == b.pairs
    np.testing.assert_array_equal(a.records.score, c.records.score[:16])
    assert not np.array_equal(a.records.score, d.records.score)


def test_records_are_consistent():
    res = run_tournament(["random", "greedy", "heuristic"], teams=2, deals=10, seed=1,
                         progress=False)
    rec = res.records
    assert len(rec) == 3 * 10 * 2                             # lineups x deals x rotations
    np.testing.assert_allclose(rec.win.sum(axis=1), 1.0)
    assert ((rec.called == 0) | (rec.called == 1)).all()
    assert {r["agent"] for r in res.leaderboard} == {"random", "greedy", "heuristic"}
    assert all(r["hands"] == 40 for r in res.leaderboard)
    # a team that called Nertz emptied its pile: +10 bonus and no Nertz penalty (R25, R29)
    called = rec.called == 1
    assert (rec.score[called] >= 10).all()


def test_games_mode_has_winners():
    res = run_tournament(["greedy", "heuristic"], teams=2, deals=4, seed=2, mode="games",
                         config=RulesConfig(num_teams=2, target_score=60), progress=False)
    assert (res.hands >= 2).all()
    np.testing.assert_allclose(res.records.win.sum(axis=1), 1.0)
    assert set(np.unique(res.records.win)) <= {0.0, 0.5, 1.0}


def test_interval_covers_zero_for_identical_bots():
    """Two identical (random) bots, 300 independent small tournaments (deal blocks of one
    run): the paired 95% interval covers the true difference 0 in about 95% of them."""
    blocks, per = 300, 10
    res = run_tournament([make_agent("random"), make_agent("random")], teams=2,
                         deals=blocks * per, seed=11, progress=False)
    rec = res.records
    covered = 0
    for b in range(blocks):
        sel = (rec.deal >= b * per) & (rec.deal < (b + 1) * per)
        sub = type(rec)(rec.lineup[sel], rec.deal[sel], rec.rotation[sel], rec.agent[sel],
                        rec.score[sel], rec.called[sel], rec.win[sel])
        (pair,) = paired_differentials(sub, res.names)
        assert pair["units"] == per and pair["ci_low"] < pair["ci_high"]
        covered += pair["ci_low"] <= 0.0 <= pair["ci_high"]
    assert 0.91 <= covered / blocks <= 0.985, covered / blocks


def test_lineup_formats():
    assert make_lineups(4, 2, "round-robin") == [(0, 1), (0, 2), (0, 3), (1, 2), (1, 3), (2, 3)]
    assert make_lineups(2, 4, "auto") == [(0, 1, 0, 1)]
    assert make_lineups(3, 3, "all-play-all") == [(0, 1, 2)]
    with pytest.raises(ValueError, match="round-robin needs at least 4"):
        make_lineups(2, 4, "round-robin")
    with pytest.raises(ValueError, match="at most 2 agents"):
        make_lineups(3, 2, "all-play-all")
    with pytest.raises(ValueError, match="format 'swiss'"):
        make_lineups(3, 2, "swiss")


@pytest.mark.parametrize("kw, words", [
    (dict(deals=1), "deals=1"), (dict(mode="sets"), "mode 'sets'"),
    (dict(config="x"), "config must be a RulesConfig"), (dict(max_game_hands=0), "max_game_hands"),
    (dict(teams=9), "num_teams"),
])
def test_bad_arguments_are_value_errors(kw, words):
    with pytest.raises(ValueError, match=words):
        run_tournament(["random", "greedy"], progress=False, **{"deals": 4, **kw})


def test_write_files_are_reproducible(tmp_path):
    a = run_tournament("random,greedy,heuristic", teams=2, deals=5, seed=7, progress=False)
    b = run_tournament("random,greedy,heuristic", teams=2, deals=5, seed=7, progress=False)
    pa = a.write(tmp_path / "a")
    pb = b.write(tmp_path / "b")
    assert [p.name for p in pa] == ["leaderboard.csv", "pairs.csv", "results.json", "hands.csv",
                                    "leaderboard.png"]
    for x, y in zip(pa, pb):
        assert x.read_bytes() == y.read_bytes(), x.name
    assert "heuristic" in a.table()


def test_ppo_agent_plays_in_a_tournament(tmp_path):
    """ppo:model.zip (a saved MaskablePPO) is an agent like the bots: the runner drives it
    from Python, it only plays legal moves (masked), and the numbers are reproducible."""
    sb3c = pytest.importorskip("sb3_contrib")
    from nertz_env.envs.vector import NertzVecEnv

    model = sb3c.MaskablePPO("MlpPolicy", NertzVecEnv(4, num_teams=2, seed=0), n_steps=16,
                             batch_size=32, seed=0, device="cpu")
    model.learn(32)
    path = tmp_path / "tiny.zip"
    model.save(path)
    spec = f"ppo:{path}"
    a = run_tournament(["greedy", spec], teams=2, deals=3, seed=1, progress=False)
    b = run_tournament(["greedy", spec], teams=2, deals=3, seed=1, progress=False)
    assert a.names == ["greedy", spec]
    np.testing.assert_array_equal(a.records.score, b.records.score)
    agent = make_agent(spec)
    obs = np.zeros((2, 791), np.float32)
    masks = np.zeros((2, 322), np.int8)
    masks[:, [0, 1]] = 1
    assert set(agent.act_batch(obs, masks).tolist()) <= {0, 1}
