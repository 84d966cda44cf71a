"""Every env's observation and action spaces, built here only (single seat, PettingZoo agent,
vector batches, the PettingZoo state), and a stand-in env that has only the learner's: enough
to build or save an SB3 model (a shipped model's shape, a benchmark's untrained network, a
test's fixture) without dealing a table or compiling a kernel. Imports no env."""
from __future__ import annotations

import gymnasium as gym
import numpy as np

from ..actions import N_ACTIONS
from ..core.observe import OBS_DIM
from ..core.observe_memory import V1_OBS_DIM

# the observation versions every env offers (`observation=`): v0 the flat vector of
# core/observe.py; v1 the same with what the seat remembers appended (core/observe_memory.py)
OBSERVATION_DIMS = {"v0": OBS_DIM, "v1": V1_OBS_DIM}


def check_observation(observation, where: str = "observation") -> str:
    """An env's observation version: "v0" or "v1", else a one-line ValueError."""
    if not (isinstance(observation, str) and observation in OBSERVATION_DIMS):
        raise ValueError(f"{where}={observation!r}: one of {tuple(OBSERVATION_DIMS)} (v1: v0's "
                         f"vector plus what the seat remembers, core/observe_memory.py)")
    return observation


def observation_space(observation: str = "v0") -> gym.spaces.Box:
    """One seat's observation vector (v0: nertz_env/core/observe.py; v1: with the memory block
    of core/observe_memory.py), as every env declares it."""
    return gym.spaces.Box(-1.0, 1.0, (OBSERVATION_DIMS[observation],), np.float32)


def action_space() -> gym.spaces.Discrete:
    """The action ids of nertz_env/actions.py."""
    return gym.spaces.Discrete(N_ACTIONS)


def agent_observation_space(observation: str = "v0") -> gym.spaces.Dict:
    """A PettingZoo agent's observation: {"observation": observation_space(observation),
    "action_mask": its legal moves as int8 0/1}."""
    return gym.spaces.Dict({
        "observation": observation_space(observation),
        "action_mask": gym.spaces.Box(0, 1, (N_ACTIONS,), np.int8),
    })


def vector_spaces(num_envs: int, observation: str = "v0") -> tuple:
    """(single observation, single action, batched observation, batched action) spaces of a
    Gymnasium VectorEnv with num_envs rows."""
    from gymnasium.vector.utils import batch_space
    obs, act = observation_space(observation), action_space()
    return obs, act, batch_space(obs, num_envs), batch_space(act, num_envs)


_BIG = float(np.finfo(np.float32).max)


def state_space(state, fields, max_hands: int) -> gym.spaces.Box:
    """Bounds of the PettingZoo env's state(): each of table 0's arrays `fields` of `state`
    (a NertzState) at its dtype's range, then the game's totals (unbounded-ish) and Nertz
    calls (0..max_hands) per team."""
    lows, highs = [], []
    for name in fields:
        arr = getattr(state, name)[0]
        info = np.iinfo(arr.dtype)
        lows.append(np.full(arr.size, info.min, np.float32))
        highs.append(np.full(arr.size, info.max, np.float32))
    T = state.callers.shape[1]
    lows += [np.full(T, -_BIG, np.float32), np.zeros(T, np.float32)]
    highs += [np.full(T, _BIG, np.float32), np.full(T, max_hands, np.float32)]
    return gym.spaces.Box(np.concatenate(lows), np.concatenate(highs), dtype=np.float32)


class SpacesOnlyEnv(gym.Env):
    """The learner's spaces and nothing else: every reset is a zero observation, every step
    ends the episode; every action is allowed by action_masks()."""

    def __init__(self):
        self.observation_space = observation_space()
        self.action_space = action_space()

    def reset(self, seed=None, options=None):
        super().reset(seed=seed)
        return np.zeros(OBS_DIM, np.float32), {}

    def step(self, action):
        return np.zeros(OBS_DIM, np.float32), 0.0, True, False, {}

    def action_masks(self):
        return np.ones(N_ACTIONS, bool)
