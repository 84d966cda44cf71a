"""NertzGymEnv (nertz_env/envs/gym.py, `nertz_env/Nertz-v0`): the Gymnasium and SB3 checkers,
determinism, rewards that sum to the hand score, layout resets, illegal actions, opponents."""
from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import nertz_env  # noqa: F401  (registers nertz_env/Nertz-v0)
from nertz_env import Table
from nertz_env.actions import LAKE0, N_ACTIONS
from nertz_env.core.observe import OBS_DIM
from nertz_env.envs.gym import NertzGymEnv
from nertz_env.encoding import SRC_NERTZ

FORMATS = [dict(num_teams=2), dict(num_teams=4), dict(num_teams=8),
           dict(num_teams=2, team_sizes=(2, 1))]
IDS = ["2teams", "4teams", "8teams", "pair_vs_solo"]

LAYOUT = {
    "lake": [["AH", "2H@1"]],
    "teams": [
        {"nertz": ["9D", "3H"], "river": [["KS", "QH"], ["7D"], [], ["3C"]],
         "stream": ["4H", "JD", "2S", "8C"], "waste": 2},
        {"nertz": ["KC"], "river": [[], [], [], []], "stream": [], "waste": 0},
    ]}


def play(env, seed, n_steps=None, action_seed=0, legal_only=True):
    """Play until the hand ends (or n_steps): returns the list of (obs, reward, term, trunc,
    info) and the reset's (obs, info)."""
    rng = np.random.default_rng(action_seed)
    first = env.reset(seed=seed)
    info = first[1]
    out = []
    while n_steps is None or len(out) < n_steps:
        if legal_only:
            a = int(rng.choice(np.flatnonzero(info["action_mask"])))
        else:
            a = int(rng.integers(N_ACTIONS))
        step = env.step(a)
        out.append(step)
        info = step[4]
        if step[2] or step[3]:
            break
    return first, out


def same(a, b) -> bool:
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and np.array_equal(a, b)
    return type(a) is type(b) and a == b


@pytest.mark.parametrize("kw", FORMATS, ids=IDS)
def test_gymnasium_check_env(kw):
    env = gymnasium.make("nertz_env/Nertz-v0", render_mode="ansi", max_ticks=300, **kw)
    check_env(env.unwrapped)
    obs, info = env.reset(seed=0)
    assert obs.shape == (OBS_DIM,) and obs.dtype == np.float32
    assert env.observation_space.contains(obs)
    assert isinstance(env.render(), str)
    env.close()


@pytest.mark.parametrize("kw", FORMATS, ids=IDS)
def test_sb3_check_env(kw):
    pytest.importorskip("stable_baselines3")
    from stable_baselines3.common.env_checker import check_env as sb3_check_env
    sb3_check_env(NertzGymEnv(max_ticks=300, **kw), warn=True)


def test_spaces_and_info():
    env = NertzGymEnv(num_teams=3)
    assert env.observation_space == gymnasium.spaces.Box(-1, 1, (OBS_DIM,), np.float32)
    assert env.action_space == gymnasium.spaces.Discrete(N_ACTIONS)
    assert env.config.illegal_move == "penalize"
    obs, info = env.reset(seed=3)
    assert set(info) >= {"action_mask", "applied", "tick", "team", "hand_scores"}
    assert info["action_mask"].dtype == bool and info["action_mask"].shape == (N_ACTIONS,)
    assert np.array_equal(info["action_mask"], env.action_masks())
    assert np.array_equal(env.action_masks(), env.engine.masks[0, 0].astype(bool))
    assert info["tick"] == 0 and info["team"] == 0
    assert info["hand_scores"].dtype == np.int64 and info["hand_scores"].tolist() == [-26] * 3
    assert np.array_equal(obs, env.engine.observe()[0, 0])


@pytest.mark.parametrize("kw", [dict(num_teams=4), dict(num_teams=2, team_sizes=(2, 1))],
                         ids=["4teams", "pair_vs_solo"])
def test_same_seed_same_actions_same_everything(kw):
    a = play(NertzGymEnv(max_ticks=400, **kw), seed=11, action_seed=5)
    b = play(NertzGymEnv(max_ticks=400, **kw), seed=11, action_seed=5)
    assert len(a[1]) > 10 and same(a, b)
    # the same env object, reset again with the same seed, replays it too
    env = NertzGymEnv(max_ticks=400, **kw)
    play(env, seed=99, action_seed=1)
    assert same(play(env, seed=11, action_seed=5), a)
    # and a different seed deals a different hand
    c = play(NertzGymEnv(max_ticks=400, **kw), seed=12, action_seed=5)
    assert not np.array_equal(a[0][0], c[0][0])


@pytest.mark.parametrize("kw", [dict(num_teams=2), dict(num_teams=4),
                                dict(num_teams=3, team_sizes=(2, 1, 1), learner_seat=1)],
                         ids=["2teams", "4teams", "pair_second_seat"])
@pytest.mark.parametrize("reward", ["score", "relative"])
def test_rewards_sum_to_the_hand_score(kw, reward):
    env = NertzGymEnv(max_ticks=250, reward=reward, **kw)
    ended = 0
    for seed in range(3):
        _, steps = play(env, seed=seed, action_seed=seed, legal_only=seed != 1)
        total = sum(s[1] for s in steps)
        final = steps[-1][4]["hand_scores"]
        me = env.team
        assert steps[-1][2] or steps[-1][3]
        ended += steps[-1][2]
        want = final[me]
        if reward == "relative":
            want -= (sum(final) - final[me]) / (len(final) - 1)
        assert total == pytest.approx(want)
        assert steps[-1][3] == (steps[-1][4]["tick"] >= 250 and not steps[-1][2])
    if kw == dict(num_teams=4):
        assert ended > 0           # random 4-team hands end by a call well inside 250 ticks


def test_illegal_actions_are_penalized_not_fatal():
    env = NertzGymEnv(num_teams=2, penalty_points=5)
    obs, info = env.reset(seed=0)
    illegal = int(np.flatnonzero(~info["action_mask"])[0])
    obs, r, term, trunc, info = env.step(illegal)
    assert info["applied"] is False
    assert r == -26 - 5 and info["hand_scores"][0] == -31
    illegal = int(np.flatnonzero(~info["action_mask"])[-1])
    obs, r, term, trunc, info = env.step(illegal)
    assert r == -5 and env.engine.state.penalties[0, 0] == 2
    # every action id, legal or not, is accepted
    for a in range(0, N_ACTIONS, 7):
        env.step(a)
    with pytest.raises(ValueError, match="illegal"):
        env2 = NertzGymEnv(num_teams=2, illegal_move="raise")
        _, info = env2.reset(seed=0)
        env2.step(int(np.flatnonzero(~info["action_mask"])[0]))


def test_layout_reset():
    env = NertzGymEnv(num_teams=2, render_mode="ansi")
    obs, info = env.reset(seed=4, options={"layout": LAYOUT})
    lay = env.table.layout()
    assert lay["lake"] == LAYOUT["lake"] and lay["teams"][0]["nertz"] == ["9D", "3H"]
    assert lay["teams"][0]["river"] == LAYOUT["teams"][0]["river"]
    assert info["hand_scores"].tolist() == env.table.hand_scores()
    assert np.array_equal(obs, env.engine.observe()[0, 0])
    assert np.array_equal(info["action_mask"], Table.from_layout(LAYOUT).action_mask(0))
    assert info["action_mask"][LAKE0 + SRC_NERTZ]            # 3H onto the Lake's 2H
    obs, r, term, trunc, info = env.step(LAKE0 + SRC_NERTZ)
    assert info["applied"] and env.table.layout()["lake"][0][-1] == "3H"
    assert "3H" in env.render()
    # a layout reset is as deterministic as a dealt one
    env.reset(seed=4, options={"layout": LAYOUT})
    x = [env.step(0) for _ in range(5)]
    env.reset(seed=4, options={"layout": LAYOUT})
    y = [env.step(0) for _ in range(5)]
    assert same(x, y)
    with pytest.raises(ValueError):
        env.reset(options={"layout": {"lake": [], "teams": "nope"}})


class CountingAgent:
    """An agent of the agents-issue interface: plays its first legal move."""

    def __init__(self):
        self.calls = 0

    def act(self, observation, action_mask):
        assert observation.shape == (OBS_DIM,) and observation.dtype == np.float32
        assert action_mask.shape == (N_ACTIONS,)
        self.calls += 1
        return int(np.flatnonzero(action_mask)[-1])


def test_agent_opponents():
    agents = [CountingAgent(), CountingAgent()]
    env = NertzGymEnv(num_teams=3, opponents=agents, max_ticks=50)
    _, steps = play(env, seed=0)
    assert agents[0].calls == agents[1].calls == len(steps)
    # one agent for every other seat; a callable works too
    env = NertzGymEnv(num_teams=4, opponents=lambda o, m: 0, max_ticks=20)
    _, steps = play(env, seed=0)
    assert len(steps) == 20 and steps[-1][3]
    assert steps[-1][4]["hand_scores"][1:].tolist() == [-26, -26, -26]  # waiting opponents
    with pytest.raises(ValueError, match="one agent per other seat"):
        NertzGymEnv(num_teams=4, opponents=[CountingAgent()])
    with pytest.raises(ValueError, match="reward"):
        NertzGymEnv(reward="win")
    with pytest.raises(ValueError, match="learner_seat"):
        NertzGymEnv(num_teams=2, learner_seat=2)


def test_render_modes(capsys):
    env = gymnasium.make("nertz_env/Nertz-v0", render_mode="human")
    env.reset(seed=0)
    assert "Team 0" in capsys.readouterr().out
    env.step(0)
    assert "tick 1" in capsys.readouterr().out


# --------------------------------------------------------------------------------------------
# whole games, reward="win", snapshots, frozen-policy opponents, rgb_array
# --------------------------------------------------------------------------------------------

GAME = dict(num_teams=4, episode="game", target_score=30, max_ticks=200)


def test_win_reward_over_whole_games():
    multi_hand = 0
    for seed in range(5):
        env = NertzGymEnv(reward="win", learner_seat=1, **GAME)
        first, steps = play(env, seed=seed, action_seed=seed)
        rewards = [s[1] for s in steps]
        last = steps[-1][4]
        assert steps[-1][2] and not steps[-1][3]                   # a winner: terminated
        winner = last["winner"]
        assert rewards[-1] == (1.0 if winner == env.team else -1.0)
        assert all(r == 0.0 for r in rewards[:-1])
        # the hand ends: final_scores per finished hand, totals their sums, hands 0, 1, 2, ...
        finals = [s[4]["final_scores"] for s in steps if "final_scores" in s[4]]
        assert np.array_equal(np.sum(finals, axis=0), last["totals"])
        assert last["hand"] == len(finals) - 1 and first[1]["hand"] == 0
        assert max(last["totals"]) >= 30 and int(np.argmax(last["totals"])) == winner
        multi_hand += len(finals) > 1
        # the same game under reward="score": the rewards sum to the learner team's total
        env = NertzGymEnv(reward="score", learner_seat=1, **GAME)
        _, again = play(env, seed=seed, action_seed=seed)
        assert len(again) == len(steps) and np.array_equal(again[-1][4]["totals"], last["totals"])
        assert last["totals"].dtype == np.int64 and finals[0].dtype == np.int64
        assert sum(s[1] for s in again) == pytest.approx(last["totals"][env.team])
        # past the end nothing moves and the flags repeat
        assert env.step(0)[1:4] == (0.0, True, False)
    assert multi_hand > 0


def test_win_reward_needs_game_episodes():
    with pytest.raises(ValueError, match="episode"):
        NertzGymEnv(reward="win")
    with pytest.raises(ValueError, match="episode"):
        NertzGymEnv(reward="win", episode="hand")
    with pytest.raises(ValueError, match="episode"):
        NertzGymEnv(episode="match")
    env = NertzGymEnv(reward="win", episode="game", max_ticks=50)
    check_env(env, skip_render_check=True)


def snapshot_and_replay(env, restore, before=10, after=40, seed=5):
    rng = np.random.default_rng(1)
    obs, info = env.reset(seed=seed)
    for _ in range(before):
        obs, r, term, trunc, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
    snap = restore(env, None)
    actions = [int(x) for x in rng.integers(0, N_ACTIONS, after)]   # legal or not (penalize)
    first = [env.step(a) for a in actions]
    layout = env.table.layout()
    other = restore(env, snap)
    second = [other.step(a) for a in actions]
    assert same(first, second)
    assert other.table.layout() == layout


def by_get_state(env, snap):
    if snap is None:
        return env.get_state()
    env.set_state(snap)
    return env


def by_pickle(env, snap):
    import pickle
    return pickle.dumps(env) if snap is None else pickle.loads(snap)


@pytest.mark.parametrize("restore", [by_get_state, by_pickle], ids=["get_state", "pickle"])
def test_snapshot_round_trip(restore):
    # random-legal opponents draw from the env's np_random: it is part of the snapshot
    snapshot_and_replay(NertzGymEnv(num_teams=3, team_sizes=(2, 1, 1), max_ticks=200), restore)
    # whole games with hands ending inside the replayed stretch, "win" rewards
    snapshot_and_replay(NertzGymEnv(num_teams=4, episode="game", reward="win", max_ticks=8,
                                    target_score=3), restore, before=5, after=30)
    snapshot_and_replay(NertzGymEnv(num_teams=2, reward="relative",
                                    opponents={1: CountingAgent()}), restore)


def test_set_state_returns_the_position_and_checks_the_format():
    env = NertzGymEnv(num_teams=4)
    env.reset(seed=0)
    for _ in range(5):
        env.step(1)
    snap = env.get_state()
    obs, info = env.step(0)[0::4]
    obs2, info2 = env.set_state(snap)
    assert not np.array_equal(obs2, obs) or info2["tick"] != info["tick"]
    assert info2["tick"] == 5 and np.array_equal(obs2, env.engine.observe()[0, 0])
    with pytest.raises(ValueError, match="shape"):
        NertzGymEnv(num_teams=2).set_state(snap)
    with pytest.raises(ValueError, match="get_state"):
        env.set_state({"engine": {}})
    with pytest.raises(ValueError, match="get_state"):
        env.set_state({k: v for k, v in snap.items() if k != "env_np_random"})
    assert env.table.tick == 5                                # a failed set_state changes nothing


def test_frozen_policy_opponents():
    pytest.importorskip("sb3_contrib")
    from sb3_contrib import MaskablePPO
    from stable_baselines3 import PPO

    from nertz_env.envs.gym import FrozenPolicy

    train_env = NertzGymEnv(num_teams=2, max_ticks=60)
    model = MaskablePPO("MlpPolicy", train_env, n_steps=64, batch_size=64, n_epochs=1, seed=0,
                        device="cpu")
    model.learn(128)
    policy = FrozenPolicy(model)
    assert policy.masked
    # a MaskablePPO model given directly is wrapped; it only ever picks legal moves
    env = NertzGymEnv(num_teams=3, opponents=model, max_ticks=60)
    a = play(env, seed=3, action_seed=3)
    b = play(NertzGymEnv(num_teams=3, opponents=[policy, policy], max_ticks=60), seed=3,
             action_seed=3)
    assert same(a, b)                                       # deterministic predictions
    assert policy.illegal == 0 and env.engine.state.penalties[0, 1:].sum() == 0
    obs, info = env.reset(seed=0)
    mask = env.engine.masks[0, 1]
    act = policy.act(env.engine.observe()[0, 1], mask)
    assert mask[act]
    # an unmasked model (plain PPO) may predict illegal ids: on_illegal="wait" plays them
    # as Wait, counted, with one warning
    ppo = PPO("MlpPolicy", train_env, n_steps=64, batch_size=64, seed=0, device="cpu")
    unmasked = FrozenPolicy(ppo, on_illegal="wait")
    assert not unmasked.masked
    env = NertzGymEnv(num_teams=2, opponents={1: unmasked}, max_ticks=40)
    with pytest.warns(RuntimeWarning, match="illegal") as warned:
        play(env, seed=0)
    assert len([w for w in warned if "FrozenPolicy" in str(w.message)]) == 1
    assert unmasked.illegal > 1 and env.engine.state.penalties[0, 1] == 0
    # the default (on_illegal="raise"), also what a bare model given as opponent gets: a
    # ValueError, and the env's generator as before the step
    for opponents in ({1: FrozenPolicy(ppo)}, {1: ppo}):
        env = NertzGymEnv(num_teams=2, opponents=opponents, max_ticks=40)
        with pytest.raises(ValueError, match="on_illegal='wait'"):
            play(env, seed=0)
    with pytest.raises(ValueError, match="on_illegal"):
        FrozenPolicy(ppo, on_illegal="ignore")
    with pytest.raises(ValueError, match="predict"):
        FrozenPolicy(object())


def test_mapping_opponents():
    agent = CountingAgent()
    env = NertzGymEnv(num_teams=4, learner_seat=1, opponents={3: agent}, max_ticks=30)
    _, steps = play(env, seed=0)
    assert agent.calls == len(steps)
    # seats left out play random legal moves, drawn like the default opponents
    a = play(NertzGymEnv(num_teams=3, opponents={}, max_ticks=30), seed=2, action_seed=2)
    b = play(NertzGymEnv(num_teams=3, max_ticks=30), seed=2, action_seed=2)
    assert same(a, b)
    with pytest.raises(ValueError, match="opponent seats"):
        NertzGymEnv(num_teams=3, opponents={0: agent})          # the learner's own seat
    with pytest.raises(ValueError, match="opponents\\[2\\]"):
        NertzGymEnv(num_teams=3, opponents={2: 42})


@pytest.mark.parametrize("kw", [dict(num_teams=2), dict(num_teams=8),
                                dict(num_teams=3, episode="game", reward="win")],
                         ids=["2teams", "8teams", "game_win"])
def test_gymnasium_check_env_rgb_array(kw):
    from nertz_env.envs.render import picture_shape
    env = gymnasium.make("nertz_env/Nertz-v0", render_mode="rgb_array", max_ticks=100, **kw)
    check_env(env.unwrapped)
    env.reset(seed=0)
    img = env.render()
    assert img.shape == picture_shape(kw["num_teams"]) and img.dtype == np.uint8
    env.close()


def test_info_hand_scores_follow_the_table_every_step_of_a_game():
    """info["hand_scores"] is the current position's R29 scores on every step: in play (taken
    from the reward's computation), at a hand's end, and on a game's newly dealt hand."""
    env = NertzGymEnv(num_teams=2, episode="game", max_ticks=25, target_score=5)
    _, info = env.reset(seed=3)
    rng = np.random.default_rng(0)
    hands_seen = {info["hand"]}
    for _ in range(400):
        legal = np.flatnonzero(info["action_mask"])
        _, _, term, trunc, info = env.step(int(rng.choice(legal)))
        assert info["hand_scores"].tolist() == env.table.hand_scores()
        hands_seen.add(info["hand"])
        if term or trunc:
            break
    assert len(hands_seen) >= 2                          # a new hand was dealt on the way


# --------------------------------------------------------------------------------------------
# bad input: checked before anything moves
# --------------------------------------------------------------------------------------------


class RecordingOpponent:
    """Plays Wait, or `bad` once it is set (a broken agent); counts its calls."""

    def __init__(self):
        self.calls, self.bad = 0, None

    def act(self, observation, action_mask):
        self.calls += 1
        return 0 if self.bad is None else self.bad


@pytest.mark.parametrize("action, part", [(True, "True"), (1.9, "1.9"), ("flip", "flip"),
                                          (N_ACTIONS, "out of range"), (-1, "out of range"),
                                          (np.float64(2.0), "2.0"), (None, "None"),
                                          (np.array([1, 2]), "not an action id")])
def test_bad_actions_change_nothing(action, part):
    """A bad action id is a ValueError before the opponents draw from the env's generator:
    the snapshot (engine, both generators, bookkeeping) is unchanged, and the next step plays
    as if the failed call never happened."""
    env, twin = NertzGymEnv(num_teams=3), NertzGymEnv(num_teams=3)
    env.reset(seed=1)
    twin.reset(seed=1)
    before = env.get_state()
    with pytest.raises(ValueError, match="action") as err:
        env.step(action)
    assert part in str(err.value)
    assert same(env.get_state(), before)
    assert same(env.step(1), twin.step(1))


def test_illegal_move_raise_before_the_opponents_act():
    opponent = RecordingOpponent()
    for opponents in (None, [opponent, opponent]):
        env = NertzGymEnv(num_teams=3, illegal_move="raise", opponents=opponents)
        _, info = env.reset(seed=0)
        before, calls = env.get_state(), opponent.calls
        illegal = int(np.flatnonzero(~info["action_mask"])[0])
        with pytest.raises(ValueError, match=f"action: action id {illegal} .*R31"):
            env.step(illegal)
        assert same(env.get_state(), before) and opponent.calls == calls
        env.step(0)                                       # a legal move still plays


def test_an_illegal_opponent_move_follows_the_tables_r31():
    """An opponent's in-range but illegal id: under illegal_move="raise" a ValueError naming
    the opponents' row and seat (R31, checked once by the seat driver) and nothing changes;
    under "penalize" its team pays the penalty."""
    cheat = lambda obs, mask: int(np.flatnonzero(mask == 0)[0])      # noqa: E731
    env = NertzGymEnv(num_teams=2, illegal_move="raise", opponents=[cheat])
    env.reset(seed=0)
    before = env.get_state()
    with pytest.raises(ValueError, match=r"opponents\[0\] \(table 0, seat 1\).*R31"):
        env.step(0)
    assert same(env.get_state(), before)
    env = NertzGymEnv(num_teams=2, illegal_move="penalize", opponents=[cheat])
    env.reset(seed=0)
    env.step(0)
    assert env.engine.state.penalties[0].tolist() == [0, 1]


def test_a_broken_opponent_changes_nothing():
    """An opponent's bad id is a ValueError naming its seat; the env's generator (drawn by the
    random-legal seats that acted first) is restored."""
    broken = RecordingOpponent()
    env = NertzGymEnv(num_teams=3, opponents={2: broken})        # seat 1: random legal
    env.reset(seed=0)
    env.step(0)
    before = env.get_state()
    for bad in (1.5, N_ACTIONS, True, "wait"):
        broken.bad = bad
        with pytest.raises(ValueError, match="opponent at seat 2"):
            env.step(0)
        assert same(env.get_state(), before)
    broken.bad = None
    env.step(0)


@pytest.mark.parametrize("kwargs, part", [
    (dict(options={"layuot": LAYOUT}), "layuot"),
    (dict(options={"layout": LAYOUT, "hand": 1}), "'hand'"),
    (dict(options=["layout"]), "dict"),
    (dict(options={"layout": {"teams": 3}}), "teams"),
    (dict(seed=9, options={"layout": {"teams": 3}}), "teams"),
    (dict(seed=9, options={"layuot": LAYOUT}), "layuot"),
    (dict(seed=-1), "seed"),
    (dict(seed=1.5), "seed"),
    (dict(seed="7"), "seed"),
    (dict(seed=True), "seed"),
])
def test_bad_reset_arguments_change_nothing(kwargs, part):
    env = NertzGymEnv(num_teams=2)
    env.reset(seed=5)
    env.step(0)
    before = env.get_state()
    with pytest.raises(ValueError, match=part) as err:
        env.reset(**kwargs)
    if "options" in kwargs and isinstance(kwargs["options"], dict) and "layout" not in part:
        assert "layout" in str(err.value)                      # names the allowed keys
    assert same(env.get_state(), before)
    env.reset(seed=5, options={})                               # None and {} are fine
    env.reset(seed=np.int64(5), options=None)


class StubModel:
    """A model whose predict returns fixed ids (no training needed)."""

    def __init__(self, ids):
        self.ids = np.asarray(ids)

    def predict(self, observation, deterministic=True):
        return self.ids[:len(observation)], None


def test_frozen_policy_on_illegal_without_sb3():
    mask = np.zeros((2, N_ACTIONS), np.int8)
    mask[:, 0] = mask[:, 5] = 1
    obs = np.zeros((2, OBS_DIM), np.float32)
    from nertz_env.envs.opponents import FrozenPolicy
    strict = FrozenPolicy(StubModel([5, 7]))                       # 7 is illegal
    with pytest.raises(ValueError, match="7 \\(row 1\\)"):
        strict.act_batch(obs, mask)
    assert strict.illegal == 0
    assert strict.act_batch(obs, mask[:1].repeat(2, 0) | (np.arange(N_ACTIONS) == 7)).tolist() \
        == [5, 7]
    lenient = FrozenPolicy(StubModel([7, 400]), on_illegal="wait")
    with pytest.warns(RuntimeWarning, match="Wait"):
        assert lenient.act_batch(obs, mask).tolist() == [0, 0]
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")                              # warned once only
        assert lenient.act(obs[0], mask[0]) == 0
    assert lenient.illegal == 3
    with pytest.raises(ValueError, match="integer"):
        FrozenPolicy(StubModel([1.5, 2.0])).act_batch(obs, mask)
    with pytest.raises(ValueError, match="on_illegal"):
        FrozenPolicy(StubModel([0]), on_illegal=None)
    passing = FrozenPolicy(StubModel([7, 5]), on_illegal="pass")   # the caller applies R31
    assert passing.act_batch(obs, mask).tolist() == [7, 5] and passing.illegal == 0
