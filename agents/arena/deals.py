"""The keys of a tournament's luck: deal keys, priority keys per hand, random bots' keys.

- A *deal* fixes the luck of a table: the deck orders of every hand (one generator of its
  own, core/batch.py shuffle_deal) and the priority orders of conflicting moves (the table's
  generator restarted per hand from the deal's hand keys). Every lineup plays the same deals.
- Priority orders: hand h of deal d (h counted from the deal's first hand) restarts the
  table generator at hand_keys(...)[d, h], in every seating, so the hands of a game stay
  paired across seatings however many draws earlier hands took.
- Random agents draw from a generator per (lineup, deal, seating) (policy_keys): their coin
  flips are their own, not the deal's.
- Same arguments, same numbers: every key comes from `seed` through numpy's SeedSequence,
  and the keys of deal d do not depend on how many deals or lineups are played.

The one splitmix64 of the project is the core's (nertz_env/core/rules.py next_random); the
hand keys are its outputs, called from Python, so there is no second copy here.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from nertz_env.core.rules import next_random


def hand_keys(prio_keys, n_hands: int) -> np.ndarray:
    """uint64 [deals, n_hands]: the priority key of hand h of each deal; hand 0 keeps the
    deal's key k, hand h >= 1 the h-th output of a splitmix64 generator started at k
    (mix(k + h * golden)), so a hand's priority draws do not depend on what earlier hands of
    the game drew."""
    k = np.asarray(prio_keys, np.uint64).reshape(-1)
    out = np.empty((k.size, n_hands), np.uint64)
    if n_hands == 0:
        return out
    out[:, 0] = k
    state = k.copy()                              # one generator per deal, stepped in place
    for e in range(k.size):
        for h in range(1, n_hands):
            out[e, h] = next_random(state, e)
    return out


def deal_keys(seed: int, deals: int) -> tuple:
    """(deal keys, priority keys) of deals 0..deals-1: deal d's keys do not depend on `deals`."""
    g = np.random.default_rng(np.random.SeedSequence([int(seed), 0]))
    if not deals:
        return np.zeros(0, np.uint64), np.zeros(0, np.uint64)
    keys = g.integers(0, 2**63, size=(deals, 2), dtype=np.uint64)
    return keys[:, 0].copy(), keys[:, 1].copy()


def policy_keys(seed: int, lineup: int, deals: int, rotations: int) -> np.ndarray:
    """uint64 [deals, rotations]: the random bots' generator key of each table of a lineup."""
    g = np.random.default_rng(np.random.SeedSequence([int(seed), 1, int(lineup)]))
    return g.integers(0, 2**63, size=(deals, rotations), dtype=np.uint64)


class DealKeys(NamedTuple):
    """The deck and priority keys of deals first..first+len-1 (a block's deals)."""
    first: int               # the deal number of row 0
    deal: np.ndarray         # uint64 [n] deck keys
    hands: np.ndarray        # uint64 [n, H] priority key of each hand (hand_keys)

    @classmethod
    def of(cls, seed: int, d_lo: int, d_hi: int, n_hands: int) -> "DealKeys":
        dkeys, pkeys = deal_keys(seed, d_hi)
        return cls(d_lo, dkeys[d_lo:], hand_keys(pkeys[d_lo:], n_hands))

    def rows(self, deals) -> tuple:
        """(deck keys, hand keys) of the tables playing `deals` (deal numbers)."""
        i = np.asarray(deals, np.int64) - self.first
        return self.deal[i], self.hands[i]
