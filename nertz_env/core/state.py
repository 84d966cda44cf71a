"""NertzState (the arrays of B tables), Scratch (per-tick work buffers) and Params (a
RulesConfig as plain numbers for the kernels). Shapes and dtypes: nertz_env/encoding.py.

Config crosses the jit boundary as numbers and small arrays (numba freezes globals at compile
time), so one compiled kernel serves every RulesConfig.
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

import numpy as np

from .codec import N_ACTIONS, STACK_MAX
from ..encoding import (COL_CAP, DECK, LAKE_PILES_PER_TEAM, N_RANKS, NERTZ_SIZE, NO_CARD,
                      STREAM_CAP)


class NertzState(NamedTuple):
    nertz: np.ndarray       # int8  [E, T, 13]
    nertz_n: np.ndarray     # int8  [E, T]
    river: np.ndarray       # int8  [E, T, R, 13]
    river_n: np.ndarray     # int8  [E, T, R]
    stream: np.ndarray      # int8  [E, T, 52]
    stream_n: np.ndarray    # int8  [E, T]
    waste_n: np.ndarray     # int8  [E, T]
    lake: np.ndarray        # int16 [E, 4T, 13]
    lake_n: np.ndarray      # int8  [E, 4T]
    lake_piles: np.ndarray  # int8  [E]
    lake_next: np.ndarray   # int8  [E, 52]
    lake_own: np.ndarray    # int16 [E, T]
    ready: np.ndarray       # int32 [E, S]
    tick: np.ndarray        # int32 [E]
    hand: np.ndarray        # int32 [E]
    turnovers: np.ndarray   # int32 [E, T]
    burns: np.ndarray       # int32 [E]
    penalties: np.ndarray   # int32 [E, T]
    callers: np.ndarray     # int8  [E, T]
    status: np.ndarray      # int8  [E]
    rng: np.ndarray         # uint64 [E]


class Scratch(NamedTuple):
    """Per-tick work buffers (no allocation inside a tick). Intents are the moves chosen at
    the start of a tick, tied to the cards they named (R23, D14)."""
    kind: np.ndarray        # int8  [E, S]  K_* below
    src: np.ndarray         # int8  [E, S]  source code, or River column A of a shift
    card: np.ndarray        # int8  [E, S]  named card (shift: the part's bottom card)
    card2: np.ndarray       # int8  [E, S]  shift: the top card of column A
    dst: np.ndarray         # int8  [E, S]  River column (build, shift)
    idx: np.ndarray         # int8  [E, S]  shift index I; stack length L
    height: np.ndarray      # int8  [E, S]  shift: column A's height at the start of the tick
    stack_src: np.ndarray   # int8  [E, S, 7] stack: source of each card, bottom first
    order: np.ndarray       # int32 [E, S]  resolution order of this tick
    decks: np.ndarray       # int8  [E, T, 52] deck orders for (re)deals
    avail: np.ndarray       # int8  [E, T, 8]  available card per source (R9), start of tick


# intent kinds
K_IDLE, K_WAIT, K_ILLEGAL, K_FLIP, K_CALL, K_LAKE, K_BUILD, K_SHIFT, K_STACK = range(9)


class Params(NamedTuple):
    n_teams: int
    n_seats: int
    river_size: int
    stacking: bool
    flow_rules: bool
    auto_nertz: bool
    alternate_roles: bool
    penalize: bool
    max_ticks: int
    target_score: int
    nertz_bonus: int
    lake_points: int
    nertz_penalty: int
    penalty_points: int
    seat_team: np.ndarray   # int64 [S]
    seat_slot: np.ndarray   # int64 [S]  0 = the team's first seat, 1 = second
    team_size: np.ndarray   # int64 [T]
    team_seat0: np.ndarray  # int64 [T]
    period: np.ndarray      # int64 [S]
    cost: np.ndarray        # int64 [4]  flip, lake, river, shift (layout.COST_*)


def make_params(config) -> Params:
    """RulesConfig -> Params."""
    seat_team = np.array(config.seat_team, dtype=np.int64)
    slots, seat0, s = [], [], 0
    for size in config.sizes:
        seat0.append(s)
        slots.extend(range(size))
        s += size
    costs = config.costs
    return Params(
        n_teams=config.num_teams, n_seats=config.num_seats, river_size=config.river_size,
        stacking=config.stacking, flow_rules=config.flow_rules, auto_nertz=config.auto_nertz,
        alternate_roles=config.alternate_roles, penalize=config.illegal_move == "penalize",
        max_ticks=config.max_ticks, target_score=config.target_score, nertz_bonus=config.nertz_bonus,
        lake_points=config.lake_points, nertz_penalty=config.nertz_penalty,
        penalty_points=config.penalty_points,
        seat_team=seat_team, seat_slot=np.array(slots, dtype=np.int64),
        team_size=np.array(config.sizes, dtype=np.int64),
        team_seat0=np.array(seat0, dtype=np.int64),
        period=np.array(config.periods, dtype=np.int64),
        cost=np.array([costs["flip"], costs["lake"], costs["river"], costs["shift"]], dtype=np.int64),
    )


def allocate_state(config, n_tables: int) -> NertzState:
    E, T, S, R = n_tables, config.num_teams, config.num_seats, config.river_size
    P = LAKE_PILES_PER_TEAM * T
    return NertzState(
        nertz=np.full((E, T, NERTZ_SIZE), NO_CARD, np.int8), nertz_n=np.zeros((E, T), np.int8),
        river=np.full((E, T, R, COL_CAP), NO_CARD, np.int8), river_n=np.zeros((E, T, R), np.int8),
        stream=np.full((E, T, STREAM_CAP), NO_CARD, np.int8), stream_n=np.zeros((E, T), np.int8),
        waste_n=np.zeros((E, T), np.int8),
        lake=np.full((E, P, N_RANKS), NO_CARD, np.int16), lake_n=np.zeros((E, P), np.int8),
        lake_piles=np.zeros(E, np.int8), lake_next=np.zeros((E, DECK), np.int8),
        lake_own=np.zeros((E, T), np.int16),
        ready=np.zeros((E, S), np.int32), tick=np.zeros(E, np.int32), hand=np.zeros(E, np.int32),
        turnovers=np.zeros((E, T), np.int32), burns=np.zeros(E, np.int32),
        penalties=np.zeros((E, T), np.int32), callers=np.zeros((E, T), np.int8),
        status=np.zeros(E, np.int8), rng=np.zeros(E, np.uint64),
    )


def allocate_scratch(config, n_tables: int) -> Scratch:
    E, T, S = n_tables, config.num_teams, config.num_seats
    z = lambda: np.zeros((E, S), np.int8)  # noqa: E731
    return Scratch(kind=z(), src=z(), card=z(), card2=z(), dst=z(), idx=z(), height=z(),
                   stack_src=np.zeros((E, S, STACK_MAX), np.int8),
                   order=np.zeros((E, S), np.int32), decks=np.zeros((E, T, DECK), np.int8),
                   avail=np.full((E, T, 8), NO_CARD, np.int8))


def allocate_masks(config, n_tables: int) -> np.ndarray:
    return np.zeros((n_tables, config.num_seats, N_ACTIONS), np.int8)


def copy_table(src: NertzState, i: int, dst: NertzState, j: int) -> None:
    """dst[j] = src[i] for every array (Python level: snapshots, set_state)."""
    for a, b in zip(src, dst):
        b[j] = a[i]


def coerce_state(arrays, like: NertzState, what: str = "state") -> NertzState:
    """Fresh C-contiguous copies of `arrays` (a mapping with every NertzState field) in the
    dtypes and shapes of `like`, else a ValueError naming the array. Only integer arrays are
    taken (a float is refused, not truncated) and every value must fit the target dtype (no
    wrap). Meanings and ranges are core/invariants.py's job."""
    if isinstance(arrays, NertzState):
        arrays = arrays._asdict()
    if not isinstance(arrays, Mapping):
        raise ValueError(f"{what}: the engine arrays must be a dict of {list(NertzState._fields)}, "
                         f"got {type(arrays).__name__}")
    if arrays.keys() != _FIELD_SET:
        missing = [f for f in NertzState._fields if f not in arrays]
        unknown = [k for k in arrays if k not in _FIELD_SET]
        raise ValueError(f"{what}: the engine arrays miss {missing} / have unknown {unknown}; "
                         f"expected exactly {list(NertzState._fields)}")
    out = []
    for name, dst in zip(NertzState._fields, like):
        src = arrays[name]
        if type(src) is np.ndarray and src.dtype == dst.dtype and src.shape == dst.shape:
            out.append(src.copy())                # the common case: nothing to convert
        else:
            out.append(_coerce_array(src, dst, name, what))
    return NertzState(*out)


_FIELD_SET = frozenset(NertzState._fields)


def _coerce_array(value, dst: np.ndarray, name: str, what: str) -> np.ndarray:
    try:
        src = np.asarray(value)
    except (ValueError, TypeError):
        src = None
    if src is None or src.dtype.kind not in "iu":
        kind = type(value).__name__ if src is None else f"{src.dtype} array"
        raise ValueError(f"{what}: engine array {name!r} is a {kind}; expected integers "
                         f"({dst.dtype}, shape {dst.shape})")
    if src.shape != dst.shape:
        raise ValueError(f"{what}: engine array {name!r} has shape {src.shape}; this "
                         f"config needs {dst.shape}")
    if src.size and src.dtype != dst.dtype:        # (the same dtype fits by definition)
        info = np.iinfo(dst.dtype)
        lo, hi = int(src.min()), int(src.max())
        if lo < info.min or hi > info.max:
            bad = lo if lo < info.min else hi
            raise ValueError(f"{what}: engine array {name!r} holds {bad}, outside its dtype "
                             f"{dst.dtype} ({info.min}..{info.max})")
    return np.ascontiguousarray(src, dtype=dst.dtype).copy()


def cards_in_play(st: NertzState) -> np.ndarray:
    """int64 [E, T]: cards of each team's deck on the table (52 after a deal; a layout may
    leave some out of play, docs/api.md)."""
    return (st.nertz_n.astype(np.int64) + st.river_n.sum(axis=-1, dtype=np.int64)
            + st.stream_n + st.lake_own)
