"""step_table: one speed tick at one table (R20-R26, D13-D19). The real-time rule, once:

1. Every seat's move was chosen against the position at the start of the tick; the masks
   passed in describe that position. A move not in its seat's mask is illegal (R31): it is
   treated as Wait, and with `penalize` the team's penalty count goes up (`raise` is checked
   before the kernel is called, so nothing changes).
2. Each legal move is captured as an intent tied to the cards it names (R23): source and card,
   for a shift the column, index, bottom card, top card and height, for a stack the source of
   every card. Readiness is set now (R21, D15): t + period * cost, or t + 1 for Wait/Call.
3. Intents resolve one by one in this tick's priority order: `order` given (tests, API), else
   a permutation drawn from the table's seeded generator (R22). On its turn a move fails,
   changing nothing, if a named card has left its place or the destination no longer takes
   it (D14). A successful card move restarts the idle count (D16).
4. End of tick (D17): callers (empty Nertz piles, or Calls), else the idle burn (R27, R28);
   tick + 1; truncation at max_ticks (R26); masks of the new position are written.
"""
from __future__ import annotations

from numba import njit

from ..actions import BUILD0, CALL, FLIP, LAKE0, SHIFT0, STACK0, STACK_LENS, WAIT
from ..layout import (ACE, COST_FLIP, COST_LAKE, COST_RIVER, COST_SHIFT, MAX_RIVER,
                      OVER_NERTZ, OVER_TRUNCATED, PLAYING, SRC_RIVER0)
from .legal import write_table_masks
from .moves import (burn_streams, flip_stream, note_card_move, put_on_lake, put_on_river,
                    shift_run, take_from_source)
from .rules import available_card, can_build_on, find_lake_pile, random_below, rank, source_of
from .state import (K_BUILD, K_CALL, K_FLIP, K_IDLE, K_ILLEGAL, K_LAKE, K_SHIFT, K_STACK,
                    K_WAIT)


@njit(cache=True)
def capture_intent(st, prm, scr, e, s, a, legal):
    """Step 2 for seat s choosing action a: record the intent, set readiness (D15)."""
    t0 = st.tick[e]
    t = prm.seat_team[s]
    p = prm.period[s]
    if not legal:
        scr.kind[e, s] = K_ILLEGAL
        if prm.penalize:
            st.penalties[e, t] += 1
        if st.ready[e, s] < t0 + 1:
            st.ready[e, s] = t0 + 1
        return
    if a == WAIT:
        scr.kind[e, s] = K_WAIT
        if st.ready[e, s] < t0 + 1:
            st.ready[e, s] = t0 + 1
    elif a == FLIP:
        scr.kind[e, s] = K_FLIP
        st.ready[e, s] = t0 + p * prm.cost[COST_FLIP]
    elif a == CALL:
        scr.kind[e, s] = K_CALL
        st.ready[e, s] = t0 + 1
    elif a < BUILD0:
        src = a - LAKE0
        scr.kind[e, s] = K_LAKE
        scr.src[e, s] = src
        scr.card[e, s] = available_card(st, e, t, src)
        st.ready[e, s] = t0 + p * prm.cost[COST_LAKE]
    elif a < SHIFT0:
        frm = (a - BUILD0) // MAX_RIVER
        scr.kind[e, s] = K_BUILD
        scr.src[e, s] = frm
        scr.dst[e, s] = (a - BUILD0) % MAX_RIVER
        scr.card[e, s] = available_card(st, e, t, frm)
        st.ready[e, s] = t0 + p * prm.cost[COST_RIVER]
    elif a < STACK0:
        pair = (a - SHIFT0) // 13
        i = (a - SHIFT0) % 13
        col_a = pair // 4
        bb = pair % 4
        col_b = bb if bb < col_a else bb + 1
        na = st.river_n[e, t, col_a]
        scr.kind[e, s] = K_SHIFT
        scr.src[e, s] = col_a
        scr.idx[e, s] = i
        scr.dst[e, s] = col_b
        scr.height[e, s] = na
        scr.card[e, s] = st.river[e, t, col_a, i]
        scr.card2[e, s] = st.river[e, t, col_a, na - 1]
        st.ready[e, s] = t0 + p * prm.cost[COST_SHIFT]
    else:
        src = (a - STACK0) // STACK_LENS
        length = (a - STACK0) % STACK_LENS + 2
        n_src = SRC_RIVER0 + prm.river_size
        c = available_card(st, e, t, src)
        scr.kind[e, s] = K_STACK
        scr.card[e, s] = c
        scr.idx[e, s] = length
        for j in range(length):
            scr.stack_src[e, s, j] = source_of(st, e, t, c + j, n_src)
        st.ready[e, s] = t0 + p * prm.cost[COST_LAKE]


@njit(cache=True)
def still_available(st, e, t, src, card):
    """D14: the named card is still the available card of its source."""
    return available_card(st, e, t, src) == card


@njit(cache=True)
def resolve_intent(st, prm, scr, e, s):
    """Step 3 for seat s: apply its intent if it still holds; return 1 if it took effect."""
    kind = scr.kind[e, s]
    t = prm.seat_team[s]
    if kind == K_WAIT or kind == K_IDLE:
        return 1
    if kind == K_ILLEGAL:
        return 0
    if kind == K_FLIP:
        if st.stream_n[e, t] == 0:
            return 0
        flip_stream(st, e, t)
        return 1
    if kind == K_CALL:
        st.callers[e, t] = 1
        return 1
    card = scr.card[e, s]
    if kind == K_LAKE:
        src = scr.src[e, s]
        if not still_available(st, e, t, src, card):
            return 0
        pile = -1
        if rank(card) != ACE:
            pile = find_lake_pile(st, e, card)
            if pile < 0:
                return 0
        take_from_source(st, e, t, src)
        put_on_lake(st, e, t, card, pile)
        note_card_move(st, e)
        return 1
    if kind == K_BUILD:
        src = scr.src[e, s]
        col = scr.dst[e, s]
        if not still_available(st, e, t, src, card) or rank(card) == ACE:
            return 0
        n = st.river_n[e, t, col]
        if n > 0 and not can_build_on(card, st.river[e, t, col, n - 1]):
            return 0
        take_from_source(st, e, t, src)
        put_on_river(st, e, t, col, card)
        note_card_move(st, e)
        return 1
    if kind == K_SHIFT:
        a = scr.src[e, s]
        i = scr.idx[e, s]
        b = scr.dst[e, s]
        h0 = scr.height[e, s]
        if (st.river_n[e, t, a] != h0 or st.river[e, t, a, i] != card
                or st.river[e, t, a, h0 - 1] != scr.card2[e, s]):
            return 0
        nb = st.river_n[e, t, b]
        if nb == 0:
            if i == 0:
                return 0
        elif not can_build_on(card, st.river[e, t, b, nb - 1]):
            return 0
        shift_run(st, e, t, a, i, b)
        note_card_move(st, e)
        return 1
    # K_STACK
    length = scr.idx[e, s]
    for j in range(length):
        if not still_available(st, e, t, scr.stack_src[e, s, j], card + j):
            return 0
    pile = -1
    if rank(card) != ACE:
        pile = find_lake_pile(st, e, card)
        if pile < 0:
            return 0
    for j in range(length):
        take_from_source(st, e, t, scr.stack_src[e, s, j])
        pile = put_on_lake(st, e, t, card + j, pile)
    note_card_move(st, e)
    return 1


@njit(cache=True)
def draw_order(st, prm, scr, e):
    """R22: a uniformly random priority order from the table's seeded generator."""
    S = prm.n_seats
    for s in range(S):
        scr.order[e, s] = s
    for s in range(S - 1, 0, -1):
        j = random_below(st.rng, e, s + 1)
        tmp = scr.order[e, s]
        scr.order[e, s] = scr.order[e, j]
        scr.order[e, j] = tmp


@njit(cache=True)
def end_tick(st, prm, e):
    """Step 4 (D17)."""
    T = prm.n_teams
    n_callers = 0
    for t in range(T):
        if prm.auto_nertz and st.nertz_n[e, t] == 0:
            st.callers[e, t] = 1
        n_callers += st.callers[e, t]
    if n_callers > 0:
        st.status[e] = OVER_NERTZ
    else:
        any_stream = False
        idle = True
        for t in range(T):
            if st.stream_n[e, t] > 0:
                any_stream = True
                if st.turnovers[e, t] < 2:
                    idle = False
        if any_stream and idle:
            burn_streams(st, e)
    st.tick[e] += 1
    if st.status[e] == PLAYING and st.tick[e] >= prm.max_ticks:
        st.status[e] = OVER_TRUNCATED


@njit(cache=True)
def step_table(st, prm, scr, e, actions, priority, masks, applied):
    """One tick at table e. actions: [E, S] action ids; priority: [E, S], a permutation of
    seats, or -1 in column 0 to draw one; masks: [E, S, N_ACTIONS], the legal moves of the
    current position (rewritten for the new one); applied: [E, S] out, 1 = took effect."""
    if st.status[e] != PLAYING:
        for s in range(prm.n_seats):
            applied[e, s] = 0
        return
    for s in range(prm.n_seats):
        a = actions[e, s]
        capture_intent(st, prm, scr, e, s, a, masks[e, s, a] != 0)
    if priority[e, 0] < 0:
        draw_order(st, prm, scr, e)
    else:
        for s in range(prm.n_seats):
            scr.order[e, s] = priority[e, s]
    for k in range(prm.n_seats):
        s = scr.order[e, k]
        applied[e, s] = resolve_intent(st, prm, scr, e, s)
    end_tick(st, prm, e)
    write_table_masks(st, prm, e, masks)


