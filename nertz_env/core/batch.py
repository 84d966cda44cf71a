"""The only parallel code: `prange` over tables. Each kernel writes into buffers it is given.

- step_batch: one tick at every table (Engine.step).
- deal_batch / deal_seeded_batch: (re)deal chosen tables.
- play_random_batch: many ticks per table with uniformly random legal moves and automatic
  re-deals, entirely inside numba (benchmarks, whole random games).
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from ..actions import N_ACTIONS
from ..layout import PLAYING
from .deal import deal_table, shuffle_decks
from .legal import write_table_masks
from .rules import random_below
from .scoring import decide_winner, write_hand_scores
from .tick import step_table


@njit(cache=True, parallel=True)
def step_batch(st, prm, scr, actions, priority, masks, applied):
    for e in prange(st.tick.shape[0]):
        step_table(st, prm, scr, e, actions, priority, masks, applied)


@njit(cache=True, parallel=True)
def deal_batch(st, prm, scr, which, decks, hands, masks):
    """Deal table e from decks[e] for every e with which[e] != 0."""
    for e in prange(st.tick.shape[0]):
        if which[e] != 0:
            deal_table(st, prm, e, decks[e], hands[e])
            write_table_masks(st, prm, e, masks)


@njit(cache=True, parallel=True)
def deal_seeded_batch(st, prm, scr, which, hands, masks):
    """Shuffle with each table's generator and deal, for every e with which[e] != 0."""
    for e in prange(st.tick.shape[0]):
        if which[e] != 0:
            shuffle_decks(st, prm, e, scr.decks[e])
            deal_table(st, prm, e, scr.decks[e], hands[e])
            write_table_masks(st, prm, e, masks)


@njit(cache=True)
def pick_random_legal(mask, policy_rng, e):
    """A uniformly random legal action of one mask row."""
    n = 0
    for a in range(N_ACTIONS):
        n += mask[a]
    k = random_below(policy_rng, e, n)
    for a in range(N_ACTIONS):
        if mask[a] != 0:
            if k == 0:
                return a
            k -= 1
    return 0


@njit(cache=True, parallel=True)
def play_random_batch(st, prm, scr, masks, actions, priority, applied, policy_rng, n_ticks,
                      hands_done, steps_done):
    """Every table plays n_ticks ticks with uniformly random legal moves (masks written every
    tick); a finished hand is re-dealt at once from the table's generator. Counts finished
    hands and agent-steps (seats x ticks) per table into hands_done / steps_done."""
    S = prm.n_seats
    for e in prange(st.tick.shape[0]):
        for _ in range(n_ticks):
            if st.status[e] != PLAYING:
                hands_done[e] += 1
                shuffle_decks(st, prm, e, scr.decks[e])
                deal_table(st, prm, e, scr.decks[e], st.hand[e])
                write_table_masks(st, prm, e, masks)
            for s in range(S):
                actions[e, s] = pick_random_legal(masks[e, s], policy_rng, e)
            step_table(st, prm, scr, e, actions, priority, masks, applied)
            steps_done[e] += S




@njit(cache=True, parallel=True)
def write_masks_batch(st, prm, masks):
    """Masks of every seat of every table (after a position was loaded from outside)."""
    for e in prange(st.tick.shape[0]):
        write_table_masks(st, prm, e, masks)


@njit(cache=True, parallel=True)
def write_scores_batch(st, prm, out):
    """R29 for every table: out [E, T]."""
    for e in prange(st.tick.shape[0]):
        write_hand_scores(st, prm, e, out[e])


@njit(cache=True, parallel=True)
def play_random_games_batch(st, prm, scr, masks, actions, priority, applied, policy_rng,
                            hand_scores, n_hands, calls, winners):
    """R30: every table plays one whole game with uniformly random legal moves: hands are
    dealt from the table's generator with hand numbers 0, 1, ... (roles swap, R4) until
    decide_winner names a winner or hand_scores' hand axis is full (winner -1).
    Out: hand_scores [E, H, T], n_hands [E], calls [E, T], winners [E]."""
    S = prm.n_seats
    T = prm.n_teams
    for e in prange(st.tick.shape[0]):
        totals = np.zeros(T, np.int64)
        winners[e] = -1
        for h in range(hand_scores.shape[1]):
            shuffle_decks(st, prm, e, scr.decks[e])
            deal_table(st, prm, e, scr.decks[e], h)
            write_table_masks(st, prm, e, masks)
            while st.status[e] == PLAYING:
                for s in range(S):
                    actions[e, s] = pick_random_legal(masks[e, s], policy_rng, e)
                step_table(st, prm, scr, e, actions, priority, masks, applied)
            write_hand_scores(st, prm, e, hand_scores[e, h])
            for t in range(T):
                totals[t] += hand_scores[e, h, t]
                calls[e, t] += st.callers[e, t]
            n_hands[e] = h + 1
            w = decide_winner(totals, calls[e], prm.target_score)
            if w >= 0:
                winners[e] = w
                break
