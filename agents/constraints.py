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
1 << (id - 1), named once with the rule code (nertz_env/core/constraint_rules.py: USEFUL_SHIFTS
.. OWN_PILES, the kernels `forbidden`, `constrained_moves`, `constrain_rows`, there so that
nertz_env's rollouts apply them too):

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

Imports nertz_env only (its core/constraint_rules.py holds the kernels).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from nertz_env.core.codec import N_ACTIONS
from nertz_env.core.constraint_rules import (
    KEEP_RIVER,
    KEEP_STREAM,
    NEVER_WITHHOLD,
    OWN_PILES,
    SPLIT_ROLES,
    USEFUL_SHIFTS,
    constrain_rows,
    constrained_moves,
    forbidden,
)
from nertz_env.core.observe import OBS_DIM

__all__ = ["CONSTRAINTS", "Constraint", "check_constraint", "constrain", "constraint_bit",
           "constrain_rows", "constrained_moves", "forbidden", "KEEP_RIVER", "KEEP_STREAM",
           "NEVER_WITHHOLD", "OWN_PILES", "SPLIT_ROLES", "USEFUL_SHIFTS"]


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
    constrain_rows(obs, np.ascontiguousarray(m, np.bool_), int(cid), out)  # one signature
    return out
