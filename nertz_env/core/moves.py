"""State changes, named as verbs, for one table `e` (numba). They assume the move was
checked; the checks live in rules.py and tick.py."""
from __future__ import annotations

from numba import njit

from ..layout import KING, SRC_NERTZ, SRC_RIVER0, SRC_WASTE
from .rules import rank


@njit(cache=True)
def take_from_source(st, e, t, src):
    """Remove the available card of a source (R9). Playing the waste card s(k-1) makes
    s(k-2) available (R15): the Stream list closes up behind it."""
    if src == SRC_NERTZ:
        st.nertz_n[e, t] -= 1
    elif src == SRC_WASTE:
        k = st.waste_n[e, t]
        n = st.stream_n[e, t]
        for j in range(k - 1, n - 1):
            st.stream[e, t, j] = st.stream[e, t, j + 1]
        st.stream[e, t, n - 1] = -1
        st.stream_n[e, t] = n - 1
        st.waste_n[e, t] = k - 1
    else:
        c = src - SRC_RIVER0
        n = st.river_n[e, t, c]
        st.river[e, t, c, n - 1] = -1
        st.river_n[e, t, c] = n - 1


@njit(cache=True)
def put_on_lake(st, e, t, card, pile):
    """R10: put team t's card on Lake pile `pile` (-1 = start a new pile with an ace)."""
    if pile < 0:
        pile = st.lake_piles[e]
        st.lake_piles[e] = pile + 1
    n = st.lake_n[e, pile]
    if n > 0:
        st.lake_next[e, card] -= 1
    st.lake[e, pile, n] = t * 52 + card
    st.lake_n[e, pile] = n + 1
    if rank(card) != KING:
        st.lake_next[e, card + 1] += 1
    st.lake_own[e, t] += 1
    return pile


@njit(cache=True)
def put_on_river(st, e, t, c, card):
    n = st.river_n[e, t, c]
    st.river[e, t, c, n] = card
    st.river_n[e, t, c] = n + 1


@njit(cache=True)
def shift_run(st, e, t, a, i, b):
    """R14: move cards i..top of column a onto column b."""
    na = st.river_n[e, t, a]
    nb = st.river_n[e, t, b]
    for j in range(i, na):
        st.river[e, t, b, nb + j - i] = st.river[e, t, a, j]
        st.river[e, t, a, j] = -1
    st.river_n[e, t, b] = nb + na - i
    st.river_n[e, t, a] = i


@njit(cache=True)
def flip_stream(st, e, t):
    """R15/D8: flip up to 3 cards; with the stock empty, turn the Stream over instead."""
    k = st.waste_n[e, t]
    n = st.stream_n[e, t]
    if k < n:
        st.waste_n[e, t] = min(k + 3, n)
    else:
        st.waste_n[e, t] = 0
        st.turnovers[e, t] += 1


@njit(cache=True)
def note_card_move(st, e):
    """D16: any card move restarts the idle count of R27/R28."""
    st.turnovers[e, :] = 0
    st.burns[e] = 0


@njit(cache=True)
def burn_streams(st, e):
    """R27/R28 (D17): gather every Stream, its top card to the bottom; from the fourth burn
    in a row, also each Nertz pile's top card to the bottom."""
    T = st.stream_n.shape[1]
    for t in range(T):
        n = st.stream_n[e, t]
        st.waste_n[e, t] = 0
        if n > 1:
            first = st.stream[e, t, 0]
            for j in range(n - 1):
                st.stream[e, t, j] = st.stream[e, t, j + 1]
            st.stream[e, t, n - 1] = first
    st.turnovers[e, :] = 0
    st.burns[e] += 1
    if st.burns[e] >= 4:
        for t in range(T):
            n = st.nertz_n[e, t]
            if n > 1:
                top = st.nertz[e, t, n - 1]
                for j in range(n - 1, 0, -1):
                    st.nertz[e, t, j] = st.nertz[e, t, j - 1]
                st.nertz[e, t, 0] = top


