"""Predicates and queries, one per rule, for one table `e` of a NertzState (numba).

Card helpers first, then the seeded generator (R8, R22), then what each rule allows.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ..layout import ACE, KING, N_RANKS, NO_CARD, SRC_NERTZ, SRC_RIVER0, SRC_WASTE

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_S30, _S27, _S31, _S11 = np.uint64(30), np.uint64(27), np.uint64(31), np.uint64(11)


@njit(cache=True, inline="always")
def rank(card):
    return card % N_RANKS


@njit(cache=True, inline="always")
def suit(card):
    return card // N_RANKS


@njit(cache=True, inline="always")
def is_red(card):
    s = card // N_RANKS
    return s == 1 or s == 2


@njit(cache=True)
def next_random(rng, e):
    """splitmix64 step of table e's generator: a uint64."""
    rng[e] += _GOLDEN
    z = rng[e]
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    return z ^ (z >> _S31)


@njit(cache=True)
def random_below(rng, e, n):
    """Uniform int in [0, n) from table e's generator (53-bit multiply, no modulo bias
    that matters at these sizes)."""
    u = next_random(rng, e) >> _S11
    return int((u * np.uint64(n)) >> np.uint64(53))


@njit(cache=True, inline="always")
def can_build_on(card, top):
    """R11/R14: one rank lower and the opposite colour."""
    return rank(top) == rank(card) + 1 and is_red(top) != is_red(card)


@njit(cache=True)
def fits_lake(st, e, card):
    """R10: an ace starts a pile; another card needs a pile topped by its suit, one lower."""
    if rank(card) == ACE:
        return True
    return st.lake_next[e, card] > 0


@njit(cache=True)
def find_lake_pile(st, e, card):
    """D5: the first pile (in start order) that takes `card`; -1 if none. Not for aces."""
    want = card - 1
    for p in range(st.lake_piles[e]):
        n = st.lake_n[e, p]
        if n > 0 and st.lake[e, p, n - 1] % 52 == want:
            return p
    return -1


@njit(cache=True)
def available_card(st, e, t, src):
    """R9: the card available at a source of team t, or NO_CARD."""
    if src == SRC_NERTZ:
        n = st.nertz_n[e, t]
        return st.nertz[e, t, n - 1] if n > 0 else NO_CARD
    if src == SRC_WASTE:
        k = st.waste_n[e, t]
        return st.stream[e, t, k - 1] if k > 0 else NO_CARD
    c = src - SRC_RIVER0
    if c >= st.river_n.shape[2]:
        return NO_CARD
    n = st.river_n[e, t, c]
    return st.river[e, t, c, n - 1] if n > 0 else NO_CARD


@njit(cache=True)
def source_of(st, e, t, card, n_sources):
    """The source where `card` is available for team t, or -1."""
    for src in range(n_sources):
        if available_card(st, e, t, src) == card:
            return src
    return -1


@njit(cache=True)
def stream_seat(prm, hand, t):
    """R4: the seat holding team t's Stream. Solo: the seat itself. Pairs: the second seat
    in even hands, the first in odd hands (always the second without alternate_roles)."""
    seat0 = prm.team_seat0[t]
    if prm.team_size[t] == 1:
        return seat0
    if prm.alternate_roles and hand % 2 == 1:
        return seat0
    return seat0 + 1


@njit(cache=True)
def has_empty_column(st, e, t, river_size):
    for c in range(river_size):
        if st.river_n[e, t, c] == 0:
            return True
    return False


@njit(cache=True)
def shift_index(st, e, t, a, b):
    """R14/D7 for columns a -> b (b non-empty): the index in a whose card can go onto b's top,
    or -1. Columns run down one rank at a time, so that index is fixed by the ranks."""
    na = st.river_n[e, t, a]
    nb = st.river_n[e, t, b]
    top_b = st.river[e, t, b, nb - 1]
    i = rank(st.river[e, t, a, 0]) - (rank(top_b) - 1)
    if i < 0 or i >= na:
        return -1
    card = st.river[e, t, a, i]
    if rank(card) == ACE or is_red(card) == is_red(top_b):
        return -1
    return i


@njit(cache=True)
def column_has_ace_on_top(st, e, t, c):
    n = st.river_n[e, t, c]
    return n > 0 and rank(st.river[e, t, c, n - 1]) == ACE


@njit(cache=True)
def is_dead(card):
    return rank(card) == KING
