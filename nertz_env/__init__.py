"""nertz-env: a batched, numba-jitted Nertz engine with RL environments on top.

Public API (shared/API.md): RulesConfig, Table, Move, TickResult; Engine for batched play.
"""
from .actions import N_ACTIONS, Move
from .config import RulesConfig
from .engine import Engine
from .table import Table, TickResult

__all__ = ["RulesConfig", "Table", "Move", "TickResult", "Engine", "N_ACTIONS"]
__version__ = "0.1.0"
