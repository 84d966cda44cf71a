"""step_table: one speed tick at one table (R20-R26, D13-D19). The real-time rule, once:

1. Every seat's move was chosen against the position at the start of the tick; the masks
   passed in (and scr.avail) describe that position. A move not in its seat's mask is
   illegal (R31): it is treated as Wait, and with `penalize` the team's penalty count goes up
   (`raise` is checked before the kernel is called, so nothing changes).
2. Each legal move is captured as an intent tied to the cards it names (R23): source and card,
   for a shift the column, index, bottom card, top card and height, for a stack the source of
   every card. Readiness is set now (R21, D15): t + period * cost, or t + 1 for Wait/Call.
3. Intents resolve one by one in this tick's priority order: `priority` given (tests, API),
   else a permutation drawn from the table's seeded generator (R22). On its turn a move fails,
   changing nothing, if a named card has left its place or the destination no longer takes
   it (D14). A successful card move restarts the idle count (D16).
4. End of tick (D17): callers (empty Nertz piles, or Calls), else the idle burn (R27, R28);
   tick + 1; truncation at max_ticks (R26); masks of the new position are written.

Steps 2 and 3 are written out inside step_table rather than in per-seat helpers that take the
whole state: see rules.py for the reason.
"""
from __future__ import annotations

from numba import njit

from ..encoding import (ACE, COST_FLIP, COST_LAKE, COST_RIVER, COST_SHIFT, OVER_NERTZ,
                      OVER_TRUNCATED, PLAYING, SRC_RIVER0)
from .codec import (KIND_BUILD, KIND_CALL, KIND_FLIP, KIND_LAKE, KIND_SHIFT, KIND_WAIT,
                    decode)
from .legal import find_source, write_table_masks
from .moves import (burn_streams, flip_stream, note_card_move, put_on_lake, put_on_river,
                    shift_run, take_from_source)
from .rules import available_card, can_build_on, find_lake_pile, random_below, rank
from .state import (K_BUILD, K_CALL, K_FLIP, K_IDLE, K_ILLEGAL, K_LAKE, K_SHIFT, K_STACK,
                    K_WAIT)


@njit(cache=True, error_model="numpy", inline="always")
def draw_order(rng, order, e, n_seats):
    """R22: a uniformly random priority order from the table's seeded generator."""
    for s in range(n_seats):
        order[e, s] = s
    for s in range(n_seats - 1, 0, -1):
        j = random_below(rng, e, s + 1)
        tmp = order[e, s]
        order[e, s] = order[e, j]
        order[e, j] = tmp


@njit(cache=True, error_model="numpy", inline="always")
def end_tick(nertz_n, stream_n, turnovers, callers, status, tick, e, n_teams, auto_nertz,
             max_ticks):
    """Step 4 (D17), before the masks. Returns True when the table is idle and must burn
    (R27; burn_streams is rare, so it is called apart)."""
    n_callers = 0
    for t in range(n_teams):
        if auto_nertz and nertz_n[e, t] == 0:
            callers[e, t] = 1
        n_callers += callers[e, t]
    burn = False
    if n_callers > 0:
        status[e] = OVER_NERTZ
    else:
        any_stream = False
        idle = True
        for t in range(n_teams):
            if stream_n[e, t] > 0:
                any_stream = True
                if turnovers[e, t] < 2:
                    idle = False
        burn = any_stream and idle
    tick[e] += 1
    if status[e] == PLAYING and tick[e] >= max_ticks:
        status[e] = OVER_TRUNCATED
    return burn


@njit(cache=True, error_model="numpy", _nrt=False)
def step_table(st, prm, scr, e, actions, priority, masks, applied):
    """One tick at table e. actions: [E, S] action ids; priority: [E, S], a permutation of
    seats, or -1 in column 0 to draw one (a given order is used once: column 0 is set back
    to -1); masks: [E, S, N_ACTIONS], the legal moves of the
    current position (rewritten for the new one); applied: [E, S] out, 1 = took effect."""
    S = prm.n_seats
    if st.status[e] != PLAYING:
        priority[e, 0] = -1                   # a given order is for this tick only
        for s in range(S):
            applied[e, s] = 0
        return
    nertz, nertz_n = st.nertz, st.nertz_n
    stream, stream_n, waste_n = st.stream, st.stream_n, st.waste_n
    river, river_n = st.river, st.river_n
    lake, lake_n, lake_piles, lake_next, lake_own = (st.lake, st.lake_n, st.lake_piles,
                                                     st.lake_next, st.lake_own)
    turnovers, burns, ready = st.turnovers, st.burns, st.ready
    kind, src_, card_, card2_, dst_, idx_, height_, stack_src = (
        scr.kind, scr.src, scr.card, scr.card2, scr.dst, scr.idx, scr.height, scr.stack_src)
    n_src = SRC_RIVER0 + prm.river_size
    t0 = st.tick[e]

    # ---- step 2: capture intents, set readiness (D15)
    for s in range(S):
        a = actions[e, s]
        t = prm.seat_team[s]
        p = prm.period[s]
        avail = scr.avail
        if masks[e, s, a] == 0:
            kind[e, s] = K_ILLEGAL
            if prm.penalize:
                st.penalties[e, t] += 1
            if ready[e, s] < t0 + 1:
                ready[e, s] = t0 + 1
            continue
        kd, src, dst, i, length = decode(a)
        if kd == KIND_WAIT:
            kind[e, s] = K_WAIT
            if ready[e, s] < t0 + 1:
                ready[e, s] = t0 + 1
        elif kd == KIND_FLIP:
            kind[e, s] = K_FLIP
            ready[e, s] = t0 + p * prm.cost[COST_FLIP]
        elif kd == KIND_CALL:
            kind[e, s] = K_CALL
            ready[e, s] = t0 + 1
        elif kd == KIND_LAKE:
            kind[e, s] = K_LAKE
            src_[e, s] = src
            card_[e, s] = avail[e, t, src]
            ready[e, s] = t0 + p * prm.cost[COST_LAKE]
        elif kd == KIND_BUILD:
            kind[e, s] = K_BUILD
            src_[e, s] = src
            dst_[e, s] = dst
            card_[e, s] = avail[e, t, src]
            ready[e, s] = t0 + p * prm.cost[COST_RIVER]
        elif kd == KIND_SHIFT:
            col_a = src - SRC_RIVER0
            na = river_n[e, t, col_a]
            kind[e, s] = K_SHIFT
            src_[e, s] = col_a
            idx_[e, s] = i
            dst_[e, s] = dst
            height_[e, s] = na
            card_[e, s] = river[e, t, col_a, i]
            card2_[e, s] = river[e, t, col_a, na - 1]
            ready[e, s] = t0 + p * prm.cost[COST_SHIFT]
        else:
            c = avail[e, t, src]
            kind[e, s] = K_STACK
            card_[e, s] = c
            idx_[e, s] = length
            for j in range(length):
                stack_src[e, s, j] = find_source(avail, e, t, n_src, c + j)
            ready[e, s] = t0 + p * prm.cost[COST_LAKE]

    # ---- the order of this tick (R22)
    if priority[e, 0] < 0:
        draw_order(st.rng, scr.order, e, S)
    else:                                     # a given order: for this tick only
        for s in range(S):
            scr.order[e, s] = priority[e, s]
        priority[e, 0] = -1

    # ---- step 3: resolve in order (D14); ok = the move took effect
    for k in range(S):
        s = scr.order[e, k]
        t = prm.seat_team[s]
        kd = kind[e, s]
        ok = False
        moved = False
        if kd == K_WAIT or kd == K_IDLE:
            ok = True
        elif kd == K_FLIP:
            if stream_n[e, t] > 0:
                flip_stream(stream_n, waste_n, turnovers, e, t)
                ok = True
        elif kd == K_CALL:
            st.callers[e, t] = 1
            ok = True
        elif kd == K_LAKE:
            c = card_[e, s]
            src = src_[e, s]
            if available_card(nertz, nertz_n, stream, waste_n, river, river_n, e, t, src) == c:
                pile = -1 if rank(c) == ACE else find_lake_pile(lake, lake_n, lake_piles, e, c)
                if rank(c) == ACE or pile >= 0:
                    take_from_source(nertz_n, stream, stream_n, waste_n, river, river_n, e, t, src)
                    put_on_lake(lake, lake_n, lake_piles, lake_next, lake_own, e, t, c, pile)
                    moved = True
        elif kd == K_BUILD:
            c = card_[e, s]
            src = src_[e, s]
            col = dst_[e, s]
            if (rank(c) != ACE and available_card(nertz, nertz_n, stream, waste_n, river,
                                                  river_n, e, t, src) == c):
                n = river_n[e, t, col]
                if n == 0 or can_build_on(c, river[e, t, col, n - 1]):
                    take_from_source(nertz_n, stream, stream_n, waste_n, river, river_n, e, t, src)
                    put_on_river(river, river_n, e, t, col, c)
                    moved = True
        elif kd == K_SHIFT:
            a = src_[e, s]
            i = idx_[e, s]
            b = dst_[e, s]
            h0 = height_[e, s]
            if (river_n[e, t, a] == h0 and river[e, t, a, i] == card_[e, s]
                    and river[e, t, a, h0 - 1] == card2_[e, s]):
                nb = river_n[e, t, b]
                if (nb == 0 and i > 0) or (nb > 0 and can_build_on(card_[e, s], river[e, t, b, nb - 1])):
                    shift_run(river, river_n, e, t, a, i, b)
                    moved = True
        elif kd == K_STACK:
            c = card_[e, s]
            length = idx_[e, s]
            still = True
            for j in range(length):
                if available_card(nertz, nertz_n, stream, waste_n, river, river_n, e, t,
                                  stack_src[e, s, j]) != c + j:
                    still = False
            if still:
                pile = -1 if rank(c) == ACE else find_lake_pile(lake, lake_n, lake_piles, e, c)
                if rank(c) == ACE or pile >= 0:
                    for j in range(length):
                        take_from_source(nertz_n, stream, stream_n, waste_n, river, river_n,
                                         e, t, stack_src[e, s, j])
                        pile = put_on_lake(lake, lake_n, lake_piles, lake_next, lake_own, e, t,
                                           c + j, pile)
                    moved = True
        if moved:
            note_card_move(turnovers, burns, e)
            ok = True
        applied[e, s] = 1 if ok else 0

    # ---- step 4
    if end_tick(nertz_n, stream_n, turnovers, st.callers, st.status, st.tick, e, prm.n_teams,
                prm.auto_nertz, prm.max_ticks):
        burn_streams(st, e)
    write_table_masks(st, prm, scr, e, masks)
