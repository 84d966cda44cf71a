"""nertz-env: a batched, numba-jitted Nertz engine with RL environments on top.

Public API (docs/api.md): RulesConfig, Table, Move, TickResult; Engine for batched play.

numba's threading layer is left as numba chooses it (or as NUMBA_THREADING_LAYER sets it):
importing nertz_env changes no numba setting. It adds cache locators for its own and the
agents package's files only (core/kernel_cache.py: a cached kernel is recompiled when any file it
imports changes, not only its own). Engines and environments may be stepped from
several Python threads at once; the engine serializes its parallel launches only under the
"workqueue" layer, which is not thread-safe (nertz_env/engine.py, launch_parallel).
"""
from . import core as _core  # noqa: F401  (first: its kernel_cache.install, core/__init__.py)
from .actions import N_ACTIONS, Move
from .config import RulesConfig
from .engine import Engine
from .table.table import Table, TickResult
from . import nertz_v0 # noqa: E402  (PettingZoo envs; registers nertz/nertz-v0)
from . import nertz_v1  # noqa: E402  (the v1 observation; registers nertz/nertz-v1)

import gymnasium as _gymnasium  # noqa: E402

# gymnasium.make: one learner seat (NertzGymEnv); gymnasium.make_vec: the batched tables in one
# numba call (its default mode once a vector_entry_point is set; "sync" still gives N
# NertzGymEnv); the self-play id has only the batched form
if "nertz_env/Nertz-v0" not in _gymnasium.registry:      # importing twice must not re-register
    _gymnasium.register(id="nertz_env/Nertz-v0", entry_point="nertz_env.envs.gym:NertzGymEnv",
                        vector_entry_point="nertz_env.envs.gym_vector:NertzGymVectorEnv")
# The v1 observation (core/observe_memory.py) is the option observation="v1" of these ids
# (gymnasium.make("nertz_env/Nertz-v0", observation="v1"), make_vec likewise): a registered
# "Nertz-v1" would make gymnasium warn every v0 user that v0 is out of date, and v0 is not
if "nertz_env/NertzSelfPlay-v0" not in _gymnasium.registry:
    _gymnasium.register(id="nertz_env/NertzSelfPlay-v0",
                        vector_entry_point="nertz_env.envs.selfplay:make_selfplay_vector")


_LAZY = ("NertzGymEnv", "NertzVecEnv", "NertzGymVectorEnv", "NertzSelfPlayVecEnv",
         "NertzSelfPlayGymVectorEnv")


def __getattr__(name):
    """The envs of nertz_env.envs, imported on first use (vector.py and selfplay_sb3.py import
    SB3, hence torch; the others need neither)."""
    if name in _LAZY:
        from . import envs
        return getattr(envs, name)
    raise AttributeError(f"module 'nertz_env' has no attribute {name!r}")


__all__ = ["RulesConfig", "Table", "Move", "TickResult", "Engine", "N_ACTIONS", "nertz_v0",
           "nertz_v1",
           "NertzGymEnv", "NertzVecEnv", "NertzGymVectorEnv", "NertzSelfPlayVecEnv",
           "NertzSelfPlayGymVectorEnv"]
__version__ = "0.1.0"
