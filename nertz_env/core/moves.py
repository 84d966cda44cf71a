"""State changes, named as verbs (numba). They assume the move was checked (tick.py) and take
the arrays they change (see rules.py for why not the whole state)."""
from __future__ import annotations

from numba import njit

from ..encoding import KING, SRC_NERTZ, SRC_WASTE
from .rules import rank


@njit(cache=True, error_model="numpy", inline="always")
def take_from_source(nertz_n, stream, stream_n, waste_n, river, river_n, e, t, src):
    """Remove the available card of a source (R9). Playing the waste card s(k-1) makes
    s(k-2) available (R15): the Stream list closes up behind it."""
    if src == SRC_NERTZ:
        nertz_n[e, t] -= 1
    elif src == SRC_WASTE:
        k = waste_n[e, t]
        n = stream_n[e, t]
        for j in range(k - 1, n - 1):
            stream[e, t, j] = stream[e, t, j + 1]
        stream[e, t, n - 1] = -1
        stream_n[e, t] = n - 1
        waste_n[e, t] = k - 1
    else:
        c = src - 2
        n = river_n[e, t, c]
        river[e, t, c, n - 1] = -1
        river_n[e, t, c] = n - 1


@njit(cache=True, error_model="numpy", inline="always")
def put_on_lake(lake, lake_n, lake_piles, lake_next, lake_own, e, t, card, pile):
    """R10: put team t's card on Lake pile `pile` (-1 = start a new pile with an ace).
    Returns the pile."""
    if pile < 0:
        pile = lake_piles[e]
        lake_piles[e] = pile + 1
    n = lake_n[e, pile]
    if n > 0:
        lake_next[e, card] -= 1
    lake[e, pile, n] = t * 52 + card
    lake_n[e, pile] = n + 1
    if rank(card) != KING:
        lake_next[e, card + 1] += 1
    lake_own[e, t] += 1
    return pile


@njit(cache=True, error_model="numpy", inline="always")
def put_on_river(river, river_n, e, t, c, card):
    n = river_n[e, t, c]
    river[e, t, c, n] = card
    river_n[e, t, c] = n + 1


@njit(cache=True, error_model="numpy", inline="always")
def shift_run(river, river_n, e, t, a, i, b):
    """R14: move cards i..top of column a onto column b."""
    na = river_n[e, t, a]
    nb = river_n[e, t, b]
    for j in range(i, na):
        river[e, t, b, nb + j - i] = river[e, t, a, j]
        river[e, t, a, j] = -1
    river_n[e, t, b] = nb + na - i
    river_n[e, t, a] = i


@njit(cache=True, error_model="numpy", inline="always")
def flip_stream(stream_n, waste_n, turnovers, e, t):
    """R15/D8: flip up to 3 cards; with the stock empty, turn the Stream over instead."""
    k = waste_n[e, t]
    n = stream_n[e, t]
    if k < n:
        waste_n[e, t] = min(k + 3, n)
    else:
        waste_n[e, t] = 0
        turnovers[e, t] += 1


@njit(cache=True, error_model="numpy", inline="always")
def note_card_move(turnovers, burns, e):
    """D16: any card move restarts the idle count of R27/R28."""
    for t in range(turnovers.shape[1]):
        turnovers[e, t] = 0
    burns[e] = 0


@njit(cache=True, error_model="numpy", _nrt=False)
def burn_streams(st, e):
    """R27/R28 (D17): gather every Stream, its top card to the bottom; from the fourth burn
    in a row, also each Nertz pile's top card to the bottom. (Rare: takes the whole state.)"""
    T = st.stream_n.shape[1]
    for t in range(T):
        n = st.stream_n[e, t]
        st.waste_n[e, t] = 0
        if n > 1:
            first = st.stream[e, t, 0]
            for j in range(n - 1):
                st.stream[e, t, j] = st.stream[e, t, j + 1]
            st.stream[e, t, n - 1] = first
    for t in range(T):
        st.turnovers[e, t] = 0
    st.burns[e] += 1
    if st.burns[e] >= 4:
        for t in range(T):
            n = st.nertz_n[e, t]
            if n > 1:
                top = st.nertz[e, t, n - 1]
                for j in range(n - 1, 0, -1):
                    st.nertz[e, t, j] = st.nertz[e, t, j - 1]
                st.nertz[e, t, 0] = top
