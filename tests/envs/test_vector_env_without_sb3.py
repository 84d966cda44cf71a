"""NertzVecEnv on a fresh install (the README's test command installs no stable-baselines3):
`step()` works without SB3 and plays the same trajectory as SB3's step_async + step_wait.

The child process hides stable_baselines3 (sys.modules entry None: import and find_spec both
fail), so this runs the same whether or not the [train] extra is installed here."""
from __future__ import annotations

import hashlib
import json
import subprocess
import sys

import numpy as np

from nertz_env.envs.vector import NertzVecEnv

STEPS = 60

PLAY = """
import hashlib, json, sys
import numpy as np
from nertz_env.envs.vector import NertzVecEnv

def play(step):
    env = NertzVecEnv(num_envs=6, seed=11, max_ticks=150, opponents="greedy")
    rng = np.random.default_rng(3)
    h = hashlib.sha256(env.reset().tobytes())
    for _ in range({steps}):
        masks = env.action_masks()
        keys = rng.random(masks.shape)
        keys[~masks] = -1.0
        obs, rew, done, infos = step(env, keys.argmax(axis=1))
        for part in (obs, rew, done):
            h.update(np.ascontiguousarray(part).tobytes())
        h.update(json.dumps([sorted(i) for i in infos]).encode())
    return h.hexdigest()
"""


def _trajectory_hash(hide_sb3: bool) -> dict:
    code = ("import sys\n" + ("sys.modules['stable_baselines3'] = None\n" if hide_sb3 else "")
            + PLAY.format(steps=STEPS)
            + "import nertz_env.envs.vector as v\n"
            + "print(json.dumps({'step': play(lambda e, a: e.step(a)),"
              " 'async': play(lambda e, a: (e.step_async(a), e.step_wait())[1]),"
              " 'sb3': 'stable_baselines3' in str(type(v.NertzVecEnv).__mro__)"
              " or any('stable_baselines3' in c.__module__ for c in v.NertzVecEnv.__mro__)}))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_step_works_without_stable_baselines3_and_equals_step_async_wait():
    plain = _trajectory_hash(hide_sb3=True)
    assert plain["sb3"] is False                        # the child really ran without SB3
    assert plain["step"] == plain["async"]
    # the same trajectory as this process's class (SB3's VecEnv when the extra is installed)
    env = NertzVecEnv(num_envs=6, seed=11, max_ticks=150, opponents="greedy")
    rng = np.random.default_rng(3)
    h = hashlib.sha256(env.reset().tobytes())
    for _ in range(STEPS):
        masks = env.action_masks()
        keys = rng.random(masks.shape)
        keys[~masks] = -1.0
        env.step_async(keys.argmax(axis=1))
        obs, rew, done, infos = env.step_wait()
        for part in (obs, rew, done):
            h.update(np.ascontiguousarray(part).tobytes())
        h.update(json.dumps([sorted(i) for i in infos]).encode())
    assert plain["step"] == h.hexdigest()


def test_the_plain_base_keeps_the_vecenv_attributes():
    env = NertzVecEnv(num_envs=3, seed=0)
    assert env.num_envs == 3 and env.unwrapped is env
    assert env.observation_space.shape == env.reset().shape[1:]
