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
environment's documentation: nertz_env/envs/pettingzoo.py; the functions themselves:
nertz_env/envs/aec.py (this module sits above `envs` and only re-exports them: nothing in
`envs` imports it). nertz_v1 is built the same way: envs/registry.py version_entry_points
gives a version's functions and registers its id.
"""
from __future__ import annotations

from .envs.aec import NertzAECEnv
from .envs.pettingzoo import NertzParallelEnv
from .envs.registry import version_entry_points

ENV_ID = "nertz/nertz-v0"
env, raw_env, parallel_env, REGISTERED = version_entry_points(ENV_ID, __name__)

__all__ = ["env", "parallel_env", "raw_env", "NertzAECEnv", "NertzParallelEnv", "ENV_ID"]
