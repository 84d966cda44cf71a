"""Constraints: named habits a learned agent is made to follow, by masking its legal moves.

A constraint takes a batch of one seat's observations and legal-move masks and returns the
masks with the moves it forbids cleared; training (the lean PPO's learner, TrainConfig
.constraint) and play (`ppo:PATH,constraint=NAME`, or a model file that names its constraint)
call the same kernel, `constrain`, so a constrained agent is trained and played under the
same rule. It reads only what the seat sees (nertz_env/core/observe.py: the own Nertz top,
waste top and River in full), so it needs no table state. A row whose every legal move the
constraint would forbid keeps its masks unchanged (a constraint never leaves a seat without
a move; Wait is always legal, R17, and only never-withhold forbids it).

CONSTRAINTS: name -> Constraint(id, rule ids it touches, what it forbids); names joined by '+'
combine (a move any of them forbids is forbidden). A constraint's bit in a mask is
1 << (id - 1), named once below the table (USEFUL_SHIFTS .. OWN_PILES):

- useful-shifts: River shifts (R14) only where they serve the Nertz pile, as river-builder's
  are: the whole column onto a non-empty column (a column freed for the Nertz top) unless
  the Nertz top builds on that column's top (it would cover the place), or the part above a
  card the Nertz top builds on; none with an empty Nertz pile. A shift is a card move that
  resets the idle count (R27), so an agent that shifts back and forth keeps a stuck table
  from burning its Streams; the simple back-and-forth cycles are forbidden here (expose a
  card, then cover it again with the whole column moved off it).
- never-withhold: a legal waste-to-Lake play (R10) is the move (Call stays allowed).
- keep-stream: a waste top that the Nertz top builds on never goes to the Lake, alone or in a
  stack (R10, R16), while it can go to the River (R11).
- keep-river: a River top that the Nertz top builds on never goes to the Lake, alone or at
  the bottom of or inside a stack (R13, R16): it stays where the Nertz card can be built on
  it (R11).
- split-roles: in a two-player team (R4) each partner works only its own role's cards: the
  seat holding the Stream flips and plays the waste top (to the Lake or the River), no
  Nertz or River card and no stack; the seat holding the Nertz pile plays the Nertz pile
  and the River, no waste card (alone or in a stack). Solo seats are not touched. R4 lets
  either partner play any of the team's available cards; this is the strict division of
  labour, against which the free team's sharing is measured.
- own-piles: the milder split: in a two-player team (R4) each partner leaves the other's pile
  alone: the Stream holder never moves the Nertz top, the Nertz holder never the waste top
  (alone or in a stack); both work the River (builds, shifts and Lake plays of its cards).

Imports nertz_env only (numba kernels over the observation layout and the action codec).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from nertz_env.core.codec import (KIND_BUILD, KIND_CALL, KIND_LAKE, KIND_SHIFT, KIND_STACK,
                                  N_ACTIONS,
                                  build_id, decode, lake_id)
from nertz_env.core.observe import (OBS_DIM, OFF_NERTZ, OFF_WASTE, SELF_HOLDS_STREAM,
                                    SELF_TWO_PLAYER, read_card, read_river, read_top)
from nertz_env.core.policies import in_run
from nertz_env.core.rules import can_build_on
from nertz_env.encoding import MAX_RIVER, NO_CARD, SRC_NERTZ, SRC_RIVER0, SRC_WASTE


class Constraint(NamedTuple):
    id: int
    rules: tuple
    forbids: str


CONSTRAINTS = {
    "useful-shifts": Constraint(1, ("R14", "R27"), "River shifts except the whole column onto "
                                "a non-empty one whose top the Nertz top does not build on, or "
                                "the part above a card the Nertz top builds on (none with an "
                                "empty Nertz pile)"),
    "never-withhold": Constraint(2, ("R10", "R15"), "every other move while a waste-to-Lake "
                                 "play is legal (Call stays allowed)"),
    "keep-stream": Constraint(3, ("R10", "R11", "R16"), "the waste top to the Lake (alone or in "
                              "a stack) while the Nertz top builds on it and it can go to the "
                              "River"),
    "keep-river": Constraint(5, ("R11", "R13", "R16"), "a River top that the Nertz top builds "
                             "on to the Lake (alone or in a stack)"),
    "split-roles": Constraint(4, ("R4", "R16"), "at a two-player team, the Stream holder's "
                              "moves of Nertz or River cards and its stacks, and the Nertz "
                              "holder's moves of the waste top (alone or in a stack)"),
    "own-piles": Constraint(6, ("R4", "R16"), "at a two-player team, the Stream holder's "
                            "moves of the Nertz top and the Nertz holder's moves of the waste "
                            "top (alone or in a stack); the River stays shared"),
}


def constraint_bit(name: str) -> int:
    """The bit of one constraint (CONSTRAINTS[name]) in a constraint mask."""
    return 1 << (CONSTRAINTS[name].id - 1)


# Each constraint's bit, named once (module ints: numba reads them as constants)
USEFUL_SHIFTS = constraint_bit("useful-shifts")         # 1
NEVER_WITHHOLD = constraint_bit("never-withhold")       # 2
KEEP_STREAM = constraint_bit("keep-stream")             # 4
SPLIT_ROLES = constraint_bit("split-roles")             # 8
KEEP_RIVER = constraint_bit("keep-river")               # 16
OWN_PILES = constraint_bit("own-piles")                 # 32


def check_constraint(name, where: str = "constraint") -> int:
    """The bit mask of a constraint name, or of several joined by '+' ("useful-shifts+
    never-withhold": a move any of them forbids is forbidden); None, "" or "none": 0, no
    constraint. ValueError naming `where` otherwise."""
    if name is None or name == "" or name == "none":
        return 0
    parts = name.split("+") if isinstance(name, str) else [name]
    bits = 0
    for part in parts:
        if not isinstance(part, str) or part.strip() not in CONSTRAINTS:
            raise ValueError(f"{where}={name!r} is not a constraint; constraints: "
                             f"{', '.join(CONSTRAINTS)}, several joined by '+', or none")
        bits |= constraint_bit(part.strip())
    return bits


@njit(cache=True, inline="always", error_model="numpy")
def _forbidden(a, row, mrow, bits, n_top, w_top):
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
    Python play) and the learned seats' kernel (agents/learned/core_play.py) both call it."""
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
        if not _forbidden(a, row, mrow, cid, n_top, w_top):
            idx[kept] = a
            kept += 1
    return kept if kept else n      # every legal move forbidden: idx[:n] still lists them all


@njit(cache=True, error_model="numpy")
def _constrain(obs, masks, cid, out):
    idx = np.zeros(N_ACTIONS + 1, np.int64)
    for r in range(obs.shape[0]):
        out[r, :] = False
        for m in range(constrained_moves(obs[r], masks[r], cid, idx)):
            out[r, idx[m]] = True


def constrain(observations, masks, constraint) -> np.ndarray:
    """The masks (bool [n, N_ACTIONS]) with the moves `constraint` forbids cleared (module
    docstring); constraint: a name (or several joined by '+'), a bit mask from
    check_constraint, or None/0 (the masks as given, as bool)."""
    cid = constraint if isinstance(constraint, (int, np.integer)) else check_constraint(
        constraint)
    m = np.asarray(masks)
    if not cid:
        return m.astype(bool, copy=False)
    obs = np.ascontiguousarray(observations, np.float32)
    if obs.ndim != 2 or obs.shape[1] != OBS_DIM or m.shape != (obs.shape[0], N_ACTIONS):
        raise ValueError(f"constrain: observations [n, {OBS_DIM}] and masks [n, {N_ACTIONS}], "
                         f"got {obs.shape} and {m.shape}")
    out = np.empty(m.shape, np.bool_)
    _constrain(obs, np.ascontiguousarray(m, np.bool_), int(cid), out)   # one signature
    return out
