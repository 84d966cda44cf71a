"""Learned seats inside the jitted play loop: tables where every outside agent is a
safe-format masked net played deterministically run to their end in one parallel numba
kernel, as tables of bots do (nertz_env/core/batch.py play_bots_batch), instead of a Python
loop with one forward pass per tick (agents/arena/play.py play_python).

Same moves, same numbers. Per tick a table's core bots choose first (drawing from their
generators in the same order as the Python loop), then every network seat (one not ready,
R21, has only Wait and plays it without the net): its observation
(core/observe.py write_seat_observation), its legal moves cleared by the model's constraint
(agents/constraints.py, the same rule code), and the fast path of NumpyPolicy (weights.py):
the first layer kept per seat and updated by the observation entries that changed since the
seat's last move (float64, so it equals a fresh sum to ~1e-12), the other layers, the
logits of the legal moves only, their argmax. Where the top two legal logits lie within TIE_GAP,
NumpyPolicy lets predict's own float32 ops decide; numba cannot run those ops bit for bit,
so the table pauses there, before the tick resolves: the kernel returns, Python plays the
paused seats with NumpyPolicy.predict_rows (the op-for-op path) and the kernel resumes
every paused table where it stopped. Elsewhere the legal argmax is the move under either
rounding (the logits of the two paths differ by ~1e-6; the gap is >= 1e-3). Near-ties are
rare, so a batch takes a few launches (tests/arena/test_core_play.py holds every block
equal to the Python loop's, ties included).

`networks(agent, config)`: per seat of that table, the (NumpyPolicy, constraint bits) the
agent plays there (its `core_networks(config)`, agents/base.py), or None when the agent
cannot play in the core (a draw instead of the
argmax, an SB3 zip, an unmasked net, anything else). `Stack` holds the networks of one
batch as arrays (every net the same depth, width and activation; else the Python loop).
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


def networks(agent, config):
    """Per seat of `config`'s table, (NumpyPolicy, constraint bits) of the net `agent` plays
    there, or None where it cannot be played in the core (module docstring). The agent says
    which nets through `core_networks(config)` (agents/base.py); this checks each is one the
    kernel plays exactly."""
    from .weights import NumpyPolicy
    ask = getattr(agent, "core_networks", None)
    picks = ask(config) if callable(ask) else None
    if picks is None:
        return None
    for policy, _ in picks:
        if not (isinstance(policy, NumpyPolicy) and policy.deterministic and policy.masked
                and policy.sparse and policy.activation in ("tanh", "relu")):
            return None
    return picks


class Stack:
    """The networks of one batch as arrays: w0 [K, OBS_DIM, W] (input-major), b0 [K, W],
    wh [K, L, W, W], bh [K, L, W] (the other hidden layers), wa [K, A, W], ba [K, A],
    bits [K] (constraints), act (ACT_TANH / ACT_RELU). K = the distinct policies given."""

    def __init__(self, picks):
        self.policies, self.bits = [], []
        for p, b in picks:
            if not any(p is q and b == c for q, c in zip(self.policies, self.bits)):
                self.policies.append(p)
                self.bits.append(int(b))
        first = self.policies[0]
        shapes = {tuple(w.shape for w, _ in p._layers) for p in self.policies}
        acts = {p.activation for p in self.policies}
        self.ok = len(shapes) == 1 and len(acts) == 1 and (
            len({s[1] for s in next(iter(shapes))}) == 1)
        if not self.ok:
            return
        L = len(first._layers) - 1
        W = first._layers[0][0].shape[1]
        self.w0 = np.stack([p._layers[0][0] for p in self.policies]).astype(np.float32)
        self.b0 = np.stack([p._layers[0][1] for p in self.policies]).astype(np.float32)
        self.wh = np.zeros((len(self.policies), L, W, W), np.float32)
        self.bh = np.zeros((len(self.policies), L, W), np.float32)
        for k, p in enumerate(self.policies):
            for l, (w, b) in enumerate(p._layers[1:]):
                self.wh[k, l], self.bh[k, l] = w, b
        self.wa = np.stack([p._head_out for p in self.policies]).astype(np.float32)
        self.ba = np.stack([p._head[1] for p in self.policies]).astype(np.float32)
        self.bits_arr = np.array(self.bits, np.int64)
        self.act = ACT_TANH if first.activation == "tanh" else ACT_RELU

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
    grid, tests/arena/test_core_play.py): it vectorises, where a libm call per unit does not
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
def _hidden(row, seen, pre, k, w0, wh, bh, act, ha, hb, idx):
    """ha = net k's last hidden layer on an observation row, its first layer kept up to date
    rather than recomputed: pre (float64, the width) holds b0 + w0 . seen, the row the seat
    saw last; only the entries that changed since are added (a tick changes ~10 of the ~70
    non-zero entries) and seen becomes row. float64 keeps the sum exact to ~1e-12 whatever
    the history, so it matches a fresh sum (tests/arena/test_core_play.py). idx: int64
    work row of OBS_DIM + 1; hb: a work row of the width."""
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
        ha[j] = np.float32(pre[j])
    _activate(ha, act)
    for l in range(wh.shape[1]):
        w = wh[k, l]
        hb[:] = bh[k, l]
        for i in range(0, W - 3, 4):   # four weight rows per pass over hb: a quarter the stores
            x0, x1, x2, x3 = ha[i], ha[i + 1], ha[i + 2], ha[i + 3]
            r0, r1, r2, r3 = w[i], w[i + 1], w[i + 2], w[i + 3]
            for j in range(W):
                hb[j] += x0 * r0[j] + x1 * r1[j] + x2 * r2[j] + x3 * r3[j]
        for i in range(W - W % 4, W):
            x = ha[i]
            wr = w[i]
            for j in range(W):
                hb[j] += x * wr[j]
        _activate(hb, act)
        ha[:] = hb


@njit(cache=True, error_model="numpy", fastmath=True)
def _net_move(row, seen, pre, mrow, k, w0, wh, bh, wa, ba, bits, act, ha, hb, idx, tie):
    """(move, near) of net k on an observation row and its mask row: the legal argmax of
    the logits over the moves the constraint keeps (all legal ones when it keeps none), and
    whether the top two lie within tie."""
    _hidden(row, seen, pre, k, w0, wh, bh, act, ha, hb, idx)
    n = constrained_moves(row, mrow, bits[k], idx)
    w = wa[k]
    top, second, arg = -np.inf, -np.inf, -1
    for m in range(n):
        a = idx[m]
        v = ba[k, a]
        wr = w[a]
        for j in range(ha.shape[0]):
            v += ha[j] * wr[j]
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
    ha, hb = np.empty(W, np.float32), np.empty(W, np.float32)
    idx = np.zeros(obs.shape[1] + 1, np.int64)
    seen = np.zeros(obs.shape[1], np.float32)
    pre = b0[k].astype(np.float64)
    for r in range(obs.shape[0]):
        _hidden(obs[r], seen, pre, k, w0, wh, bh, act, ha, hb, idx)
        out[r] = ha


def logits(stack, k: int, observations) -> np.ndarray:
    """Net k's logits [n, A] as the kernel computes them, the rows taken in order as one
    seat's ticks (each row's first layer updated from the one before it); tests hold them
    within a small fraction of TIE_GAP of NumpyPolicy.logits: the premise of the pauses."""
    obs = np.ascontiguousarray(observations, np.float32)
    out = np.empty((obs.shape[0], stack.b0.shape[1]), np.float32)
    _hidden_rows(obs, k, stack.w0, stack.b0, stack.wh, stack.bh, stack.act, out)
    return out @ stack.wa[k].T + stack.ba[k]


@njit(cache=True, error_model="numpy")  # allocates its work rows: NRT on
def play_nets_range(st, prm, scr, masks, actions, priority, applied, policy_rng, kinds, knobs,
                    deal_keys, hand_keys, first_hand, stop_at_winner, hand_scores, n_hands,
                    calls, winners, ticks, net_of_seat, w0, b0, wh, bh, wa, ba, bits, act,
                    obs_buf, seen, pre, forced, cursor, tie, lo, hi):
    S = prm.n_seats
    T = prm.n_teams
    H = hand_scores.shape[1]
    W = b0.shape[1]
    ha = np.empty(W, np.float32)
    hb = np.empty(W, np.float32)
    idx = np.zeros(OBS_DIM + 1, np.int64)
    totals = np.zeros(T, np.int64)
    game_calls = np.zeros(T, np.int64)
    for e in range(lo, hi):
        if cursor[e] == DONE:
            continue
        resume = cursor[e] >= 0
        h = cursor[e] if resume else 0
        if not resume:
            winners[e] = -1
            n_hands[e] = 0
        totals[:] = 0
        game_calls[:] = 0
        for g in range(h):
            for t in range(T):
                totals[t] += hand_scores[e, g, t]
                game_calls[t] += calls[e, g, t]
        paused = False
        while h < H:
            if not resume:
                hand = first_hand[e] + h
                st.rng[e] = hand_keys[e, h]
                shuffle_deal(st, prm, scr, e, deal_keys[e], hand)
                deal_table(st, prm, e, scr.decks[e], hand)
                write_table_masks(st, prm, scr, e, masks)
                for s in range(S):          # a new hand: each net's first layer from scratch
                    k = net_of_seat[e, s]
                    if k >= 0:
                        seen[e, s, :] = 0.0
                        for j in range(W):
                            pre[e, s, j] = b0[k, j]
            while st.status[e] == PLAYING:
                if not resume:      # a resumed tick keeps the bots' moves it paused with
                    write_policy_actions(masks, scr.avail, st.river, st.river_n,
                                         prm.seat_team, kinds, knobs, policy_rng, actions, e, S)
                resume = False
                for s in range(S):
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
                    a, near = _net_move(obs_buf[e, s], seen[e, s], pre[e, s], masks[e, s], k,
                                        w0, wh, bh, wa, ba, bits, act, ha, hb, idx, tie)
                    if near:
                        forced[e, s] = ASK
                        paused = True
                    else:
                        actions[e, s] = a
                if paused:
                    break
                step_table(st, prm, scr, e, actions, priority, masks, applied)
            if paused:
                cursor[e] = h
                break
            record_hand(st, prm, e, h, hand_scores, calls, ticks, n_hands, totals, game_calls)
            h += 1
            if stop_at_winner:
                w = decide_winner(totals, game_calls, prm.target_score)
                if w >= 0:
                    winners[e] = w
                    break
        if not paused:
            cursor[e] = DONE


@njit(cache=True, error_model="numpy", parallel=True)
def play_nets_batch(st, prm, scr, masks, actions, priority, applied, policy_rng, kinds, knobs,
                    deal_keys, hand_keys, first_hand, stop_at_winner, hand_scores, n_hands,
                    calls, winners, ticks, net_of_seat, w0, b0, wh, bh, wa, ba, bits, act,
                    obs_buf, seen, pre, forced, cursor, tie):
    """play_nets_range over chunks of the tables (module docstring): every table plays
    from where its cursor says until its end or its next near-tie."""
    E = st.tick.shape[0]
    k = n_chunks(E)
    for c in prange(k):
        lo, hi = chunk_bounds(c, k, E)
        play_nets_range(st, prm, scr, masks, actions, priority, applied, policy_rng, kinds,
                        knobs, deal_keys, hand_keys, first_hand, stop_at_winner, hand_scores,
                        n_hands, calls, winners, ticks, net_of_seat, w0, b0, wh, bh, wa, ba,
                        bits, act, obs_buf, seen, pre, forced, cursor, tie, lo, hi)


def play_nets(eng, stack: Stack, net_of_seat, kinds, knobs, policy_rng, deal_keys, hand_keys,
              first_hand, games: bool, out) -> int:
    """Every table of `eng` played to its end (a whole game when games, else one hand) into
    `out` (agents/arena/play.py HandResults), network seats by net_of_seat [n, S] (index
    into stack, -1: a core bot or nobody's). Returns the kernel launches it took."""
    n, S = net_of_seat.shape
    obs_buf = np.zeros((n, S, OBS_DIM), np.float32)
    seen = np.zeros((n, S, OBS_DIM), np.float32)         # what each seat's first layer describes
    pre = np.zeros((n, S, stack.b0.shape[1]), np.float64)
    forced = np.full((n, S), -1, np.int16)
    cursor = np.full(n, FRESH, np.int64)
    launches = 0
    while True:
        # the parallel kernel at every size: one variant to compile (~1 minute, cold)
        eng.run_kernel(play_nets_batch, None, eng.masks, eng.actions, eng.priority,
                       eng.applied, policy_rng, kinds, knobs, deal_keys, hand_keys, first_hand,
                       games, out.scores, out.hands, out.calls, out.winner, out.ticks,
                       net_of_seat, stack.w0, stack.b0, stack.wh, stack.bh, stack.wa, stack.ba,
                       stack.bits_arr, stack.act, obs_buf, seen, pre, forced, cursor, TIE_GAP)
        launches += 1
        ask_t, ask_s = np.nonzero(forced == ASK)
        if not ask_t.size:
            return launches
        for k in np.unique(net_of_seat[ask_t, ask_s]):
            sel = net_of_seat[ask_t, ask_s] == k
            t, s = ask_t[sel], ask_s[sel]
            rows = obs_buf[t, s]
            legal = constrain(rows, eng.masks[t, s], stack.bits[k])
            forced[t, s] = stack.policies[k].predict_rows(rows, legal)
