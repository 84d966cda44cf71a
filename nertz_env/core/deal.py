"""Deals (R5-R8, D2): from explicit deck orders (duplicate deals, replays) or from a shuffle
drawn with the table's seeded generator."""
from __future__ import annotations

from numba import njit

from ..encoding import DECK, NERTZ_SIZE, PLAYING
from .rules import random_below


@njit(cache=True, error_model="numpy", _nrt=False)
def clear_table(st, e):
    """Empty table e. Explicit loops, not slice assignment: inside prange, numba's parfor pass
    turns `a[e] = 0` into a nested parallel loop and may reorder it (seen with numba 0.60)."""
    T = st.nertz.shape[1]
    for t in range(T):
        for j in range(st.nertz.shape[2]):
            st.nertz[e, t, j] = -1
        for c in range(st.river.shape[2]):
            for j in range(st.river.shape[3]):
                st.river[e, t, c, j] = -1
            st.river_n[e, t, c] = 0
        for j in range(st.stream.shape[2]):
            st.stream[e, t, j] = -1
        st.nertz_n[e, t] = 0
        st.stream_n[e, t] = 0
        st.waste_n[e, t] = 0
        st.lake_own[e, t] = 0
        st.turnovers[e, t] = 0
        st.penalties[e, t] = 0
        st.callers[e, t] = 0
    for p in range(st.lake.shape[1]):
        for j in range(st.lake.shape[2]):
            st.lake[e, p, j] = -1
        st.lake_n[e, p] = 0
    for c in range(st.lake_next.shape[1]):
        st.lake_next[e, c] = 0
    for s in range(st.ready.shape[1]):
        st.ready[e, s] = 0
    st.lake_piles[e] = 0
    st.tick[e] = 0
    st.burns[e] = 0
    st.status[e] = PLAYING


@njit(cache=True, error_model="numpy", _nrt=False)
def deal_table(st, prm, e, decks, hand):
    """D2: decks[t, 0] is the top of team t's shuffled deck: River columns first, then the
    Nertz pile (its last card face up), then the Stream in deal order."""
    clear_table(st, e)
    st.hand[e] = hand
    R = prm.river_size
    for t in range(prm.n_teams):
        for c in range(R):
            st.river[e, t, c, 0] = decks[t, c]
            st.river_n[e, t, c] = 1
        for j in range(NERTZ_SIZE):
            st.nertz[e, t, j] = decks[t, R + j]
        st.nertz_n[e, t] = NERTZ_SIZE
        n = DECK - R - NERTZ_SIZE
        for j in range(n):
            st.stream[e, t, j] = decks[t, R + NERTZ_SIZE + j]
        st.stream_n[e, t] = n


@njit(cache=True, error_model="numpy", _nrt=False)
def shuffle_decks(st, prm, e, out):
    """R8: a Fisher-Yates shuffle of every team's deck from table e's generator."""
    for t in range(prm.n_teams):
        for j in range(DECK):
            out[t, j] = j
        for j in range(DECK - 1, 0, -1):
            k = random_below(st.rng, e, j + 1)
            tmp = out[t, j]
            out[t, j] = out[t, k]
            out[t, k] = tmp
