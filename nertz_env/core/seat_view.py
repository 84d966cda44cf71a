"""SeatView: what an agent that sees its seat's information of the engine state gets per call.

An agent opts in with `seat_view = True` and `act_view(view) -> int64 [n]` (agents/base.py
documents the protocol; it re-exports this class). The arena's Python loop (agents/arena/
seat_loop.py), the human table (agents/human/session.py) and the envs' opponents (nertz_env/
envs/opponents.py: NertzGymEnv and the vector envs) build one per call over the real engine: n rows, each a table of the batch and a seat
the agent holds there, ready to move. The state holds every card, the face-down ones too: such
an agent reads what no seat sees only through core/worlds.py's re-deal (uniform or memory
belief), so permuting the never-seen cards cannot change its move. It lives here, below
`agents`, so that nertz_env can build one without importing agents.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np


class SeatView(NamedTuple):
    """n rows of one batch of tables (module docstring)."""
    config: object           # the tables' RulesConfig
    state: object            # the engine's NertzState (read only; hidden cards: worlds only)
    memory: np.ndarray       # int32 [B, T, MEM_W] the tables' public memory, up to date
    deal_keys: np.ndarray    # uint64 [B] each table's deal key (seeds from the deal)
    rows: np.ndarray         # int64 [n] tables
    seats: np.ndarray        # int64 [n] seats
    observations: np.ndarray  # float32 [n, OBS_DIM] (v0's vector)
    masks: np.ndarray        # bool [n, N_ACTIONS]
