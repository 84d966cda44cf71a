"""The learner's spaces and a stand-in env that has only them: enough to build or save an SB3
model (a shipped model's shape, a benchmark's untrained network, a test's fixture) without
dealing a table or compiling a kernel."""
from __future__ import annotations

import gymnasium as gym
import numpy as np

from ..actions import N_ACTIONS
from ..core.observe import OBS_DIM


def observation_space() -> gym.spaces.Box:
    """One seat's observation vector (nertz_env/core/observe.py), as every env declares it."""
    return gym.spaces.Box(-1.0, 1.0, (OBS_DIM,), np.float32)


def action_space() -> gym.spaces.Discrete:
    """The action ids of nertz_env/actions.py."""
    return gym.spaces.Discrete(N_ACTIONS)


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
