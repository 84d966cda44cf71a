"""check_invariants: what every NertzState must satisfy (layout.py's meanings), in numba.

Run on every state written from outside (layouts, set_state / snapshots) before the kernels
see it, and by the property tests after ticks of random play: the kernels trust these, so a
state that breaks one could make them read past a pile.

For every table:
- cards: each card of each deck at most once across its team's Nertz pile, River and Stream
  and the Lake (lake card = deck * 52 + card id); with complete_decks, exactly once (a dealt
  table; a layout may leave cards out of play, docs/api.md);
- piles: heights within capacity, 0 <= waste_n <= stream_n, River columns one rank down in
  alternating colours, Lake piles A, 2, 3... of one suit in the lake_piles first slots, slots
  above a River / Stream / Lake height hold NO_CARD, lake_own and lake_next agree with the Lake;
- counters: 0 <= tick <= max_ticks, hand, burns, turnovers, penalties >= 0, 0 <= ready <=
  tick + max period x max move cost (R21), callers 0/1, status one of PLAYING / OVER_NERTZ /
  OVER_TRUNCATED and agreeing with callers and tick (R24, R26).

The kernel returns [code, table, team or seat or pile, value, detail] (code OK = 0; no
exceptions inside numba); the Python wrapper `check_state` turns a failure into a ValueError
naming them.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ..encoding import (COL_CAP, DECK, LAKE_PILES_PER_TEAM, N_RANKS, NERTZ_SIZE, NO_CARD,
                      OVER_NERTZ, OVER_TRUNCATED, PLAYING, STREAM_CAP, card_text)

# error codes; MESSAGES below says what each means
(OK, STATUS, TICK, HAND, BURNS, READY, CALLERS, TURNOVERS, PENALTIES, STATUS_CALLERS,
 STATUS_TICK, NERTZ_N, NERTZ_CARD, RIVER_N, RIVER_CARD, RIVER_ORDER, RIVER_SLOT, STREAM_N,
 WASTE_N, STREAM_CARD, STREAM_SLOT, LAKE_PILES, LAKE_N, LAKE_CARD, LAKE_ORDER, LAKE_SLOT,
 LAKE_OWN, LAKE_NEXT, CARD_TWICE, CARD_MISSING) = range(30)


@njit(cache=True)
def _fail(out, code, e, i, value, detail):
    out[0], out[1], out[2], out[3], out[4] = code, e, i, value, detail
    return out


@njit(cache=True)
def _red(card):
    s = card // N_RANKS
    return s == 1 or s == 2


@njit(cache=True)
def check_invariants(st, prm, complete_decks):
    """int64 [5]: [code, table, index, value, detail], code OK (0) when every table of `st`
    satisfies the module's invariants (the first failure otherwise). index: the team (and its
    deck), the seat for READY, the pile for LAKE_*, -1 for a table-wide value."""
    out = np.zeros(5, np.int64)
    T, S, R = prm.n_teams, prm.n_seats, prm.river_size
    P = LAKE_PILES_PER_TEAM * T
    slow = 1
    for s in range(S):
        slow = max(slow, prm.period[s])
    most = 1
    for k in range(prm.cost.shape[0]):
        most = max(most, prm.cost[k])
    counts = np.zeros((T, DECK), np.int64)
    own = np.zeros(T, np.int64)
    nxt = np.zeros(DECK, np.int64)
    for e in range(st.status.shape[0]):
        # ---- counters
        status, tick = st.status[e], st.tick[e]
        if status != PLAYING and status != OVER_NERTZ and status != OVER_TRUNCATED:
            return _fail(out, STATUS, e, -1, status, 0)
        if tick < 0 or tick > prm.max_ticks:
            return _fail(out, TICK, e, -1, tick, prm.max_ticks)
        if st.hand[e] < 0:
            return _fail(out, HAND, e, -1, st.hand[e], 0)
        if st.burns[e] < 0:
            return _fail(out, BURNS, e, -1, st.burns[e], 0)
        for s in range(S):
            if st.ready[e, s] < 0 or st.ready[e, s] > tick + slow * most:
                return _fail(out, READY, e, s, st.ready[e, s], tick + slow * most)
        n_callers = 0
        for t in range(T):
            c = st.callers[e, t]
            if c != 0 and c != 1:
                return _fail(out, CALLERS, e, t, c, 0)
            n_callers += c
            if st.turnovers[e, t] < 0:
                return _fail(out, TURNOVERS, e, t, st.turnovers[e, t], 0)
            if st.penalties[e, t] < 0:
                return _fail(out, PENALTIES, e, t, st.penalties[e, t], 0)
        if (status == OVER_NERTZ) != (n_callers > 0):
            return _fail(out, STATUS_CALLERS, e, -1, status, n_callers)
        if status != OVER_NERTZ and (status == OVER_TRUNCATED) != (tick >= prm.max_ticks):
            return _fail(out, STATUS_TICK, e, -1, status, tick)

        # ---- each team's own piles (card ids of its own deck)
        counts[:, :] = 0
        for t in range(T):
            n = st.nertz_n[e, t]
            if n < 0 or n > NERTZ_SIZE:
                return _fail(out, NERTZ_N, e, t, n, 0)
            # (slots above nertz_n are not checked: playing the Nertz top leaves its slot)
            for d in range(n):
                c = st.nertz[e, t, d]
                if c < 0 or c >= DECK:
                    return _fail(out, NERTZ_CARD, e, t, c, d)
                counts[t, c] += 1
            for col in range(R):
                n = st.river_n[e, t, col]
                if n < 0 or n > COL_CAP:
                    return _fail(out, RIVER_N, e, t, n, col)
                for d in range(COL_CAP):
                    c = st.river[e, t, col, d]
                    if d >= n:
                        if c != NO_CARD:
                            return _fail(out, RIVER_SLOT, e, t, col, d)
                        continue
                    if c < 0 or c >= DECK:
                        return _fail(out, RIVER_CARD, e, t, col, d)
                    counts[t, c] += 1
                    if d > 0:
                        below = st.river[e, t, col, d - 1]
                        if c % N_RANKS + 1 != below % N_RANKS or _red(c) == _red(below):
                            return _fail(out, RIVER_ORDER, e, t, col, d)
            n = st.stream_n[e, t]
            if n < 0 or n > STREAM_CAP:
                return _fail(out, STREAM_N, e, t, n, 0)
            if st.waste_n[e, t] < 0 or st.waste_n[e, t] > n:
                return _fail(out, WASTE_N, e, t, st.waste_n[e, t], n)
            for d in range(STREAM_CAP):
                c = st.stream[e, t, d]
                if d >= n:
                    if c != NO_CARD:
                        return _fail(out, STREAM_SLOT, e, t, c, d)
                    continue
                if c < 0 or c >= DECK:
                    return _fail(out, STREAM_CARD, e, t, c, d)
                counts[t, c] += 1

        # ---- the Lake (cards of any deck) and its bookkeeping
        piles = st.lake_piles[e]
        if piles < 0 or piles > P:
            return _fail(out, LAKE_PILES, e, -1, piles, P)
        own[:] = 0
        nxt[:] = 0
        for p in range(P):
            n = st.lake_n[e, p]
            if n < 0 or n > N_RANKS or (p < piles) != (n > 0):
                return _fail(out, LAKE_N, e, p, n, piles)
            for d in range(N_RANKS):
                v = st.lake[e, p, d]
                if d >= n:
                    if v != NO_CARD:
                        return _fail(out, LAKE_SLOT, e, p, v, d)
                    continue
                if v < 0 or v >= DECK * T:
                    return _fail(out, LAKE_CARD, e, p, v, d)
                c = v % DECK
                if c % N_RANKS != d or c // N_RANKS != (st.lake[e, p, 0] % DECK) // N_RANKS:
                    return _fail(out, LAKE_ORDER, e, p, v, d)
                counts[v // DECK, c] += 1
                own[v // DECK] += 1
            if n > 0 and n < N_RANKS:
                nxt[st.lake[e, p, n - 1] % DECK + 1] += 1
        for t in range(T):
            if st.lake_own[e, t] != own[t]:
                return _fail(out, LAKE_OWN, e, t, st.lake_own[e, t], own[t])
        for c in range(DECK):
            if st.lake_next[e, c] != nxt[c]:
                return _fail(out, LAKE_NEXT, e, -1, c, nxt[c])

        # ---- every card once (a card seen twice first: a moved copy also leaves a gap)
        for t in range(T):
            for c in range(DECK):
                if counts[t, c] > 1:
                    return _fail(out, CARD_TWICE, e, t, c, counts[t, c])
        for t in range(T):
            for c in range(DECK):
                if complete_decks and counts[t, c] == 0:
                    return _fail(out, CARD_MISSING, e, t, c, 0)
    return out


MESSAGES = {
    STATUS: "status = {value} is not PLAYING (0), OVER_NERTZ (1) or OVER_TRUNCATED (2)",
    TICK: "tick = {value} is outside 0..max_ticks ({detail})",
    HAND: "hand = {value} is negative",
    BURNS: "burns = {value} is negative",
    READY: "ready = {value} is outside 0..{detail} (tick + slowest period x dearest move, R21)",
    CALLERS: "callers = {value}: a team's caller flag is 0 or 1",
    TURNOVERS: "turnovers = {value} is negative",
    PENALTIES: "penalties = {value} is negative",
    STATUS_CALLERS: "status = {value} with {detail} caller(s): the hand is OVER_NERTZ (1) "
                    "exactly when some team called (R24)",
    STATUS_TICK: "status = {value} at tick {detail}: without callers the hand is OVER_TRUNCATED "
                 "(2) exactly when tick >= max_ticks (R26)",
    NERTZ_N: "nertz_n = {value} is outside 0..13",
    NERTZ_CARD: "nertz[{detail}] = {value} is not a card id 0..51",
    RIVER_N: "river_n[{detail}] = {value} is outside 0..13",
    RIVER_CARD: "river[{value}][{detail}] is not a card id 0..51",
    RIVER_ORDER: "river[{value}][{detail}] breaks the column: River columns run down one rank "
                 "at a time in alternating colours (R11)",
    RIVER_SLOT: "river[{value}][{detail}] lies above the column's height but is not NO_CARD (-1)",
    STREAM_N: "stream_n = {value} is outside 0..52",
    WASTE_N: "waste_n = {value} is outside 0..stream_n ({detail})",
    STREAM_CARD: "stream[{detail}] = {value} is not a card id 0..51",
    STREAM_SLOT: "stream[{detail}] = {value} lies above stream_n but is not NO_CARD (-1)",
    LAKE_PILES: "lake_piles = {value} is outside 0..{detail}",
    LAKE_N: "lake_n = {value} with lake_piles = {detail}: the first lake_piles piles hold 1..13 "
            "cards, the others none",
    LAKE_CARD: "lake[{detail}] = {value} is not a lake card of this table (deck * 52 + card id)",
    LAKE_ORDER: "lake[{detail}] = {value} breaks the pile: a Lake pile is A, 2, 3... of one "
                "suit (R10)",
    LAKE_SLOT: "lake[{detail}] = {value} lies above the pile's height but is not NO_CARD (-1)",
    LAKE_OWN: "lake_own = {value} but the Lake holds {detail} cards of this team's deck (R29)",
    LAKE_NEXT: "lake_next[{value}] disagrees with the Lake: {detail} pile(s) need that card next",
    CARD_TWICE: "{card} (card id {value}) of its deck appears {detail} times (each card of a "
                "deck is in play at most once)",
    CARD_MISSING: "{card} (card id {value}) of its deck is nowhere (a dealt table holds each "
                  "card of every deck exactly once)",
}
_SEAT_CODES = (READY,)
_PILE_CODES = (LAKE_N, LAKE_CARD, LAKE_ORDER, LAKE_SLOT)


def describe(result, what: str = "state") -> str | None:
    """The message of a check_invariants result, None when it is OK."""
    code, e, i, value, detail = (int(x) for x in result)
    if code == OK:
        return None
    where = f"table {e}"
    if i >= 0:
        kind = "seat" if code in _SEAT_CODES else "Lake pile" if code in _PILE_CODES else "team"
        where += f", {kind} {i}"
    card = card_text(value) if code in (CARD_TWICE, CARD_MISSING) else ""
    return f"{what} is invalid at {where}: " + MESSAGES[code].format(value=value, detail=detail,
                                                                      card=card)


def check_state(state, params, complete_decks: bool = True, what: str = "state") -> None:
    """ValueError naming the table, team and broken invariant of `state`, if any."""
    message = describe(check_invariants(state, params, bool(complete_decks)), what)
    if message is not None:
        raise ValueError(message)
