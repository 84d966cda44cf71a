"""Worlds: copies of a real table in which what a seat cannot see is dealt anew.

What no player sees, by the rules: the Nertz pile below its top card (R6: only the top is face
up) and every Stream card but the available one (R7, R15: the stock is face down and the
waste shows only its top card). Everything else is face up for every seat: the River columns
(R5), the Lake with each card's deck (R1, R10), the Nertz and waste tops, every count. So under
the memoryless belief ("uniform", the first of the search's beliefs) the hidden cards are the
same for every seat, its own team's included: a player who has not memorised its Stream does
not know its stock's order, nor which of its unseen cards lie in its Nertz pile.

redeal_uniform_slots(st, scr, slots, seeds): at each slot, every team's hidden positions are
refilled from that team's own cards (the card backs differ, R1), drawn from a generator seeded
by seeds[k]. Which cards go there is read from the public side only: the team's 52-card deck
minus its visible cards (River, Lake cards of its deck, Nertz top, waste top); where the
positions are, from the counts (nertz_n, stream_n, waste_n). The true hidden cards are never
read, so permuting them cannot change a world (tests/core/test_worlds.py). On a dealt table
the pool is exactly the hidden cards, so a world is a permutation of them within each team; a
layout that leaves cards out of play (docs/api.md) gives a pool larger than the positions,
and the world draws which of them are in play.

fork_worlds(...): W worlds of table i, each copied into C consecutive slots (one per
candidate move) with the world's own priority key: slot j + w * C + c is world w, candidate c.
belief BELIEF_UNIFORM re-deals as above; BELIEF_MEMORY keeps the hidden cards the table's
memory knows (core/memory.py: cards seen as waste or Nertz tops, kept in place from public
events) and re-deals only the others, from the team's cards neither visible nor remembered;
BELIEF_ORACLE keeps the true cards (a ceiling, never an agent; with the table's own key it is
the rollout-fidelity setting).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ..encoding import DECK
from .fork import fork_rows, state_pairs
from .memory import memory_row, redeal_memory_slots, unseen_pool
from .rules import random_below
from .state import NertzState, Scratch

BELIEF_ORACLE, BELIEF_UNIFORM, BELIEF_MEMORY = 0, 1, 2
BELIEFS = {"oracle": BELIEF_ORACLE, "uniform": BELIEF_UNIFORM, "memory": BELIEF_MEMORY}


@njit(cache=True, error_model="numpy", _nrt=False)
def redeal_uniform_table(st, scr, e, seed):
    """Table e's hidden cards (module docstring) dealt anew from the generator `seed`; the
    table's own key (st.rng[e]) is left as it was. scr.decks[e] is the work row (the deal's
    buffer, free between deals)."""
    keep = st.rng[e]
    st.rng[e] = seed
    T = st.nertz_n.shape[1]
    pool = scr.decks[e]
    unseen_pool(st, e, pool)                 # 1 = not seen anywhere (yet)
    for t in range(T):
        m = 0                                # the unseen cards, ascending, to the row's front
        for c in range(DECK):
            if pool[t, c] != 0:
                pool[t, m] = c
                m += 1
        n = st.nertz_n[e, t]
        k = st.waste_n[e, t]
        below = n - 1 if n > 0 else 0        # hidden Nertz cards: all but the top
        hidden = below + st.stream_n[e, t] - (1 if k > 0 else 0)
        for q in range(hidden):              # a partial Fisher-Yates draw from the pool
            r = q + random_below(st.rng, e, m - q)
            tmp = pool[t, q]
            pool[t, q] = pool[t, r]
            pool[t, r] = tmp
        q = 0
        for d in range(below):
            st.nertz[e, t, d] = pool[t, q]
            q += 1
        for d in range(st.stream_n[e, t]):
            if d != k - 1:
                st.stream[e, t, d] = pool[t, q]
                q += 1
    st.rng[e] = keep


@njit(cache=True, error_model="numpy", _nrt=False)
def redeal_uniform_slots(st, scr, slots, seeds):
    """redeal_uniform_table at every slot slots[k] with the generator seed seeds[k]."""
    for k in range(slots.shape[0]):
        redeal_uniform_table(st, scr, slots[k], seeds[k])


def world_seeds(seed, n_worlds: int) -> tuple[np.ndarray, np.ndarray]:
    """(keys, deal_seeds), uint64 [n_worlds] each: the worlds' priority keys and the seeds of
    their re-deals, drawn from numpy's default_rng(seed) (an int or a sequence of them, such
    as (deal, tick, seat)): the same seed, the same worlds."""
    g = np.random.default_rng(seed)
    keys = g.integers(0, 2**63, size=n_worlds, dtype=np.uint64)
    return keys, g.integers(0, 2**63, size=n_worlds, dtype=np.uint64)


def world_slots(j: int, n_worlds: int, n_cands: int) -> np.ndarray:
    """int64 [n_worlds, n_cands]: the slot of world w, candidate c (j + w * n_cands + c)."""
    return j + np.arange(n_worlds * n_cands, dtype=np.int64).reshape(n_worlds, n_cands)


def fork_worlds(src: NertzState, i: int, dst: NertzState, scr: Scratch, j: int, n_cands: int,
                keys, deal_seeds, belief: int = BELIEF_UNIFORM, pairs=None,
                self_pairs=None, memory=None) -> np.ndarray:
    """len(keys) worlds of table i of src in dst (scr: dst's scratch), each in n_cands
    consecutive slots from j on, all with the world's priority key keys[w]; under
    BELIEF_UNIFORM the world's hidden cards re-dealt from deal_seeds[w] (BELIEF_ORACLE: the
    true cards; BELIEF_MEMORY: the cards `memory` (core/memory.py, the memory of src's tables,
    up to date) remembers kept, the others re-dealt from deal_seeds[w]). pairs / self_pairs:
    state_pairs(src, dst) / state_pairs(dst, dst), when the caller keeps them. Returns
    world_slots(j, W, n_cands). ValueError (one line, nothing written) when the slots do not
    fit dst or the arguments disagree (a memory not of table i's position included)."""
    keys = np.asarray(keys, np.uint64)
    deal_seeds = np.asarray(deal_seeds, np.uint64)
    W = keys.shape[0]
    M = dst.tick.shape[0]
    if belief not in BELIEFS.values():
        raise ValueError(f"belief={belief!r} must be one of {BELIEFS} (core/worlds.py)")
    if keys.ndim != 1 or deal_seeds.shape != keys.shape:
        raise ValueError(f"keys and deal_seeds must be two uint64 arrays of one length "
                         f"(the worlds), got shapes {keys.shape} and {deal_seeds.shape}")
    if not 0 <= i < src.tick.shape[0]:
        raise ValueError(f"table i={i} is not a table of the source (0..{src.tick.shape[0] - 1})")
    if n_cands < 1 or j < 0 or j + W * n_cands > M:
        raise ValueError(f"{W} worlds x {n_cands} candidates from slot {j} do not fit the "
                         f"{M} slots of the rollout state")
    known = memory_row(src, i, memory) if belief == BELIEF_MEMORY else None
    slots = world_slots(j, W, n_cands)
    first = np.ascontiguousarray(slots[:, 0])
    fork_rows(src, dst, np.full(W, i, np.int64), first, keys, pairs)
    if belief == BELIEF_UNIFORM:
        redeal_uniform_slots(dst, scr, first, deal_seeds)
    elif belief == BELIEF_MEMORY:
        redeal_memory_slots(dst, scr, first, deal_seeds, known)
    if n_cands > 1:
        rest = np.ascontiguousarray(slots[:, 1:]).reshape(-1)
        fork_rows(dst, dst, np.repeat(first, n_cands - 1), rest, np.repeat(keys, n_cands - 1),
                  state_pairs(dst, dst) if self_pairs is None else self_pairs)
    return slots
