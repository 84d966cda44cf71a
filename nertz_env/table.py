"""Table: the readable API of shared/API.md over an Engine with one table (like FEN in pgx).

Owns: layouts in and out (validated, D3), move text <-> action ids, the text picture. Every
rule is played by the core; this module only converts. Bad input is a ValueError naming the
part (a card, a column, a pile, a field) and the table is left unchanged.

Decision: `Table.from_layout(..., hand=None)` takes the hand number from the layout's "hand"
key (D3) when `hand` is None, so `Table.from_layout(t.layout())` is always the same position.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .actions import (FLIP, STACK0, Move, decode_simple,
                      encode_move, source_text)
from .config import RulesConfig
from .engine import Engine
from .layout import (COL_CAP, DECK, LAKE_PILES_PER_TEAM, N_RANKS, NERTZ_SIZE, NO_CARD,
                     OVER_NERTZ, OVER_TRUNCATED, PLAYING, SRC_NERTZ, SRC_RIVER0, SRC_WASTE,
                     STREAM_CAP, card_text, is_red, parse_card, rank_of, suit_of)

_LAYOUT_KEYS = {"lake", "teams", "tick", "hand", "ready", "turnovers", "burns", "penalties",
                "callers"}
_TEAM_KEYS = {"nertz", "river", "stream", "waste"}


@dataclass
class TickResult:
    """What one tick did (API.md)."""
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
        rows = []
        for t, deck in enumerate(decks):
            rows.append([parse_card(c, t)[1] if isinstance(c, str) else int(c) for c in deck])
        eng = Engine(config, 1, seed)
        eng.deal(np.array([rows]), hands=[hand])
        return cls(eng)

    @classmethod
    def from_layout(cls, layout: dict, config: RulesConfig | None = None, seed=0,
                    hand: int | None = None) -> "Table":
        """A position from an API.md layout (plus the optional keys of D3)."""
        if not isinstance(layout, dict):
            raise ValueError(f"layout must be a dict with 'lake' and 'teams', got {type(layout).__name__}")
        unknown = set(layout) - _LAYOUT_KEYS
        if unknown:
            raise ValueError(f"layout has unknown key(s) {sorted(unknown)}; allowed: {sorted(_LAYOUT_KEYS)}")
        teams = layout.get("teams")
        if not isinstance(teams, list) or not teams:
            raise ValueError("layout['teams'] must be a non-empty list of team entries")
        if config is None:
            first = teams[0] if isinstance(teams[0], dict) else {}
            river = first.get("river")
            config = RulesConfig(num_teams=len(teams),
                                 river_size=len(river) if isinstance(river, list) else 4)
        eng = Engine(config, 1, seed)
        _load_layout(eng, layout, hand)
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
        """The position in API.md's layout format plus the keys of D3."""
        s, c = self._engine.state, self.config
        lake = []
        for p in range(int(s.lake_piles[0])):
            pile = []
            for j in range(int(s.lake_n[0, p])):
                deck, card = divmod(int(s.lake[0, p, j]), DECK)
                pile.append(card_text(card, deck, 0))
            lake.append(pile)
        teams = []
        for t in range(c.num_teams):
            teams.append({
                "nertz": [card_text(int(x)) for x in s.nertz[0, t, :s.nertz_n[0, t]]],
                "river": [[card_text(int(x)) for x in s.river[0, t, col, :s.river_n[0, t, col]]]
                          for col in range(c.river_size)],
                "stream": [card_text(int(x)) for x in s.stream[0, t, :s.stream_n[0, t]]],
                "waste": int(s.waste_n[0, t]),
            })
        return {
            "lake": lake, "teams": teams, "tick": int(s.tick[0]), "hand": int(s.hand[0]),
            "ready": [int(x) for x in s.ready[0]],
            "turnovers": [int(x) for x in s.turnovers[0]], "burns": int(s.burns[0]),
            "penalties": [int(x) for x in s.penalties[0]],
            "callers": [t for t in range(c.num_teams) if s.callers[0, t]],
        }

    # ------------------------------------------------------------------ moves
    def action_mask(self, seat: int) -> np.ndarray:
        """Bool [N_ACTIONS]: the legal moves of `seat` in the numbering of actions.py."""
        return self._engine.masks[0, self._seat(seat)].astype(bool)

    def legal_moves(self, seat: int) -> list[Move]:
        """Exactly the legal moves of RULES.md for `seat` now, in action-id order."""
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
            listed = [self._seat(x) for x in priority]
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


# ---------------------------------------------------------------------- layout loading
def _int_field(value, name, low=0):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < low:
        raise ValueError(f"layout[{name!r}] = {value!r} must be an int >= {low}")
    return int(value)


def _int_list(value, name, n):
    if not isinstance(value, list) or len(value) != n:
        raise ValueError(f"layout[{name!r}] must be a list of {n} ints, got {value!r}")
    return [_int_field(v, f"{name}[{i}]") for i, v in enumerate(value)]


def _load_layout(eng: Engine, layout: dict, hand) -> None:
    """Validate the whole layout, then write it into table 0 of a fresh engine."""
    c = eng.config
    T, R = c.num_teams, c.river_size
    teams = layout["teams"]
    if len(teams) != T:
        raise ValueError(f"layout has {len(teams)} teams but the config has num_teams={T}")
    seen: dict = {}

    def card(text, deck_default, where):
        try:
            deck, cid = parse_card(text, deck_default)
        except ValueError as err:
            raise ValueError(f"{where}: {err}") from None
        if not 0 <= deck < T:
            raise ValueError(f"{where}: card {text!r} names deck {deck}; decks are 0..{T - 1}")
        if (deck, cid) in seen:
            raise ValueError(f"{where}: card {text!r} is named twice for deck {deck} "
                             f"(also at {seen[deck, cid]})")
        seen[deck, cid] = where
        return deck, cid

    def own(text, t, where):
        deck, cid = card(text, t, where)
        if deck != t:
            raise ValueError(f"{where}: card {text!r} belongs to deck {deck}; team {t}'s piles "
                             f"hold only its own deck's cards")
        return cid

    parsed = []
    for t, team in enumerate(teams):
        where = f"teams[{t}]"
        if not isinstance(team, dict):
            raise ValueError(f"{where} must be a dict with nertz, river, stream, waste")
        unknown = set(team) - _TEAM_KEYS
        missing = {"nertz", "river", "stream"} - set(team)
        if unknown or missing:
            raise ValueError(f"{where}: unknown keys {sorted(unknown)} / missing keys {sorted(missing)}; "
                             f"a team entry has {sorted(_TEAM_KEYS)}")
        for key in ("nertz", "river", "stream"):
            if not isinstance(team[key], list):
                raise ValueError(f"{where}.{key} must be a list")
        nertz = [own(x, t, f"{where}.nertz[{i}]") for i, x in enumerate(team["nertz"])]
        if len(nertz) > NERTZ_SIZE:
            raise ValueError(f"{where}.nertz holds {len(nertz)} cards; at most {NERTZ_SIZE} (R6)")
        if len(team["river"]) != R:
            raise ValueError(f"{where}.river has {len(team['river'])} columns; this table has "
                             f"river_size={R}")
        river = []
        for col, cards in enumerate(team["river"]):
            cw = f"{where}.river[{col}]"
            if not isinstance(cards, list):
                raise ValueError(f"{cw} must be a list of cards, bottom first")
            ids = [own(x, t, f"{cw}[{i}]") for i, x in enumerate(cards)]
            for i in range(1, len(ids)):
                lo, hi = ids[i], ids[i - 1]
                if rank_of(hi) != rank_of(lo) + 1 or is_red(hi) == is_red(lo):
                    raise ValueError(f"{cw}: {cards[i]!r} on {cards[i - 1]!r} breaks the column: "
                                     f"River columns run down one rank at a time in alternating "
                                     f"colours (R11)")
            if len(ids) > COL_CAP:
                raise ValueError(f"{cw} holds {len(ids)} cards; at most {COL_CAP}")
            river.append(ids)
        stream = [own(x, t, f"{where}.stream[{i}]") for i, x in enumerate(team["stream"])]
        if len(stream) > STREAM_CAP:
            raise ValueError(f"{where}.stream holds {len(stream)} cards; at most {STREAM_CAP}")
        waste = team.get("waste", 0)
        if isinstance(waste, bool) or not isinstance(waste, (int, np.integer)) \
                or not 0 <= waste <= len(stream):
            raise ValueError(f"{where}.waste = {waste!r} must be an int from 0 to the Stream's "
                             f"{len(stream)} cards")
        parsed.append((nertz, river, stream, int(waste)))

    lake_in = layout.get("lake", [])
    if not isinstance(lake_in, list):
        raise ValueError("layout['lake'] must be a list of piles, each bottom -> top")
    if len(lake_in) > LAKE_PILES_PER_TEAM * T:
        raise ValueError(f"layout['lake'] has {len(lake_in)} piles; at most {LAKE_PILES_PER_TEAM * T}")
    lake = []
    for p, pile in enumerate(lake_in):
        pw = f"lake[{p}]"
        if not isinstance(pile, list) or not pile:
            raise ValueError(f"{pw} must be a non-empty list of cards, bottom first")
        cards = [card(x, 0, f"{pw}[{i}]") for i, x in enumerate(pile)]
        for i, (deck, cid) in enumerate(cards):
            if rank_of(cid) != i or suit_of(cid) != suit_of(cards[0][1]):
                raise ValueError(f"{pw}: {pile[i]!r} at position {i} breaks the pile: a Lake pile "
                                 f"is A, 2, 3, ... of one suit (R10)")
        lake.append(cards)

    S = c.num_seats
    tick = _int_field(layout.get("tick", 0), "tick")
    hand_no = _int_field(layout.get("hand", 0), "hand") if hand is None else _int_field(hand, "hand")
    ready = _int_list(layout.get("ready", [0] * S), "ready", S)
    turnovers = _int_list(layout.get("turnovers", [0] * T), "turnovers", T)
    burns = _int_field(layout.get("burns", 0), "burns")
    penalties = _int_list(layout.get("penalties", [0] * T), "penalties", T)
    callers = layout.get("callers", [])
    if not isinstance(callers, list) or any(
            isinstance(x, bool) or not isinstance(x, int) or not 0 <= x < T for x in callers):
        raise ValueError(f"layout['callers'] = {callers!r} must be a list of team numbers 0..{T - 1}")
    for name, v in (("tick", tick), ("burns", burns), *(("ready", x) for x in ready),
                    *(("turnovers", x) for x in turnovers), *(("penalties", x) for x in penalties)):
        if v > 30000 and name != "tick" and name != "ready":
            raise ValueError(f"layout[{name!r}] = {v} is too large")

    # everything is valid: write it
    s = eng.state
    for t, (nertz, river, stream, waste) in enumerate(parsed):
        s.nertz[0, t, :len(nertz)] = nertz
        s.nertz_n[0, t] = len(nertz)
        for col, ids in enumerate(river):
            s.river[0, t, col, :len(ids)] = ids
            s.river_n[0, t, col] = len(ids)
        s.stream[0, t, :len(stream)] = stream
        s.stream_n[0, t] = len(stream)
        s.waste_n[0, t] = waste
    for p, cards in enumerate(lake):
        for j, (deck, cid) in enumerate(cards):
            s.lake[0, p, j] = deck * DECK + cid
            s.lake_own[0, deck] += 1
        s.lake_n[0, p] = len(cards)
        top = cards[-1][1]
        if rank_of(top) != N_RANKS - 1:
            s.lake_next[0, top + 1] += 1
    s.lake_piles[0] = len(lake)
    s.tick[0], s.hand[0], s.burns[0] = tick, hand_no, burns
    s.ready[0] = ready
    s.turnovers[0] = turnovers
    s.penalties[0] = penalties
    s.callers[0] = 0
    for t in callers:
        s.callers[0, t] = 1
    if callers:
        s.status[0] = OVER_NERTZ
    elif tick >= c.max_ticks:
        s.status[0] = OVER_TRUNCATED
    else:
        s.status[0] = PLAYING


