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

`networks(agent, config)`: per seat of that table, the (NumpyPolicy, constraint bits) the
agent plays there (its `core_networks()` once told the table by `for_table(config)`, the
one way a table reaches an agent: agents/base.py), or None when the agent cannot play in
the core (a draw instead of the argmax, an SB3 zip, an unmasked net, anything else).
`Stack` holds the networks of one batch as arrays (every net the same depth, width and
activation; else the Python loop). The kernel's arguments come in named records: `Nets`
(the stacked weights), `Seats` (who plays each seat), `Deals` (each table's keys),
`Buffers` (the engine's per-tick arrays), `NetMemory` (each net seat's state across
launches) and the play loop's HandResults (agents/arena/play.py) as `out`.
Imports numpy, numba (SciPy for its np.dot), nertz_env's core and agents/constraints.py.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit, prange

from nertz_env.core.batch import record_hand, shuffle_deal
from nertz_env.core.chunks import chunk_bounds, n_chunks
from nertz_env.core.codec import WAIT
from nertz_env.core.deal import deal_table
from nertz_env.core.legal import write_table_masks
from nertz_env.core.observe import OBS_DIM, write_seat_observation
from nertz_env.core.policies import write_policy_actions
from nertz_env.core.scoring import decide_winner
from nertz_env.core.tick import step_table
from nertz_env.encoding import PLAYING

from ..constraints import constrain, constrained_moves
from .weights import TIE_GAP

ACT_TANH, ACT_RELU = 0, 1
FRESH, DONE = -1, -2             # cursor: not started / finished; h >= 0: paused in hand h
ASK = -2                         # forced[e, s]: Python plays this seat this tick
IN_STEP = 16     # tables a chunk plays in step (4 to 64 measured, 16 best: benchmarks/README.md)


def networks(agent, config):
    """Per seat of `config`'s table, (NumpyPolicy, constraint bits) of the net `agent` plays
    there, or None where it cannot be played in the core (module docstring). The agent says
    which nets by `core_networks()` once told this table (`for_table(config)`,
    agents/base.py: the caller tells it); this checks each is one the kernel plays exactly."""
    from ..base import Agent
    from .weights import NumpyPolicy
    if not isinstance(agent, Agent) or agent.table != config:
        return None
    picks = agent.core_networks()
    if picks is None or len(picks) != config.num_seats:
        return None
    for policy, _ in picks:
        if not (isinstance(policy, NumpyPolicy) and policy.deterministic and policy.masked
                and policy.sparse and policy.activation in ("tanh", "relu")):
            return None
    return picks


class Nets(NamedTuple):
    """The networks of one batch stacked for the kernel (K nets, L later hidden layers of
    width W, A actions)."""
    w0: np.ndarray       # float32 [K, OBS_DIM, W] first layer, input-major
    b0: np.ndarray       # float32 [K, W]
    wh: np.ndarray       # float32 [K, L, W, W] the other hidden layers, input-major
    bh: np.ndarray       # float32 [K, L, W]
    wa: np.ndarray       # float32 [K, A, W] the action net, one row per move
    ba: np.ndarray       # float32 [K, A]
    bits: np.ndarray     # int64 [K] each net's constraint (agents/constraints.py)
    act: int             # ACT_TANH or ACT_RELU
    tie: np.float32      # TIE_GAP: closer top-two legal logits pause the table


class Seats(NamedTuple):
    """Who plays each seat of each table (n tables, S seats)."""
    net_of_seat: np.ndarray   # int64 [n, S] index into Nets, -1: a core bot or nobody's
    kinds: np.ndarray         # core policy kind of each seat (nertz_env/core/policies.py)
    knobs: np.ndarray         # its knobs
    policy_rng: np.ndarray    # uint64 [n] random bots' generators (advanced in place)


class Deals(NamedTuple):
    """What each table is dealt (agents/arena/deals.py)."""
    deal_keys: np.ndarray     # uint64 [n] deck keys (core/batch.py shuffle_deal)
    hand_keys: np.ndarray     # uint64 [n, H] priority key of each hand
    first_hand: np.ndarray    # int64 [n] hand number of the table's first hand (R4 roles)
    games: bool               # whole games (stop at a winner, R30), else hands


class Buffers(NamedTuple):
    """The engine's per-tick arrays (nertz_env/engine.py)."""
    masks: np.ndarray
    actions: np.ndarray
    priority: np.ndarray
    applied: np.ndarray


class NetMemory(NamedTuple):
    """Each net seat's state, kept across the kernel's launches (n tables, S seats)."""
    obs: np.ndarray      # float32 [n, S, OBS_DIM] its last observation
    seen: np.ndarray     # float32 [n, S, OBS_DIM] the row its first layer describes
    pre: np.ndarray      # float64 [n, S, W] that first layer before its activation
    forced: np.ndarray   # int16 [n, S] a move Python chose (-1: none; ASK: Python is asked)
    cursor: np.ndarray   # int64 [n] FRESH, DONE or the hand a paused table is in


class Stack:
    """The networks of one batch: `nets` (Nets) of the K distinct (policy, constraint bits)
    picks given, `policies` and `bits` their lists; ok: False where they differ in depth,
    width or activation (the Python loop plays them)."""

    def __init__(self, picks):
        self.policies, self.bits = [], []
        for p, b in picks:
            if not any(p is q and b == c for q, c in zip(self.policies, self.bits)):
                self.policies.append(p)
                self.bits.append(int(b))
        first = self.policies[0]
        shapes = {tuple(w.shape for w, _ in p.hidden_layers) for p in self.policies}
        acts = {p.activation for p in self.policies}
        self.ok = len(shapes) == 1 and len(acts) == 1 and (
            len({s[1] for s in next(iter(shapes))}) == 1)
        if not self.ok:
            return
        L = len(first.hidden_layers) - 1
        W = first.hidden_layers[0][0].shape[1]
        K = len(self.policies)
        wh = np.zeros((K, L, W, W), np.float32)
        bh = np.zeros((K, L, W), np.float32)
        for k, p in enumerate(self.policies):
            for l, (w, b) in enumerate(p.hidden_layers[1:]):
                wh[k, l], bh[k, l] = w, b
        self.nets = Nets(
            np.stack([p.hidden_layers[0][0] for p in self.policies]).astype(np.float32),
            np.stack([p.hidden_layers[0][1] for p in self.policies]).astype(np.float32),
            wh, bh, np.stack([p.action_weight for p in self.policies]).astype(np.float32),
            np.stack([p.action_bias for p in self.policies]).astype(np.float32),
            np.array(self.bits, np.int64), ACT_TANH if first.activation == "tanh" else ACT_RELU,
            TIE_GAP)

    def index(self, pick) -> int:
        p, b = pick
        for k, (q, c) in enumerate(zip(self.policies, self.bits)):
            if p is q and int(b) == c:
                return k
        raise KeyError(pick)


_TANH_CLAMP = np.float32(7.90531110763549805)     # tanh rounds to +-1 in float32 beyond
_TANH_P = np.array([-2.76076847742355e-16, 2.00018790482477e-13, -8.60467152213735e-11,
                    5.12229709037114e-08, 1.48572235717979e-05, 6.37261928875436e-04,
                    4.89352455891786e-03], np.float32)
_TANH_Q = np.array([1.19825839466702e-06, 1.18534705686654e-04, 2.26843463243900e-03,
                    4.89352518554385e-03], np.float32)


@njit(cache=True, error_model="numpy", fastmath=True, inline="always")
def _tanh(x):
    """float32 tanh by a rational function of x (Eigen's; within 3e-7 of tanh on a dense
    grid, tests/learned/test_core_play.py): it vectorises, where a libm call per unit does not
    (the call was half the move's time, benchmarks/README.md)."""
    x = min(max(x, -_TANH_CLAMP), _TANH_CLAMP)
    x2 = x * x
    p = _TANH_P[0]
    for i in range(1, 7):
        p = x2 * p + _TANH_P[i]
    q = _TANH_Q[0]
    for i in range(1, 4):
        q = x2 * q + _TANH_Q[i]
    return x * p / q


@njit(cache=True, error_model="numpy", fastmath=True, inline="always")
def _activate(h, act):
    if act == ACT_TANH:
        for j in range(h.shape[0]):
            h[j] = _tanh(h[j])
    else:
        for j in range(h.shape[0]):
            h[j] = max(h[j], np.float32(0.0))


@njit(cache=True, error_model="numpy", fastmath=True, inline="always")
def _first_layer(row, seen, pre, k, w0, act, out, idx):
    """out = net k's first hidden layer on an observation row, kept up to date rather than
    recomputed: pre (float64, the width) holds b0 + w0 . seen, the row the seat saw last;
    only the entries that changed since are added (a tick changes ~10 of the ~70 non-zero
    entries) and seen becomes row. float64 keeps the sum exact to ~1e-12 whatever the
    history, so it matches a fresh sum (tests/learned/test_core_play.py). idx: int64 work row
    of OBS_DIM + 1."""
    W = pre.shape[0]
    C = row.shape[0]
    rb, sb = row.view(np.int32), seen.view(np.int32)
    n = 0
    for c0 in range(0, C - 7, 8):      # blocks of 8 entries: most are unchanged
        x = np.int32(0)
        for t in range(8):
            x |= rb[c0 + t] ^ sb[c0 + t]
        if x != 0:
            for c in range(c0, c0 + 8):    # the changed entries' columns, without a branch
                idx[n] = c
                n += row[c] != seen[c]
    for c in range(C - C % 8, C):
        idx[n] = c
        n += row[c] != seen[c]
    w = w0[k]                          # 2-D views: plain strides, so the loops vectorise
    for m in range(n):
        c = idx[m]
        d = np.float64(row[c]) - np.float64(seen[c])
        seen[c] = row[c]
        wr = w[c]
        for j in range(W):
            pre[j] += d * wr[j]
    for j in range(W):
        out[j] = np.float32(pre[j])
    _activate(out, act)


@njit(cache=True, error_model="numpy", fastmath=True)
def _later_layers(k, n, wh, bh, act, h, g):
    """Net k's other hidden layers on its n rows h[k, :n] at once, as one matrix product
    per layer (BLAS through numba's np.dot: a 128x128 layer costs a third of a row-at-a-time
    loop's time, benchmarks/README.md); g is the second buffer. Returns the buffer that
    holds the last layer (h or g)."""
    src, dst = h, g
    for l in range(wh.shape[1]):
        np.dot(src[k, :n], wh[k, l], dst[k, :n])
        b = bh[k, l]
        for r in range(n):
            out = dst[k, r]
            for j in range(out.shape[0]):
                out[j] += b[j]
            _activate(out, act)
        src, dst = dst, src
    return src


@njit(cache=True, error_model="numpy", fastmath=True)
def _head_move(hrow, row, mrow, k, wa, ba, bits, idx, tie):
    """(move, near) of net k from its last hidden layer: the legal argmax of the logits over
    the moves the constraint keeps (all legal ones when it keeps none), and whether the top
    two lie within tie."""
    n = constrained_moves(row, mrow, bits[k], idx)
    w = wa[k]
    top, second, arg = -np.inf, -np.inf, -1
    for m in range(n):
        a = idx[m]
        v = ba[k, a]
        wr = w[a]
        for j in range(hrow.shape[0]):
            v += hrow[j] * wr[j]
        if v > top:
            second, top, arg = top, v, a
        elif v > second:
            second = v
    return arg, (top - second) < tie


@njit(cache=True, error_model="numpy", fastmath=True)
def _tanh_all(x, out):
    for i in range(x.shape[0]):
        out[i] = _tanh(x[i])


def tanh_rows(x) -> np.ndarray:
    """The kernel's tanh of a float32 vector (tests)."""
    x = np.ascontiguousarray(x, np.float32)
    out = np.empty_like(x)
    _tanh_all(x, out)
    return out


@njit(cache=True, error_model="numpy")
def _hidden_rows(obs, k, w0, b0, wh, bh, act, out):
    W = b0.shape[1]
    h = np.empty((w0.shape[0], obs.shape[0], W), np.float32)
    g = np.empty_like(h)
    idx = np.zeros(obs.shape[1] + 1, np.int64)
    seen = np.zeros(obs.shape[1], np.float32)
    pre = b0[k].astype(np.float64)
    for r in range(obs.shape[0]):
        _first_layer(obs[r], seen, pre, k, w0, act, h[k, r], idx)
    out[:] = _later_layers(k, obs.shape[0], wh, bh, act, h, g)[k]


def logits(stack, k: int, observations) -> np.ndarray:
    """Net k's logits [n, A] as the kernel computes them, the rows taken in order as one
    seat's ticks (each row's first layer updated from the one before it); tests hold them
    within a small fraction of TIE_GAP of NumpyPolicy.logits: the premise of the pauses."""
    nets = stack.nets
    obs = np.ascontiguousarray(observations, np.float32)
    out = np.empty((obs.shape[0], nets.b0.shape[1]), np.float32)
    _hidden_rows(obs, k, nets.w0, nets.b0, nets.wh, nets.bh, nets.act, out)
    return out @ nets.wa[k].T + nets.ba[k]


@njit(cache=True, error_model="numpy", inline="always")
def _begin_hand(st, prm, scr, buf, seats, deals, nets, mem, e, h):
    hand = deals.first_hand[e] + h
    st.rng[e] = deals.hand_keys[e, h]
    shuffle_deal(st, prm, scr, e, deals.deal_keys[e], hand)
    deal_table(st, prm, e, scr.decks[e], hand)
    write_table_masks(st, prm, scr, e, buf.masks)
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
    net_of_seat, kinds, knobs, policy_rng = seats
    deal_keys, hand_keys, first_hand, stop_at_winner = deals
    hand_scores, n_hands, calls, winners, ticks = (out.scores, out.hands, out.calls, out.winner,
                                                   out.ticks)
    w0, b0, wh, bh, wa, ba, bits, act, tie = nets
    obs_buf, seen, pre, forced, cursor = mem
    S = prm.n_seats
    T = prm.n_teams
    H = hand_scores.shape[1]
    W = b0.shape[1]
    K = w0.shape[0]
    h_buf = np.empty((K, in_step * S, W), np.float32)
    g_buf = np.empty((K, in_step * S, W), np.float32)
    n_rows = np.zeros(K, np.int64)
    row_of = np.full((in_step, S), -1, np.int64)
    idx = np.zeros(OBS_DIM + 1, np.int64)
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
    seats = Seats(net_of_seat, kinds, knobs, policy_rng)
    deals = Deals(deal_keys, hand_keys, first_hand, games)
    n, S = net_of_seat.shape
    mem = NetMemory(np.zeros((n, S, OBS_DIM), np.float32), np.zeros((n, S, OBS_DIM), np.float32),
                    np.zeros((n, S, stack.nets.b0.shape[1]), np.float64),
                    np.full((n, S), -1, np.int16), np.full(n, FRESH, np.int64))
    buf = Buffers(eng.masks, eng.actions, eng.priority, eng.applied)
    launches = 0
    while True:
        # the parallel kernel at every size: one variant to compile (~1 minute, cold)
        eng.run_kernel(play_nets_batch, None, buf, seats, deals, out, stack.nets, mem, in_step)
        launches += 1
        ask_t, ask_s = np.nonzero(mem.forced == ASK)
        if not ask_t.size:
            return launches
        for k in np.unique(seats.net_of_seat[ask_t, ask_s]):
            sel = seats.net_of_seat[ask_t, ask_s] == k
            t, s = ask_t[sel], ask_s[sel]
            rows = mem.obs[t, s]
            legal = constrain(rows, eng.masks[t, s], stack.bits[k])
            mem.forced[t, s] = stack.policies[k].predict_rows(rows, legal)
