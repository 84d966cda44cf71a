"""The action-id numbering, written once (the table and its meaning: nertz_env/actions.py's
docstring). The kernels (tick, legal, policies) inline these functions; nertz_env/actions.py
re-exports the constants and calls the same functions from Python (`.py_func`), so the
numbering cannot drift between the core, the Table, the environments and the agents.

    decode(a) -> (kind, src, dst, index, length)
        kind    KIND_* below (the order of actions.KINDS)
        src     source code (nertz_env.encoding SRC_*) of a lake move, a build, a stack's bottom
                card, or SRC_RIVER0 + A for a shift riverA:I>riverB; -1 otherwise
        dst     River column of a build or a shift; -1 otherwise
        index   a shift's River index I; -1 otherwise
        length  a stack's card count (2..STACK_MAX); 0 otherwise

Ids must be in 0..N_ACTIONS-1: these functions do not check (the Python door does:
actions.check_action_id, Engine).
"""
from __future__ import annotations

from numba import njit

from ..encoding import COL_CAP, MAX_RIVER, N_SOURCES, SRC_RIVER0

WAIT, FLIP, CALL = 0, 1, 2
LAKE0 = 3
BUILD0 = LAKE0 + N_SOURCES                      # 10
SHIFT0 = BUILD0 + 2 * MAX_RIVER                 # 20
SHIFT_PAIRS = MAX_RIVER * (MAX_RIVER - 1)       # 20
STACK0 = SHIFT0 + SHIFT_PAIRS * COL_CAP         # 280
STACK_MAX = MAX_RIVER + 2                       # R16: at most river_size + 2 cards
STACK_LENS = STACK_MAX - 1                      # lengths 2..7
N_ACTIONS = STACK0 + N_SOURCES * STACK_LENS     # 322

KIND_WAIT, KIND_FLIP, KIND_CALL, KIND_LAKE, KIND_BUILD, KIND_SHIFT, KIND_STACK = range(7)


@njit(cache=True, error_model="numpy", inline="always")
def lake_id(src):
    """src>lake, src a source code (nertz, waste, riverC)."""
    return LAKE0 + src


@njit(cache=True, error_model="numpy", inline="always")
def build_id(src, col):
    """src>riverC, src SRC_NERTZ or SRC_WASTE."""
    return BUILD0 + MAX_RIVER * src + col


@njit(cache=True, error_model="numpy", inline="always")
def shift_id(col_from, index, col_to):
    """riverA:I>riverB (A = col_from, B = col_to != A)."""
    b = col_to if col_to < col_from else col_to - 1
    return SHIFT0 + ((MAX_RIVER - 1) * col_from + b) * COL_CAP + index


@njit(cache=True, error_model="numpy", inline="always")
def stack_id(src, length):
    """A stack of `length` cards whose bottom card is at source `src`."""
    return STACK0 + STACK_LENS * src + (length - 2)


@njit(cache=True, error_model="numpy", inline="always")
def decode(a):
    """(kind, src, dst, index, length) of action id a (module docstring)."""
    if a < LAKE0:                                   # WAIT, FLIP, CALL are their own kinds
        return a - WAIT + KIND_WAIT, -1, -1, -1, 0
    if a < BUILD0:
        return KIND_LAKE, a - LAKE0, -1, -1, 0
    if a < SHIFT0:
        q = a - BUILD0
        return KIND_BUILD, q // MAX_RIVER, q % MAX_RIVER, -1, 0
    if a < STACK0:
        q = a - SHIFT0
        pair = q // COL_CAP
        col_from = pair // (MAX_RIVER - 1)
        b = pair % (MAX_RIVER - 1)
        return KIND_SHIFT, SRC_RIVER0 + col_from, b if b < col_from else b + 1, q % COL_CAP, 0
    q = a - STACK0
    return KIND_STACK, q // STACK_LENS, -1, -1, q % STACK_LENS + 2
