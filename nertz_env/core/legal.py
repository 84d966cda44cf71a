"""write_table_masks: every seat's legal moves (R9-R19, R21, D12) as int8 rows over the
action ids of nertz_env/actions.py. The mask is the single source of legality: the tick
checks chosen moves against it, the Table lists it, the environments expose it.

It also leaves each team's available cards (R9) in scr.avail[e, t, source], which the next
tick's capture step reads: they describe the same start-of-tick position as the masks.
"""
from __future__ import annotations

from numba import njit

from ..encoding import ACE, KING, NO_CARD, PLAYING, SRC_NERTZ, SRC_RIVER0
from .codec import CALL, FLIP, N_ACTIONS, WAIT, build_id, lake_id, shift_id, stack_id
from .rules import available_card, can_build_on, fits_lake, rank, shift_index, stream_seat

FREE, ACES_ONLY, NERTZ_ONLY = 0, 1, 2


@njit(cache=True, error_model="numpy", inline="always")
def flow_mode(avail, n_src, lake_next, river_n, e, t, river_size, flow_rules):
    """R18 (an available ace must go to the Lake) and R19 (a playable Nertz card must go there
    unless the team has an empty River column). FREE when neither binds."""
    if not flow_rules:
        return FREE
    for src in range(n_src):
        c = avail[e, t, src]
        if c != NO_CARD and rank(c) == ACE:
            return ACES_ONLY
    top = avail[e, t, SRC_NERTZ]
    if top == NO_CARD or not fits_lake(lake_next, e, top):
        return FREE
    for c in range(river_size):
        if river_n[e, t, c] == 0:
            return FREE
    return NERTZ_ONLY


@njit(cache=True, error_model="numpy", inline="always")
def find_source(avail, e, t, n_src, card):
    """The source where `card` is available to team t (avail: scr.avail), or -1."""
    for src in range(n_src):
        if avail[e, t, src] == card:
            return src
    return -1


@njit(cache=True, error_model="numpy", inline="always")
def write_team_available(nertz, nertz_n, stream, waste_n, river, river_n, avail, e, n_teams,
                         n_src):
    """avail[e, t, src] = the available card of every source of every team (R9)."""
    for t in range(n_teams):
        for src in range(n_src):
            avail[e, t, src] = available_card(nertz, nertz_n, stream, waste_n, river, river_n,
                                              e, t, src)


@njit(cache=True, error_model="numpy", inline="always")
def write_seat_mask(avail, river, river_n, stream_n, nertz_n, lake_next, e, t, is_stream_seat,
                    R, stacking, flow_rules, auto_nertz, masks, s):
    """The legal moves of ready seat s of team t (D12) into masks[e, s], which holds only
    WAIT. Inlined into write_table_masks, which runs without reference counting (rules.py), so
    one-row views (row, the team's River) cost nothing and save index arithmetic."""
    n_src = SRC_RIVER0 + R
    row = masks[e, s]
    mode = flow_mode(avail, n_src, lake_next, river_n, e, t, R, flow_rules)

    # R10 Lake plays and R16 stacks (D10)
    for src in range(n_src):
        c = avail[e, t, src]
        if c == NO_CARD or not fits_lake(lake_next, e, c):
            continue
        if mode == FREE or (mode == ACES_ONLY and rank(c) == ACE) or (mode == NERTZ_ONLY and src == SRC_NERTZ):
            row[lake_id(src)] = 1
        if not stacking:
            continue
        has_nertz = src == SRC_NERTZ
        cur = c
        length = 1
        while rank(cur) != KING:
            nxt_src = find_source(avail, e, t, n_src, cur + 1)
            if nxt_src < 0:
                break
            cur = cur + 1
            length += 1
            has_nertz = has_nertz or nxt_src == SRC_NERTZ
            if mode == FREE or (mode == ACES_ONLY and rank(c) == ACE) or (mode == NERTZ_ONLY and has_nertz):
                row[stack_id(src, length)] = 1
    if mode != FREE:
        return

    # R15 flip (Stream seat only, D9), R24 call (manual variant, D11)
    if is_stream_seat and stream_n[e, t] > 0:
        row[FLIP] = 1
    if not auto_nertz and nertz_n[e, t] == 0:
        row[CALL] = 1

    # R11 builds, R12 fills (never an ace, D6)
    for frm in range(2):
        c = avail[e, t, frm]
        if c == NO_CARD or rank(c) == ACE:
            continue
        for col in range(R):
            n = river_n[e, t, col]
            if n == 0 or can_build_on(c, river[e, t, col, n - 1]):
                row[build_id(frm, col)] = 1

    # R14 shifts (D7): onto an empty column from any index but the bottom, onto a non-empty
    # one at rules.shift_index (column a's bottom rank read once per column)
    rv = river[e, t]
    rn = river_n[e, t]
    for a in range(R):
        na = rn[a]
        if na == 0 or rank(rv[a, na - 1]) == ACE:
            continue
        bottom = rank(rv[a, 0])
        for b in range(R):
            if b == a:
                continue
            nb = rn[b]
            if nb == 0:
                for i in range(1, na):
                    row[shift_id(a, i, b)] = 1
            else:
                i = shift_index(rv[a], na, bottom, rv[b, nb - 1])
                if i >= 0:
                    row[shift_id(a, i, b)] = 1


@njit(cache=True, error_model="numpy", _nrt=False)
def write_table_masks(st, prm, scr, e, masks):
    """Masks of every seat of table e (masks: [E, S, N_ACTIONS]); Wait is always legal.
    A seat that is not ready, or a finished hand, has only Wait (R21, D12)."""
    write_team_available(st.nertz, st.nertz_n, st.stream, st.waste_n, st.river, st.river_n,
                         scr.avail, e, prm.n_teams, SRC_RIVER0 + prm.river_size)
    playing = st.status[e] == PLAYING
    tick = st.tick[e]
    hand = st.hand[e]
    for s in range(prm.n_seats):
        for a in range(N_ACTIONS):
            masks[e, s, a] = 0
        masks[e, s, WAIT] = 1
        if not playing or tick < st.ready[e, s]:
            continue
        t = prm.seat_team[s]
        is_stream = s == stream_seat(prm.team_seat0, prm.team_size, prm.alternate_roles, hand, t)
        write_seat_mask(scr.avail, st.river, st.river_n, st.stream_n, st.nertz_n,
                        st.lake_next, e, t, is_stream, prm.river_size, prm.stacking,
                        prm.flow_rules, prm.auto_nertz, masks, s)


@njit(cache=True, error_model="numpy", _nrt=False)
def first_illegal(masks, actions, status):
    """R31's check before a tick: e * S + s of the first seat, at a table still in play, whose
    action (actions [E, S]) is not in its mask or not an id at all; -1 when every move is
    legal."""
    n_tables, n_seats = actions.shape
    for e in range(n_tables):
        if status[e] != PLAYING:
            continue
        for s in range(n_seats):
            a = actions[e, s]
            if a < 0 or a >= masks.shape[2] or masks[e, s, a] == 0:
                return e * n_seats + s
    return -1
