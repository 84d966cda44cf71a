"""Learned seats inside the jitted play loop: tables where every outside agent is a
safe-format masked net played deterministically run to their end in one parallel numba
kernel, as tables of bots do (nertz_env/core/batch.py play_bots_batch), instead of a Python
loop with one forward pass per tick (agents/arena/seat_loop.py play_python).

Same moves, same numbers. A chunk of tables plays IN_STEP of them in step, tick by tick.
Per tick each table's core bots choose first (drawing from their generators in the same
order as the Python loop), then every network seat (one not ready, R21, has only Wait and
plays it without the net) gets its observation (core/observe.py write_seat_observation) and
its first layer, kept per seat and updated by the observation entries that changed since
the seat's last move (float64, so it equals a fresh sum to ~1e-12). Then each net's later
layers run over all its rows of the tick as one matrix product (numba's np.dot, BLAS
through SciPy: a third of the time of a row-at-a-time loop, which no blocking of a numba
loop reached), and each seat takes the logits of its legal moves (cleared by the model's
constraint, agents/constraints.py, the same rule code) and their argmax. Where the top two
legal logits lie within TIE_GAP, NumpyPolicy lets predict's own float32 ops decide; numba
cannot run those ops bit for bit, so that table pauses there, before the tick resolves: its
slot takes the chunk's next table, the kernel returns when the chunk is done, Python plays
the paused seats with NumpyPolicy.predict_rows (the op-for-op path) and the kernel resumes
every paused table where it stopped. Elsewhere the legal argmax is the move under either
rounding (the logits of the two paths differ by ~1e-6; the gap is >= 1e-3). Near-ties are
rare, so a batch takes a few launches (tests/learned/test_core_play.py holds every block equal
to the Python loop's, ties included, for several IN_STEP).

A net that reads the v1 observation (agents/learned/v1.py) plays here too: the kernel keeps
each table's public memory (nertz_env/core/memory.py init_memory_table at every deal,
update_memory_table after every tick: from public events only, the Python loop's kernels
and order, agents/arena/seat_loop.py) and writes the memory block after the seat's v0
observation (core/observe_memory.py write_memory_block), as the Python loop's
observe_v1_rows does; tests/learned/test_core_play_v1.py holds its records equal to the
Python loop's.

What it is given (agents/learned/core_records.py, re-exported here): `networks(agent,
config)`, the (NumpyPolicy, constraint bits) per seat an agent plays there (its
`core_networks()` once told the table, agents/base.py) or None (the Python loop plays it);
`Stack`, the networks of one batch as arrays (`Nets`); and the kernel's named records
`Seats`, `Deals`, `Buffers`, `NetMemory`, with the play loop's HandResults (agents/arena/
play.py) as `out`. The network's arithmetic is agents/learned/core_layers.py's.
Imports numpy, numba, nertz_env's core and agents/constraints.py.
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from nertz_env.core.batch import record_hand, shuffle_deal
from nertz_env.core.chunks import chunk_bounds, n_chunks
from nertz_env.core.codec import WAIT
from nertz_env.core.deal import deal_table
from nertz_env.core.legal import write_table_masks
from nertz_env.core.memory import MEM_W, allocate_memory, init_memory_table, update_memory_table
from nertz_env.core.observe import OBS_DIM, write_seat_observation
from nertz_env.core.observe_memory import write_memory_block
from nertz_env.core.policies import write_policy_actions
from nertz_env.core.scoring import decide_winner
from nertz_env.core.tick import step_table
from nertz_env.encoding import PLAYING

from ..constraints import constrain
from .core_layers import (ACT_RELU, ACT_TANH, _first_layer, _head_move,  # noqa: F401
                          _later_layers, logits, tanh_rows)              # (callers' names)
from .core_records import Buffers, Deals, NetMemory, Nets, Seats, Stack, networks  # noqa: F401
from .weights import TIE_GAP

FRESH, DONE = -1, -2             # cursor: not started / finished; h >= 0: paused in hand h
ASK = -2                         # forced[e, s]: Python plays this seat this tick
IN_STEP = 16     # tables a chunk plays in step (4 to 64 measured, 16 best: benchmarks/README.md)


@njit(cache=True, error_model="numpy", inline="always")
def _begin_hand(st, prm, scr, buf, seats, deals, nets, mem, e, h):
    hand = deals.first_hand[e] + h
    st.rng[e] = deals.hand_keys[e, h]
    shuffle_deal(st, prm, scr, e, deals.deal_keys[e], hand)
    deal_table(st, prm, e, scr.decks[e], hand)
    write_table_masks(st, prm, scr, e, buf.masks)
    if mem.tables.shape[0]:             # a net reads v1: the deal remembered afresh
        init_memory_table(st, mem.tables, e)
    for s in range(prm.n_seats):        # a new hand: each net's first layer from scratch
        k = seats.net_of_seat[e, s]
        if k >= 0:
            mem.seen[e, s, :] = 0.0
            mem.pre[e, s, :] = nets.b0[k]


@njit(cache=True, error_model="numpy")  # allocates its work rows: NRT on
def play_nets_range(st, prm, scr, buf, seats, deals, out, nets, mem, in_step, lo, hi):
    """Tables lo..hi, in_step at a time (slots): per tick every slot's bots choose and its
    ready net seats get their first layer, then each net's later layers run over all its
    rows of the tick at once, then every slot's nets pick their moves and its table steps.
    A slot whose table ends its game or pauses at a near-tie takes the chunk's next table.
    Tables share nothing, so the order they are played in changes no number. The records
    (module docstring) are unpacked once: their arrays then index as plain locals."""
    masks, actions, priority, applied = buf
    net_of_seat, kinds, knobs, policy_rng, remembers = seats
    deal_keys, hand_keys, first_hand, stop_at_winner = deals
    hand_scores, n_hands, calls, winners, ticks = (out.scores, out.hands, out.calls, out.winner,
                                                   out.ticks)
    w0, b0, wh, bh, wa, ba, bits, act, tie = nets
    obs_buf, seen, pre, forced, cursor, memory = mem
    keep = memory.shape[0] > 0                    # a net reads v1: keep the tables' memory
    S = prm.n_seats
    T = prm.n_teams
    H = hand_scores.shape[1]
    W = b0.shape[1]
    K = w0.shape[0]
    h_buf = np.empty((K, in_step * S, W), np.float32)
    g_buf = np.empty((K, in_step * S, W), np.float32)
    n_rows = np.zeros(K, np.int64)
    row_of = np.full((in_step, S), -1, np.int64)
    idx = np.zeros(obs_buf.shape[2] + 1, np.int64)   # the rows' width (>= N_ACTIONS) + 1
    slot = np.full(in_step, -1, np.int64)         # the table a slot plays; -1: empty
    slot_h = np.zeros(in_step, np.int64)          # the hand it is in
    slot_resume = np.zeros(in_step, np.bool_)     # its first tick resumes a paused one
    totals = np.zeros((in_step, T), np.int64)
    game_calls = np.zeros((in_step, T), np.int64)
    nxt = lo
    while True:
        busy = 0
        for q in range(in_step):                  # empty slots take the chunk's next tables
            while slot[q] < 0 and nxt < hi:
                e = nxt
                nxt += 1
                if cursor[e] == DONE:
                    continue
                resume = cursor[e] >= 0
                h = cursor[e] if resume else 0
                if not resume:
                    winners[e] = -1
                    n_hands[e] = 0
                totals[q, :] = 0
                game_calls[q, :] = 0
                for g in range(h):
                    for t in range(T):
                        totals[q, t] += hand_scores[e, g, t]
                        game_calls[q, t] += calls[e, g, t]
                if not resume:
                    _begin_hand(st, prm, scr, buf, seats, deals, nets, mem, e, h)
                slot[q], slot_h[q], slot_resume[q] = e, h, resume
            busy += slot[q] >= 0
        if busy == 0:
            return
        n_rows[:] = 0
        for q in range(in_step):          # bots' moves, net seats' first layers
            e = slot[q]
            if e < 0:
                continue
            if not slot_resume[q]:    # a resumed tick keeps the bots' moves it paused with
                write_policy_actions(masks, scr.avail, st.river, st.river_n,
                                     prm.seat_team, kinds, knobs, policy_rng, actions, e, S)
            slot_resume[q] = False
            for s in range(S):
                row_of[q, s] = -1
                k = net_of_seat[e, s]
                if k < 0:
                    continue
                if forced[e, s] >= 0:
                    actions[e, s] = forced[e, s]
                    forced[e, s] = -1
                    continue
                if st.tick[e] < st.ready[e, s]:  # not ready: Wait is its one move (R21);
                    actions[e, s] = WAIT         # its first layer catches up next time
                    continue
                write_seat_observation(st, prm, scr, e, s, obs_buf, s)
                if remembers[e, s]:              # v1: what the seat remembers, after v0
                    write_memory_block(memory, st.stream_n, st.waste_n, st.nertz_n,
                                       prm.seat_team, e, s, obs_buf[e, s], OBS_DIM)
                r = n_rows[k]
                _first_layer(obs_buf[e, s], seen[e, s], pre[e, s], k, w0, act, h_buf[k, r], idx)
                row_of[q, s] = r
                n_rows[k] = r + 1
        last = h_buf
        for k in range(K):
            if n_rows[k] > 0:
                last = _later_layers(k, n_rows[k], wh, bh, act, h_buf, g_buf)
        for q in range(in_step):          # the nets' moves, then the tick resolves
            e = slot[q]
            if e < 0:
                continue
            paused = False
            for s in range(S):
                r = row_of[q, s]
                if r < 0:
                    continue
                k = net_of_seat[e, s]
                a, near = _head_move(last[k, r], obs_buf[e, s], masks[e, s], k, wa, ba, bits,
                                     idx, tie)
                if near:
                    forced[e, s] = ASK
                    paused = True
                else:
                    actions[e, s] = a
            if paused:
                cursor[e] = slot_h[q]
                slot[q] = -1
                continue
            step_table(st, prm, scr, e, actions, priority, masks, applied)
            if keep:                              # the tick's public events (R15)
                update_memory_table(st, memory, e)
            if st.status[e] == PLAYING:
                continue
            h = slot_h[q]
            record_hand(st, prm, e, h, hand_scores, calls, ticks, n_hands, totals[q],
                        game_calls[q])
            h += 1
            over = h >= H
            if stop_at_winner:
                w = decide_winner(totals[q], game_calls[q], prm.target_score)
                if w >= 0:
                    winners[e] = w
                    over = True
            if over:
                cursor[e] = DONE
                slot[q] = -1
            else:
                slot_h[q] = h
                _begin_hand(st, prm, scr, buf, seats, deals, nets, mem, e, h)


@njit(cache=True, error_model="numpy", parallel=True)
def play_nets_batch(st, prm, scr, buf, seats, deals, out, nets, mem, in_step):
    """play_nets_range over chunks of the tables (module docstring): every table plays
    from where its cursor says until its end or its next near-tie."""
    E = st.tick.shape[0]
    k = n_chunks(E)
    for c in prange(k):
        lo, hi = chunk_bounds(c, k, E)
        play_nets_range(st, prm, scr, buf, seats, deals, out, nets, mem, in_step, lo, hi)


def play_nets(eng, stack: Stack, net_of_seat, kinds, knobs, policy_rng, deal_keys, hand_keys,
              first_hand, games: bool, out, in_step: int = IN_STEP) -> int:
    """Every table of `eng` played to its end (a whole game when games, else one hand) into
    `out` (agents/arena/play.py HandResults), network seats by net_of_seat [n, S] (index
    into stack, -1: a core bot or nobody's), in_step tables of a chunk at a time. Returns
    the kernel launches it took. (The arguments of kernels before #41, so a benchmark can
    swap in an older Stack and play_nets: benchmarks/learned_tournament.py --kernel-from.)"""
    nets = stack.nets._replace(tie=np.float32(TIE_GAP))     # this module's (tests move it)
    remembers = (net_of_seat >= 0) & stack.reads_memory[np.maximum(net_of_seat, 0)]
    seats = Seats(net_of_seat, kinds, knobs, policy_rng, remembers)
    deals = Deals(deal_keys, hand_keys, first_hand, games)
    n, S = net_of_seat.shape
    D = nets.w0.shape[1]
    tables = (allocate_memory(eng.config, n) if remembers.any()
              else np.zeros((0, eng.config.num_teams, MEM_W), np.int32))
    mem = NetMemory(np.zeros((n, S, D), np.float32), np.zeros((n, S, D), np.float32),
                    np.zeros((n, S, nets.b0.shape[1]), np.float64),
                    np.full((n, S), -1, np.int16), np.full(n, FRESH, np.int64), tables)
    buf = Buffers(eng.masks, eng.actions, eng.priority, eng.applied)
    launches = 0
    while True:
        # the parallel kernel at every size: one variant to compile (~1 minute, cold)
        eng.run_kernel(play_nets_batch, None, buf, seats, deals, out, nets, mem, in_step)
        launches += 1
        ask_t, ask_s = np.nonzero(mem.forced == ASK)
        if not ask_t.size:
            return launches
        for k in np.unique(seats.net_of_seat[ask_t, ask_s]):
            sel = seats.net_of_seat[ask_t, ask_s] == k
            t, s = ask_t[sel], ask_s[sel]
            rows = mem.obs[t, s][:, :stack.widths[k]]      # a v1 net's rows carry the block
            legal = constrain(rows[:, :OBS_DIM], eng.masks[t, s], stack.bits[k])
            mem.forced[t, s] = stack.policies[k].predict_rows(rows, legal)
