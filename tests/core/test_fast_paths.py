"""The fast paths give the results of the checked, separate ones:
Engine.step_observe (one fused numba call, optionally trusting the caller's validated actions)
against step + hand_scores + observe; the PettingZoo env's common-case action path against
its general one, and its fresh output arrays; the vector envs' fused step-and-observe kernel
against vec_step + observe; no reference-count tricks nor private numba API; numba's
threading layer left alone at import."""
from __future__ import annotations

import ast
import copy
import os
import pickle
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from gymnasium.utils.env_checker import data_equivalence

import nertz_env
from nertz_env import Engine, RulesConfig, nertz_v0
from nertz_env.core.batch import vec_step_batch, vec_step_range
from nertz_env.envs.learner_batch import LearnerBatch
from nertz_env.envs.seats import SeatDriver

pytestmark = pytest.mark.filterwarnings("ignore:Observation is not a NumPy array:UserWarning")


def rows_of(out):
    """Copies of a step_observe's summary rows, obs and masks."""
    summary, obs, masks = out
    return [summary.rows.copy(), obs.copy(), masks.copy()]


def random_legal(rng, masks):
    """[B, S] uniformly random legal ids from masks [B, S, N]."""
    u = rng.random(masks.shape) * masks
    return u.argmax(axis=-1)


@pytest.mark.parametrize("parallel", [False, True])
def test_engine_step_observe_matches_step_scores_observe(parallel):
    cfg = RulesConfig(num_teams=3, max_ticks=40, illegal_move="penalize")
    engs = [Engine(cfg, n_tables=6, seed=11, parallel=parallel) for _ in range(4)]
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
        checked = rows_of(engs[1].step_observe(acts, prio))
        engs[2].actions[:] = acts                          # the older form: ids already written
        older = rows_of(engs[2].step_observe(None, prio))
        told = rows_of(engs[3].step_observe(acts.astype(np.int16), prio, checked=True))
        for got in (checked, older, told):
            for a, b in zip(ref, got):
                np.testing.assert_array_equal(a, b)
        again = engs[2].step_observe(None)                 # obs and masks: fresh every call
        assert again.obs is not older[1] and again.masks is not older[2]
        assert not np.shares_memory(again.masks, engs[2].masks)
        named = engs[3].step_observe(acts, checked=True).summary    # the named view
        st3 = engs[3].state
        for got, want in ((named.status, st3.status), (named.tick, st3.tick),
                          (named.hand, st3.hand), (named.applied, engs[3].applied),
                          (named.scores, engs[3].hand_scores())):
            np.testing.assert_array_equal(got, want)
        row = named.table(5)
        assert (row.status, row.tick, row.hand) == (st3.status[5], st3.tick[5], st3.hand[5])
        assert row.applied == engs[3].applied[5].tolist()
        assert row.scores == engs[3].hand_scores()[5].tolist()
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
    # checked=True: the caller did every check (SeatDriver.check under SeatDriver.policy, an
    # env's per-agent check), so R31 runs once, there; the engine then checks nothing again
    with pytest.raises(ValueError, match=r"ids\[1\] \(table 1, seat 0\).*R31"):
        SeatDriver.check(acts[:, 0], eng.masks[:, 0].astype(bool), np.arange(2), np.zeros(2, int),
                         "ids", SeatDriver.policy(eng.config))
    with pytest.raises(ValueError, match="out of range"):
        eng.step_observe(np.full((2, eng.config.num_seats), 322))
    with pytest.raises(ValueError, match="priority"):
        eng.step_observe(np.zeros((2, eng.config.num_seats), np.int64), priority=np.zeros((2, 2)))
    for k, v in eng.state._asdict().items():
        np.testing.assert_array_equal(v, before[k], err_msg=k)


def test_engines_survive_pickle_and_parallel_switch():
    """An engine that has stepped pickles, and the copy (serial or switched to the prange
    kernels) plays on exactly like the original."""
    eng = Engine(RulesConfig(num_teams=4, illegal_move="penalize"), n_tables=5, seed=3)
    eng.reset()
    for _ in range(3):
        eng.step_observe(np.zeros((5, 4), np.int64))
    twin = pickle.loads(pickle.dumps(eng))
    switched = pickle.loads(pickle.dumps(eng))
    switched.parallel = True
    rng = np.random.default_rng(0)
    for _ in range(20):
        acts = random_legal(rng, eng.masks)
        want = rows_of(eng.step_observe(acts))
        for other in (twin, switched):
            for x, y in zip(want, rows_of(other.step_observe(acts))):
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


def test_importing_the_package_leaves_numbas_threading_layer_alone():
    code = ("import numba; before = numba.config.THREADING_LAYER; import nertz_env; "
            "print(before, numba.config.THREADING_LAYER)")
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_THREADING_LAYER"}
    for layer in (None, "omp"):
        run_env = env if layer is None else {**env, "NUMBA_THREADING_LAYER": layer}
        out = subprocess.run([sys.executable, "-c", code], env=run_env, capture_output=True,
                             text=True, check=True)
        before, after = out.stdout.split()[-2:]
        assert before == after == (layer or "default")


@pytest.mark.parametrize("episode", ["hand", "game"])
def test_parallel_env_never_rewrites_what_it_returned(episode):
    """Every observation and mask the ParallelEnv returns is a fresh array: what a caller
    holds (a whole dict, one observation, one mask, a slice) keeps its values however many
    steps, hand ends, new hands of a game and resets follow, and no two returns (nor a return
    and the engine's own buffers) share memory."""
    env = nertz_v0.parallel_env(num_teams=3, max_ticks=12, episode=episode, target_score=3)
    obs, _ = env.reset(seed=2)
    rng = np.random.default_rng(0)
    kept, previous = [], None
    for t in range(120):
        if not env.agents:
            obs, _ = env.reset()
        else:
            acts = {a: int(rng.choice(np.flatnonzero(obs[a]["action_mask"]))) for a in env.agents}
            obs = env.step(acts)[0]
        arrays = [x for o in obs.values() for x in o.values()]
        eng = env.engine
        for x in arrays:
            assert not np.shares_memory(x, eng.masks) and not np.shares_memory(x, eng.observe())
            if previous is not None:
                assert not any(np.shares_memory(x, y) for y in previous)
        previous = arrays
        held = (obs if t % 4 == 0 else obs["player_2"]["observation"] if t % 4 == 1 else
                obs["player_1"]["action_mask"] if t % 4 == 2 else
                obs["player_0"]["observation"][100:200])
        kept.append((held, copy.deepcopy(held)))
        for held, snapshot in kept:
            assert data_equivalence(held, snapshot)


def test_no_refcount_recycling_nor_private_numba_api():
    """Nothing in the package depends on CPython reference counts (getrefcount,
    ctypes views over buffers) or on numba's private dispatcher API (overloads, typeof_pyval,
    entry_point)."""
    banned_attrs = {"overloads", "typeof_pyval", "entry_point", "getrefcount", "ctypeslib"}
    root = Path(nertz_env.__file__).parent
    found = []
    for path in sorted(root.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            where = f"{path.relative_to(root)}:{getattr(node, 'lineno', 0)}"
            if isinstance(node, ast.Attribute) and node.attr in banned_attrs:
                found.append(f"{where} .{node.attr}")
            elif isinstance(node, ast.Name) and node.id in banned_attrs:
                found.append(f"{where} {node.id}")
            elif isinstance(node, ast.Constant) and node.value in banned_attrs:
                found.append(f"{where} {node.value!r}")
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                names = [a.name for a in node.names] + [getattr(node, "module", None) or ""]
                if any(n == "ctypes" or n.startswith("ctypes.") or n == "getrefcount"
                       for n in names):
                    found.append(f"{where} import {names}")
    assert not found, found


def test_the_summary_columns_are_read_in_one_place():
    """SUM_* columns are spelled only in core/observe.py (StepSummary reads them by name)."""
    root = Path(__file__).resolve().parents[2]
    spelled = [str(p.relative_to(root)) for d in ("nertz_env", "agents", "benchmarks", "train")
               for p in (root / d).rglob("*.py")
               if "SUM_" in p.read_text() and p.name != "observe.py"]
    assert spelled == []
