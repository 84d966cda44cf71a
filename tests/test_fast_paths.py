"""The fast paths of issue 3 give the results of the checked, separate ones:
Engine.step_observe (one fused numba call, optionally trusting the caller's validated actions)
against step + hand_scores + observe; the PettingZoo env's common-case action path against
its general one; the vector envs' fused step-and-observe kernel against vec_step + observe;
and the default numba threading layer set at import."""
from __future__ import annotations

import copy
import os
import pickle
import subprocess
import sys

import numpy as np
import pytest
from gymnasium.utils.env_checker import data_equivalence

from nertz_env import Engine, RulesConfig, nertz_v0
from nertz_env.core.batch import vec_step_batch, vec_step_range
from nertz_env.envs.learner_batch import LearnerBatch

pytestmark = pytest.mark.filterwarnings("ignore:Observation is not a NumPy array:UserWarning")


def random_legal(rng, masks):
    """[B, S] uniformly random legal ids from masks [B, S, N]."""
    u = rng.random(masks.shape) * masks
    return u.argmax(axis=-1)


@pytest.mark.parametrize("parallel", [False, True])
def test_engine_step_observe_matches_step_scores_observe(parallel):
    cfg = RulesConfig(num_teams=3, max_ticks=40, illegal_move="penalize")
    engs = [Engine(cfg, n_tables=6, seed=11, parallel=parallel) for _ in range(3)]
    for e in engs:
        e.reset()
    rng = np.random.default_rng(0)
    for t in range(120):
        acts = random_legal(rng, engs[0].masks)
        if t % 7 == 0:
            acts[:, 0] = rng.integers(0, 322, size=6)       # illegal ids too (penalized)
        prio = np.argsort(rng.random(acts.shape), axis=1) if t % 3 == 0 else None
        ref_applied = engs[0].step(acts, prio).copy()
        st = engs[0].state
        summary = np.column_stack([st.status, st.tick, st.hand, ref_applied,
                                   engs[0].hand_scores()])
        ref = (summary, engs[0].observe().copy(), engs[0].masks)
        checked = [x.copy() for x in engs[1].step_observe(acts, prio)]
        engs[2].actions[:] = acts                          # the trusted path (validated outside)
        trusted = engs[2].step_observe(None, prio)
        for got in (checked, trusted):
            for a, b in zip(ref, got):
                np.testing.assert_array_equal(a, b)
        again = engs[2].step_observe(None)                 # obs and masks: fresh every call
        assert again[1] is not trusted[1] and again[2] is not trusted[2]
        assert not np.shares_memory(again[2], engs[2].masks)
        engs[0].step(acts)                                 # (keep the twins in step)
        engs[1].step_observe(acts)
        for e in engs:                                     # a given order is for one tick
            assert (e.priority[:, 0] == -1).all()
        for name, arr in engs[0].state._asdict().items():
            for other in engs[1:]:
                np.testing.assert_array_equal(arr, getattr(other.state, name), err_msg=name)
        np.testing.assert_array_equal(engs[0].masks, engs[2].masks)
        if engs[0].hand_over.all():
            for e in engs:
                e.reset(hands=[1] * 6)


def test_step_observe_keeps_the_checks():
    eng = Engine(RulesConfig(num_teams=2), n_tables=2, seed=0)       # illegal_move="raise"
    eng.reset()
    before = {k: v.copy() for k, v in eng.state._asdict().items()}
    illegal = int(np.flatnonzero(eng.masks[1, 0] == 0)[0])
    acts = np.zeros((2, eng.config.num_seats), np.int64)
    acts[1, 0] = illegal
    with pytest.raises(ValueError, match="illegal move at table 1"):
        eng.step_observe(acts)
    eng.actions[:] = acts
    with pytest.raises(ValueError, match="illegal move at table 1"):   # trusted ids: R31 still
        eng.step_observe()
    with pytest.raises(ValueError, match="out of range"):
        eng.step_observe(np.full((2, eng.config.num_seats), 322))
    with pytest.raises(ValueError, match="priority"):
        eng.step_observe(np.zeros((2, eng.config.num_seats), np.int64), priority=np.zeros((2, 2)))
    for k, v in eng.state._asdict().items():
        np.testing.assert_array_equal(v, before[k], err_msg=k)


def test_bound_kernels_survive_pickle_and_parallel_switch():
    eng = Engine(RulesConfig(num_teams=4, illegal_move="penalize"), n_tables=5, seed=3)
    eng.reset()
    for _ in range(3):                                     # the entry points are in use
        eng.step_observe(np.zeros((5, 4), np.int64))
    twin = pickle.loads(pickle.dumps(eng))
    assert twin._step_observe.args[0] is twin.state
    assert twin._step.call.__func__ is type(twin._step)._first_call   # entry point rebuilt
    twin.parallel = True                                   # rebinds the prange kernels
    acts = np.ones((5, 4), np.int64)
    a = [x.copy() for x in eng.step_observe(acts)]
    b = twin.step_observe(acts)
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("episode", ["hand", "game"])
def test_parallel_env_fast_action_path_matches_general_path(episode):
    kw = dict(num_teams=4, max_ticks=30, episode=episode, target_score=5)
    fast, general = nertz_v0.parallel_env(**kw), nertz_v0.parallel_env(**kw)
    obs_f, info_f = fast.reset(seed=4)
    obs_g, info_g = general.reset(seed=4)
    rng = np.random.default_rng(1)
    kept = None
    for t in range(300):
        assert data_equivalence((obs_f, info_f), (obs_g, info_g))
        if not fast.agents:
            obs_f, info_f = fast.reset()
            obs_g, info_g = general.reset()
            continue
        ids = {a: int(rng.choice(np.flatnonzero(obs_f[a]["action_mask"]))) for a in fast.agents}
        # fast: plain ints in agent order; general: numpy ids, reversed order, one left out
        general_acts = {a: np.int16(ids[a]) for a in reversed(general.agents)}
        if ids["player_2"] == 0:
            del general_acts["player_2"]                   # left out: waits (id 0)
        out_f = fast.step(ids)
        out_g = general.step(general_acts)
        assert data_equivalence(out_f, out_g)
        obs_f, _, _, _, info_f = out_f
        obs_g, info_g = out_g[0], out_g[4]
        # what the fast path returns is the engine's position, in fresh arrays
        eng = fast.engine
        if fast.agents and eng.state.status[0] == 0:
            view = eng.observe()[0]
            for a, seat in fast._seat.items():
                np.testing.assert_array_equal(obs_f[a]["observation"], view[seat])
                np.testing.assert_array_equal(obs_f[a]["action_mask"], eng.masks[0, seat])
                assert info_f[a]["action_mask"] is obs_f[a]["action_mask"]
                assert info_f[a]["applied"] == bool(eng.applied[0, seat])
        if kept is not None:                               # earlier returns are not rewritten
            np.testing.assert_array_equal(kept[0], kept[1])
        a0 = fast.possible_agents[0]
        if a0 in obs_f:
            kept = (obs_f[a0]["observation"], obs_f[a0]["observation"].copy())


@pytest.mark.parametrize("parallel", [False, True])
def test_fused_vector_step_matches_vec_step_then_observe(parallel):
    cfg = RulesConfig(num_teams=4, max_ticks=25, illegal_move="penalize")
    fused, ref = (LearnerBatch(40, cfg, 9, 1, "relative",
                               ["random", "greedy", "heuristic"]) for _ in range(2))
    for b in (fused, ref):
        b.engine.parallel = parallel
        b.reset()
    rng = np.random.default_rng(2)
    for _ in range(80):
        acts = random_legal(rng, ref.action_masks()[:, None])[:, 0]
        fused.set_actions(acts)
        ref.set_actions(acts)
        obs = fused.step()
        e = ref.engine
        args = (e.state, e.params, e.scratch, e.masks, e.actions, e.priority, e.applied,
                ref.actions, ref.learner_seat, ref.kinds, ref.knobs, ref.policy_rng,
                ref.reward_kind, ref.prev, ref.cur, ref.rewards, ref.terminated, ref.truncated,
                ref.final_scores, ref.final_obs)
        if parallel:
            vec_step_batch(*args)
        else:
            vec_step_range(*args, 0, ref.num_envs)
        np.testing.assert_array_equal(obs, ref.observe())
        for name in ("rewards", "terminated", "truncated", "final_scores", "final_obs",
                     "policy_rng"):
            np.testing.assert_array_equal(getattr(fused, name), getattr(ref, name), err_msg=name)
        np.testing.assert_array_equal(fused.engine.masks, ref.engine.masks)


def test_threading_layer_default_respects_the_user():
    code = ("import numba, nertz_env; print(numba.config.THREADING_LAYER)")
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_THREADING_LAYER"}
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                         check=True)
    assert out.stdout.split()[-1] == "workqueue"
    out = subprocess.run([sys.executable, "-c", code], env={**env, "NUMBA_THREADING_LAYER": "omp"},
                         capture_output=True, text=True, check=True)
    assert out.stdout.split()[-1] == "omp"


def test_parallel_env_recycles_only_unreferenced_arrays():
    """The ParallelEnv's observation and mask arrays: whatever a caller still references (an
    observation dict, one view, a mask, a slice of a view) is never written again; once every
    reference is gone the env may hand the same arrays back, written in full for the new
    position (checked against the engine's own observe() and masks)."""
    env = nertz_v0.parallel_env(num_teams=4)
    obs, _ = env.reset(seed=2)
    rng = np.random.default_rng(0)
    kept, seen, recycled = [], set(), 0
    for t in range(80):
        acts = {a: int(rng.choice(np.flatnonzero(obs[a]["action_mask"]))) for a in env.agents}
        obs, _, _, _, infos = env.step(acts)
        if not env.agents:
            obs, _ = env.reset()
            continue
        eng = env.engine
        view = eng.observe()[0]
        for a, seat in env._seat.items():
            np.testing.assert_array_equal(obs[a]["observation"], view[seat])
            np.testing.assert_array_equal(obs[a]["action_mask"], eng.masks[0, seat])
        base = obs["player_0"]["observation"].base
        recycled += id(base) in seen
        seen.add(id(base))
        held = (obs if t % 5 == 0 else obs["player_2"]["observation"] if t % 5 == 1 else
                infos["player_1"]["action_mask"] if t % 5 == 2 else
                obs["player_3"]["observation"][100:200] if t % 5 == 3 else None)
        if held is not None:
            kept.append((held, copy.deepcopy(held)))
        del base, view, held
        for held, snapshot in kept:
            assert data_equivalence(held, snapshot)
    assert recycled >= 10                               # dropped arrays did come back
