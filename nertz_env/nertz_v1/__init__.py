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
from ..envs.pettingzoo import NertzParallelEnv
from ..envs.registry import version_entry_points

ENV_ID = "nertz/nertz-v1"
env, raw_env, parallel_env, REGISTERED = version_entry_points(ENV_ID, __name__)

__all__ = ["env", "parallel_env", "raw_env", "NertzAECEnv", "NertzParallelEnv", "ENV_ID"]
