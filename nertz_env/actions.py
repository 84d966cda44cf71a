"""The action numbering shared by the core, the Table, the environments and the agents.

One fixed numbering for every table (any team count, River of 4 or 5), so that policies and
masks have one shape everywhere: actions naming River column 4 are simply never legal with a
4-column River.

    | ids       | count | move (API.md text)          | encoding                                  |
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

`Move` is the readable form: `Move.parse(text)` / `str(move)` follow API.md's grammar, and
moves compare equal by their canonical text.
"""
from __future__ import annotations

from dataclasses import dataclass

from .layout import COL_CAP, MAX_RIVER, N_SOURCES, SRC_NERTZ, SRC_RIVER0, SRC_WASTE

WAIT, FLIP, CALL = 0, 1, 2
LAKE0 = 3
BUILD0 = LAKE0 + N_SOURCES                      # 10
SHIFT0 = BUILD0 + 2 * MAX_RIVER                 # 20
SHIFT_PAIRS = MAX_RIVER * (MAX_RIVER - 1)       # 20
STACK0 = SHIFT0 + SHIFT_PAIRS * COL_CAP         # 280
STACK_MAX = MAX_RIVER + 2                       # R16: at most river_size + 2 cards
STACK_LENS = STACK_MAX - 1                      # lengths 2..7
N_ACTIONS = STACK0 + N_SOURCES * STACK_LENS     # 322

KINDS = ("wait", "flip", "call", "lake", "build", "shift", "stack")


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
    """A move in API.md's grammar. `sources` are source codes of nertz_env.layout (bottom
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
            raise ValueError(f"move {text!r} is not a string; moves are written like 'nertz>lake' (API.md)")
        t = text.strip().lower().replace(" ", "")
        if t in ("wait", "flip", "call"):
            return Move(t)
        if t.count(">") != 1:
            raise ValueError(
                f"move {text!r} does not parse: write wait, flip, call, SRC>lake, SRC>riverC, "
                f"riverA:I>riverB or SRC+SRC>lake (API.md)")
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
    b = col_to if col_to < col_from else col_to - 1
    return SHIFT0 + (4 * col_from + b) * COL_CAP + index


def encode_move(move: Move) -> int:
    """Action id of a move whose text is complete (a shift must carry its index)."""
    if move.kind == "wait":
        return WAIT
    if move.kind == "flip":
        return FLIP
    if move.kind == "call":
        return CALL
    if move.kind == "lake":
        return LAKE0 + move.sources[0]
    if move.kind == "build":
        return BUILD0 + MAX_RIVER * move.sources[0] + move.dst
    if move.kind == "shift":
        if move.index is None:
            raise ValueError(f"move {str(move)!r}: give the River index to encode a shift")
        return shift_id(move.sources[0] - SRC_RIVER0, move.index, move.dst)
    return STACK0 + STACK_LENS * move.sources[0] + (len(move.sources) - 2)


def check_action_id(action) -> int:
    if isinstance(action, bool) or not hasattr(action, "__index__"):
        raise ValueError(f"action {action!r} is not an int; action ids are 0..{N_ACTIONS - 1}")
    a = int(action)
    if not 0 <= a < N_ACTIONS:
        raise ValueError(f"action id {a} is out of range: action ids are 0..{N_ACTIONS - 1}")
    return a


def decode_simple(action: int) -> Move | tuple:
    """Move for every id but a stack; for a stack, ('stack', bottom source, length)."""
    a = check_action_id(action)
    if a == WAIT:
        return Move("wait")
    if a == FLIP:
        return Move("flip")
    if a == CALL:
        return Move("call")
    if a < BUILD0:
        return Move("lake", (a - LAKE0,))
    if a < SHIFT0:
        frm, col = divmod(a - BUILD0, MAX_RIVER)
        return Move("build", (frm,), col)
    if a < STACK0:
        pair, index = divmod(a - SHIFT0, COL_CAP)
        col_from, b = divmod(pair, MAX_RIVER - 1)
        col_to = b if b < col_from else b + 1
        return Move("shift", (SRC_RIVER0 + col_from,), col_to, index)
    src, length = divmod(a - STACK0, STACK_LENS)
    return ("stack", src, length + 2)
