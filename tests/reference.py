"""A slow, plain-Python reference implementation of the Nertz rules: the test oracle.

It is written from ``docs/rules.md`` (rule ids R1-R31), ``docs/api.md`` (card, layout and
move texts) and ``docs/engine_contract.md`` (decisions D1-D21) only. It must never import
``nertz_env`` (nor read it): it exists to catch misreadings of the rules by the fast core, so
it must not share them. Standard library only.

State is two dataclasses of plain lists, every pile stored bottom -> top, and the Lake keeps
every card of every pile (with its owning deck). Each rule is one small function whose
docstring names its rule id. Speed is not a goal; being obviously right is.
"""
from __future__ import annotations

import copy
import operator
import re
from dataclasses import dataclass, field

# --------------------------------------------------------------------------------------------
# Cards (R1, R2, D1)
# --------------------------------------------------------------------------------------------

RANK_OF_TEXT = {
    "A": 1, "2": 2, "3": 3, "4": 4, "5": 5, "6": 6, "7": 7, "8": 8, "9": 9,
    "10": 10, "T": 10, "J": 11, "Q": 12, "K": 13,
}
TEXT_OF_RANK = {1: "A", 2: "2", 3: "3", 4: "4", 5: "5", 6: "6", 7: "7", 8: "8", 9: "9",
                10: "10", 11: "J", 12: "Q", 13: "K"}
SUITS = "SHDC"
RED_SUITS = "HD"
ACE, KING = 1, 13


@dataclass(frozen=True)
class Card:
    """R1: a card is (deck, suit, rank); rank A=1 ... K=13."""
    deck: int
    rank: int
    suit: str

    def is_red(self) -> bool:
        """R1: hearts and diamonds are red, spades and clubs black."""
        return self.suit in RED_SUITS

    def text(self, default_deck: int) -> str:
        """D1: canonical text; `@N` only when the deck is not the default one."""
        body = TEXT_OF_RANK[self.rank] + self.suit
        if self.deck != default_deck:
            body += f"@{self.deck}"
        return body


def parse_card(text, default_deck: int, num_decks: int) -> Card:
    """R2: rank, suit, optional @N; case-insensitive; T accepted for 10."""
    if not isinstance(text, str):
        raise ValueError(f"not a card: {text!r}")
    body = text.strip().upper()
    deck = default_deck
    if "@" in body:
        body, _, deck_text = body.partition("@")
        if not deck_text.isdigit():
            raise ValueError(f"not a card: {text!r} (bad deck after @)")
        deck = int(deck_text)
    if len(body) < 2 or body[:-1] not in RANK_OF_TEXT or body[-1] not in SUITS:
        raise ValueError(f"not a card: {text!r}")
    if not 0 <= deck < num_decks:
        raise ValueError(f"not a card: {text!r} (deck {deck} does not exist)")
    return Card(deck=deck, rank=RANK_OF_TEXT[body[:-1]], suit=body[-1])


# --------------------------------------------------------------------------------------------
# State
# --------------------------------------------------------------------------------------------


@dataclass
class TeamState:
    """One team's own piles, all bottom -> top."""
    nertz: list            # list[Card]; the last is the face-up top (R6)
    river: list            # list[list[Card]], river_size columns (R5)
    stream: list           # list[Card]: L = s0, s1, ... (stock and waste together, R15/D8)
    waste: int = 0         # k: how many of L have been flipped; L[k-1] is available (D8)


@dataclass
class TableState:
    lake: list                                      # list[list[Card]] in start order (D4)
    teams: list                                     # list[TeamState]
    tick: int = 0
    hand: int = 0
    ready: list = field(default_factory=list)       # per seat (D3, R21)
    turnovers: list = field(default_factory=list)   # per team (D3, R27)
    burns: int = 0                                  # (D3, R27, R28)
    penalties: list = field(default_factory=list)   # per team (D3, R31)
    callers: list = field(default_factory=list)     # teams, ascending (D3, R24)


# --------------------------------------------------------------------------------------------
# Card placement predicates (R10-R14, D5-D7)
# --------------------------------------------------------------------------------------------


def lake_pile_for(card: Card, lake: list):
    """R10, D5: index of the Lake pile the card goes onto now, or None if it cannot.

    An ace starts a new pile at the end of the list (index len(lake)); any other card goes on
    the first pile in Lake order whose top is one rank lower in the same suit (any deck).
    A pile topped by a K is dead: nothing is one rank above a K, so nothing fits it.
    """
    if card.rank == ACE:
        return len(lake)
    for index, pile in enumerate(lake):
        top = pile[-1]
        if top.suit == card.suit and top.rank == card.rank - 1:
            return index
    return None


def can_play_on_lake(card: Card, lake: list) -> bool:
    """R10."""
    return lake_pile_for(card, lake) is not None


def can_place_on_river(card: Card, column: list) -> bool:
    """R11 (build), R12 (fill), D6: never an ace; an empty column takes any other card; else
    the column's top must be one rank higher and of the opposite colour."""
    if card.rank == ACE:
        return False
    if not column:
        return True
    top = column[-1]
    return top.rank == card.rank + 1 and top.is_red() != card.is_red()


def can_shift(column_a: list, index: int, column_b: list) -> bool:
    """R14, D6, D7: move cards index..top of column A onto column B (B != A checked by caller).

    Legal when the part holds no ace and either B is empty and index > 0 (a whole column into
    an empty column changes nothing and is not a move), or B's top is one rank higher and of
    opposite colour than the part's bottom card (column A's card `index`).
    """
    if not 0 <= index < len(column_a):
        return False
    part = column_a[index:]
    if any(card.rank == ACE for card in part):
        return False
    if not column_b:
        return index > 0
    top = column_b[-1]
    bottom = part[0]
    return top.rank == bottom.rank + 1 and top.is_red() != bottom.is_red()


# --------------------------------------------------------------------------------------------
# Available cards (R9)
# --------------------------------------------------------------------------------------------


def card_at(team: TeamState, source: str):
    """The card a source name ('nertz', 'waste', 'riverC') currently makes available, or None.

    R9: the top Nertz card, the top Stream (waste) card L[k-1] (D8), the top of each column.
    """
    if source == "nertz":
        return team.nertz[-1] if team.nertz else None
    if source == "waste":
        return team.stream[team.waste - 1] if team.waste > 0 else None
    column = team.river[int(source[len("river"):])]
    return column[-1] if column else None


def available_sources(team: TeamState) -> list:
    """R9: (source name, card) for each available card: Nertz top, waste top, River tops 0..r-1."""
    names = ["nertz", "waste"] + [f"river{c}" for c in range(len(team.river))]
    result = []
    for name in names:
        card = card_at(team, name)
        if card is not None:
            result.append((name, card))
    return result


def remove_from_source(team: TeamState, source: str) -> Card:
    """Take the available card off its source (the caller checked it is there)."""
    if source == "nertz":
        return team.nertz.pop()
    if source == "waste":
        # D8: playing the waste card removes L[k-1] and sets k = k - 1.
        card = team.stream.pop(team.waste - 1)
        team.waste -= 1
        return card
    return team.river[int(source[len("river"):])].pop()


# --------------------------------------------------------------------------------------------
# Moves (docs/api.md grammar)
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Move:
    """One move. kind is wait / flip / call / lake (single or stack) / build / shift.

    lake:  sources = names bottom card first ('nertz', 'waste', 'riverC'); 1 card = single play
    build: sources = (src,), column = destination column (R11 build or R12 fill)
    shift: shift_from = column A, index = i, column = column B (R14, D7)
    """
    kind: str
    sources: tuple = ()
    column: int = -1
    shift_from: int = -1
    index: int = -1

    def text(self) -> str:
        """Canonical text (docs/api.md)."""
        if self.kind in ("wait", "flip", "call"):
            return self.kind
        if self.kind == "lake":
            return "+".join(self.sources) + ">lake"
        if self.kind == "build":
            return f"{self.sources[0]}>river{self.column}"
        return f"river{self.shift_from}:{self.index}>river{self.column}"


SOURCE_RE = re.compile(r"^(nertz|waste|river(\d+)(?::(\d+))?)$")


def parse_move(text, team: TeamState) -> Move:
    """docs/api.md grammar. A shift without an index means the top card alone (index from `team`'s
    River at the start of the tick). A string that does not parse is a ValueError."""
    if not isinstance(text, str):
        raise ValueError(f"not a move: {text!r}")
    body = text.strip().lower()
    if body in ("wait", "flip", "call"):
        return Move(kind=body)
    if body.count(">") != 1:
        raise ValueError(f"not a move: {text!r}")
    left, right = body.split(">")
    parts = left.split("+")
    matches = [SOURCE_RE.match(part) for part in parts]
    if not left or any(m is None for m in matches):
        raise ValueError(f"not a move: {text!r}")
    if right == "lake":
        # AMBIGUOUS: docs/api.md's grammar lets a Lake play name "riverC:I", and lets stack sources
        # come in any order, but only canonical texts are legal moves. Such texts are kept as
        # written, so they never equal a legal move's text: they are illegal moves (R31), not
        # normalised. Only the shift without an index is normalised (docs/api.md says so).
        return Move(kind="lake", sources=tuple(parts))
    dest = re.match(r"^river(\d+)$", right)
    if dest is None or len(parts) != 1:
        raise ValueError(f"not a move: {text!r}")
    column = int(dest.group(1))
    source = parts[0]
    if source in ("nertz", "waste"):
        return Move(kind="build", sources=(source,), column=column)
    match = matches[0]
    column_a = int(match.group(2))
    if match.group(3) is not None:
        index = int(match.group(3))
    elif column_a < len(team.river):
        index = len(team.river[column_a]) - 1          # the top card alone
    else:
        index = -1
    return Move(kind="shift", shift_from=column_a, index=index, column=column)


# --------------------------------------------------------------------------------------------
# The table
# --------------------------------------------------------------------------------------------


class RefTable:
    """The reference table: build from a layout or a deal, list legal moves, step ticks."""

    # ---- construction ----------------------------------------------------------------------

    def __init__(self, config, state: TableState):
        self.config = config
        self.state = state
        self.num_teams = len(state.teams)
        sizes = list(config.team_sizes) if config.team_sizes is not None else [1] * self.num_teams
        if len(sizes) != self.num_teams:
            raise ValueError(f"team_sizes has {len(sizes)} entries for {self.num_teams} teams")
        # Seats are numbered team by team, team 0's seats first (R3, docs/api.md).
        self.seat_team = []
        self.team_seats = []
        for team, size in enumerate(sizes):
            first = len(self.seat_team)
            self.team_seats.append(list(range(first, first + size)))
            self.seat_team.extend([team] * size)
        self.num_seats = len(self.seat_team)
        self.speeds = list(config.speeds) if config.speeds is not None else [1] * self.num_seats
        costs = dict(config.move_ticks) if config.move_ticks is not None else {}
        self.costs = {kind: int(costs.get(kind, 1)) for kind in ("flip", "lake", "river", "shift")}
        if not state.ready:
            state.ready = [0] * self.num_seats
        if not state.turnovers:
            state.turnovers = [0] * self.num_teams
        if not state.penalties:
            state.penalties = [0] * self.num_teams
        if len(state.ready) != self.num_seats:
            raise ValueError(f"ready has {len(state.ready)} entries for {self.num_seats} seats")

    @classmethod
    def from_layout(cls, layout: dict, config, hand: int | None = None) -> "RefTable":
        """docs/api.md layout plus the optional keys of D3."""
        teams_in = layout["teams"]
        num_decks = len(teams_in)
        if num_decks != config.num_teams:
            raise ValueError(f"teams: layout has {num_decks} teams, config {config.num_teams}")
        lake = [[parse_card(c, 0, num_decks) for c in pile] for pile in layout.get("lake", [])]
        teams = []
        for t, entry in enumerate(teams_in):
            river = [[parse_card(c, t, num_decks) for c in col] for col in entry.get("river", [])]
            if len(river) != config.river_size:
                raise ValueError(f"teams[{t}].river: {len(river)} columns, "
                                 f"river_size is {config.river_size}")
            stream = [parse_card(c, t, num_decks) for c in entry.get("stream", [])]
            waste = int(entry.get("waste", 0))
            if not 0 <= waste <= len(stream):
                raise ValueError(f"teams[{t}].waste: {waste} not in 0..{len(stream)}")
            teams.append(TeamState(
                nertz=[parse_card(c, t, num_decks) for c in entry.get("nertz", [])],
                river=river, stream=stream, waste=waste))
        state = TableState(
            lake=lake, teams=teams,
            tick=int(layout.get("tick", 0)),
            hand=int(hand if hand is not None else layout.get("hand", 0)),
            ready=[int(x) for x in layout.get("ready", [])],
            turnovers=[int(x) for x in layout.get("turnovers", [])],
            burns=int(layout.get("burns", 0)),
            penalties=[int(x) for x in layout.get("penalties", [])],
            callers=sorted(int(x) for x in layout.get("callers", [])))
        return cls(config, state)

    @classmethod
    def deal(cls, config, decks: list, hand: int = 0) -> "RefTable":
        """D2 (R5-R8): deck[0] is the top; deck[0..r-1] to River columns 0..r-1; the next 13
        to the Nertz pile, dealt one by one (deck[r] bottom, deck[r+12] top); the rest is the
        Stream in deal order (s0 = deck[r+13]); waste count 0; tick 0."""
        num_decks = len(decks)
        if num_decks != config.num_teams:
            raise ValueError(f"decks: {num_decks} decks for {config.num_teams} teams")
        r = config.river_size
        teams = []
        for t, deck_text in enumerate(decks):
            deck = [parse_card(c, t, num_decks) for c in deck_text]
            if len(deck) != 52 or len(set(deck)) != 52:
                raise ValueError(f"decks[{t}]: need 52 distinct cards")
            teams.append(TeamState(
                nertz=deck[r:r + 13],
                river=[[deck[c]] for c in range(r)],
                stream=deck[r + 13:],
                waste=0))
        return cls(config, TableState(lake=[], teams=teams, tick=0, hand=hand))

    # ---- output ----------------------------------------------------------------------------

    def layout(self) -> dict:
        """D3: the full layout in canonical card text (D1)."""
        s = self.state
        return {
            "lake": [[card.text(0) for card in pile] for pile in s.lake],
            "teams": [
                {"nertz": [card.text(t) for card in team.nertz],
                 "river": [[card.text(t) for card in col] for col in team.river],
                 "stream": [card.text(t) for card in team.stream],
                 "waste": team.waste}
                for t, team in enumerate(s.teams)],
            "tick": s.tick,
            "hand": s.hand,
            "ready": list(s.ready),
            "turnovers": list(s.turnovers),
            "burns": s.burns,
            "penalties": list(s.penalties),
            "callers": sorted(s.callers),
        }

    def available_cards(self, team: int) -> list:
        """R9: Nertz top, waste top, River column tops 0..r-1 (existing ones only)."""
        return [card.text(team) for _, card in available_sources(self.state.teams[team])]

    @property
    def tick(self) -> int:
        return self.state.tick

    @property
    def hand_over(self) -> bool:
        """D3: a finished hand is one with callers, or with tick >= max_ticks."""
        return bool(self.state.callers) or self.state.tick >= self.config.max_ticks

    def hand_scores(self) -> list:
        """D20 (R25, R29): lake_points x own cards in the Lake - nertz_penalty x cards left in
        the Nertz pile + nertz_bonus // k for each of k callers - penalty_points x penalties."""
        cfg = self.config
        s = self.state
        scores = []
        for t, team in enumerate(s.teams):
            in_lake = sum(1 for pile in s.lake for card in pile if card.deck == t)
            score = cfg.lake_points * in_lake - cfg.nertz_penalty * len(team.nertz)
            if t in s.callers:
                score += cfg.nertz_bonus // len(s.callers)
            score -= cfg.penalty_points * s.penalties[t]
            scores.append(score)
        return scores

    # ---- roles -----------------------------------------------------------------------------

    def stream_seat(self, team: int) -> int:
        """R4, D9: the seat that holds the Stream this hand. A solo seat holds both roles. In a
        two-player team the first seat holds the Nertz pile in even hands (and in every hand
        without alternate_roles), so the second seat holds the Stream; in odd hands with
        alternate_roles the roles swap."""
        seats = self.team_seats[team]
        if len(seats) == 1:
            return seats[0]
        # AMBIGUOUS: R4 does not say who holds what with alternate_roles=False; the literal
        # reading is that the hand-0 roles (first seat Nertz, second Stream) are kept forever.
        if self.config.alternate_roles and self.state.hand % 2 == 1:
            return seats[0]
        return seats[1]

    def is_ready(self, seat: int) -> bool:
        """D3, R21: a seat is ready when tick >= ready[seat]."""
        return self.state.tick >= self.state.ready[seat]

    # ---- legal moves -----------------------------------------------------------------------

    def lake_moves(self, team: TeamState) -> list:
        """R10, R13: every available card that can go on the Lake, as a single play."""
        return [Move(kind="lake", sources=(name,))
                for name, card in available_sources(team) if can_play_on_lake(card, self.state.lake)]

    def stack_moves(self, team: TeamState) -> list:
        """R16, D10: runs of >= 2 available cards, one suit, consecutive ascending ranks, bottom
        card playable by R10; each run is one move, sources listed bottom card first. Found by
        extending each run one available card at a time (so at most river_size + 2 cards)."""
        if not self.config.stacking:
            return []
        available = available_sources(team)
        moves = []

        def extend(run):
            last = run[-1][1]
            for name, card in available:
                if any(name == used for used, _ in run):
                    continue
                if card.suit == last.suit and card.rank == last.rank + 1:
                    longer = run + [(name, card)]
                    moves.append(Move(kind="lake", sources=tuple(n for n, _ in longer)))
                    extend(longer)

        for name, card in available:
            if can_play_on_lake(card, self.state.lake):
                extend([(name, card)])
        return moves

    def river_moves(self, team: TeamState) -> list:
        """R11 build, R12 fill, D6: the top Nertz card or the waste card onto a River column."""
        moves = []
        for name in ("nertz", "waste"):
            card = card_at(team, name)
            if card is None:
                continue
            for c, column in enumerate(team.river):
                if can_place_on_river(card, column):
                    moves.append(Move(kind="build", sources=(name,), column=c))
        return moves

    def shift_moves(self, team: TeamState) -> list:
        """R14, D7: riverA:i>riverB for every A != B and every index i of column A."""
        moves = []
        for a, column_a in enumerate(team.river):
            for i in range(len(column_a)):
                for b, column_b in enumerate(team.river):
                    if b != a and can_shift(column_a, i, column_b):
                        moves.append(Move(kind="shift", shift_from=a, index=i, column=b))
        return moves

    def flip_moves(self, seat: int, team_index: int, team: TeamState) -> list:
        """R15, D8, D9: only the Stream seat (or a solo seat) flips; not a move with no cards."""
        if seat == self.stream_seat(team_index) and team.stream:
            return [Move(kind="flip")]
        return []

    def call_moves(self, team: TeamState) -> list:
        """R24, D11: Call only with auto_nertz=False and an empty Nertz pile."""
        if not self.config.auto_nertz and not team.nertz:
            return [Move(kind="call")]
        return []

    def bottom_card(self, team: TeamState, move: Move):
        """The bottom (first) card a Lake play names."""
        return card_at(team, move.sources[0])

    def apply_flow_rules(self, team: TeamState, moves: list) -> list:
        """R18, R19 (flow_rules), in the order of D12. Wait is added back by the caller.

        R18: the team has an available ace -> only Lake plays (single or stacked) whose bottom
        card is an ace. Else R19: the top Nertz card can go on the Lake now and the team has no
        empty River column -> only Lake plays (single or stacked) that include the Nertz card.
        """
        if not self.config.flow_rules:
            return moves
        if any(card.rank == ACE for _, card in available_sources(team)):
            return [m for m in moves
                    if m.kind == "lake" and self.bottom_card(team, m).rank == ACE]
        nertz_top = card_at(team, "nertz")
        has_empty_column = any(not column for column in team.river)
        if nertz_top is not None and can_play_on_lake(nertz_top, self.state.lake) \
                and not has_empty_column:
            return [m for m in moves if m.kind == "lake" and "nertz" in m.sources]
        return moves

    def legal_move_objects(self, seat: int) -> list:
        """D12: hand over -> wait; not ready -> wait; else R10-R17 and Call, then R18/R19."""
        wait = Move(kind="wait")
        if self.hand_over or not self.is_ready(seat):
            return [wait]
        team_index = self.seat_team[seat]
        team = self.state.teams[team_index]
        moves = (self.lake_moves(team) + self.stack_moves(team) + self.river_moves(team)
                 + self.shift_moves(team) + self.flip_moves(seat, team_index, team)
                 + self.call_moves(team))
        moves = self.apply_flow_rules(team, moves)
        return [wait] + moves

    def legal_moves(self, seat: int) -> list:
        """Canonical texts of the seat's legal moves; 'wait' always included."""
        if not 0 <= seat < self.num_seats:
            raise ValueError(f"seat {seat} does not exist (0..{self.num_seats - 1})")
        texts = []
        for move in self.legal_move_objects(seat):
            if move.text() not in texts:
                texts.append(move.text())
        return texts

    # ---- one tick --------------------------------------------------------------------------

    def resolution_order(self, priority) -> list:
        """D13: listed seats first (in the listed order), the rest after them in seat order.

        R23's "teammates' moves in the same tick resolve in the same order" is read as: they
        take no special place, they resolve in this one order like everyone else's.
        """
        order = []
        # AMBIGUOUS: a seat listed twice in `priority` keeps its first place; a seat number
        # outside 0..n-1 is a ValueError.
        for seat in [operator.index(x) for x in (priority or [])]:
            if not 0 <= seat < self.num_seats:
                raise ValueError(f"priority names seat {seat}, which does not exist")
            if seat not in order:
                order.append(seat)
        return order + [seat for seat in range(self.num_seats) if seat not in order]

    def named_cards(self, team: TeamState, move: Move):
        """D14, R23: what a move is tied to, read at the start of the tick."""
        if move.kind in ("lake", "build"):
            return [(name, card_at(team, name)) for name in move.sources]
        if move.kind == "shift":
            return list(team.river[move.shift_from][move.index:])
        return None

    def set_ready_after_move(self, seat: int, cost_kind: str) -> None:
        """R21, D15: a move of cost c chosen at tick t makes the seat ready at t + p*c,
        whether it succeeded or failed."""
        self.state.ready[seat] = self.state.tick + self.speeds[seat] * self.costs[cost_kind]

    def set_ready_after_wait(self, seat: int) -> None:
        """R21, D15: Wait, Call, a penalized/ignored illegal move: ready = max(ready, t + 1)."""
        self.state.ready[seat] = max(self.state.ready[seat], self.state.tick + 1)

    def reset_idle_counts(self) -> None:
        """D16 (R27): a successful card move zeroes every turn-over count and the burn count."""
        self.state.turnovers = [0] * self.num_teams
        self.state.burns = 0

    def resolve_lake(self, team: TeamState, named: list) -> bool:
        """R10, R16, R22, D5, D14: every named card must still be where it was and available;
        then the bottom card must fit a Lake pile now (first fitting pile, or a new pile for an
        ace); the run goes onto it, bottom first."""
        for name, card in named:
            if card_at(team, name) != card:
                return False
        target = lake_pile_for(named[0][1], self.state.lake)
        if target is None:
            return False
        if target == len(self.state.lake):
            self.state.lake.append([])
        for name, _ in named:
            self.state.lake[target].append(remove_from_source(team, name))
        return True

    def resolve_build(self, team: TeamState, named: list, column: int) -> bool:
        """R11, R12, R22, D14: the card must still be at its source; the destination column is
        checked as it is now (a build whose column was emptied becomes a fill)."""
        name, card = named[0]
        if card_at(team, name) != card:
            return False
        if not can_place_on_river(card, team.river[column]):
            return False
        team.river[column].append(remove_from_source(team, name))
        return True

    def resolve_shift(self, team: TeamState, move: Move, part: list) -> bool:
        """R14, R22, D7, D14: column A must still hold exactly cards i..top it held at the start
        of the tick; column B is checked as it is now."""
        column_a = team.river[move.shift_from]
        if len(column_a) != move.index + len(part) or column_a[move.index:] != part:
            return False
        if not can_shift(column_a, move.index, team.river[move.column]):
            return False
        del column_a[move.index:]
        team.river[move.column].extend(part)
        return True

    def resolve_flip(self, team_index: int) -> bool:
        """R15, D8, D14: fails only when the Stream is empty by then. k < n: k = min(k+3, n);
        k == n: turn the Stream over (k = 0) and count a turn-over."""
        team = self.state.teams[team_index]
        n = len(team.stream)
        if n == 0:
            return False
        if team.waste < n:
            team.waste = min(team.waste + 3, n)
        else:
            team.waste = 0
            self.state.turnovers[team_index] += 1
        return True

    def burn_streams(self) -> None:
        """R27, R28, D17(2): gather every non-empty Stream (k = 0) and move s0 to the end;
        zero the turn-over counts; count the burn; from the 4th burn in a row, every Nertz pile
        of 2+ cards moves its top card to the bottom."""
        s = self.state
        for team in s.teams:
            if team.stream:
                team.waste = 0
                team.stream = team.stream[1:] + team.stream[:1]
        s.turnovers = [0] * self.num_teams
        s.burns += 1
        if s.burns >= 4:
            for team in s.teams:
                if len(team.nertz) >= 2:
                    team.nertz = [team.nertz[-1]] + team.nertz[:-1]

    def table_is_idle(self) -> bool:
        """R27, D17(2): some team has a non-empty Stream, and every team with a non-empty
        Stream has turned it over at least twice since the last card move."""
        s = self.state
        with_stream = [t for t, team in enumerate(s.teams) if team.stream]
        return bool(with_stream) and all(s.turnovers[t] >= 2 for t in with_stream)

    def step(self, moves: dict, priority: list | None = None) -> dict:
        """One tick: D13-D19, R20-R31."""
        s = self.state
        cfg = self.config
        if self.hand_over:
            raise ValueError("the hand is over")                       # D19
        given = {}
        for seat, text in dict(moves or {}).items():
            try:
                index = operator.index(seat)
            except TypeError:
                raise ValueError(f"moves names seat {seat!r}, which is not a seat number") from None
            if not 0 <= index < self.num_seats:
                raise ValueError(f"moves names seat {seat!r}, which does not exist")
            given[index] = text
        moves = given
        order = self.resolution_order(priority)

        # D13, D18: every move is checked against the start-of-tick position, before anything
        # changes. A text that does not parse is a ValueError whatever illegal_move says.
        # AMBIGUOUS: R31/D18 speak of illegal moves only; an unparseable text follows docs/api.md
        # ("a string that does not parse is a ValueError") even with "penalize"/"ignore".
        chosen = {}          # seat -> Move (legal) or None (illegal: treated as Wait)
        for seat in range(self.num_seats):
            text = moves.get(seat, "wait")
            team = s.teams[self.seat_team[seat]]
            move = parse_move(text, team)
            legal = {m.text(): m for m in self.legal_move_objects(seat)}
            if move.text() in legal:
                chosen[seat] = legal[move.text()]
            elif cfg.illegal_move == "raise":
                raise ValueError(f"illegal move for seat {seat}: {text!r}")
            else:
                chosen[seat] = None
        # R23, D14: each move is tied to the cards it names at the start of the tick.
        named = {seat: self.named_cards(s.teams[self.seat_team[seat]], move)
                 for seat, move in chosen.items() if move is not None}

        applied = {}
        called = set()
        for seat in order:                                             # D13, R22
            move = chosen[seat]
            team_index = self.seat_team[seat]
            team = s.teams[team_index]
            if move is None:                                           # D18, R31
                if cfg.illegal_move == "penalize":
                    s.penalties[team_index] += 1
                self.set_ready_after_wait(seat)
                applied[seat] = False
            elif move.kind == "wait":                                  # R17
                self.set_ready_after_wait(seat)
                applied[seat] = True
            elif move.kind == "call":                                  # R24, D11: never fails
                called.add(team_index)
                self.set_ready_after_wait(seat)
                applied[seat] = True
            elif move.kind == "flip":                                  # R15, D8
                applied[seat] = self.resolve_flip(team_index)
                self.set_ready_after_move(seat, "flip")
            else:
                if move.kind == "lake":                                # R10, R16
                    ok = self.resolve_lake(team, named[seat])
                    cost = "lake"
                elif move.kind == "build":                             # R11, R12
                    ok = self.resolve_build(team, named[seat], move.column)
                    cost = "river"
                else:                                                  # R14
                    ok = self.resolve_shift(team, move, named[seat])
                    cost = "shift"
                if ok:
                    self.reset_idle_counts()                           # D16
                self.set_ready_after_move(seat, cost)
                applied[seat] = ok

        # D17 (1): callers.
        # AMBIGUOUS: a layout may start with an empty Nertz pile and no callers; callers are
        # only ever computed here, at the end of a tick, so that hand ends at the end of its
        # next tick (D17 read literally), and hand_over is False until then.
        if cfg.auto_nertz:
            callers = sorted(t for t, team in enumerate(s.teams) if not team.nertz)
        else:
            callers = sorted(called)
        # D17 (2): idle check (only when nobody called).
        if not callers and self.table_is_idle():
            self.burn_streams()
        s.callers = callers
        s.tick += 1                                                    # D17 (3)
        truncated = not callers and s.tick >= cfg.max_ticks            # D17 (4), R26
        return {
            "applied": {seat: applied[seat] for seat in range(self.num_seats)},
            "callers": list(callers),
            "hand_over": self.hand_over,
            "truncated": truncated,
        }

    # ---- helpers for tests -----------------------------------------------------------------

    def copy(self) -> "RefTable":
        return RefTable(self.config, copy.deepcopy(self.state))
