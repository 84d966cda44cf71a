"""nertz_v0: the PettingZoo entry points, in PettingZoo's module style.

    from nertz_env import nertz_v0
    env = nertz_v0.env(num_teams=4)              # AEC, with PettingZoo's order enforcing
    par = nertz_v0.parallel_env(num_teams=4)     # ParallelEnv (NertzParallelEnv)
    raw = nertz_v0.raw_env(num_teams=4)          # AEC without wrappers

The AEC form checks each agent's action at that agent's turn, with the ParallelEnv's check
(`NertzParallelEnv.check_action`): a bad action is the same ValueError as in every other env
and nothing is recorded. (PettingZoo's AssertOutOfBoundsWrapper is not used: it would answer
an out-of-range id with an AssertionError before that check.)

Importing this module also registers "nertz/nertz-v0" in PettingZoo's registry (PettingZoo >=
1.27: `pettingzoo.make("aec", "nertz/nertz-v0")`, `pettingzoo.make("parallel", ...)`); with an
older PettingZoo, `nertz_env.envs.registry.make` does the same. Keyword arguments and the
environment's documentation: nertz_env/envs/pettingzoo.py.
"""
from __future__ import annotations

from pettingzoo.utils import wrappers
from pettingzoo.utils.conversions import parallel_to_aec_wrapper

from .envs.pettingzoo import NertzParallelEnv

ENV_ID = "nertz/nertz-v0"


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


def _register() -> bool:
    try:
        from pettingzoo import aec_registry, parallel_registry, register
    except ImportError:                          # PettingZoo < 1.27 has no registry
        return False
    if ENV_ID not in aec_registry:
        register("aec", ENV_ID, entry_point=f"{__name__}:env")
    if ENV_ID not in parallel_registry:
        register("parallel", ENV_ID, entry_point=f"{__name__}:parallel_env")
    return True


REGISTERED = _register()
