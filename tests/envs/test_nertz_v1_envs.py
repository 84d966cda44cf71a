"""The envs offer the v1 observation (PettingZoo's nertz_env.nertz_v1; `observation="v1"` of
NertzGymEnv, the vector envs and gymnasium's nertz_env/Nertz-v0 ids): v0's vector plus what
the seat remembers (core/observe_memory.py).

- v0 stays as it was: with the same seed and actions, a v1 env's observations start with the
  v0 env's bytes and every reward, end, info and final observation's prefix is the same
  (NertzGymEnv, NertzGymVectorEnv, NertzVecEnv, the ParallelEnv, over hand ends; the vector
  envs' v1 kernel shares vec_step_range's tick (core/batch.py vec_tick_table), and this holds
  the two kernels' outputs equal);
- the block is the memory's: equal, every step, to the block the test writes from a memory it
  keeps itself (init at each deal, update after each tick), so an env that skipped an update
  or a re-deal's init fails; a finished hand's final observation carries its block;
- spaces sized right (1019), ids/names versioned, a bad observation value one line;
- snapshots keep the memory: get_state / set_state continue with the same v1 observations;
- the self-play env too (every seat a row, final_obs replayed exactly).
"""
from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest

import nertz_env  # noqa: F401  (registers the ids)
from nertz_env import Engine, nertz_v0, nertz_v1
from nertz_env.core.memory import allocate_memory, init_memory, update_memory
from nertz_env.core.observe import OBS_DIM
from nertz_env.core.observe_memory import MEM_F, V1_OBS_DIM, observe_v1_rows, read_memory
from nertz_env.envs.gym import NertzGymEnv
from nertz_env.envs.gym_vector import NertzGymVectorEnv
from nertz_env.envs.registry import make
from nertz_env.envs.vector import NertzVecEnv

FLIPPY = "heuristic:style=river-builder"


def learner(mask, rng):
    """A fixed learner: mostly flips (the Stream turns over: memory to show), else random."""
    legal = np.flatnonzero(mask)
    return 1 if mask[1] and rng.random() < 0.7 else int(rng.choice(legal))


class Keeper:
    """The test's own memory of table e of an engine."""

    def __init__(self, engine):
        self.engine, self.mem = engine, allocate_memory(engine.config, engine.n_tables)
        init_memory(engine.state, self.mem)

    def tick(self):
        update_memory(self.engine.state, self.mem)

    def v1(self, rows_t, rows_s):
        return observe_v1_rows(self.engine.state, self.engine.config, self.mem, rows_t, rows_s,
                               scratch=self.engine.scratch)


def test_gym_v1_is_v0_plus_the_seats_memory():
    kw = dict(num_teams=3, max_ticks=150, opponents=FLIPPY, learner_seat=1)
    e0, e1 = NertzGymEnv(**kw), NertzGymEnv(observation="v1", **kw)
    assert e1.observation_space.shape == (V1_OBS_DIM,) and e0.observation_space.shape == (OBS_DIM,)
    (o0, i0), (o1, i1) = e0.reset(seed=4), e1.reset(seed=4)
    keep = Keeper(e1.engine)
    rng, known, ends = np.random.default_rng(0), 0, 0
    for _ in range(400):
        np.testing.assert_array_equal(o1[:OBS_DIM], o0)
        np.testing.assert_array_equal(o1, keep.v1([0], [1])[0])
        assert e1.observation_space.contains(o1)
        known += int(read_memory(o1).known_stock)
        a = learner(i0["action_mask"], rng)
        o0, r0, te0, tr0, i0 = e0.step(a)
        o1, r1, te1, tr1, i1 = e1.step(a)
        keep.tick()
        assert (r0, te0, tr0) == (r1, te1, tr1)
        assert i0.keys() == i1.keys() and all(np.array_equal(i0[k], i1[k]) for k in i0)
        if te0 or tr0:
            ends += 1
            o0, i0 = e0.reset(seed=ends)
            o1, i1 = e1.reset(seed=ends)
            keep = Keeper(e1.engine)
            assert read_memory(o1).known_stock == 0          # a fresh deal: nothing seen yet
    assert known > 0 and ends > 0


def test_gym_v1_snapshots_keep_the_memory():
    env = NertzGymEnv(num_teams=2, observation="v1", opponents=FLIPPY)
    obs, info = env.reset(seed=3)
    rng = np.random.default_rng(1)
    for _ in range(60):
        obs, *_, info = env.step(learner(info["action_mask"], rng))
    snap = env.get_state()
    moves = [learner(info["action_mask"], rng)]
    after = [env.step(moves[0])[0]]
    assert read_memory(after[0]).known_stock > 0
    again, _ = env.set_state(snap)
    np.testing.assert_array_equal(again, obs)
    np.testing.assert_array_equal(env.step(moves[0])[0], after[0])


def test_a_game_remembers_each_hand_afresh():
    par = nertz_v1.parallel_env(num_teams=2, max_ticks=40, episode="game", target_score=500)
    obs, _ = par.reset(seed=5)
    rng, hands = np.random.default_rng(2), set()
    keep = Keeper(par.engine)
    while par.agents and len(hands) < 3:
        acts = {a: learner(obs[a]["action_mask"], rng) for a in par.agents}
        obs, _, _, _, infos = par.step(acts)
        keep.tick()
        hand = infos["player_0"]["hand"]
        if hand not in hands:
            hands.add(hand)
        got = np.stack([obs[a]["observation"] for a in par.possible_agents])
        np.testing.assert_array_equal(got, keep.v1([0, 0], [0, 1]))
    assert len(hands) >= 2


def test_pettingzoo_v1_is_v0_plus_the_memory_for_every_agent():
    kw = dict(num_teams=3, team_sizes=(2, 1, 1), max_ticks=120)
    p0, p1 = nertz_v0.parallel_env(**kw), nertz_v1.parallel_env(**kw)
    assert p1.observation_space("player_0")["observation"].shape == (V1_OBS_DIM,)
    assert str(p1) == p1.metadata["name"] == "nertz_v1" and str(p0) == "nertz_v0"
    (o0, f0), (o1, f1) = p0.reset(seed=8), p1.reset(seed=8)
    keep = Keeper(p1.engine)
    rng = np.random.default_rng(3)
    while p0.agents:
        for a in p0.agents:
            np.testing.assert_array_equal(o1[a]["observation"][:OBS_DIM], o0[a]["observation"])
            np.testing.assert_array_equal(o1[a]["action_mask"], o0[a]["action_mask"])
            assert p1.observation_space(a).contains(o1[a])
        seats = [p1._seat[a] for a in p1.agents]
        got = np.stack([o1[a]["observation"] for a in p1.agents])
        np.testing.assert_array_equal(got, keep.v1(np.zeros(len(seats), np.int64), seats))
        assert f0 == f1
        acts = {a: learner(o0[a]["action_mask"], rng) for a in p0.agents}
        o0, r0, te0, tr0, f0 = p0.step(acts)
        o1, r1, te1, tr1, f1 = p1.step(acts)
        keep.tick()
        assert (r0, te0, tr0) == (r1, te1, tr1)
    aec = make("nertz/nertz-v1", num_teams=2)
    aec.reset(seed=1)
    assert aec.observe("player_0")["observation"].shape == (V1_OBS_DIM,)


@pytest.mark.parametrize("kind", ["gym", "sb3"])
def test_vector_v1_is_v0_plus_the_memory_and_final_obs_too(kind):
    n, kw = 6, dict(num_teams=2, max_ticks=60, opponents="greedy", seed=11)
    if kind == "gym":
        v0, v1 = NertzGymVectorEnv(n, **kw), NertzGymVectorEnv(n, observation="v1", **kw)
        assert v1.single_observation_space.shape == (V1_OBS_DIM,)
        assert v1.observation_space.shape == (n, V1_OBS_DIM)
        o0, _ = v0.reset(seed=11)
        o1, _ = v1.reset(seed=11)
    else:
        pytest.importorskip("stable_baselines3")
        v0, v1 = NertzVecEnv(n, **kw), NertzVecEnv(n, observation="v1", **kw)
        assert v1.observation_space.shape == (V1_OBS_DIM,)
        o0, o1 = v0.reset(), v1.reset()
    keep = Keeper(v1.engine)
    rng = np.random.default_rng(4)
    rows = (np.arange(n), np.zeros(n, np.int64))
    shadow = Engine(v1.config, n_tables=n)       # replays a step's tick without the re-deal
    finals = 0
    for _ in range(150):
        np.testing.assert_array_equal(o1[:, :OBS_DIM], o0)
        np.testing.assert_array_equal(o1, keep.v1(*rows))
        masks = v0.action_masks()
        acts = np.array([learner(m, rng) for m in masks])
        for dst, src in zip(shadow.state, v1.engine.state):
            dst[...] = src
        shadow.refresh_masks()
        r0, r1 = v0.step(acts), v1.step(acts)
        o0, o1 = r0[0], r1[0]
        for x, y in zip(r0[1:-1], r1[1:-1]):
            np.testing.assert_array_equal(x, y)
        done = np.flatnonzero(r1[2] | r1[3]) if kind == "gym" else np.flatnonzero(r1[2])
        if done.size:                      # the finished hands' positions, and their memory
            shadow.step(v1.engine.actions.copy(), checked=True)
            update_memory(shadow.state, keep.mem)
            want = observe_v1_rows(shadow.state, v1.config, keep.mem, done, rows[1][done],
                                   scratch=shadow.scratch)
        for j, e in enumerate(done):       # the finished hand's observation: v0's + its block
            f0 = r0[-1]["final_obs"][e] if kind == "gym" else r0[-1][e]["terminal_observation"]
            f1 = r1[-1]["final_obs"][e] if kind == "gym" else r1[-1][e]["terminal_observation"]
            np.testing.assert_array_equal(f1[:OBS_DIM], f0)
            np.testing.assert_array_equal(f1, want[j])
            finals += 1
        # the test's memory: a finished table was re-dealt inside the step (remembered afresh)
        update_memory(v1.engine.state, keep.mem)
    assert finals > 0


def test_ids_names_and_bad_values():
    e = gym.make("nertz_env/Nertz-v0", num_teams=2, observation="v1")
    assert e.observation_space.shape == (V1_OBS_DIM,)
    assert e.reset(seed=0)[0].shape == (V1_OBS_DIM,)
    v = gym.make_vec("nertz_env/Nertz-v0", num_envs=3, num_teams=2, observation="v1")
    assert v.reset(seed=0)[0].shape == (3, V1_OBS_DIM)
    assert gym.make("nertz_env/Nertz-v0").observation_space.shape == (OBS_DIM,)
    assert nertz_v1.ENV_ID == "nertz/nertz-v1" and MEM_F == V1_OBS_DIM - OBS_DIM
    for build in (lambda: NertzGymEnv(observation="v2"),
                  lambda: NertzGymVectorEnv(2, observation=1),
                  lambda: nertz_v0.parallel_env(observation="v2")):
        with pytest.raises(ValueError, match=r"^observation=.*: one of") as err:
            build()
        assert "\n" not in str(err.value)
    with pytest.raises(ValueError, match="nertz_v1's observation is 'v1'"):
        nertz_v1.parallel_env(observation="flat")
    # v0 builds no memory: nothing is kept where nothing reads it
    assert NertzGymEnv()._memory is None and NertzGymVectorEnv(2).batch.memory is None
    assert nertz_v0.parallel_env()._memory is None


def test_the_v1_fingerprint_sees_its_block(monkeypatch):
    """tests/envs/test_version_history.py's v1 entry: its fingerprint reads the block's
    numbers and nertz_v1's observations (negative control: either changed, it changes)."""
    from test_version_history import fingerprint

    from nertz_env.core import observe_memory
    from nertz_env.envs import pettingzoo as pz
    base = fingerprint("v1")
    assert base != fingerprint("v0")
    monkeypatch.setattr(observe_memory, "MB_OPP", observe_memory.MB_OPP + 1)
    assert fingerprint("v1") != base
    monkeypatch.undo()
    real_step = pz.NertzParallelEnv.step

    def shifted(self, actions):
        obs, *rest = real_step(self, actions)
        for o in obs.values():
            o["observation"][OBS_DIM + 5] += 0.5               # one memory value moved
        return (obs, *rest)
    monkeypatch.setattr(pz.NertzParallelEnv, "step", shifted)
    assert fingerprint("v1") != base


def test_selfplay_v1_is_v0_plus_every_seats_memory():
    from nertz_env.envs.selfplay import NertzSelfPlayGymVectorEnv
    kw = dict(num_teams=2, max_ticks=50, seed=2)
    s0 = NertzSelfPlayGymVectorEnv(3, **kw)
    s1 = NertzSelfPlayGymVectorEnv(3, observation="v1", **kw)
    assert s1.single_observation_space.shape == (V1_OBS_DIM,)
    o0, _ = s0.reset(seed=2)
    o1, _ = s1.reset(seed=2)
    keep = Keeper(s1.engine)
    rows = (s1.row_table, s1.row_seat)
    shadow = Engine(s1.config, n_tables=3)
    rng, finals = np.random.default_rng(5), 0
    for _ in range(120):
        np.testing.assert_array_equal(o1[:, :OBS_DIM], o0)
        np.testing.assert_array_equal(o1, keep.v1(*rows))
        acts = np.array([learner(m, rng) for m in s0.action_masks()])
        for dst, src in zip(shadow.state, s1.engine.state):
            dst[...] = src
        shadow.refresh_masks()
        r0, r1 = s0.step(acts), s1.step(acts)
        o0, o1 = r0[0], r1[0]
        for x, y in zip(r0[1:-1], r1[1:-1]):
            np.testing.assert_array_equal(x, y)
        done = np.flatnonzero(r1[2] | r1[3])
        if done.size:
            shadow.step(s1.engine.actions.copy(), checked=True)
            update_memory(shadow.state, keep.mem)
            want = observe_v1_rows(shadow.state, s1.config, keep.mem, rows[0][done],
                                   rows[1][done], scratch=shadow.scratch)
            for j, r in enumerate(done):
                np.testing.assert_array_equal(r1[-1]["final_obs"][r][:OBS_DIM],
                                              r0[-1]["final_obs"][r])
                np.testing.assert_array_equal(r1[-1]["final_obs"][r], want[j])
                finals += 1
        update_memory(s1.engine.state, keep.mem)
    assert finals > 0
