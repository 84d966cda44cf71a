"""The AEC form of the PettingZoo env and the entry-point functions `nertz_env.nertz_v0`
re-exports (PettingZoo's module style: `env`, `raw_env`, `parallel_env`).

The AEC form checks each agent's action at that agent's turn, with the ParallelEnv's check
(`NertzParallelEnv.check_action`): a bad action is the same ValueError as in every other env
and nothing is recorded. (PettingZoo's AssertOutOfBoundsWrapper is not used: it would answer
an out-of-range id with an AssertionError before that check.)

This module lives under `envs/` so that `envs/registry.py` can name these functions without
importing `nertz_v0`, which sits above `envs` (imports run one way: nertz_v0 -> envs).
"""
from __future__ import annotations

from pettingzoo.utils import wrappers
from pettingzoo.utils.conversions import parallel_to_aec_wrapper

from .pettingzoo import NertzParallelEnv


class NertzAECEnv(parallel_to_aec_wrapper):
    """PettingZoo's parallel-to-AEC conversion of NertzParallelEnv, checking each action when
    its agent steps (not when the last agent of the tick does): a ValueError, nothing stored."""

    def step(self, action):
        if not hasattr(self, "_actions"):
            raise ValueError("step() before reset(): call reset() first")
        if not self.agents:
            raise ValueError("step() after every agent is done: call reset() first")
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            if action is not None:
                raise ValueError(f"{agent}: the agent is done (terminated or truncated); "
                                 f"step(None) removes it")
        elif action is not None:
            action = self.env.check_action(agent, action)
        super().step(action)


def parallel_env(**kwargs) -> NertzParallelEnv:
    """The ParallelEnv: every agent acts every step (one step = one tick)."""
    return NertzParallelEnv(**kwargs)


def raw_env(**kwargs) -> NertzAECEnv:
    """The AEC form (PettingZoo's parallel-to-AEC conversion), without wrappers."""
    return NertzAECEnv(parallel_env(**kwargs))


def env(**kwargs):
    """The AEC form with PettingZoo's OrderEnforcingWrapper (reset before step/observe)."""
    return wrappers.OrderEnforcingWrapper(raw_env(**kwargs))


# nertz_v1's entry points (nertz_env/nertz_v1.py re-exports them): the same env with the v1
# observation (v0's vector plus what each seat remembers, core/observe_memory.py)
def _v1(kwargs: dict) -> dict:
    if "observation" in kwargs and kwargs["observation"] != "v1":
        raise ValueError(f"observation={kwargs['observation']!r}: nertz_v1's observation is "
                         f"'v1' (nertz_v0 gives v0's)")
    return {**kwargs, "observation": "v1"}


def parallel_env_v1(**kwargs) -> NertzParallelEnv:
    """nertz_v1's ParallelEnv."""
    return parallel_env(**_v1(kwargs))


def raw_env_v1(**kwargs) -> NertzAECEnv:
    """nertz_v1's AEC form without wrappers."""
    return raw_env(**_v1(kwargs))


def env_v1(**kwargs):
    """nertz_v1's AEC form with the OrderEnforcingWrapper."""
    return env(**_v1(kwargs))
