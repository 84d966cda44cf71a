"""Why a move is not legal: `explain_illegal(table, seat, move)` names the rule (docs/rules.md id).

A person playing through a web page or a terminal needs more than "illegal": this module
reads the position through the readable Table API only (layout, legal moves, config) and
names the first rule that forbids the move, checked in the order the engine decides
legality (docs/engine_contract.md D12): the hand is over (R24, R26); the seat is busy (R21);
the move itself (its cards must be available, R9, and fit where they go, R10-R16; only the
Stream seat flips, R4); then the flow rules (R18, R19). The engine stays the judge: a move
it lists as legal gets "" whatever this module would say, so the two never disagree on
legality, only the wording is ours.
"""
from __future__ import annotations

import re
from itertools import pairwise

from ..actions import Move
from ..encoding import (ACE, KING, RANKS, SRC_NERTZ, SRC_RIVER0, SRC_WASTE, is_red, parse_card,
                     rank_of, suit_of)

SUIT_NAMES = ("spades", "hearts", "diamonds", "clubs")
_BLOCKED_TO_LAKE = re.compile(r"^river(\d):(\d+)>lake$")


def _card(text: str) -> int:
    return parse_card(text)[1]


def _colour(card: int) -> str:
    return "red" if is_red(card) else "black"


def _wanted_on(card: int) -> str:
    """'a black 8 (8S or 8C)': the River tops a card builds on (R11)."""
    rank = RANKS[rank_of(card) + 1]
    suits = "SC" if is_red(card) else "HD"
    return f"a {'black' if is_red(card) else 'red'} {rank} ({rank}{suits[0]} or {rank}{suits[1]})"


class _View:
    """The seat's team, its available cards and the Lake, read from the layout."""

    def __init__(self, table, seat: int):
        self.table, self.seat = table, seat
        self.config = table.config
        self.lay = table.layout()
        self.team = self.config.seat_team[seat]
        self.mine = self.lay["teams"][self.team]

    def source(self, src: int) -> str | None:
        """The card text at a source (R9), None when the source is empty."""
        m = self.mine
        if src == SRC_NERTZ:
            return m["nertz"][-1] if m["nertz"] else None
        if src == SRC_WASTE:
            return m["stream"][m["waste"] - 1] if m["waste"] else None
        col = m["river"][src - SRC_RIVER0]
        return col[-1] if col else None

    def source_name(self, src: int) -> str:
        if src == SRC_NERTZ:
            return "the Nertz pile"
        if src == SRC_WASTE:
            return "the waste"
        return f"River column {src - SRC_RIVER0}"

    def missing(self, src: int) -> str:
        """R9's reason for an empty source."""
        if src == SRC_NERTZ:
            return "R9: the Nertz pile is empty, so it has no available card"
        if src == SRC_WASTE:
            if self.mine["stream"]:
                return "R9: no Stream card is available (the waste is empty): flip first (R15)"
            return "R9: the Stream is empty, so there is no waste card"
        return f"R9: River column {src - SRC_RIVER0} is empty, so it has no available card"

    def lake_reason(self, card_text: str) -> str:
        """'' when the card can go on the Lake now (R10), else why not."""
        card = _card(card_text)
        if rank_of(card) == ACE:
            return ""
        suit, wants = suit_of(card), []
        for pile in self.lay["lake"]:
            top = _card(pile[-1])
            if suit_of(top) != suit:
                continue
            if rank_of(top) + 1 == rank_of(card):
                return ""
            if rank_of(top) != KING:
                wants.append(RANKS[rank_of(top) + 1] + "SHDC"[suit])
        name, below = SUIT_NAMES[suit], RANKS[rank_of(card) - 1] + "SHDC"[suit]
        wants = list(dict.fromkeys(wants))       # two piles may want the same card
        if not wants:
            return (f"R10: {card_text} needs {below} on top of a {name} Lake pile, and no "
                    f"{name} pile is open (only an ace starts one)")
        return (f"R10: the Lake pile{'s' if len(wants) > 1 else ''} of {name} need"
                f"{'' if len(wants) > 1 else 's'} {' or '.join(wants)} next, not {card_text}")

    def river_reason(self, card_text: str, col: int, what: str, rule: str) -> str:
        """'' when `card_text` (the bottom of what moves) may go onto River column `col`
        (R11, R12, R14), else why not."""
        card = _card(card_text)
        target = self.mine["river"][col]
        if rank_of(card) == ACE:
            return f"R11: {what} is an ace, and no move places an ace on the River"
        if not target:
            return ""
        top = _card(target[-1])
        if rank_of(top) == rank_of(card) + 1 and is_red(top) != is_red(card):
            return ""
        if rank_of(card) == KING:
            return (f"{rule}: nothing ranks above a king, so {card_text} goes only into an empty "
                    f"River column (R12); River column {col}'s top is {target[-1]}")
        return (f"{rule}: {card_text} goes on {_wanted_on(card)}; River column {col}'s top is "
                f"{target[-1]}")


def _parse(text: str, view: _View) -> Move | str:
    """The Move, or the reason its text is refused (grammar, a blocked card, a column)."""
    if isinstance(text, Move):
        move = text
    else:
        if not isinstance(text, str):
            return f"docs/api.md: a move is text like 'waste>lake', got {text!r}"
        t = text.strip().lower().replace(" ", "")
        blocked = _BLOCKED_TO_LAKE.match(t)
        if blocked:
            col, idx = int(blocked.group(1)), int(blocked.group(2))
            cols = view.mine["river"]
            if col < len(cols) and idx < len(cols[col]) - 1:
                above = len(cols[col]) - 1 - idx
                return (f"R9: {cols[col][idx]} is not an available card: {above} card"
                        f"{'s' if above > 1 else ''} cover{'s' if above == 1 else ''} it in "
                        f"River column {col}; only a column's top card may go to the Lake")
        try:
            move = Move.parse(t)
        except ValueError as err:             # the grammar's reference named once, first
            return f"docs/api.md: {str(err).removesuffix(' (docs/api.md)')}"
    cols = view.config.river_size
    named = [s - SRC_RIVER0 for s in move.sources if s >= SRC_RIVER0]
    named += [move.dst] if move.dst is not None else []
    for col in named:
        if col >= cols:
            return f"R5: this table's River has columns 0..{cols - 1}, not {col}"
    return move


def _stream_seat(view: _View) -> int:
    """R4: the seat of the team that holds the Stream this hand (a solo seat holds both)."""
    cfg = view.config
    seats = [s for s, t in enumerate(cfg.seat_team) if t == view.team]
    if len(seats) == 1:
        return seats[0]
    nertz_holder = view.lay.get("hand", 0) % 2 if cfg.alternate_roles else 0
    return seats[1 - nertz_holder]


def _move_reason(move: Move, view: _View) -> str:
    """Why the move itself is impossible now (R4, R9-R16, R24), '' if nothing forbids it."""
    mine, cfg = view.mine, view.config
    if move.kind == "flip":
        holder = _stream_seat(view)
        if holder != view.seat:
            return f"R4: only the Stream seat flips; this hand seat {holder} holds team {view.team}'s Stream"
        if not mine["stream"]:
            return "R15: the Stream is empty, so flip is not a move"
        return ""
    if move.kind == "call":
        if cfg.auto_nertz:
            return ("R24: call is a move only with auto_nertz=False; here the hand ends by itself "
                    "when a Nertz pile empties")
        if mine["nertz"]:
            n = len(mine["nertz"])
            return f"R24: call needs an empty Nertz pile; team {view.team} still has {n} card{'s' if n > 1 else ''} in it"
        return ""
    if move.kind == "wait":
        return ""
    if move.kind == "shift":
        col = move.sources[0] - SRC_RIVER0
        cards = mine["river"][col]
        if not cards:
            return view.missing(move.sources[0])
        idx = len(cards) - 1 if move.index is None else move.index
        if idx >= len(cards):
            return f"R14: River column {col} holds {len(cards)} card{'s' if len(cards) > 1 else ''} (index 0..{len(cards) - 1}), not index {idx}"
        part = cards[idx:]
        if any(rank_of(_card(c)) == ACE for c in part):
            return (f"R11: the part {' '.join(part)} holds an ace, and no move places an ace on "
                    f"the River")
        if not mine["river"][move.dst] and idx == 0:
            return (f"R14: moving the whole of River column {col} into an empty column changes "
                    f"nothing, so it is not a move")
        what = f"the moved part's bottom card {part[0]}"
        return view.river_reason(part[0], move.dst, what, "R14")
    srcs = move.sources
    cards = []
    for src in srcs:
        card = view.source(src)
        if card is None:
            return view.missing(src)
        cards.append(card)
    if move.kind == "build":
        return view.river_reason(cards[0], move.dst, cards[0], "R11")
    if move.kind == "stack":
        if not cfg.stacking:
            return "R16: stacking is off in these rules; play the cards one at a time"
        for a, b in pairwise(cards):
            ca, cb = _card(a), _card(b)
            if suit_of(ca) != suit_of(cb) or rank_of(cb) != rank_of(ca) + 1:
                return (f"R16: a stack is an ascending run of one suit, bottom card first; "
                        f"{b} does not follow {a}")
    return view.lake_reason(cards[0])


def _flow_reason(move: Move, view: _View) -> str:
    """R18, R19 (flow_rules): which card must go to the Lake first."""
    if not view.config.flow_rules:
        return ""
    mine = view.mine
    avail = [(s, view.source(s)) for s in [SRC_NERTZ, SRC_WASTE]
             + [SRC_RIVER0 + c for c in range(view.config.river_size)]]
    aces = [c for _, c in avail if c is not None and rank_of(_card(c)) == ACE]
    to_lake = move.kind in ("lake", "stack")
    if aces:
        if to_lake and rank_of(_card(view.source(move.sources[0]))) == ACE:
            return ""
        return (f"R18: the available ace {aces[0]} must go to the Lake first; until it does, "
                f"only Lake plays that start with an ace (or wait) are legal")
    top = mine["nertz"][-1] if mine["nertz"] else None
    has_empty = any(not col for col in mine["river"])
    if top is not None and not has_empty and not view.lake_reason(top):
        if to_lake and SRC_NERTZ in move.sources:
            return ""
        return (f"R19: the top Nertz card {top} can go to the Lake and team {view.team} has no "
                f"empty River column, so only Lake plays that include it (or wait) are legal")
    return ""


def explain_illegal(table, seat: int, move) -> str:
    """'' when `move` (text or Move) is legal for `seat` now, else one line naming the rule
    that forbids it, e.g. "R10: the Lake pile of hearts needs 5H next, not 7H" or
    "R21: seat 0 is busy until tick 12". A seat that does not exist is a ValueError."""
    legal = table.legal_moves(seat)            # checks the seat
    view = _View(table, seat)
    parsed = _parse(move, view)
    if isinstance(parsed, str):
        return parsed
    try:
        if table.is_legal(seat, parsed):
            return ""
    except ValueError:
        pass                                   # (a shift from an empty column: said below)
    lay = view.lay
    if table.hand_over:
        return hand_over_reason(table)
    if lay["ready"][seat] > lay["tick"]:
        return (f"R21: seat {seat} is busy until tick {lay['ready'][seat]} (now tick "
                f"{lay['tick']}); until then its only move is wait")
    reason = _move_reason(parsed, view) or _flow_reason(parsed, view)
    if reason:
        return reason
    shown = ", ".join(str(m) for m in legal)
    return f"R31: {parsed} is not among seat {seat}'s legal moves now ({shown})"


def hand_over_reason(table) -> str:
    """Why no move is played any more: the hand is over (R24 or R26); '' while it is not."""
    if not table.hand_over:
        return ""
    callers = table.layout()["callers"]
    if callers:
        return (f"R24: the hand is over: team{'s' if len(callers) > 1 else ''} "
                f"{', '.join(map(str, callers))} called Nertz")
    return f"R26: the hand is over: max_ticks={table.config.max_ticks} ticks were played"
