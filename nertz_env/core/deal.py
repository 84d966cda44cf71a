"""Deals (R5-R8, D2): from explicit deck orders (duplicate deals, replays) or from a shuffle
drawn with the table's seeded generator."""
from __future__ import annotations

from numba import njit

from ..layout import DECK, NERTZ_SIZE, PLAYING
from .rules import random_below


@njit(cache=True)
def clear_table(st, e):
    st.nertz[e] = -1
    st.nertz_n[e] = 0
    st.river[e] = -1
    st.river_n[e] = 0
    st.stream[e] = -1
    st.stream_n[e] = 0
    st.waste_n[e] = 0
    st.lake[e] = -1
    st.lake_n[e] = 0
    st.lake_piles[e] = 0
    st.lake_next[e] = 0
    st.lake_own[e] = 0
    st.ready[e] = 0
    st.tick[e] = 0
    st.turnovers[e] = 0
    st.burns[e] = 0
    st.penalties[e] = 0
    st.callers[e] = 0
    st.status[e] = PLAYING


@njit(cache=True)
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


@njit(cache=True)
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
