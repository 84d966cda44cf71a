"""write_legal_mask: every seat's legal moves (R9-R19, R21, D12) as an int8 row over the
action ids of nertz_env/actions.py. The mask is the single source of legality: the tick
checks chosen moves against it, the Table lists it, the environments expose it."""
from __future__ import annotations

from numba import njit

from ..actions import BUILD0, CALL, FLIP, LAKE0, N_ACTIONS, STACK0, STACK_LENS, WAIT, shift_id
from ..layout import ACE, KING, MAX_RIVER, NO_CARD, PLAYING, SRC_NERTZ, SRC_RIVER0
from .rules import (available_card, can_build_on, fits_lake, has_empty_column, rank,
                    shift_index, source_of, stream_seat)

FREE, ACES_ONLY, NERTZ_ONLY = 0, 1, 2

_SHIFT_BASE = shift_id(0, 0, 1)   # = SHIFT0; shift_id is plain Python, used at import only


@njit(cache=True)
def _shift(a, i, b):
    bb = b if b < a else b - 1
    return _SHIFT_BASE + (4 * a + bb) * 13 + i


@njit(cache=True)
def flow_mode(st, prm, e, t):
    """R18 (an available ace must go to the Lake) and R19 (a playable Nertz card must go there
    unless the team has an empty River column). FREE when neither binds."""
    if not prm.flow_rules:
        return FREE
    n_src = SRC_RIVER0 + prm.river_size
    for src in range(n_src):
        c = available_card(st, e, t, src)
        if c != NO_CARD and rank(c) == ACE:
            return ACES_ONLY
    top = available_card(st, e, t, SRC_NERTZ)
    if top != NO_CARD and fits_lake(st, e, top) and not has_empty_column(st, e, t, prm.river_size):
        return NERTZ_ONLY
    return FREE


@njit(cache=True)
def write_legal_mask(st, prm, e, s, out):
    """out[a] = 1 iff action a is legal for seat s at table e now; out[WAIT] is always 1."""
    for a in range(N_ACTIONS):
        out[a] = 0
    out[WAIT] = 1
    if st.status[e] != PLAYING or st.tick[e] < st.ready[e, s]:
        return
    t = prm.seat_team[s]
    R = prm.river_size
    n_src = SRC_RIVER0 + R
    mode = flow_mode(st, prm, e, t)

    # R10 Lake plays and R16 stacks
    for src in range(n_src):
        c = available_card(st, e, t, src)
        if c == NO_CARD or not fits_lake(st, e, c):
            continue
        if mode == FREE or (mode == ACES_ONLY and rank(c) == ACE) or (mode == NERTZ_ONLY and src == SRC_NERTZ):
            out[LAKE0 + src] = 1
        if not prm.stacking:
            continue
        has_nertz = src == SRC_NERTZ
        cur = c
        length = 1
        while rank(cur) != KING:
            nxt_src = source_of(st, e, t, cur + 1, n_src)
            if nxt_src < 0:
                break
            cur = cur + 1
            length += 1
            has_nertz = has_nertz or nxt_src == SRC_NERTZ
            if mode == FREE or (mode == ACES_ONLY and rank(c) == ACE) or (mode == NERTZ_ONLY and has_nertz):
                out[STACK0 + STACK_LENS * src + length - 2] = 1
    if mode != FREE:
        return

    # R15 flip (Stream seat only, D9), R24 call (manual variant, D11)
    if s == stream_seat(prm, st.hand[e], t) and st.stream_n[e, t] > 0:
        out[FLIP] = 1
    if not prm.auto_nertz and st.nertz_n[e, t] == 0:
        out[CALL] = 1

    # R11 builds, R12 fills (never an ace, D6)
    for frm in range(2):
        c = available_card(st, e, t, frm)
        if c == NO_CARD or rank(c) == ACE:
            continue
        for col in range(R):
            n = st.river_n[e, t, col]
            if n == 0 or can_build_on(c, st.river[e, t, col, n - 1]):
                out[BUILD0 + MAX_RIVER * frm + col] = 1

    # R14 shifts (D7)
    for a in range(R):
        na = st.river_n[e, t, a]
        if na == 0 or rank(st.river[e, t, a, na - 1]) == ACE:
            continue
        for b in range(R):
            if b == a:
                continue
            if st.river_n[e, t, b] == 0:
                for i in range(1, na):
                    out[_shift(a, i, b)] = 1
            else:
                i = shift_index(st, e, t, a, b)
                if i >= 0:
                    out[_shift(a, i, b)] = 1


@njit(cache=True)
def write_table_masks(st, prm, e, masks):
    """Masks of every seat of table e (masks: [E, S, N_ACTIONS])."""
    for s in range(prm.n_seats):
        write_legal_mask(st, prm, e, s, masks[e, s])
