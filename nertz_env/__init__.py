"""nertz-env: a batched, numba-jitted Nertz engine with RL environments on top.

Public API (shared/API.md): RulesConfig, Table, Move, TickResult; Engine for batched play.

numba's threading layer is left as numba chooses it (or as NUMBA_THREADING_LAYER sets it):
importing nertz_env changes no numba setting. Engines and environments may be stepped from
several Python threads at once; the engine serializes its parallel launches only under the
"workqueue" layer, which is not thread-safe (nertz_env/engine.py, launch_parallel).
"""
from .actions import N_ACTIONS, Move
from .config import RulesConfig
from .engine import Engine
from .table import Table, TickResult
from . import nertz_v0  # noqa: E402  (PettingZoo envs; registers nertz/nertz-v0)

import gymnasium as _gymnasium  # noqa: E402

if "nertz_env/Nertz-v0" not in _gymnasium.registry:      # importing twice must not re-register
    _gymnasium.register(id="nertz_env/Nertz-v0", entry_point="nertz_env.envs.gym:NertzGymEnv")


def __getattr__(name):
    """NertzGymEnv / NertzVecEnv / NertzGymVectorEnv, imported on first use (nertz_env.envs:
    vector.py imports SB3, hence torch; gym_vector.py needs neither)."""
    if name in ("NertzGymEnv", "NertzVecEnv", "NertzGymVectorEnv"):
        from . import envs
        return getattr(envs, name)
    raise AttributeError(f"module 'nertz_env' has no attribute {name!r}")


__all__ = ["RulesConfig", "Table", "Move", "TickResult", "Engine", "N_ACTIONS", "nertz_v0",
           "NertzGymEnv", "NertzVecEnv", "NertzGymVectorEnv"]
__version__ = "0.1.0"
