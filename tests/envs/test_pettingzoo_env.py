"""The PettingZoo environments (nertz_env.nertz_v0): PettingZoo's own checkers on 2, 4 and 8
teams and a two-player-team table, then what the checkers do not see: determinism, rewards
against the R29 scores, layouts, snapshots, pickling, unmasked actions and bad arguments.

Hands are cut short with max_ticks=60 so every checker also sees episodes end.
"""

import copy
import pickle

import numpy as np
import pettingzoo
import pytest
from gymnasium.utils.env_checker import data_equivalence
from pettingzoo.test import (api_test, parallel_api_test, parallel_seed_test, render_test,
                             seed_test, state_test)

from nertz_env import N_ACTIONS, RulesConfig, Table, nertz_v0
from nertz_env.core.observe import OBS_DIM
from nertz_env.envs.pettingzoo import ROLE_NERTZ, ROLE_SOLO, ROLE_STREAM
from nertz_env.table.games import MAX_HANDS, decide_winner
from nertz_env.envs.registry import make

# api_test warns about any Dict observation space unless the env is one of PettingZoo's own
# classic games (it checks a hard-coded list of names); the {"observation", "action_mask"} dict
# is PettingZoo's documented convention for masked actions
pytestmark = [
    pytest.mark.filterwarnings("ignore:Observation is not a NumPy array:UserWarning"),
    pytest.mark.filterwarnings("ignore:Observation space for each agent probably should be"),
]

TICKS = 60
TABLES = {
    "2teams": dict(num_teams=2),
    "4teams": dict(num_teams=4),
    "8teams": dict(num_teams=8),
    "pair": dict(num_teams=2, team_sizes=(2, 1)),
}


@pytest.fixture(params=list(TABLES), ids=list(TABLES))
def table_kwargs(request):
    return dict(TABLES[request.param], max_ticks=TICKS)


def legal_actions(obs, rng):
    return {a: int(rng.choice(np.flatnonzero(o["action_mask"]))) for a, o in obs.items()}


def play(env, seed, pick=legal_actions, action_seed=0):
    """One episode; returns the list of step outputs."""
    rng = np.random.default_rng(action_seed)
    obs, infos = env.reset(seed=seed)
    out = [(obs, infos)]
    while env.agents:
        step = env.step(pick(obs, rng))
        out.append(step)
        obs = step[0]
    return out


# --------------------------------------------------------------------------------------------
# PettingZoo's checkers
# --------------------------------------------------------------------------------------------


def test_parallel_api(table_kwargs):
    parallel_api_test(nertz_v0.parallel_env(**table_kwargs), num_cycles=TICKS + 5)


def test_parallel_seed(table_kwargs):
    parallel_seed_test(lambda: nertz_v0.parallel_env(**table_kwargs), num_cycles=TICKS)


def test_aec_api(table_kwargs):
    api_test(nertz_v0.env(**table_kwargs), num_cycles=TICKS + 5)


def test_aec_seed(table_kwargs):
    seed_test(lambda: nertz_v0.env(**table_kwargs), num_cycles=TICKS)


def test_render(table_kwargs):
    render_test(lambda render_mode=None: nertz_v0.env(render_mode=render_mode, **table_kwargs))


def test_state(table_kwargs):
    state_test(nertz_v0.env(**table_kwargs), nertz_v0.parallel_env(**table_kwargs), num_cycles=10)


def test_parallel_api_whole_games():
    # nertz_penalty=0 and target 1: the first hand with a Lake card of one team ends the game
    kwargs = dict(num_teams=2, team_sizes=(2, 1), max_ticks=TICKS, episode="game",
                  target_score=1, nertz_penalty=0)
    parallel_api_test(nertz_v0.parallel_env(**kwargs), num_cycles=20 * TICKS)
    api_test(nertz_v0.env(reward="win", **kwargs), num_cycles=20 * TICKS)


def test_registry():
    par = pettingzoo.make("parallel", "nertz/nertz-v0", num_teams=3)
    assert isinstance(par, nertz_v0.NertzParallelEnv) and par.config.num_teams == 3
    assert isinstance(pettingzoo.make("aec", "nertz/nertz-v0"), pettingzoo.AECEnv)
    assert make("nertz/nertz-v0", kind="parallel", num_teams=5).possible_agents[-1] == "player_4"
    with pytest.raises(ValueError, match="unknown environment"):
        make("nertz/chess-v0")


# --------------------------------------------------------------------------------------------
# spaces, infos, determinism
# --------------------------------------------------------------------------------------------


def test_spaces_and_infos():
    env = nertz_v0.parallel_env(num_teams=3, team_sizes=(2, 1, 2), max_ticks=TICKS)
    assert env.possible_agents == [f"player_{i}" for i in range(5)]
    assert env.config.illegal_move == "penalize"
    for agent in env.possible_agents:
        assert env.action_space(agent).n == N_ACTIONS
        assert env.observation_space(agent)["observation"].shape == (OBS_DIM,)
        assert env.observation_space(agent)["action_mask"].dtype == np.int8
    obs, infos = env.reset(seed=3)
    roles = [infos[a]["role"] for a in env.agents]
    assert (ROLE_SOLO, ROLE_NERTZ, ROLE_STREAM) == (0, 1, 2)              # documented codes
    assert roles == [1, 2, 0, 1, 2]                                       # R4, hand 0
    assert [infos[a]["team"] for a in env.agents] == [0, 0, 1, 2, 2]
    for seat, agent in enumerate(env.agents):
        # numbers only (TorchRL builds specs from infos); the mask only in the observation
        assert set(infos[agent]) == {"team", "role", "hand", "tick", "applied"}
        assert all(isinstance(v, (int, bool, np.integer, np.bool_)) for v in infos[agent].values())
        np.testing.assert_array_equal(obs[agent]["action_mask"], env.table.action_mask(seat))
        np.testing.assert_array_equal(obs[agent]["observation"], env.engine.observe()[0, seat])
        assert infos[agent]["tick"] == 0 and infos[agent]["applied"] is False
    obs, rewards, _, _, infos = env.step({"player_2": 1})               # the rest wait
    assert infos["player_0"]["applied"] is True and infos["player_0"]["tick"] >= 1
    assert set(infos["player_0"]) == {"team", "role", "hand", "tick", "applied"}
    assert all(isinstance(r, float) for r in rewards.values())


def test_determinism(table_kwargs):
    a = play(nertz_v0.parallel_env(**table_kwargs), seed=11, action_seed=5)
    b = play(nertz_v0.parallel_env(**table_kwargs), seed=11, action_seed=5)
    assert len(a) == len(b)
    for x, y in zip(a, b):
        assert data_equivalence(x, y)
    c = play(nertz_v0.parallel_env(**table_kwargs), seed=12, action_seed=5)
    assert not data_equivalence(a[0][0], c[0][0])        # another seed, another deal


# --------------------------------------------------------------------------------------------
# rewards
# --------------------------------------------------------------------------------------------


def team_sums(env, steps):
    """Summed rewards per team (one agent per team: partners get equal rewards)."""
    team_of = env.config.seat_team
    total = np.zeros(env.config.num_teams)
    for step in steps[1:]:
        rewards = step[1]
        for t in range(env.config.num_teams):
            seats = [s for s in range(env.config.num_seats) if team_of[s] == t]
            values = {rewards[f"player_{s}"] for s in seats}
            assert len(values) == 1                       # partners share the team's reward
            total[t] += values.pop()
    return total


def test_score_rewards_sum_to_hand_scores(table_kwargs):
    env = nertz_v0.parallel_env(**table_kwargs)
    steps = play(env, seed=4)
    np.testing.assert_array_equal(team_sums(env, steps), env.table.hand_scores())


def test_relative_rewards_are_zero_sum_per_team():
    for kwargs in (dict(num_teams=4), dict(num_teams=3, team_sizes=(2, 1, 2))):
        env = nertz_v0.parallel_env(reward="relative", max_ticks=TICKS, **kwargs)
        score = nertz_v0.parallel_env(reward="score", max_ticks=TICKS, **kwargs)
        steps, base = play(env, seed=8), play(score, seed=8)
        T = env.config.num_teams
        seat0 = [env.config.seat_team.index(t) for t in range(T)]
        for step, ref in zip(steps[1:], base[1:]):
            team = np.array([step[1][f"player_{s}"] for s in seat0])
            delta = np.array([ref[1][f"player_{s}"] for s in seat0])
            assert abs(team.sum()) < 1e-9
            np.testing.assert_allclose(team, delta - (delta.sum() - delta) / (T - 1))


def test_whole_game_rewards():
    # no Nertz penalty and a low target: a game of a few 60-tick hands
    kwargs = dict(num_teams=3, team_sizes=(2, 1, 1), max_ticks=TICKS, episode="game",
                  target_score=15, nertz_penalty=0)
    score = nertz_v0.parallel_env(reward="score", **kwargs)
    win = nertz_v0.parallel_env(reward="win", **kwargs)
    s_steps, w_steps = play(score, seed=2), play(win, seed=2)
    assert len(s_steps) == len(w_steps)
    infos = [step[-1]["player_0"] for step in s_steps]
    assert infos[-1]["hand"] >= 1                                     # several hands
    assert {(i["hand"] % 2, i["role"]) for i in infos} == {(0, ROLE_NERTZ), (1, ROLE_STREAM)}  # R4
    totals = team_sums(score, s_steps)                # over the game: the R30 totals
    T = score.config.num_teams
    np.testing.assert_array_equal(totals, score.state()[-2 * T:-T])
    winner = decide_winner(totals, score.state()[-T:], 15)
    assert winner is not None and totals[winner] >= 15
    for agent, r in w_steps[-1][1].items():
        assert r == (1.0 if win.config.seat_team[int(agent.split("_")[1])] == winner else -1.0)
    assert all(r == 0.0 for step in w_steps[1:-1] for r in step[1].values())
    assert all(w_steps[-1][2].values()) and not any(w_steps[-1][3].values())


def test_game_without_winner_is_truncated_at_max_hands():
    env = nertz_v0.parallel_env(num_teams=2, episode="game", max_ticks=1)
    steps = play(env, seed=0)
    assert len(steps) == MAX_HANDS + 1 and env.agents == []
    assert all(steps[-1][3].values()) and not any(steps[-1][2].values())


def test_hand_episode_end_flags():
    env = nertz_v0.parallel_env(num_teams=2, max_ticks=5)
    steps = play(env, seed=0)
    assert len(steps) == 6 and env.agents == [] and env.table.truncated
    assert all(steps[-1][3].values()) and not any(steps[-1][2].values())
    with pytest.raises(ValueError, match="reset"):
        env.step({})


def test_nertz_call_terminates():
    # team 0 has one Nertz card left, an ace: nertz>lake empties the pile (R24 auto_nertz)
    layout = {"lake": [], "teams": [
        {"nertz": ["AS"], "river": [["KH"], [], [], []], "stream": ["5D"], "waste": 0},
        {"nertz": ["KC", "QD"], "river": [[], [], [], []], "stream": [], "waste": 0}]}
    env = nertz_v0.parallel_env(num_teams=2)
    env.reset(seed=0, options={"layout": layout})
    _, rewards, terms, truncs, _ = env.step({"player_0": env.table.encode("nertz>lake")})
    assert all(terms.values()) and not any(truncs.values()) and env.agents == []
    assert [rewards["player_0"], rewards["player_1"]] == env.table.hand_scores()


# --------------------------------------------------------------------------------------------
# layouts, snapshots, pickling
# --------------------------------------------------------------------------------------------


def mid_hand_layout(config, seed=3, ticks=25):
    table = Table.deal(config, seed=seed)
    rng = np.random.default_rng(seed)
    for _ in range(ticks):
        moves = {s: rng.choice(table.legal_moves(s)) for s in range(config.num_seats)}
        table.step(moves)
    return table


def test_reset_from_layout_reproduces_it():
    config = RulesConfig(num_teams=3, team_sizes=(2, 1, 1), illegal_move="penalize")
    src = mid_hand_layout(config)
    layout = src.layout()
    layout["hand"] = 1                                           # roles swap (R4)
    env = nertz_v0.parallel_env(config=config)
    obs, infos = env.reset(seed=1, options={"layout": layout})
    assert env.table.layout() == layout
    assert infos["player_0"]["role"] == ROLE_STREAM and infos["player_1"]["role"] == ROLE_NERTZ
    ref = Table.from_layout(layout, config)
    np.testing.assert_array_equal(env.engine.masks, ref.engine.masks)
    for seat, agent in enumerate(env.agents):
        np.testing.assert_array_equal(obs[agent]["observation"], ref.engine.observe()[0, seat])
    with pytest.raises(ValueError):
        env.reset(options={"layout": {"lake": [], "teams": [layout["teams"][0]]}})


def snapshot_then_replay(env, restore):
    """Play 10 steps, snapshot, play 20 more; restore and replay the same actions."""
    rng = np.random.default_rng(1)
    obs, _ = env.reset(seed=5)
    for _ in range(10):
        obs = env.step(legal_actions(obs, rng))[0]
    snap = restore.save(env)
    actions, first = [], []
    for _ in range(20):
        acts = legal_actions(obs, rng)
        actions.append(acts)
        step = env.step(acts)
        first.append(step)
        obs = step[0]
    again = restore.load(env, snap)
    second = [again.step(acts) for acts in actions]
    for x, y in zip(first, second):
        assert data_equivalence(x, y)
    assert again.table.layout() == env.table.layout()


class ByGetState:
    @staticmethod
    def save(env):
        return env.get_state()

    @staticmethod
    def load(env, snap):
        env.set_state(snap)
        return env


class ByPickle:
    @staticmethod
    def save(env):
        return pickle.dumps(env)

    @staticmethod
    def load(env, snap):
        return pickle.loads(snap)


class ByDeepcopy:
    @staticmethod
    def save(env):
        return copy.deepcopy(env)

    @staticmethod
    def load(env, snap):
        return snap


@pytest.mark.parametrize("restore", [ByGetState, ByPickle, ByDeepcopy],
                         ids=["get_state", "pickle", "deepcopy"])
def test_snapshot_round_trip(restore):
    snapshot_then_replay(nertz_v0.parallel_env(num_teams=2, team_sizes=(2, 1), max_ticks=200),
                         restore)
    snapshot_then_replay(nertz_v0.parallel_env(num_teams=4, episode="game", max_ticks=8), restore)


def test_state_vector_and_set_state_checks():
    env = nertz_v0.parallel_env(num_teams=4)
    env.reset(seed=0)
    state = env.state()
    assert state.dtype == np.float32 and env.state_space.contains(state)
    snap = env.get_state()
    other = nertz_v0.parallel_env(num_teams=2)
    with pytest.raises(ValueError, match="shape"):
        other.set_state(snap)
    with pytest.raises(ValueError):
        other.set_state({"engine": {}})


# --------------------------------------------------------------------------------------------
# bad input
# --------------------------------------------------------------------------------------------


def test_unmasked_actions_never_crash():
    env = nertz_v0.parallel_env(num_teams=2, team_sizes=(2, 2), max_ticks=TICKS)
    steps = play(env, seed=9, pick=lambda obs, rng: {a: int(rng.integers(N_ACTIONS)) for a in obs})
    assert sum(env.table.layout()["penalties"]) > 0                      # R31 penalize
    np.testing.assert_array_equal(team_sums(env, steps), env.table.hand_scores())


@pytest.mark.parametrize("kwargs, part", [
    (dict(reward="gold"), "reward"),
    (dict(episode="match"), "episode"),
    (dict(observation="pixels"), "observation"),
    (dict(render_mode="rgb"), "render_mode"),
    (dict(reward="win"), "episode"),
    (dict(num_teams=9), "num_teams"),
    (dict(max_ticks=0), "max_ticks"),
    (dict(colour="red"), "colour"),
    (dict(config="standard"), "config"),
])
def test_bad_arguments(kwargs, part):
    with pytest.raises(ValueError, match=part):
        nertz_v0.parallel_env(**kwargs)


@pytest.mark.parametrize("action, part", [(N_ACTIONS, "322"), (-1, "-1"), (2.5, "2.5"),
                                          ("flip", "flip"), (True, "True")])
def test_bad_action_ids(action, part):
    env = nertz_v0.parallel_env()
    env.reset(seed=0)
    before = env.table.layout()
    with pytest.raises(ValueError, match="player_1") as info:
        env.step({"player_1": action})
    assert part in str(info.value)
    assert env.table.layout() == before
    with pytest.raises(ValueError, match="player_7"):
        env.step({"player_7": 0})
    # every agent given (the fast path's shape): a bad id still reaches the general path's
    # error, including values equal to a valid id (1.0, True) that only their type rules out
    full = dict.fromkeys(env.possible_agents, 0)
    with pytest.raises(ValueError, match="player_1") as info:
        env.step({**full, "player_1": action})
    assert part in str(info.value)
    for equal_to_an_id in (1.0, True, np.float64(3.0)):
        with pytest.raises(ValueError, match="player_1"):
            env.step({**full, "player_1": equal_to_an_id})
    with pytest.raises(ValueError, match="dict"):
        env.step(list(full.values()))
    assert env.table.layout() == before


def test_numpy_action_types_and_render_modes():
    env = nertz_v0.parallel_env()
    env.reset(seed=0)
    env.step({"player_0": np.int64(0), "player_1": np.array([0])})
    env.step({"player_0": np.array(0, np.int16), "player_1": None})     # None waits
    with pytest.warns(UserWarning, match="render_mode"):
        assert env.render() is None                      # no render_mode: a warning, nothing else
    ansi = nertz_v0.parallel_env(render_mode="ansi")
    ansi.reset(seed=0)
    assert ansi.render() == ansi.table.render()


@pytest.mark.parametrize("kw", [dict(num_teams=3, reward="score"),
                                dict(team_sizes=(2, 1), reward="relative"),
                                dict(num_teams=2, episode="game", reward="win")])
def test_in_play_step_returns_what_the_helpers_build(kw):
    """A step within a hand returns the rewards of the change in Table.hand_scores()
    (_team_rewards, numpy) although step() builds them from plain lists, the observations and
    infos _returns builds over the engine's buffers (observe(), masks, tick and hand: the
    fused kernel's arrays and summary row agree with them), fresh dicts every step and arrays
    that are not the engine's buffers."""
    env = nertz_v0.parallel_env(**kw)
    obs, _ = env.reset(seed=4)
    rng = np.random.default_rng(1)
    prev = np.zeros(env.config.num_teams, np.int64)   # rewards sum to the hand's score
    steps = 0
    while env.agents and steps < 200:
        acts = {a: int(rng.choice(np.flatnonzero(obs[a]["action_mask"]))) for a in env.agents}
        obs, rew, term, trunc, infos = env.step(acts)
        steps += 1
        if not env.agents or env.engine.state.status[0] != 0:
            break
        scores = np.array(env.table.hand_scores())
        team = env._team_rewards(scores - prev, None)
        prev = scores
        eng = env.engine                 # the engine's own buffers, written by other kernels
        view, masks = eng.observe()[0], eng.masks[0]
        arrays = [view[s] for s in range(len(view))] + [masks[s] for s in range(len(masks))]
        want_obs, want_infos, want_rew = env._returns(
            arrays, eng.state.tick.item(0), eng.state.hand.item(0), team)
        assert data_equivalence(obs, want_obs) and data_equivalence(infos, want_infos)
        assert rew == want_rew and all(type(r) is float for r in rew.values())
        assert term == dict.fromkeys(env.agents, False) == trunc and term is not trunc
        assert not np.shares_memory(obs[env.agents[0]]["observation"], env.engine.observe())
    assert steps > 50


# --------------------------------------------------------------------------------------------
# every entry point checks before it changes anything
# --------------------------------------------------------------------------------------------


def same_snapshot(a, b) -> bool:
    """get_state() dicts equal: arrays by value and dtype, everything else by ==."""
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same_snapshot(a[k], b[k]) for k in a)
    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and np.array_equal(a, b)
    return a == b


@pytest.mark.parametrize("kwargs, part", [
    (dict(options={"layuot": {}}), "'layuot'.*allowed keys are \\['layout'\\]"),
    (dict(options={"layout": None, "seed": 3}), "'seed'"),
    (dict(options="layout"), "dict"),
    (dict(options={"layout": {"teams": 3}}), "teams"),
    (dict(seed=9, options={"layout": {"teams": 3}}), "teams"),
    (dict(seed=-1), "seed"),
    (dict(seed=2.5), "seed"),
    (dict(seed="0"), "seed"),
    (dict(seed=False), "seed"),
])
def test_bad_reset_arguments_change_nothing(kwargs, part):
    env = nertz_v0.parallel_env(num_teams=2)
    env.reset(seed=3)
    env.step(dict.fromkeys(env.agents, 1))
    before = env.get_state()
    with pytest.raises(ValueError, match=part):
        env.reset(**kwargs)
    assert same_snapshot(env.get_state(), before)
    env.reset(seed=np.uint8(3), options={})                   # fine: None, {}, numpy ints
    env.reset(options={"options": 1})                          # PettingZoo's api_test probe


def test_illegal_move_raise_names_the_agent_and_changes_nothing():
    env = nertz_v0.parallel_env(num_teams=3, illegal_move="raise")
    obs, _ = env.reset(seed=0)
    before = env.get_state()
    illegal = int(np.flatnonzero(obs["player_1"]["action_mask"] == 0)[0])
    for acts in ({"player_1": illegal}, dict.fromkeys(env.agents, 0) | {"player_1": illegal}):
        with pytest.raises(ValueError, match=f"player_1: action id {illegal} .*R31"):
            env.step(acts)
        assert same_snapshot(env.get_state(), before)
    env.step(dict.fromkeys(env.agents, 0))


@pytest.mark.parametrize("make", [nertz_v0.env, nertz_v0.raw_env], ids=["env", "raw_env"])
def test_aec_checks_each_action_at_its_agents_turn(make):
    """The AEC form: a bad action is the ParallelEnv's ValueError (not PettingZoo's
    AssertionError), raised when that agent steps, with nothing recorded; under
    illegal_move="raise" an illegal move too."""
    env = make(num_teams=3, illegal_move="raise")
    env.reset(seed=0)
    par = env.unwrapped
    before = par.get_state()
    env.step(0)                                                  # player_0 waits
    assert env.agent_selection == "player_1"
    mask = env.observe("player_1")["action_mask"]
    illegal = int(np.flatnonzero(mask == 0)[0])
    for bad, part in [(N_ACTIONS, "out of range"), (1.9, "1.9"), (True, "True"),
                      ("flip", "flip"), (illegal, "R31")]:
        with pytest.raises(ValueError, match=f"player_1: .*{part}"):
            env.step(bad)
        assert env.agent_selection == "player_1"                # nothing recorded
        assert same_snapshot(par.get_state(), before)
    env.step(int(np.flatnonzero(mask)[-1]))
    env.step(0)                                                  # the tick is played
    assert env.agent_selection == "player_0" and par.engine.state.tick[0] == 1
    if make is nertz_v0.raw_env:
        with pytest.raises(ValueError, match="reset"):
            nertz_v0.raw_env().step(0)
