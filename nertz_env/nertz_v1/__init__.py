"""nertz_v1: the PettingZoo entry points of the v1 observation, in PettingZoo's module style.

    from nertz_env import nertz_v1
    env = nertz_v1.env(num_teams=4)              # AEC, with PettingZoo's order enforcing
    par = nertz_v1.parallel_env(num_teams=4)     # ParallelEnv (NertzParallelEnv)
    raw = nertz_v1.raw_env(num_teams=4)          # AEC without wrappers

The same game, actions, rewards, infos and arguments as nertz_v0 (nertz_env/envs/
pettingzoo.py); what changed is the observation: each agent's "observation" is v0's vector
(OBS_DIM = 791 floats, core/observe.py) followed by what that seat remembers of the face-down
cards it has seen (core/observe_memory.py, MEM_F = 228 floats: V1_OBS_DIM = 1019), written
from the table's public memory (core/memory.py), which the env keeps after every tick. It is
`NertzParallelEnv(observation="v1", ...)`; nertz_v0 is unchanged byte for byte.

Importing this module also registers "nertz/nertz-v1" in PettingZoo's registry (PettingZoo >=
1.27); with an older PettingZoo, `nertz_env.envs.registry.make("nertz/nertz-v1")` does the
same.
"""
from __future__ import annotations

from ..envs.aec import NertzAECEnv
from ..envs.aec import env_v1 as env
from ..envs.aec import parallel_env_v1 as parallel_env
from ..envs.aec import raw_env_v1 as raw_env
from ..envs.pettingzoo import NertzParallelEnv

ENV_ID = "nertz/nertz-v1"

__all__ = ["env", "parallel_env", "raw_env", "NertzAECEnv", "NertzParallelEnv", "ENV_ID"]


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
