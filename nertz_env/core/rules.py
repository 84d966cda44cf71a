"""Predicates and queries, one per rule (numba).

Performance rules of this package (the numbers are in benchmarks/README.md):
- A call that is not inlined and passes the NertzState tuple (21 arrays) costs more in
  argument passing and reference counting than a whole seat's legal-move scan. So only
  the per-table entry points (write_table_masks, step_table, deal_table, ...) take `st`; every
  helper called per seat or per card takes the few arrays it reads, or is inline="always"
  (scoring.write_hand_scores: its calls had cost far more than its arithmetic).
- Every non-inlined, non-parallel kernel that does not allocate is compiled with `_nrt=False`
  (no reference counting): numba's NRT otherwise increments and decrements the reference
  count of every array it pulls out of the state tuples, an atomic operation on a counter
  that every worker thread shares, a visible part of the vector env's step. A kernel that
  allocates cannot take the flag (numba refuses to
  compile it, so the rule cannot silently break): the two whole-game loops of batch.py
  allocate their work rows and keep NRT; the per-table functions they call do not.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ..encoding import ACE, N_RANKS, NO_CARD, SRC_NERTZ, SRC_WASTE

_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_M1 = np.uint64(0xBF58476D1CE4E5B9)
_M2 = np.uint64(0x94D049BB133111EB)
_S30, _S27, _S31, _S11 = np.uint64(30), np.uint64(27), np.uint64(31), np.uint64(11)


# Lookup tables instead of % and // (card ids are never negative where these are called):
# the legal-move scan's main cost otherwise.
_RANK = np.array([c % N_RANKS for c in range(52)], dtype=np.int64)
_SUIT = np.array([c // N_RANKS for c in range(52)], dtype=np.int64)
_RED = np.array([(c // N_RANKS) in (1, 2) for c in range(52)], dtype=np.bool_)


@njit(cache=True, error_model="numpy", inline="always")
def rank(card):
    """R1: 0 = A ... 12 = K."""
    return _RANK[card]


@njit(cache=True, error_model="numpy", inline="always")
def suit(card):
    return _SUIT[card]


@njit(cache=True, error_model="numpy", inline="always")
def is_red(card):
    """R1: hearts and diamonds are red."""
    return _RED[card]


@njit(cache=True, error_model="numpy", inline="always")
def next_random(rng, e):
    """splitmix64 step of table e's generator: a uint64."""
    rng[e] += _GOLDEN
    z = rng[e]
    z = (z ^ (z >> _S30)) * _M1
    z = (z ^ (z >> _S27)) * _M2
    return z ^ (z >> _S31)


@njit(cache=True, error_model="numpy", inline="always")
def random_below(rng, e, n):
    """Uniform int in [0, n) from table e's generator (53-bit multiply-shift)."""
    u = next_random(rng, e) >> _S11
    return int((u * np.uint64(n)) >> np.uint64(53))


@njit(cache=True, error_model="numpy", inline="always")
def can_build_on(card, top):
    """R11/R14: one rank lower and the opposite colour."""
    return rank(top) == rank(card) + 1 and is_red(top) != is_red(card)


@njit(cache=True, error_model="numpy", inline="always")
def fits_lake(lake_next, e, card):
    """R10: an ace starts a pile; another card needs a pile topped by its suit, one lower
    (lake_next counts the piles waiting for each card)."""
    return rank(card) == ACE or lake_next[e, card] > 0


@njit(cache=True, error_model="numpy", inline="always")
def find_lake_pile(lake, lake_n, lake_piles, e, card):
    """D5: the first pile (in start order) that takes `card`; -1 if none. Not for aces."""
    want = card - 1
    for p in range(lake_piles[e]):
        n = lake_n[e, p]
        if n > 0 and lake[e, p, n - 1] % 52 == want:
            return p
    return -1


@njit(cache=True, error_model="numpy", inline="always")
def available_card(nertz, nertz_n, stream, waste_n, river, river_n, e, t, src):
    """R9: the card available at a source of team t, or NO_CARD."""
    if src == SRC_NERTZ:
        n = nertz_n[e, t]
        return nertz[e, t, n - 1] if n > 0 else NO_CARD
    if src == SRC_WASTE:
        k = waste_n[e, t]
        return stream[e, t, k - 1] if k > 0 else NO_CARD
    c = src - 2
    n = river_n[e, t, c]
    return river[e, t, c, n - 1] if n > 0 else NO_CARD


@njit(cache=True, error_model="numpy", inline="always")
def stream_seat(team_seat0, team_size, alternate_roles, hand, t):
    """R4: the seat holding team t's Stream. Solo: the seat itself. Pairs: the second seat
    in even hands, the first in odd hands (always the second without alternate_roles)."""
    seat0 = team_seat0[t]
    if team_size[t] == 1:
        return seat0
    if alternate_roles and hand % 2 == 1:
        return seat0
    return seat0 + 1


@njit(cache=True, error_model="numpy", inline="always")
def shift_index(col_a, na, bottom_rank, top_b):
    """R14/D7 for columns a -> b (b non-empty): the index in column a (cards col_a, height
    na, bottom card of rank bottom_rank) whose card can go onto b's top card top_b, or -1.
    Columns run down one rank at a time, so that index is fixed by the ranks."""
    i = bottom_rank - (rank(top_b) - 1)
    if i < 0 or i >= na:
        return -1
    card = col_a[i]
    if rank(card) == ACE or is_red(card) == is_red(top_b):
        return -1
    return i
