"""The action numbering shared by the core, the Table, the environments and the agents.

One fixed numbering for every table (any team count, River of 4 or 5), so that policies and
masks have one shape everywhere: actions naming River column 4 are simply never legal with a
4-column River.

    | ids       | count | move (docs/api.md text)     | encoding                                  |
    |-----------|-------|-----------------------------|-------------------------------------------|
    | 0         | 1     | wait                        | WAIT                                      |
    | 1         | 1     | flip                        | FLIP                                      |
    | 2         | 1     | call                        | CALL                                      |
    | 3-9       | 7     | nertz>lake, waste>lake,     | LAKE0 + source (nertz 0, waste 1,         |
    |           |       | river0>lake .. river4>lake  |   riverC 2+C)                             |
    | 10-19     | 10    | nertz>riverC, waste>riverC  | BUILD0 + 5 * (0 nertz, 1 waste) + C       |
    | 20-279    | 260   | riverA:I>riverB             | SHIFT0 + (4 * A + B') * 13 + I,           |
    |           |       |                             |   B' = B if B < A else B - 1              |
    | 280-321   | 42    | stack of L cards, bottom    | STACK0 + 6 * source + (L - 2), L = 2..7   |
    |           |       | card at source              |                                           |
    N_ACTIONS = 322

A stack is fixed by its bottom source and its length: a team's available cards all come from
its own deck, so the run of consecutive same-suit ranks above a card is unique (D10). Its text
(`river1+waste>lake`) therefore needs the position; `Table.decode` supplies it.

`Move` is the readable form: `Move.parse(text)` / `str(move)` follow docs/api.md's grammar, and
moves compare equal by their canonical text.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .core import codec as _codec
from .core.codec import (BUILD0, CALL, FLIP, LAKE0, N_ACTIONS, SHIFT0, SHIFT_PAIRS,  # noqa: F401
                         STACK0, STACK_LENS, STACK_MAX, WAIT)
from .encoding import COL_CAP, MAX_RIVER, SRC_NERTZ, SRC_RIVER0, SRC_WASTE  # noqa: F401

KINDS = ("wait", "flip", "call", "lake", "build", "shift", "stack")   # codec.KIND_* order

# codec.py's functions as plain Python: the kernels' own code, with no compile on first use
_lake_id, _build_id, _shift_id, _stack_id, _decode = (
    getattr(f, "py_func", f) for f in (_codec.lake_id, _codec.build_id, _codec.shift_id,
                                       _codec.stack_id, _codec.decode))


def source_text(src: int) -> str:
    if src == SRC_NERTZ:
        return "nertz"
    if src == SRC_WASTE:
        return "waste"
    return f"river{src - SRC_RIVER0}"


def _parse_source(text: str, whole: str) -> tuple[int, int | None]:
    """'nertz' | 'waste' | 'riverC[:I]' -> (source code, index or None)."""
    if text == "nertz":
        return SRC_NERTZ, None
    if text == "waste":
        return SRC_WASTE, None
    if text.startswith("river"):
        col_text, _, idx_text = text[5:].partition(":")
        if not col_text.isdigit() or int(col_text) >= MAX_RIVER:
            raise ValueError(f"move {whole!r}: River column {col_text!r} must be 0..{MAX_RIVER - 1}")
        if not _:
            return SRC_RIVER0 + int(col_text), None
        if not idx_text.isdigit() or int(idx_text) >= COL_CAP:
            raise ValueError(f"move {whole!r}: River index {idx_text!r} must be 0..{COL_CAP - 1}")
        return SRC_RIVER0 + int(col_text), int(idx_text)
    raise ValueError(f"move {whole!r}: unknown source {text!r}; sources are nertz, waste, riverC[:I]")


@dataclass(frozen=True, eq=False)
class Move:
    """A move in docs/api.md's grammar. `sources` are source codes of nertz_env.encoding (bottom
    card first for a stack); `dst` is a River column (build, shift) or None (Lake);
    `index` is the shift's River index from the column bottom (None = the top card)."""

    kind: str
    sources: tuple = ()
    dst: int | None = None
    index: int | None = None

    @staticmethod
    def parse(text) -> "Move":
        if isinstance(text, Move):
            return text
        if not isinstance(text, str):
            raise ValueError(f"move {text!r} is not a string; moves are written like 'nertz>lake' (docs/api.md)")
        t = text.strip().lower().replace(" ", "")
        if t in ("wait", "flip", "call"):
            return Move(t)
        if t.count(">") != 1:
            raise ValueError(
                f"move {text!r} does not parse: write wait, flip, call, SRC>lake, SRC>riverC, "
                f"riverA:I>riverB or SRC+SRC>lake (docs/api.md)")
        src_text, dst_text = t.split(">")
        if dst_text == "lake":
            dst = None
        elif dst_text.startswith("river") and dst_text[5:].isdigit():
            dst = int(dst_text[5:])
            if dst >= MAX_RIVER:
                raise ValueError(f"move {text!r}: River column {dst} must be 0..{MAX_RIVER - 1}")
        else:
            raise ValueError(f"move {text!r}: unknown destination {dst_text!r}; use lake or riverC")
        parts = src_text.split("+")
        if len(parts) > 1:
            if dst is not None:
                raise ValueError(f"move {text!r}: a stack (R16) can only go to the lake")
            if len(parts) > STACK_MAX:
                raise ValueError(f"move {text!r}: a stack holds at most {STACK_MAX} cards (R16)")
            srcs = []
            for p in parts:
                s, idx = _parse_source(p, text)
                if idx is not None:
                    raise ValueError(f"move {text!r}: a stack names River tops as riverC, without index")
                srcs.append(s)
            if len(set(srcs)) != len(srcs):
                raise ValueError(f"move {text!r}: a stack names each source once")
            return Move("stack", tuple(srcs))
        src, idx = _parse_source(parts[0], text)
        if dst is None:
            if idx is not None:
                raise ValueError(f"move {text!r}: only a River column's top card goes to the Lake; "
                                 f"write river{src - SRC_RIVER0}>lake")
            return Move("lake", (src,))
        if src >= SRC_RIVER0:
            if src - SRC_RIVER0 == dst:
                raise ValueError(f"move {text!r}: a River shift needs two different columns (R14)")
            return Move("shift", (src,), dst, idx)
        return Move("build", (src,), dst)

    def __str__(self) -> str:
        if self.kind in ("wait", "flip", "call"):
            return self.kind
        if self.kind == "lake":
            return f"{source_text(self.sources[0])}>lake"
        if self.kind == "stack":
            return "+".join(source_text(s) for s in self.sources) + ">lake"
        if self.kind == "build":
            return f"{source_text(self.sources[0])}>river{self.dst}"
        col = self.sources[0] - SRC_RIVER0
        idx = "" if self.index is None else f":{self.index}"
        return f"river{col}{idx}>river{self.dst}"

    def __repr__(self) -> str:
        return f"Move({str(self)!r})"

    def __eq__(self, other) -> bool:
        if isinstance(other, str):
            try:
                other = Move.parse(other)
            except ValueError:
                return False
        return isinstance(other, Move) and str(self) == str(other)

    def __hash__(self) -> int:
        return hash(str(self))


def shift_id(col_from: int, index: int, col_to: int) -> int:
    """Action id of riverA:I>riverB (A = col_from, B = col_to)."""
    return _shift_id(col_from, index, col_to)


def encode_move(move: Move) -> int:
    """Action id of a move whose text is complete (a shift must carry its index)."""
    if move.kind == "wait":
        return WAIT
    if move.kind == "flip":
        return FLIP
    if move.kind == "call":
        return CALL
    if move.kind == "lake":
        return _lake_id(move.sources[0])
    if move.kind == "build":
        return _build_id(move.sources[0], move.dst)
    if move.kind == "shift":
        if move.index is None:
            raise ValueError(f"move {str(move)!r}: give the River index to encode a shift")
        return _shift_id(move.sources[0] - SRC_RIVER0, move.index, move.dst)
    return _stack_id(move.sources[0], len(move.sources))


def check_action_id(action, where: str = "action") -> int:
    """The one reading of a single action id, shared by every env and the Table: a Python
    or numpy integer (or a one-element integer array) in 0..N_ACTIONS-1. bool, float (even
    1.0), str and None are ValueErrors naming `where` and the allowed ids."""
    a = action
    if isinstance(a, np.ndarray) and a.size == 1 and a.dtype.kind in "iu":
        a = a.reshape(()).item()
    if isinstance(a, (bool, np.bool_)) or not isinstance(a, (int, np.integer)):
        raise ValueError(f"{where}: {action!r} is not an action id; action ids are ints "
                         f"0..{N_ACTIONS - 1} (nertz_env/actions.py)")
    a = int(a)
    if not 0 <= a < N_ACTIONS:
        raise ValueError(f"{where}: action id {a} is out of range; action ids are 0..{N_ACTIONS - 1}")
    return a


def check_action_array(actions, shape: tuple, where: str = "actions") -> np.ndarray:
    """The one reading of a batch of action ids: an integer array of exactly `shape` (no
    bool or float dtype, no silent cast) with every id in 0..N_ACTIONS-1; returned as int64.
    A ValueError names `where`, the index and the id otherwise."""
    a = np.asarray(actions)
    if a.dtype.kind not in "iu":
        raise ValueError(f"{where}: dtype {a.dtype} is not an integer dtype; action ids are "
                         f"ints 0..{N_ACTIONS - 1}")
    if a.shape != tuple(shape):
        raise ValueError(f"{where}: shape {a.shape}; expected {tuple(shape)}")
    bad = (a < 0) | (a >= N_ACTIONS)
    if bad.any():
        i = tuple(int(x) for x in np.argwhere(bad)[0])
        raise ValueError(f"{where}: action id {int(a[i])} at index {i} is out of range; "
                         f"action ids are 0..{N_ACTIONS - 1}")
    return a.astype(np.int64)


def decode(action) -> tuple:
    """(kind name, src, dst, index, length) of a valid action id (core/codec.py decode, the
    kind as its name in KINDS). ValueError for anything but an id 0..N_ACTIONS-1."""
    kind, src, dst, index, length = _decode(check_action_id(action))
    return KINDS[kind], src, dst, index, length


def decode_simple(action: int) -> Move | tuple:
    """Move for every id but a stack; for a stack, ('stack', bottom source, length)."""
    kind, src, dst, index, length = decode(action)
    if kind in ("wait", "flip", "call"):
        return Move(kind)
    if kind == "lake":
        return Move("lake", (src,))
    if kind == "build":
        return Move("build", (src,), dst)
    if kind == "shift":
        return Move("shift", (src,), dst, index)
    return ("stack", src, length)
