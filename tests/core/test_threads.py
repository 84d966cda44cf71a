"""Two Python threads stepping two large batches at once (numba's prange kernels, which run
without the GIL): the results are those of the same runs done one after the other. Again in a
fresh process under NUMBA_THREADING_LAYER=workqueue, the layer that aborts the process when
two threads enter it at once unless the engine serializes its parallel launches
(engine.launch_parallel)."""
from __future__ import annotations

import os
import subprocess
import sys
import threading
from pathlib import Path

import numpy as np

from nertz_env import Engine, RulesConfig
from nertz_env.actions import N_ACTIONS
from nertz_env.engine import PARALLEL_MIN_TABLES

ROOT = Path(__file__).resolve().parents[2]
TICKS = 300
CONFIG = RulesConfig(num_teams=2)


def _choose(rng_keys, masks):
    """A legal id per row of masks [..., N_ACTIONS]: the legal id of highest key."""
    return np.argmax(masks * rng_keys, axis=-1)


def run_engine(seed: int, start: threading.Barrier | None = None) -> list:
    """TICKS ticks of a parallel Engine (step and step_observe alternately, finished tables
    re-dealt); the final state, observations and what every tick applied."""
    eng = Engine(CONFIG, PARALLEL_MIN_TABLES, seed=seed)
    assert eng.parallel
    keys = np.random.default_rng(seed).permutation(N_ACTIONS) + 1
    eng.reset()
    applied, obs = [], None
    if start is not None:
        start.wait()
    for t in range(TICKS):
        if eng.hand_over.all():
            eng.reset()
        actions = _choose(keys, eng.masks)
        if t % 2:
            summary, obs, _ = eng.step_observe(actions)
            applied.append(summary.rows.copy())
        else:
            applied.append(eng.step(actions).copy())
    return [*(a.copy() for a in eng.state), obs, eng.observe().copy(), *applied]


def run_vector_env(seed: int, start: threading.Barrier | None = None) -> list:
    """TICKS steps of a NertzGymVectorEnv (core opponents, learner picks by key)."""
    from nertz_env.envs.gym_vector import NertzGymVectorEnv

    env = NertzGymVectorEnv(num_envs=PARALLEL_MIN_TABLES, seed=seed, num_teams=2)
    assert env.engine.parallel
    keys = np.random.default_rng(seed).permutation(N_ACTIONS) + 1
    obs, _ = env.reset(seed=seed)
    out = []
    if start is not None:
        start.wait()
    for _ in range(TICKS):
        obs, rewards, term, trunc, _ = env.step(_choose(keys, env.action_masks()))
        out += [rewards, term, trunc]
    return [obs, *out]


def in_two_threads(run, seeds) -> list:
    start = threading.Barrier(len(seeds))
    results, errors = [None] * len(seeds), []

    def work(i):
        try:
            results[i] = run(seeds[i], start)
        except BaseException as err:       # re-raised in the main thread
            errors.append(err)
            start.abort()

    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(seeds))]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    if errors:
        raise errors[0]
    return results


def _same(a: list, b: list) -> bool:
    return len(a) == len(b) and all(np.array_equal(x, y) for x, y in zip(a, b))


def check_threads_match_sequential() -> str:
    """Both workloads, in two threads and sequentially; AssertionError on any difference.
    Returns numba's threading layer."""
    import numba

    for run in (run_engine, run_vector_env):
        seeds = (11, 12)
        together = in_two_threads(run, seeds)
        for seed, got in zip(seeds, together):
            assert _same(got, run(seed)), f"{run.__name__}(seed={seed}) differs in a thread"
    return numba.threading_layer()


def test_two_threads_match_sequential_runs():
    check_threads_match_sequential()


def test_two_threads_under_workqueue_layer():
    """A fresh process (the layer is fixed at numba's first parallel launch)."""
    path = os.pathsep.join(filter(None, [str(ROOT), os.environ.get("PYTHONPATH")]))
    env = dict(os.environ, NUMBA_THREADING_LAYER="workqueue", PYTHONPATH=path)
    out = subprocess.run([sys.executable, __file__], env=env, cwd=ROOT, capture_output=True,
                         text=True, timeout=900)
    assert out.returncode == 0, (f"exit status {out.returncode}\n" + out.stdout[-2000:]
                                 + out.stderr[-3000:])
    assert out.stdout.split()[-1] == "workqueue", out.stdout[-2000:]


if __name__ == "__main__":                  # the workqueue test's child process
    print(check_threads_match_sequential())
