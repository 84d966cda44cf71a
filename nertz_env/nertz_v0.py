"""nertz_v0: the PettingZoo entry points, in PettingZoo's module style.

    from nertz_env import nertz_v0
    env = nertz_v0.env(num_teams=4)              # AEC, with PettingZoo's usual wrappers
    par = nertz_v0.parallel_env(num_teams=4)     # ParallelEnv (NertzParallelEnv)
    raw = nertz_v0.raw_env(num_teams=4)          # AEC without wrappers

Importing this module also registers "nertz/nertz-v0" in PettingZoo's registry (PettingZoo >=
1.27: `pettingzoo.make("aec", "nertz/nertz-v0")`, `pettingzoo.make("parallel", ...)`); with an
older PettingZoo, `nertz_env.registry.make` does the same. Keyword arguments and the
environment's documentation: nertz_env/envs/pettingzoo.py.
"""
from __future__ import annotations

from pettingzoo.utils import wrappers
from pettingzoo.utils.conversions import parallel_to_aec

from .envs.pettingzoo import NertzParallelEnv

ENV_ID = "nertz/nertz-v0"


def parallel_env(**kwargs) -> NertzParallelEnv:
    """The ParallelEnv: every agent acts every step (one step = one tick)."""
    return NertzParallelEnv(**kwargs)


def raw_env(**kwargs):
    """The AEC form (PettingZoo's parallel_to_aec converter), without wrappers."""
    return parallel_to_aec(parallel_env(**kwargs))


def env(**kwargs):
    """The AEC form with PettingZoo's usual wrappers (actions in bounds, call order)."""
    e = raw_env(**kwargs)
    e = wrappers.AssertOutOfBoundsWrapper(e)
    return wrappers.OrderEnforcingWrapper(e)


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
