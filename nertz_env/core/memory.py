"""Memory: what the table has seen of every team's face-down cards, kept from public events.

Whose memory. By the rules nobody looks at a face-down card: the Nertz pile shows only its top
(R6), the stock is face down and the waste shows only its top (R7, R15), and every face-up
card, every count and every burn is seen by every seat (the observation shows each team's
waste and Nertz tops, core/observe.py). So what any seat can know of a face-down card comes
from watching public events, and every seat watches the same ones: the memory is public, ONE
per table, the same for every seat (a seat's own Stream included). There is no private part:
a team has no way to look at its own stock or Nertz pile.

What it knows, from the rules (R15, D8, D16, D17, R27, R28):
- a card is seen when it is a waste top or a Nertz top at the end of a tick (a flip of up to
  three cards shows the last one turned; playing the waste top shows the card under it; playing
  the Nertz top shows the next one);
- Stream positions (the list s0, s1, ... of state.stream, stock and waste together) move only
  when a card leaves it and at a burn: playing the waste top s(k-1) closes the list up behind
  it (at most one waste card a team leaves per tick: a teammate naming the same card fails,
  R23, and a flip before the play moves the top away, D14); a turn-over keeps the order (R15);
  an idle burn (R27) rotates the list by one (s0 to the end). A flip never moves a card;
- Nertz positions move when the top is played and at a Nertz burn (R28: from the fourth burn
  in a row every pile of two or more cards moves its top to the bottom, where it is now known);
- a burn and a card move never fall in the same tick (a card move zeroes the turn-over counts,
  which grow by at most one a tick), so a rise of the public burn count marks a burn.
So a position's card, once seen, stays known (it moves with the list) until it is played.
Not remembered: a card shown only inside a tick (a waste top flipped in the tick of a burn, the
card under a waste top played and then flipped over in the same tick): the memory reads the
table between ticks, as the observation does. A pass through the Stream with no play shows
positions 2, 5, 8, ... and the last one; the burns' rotations show the rest (three burns in a
row with no play: every position; tests/core/test_memory.py).

The layout (int32 [E, T, MEM_W], allocate_memory; this table is the one place that says it):

    | offset       | size | per table e, team t                                            |
    |--------------|------|----------------------------------------------------------------|
    | MEM_STREAM   | 52   | card id seen at Stream position d (s_d, stock and waste as one |
    |              |      |   list, state.stream's order), UNKNOWN (-1) if not seen        |
    |              |      |   (or d >= the Stream's count)                                 |
    | MEM_NERTZ    | 13   | card id seen at Nertz depth d (0 = bottom), or UNKNOWN         |
    | MEM_STREAM_N | 1    | stream_n at the last update                                    |
    | MEM_WASTE_N  | 1    | waste_n at the last update                                     |
    | MEM_NERTZ_N  | 1    | nertz_n at the last update                                     |
    | MEM_TICK     | 1    | the table's tick at the last update (every team's row alike)   |
    | MEM_HAND     | 1    | the table's hand number at the last update (alike)             |
    | MEM_BURNS    | 1    | the table's burn count at the last update (alike)              |
    MEM_W = 71. The visible tops are in it too: known = a card id at a position.

Kernels (numba, cache=True):
- init_memory_range(st, mem, lo, hi): a memory of what the tables show now (a fresh deal: the
  Nertz tops only); update_memory_range(st, mem, lo, hi): after each tick, from the previous
  counts kept in the memory and the table's public side (tops, counts, tick, hand, burns);
  never a face-down card. A table whose tick did not advance by exactly one since the last
  update (a new deal or hand, a skipped update, a layout) or whose counts moved in a way no
  tick moves them is remembered afresh (it forgets rather than lies); a table whose tick and
  hand did not change is left alone (a finished hand) unless its counts or tops did (a new
  deal at the same tick).
- redeal_memory_slots(st, scr, slots, seeds, known): core/worlds.py's re-deal under the
  'memory' belief: hidden positions whose card the memory knows keep it; the other hidden
  positions are dealt from the team's cards that are neither visible nor remembered, drawn
  as the uniform belief draws them (with nothing remembered, byte for byte its worlds).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ..encoding import DECK, NERTZ_SIZE, STREAM_CAP
from .rules import random_below

UNKNOWN = -1
MEM_STREAM = 0
MEM_NERTZ = MEM_STREAM + STREAM_CAP          # 52
MEM_STREAM_N = MEM_NERTZ + NERTZ_SIZE        # 65
MEM_WASTE_N = MEM_STREAM_N + 1               # 66
MEM_NERTZ_N = MEM_WASTE_N + 1                # 67
MEM_TICK = MEM_NERTZ_N + 1                   # 68
MEM_HAND = MEM_TICK + 1                      # 69
MEM_BURNS = MEM_HAND + 1                     # 70
MEM_W = MEM_BURNS + 1                        # 71
NERTZ_BURN_FROM = 4                          # R28: the fourth burn in a row moves Nertz cards


def allocate_memory(config, n_tables: int) -> np.ndarray:
    """int32 [n_tables, T, MEM_W], every entry -1: nothing known, and no tick (the first
    update_memory_range remembers the tables afresh)."""
    return np.full((n_tables, config.num_teams, MEM_W), UNKNOWN, np.int32)


# ---------------------------------------------------------------------------- kernels
@njit(cache=True, error_model="numpy", inline="always")
def remember_tops(st, mem, e, t):
    """Team t's visible tops (waste, Nertz) and counts into its row; R15 / R6."""
    k = st.waste_n[e, t]
    q = st.nertz_n[e, t]
    if k > 0:
        mem[e, t, MEM_STREAM + k - 1] = st.stream[e, t, k - 1]
    if q > 0:
        mem[e, t, MEM_NERTZ + q - 1] = st.nertz[e, t, q - 1]
    mem[e, t, MEM_STREAM_N] = st.stream_n[e, t]
    mem[e, t, MEM_WASTE_N] = k
    mem[e, t, MEM_NERTZ_N] = q


@njit(cache=True, error_model="numpy", inline="always")
def remember_clock(st, mem, e):
    for t in range(mem.shape[1]):
        mem[e, t, MEM_TICK] = st.tick[e]
        mem[e, t, MEM_HAND] = st.hand[e]
        mem[e, t, MEM_BURNS] = st.burns[e]


@njit(cache=True, error_model="numpy", inline="always")
def forget(mem, e, t, lo, hi):
    for j in range(lo, hi):
        mem[e, t, j] = UNKNOWN


@njit(cache=True, error_model="numpy", inline="always")
def shows_the_same(st, mem, e):
    """Table e shows the counts and tops its memory last saw."""
    for t in range(mem.shape[1]):
        k = st.waste_n[e, t]
        q = st.nertz_n[e, t]
        if (mem[e, t, MEM_STREAM_N] != st.stream_n[e, t] or mem[e, t, MEM_WASTE_N] != k
                or mem[e, t, MEM_NERTZ_N] != q or mem[e, t, MEM_BURNS] != st.burns[e]):
            return False
        if k > 0 and mem[e, t, MEM_STREAM + k - 1] != st.stream[e, t, k - 1]:
            return False
        if q > 0 and mem[e, t, MEM_NERTZ + q - 1] != st.nertz[e, t, q - 1]:
            return False
    return True


@njit(cache=True, error_model="numpy", _nrt=False)
def init_memory_table(st, mem, e):
    """Table e remembered afresh: only what it shows now (a fresh deal: the Nertz tops)."""
    for t in range(mem.shape[1]):
        forget(mem, e, t, MEM_STREAM, MEM_STREAM_N)
        remember_tops(st, mem, e, t)
    remember_clock(st, mem, e)


@njit(cache=True, error_model="numpy", _nrt=False)
def update_memory_table(st, mem, e):
    """Table e's memory after one tick (module docstring): plays close the lists up, a burn
    rotates them, the new tops are remembered."""
    tick = st.tick[e]
    hand = st.hand[e]
    if hand == mem[e, 0, MEM_HAND] and tick == mem[e, 0, MEM_TICK]:
        if not shows_the_same(st, mem, e):     # dealt anew at the same tick
            init_memory_table(st, mem, e)
        return                                 # else no tick since the last update
    if hand != mem[e, 0, MEM_HAND] or tick != mem[e, 0, MEM_TICK] + 1:
        init_memory_table(st, mem, e)          # lost the thread: forget rather than guess
        return
    burned = st.burns[e] > mem[e, 0, MEM_BURNS]        # D17 (2): the only way it rises
    nertz_burn = burned and st.burns[e] >= NERTZ_BURN_FROM
    for t in range(mem.shape[1]):
        n0 = mem[e, t, MEM_STREAM_N]
        k0 = mem[e, t, MEM_WASTE_N]
        q0 = mem[e, t, MEM_NERTZ_N]
        n1 = st.stream_n[e, t]
        q1 = st.nertz_n[e, t]
        if n1 == n0 - 1 and k0 > 0:            # R15: the waste top s(k0-1) was played
            for j in range(k0 - 1, n0 - 1):
                mem[e, t, MEM_STREAM + j] = mem[e, t, MEM_STREAM + j + 1]
            mem[e, t, MEM_STREAM + n0 - 1] = UNKNOWN
        elif n1 != n0:                          # no tick does this: forget the Stream
            forget(mem, e, t, MEM_STREAM, MEM_NERTZ)
        if burned and n1 > 1:                   # R27 / D17: s0 goes to the end
            first = mem[e, t, MEM_STREAM]
            for j in range(n1 - 1):
                mem[e, t, MEM_STREAM + j] = mem[e, t, MEM_STREAM + j + 1]
            mem[e, t, MEM_STREAM + n1 - 1] = first
        if q1 == q0 - 1:                        # the Nertz top was played
            mem[e, t, MEM_NERTZ + q0 - 1] = UNKNOWN
        elif q1 != q0:
            forget(mem, e, t, MEM_NERTZ, MEM_STREAM_N)
        if nertz_burn and q1 > 1:               # R28: the top card to the bottom
            top = mem[e, t, MEM_NERTZ + q1 - 1]
            for j in range(q1 - 1, 0, -1):
                mem[e, t, MEM_NERTZ + j] = mem[e, t, MEM_NERTZ + j - 1]
            mem[e, t, MEM_NERTZ] = top
        remember_tops(st, mem, e, t)
    remember_clock(st, mem, e)


@njit(cache=True, error_model="numpy", _nrt=False)
def init_memory_range(st, mem, lo, hi):
    """init_memory_table at tables lo..hi (a fresh deal)."""
    for e in range(lo, hi):
        init_memory_table(st, mem, e)


@njit(cache=True, error_model="numpy", _nrt=False)
def update_memory_range(st, mem, lo, hi):
    """update_memory_table at tables lo..hi: call it after every tick."""
    for e in range(lo, hi):
        update_memory_table(st, mem, e)


def init_memory(st, mem) -> None:
    """init_memory_range over every table."""
    init_memory_range(st, mem, 0, mem.shape[0])


def update_memory(st, mem) -> None:
    """update_memory_range over every table."""
    update_memory_range(st, mem, 0, mem.shape[0])


# ---------------------------------------------------------------------------- the belief
@njit(cache=True, error_model="numpy", _nrt=False)
def unseen_pool(st, e, pool):
    """pool[t, c] = 1 for each card c of team t's deck that no seat sees on table e now (not in
    its River, not its Nertz top or waste top, not in the Lake), else 0: the cards a re-deal
    may place, read from the public side only (core/worlds.py's uniform belief; the memory
    belief below also takes out the remembered ones)."""
    T = st.nertz_n.shape[1]
    for t in range(T):
        for c in range(DECK):
            pool[t, c] = 1
        for col in range(st.river.shape[2]):
            for d in range(st.river_n[e, t, col]):
                pool[t, st.river[e, t, col, d]] = 0
        n = st.nertz_n[e, t]
        if n > 0:
            pool[t, st.nertz[e, t, n - 1]] = 0
        k = st.waste_n[e, t]
        if k > 0:
            pool[t, st.stream[e, t, k - 1]] = 0
    for p in range(st.lake_piles[e]):
        for d in range(st.lake_n[e, p]):
            v = st.lake[e, p, d]
            pool[v // DECK, v % DECK] = 0


@njit(cache=True, error_model="numpy", _nrt=False)
def redeal_memory_table(st, scr, e, seed, known):
    """Table e's hidden cards dealt anew from the generator `seed`, the remembered ones kept:
    known (int32 [T, MEM_W]) is the memory of the table the slot was forked from. The pool
    is read from the public side and the memory only (the team's deck minus its River, Lake,
    Nertz-top and waste-top cards and the remembered cards); the positions from the counts.
    The draws follow core/worlds.py's uniform re-deal: the pool ascending, a partial
    Fisher-Yates over the unknown positions, the Nertz pile's filled first. The table's own
    key is left as it was; scr.decks[e] is the work row."""
    keep = st.rng[e]
    st.rng[e] = seed
    T = st.nertz_n.shape[1]
    pool = scr.decks[e]
    unseen_pool(st, e, pool)                 # 1 = neither visible nor remembered
    for t in range(T):
        for d in range(st.nertz_n[e, t]):
            if known[t, MEM_NERTZ + d] >= 0:
                pool[t, known[t, MEM_NERTZ + d]] = 0
        for d in range(st.stream_n[e, t]):
            if known[t, MEM_STREAM + d] >= 0:
                pool[t, known[t, MEM_STREAM + d]] = 0
    for t in range(T):
        m = 0                                # the unknown cards, ascending, to the row's front
        for c in range(DECK):
            if pool[t, c] != 0:
                pool[t, m] = c
                m += 1
        n = st.nertz_n[e, t]
        k = st.waste_n[e, t]
        below = n - 1 if n > 0 else 0
        hidden = 0                           # hidden positions the memory does not know
        for d in range(below):
            if known[t, MEM_NERTZ + d] < 0:
                hidden += 1
        for d in range(st.stream_n[e, t]):
            if d != k - 1 and known[t, MEM_STREAM + d] < 0:
                hidden += 1
        for q in range(hidden):              # a partial Fisher-Yates draw from the pool
            r = q + random_below(st.rng, e, m - q)
            tmp = pool[t, q]
            pool[t, q] = pool[t, r]
            pool[t, r] = tmp
        q = 0
        for d in range(below):
            if known[t, MEM_NERTZ + d] >= 0:
                st.nertz[e, t, d] = known[t, MEM_NERTZ + d]
            else:
                st.nertz[e, t, d] = pool[t, q]
                q += 1
        for d in range(st.stream_n[e, t]):
            if d == k - 1:
                continue
            if known[t, MEM_STREAM + d] >= 0:
                st.stream[e, t, d] = known[t, MEM_STREAM + d]
            else:
                st.stream[e, t, d] = pool[t, q]
                q += 1
    st.rng[e] = keep


@njit(cache=True, error_model="numpy", _nrt=False)
def redeal_memory_slots(st, scr, slots, seeds, known):
    """redeal_memory_table at every slot slots[k] with the seed seeds[k], one memory row."""
    for k in range(slots.shape[0]):
        redeal_memory_table(st, scr, slots[k], seeds[k], known)


def memory_row(st, i: int, memory) -> np.ndarray:
    """memory[i] (int32 [T, MEM_W], contiguous) after checking that it is the memory of
    table i of st as it stands (same tick, hand and counts); else a one-line ValueError."""
    T = st.stream_n.shape[1]
    if (not isinstance(memory, np.ndarray) or memory.dtype != np.int32 or memory.ndim != 3
            or memory.shape[1:] != (T, MEM_W) or not 0 <= i < memory.shape[0]):
        what = (f"{memory.dtype} {memory.shape}" if isinstance(memory, np.ndarray)
                else type(memory).__name__)
        raise ValueError(f"memory must be an int32 array [tables, {T}, {MEM_W}] holding table "
                         f"{i} (core/memory.py allocate_memory), got {what}")
    row = np.ascontiguousarray(memory[i])
    now = np.stack([st.stream_n[i], st.waste_n[i], st.nertz_n[i]], axis=1)
    clock = (int(st.tick[i]), int(st.hand[i]))
    if ((row[:, MEM_STREAM_N:MEM_TICK] != now).any()
            or (row[:, MEM_TICK] != clock[0]).any() or (row[:, MEM_HAND] != clock[1]).any()):
        raise ValueError(f"memory of table {i} is not of its position (tick {clock[0]}, hand "
                         f"{clock[1]}): update_memory_range after every tick")
    return row
