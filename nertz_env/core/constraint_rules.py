"""The constraints' rule code: which legal moves a constraint forbids a seat, read from that
seat's observation row (core/observe.py: its Nertz top, waste top and River in full) and its
legal-move mask, as numba kernels over a bit mask of constraints.

The names, rules and texts of the constraints, their ids and the checking of a name are
agents/constraints.py's (a constraint's bit is 1 << (id - 1)); the bits are named once here
as module ints, so that nertz_env's own kernels (core/net_policy.py, the rollouts' net seats)
apply the same rule code as training and play, without importing agents.
tests/agents/test_constraints.py holds each bit equal to agents/constraints.py's
constraint_bit of its name.

- forbidden(a, row, mrow, bits, n_top, w_top): one move;
- constrained_moves(row, mrow, bits, idx): the moves kept on one row (every legal move where
  the constraint would keep none: a constraint never leaves a seat without a move);
- constrain_rows(obs, masks, bits, out): rows at once.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ..encoding import MAX_RIVER, NO_CARD, SRC_NERTZ, SRC_RIVER0, SRC_WASTE
from .codec import (KIND_BUILD, KIND_CALL, KIND_LAKE, KIND_SHIFT, KIND_STACK, N_ACTIONS,
                    build_id, decode, lake_id)
from .observe import (OFF_NERTZ, OFF_WASTE, SELF_HOLDS_STREAM, SELF_TWO_PLAYER, read_card,
                      read_river, read_top)
from .policies import in_run
from .rules import can_build_on

# Each constraint's bit (agents/constraints.py: 1 << (id - 1)), module ints: numba constants
USEFUL_SHIFTS = 1
NEVER_WITHHOLD = 2
KEEP_STREAM = 4
SPLIT_ROLES = 8
KEEP_RIVER = 16
OWN_PILES = 32
ALL_BITS = 63


@njit(cache=True, inline="always", error_model="numpy")
def forbidden(a, row, mrow, bits, n_top, w_top):
    """Whether constraint bits `bits` forbid move `a` on one seat's observation row and mask
    row (n_top, w_top: its Nertz and waste tops, read from the row)."""
    kd, src, dst, i, length = decode(a)
    if bits & USEFUL_SHIFTS and kd == KIND_SHIFT:
        if n_top == NO_CARD:
            return True
        if i == 0:
            target = read_top(row, SRC_RIVER0 + dst)
            if target == NO_CARD or can_build_on(n_top, target):
                return True
        elif not can_build_on(n_top, read_river(row, src - SRC_RIVER0, i - 1)):
            return True
    if bits & NEVER_WITHHOLD and mrow[lake_id(SRC_WASTE)] != 0:
        if not ((kd == KIND_LAKE and src == SRC_WASTE) or kd == KIND_CALL):
            return True
    if (bits & KEEP_STREAM and w_top != NO_CARD and n_top != NO_CARD
            and can_build_on(n_top, w_top)):
        river_ok = False
        for c in range(MAX_RIVER):
            if mrow[build_id(SRC_WASTE, c)] != 0:
                river_ok = True
        if river_ok:
            if kd == KIND_LAKE and src == SRC_WASTE:
                return True
            if kd == KIND_STACK and in_run(w_top, read_top(row, src), length):
                return True
    if bits & KEEP_RIVER and n_top != NO_CARD and (kd == KIND_LAKE or kd == KIND_STACK):
        for c in range(MAX_RIVER):
            top = read_top(row, SRC_RIVER0 + c)
            if top != NO_CARD and can_build_on(n_top, top):
                if kd == KIND_LAKE and src == SRC_RIVER0 + c:
                    return True
                if kd == KIND_STACK and in_run(top, read_top(row, src), length):
                    return True
    if bits & OWN_PILES and row[SELF_TWO_PLAYER] > 0.5 and (
            kd == KIND_LAKE or kd == KIND_BUILD or kd == KIND_STACK):
        stream = row[SELF_HOLDS_STREAM] > 0.5
        pile, top = (SRC_NERTZ, n_top) if stream else (SRC_WASTE, w_top)
        if src == pile or (kd == KIND_STACK and top != NO_CARD and
                           in_run(top, read_top(row, src), length)):
            return True
    if bits & SPLIT_ROLES and row[SELF_TWO_PLAYER] > 0.5 and (
            kd == KIND_LAKE or kd == KIND_BUILD or kd == KIND_SHIFT or kd == KIND_STACK):
        if row[SELF_HOLDS_STREAM] > 0.5:
            return kd == KIND_SHIFT or kd == KIND_STACK or src != SRC_WASTE
        if src == SRC_WASTE or (kd == KIND_STACK and w_top != NO_CARD and
                                in_run(w_top, read_top(row, src), length)):
            return True
    return False


@njit(cache=True, error_model="numpy", inline="always")
def constrained_moves(row, mrow, cid, idx) -> int:
    """The moves constraint cid keeps on one seat's observation row and mask row:
    idx[:n] = those moves, ascending; returns n; every legal move where it keeps none; cid
    0: the legal moves. Finds the legal moves by blocks of 8 mask entries (a seat has a few
    of the N_ACTIONS legal), so it reads the row a fraction as often. idx: int64 work row of
    at least N_ACTIONS + 1. The one place constraints are applied: `constrain` (training,
    Python play), the learned seats' kernel (agents/learned/core_layers.py) and the
    rollouts' net seats (core/net_policy.py) all call it."""
    A = mrow.shape[0]
    mb = mrow[:A - A % 8].view(np.int64)
    n = 0
    for b in range(mb.shape[0]):
        if mb[b] != 0:
            for a in range(8 * b, 8 * b + 8):     # without a branch
                idx[n] = a
                n += mrow[a] != 0
    for a in range(A - A % 8, A):
        idx[n] = a
        n += mrow[a] != 0
    if cid == 0:
        return n
    n_top, w_top = read_card(row, OFF_NERTZ), read_card(row, OFF_WASTE)
    kept = 0
    for m in range(n):
        a = idx[m]
        if not forbidden(a, row, mrow, cid, n_top, w_top):
            idx[kept] = a
            kept += 1
    return kept if kept else n      # every legal move forbidden: idx[:n] still lists them all


@njit(cache=True, error_model="numpy")
def constrain_rows(obs, masks, cid, out):
    """out[r] = the legal moves of row r that constraint bits cid keep (bool)."""
    idx = np.zeros(N_ACTIONS + 1, np.int64)
    for r in range(obs.shape[0]):
        out[r, :] = False
        for m in range(constrained_moves(obs[r], masks[r], cid, idx)):
            out[r, idx[m]] = True
