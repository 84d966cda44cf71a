"""Table: the readable API of docs/api.md over an Engine with one table (like FEN in pgx).

Owns: layouts in and out (validated, D3), move text <-> action ids, the text picture. Every
rule is played by the core; this module only converts. Bad input is a ValueError naming the
part (a card, a column, a pile, a field) and the table is left unchanged.

Decision: `Table.from_layout(..., hand=None)` takes the hand number from the layout's "hand"
key (D3) when `hand` is None, so `Table.from_layout(t.layout())` is always the same position.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from ..actions import (FLIP, STACK0, Move, decode_simple,
                      encode_move, source_text)
from ..config import RulesConfig
from ..engine import Engine
from .positions import config_of, load_layout
from ..encoding import (DECK, N_RANKS, NO_CARD,
                     OVER_NERTZ, OVER_TRUNCATED, PLAYING, SRC_NERTZ, SRC_RIVER0, SRC_WASTE,
                     card_text, parse_card, rank_of)



@dataclass
class TickResult:
    """What one tick did (docs/api.md)."""
    applied: dict = field(default_factory=dict)   # seat -> bool: the move took effect
    callers: list = field(default_factory=list)   # teams that called Nertz this tick
    hand_over: bool = False
    truncated: bool = False                       # the hand ended by max_ticks (R26)


class Table:
    """One Nertz table: build it from a layout or a deal, list legal moves, play ticks."""

    def __init__(self, engine: Engine):
        self._engine = engine

    # ------------------------------------------------------------------ construction
    @classmethod
    def deal(cls, config: RulesConfig | None = None, seed=0, hand: int = 0) -> "Table":
        """A fresh seeded hand (R5-R8); `hand` decides the roles of R4."""
        eng = Engine(config, 1, seed)
        eng.reset(hands=[hand])
        return cls(eng)

    @classmethod
    def from_decks(cls, decks, config: RulesConfig | None = None, seed=0, hand: int = 0) -> "Table":
        """A hand dealt from explicit deck orders: decks[t] lists team t's 52 cards as text
        or ids, top of the deck first (D2)."""
        config = config if config is not None else RulesConfig()
        if not isinstance(config, RulesConfig):
            raise ValueError(f"config must be a RulesConfig, got {type(config).__name__}")
        T = config.num_teams
        if not isinstance(decks, (list, tuple)) or len(decks) != T:
            raise ValueError(f"decks must be a list of {T} decks (one per team), got {decks!r:.80}")
        rows = []
        for t, deck in enumerate(decks):
            if not isinstance(deck, (list, tuple)) or len(deck) != DECK:
                raise ValueError(f"decks[{t}] must list the team's {DECK} cards, top first")
            row = []
            for i, c in enumerate(deck):
                if isinstance(c, str):
                    deck_no, cid = parse_card(c, t)
                    if deck_no != t:
                        raise ValueError(f"decks[{t}][{i}] = {c!r} belongs to deck {deck_no}")
                elif isinstance(c, (int, np.integer)) and not isinstance(c, (bool, np.bool_)) \
                        and 0 <= c < DECK:
                    cid = int(c)
                else:
                    raise ValueError(f"decks[{t}][{i}] = {c!r}: a card text ('10H') or id 0..{DECK - 1}")
                row.append(cid)
            rows.append(row)
        eng = Engine(config, 1, seed)
        eng.deal(np.array([rows]), hands=[hand])
        return cls(eng)

    @classmethod
    def from_layout(cls, layout: dict, config: RulesConfig | None = None, seed=0,
                    hand: int | None = None) -> "Table":
        """A position from a docs/api.md layout (plus the optional keys of D3)."""
        if config is None:
            config = config_of(layout)
        eng = Engine(config, 1, seed)
        load_layout(eng, layout, hand)
        eng.refresh_masks()
        return cls(eng)

    # ------------------------------------------------------------------ reading
    @property
    def config(self) -> RulesConfig:
        return self._engine.config

    @property
    def engine(self) -> Engine:
        return self._engine

    @property
    def tick(self) -> int:
        return int(self._engine.state.tick[0])

    @property
    def hand_over(self) -> bool:
        return bool(self._engine.state.status[0] != PLAYING)

    @property
    def truncated(self) -> bool:
        return bool(self._engine.state.status[0] == OVER_TRUNCATED)

    def _team(self, team) -> int:
        if isinstance(team, bool) or not isinstance(team, (int, np.integer)) \
                or not 0 <= team < self.config.num_teams:
            raise ValueError(f"team {team!r} does not exist: teams are 0..{self.config.num_teams - 1}")
        return int(team)

    def _seat(self, seat) -> int:
        if isinstance(seat, bool) or not isinstance(seat, (int, np.integer)) \
                or not 0 <= seat < self.config.num_seats:
            raise ValueError(f"seat {seat!r} does not exist: seats are 0..{self.config.num_seats - 1}")
        return int(seat)

    def available_cards(self, team: int) -> list[str]:
        """R9: Nertz top, waste top, River tops (columns in order), as card text."""
        t = self._team(team)
        s = self._engine.state
        out = []
        if s.nertz_n[0, t]:
            out.append(card_text(int(s.nertz[0, t, s.nertz_n[0, t] - 1])))
        if s.waste_n[0, t]:
            out.append(card_text(int(s.stream[0, t, s.waste_n[0, t] - 1])))
        for c in range(self.config.river_size):
            n = s.river_n[0, t, c]
            if n:
                out.append(card_text(int(s.river[0, t, c, n - 1])))
        return out

    def hand_scores(self) -> list[int]:
        """R29 per team (D20)."""
        return [int(x) for x in self._engine.hand_scores()[0]]

    def layout(self) -> dict:
        """The position in docs/api.md's layout format plus the keys of D3."""
        return layout_of(self._engine, 0)

    # ------------------------------------------------------------------ moves
    def action_mask(self, seat: int) -> np.ndarray:
        """Bool [N_ACTIONS]: the legal moves of `seat` in the numbering of actions.py."""
        return self._engine.masks[0, self._seat(seat)].astype(bool)

    def legal_moves(self, seat: int) -> list[Move]:
        """Exactly the legal moves of docs/rules.md for `seat` now, in action-id order."""
        mask = self._engine.masks[0, self._seat(seat)]
        return [self.decode(int(a), seat) for a in np.flatnonzero(mask)]

    def decode(self, action: int, seat: int = 0) -> Move:
        """The Move of an action id. A stack id is read against the available cards of
        `seat`'s team (its text lists sources), so its run must exist there."""
        m = decode_simple(action)
        if isinstance(m, Move):
            return m
        _, src, length = m
        raise_missing = ValueError(
            f"action id {int(action)} is a stack of {length} cards from {source_text(src)} (R16), "
            f"but no such run of available cards exists now")
        t = self.config.seat_team[self._seat(seat)]
        n_src = SRC_RIVER0 + self.config.river_size
        avail = {self._avail(t, x): x for x in range(n_src)}
        avail.pop(NO_CARD, None)
        bottom = self._avail(t, src) if src < n_src else NO_CARD
        srcs = []
        for j in range(length if bottom != NO_CARD else 0):
            if rank_of(bottom) + j >= N_RANKS or bottom + j not in avail:
                break
            srcs.append(avail[bottom + j])
        if len(srcs) != length:
            raise raise_missing
        return Move("stack", tuple(srcs))

    def _avail(self, t, src) -> int:
        s = self._engine.state
        if src == SRC_NERTZ:
            n = s.nertz_n[0, t]
            return int(s.nertz[0, t, n - 1]) if n else NO_CARD
        if src == SRC_WASTE:
            k = s.waste_n[0, t]
            return int(s.stream[0, t, k - 1]) if k else NO_CARD
        col = src - SRC_RIVER0
        if col >= self.config.river_size:
            return NO_CARD
        n = s.river_n[0, t, col]
        return int(s.river[0, t, col, n - 1]) if n else NO_CARD

    def _complete(self, move, seat: int) -> Move:
        """Parse and complete a move for a seat: an index-less shift names the top card."""
        m = Move.parse(move)
        cols = self.config.river_size
        cols_named = [x - SRC_RIVER0 for x in m.sources if x >= SRC_RIVER0]
        if m.dst is not None:
            cols_named.append(m.dst)
        for col in cols_named:
            if col >= cols:
                raise ValueError(f"move {str(m)!r}: River column {col} does not exist; "
                                 f"this table has columns 0..{cols - 1}")
        if m.kind == "shift" and m.index is None:
            t = self.config.seat_team[seat]
            n = int(self._engine.state.river_n[0, t, m.sources[0] - SRC_RIVER0])
            if n == 0:
                raise ValueError(f"move {str(m)!r}: River column {m.sources[0] - SRC_RIVER0} is empty")
            m = Move("shift", m.sources, m.dst, n - 1)
        return m

    def encode(self, move) -> int:
        """The action id of a move (a shift without index is completed for team 0's River;
        give the index to be exact)."""
        m = self._complete(move, 0)
        return encode_move(m)

    def is_legal(self, seat: int, move) -> bool:
        seat = self._seat(seat)
        m = self._complete(move, seat)
        a = encode_move(m)
        if not self._engine.masks[0, seat, a]:
            return False
        return a < STACK0 or self.decode(a, seat) == m

    # ------------------------------------------------------------------ play
    def step(self, moves: dict | None = None, priority=None) -> TickResult:
        """One tick (R20): moves maps seat -> Move or text (seats left out wait); priority
        lists seats to resolve first (R22), None draws the order from the table's RNG."""
        if self.hand_over:
            raise ValueError("the hand is over; deal a new one (D19)")
        eng = self._engine
        n_seats = self.config.num_seats
        actions = np.zeros((1, n_seats), np.int16)
        illegal = []
        if moves is not None and not isinstance(moves, Mapping):
            raise ValueError(f"moves must be a dict seat -> move (Move or text), got "
                             f"{type(moves).__name__}")
        for seat, move in (moves or {}).items():
            seat = self._seat(seat)
            m = self._complete(move, seat)
            a = encode_move(m)
            legal = bool(eng.masks[0, seat, a]) and (a < STACK0 or self.decode(a, seat) == m)
            if not legal:
                illegal.append((seat, m))
                a = FLIP if not eng.masks[0, seat, FLIP] else _first_illegal(eng.masks[0, seat])
            actions[0, seat] = a
        if illegal and self.config.illegal_move == "raise":
            seat, m = illegal[0]
            legal = ", ".join(str(x) for x in self.legal_moves(seat))
            raise ValueError(f"seat {seat}: move {str(m)!r} is not legal now (R31); legal: {legal}")
        prio = None
        if priority is not None:
            if isinstance(priority, (str, bytes, Mapping)) or not isinstance(priority, (list, tuple, np.ndarray)):
                raise ValueError(f"priority={priority!r}: None or a list of seats 0..{n_seats - 1}")
            listed = [self._seat(x) for x in np.asarray(priority, dtype=object).reshape(-1)] \
                if np.ndim(priority) <= 1 else None
            if listed is None:
                raise ValueError(f"priority={priority!r}: None or a list of seats 0..{n_seats - 1}")
            if len(set(listed)) != len(listed):
                raise ValueError(f"priority {list(priority)!r} names a seat twice")
            prio = np.array([listed + [x for x in range(n_seats) if x not in listed]], np.int32)
        before = eng.state.callers[0].copy()
        applied = eng.step(actions, prio)
        s = eng.state
        return TickResult(
            applied={x: bool(applied[0, x]) for x in range(n_seats)},
            callers=[t for t in range(self.config.num_teams) if s.callers[0, t] and not before[t]],
            hand_over=bool(s.status[0] != PLAYING),
            truncated=bool(s.status[0] == OVER_TRUNCATED),
        )

    # ------------------------------------------------------------------ picture
    def render(self) -> str:
        """A text picture of the table (the environments' render_mode="ansi")."""
        lay, c = self.layout(), self.config
        status = {PLAYING: "playing", OVER_NERTZ: "over (Nertz)",
                  OVER_TRUNCATED: "over (max_ticks)"}[int(self._engine.state.status[0])]
        lines = [f"tick {lay['tick']}  hand {lay['hand']}  {status}  "
                 f"scores {self.hand_scores()}  burns {lay['burns']}"]
        lake = "  ".join(p[-1] + (f"({len(p)})" if len(p) > 1 else "") for p in lay["lake"])
        lines.append(f"Lake: {lake or '-'}")
        seat = 0
        for t, team in enumerate(lay["teams"]):
            seats = []
            for _ in range(c.sizes[t]):
                ready = "ready" if lay["tick"] >= lay["ready"][seat] else f"busy->{lay['ready'][seat]}"
                seats.append(f"seat {seat} {ready}")
                seat += 1
            nertz = f"{team['nertz'][-1]} ({len(team['nertz'])})" if team["nertz"] else "empty"
            k, n = team["waste"], len(team["stream"])
            waste = team["stream"][k - 1] if k else "--"
            caller = "  NERTZ!" if t in lay["callers"] else ""
            lines.append(f"Team {t} [{', '.join(seats)}]{caller}")
            lines.append(f"  Nertz: {nertz}   Stream: waste {waste} ({k} flipped, {n - k} in stock)")
            for col, cards in enumerate(team["river"]):
                lines.append(f"  River {col}: {' '.join(cards) if cards else '.'}")
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"<Table {self.config.num_teams} teams, tick {self.tick}>"


def _first_illegal(mask) -> int:
    return int(np.flatnonzero(mask == 0)[0])


def layout_of(engine: Engine, e: int) -> dict:
    """Table e of an engine in docs/api.md's layout format plus the keys of D3 (Table.layout for
    table 0; replays read the other tables of a batch with it)."""
    s, c = engine.state, engine.config
    lake = []
    for p in range(int(s.lake_piles[e])):
        pile = []
        for j in range(int(s.lake_n[e, p])):
            deck, card = divmod(int(s.lake[e, p, j]), DECK)
            pile.append(card_text(card, deck, 0))
        lake.append(pile)
    teams = []
    for t in range(c.num_teams):
        teams.append({
            "nertz": [card_text(int(x)) for x in s.nertz[e, t, :s.nertz_n[e, t]]],
            "river": [[card_text(int(x)) for x in s.river[e, t, col, :s.river_n[e, t, col]]]
                      for col in range(c.river_size)],
            "stream": [card_text(int(x)) for x in s.stream[e, t, :s.stream_n[e, t]]],
            "waste": int(s.waste_n[e, t]),
        })
    return {
        "lake": lake, "teams": teams, "tick": int(s.tick[e]), "hand": int(s.hand[e]),
        "ready": [int(x) for x in s.ready[e]],
        "turnovers": [int(x) for x in s.turnovers[e]], "burns": int(s.burns[e]),
        "penalties": [int(x) for x in s.penalties[e]],
        "callers": [t for t in range(c.num_teams) if s.callers[e, t]],
    }
