"""TableMemory: the public memory (core/memory.py) of an env's tables, kept only where
something reads it: v1 observations (`observation="v1"`, core/observe_memory.py) or an
opponent that sees its seat's view (`seat_view = True`: it is called with a
nertz_env.seat_view.SeatView). Envs without either never build one, so v0 play costs what it
did.

The env calls `dealt()` after every deal it makes (reset, a layout, a game's next hand: the
tables are remembered afresh and, at reset, the deal keys drawn) and `ticked()` after every
tick (core/memory.py update_memory: a table re-dealt since is remembered afresh by it).
Deal keys: one uint64 per table, drawn at reset as a one-way hash (numpy's SeedSequence) of
the table's generator key after the deal, so it follows the env's seed and says nothing of
the cards; a SeatView's agent seeds its draws from it, the hand and the tick, as from the
arena's deal keys (agents/arena/play.py). A game's later hands keep it (the hand differs).
"""
from __future__ import annotations

import numpy as np

from ..core.memory import allocate_memory, init_memory, update_memory
from ..core.observe import OBS_DIM
from ..core.observe_memory import V1_OBS_DIM, memory_block_rows
from ..core.seat_view import SeatView


class TableMemory:
    """The memory and deal keys of every table of `engine` (module docstring)."""

    def __init__(self, engine):
        self.engine = engine
        self.memory = allocate_memory(engine.config, engine.n_tables)
        self.deal_keys = np.zeros(engine.n_tables, np.uint64)
        self._seat_team = np.asarray(engine.config.seat_team, np.int64)

    def dealt(self, new_keys: bool = True) -> None:
        """Every table remembered afresh (a deal); new_keys: the deal keys drawn anew."""
        st = self.engine.state
        init_memory(st, self.memory)
        if new_keys:
            self.deal_keys[:] = [np.random.SeedSequence(int(k)).generate_state(1, np.uint64)[0]
                                 for k in st.rng]

    def ticked(self) -> None:
        update_memory(self.engine.state, self.memory)

    def v1(self, v0: np.ndarray, rows_t, rows_s) -> np.ndarray:
        """float32 [n, V1_OBS_DIM]: the rows' v0 observations (float32 [n, OBS_DIM]) with
        their memory blocks appended."""
        rows_t = np.ascontiguousarray(rows_t, np.int64)
        rows_s = np.ascontiguousarray(rows_s, np.int64)
        out = np.empty((rows_t.size, V1_OBS_DIM), np.float32)
        out[:, :OBS_DIM] = v0
        memory_block_rows(self.engine.state, self.memory, self._seat_team, rows_t, rows_s, out)
        return out

    def view(self, rows_t, rows_s, obs, masks) -> SeatView:
        """The SeatView of the rows over the real engine (its state read only)."""
        eng = self.engine
        return SeatView(eng.config, eng.state, self.memory, self.deal_keys,
                        np.asarray(rows_t, np.int64), np.asarray(rows_s, np.int64), obs, masks)

    def get_state(self) -> dict:
        return {"memory": self.memory.copy(), "deal_keys": self.deal_keys.copy()}

    def set_state(self, snap) -> None:
        """Restore get_state()'s arrays when they fit this env, else remember afresh (a
        snapshot taken without a memory): the memory then forgets rather than lies."""
        mem = snap.get("memory") if isinstance(snap, dict) else None
        keys = snap.get("deal_keys") if isinstance(snap, dict) else None
        if (isinstance(mem, np.ndarray) and mem.dtype == np.int32
                and mem.shape == self.memory.shape and isinstance(keys, np.ndarray)
                and keys.dtype == np.uint64 and keys.shape == self.deal_keys.shape):
            self.memory[...] = mem
            self.deal_keys[...] = keys
            update_memory(self.engine.state, self.memory)   # not of this position: afresh
        else:
            self.dealt()
