"""Tournaments: duplicate deals, the two play paths, determinism, confidence intervals."""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from agents import make_agent
from agents.base import Agent
from agents.stats.estimators import paired_differentials
from agents.arena.deals import deal_keys
from agents.arena.tournament import make_lineups, run_tournament
from nertz_env import RulesConfig
from nertz_env.core.batch import deal_bots_range
from nertz_env.engine import Engine
from nertz_env.envs.spaces import SpacesOnlyEnv


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


def test_duplicate_deals_replay_the_same_cards_across_seatings():
    """Every seating of deal d gets the same cards at every team position (and each hand
    number its own cards); different deals differ."""
    cfg = RulesConfig(num_teams=4)
    dk, _ = deal_keys(9, 3)
    keys = np.repeat(dk, 4)                                  # 3 deals x 4 seatings
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


def test_seatings_seat_every_agent_at_every_position():
    """3 agents at 3 teams: each deal is played at the 6 distinct seatings, each agent twice
    at every position; `rotation` numbers the seatings and hands_played counts them."""
    res = run_tournament(["greedy", "random", "heuristic"], teams=3, deals=4, seed=0,
                         progress=False)
    rec = res.records
    for d in range(4):
        rows = rec.agent[rec.deal == d]
        assert rows.shape == (6, 3)
        assert len({tuple(r) for r in rows.tolist()}) == 6
        assert rec.rotation[rec.deal == d].tolist() == list(range(6))
        for p in range(3):
            assert sorted(rows[:, p].tolist()) == [0, 0, 1, 1, 2, 2]
    assert res.hands_played == 4 * 6 and res.summary()["seatings_per_deal"] == [6]


def test_two_agents_at_four_teams_play_no_repeated_table():
    """All-play-all A,B,A,B: the 6 distinct seatings, no copies of one table (cyclic
    rotations r and r + 2 used to seat everyone identically)."""
    res = run_tournament(["greedy", "heuristic"], teams=4, deals=3, seed=0, progress=False)
    rec = res.records
    for d in range(3):
        rows = {tuple(r) for r in rec.agent[rec.deal == d].tolist()}
        assert len(rows) == len(rec.agent[rec.deal == d]) == 6
    assert res.hands_played == 18


def test_games_keep_the_pairing_in_every_hand():
    """Games mode: hand h of a game is played with the priority key of (deal, h) whatever
    the earlier hands drew, so each hand of every seating equals that hand replayed alone
    (hand 0 always did; later hands used to go on with the game's generator)."""
    from agents.arena.deals import hand_keys
    from agents.arena.seatings import seatings
    from nertz_env.core.batch import play_bots_batch, play_bots_range
    from nertz_env.core.policies import new_policy_arrays

    cfg = RulesConfig(num_teams=2, target_score=60)
    specs = ["greedy", "heuristic"]                          # no coin flips of their own
    res = run_tournament(specs, config=cfg, deals=3, seed=4, mode="games", progress=False)
    assert (res.hands >= 2).all() and (res.hands >= 3).any()
    dk, pk = deal_keys(4, 3)
    hk = hand_keys(pk, 3)
    core = [make_agent(s).core_policy() for s in specs]
    seats = seatings((0, 1))
    for i in range(len(res.records)):
        d, r = res.records.deal[i], res.records.rotation[i]
        kinds, knobs = new_policy_arrays(1, 2)
        for pos, a in enumerate(seats[r]):
            kinds[0, pos], knobs[0, pos] = core[a]
        for h in range(res.hands[i]):
            eng = Engine(cfg, n_tables=1)
            sc = np.zeros((1, 1, 2), np.int64)
            eng.run_kernel(play_bots_batch, play_bots_range, eng.masks, eng.actions,
                           eng.priority, eng.applied, np.zeros(1, np.uint64), kinds, knobs,
                           dk[[d]], hk[[d], h], np.array([h]), False, sc, np.zeros(1, np.int64),
                           np.zeros((1, 1, 2), np.int8), np.full(1, -1, np.int64),
                           np.zeros((1, 1), np.int64))
            np.testing.assert_array_equal(res.hand_scores[i, h], sc[0, 0])


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
    assert len(rec) == 3 * 10 * 2                             # lineups x deals x seatings
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
    path = tmp_path / "tiny.zip"
    sb3c.MaskablePPO("MlpPolicy", SpacesOnlyEnv(), n_steps=8, batch_size=8, seed=0,
                     device="cpu").save(path)
    spec = f"ppo:{path}"
    config = RulesConfig(max_ticks=150)                  # illegal_move="raise": masked, never
    a = run_tournament(["greedy", spec], config=config, deals=3, seed=1, progress=False)
    b = run_tournament(["greedy", spec], config=config, deals=3, seed=1, progress=False)
    assert a.names == ["greedy", spec]
    np.testing.assert_array_equal(a.records.score, b.records.score)
    agent = make_agent(spec)
    obs = np.zeros((2, 791), np.float32)
    masks = np.zeros((2, 322), np.int8)
    masks[:, [0, 1]] = 1
    assert set(agent.act_batch(obs, masks).tolist()) <= {0, 1}


def test_unmasked_ppo_follows_the_tables_illegal_move(tmp_path):
    """A plain PPO model can pick illegal ids: the table's illegal_move decides (R31), as for
    any agent: "raise" names the agent, "penalize" costs penalty_points; nothing is turned
    into a Wait behind the user's back."""
    pytest.importorskip("sb3_contrib")
    from stable_baselines3 import PPO
    path = tmp_path / "plain.zip"
    PPO("MlpPolicy", SpacesOnlyEnv(), n_steps=8, batch_size=8, seed=0, device="cpu").save(path)
    spec = f"ppo:{path}"
    with pytest.raises(ValueError, match="plain.zip"):
        run_tournament(["greedy", spec], config=RulesConfig(max_ticks=50), deals=2, seed=1,
                       progress=False)
    pen = run_tournament(["greedy", spec], deals=2, seed=1, progress=False,
                         config=RulesConfig(max_ticks=50, illegal_move="penalize"))
    ign = run_tournament(["greedy", spec], deals=2, seed=1, progress=False,
                         config=RulesConfig(max_ticks=50, illegal_move="ignore"))
    ppo = pen.names.index(spec)
    mine = pen.records.agent == ppo
    assert (pen.records.score[mine] < ign.records.score[mine]).all()


class Returns(Agent):
    """An agent outside the core whose act_batch returns `make(n, masks)`."""

    def __init__(self, name, make):
        self.name, self.make = name, make

    def act_batch(self, observations, action_masks):
        return self.make(len(observations), np.asarray(action_masks))


def _first_illegal(n, masks):
    return np.argmin(masks, axis=1).astype(np.int64)         # an id its mask forbids


@pytest.mark.parametrize("make, words", [
    (lambda n, m: np.full(n, 70000), "70000"),               # wrapped to 4464 in int16 once
    (lambda n, m: np.full(n, 2000), "2000"),                 # read the mask out of bounds once
    (lambda n, m: np.full(n, -1), "-1"),
    (lambda n, m: np.ones(n), "dtype float64"),
    (lambda n, m: np.ones(n, bool), "dtype bool"),
    (lambda n, m: np.zeros(n + 1, np.int64), "shape"),
    (lambda n, m: np.zeros((n, 1), np.int64), "shape"),
    (lambda n, m: None, "dtype object"),
    (lambda n, m: ["wait"] * n, "dtype <U4"),
    (lambda n, m: [[0]] * (n - 1) + [[0, 1]], "not an array"),
])
def test_bad_agent_outputs_are_value_errors_naming_the_agent(make, words):
    """Every id an agent returns is checked once (shape, integer dtype, range) before it
    reaches the engine's int16 buffer; the error names the agent."""
    with pytest.raises(ValueError, match="agent 'bad' act_batch") as exc:
        run_tournament(["greedy", Returns("bad", make)], teams=2, deals=2, seed=0,
                       progress=False)
    assert words in str(exc.value)


def test_agents_with_only_act_are_checked_too():
    """An object with `act` alone (SupportsAct) plays through `act` per row; a float id is
    refused, naming it."""
    class ActOnly:
        def __init__(self, value):
            self.value = value

        def act(self, observation, action_mask):
            return self.value

    res = run_tournament(["greedy", ActOnly(0)], config=RulesConfig(num_teams=2, max_ticks=30),
                         deals=2, seed=0, progress=False)
    assert res.names == ["greedy", "ActOnly"] and (res.ticks == 30).all()
    with pytest.raises(ValueError, match="agent 'ActOnly' act.*float64"):
        run_tournament(["greedy", ActOnly(1.0)], teams=2, deals=2, seed=0, progress=False)


def test_illegal_agent_moves_follow_illegal_move():
    """In-range but illegal ids: illegal_move="raise" names the agent (R31); "penalize"
    costs penalty_points per move; "ignore" plays them as Wait."""
    bad = Returns("cheat", _first_illegal)
    with pytest.raises(ValueError, match="agent 'cheat'.*R31"):
        run_tournament(["greedy", bad], teams=2, deals=2, seed=0, progress=False)
    scores = {}
    for mode in ("penalize", "ignore"):
        cfg = RulesConfig(num_teams=2, max_ticks=60, illegal_move=mode, penalty_points=5)
        res = run_tournament(["greedy", bad], config=cfg, deals=2, seed=0, progress=False)
        rec = res.records
        scores[mode] = rec.score[rec.agent == 1]                    # one cheat seat per row
    # the cheat moves every tick (speed 1): 5 points per tick of every hand
    np.testing.assert_array_equal(scores["ignore"] - scores["penalize"], 5 * res.ticks)


def test_compile_notice_only_without_cache_files(tmp_path, monkeypatch, capsys):
    """The first-run line appears when numba's cache has no index file for the tournament
    kernel, and not once it has (tests/cli/test_cli_errors.py checks numba really writes it
    there)."""
    import numba

    from agents.arena import progress
    from nertz_env.core.batch import play_bots_range

    monkeypatch.setattr(numba.config, "CACHE_DIR", str(tmp_path))
    assert not progress.kernel_cached(play_bots_range)
    run_tournament("random,greedy", teams=2, deals=2, seed=0, progress=True)
    assert progress.COMPILE_NOTICE in capsys.readouterr().err
    run_tournament("random,greedy", teams=2, deals=2, seed=0, progress=False)
    assert progress.COMPILE_NOTICE not in capsys.readouterr().err
    py = play_bots_range.py_func
    (folder,) = progress.numba_cache_dirs(py.__code__.co_filename)
    Path(folder).mkdir(parents=True)
    name = (f"batch.play_bots_range-{py.__code__.co_firstlineno}"
            f".py{sys.version_info[0]}{sys.version_info[1]}.nbi")
    (Path(folder) / name).write_bytes(b"")
    assert progress.kernel_cached(play_bots_range)
    run_tournament("random,greedy", teams=2, deals=2, seed=0, progress=True)
    assert progress.COMPILE_NOTICE not in capsys.readouterr().err


# ---------------------------------------------------------------------------- precision
SMALL = RulesConfig(num_teams=2, max_ticks=200)


def _half(pair):
    return (pair["ci_high"] - pair["ci_low"]) / 2


def _assert_same_run(a, b, tmp_path):
    """Precision run a and plain run b: the same records, numbers and files."""
    for key in ("lineup", "deal", "rotation", "agent", "score", "called", "win"):
        np.testing.assert_array_equal(getattr(a.records, key), getattr(b.records, key))
    for key in ("ticks", "hands", "hand_scores"):
        np.testing.assert_array_equal(getattr(a, key), getattr(b, key))
    assert a.leaderboard == b.leaderboard and a.pairs == b.pairs
    summary = a.summary()
    summary.pop("precision")
    assert summary == b.summary()
    pa, pb = a.write(tmp_path / "a", plot=False), b.write(tmp_path / "b", plot=False)
    for x, y in zip(pa, pb):
        if x.name != "results.json":
            assert x.read_bytes() == y.read_bytes(), x.name


def test_precision_run_stops_once_every_pair_is_within_the_target(tmp_path):
    """Blocks of deals until every paired half-width is <= 4 points per hand, no further:
    the block before did not reach it; the result is a plain run of the final deal count."""
    agents = "random,greedy,heuristic"
    res = run_tournament(agents, config=SMALL, deals=4, seed=3, progress=False,
                         precision=4.0, max_deals=400)
    assert res.unmet == [] and len(res.pairs) == 3
    assert all(_half(p) <= 4.0 for p in res.pairs)
    assert res.deals < 400 and len(res.deal_blocks) >= 2 and res.deal_blocks[-1] == res.deals
    assert res.deal_blocks[0] == 4 and res.deal_blocks == sorted(set(res.deal_blocks))
    before = run_tournament(agents, config=SMALL, deals=res.deal_blocks[-2], seed=3,
                            progress=False)
    assert max(_half(p) for p in before.pairs) > 4.0
    assert res.summary()["precision"]["reached"] is True
    assert "every paired difference within +-4" in res.precision_line()
    plain = run_tournament(agents, config=SMALL, deals=res.deals, seed=3, progress=False)
    assert plain.precision is None and "precision" not in plain.summary()
    _assert_same_run(res, plain, tmp_path)


@pytest.mark.parametrize("mode, config", [
    ("hands", SMALL), ("games", RulesConfig(num_teams=2, max_ticks=200, target_score=40)),
])
def test_precision_cap_names_the_unmet_pairs(mode, config, tmp_path):
    """A target out of reach: play stops at max_deals, every pair wider than the target is
    named (result, results.json, the printed line), and the deals are a plain run's."""
    res = run_tournament("random,greedy,heuristic", config=config, deals=3, seed=5,
                         mode=mode, progress=False, precision=0.01, max_deals=10)
    assert res.deals == 10 and res.deal_blocks[0] == 3 and res.deal_blocks[-1] == 10
    wide = [(p["a"], p["b"]) for p in res.pairs if _half(p) > 0.01]
    assert wide and [(u["a"], u["b"]) for u in res.unmet] == wide
    assert all(u["half_width"] == _half(p) for u, p in zip(res.unmet, res.pairs))
    info = res.summary()["precision"]
    assert info["reached"] is False and info["max_deals"] == 10 and len(info["unmet"]) == 3
    line = res.precision_line()
    assert "at the cap of 10 deals" in line and all(f"{a} - {b}" in line for a, b in wide)
    plain = run_tournament("random,greedy,heuristic", config=config, deals=10, seed=5,
                           mode=mode, progress=False)
    _assert_same_run(res, plain, tmp_path)
    middle = sorted(_half(p) for p in plain.pairs)[1]      # a target between the pairs
    res = run_tournament("random,greedy,heuristic", config=config, deals=3, seed=5,
                         mode=mode, progress=False, precision=middle, max_deals=10)
    assert res.deals == 10 and res.pairs == plain.pairs
    assert [(u["a"], u["b"]) for u in res.unmet] == [
        (p["a"], p["b"]) for p in plain.pairs if _half(p) > middle] != []
    assert len(res.unmet) == 1


def test_precision_default_cap_and_block_sizes():
    from agents.arena.precision import next_deals

    res = run_tournament("random,greedy", config=SMALL, deals=2, seed=1, progress=False,
                         precision=1e-6)
    assert res.deals == res.max_deals == 200 and len(res.unmet) == 1
    assert next_deals(100, 2.0, 1.0, 10**6) == 400            # need 440: at most 4x
    assert next_deals(100, 1.01, 1.0, 10**6) == 125            # need 113: at least +1/4
    assert next_deals(100, 1.5, 1.0, 10**6) == 248             # ceil(1.1 * 100 * 2.25)
    assert next_deals(100, 2.0, 1.0, 150) == 150               # never past the cap
    assert next_deals(2, float("nan"), 1.0, 100) == 4


@pytest.mark.parametrize("kw, words", [
    ({"precision": 0}, "precision=0 must be a number > 0"),
    ({"precision": -1.0}, "precision=-1.0"), ({"precision": float("nan")}, "precision=nan"),
    ({"precision": float("inf")}, "precision=inf"), ({"precision": True}, "precision=True"),
    ({"precision": "0.1"}, "precision='0.1'"),
    ({"max_deals": 10}, "give precision too"),
    ({"precision": 1.0, "max_deals": 3}, r"max_deals=3 must be an int >= deals \(4\)"),
    ({"precision": 1.0, "max_deals": 8.0}, "max_deals=8.0"),
    ({"precision": 1.0, "max_deals": True}, "max_deals=True"),
])
def test_bad_precision_arguments_are_value_errors(kw, words):
    with pytest.raises(ValueError, match=words):
        run_tournament(["random", "greedy"], progress=False, config=SMALL, deals=4, **kw)


def test_hands_csv_is_csv_whatever_the_agent_names(tmp_path):
    """hands.csv goes through the csv module: a name with a comma and quotes reads back."""
    import csv

    odd = make_agent("greedy")
    odd.name = 'say "hi", greedy'
    res = run_tournament([odd, "random"], teams=2, deals=2, seed=0, progress=False)
    res.write(tmp_path, plot=False)
    with open(tmp_path / "hands.csv", newline="") as fh:
        rows = list(csv.DictReader(fh))
    assert len(rows) == len(res.records)
    assert {r["agent_0"] for r in rows} | {r["agent_1"] for r in rows} == {odd.name, "random"}
    assert [int(r["ticks"]) for r in rows] == res.ticks.tolist()
