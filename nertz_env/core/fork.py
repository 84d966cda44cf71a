"""Forks and rollouts: the simulator side of decision-time search.

A search agent copies a real table into many slots of a rollout state (a NertzState of its
own, one "world" or one candidate per slot), changes what the seat cannot see there
(core/worlds.py), forces each slot's first move and lets core bots play on for a few ticks.
The work is numba kernels over plain state arrays; the Python functions only check arguments
and call them (a handful of microseconds each).

- copy_tables(pairs, rows, slots): b[slots[k]] = a[rows[k]] for every pair of arrays (a, b)
  of two states (state_pairs: NertzState's fields, state.py, the one list of them, zipped), so
  a field added there is copied here without a change.
- fork_rows(src, dst, rows, slots, keys): dst[slots[k]] = src[rows[k]], each slot's generator
  key (state.rng: its priority draws, R22) set to keys[k]; fork_table(src, i, dst, j, keys):
  table i into slots j .. j + len(keys) - 1.
- rollout_range / rollout_batch (the same, its slots split among threads): from the
  positions as they are (no deal), every slot plays its forced first moves (first[k, s] >= 0;
  -1: the seat's bot), then every seat its core bot (kinds/knobs, core/policies.py) or
  its net (POLICY_NET: core/net_policy.py, the arrays `net`, knobs[k, s, 0] the net's
  index, work rows `work`) for `horizon` ticks in all (0: to the end of the hand);
  values[k] = the R29 points of seat seats[k]'s team minus the mean of the other teams'
  (scoring.relative_points, the "relative" reward) at the stop, scores[k] the hand scores;
  with a `leaf` (core/leaf_value.py) a stop before the hand's end adds the value net's
  estimate of the relative points to come.
  A forced move that is not legal in its slot refuses the whole batch before any tick.
- Rollouts (allocate_rollouts): every buffer a batch of rollouts needs, and rollout(), the
  checked Python door.

Common random numbers: a slot's priority orders come from its own key only, and every tick
draws the same count (draw_order: S - 1 a tick), so slots given the same key see the same
orders tick for tick, whatever moves they play. With the true cards and the table's own key
(st.rng[i]), a rollout of the bots' moves is the table's real continuation, state for state
(tests/core/test_rollout.py).
"""
from __future__ import annotations

from typing import NamedTuple

import numba
import numpy as np
from numba import literal_unroll, njit, prange

from ..encoding import PLAYING
from .chunks import chunk_bounds, n_chunks
from .codec import N_ACTIONS
from .launch import launch_parallel
from .leaf_value import Leaf, leaf_value, no_leaf
from .legal import write_table_masks
from .net_policy import NetArrays, NetWork, allocate_net_work, empty_net, net_move
from .policies import N_KNOBS, POLICY_EXTERNAL, POLICY_NET, write_policy_actions
from .scoring import relative_points_jit, write_hand_scores
from .state import (NertzState, Params, Scratch, allocate_masks, allocate_scratch,
                    allocate_state)
from .tick import step_table

HORIZON_END = 0          # horizon: play to the end of the hand (R24, R26)


# ---------------------------------------------------------------------------- copies
def state_pairs(src: NertzState, dst: NertzState) -> tuple:
    """The arrays of two states side by side, ((src.nertz, dst.nertz), ...), in NertzState's
    field order (state.py: the one list of the arrays). Build it once per pair of states and
    hand it to copy_tables as often as needed."""
    return tuple(zip(src, dst))


@njit(cache=True, error_model="numpy", _nrt=False)
def copy_tables(pairs, rows, slots):
    """For every (a, b) of `pairs` (state_pairs) and every k: b[slots[k]] = a[rows[k]], whatever
    the array's rank and dtype (the loop body is compiled once per array type). The two states
    may be the same one (a world copied into its candidates' slots) as long as no slot is also
    a row read after it was written."""
    for pair in literal_unroll(pairs):
        a = pair[0]
        b = pair[1]
        for k in range(slots.shape[0]):
            x = a[rows[k]:rows[k] + 1].reshape(-1)
            y = b[slots[k]:slots[k] + 1].reshape(-1)
            for q in range(x.shape[0]):
                y[q] = x[q]


def fork_rows(src: NertzState, dst: NertzState, rows, slots, keys, pairs=None) -> None:
    """Slot slots[k] of dst becomes table rows[k] of src, every array, with its own generator
    key keys[k] (state.rng: the slot's priority draws, R22). pairs: state_pairs(src, dst),
    when the caller keeps it (saves building it per call)."""
    rows = np.asarray(rows, np.int64)
    slots = np.asarray(slots, np.int64)
    copy_tables(state_pairs(src, dst) if pairs is None else pairs, rows, slots)
    dst.rng[slots] = keys


def fork_table(src: NertzState, i: int, dst: NertzState, j: int, keys, pairs=None) -> None:
    """Table i of src into slots j, j + 1, ..., j + len(keys) - 1 of dst, slot j + w with the
    generator key keys[w]."""
    W = len(keys)
    fork_rows(src, dst, np.full(W, i, np.int64), np.arange(j, j + W, dtype=np.int64), keys,
              pairs)


# ---------------------------------------------------------------------------- rollouts
@njit(cache=True, error_model="numpy", _nrt=False)
def first_moves_range(st, prm, scr, masks, first, lo, hi):
    """Masks (and scr.avail) of slots lo..hi as they stand; the first k * S + s whose forced
    move first[k, s] >= 0 is not legal there (R31), or -1."""
    S = prm.n_seats
    bad = -1
    for e in range(lo, hi):
        write_table_masks(st, prm, scr, e, masks)
        for s in range(S):
            a = first[e, s]
            if bad < 0 and a >= 0 and (a >= N_ACTIONS or masks[e, s, a] == 0):
                bad = e * S + s
    return bad


@njit(cache=True, error_model="numpy", _nrt=False)
def play_rollouts_range(st, prm, scr, masks, actions, priority, applied, kinds, knobs,
                        policy_rng, first, seats, horizon, values, scores, net, work, leaf, lo, hi):
    """Slots lo..hi, masks already written (first_moves_range): the forced first tick, then
    the bots and nets, until the hand ends or `horizon` ticks were played (HORIZON_END: no
    limit); values[e] and scores[e] at the stop, values[e] plus the leaf's estimate of the
    relative points to come (core/leaf_value.py) when `leaf` is on and the hand goes on."""
    S = prm.n_seats
    T = prm.n_teams
    for e in range(lo, hi):
        priority[e, 0] = -1                      # every order drawn from the slot's key
        stop = prm.max_ticks if horizon <= 0 else st.tick[e] + horizon
        forced = True
        while st.status[e] == PLAYING and st.tick[e] < stop:
            write_policy_actions(masks, scr.avail, st.river, st.river_n, prm.seat_team,
                                 kinds, knobs, policy_rng, actions, e, S)
            for s in range(S):
                if forced and first[e, s] >= 0:
                    actions[e, s] = first[e, s]
                elif kinds[e, s] == POLICY_NET:
                    actions[e, s] = net_move(st, prm, scr, masks, e, s, net, work,
                                             knobs[e, s, 0])
            forced = False
            step_table(st, prm, scr, e, actions, priority, masks, applied)
        write_hand_scores(st, prm, e, scores, e)
        me = prm.seat_team[seats[e]]
        if T > 1:
            total = 0.0
            for t in range(T):
                total += scores[e, t]
            values[e] = relative_points_jit(scores[e, me], total, T)
        else:
            values[e] = scores[e, me]
        if leaf.on != 0 and st.status[e] == PLAYING:      # stopped by the horizon
            values[e] += leaf_value(st, prm, scr, e, me, leaf)


@njit(cache=True, error_model="numpy", _nrt=False)
def rollout_range(st, prm, scr, masks, actions, priority, applied, kinds, knobs, policy_rng,
                  first, seats, horizon, values, scores, net, work, leaf, lo, hi):
    """Rollouts at slots lo..hi (serial). Returns -1, or k * S + s of the first forced move
    that is illegal in its slot, in which case no slot has moved."""
    bad = first_moves_range(st, prm, scr, masks, first, lo, hi)
    if bad < 0:
        play_rollouts_range(st, prm, scr, masks, actions, priority, applied, kinds, knobs,
                            policy_rng, first, seats, horizon, values, scores, net, work, leaf,
                            lo, hi)
    return bad


@njit(cache=True, error_model="numpy", parallel=True)
def rollout_batch(st, prm, scr, masks, actions, priority, applied, kinds, knobs, policy_rng,
                  first, seats, horizon, values, scores, net, work, leaf, lo, hi):
    """rollout_range over slots lo..hi, the slots split among threads (core/chunks.py): the
    same results, slot for slot (launch it through core/launch.py launch_parallel)."""
    E = hi - lo
    k = n_chunks(E)
    bads = np.full(k, -1, np.int64)
    for c in prange(k):
        a, b = chunk_bounds(c, k, E)
        bads[c] = first_moves_range(st, prm, scr, masks, first, lo + a, lo + b)
    for c in range(k):
        if bads[c] >= 0:
            return bads[c]
    for c in prange(k):
        a, b = chunk_bounds(c, k, E)
        play_rollouts_range(st, prm, scr, masks, actions, priority, applied, kinds, knobs,
                            policy_rng, first, seats, horizon, values, scores, net, work,
                            leaf, lo + a, lo + b)
    return -1


# ---------------------------------------------------------------------------- buffers
class Rollouts(NamedTuple):
    """Everything a batch of M rollout slots needs (allocate_rollouts). The caller fills
    state (fork_rows / worlds.fork_worlds), kinds/knobs (the bots, per slot and seat),
    policy_rng (random bots' draws), first (-1: the bot), seats (whose value) and reads
    values / scores after rollout()."""
    state: NertzState
    scratch: Scratch
    masks: np.ndarray        # int8  [M, S, N_ACTIONS]
    actions: np.ndarray      # int16 [M, S]
    priority: np.ndarray     # int32 [M, S] (always -1 in column 0: drawn from the slot's key)
    applied: np.ndarray      # int8  [M, S]
    kinds: np.ndarray        # int8  [M, S]  core/policies.py POLICY_*
    knobs: np.ndarray        # int64 [M, S, N_KNOBS]
    policy_rng: np.ndarray   # uint64 [M]
    first: np.ndarray        # int16 [M, S]  forced first move, -1: the seat's bot
    seats: np.ndarray        # int64 [M]     the seat whose team's value is reported
    values: np.ndarray       # float64 [M]   relative points at the stop
    scores: np.ndarray       # int64 [M, T]  R29 hand scores at the stop


def allocate_rollouts(config, n_slots: int) -> Rollouts:
    """Buffers for n_slots rollout slots of one RulesConfig (config: a RulesConfig)."""
    M, S, T = n_slots, config.num_seats, config.num_teams
    return Rollouts(state=allocate_state(config, M), scratch=allocate_scratch(config, M),
                    masks=allocate_masks(config, M), actions=np.zeros((M, S), np.int16),
                    priority=np.full((M, S), -1, np.int32), applied=np.zeros((M, S), np.int8),
                    kinds=np.zeros((M, S), np.int8),
                    knobs=np.zeros((M, S, N_KNOBS), np.int64),
                    policy_rng=np.zeros(M, np.uint64), first=np.full((M, S), -1, np.int16),
                    seats=np.zeros(M, np.int64), values=np.zeros(M, np.float64),
                    scores=np.zeros((M, T), np.int64))


_NO_NET = []          # [empty_net(), its work rows], made on first use


def rollout_args(ro: Rollouts, params: Params, horizon: int, net: NetArrays | None = None,
                 work: NetWork | None = None, leaf: Leaf | None = None) -> tuple:
    """The argument tuple of rollout_range / rollout_batch (without lo, hi); net / work: the
    net seats' arrays and work rows (None: no net seat, a stand-in of the same types); leaf:
    the value at the horizon (core/leaf_value.py; None: none, the stop's relative points)."""
    if net is None:
        if not _NO_NET:
            _NO_NET.extend((empty_net(), allocate_net_work(0, 1)))
        net, work = _NO_NET
    return (ro.state, params, ro.scratch, ro.masks, ro.actions, ro.priority, ro.applied,
            ro.kinds, ro.knobs, ro.policy_rng, ro.first, ro.seats, horizon, ro.values,
            ro.scores, net, work, no_leaf() if leaf is None else leaf)


def rollout(ro: Rollouts, params: Params, horizon: int, lo: int = 0, hi: int | None = None,
            parallel: bool = False, threads: int | None = None, net: NetArrays | None = None,
            work: NetWork | None = None, leaf: Leaf | None = None) -> None:
    """Play the rollouts of slots lo..hi and leave values and scores in `ro`; parallel=True
    splits the slots among numba's threads (`threads` of them for this call, else numba's
    current count: the same values and scores, slot for slot). net: the arrays of the
    POLICY_NET seats' nets (core/net_policy.py net_arrays), work: their work rows
    (allocate_net_work for at least hi slots; None: allocated here), whose `near` counts
    each slot's near-tie net moves. leaf: a value added at a stop before the hand's end
    (core/leaf_value.py allocate_leaf, work rows for at least hi slots). ValueError (one
    line, nothing played) for a negative horizon, a seat out of range, a slot seat without
    a core bot or net (POLICY_EXTERNAL, POLICY_NET without `net` or with a net index out of
    range) or a forced move that is illegal in its slot."""
    M = ro.state.tick.shape[0]
    hi = M if hi is None else hi
    if not isinstance(horizon, (int, np.integer)) or isinstance(horizon, bool) or horizon < 0:
        raise ValueError(f"horizon={horizon!r} must be an int >= 0 (0: to the end of the hand)")
    if not 0 <= lo <= hi <= M:
        raise ValueError(f"slots lo={lo}, hi={hi} must satisfy 0 <= lo <= hi <= {M}")
    seats = ro.seats[lo:hi]
    if seats.size and (seats.min() < 0 or seats.max() >= params.n_seats):
        raise ValueError(f"seats must be seat numbers 0..{params.n_seats - 1}")
    if (ro.kinds[lo:hi] == POLICY_EXTERNAL).any():
        k, s = np.argwhere(ro.kinds[lo:hi] == POLICY_EXTERNAL)[0]
        raise ValueError(f"slot {lo + k}, seat {s}: rollouts play core bots only "
                         "(kinds POLICY_RANDOM or POLICY_SCORED) and nets (POLICY_NET), not "
                         "POLICY_EXTERNAL")
    is_net = ro.kinds[lo:hi] == POLICY_NET
    if is_net.any():
        K = 0 if net is None else net.w0.shape[0]
        k_of = ro.knobs[lo:hi, :, 0][is_net]
        if net is None or k_of.min() < 0 or k_of.max() >= K:
            raise ValueError(f"POLICY_NET seats need `net` and knobs[..., 0] a net index "
                             f"0..{K - 1}" if K else "POLICY_NET seats need `net`, the nets' "
                             "arrays (core/net_policy.py net_arrays)")
        if work is None:
            work = allocate_net_work(hi, net.b0.shape[1])
        if work.obs.shape[0] < hi or work.h.shape[2] != net.b0.shape[1]:
            raise ValueError(f"work rows for {work.obs.shape[0]} slots of width "
                             f"{work.h.shape[2]}; these slots need {hi} of width "
                             f"{net.b0.shape[1]} (allocate_net_work)")
        work.near[lo:hi] = 0
    else:
        net = work = None
    if leaf is not None and leaf.on and leaf.obs.shape[0] < hi:
        raise ValueError(f"leaf work rows for {leaf.obs.shape[0]} slots; these slots need {hi} "
                         "(allocate_leaf)")
    args = rollout_args(ro, params, int(horizon), net, work, leaf)
    if threads is not None and not 1 <= threads <= numba.config.NUMBA_NUM_THREADS:
        raise ValueError(f"threads={threads!r} must be from 1 to "
                         f"{numba.config.NUMBA_NUM_THREADS} (NUMBA_NUM_THREADS)")
    if parallel and hi > lo:
        before = numba.get_num_threads()
        numba.set_num_threads(before if threads is None else int(threads))
        try:
            bad = launch_parallel(rollout_batch, *args, lo, hi)
        finally:
            numba.set_num_threads(before)
    else:
        bad = rollout_range(*args, lo, hi)
    if bad >= 0:
        k, s = divmod(int(bad), params.n_seats)
        raise ValueError(f"slot {k}, seat {s}: forced first move {int(ro.first[k, s])} is not "
                         "legal in that slot's position (R31); no rollout was played")
