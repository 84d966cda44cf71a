"""A masked MLP policy inside the jitted loops: the rollouts' net seats (core/fork.py).

A seat whose kind is POLICY_NET (core/policies.py) plays a network given as plain arrays
(`NetArrays`, K nets stacked, the seat's net index in knobs[e, s, 0]): per move it writes the
seat's observation (core/observe.py write_seat_observation, nertz_v0), runs the hidden layers
(tanh or relu), and plays the argmax of the logits over its legal moves under the net's
constraint bits, deterministically. The arrays come from outside (agents/search passes the
shipped net's: agents/learned/weights.py NumpyPolicy's layers); nothing here reads a file.

The constraint is applied by the one rule code of every constrained seat
(core/constraint_rules.py constrained_moves: training, Python play and the learned seats'
kernel call it too).

Rounding: the forward runs in float32 (fastmath; tanh by a rational function within ~3e-7),
so its logits differ from NumpyPolicy's (numpy's float32 ops, BLAS) by ~1e-6. Where the top
two legal logits lie within the net's `tie` (TIE_GAP, 1e-3) the two may pick different moves;
NumpyPolicy settles those by its own op-for-op path, this kernel by its own logits and counts
them (NetWork.near, per slot). Elsewhere the move is NumpyPolicy's. Inside rollouts (a model
of the other players) that is acceptable; a net seat that must equal `learned` move for move
is played by agents/learned/core_play.py, which pauses at near ties.

fork.py's cached kernels embed this code; core/kernel_cache.py recompiles them when this
file changes (numba alone would not).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from .codec import N_ACTIONS, WAIT
from .constraint_rules import ALL_BITS, constrained_moves
from .observe import OBS_DIM, write_seat_observation

ACT_TANH, ACT_RELU = 0, 1
ACTIVATIONS = {"tanh": ACT_TANH, "relu": ACT_RELU}
# fastmath without nnan/ninf: the argmax starts from -inf and a lone move's gap is inf, which
# those flags let LLVM assume away
FAST = {"contract", "reassoc", "arcp", "nsz", "afn"}


class NetArrays(NamedTuple):
    """K masked MLPs of one depth and width W (L hidden layers after the first), stacked."""
    w0: np.ndarray       # float32 [K, OBS_DIM, W] first layer, input-major
    b0: np.ndarray       # float32 [K, W]
    wh: np.ndarray       # float32 [K, L, W, W] the other hidden layers, output-major
    bh: np.ndarray       # float32 [K, L, W]
    wa: np.ndarray       # float32 [K, N_ACTIONS, W] the action head, one row per move
    ba: np.ndarray       # float32 [K, N_ACTIONS]
    bits: np.ndarray     # int64 [K] each net's constraint bits
    act: int             # ACT_TANH or ACT_RELU
    tie: np.float32      # top two legal logits closer than this: a near tie (counted)


class NetWork(NamedTuple):
    """Per-slot work rows of the net seats (allocate_net_work)."""
    obs: np.ndarray      # float32 [M, 1, OBS_DIM] the seat's observation
    h: np.ndarray        # float32 [M, 2, W] hidden layers
    idx: np.ndarray      # int64 [M, N_ACTIONS + 1] the constrained legal moves
    near: np.ndarray     # int64 [M] net moves whose top two legal logits were within tie


def net_arrays(nets, tie) -> NetArrays:
    """NetArrays of nets: a list of (hidden [(weight [in, out], bias [out])], action_weight
    [N_ACTIONS, W], action_bias [N_ACTIONS], activation name, constraint bits). ValueError
    (one line) unless they read OBS_DIM values, play N_ACTIONS moves, and share depth, width
    and activation."""
    if not nets:
        raise ValueError("net_arrays: no nets given")
    hidden0, _, _, act0, _ = nets[0]
    for hidden, wa, ba, act, bits in nets:
        widths = [np.shape(w) for w, _ in hidden]
        if (len(hidden) != len(hidden0) or act != act0 or act not in ACTIVATIONS
                or not hidden or widths[0][0] != OBS_DIM
                or any(s != (widths[0][1],) * 2 for s in widths[1:])
                or widths[0][1] != np.shape(hidden0[0][0])[1]
                or np.shape(wa) != (N_ACTIONS, widths[0][1]) or np.shape(ba) != (N_ACTIONS,)
                or not 0 <= int(bits) <= ALL_BITS):
            raise ValueError(f"net_arrays: every net must read {OBS_DIM} values, have equal "
                             "hidden layers of one width, a tanh or relu activation, a "
                             f"[{N_ACTIONS}, width] head and known constraint bits")
    f32 = np.float32
    W, L = np.shape(hidden0[0][0])[1], len(hidden0) - 1
    return NetArrays(
        np.stack([np.asarray(h[0][0], f32) for h, *_ in nets]),
        np.stack([np.asarray(h[0][1], f32) for h, *_ in nets]),
        np.stack([np.asarray([np.transpose(w) for w, _ in h[1:]], f32).reshape(L, W, W)
                  for h, *_ in nets]),
        np.stack([np.asarray([b for _, b in h[1:]], f32).reshape(L, W) for h, *_ in nets]),
        np.stack([np.asarray(n[1], f32) for n in nets]),
        np.stack([np.asarray(n[2], f32) for n in nets]),
        np.array([int(n[4]) for n in nets], np.int64), ACTIVATIONS[act0], np.float32(tie))


def empty_net() -> NetArrays:
    """A stand-in for rollouts without net seats (the kernels take the same types)."""
    z = np.zeros
    return NetArrays(z((1, OBS_DIM, 1), np.float32), z((1, 1), np.float32),
                     z((1, 0, 1, 1), np.float32), z((1, 0, 1), np.float32),
                     z((1, N_ACTIONS, 1), np.float32), z((1, N_ACTIONS), np.float32),
                     z(1, np.int64), ACT_TANH, np.float32(0))


def allocate_net_work(n_slots: int, width: int) -> NetWork:
    """Work rows for n_slots rollout slots of nets of hidden width `width`."""
    return NetWork(np.zeros((n_slots, 1, OBS_DIM), np.float32),
                   np.zeros((n_slots, 2, width), np.float32),
                   np.zeros((n_slots, N_ACTIONS + 1), np.int64), np.zeros(n_slots, np.int64))


# ---------------------------------------------------------------------------- forward
_TANH_CLAMP = np.float32(7.90531110763549805)     # tanh rounds to +-1 in float32 beyond
_TANH_P = np.array([-2.76076847742355e-16, 2.00018790482477e-13, -8.60467152213735e-11,
                    5.12229709037114e-08, 1.48572235717979e-05, 6.37261928875436e-04,
                    4.89352455891786e-03], np.float32)
_TANH_Q = np.array([1.19825839466702e-06, 1.18534705686654e-04, 2.26843463243900e-03,
                    4.89352518554385e-03], np.float32)


@njit(cache=True, error_model="numpy", fastmath=FAST, inline="always")
def tanh32(x):
    """float32 tanh by a rational function of x (Eigen's; within ~3e-7 of tanh): it
    vectorises where a libm call per unit does not. The one tanh of the nets played in numba:
    here and in the learned seats' kernel (agents/learned/core_layers.py)."""
    x = min(max(x, -_TANH_CLAMP), _TANH_CLAMP)
    x2 = x * x
    p = _TANH_P[0]
    for i in range(1, 7):
        p = x2 * p + _TANH_P[i]
    q = _TANH_Q[0]
    for i in range(1, 4):
        q = x2 * q + _TANH_Q[i]
    return x * p / q


@njit(cache=True, error_model="numpy", fastmath=FAST, inline="always")
def _activate(h, act):
    """In place: tanh32 or relu."""
    for j in range(h.shape[0]):
        if act == ACT_TANH:
            h[j] = tanh32(h[j])
        else:
            h[j] = max(h[j], np.float32(0.0))


@njit(cache=True, error_model="numpy", fastmath=FAST, inline="always")
def hidden_forward(row, k, net, h, g):
    """The hidden layers of net k on one observation row, in the work rows h and g: returns
    the one of them that holds the last layer. The one layer code of the nets played in
    numba: row_move's policy head and core/leaf_value.py's value head both read it."""
    w0, b0 = net.w0[k], net.b0[k]
    for j in range(h.shape[0]):
        h[j] = b0[j]
    for c in range(row.shape[0]):       # the first layer from the row's non-zero entries
        v = row[c]
        if v != 0.0:
            wr = w0[c]
            for j in range(h.shape[0]):
                h[j] += v * wr[j]
    _activate(h, net.act)
    src, dst = h, g
    for layer in range(net.wh.shape[1]):
        w, b = net.wh[k, layer], net.bh[k, layer]
        for j in range(dst.shape[0]):       # a dot product per unit: a reduction vectorises
            wr = w[j]
            acc = b[j]
            for i in range(src.shape[0]):
                acc += src[i] * wr[i]
            dst[j] = acc
        _activate(dst, net.act)
        src, dst = dst, src
    return src


@njit(cache=True, error_model="numpy", fastmath=FAST)
def row_move(row, mrow, k, net, h, g, idx):
    """(move, gap) of net k on one observation row and legal-move row: the argmax of the
    logits over the moves its constraint keeps (ties to the lowest id) and the gap between
    the top two (inf with one move: no forward is run)."""
    n = constrained_moves(row, mrow, net.bits[k], idx)
    if n == 1:
        return idx[0], np.float32(np.inf)
    src = hidden_forward(row, k, net, h, g)
    wa, ba = net.wa[k], net.ba[k]
    top, second, arg = -np.inf, -np.inf, -1
    for m in range(n):
        a = idx[m]
        v = ba[a]
        wr = wa[a]
        for j in range(src.shape[0]):
            v += src[j] * wr[j]
        if v > top:
            second, top, arg = top, v, a
        elif v > second:
            second = v
    return arg, np.float32(top - second)


@njit(cache=True, error_model="numpy")
def net_move(st, prm, scr, masks, e, s, net, work, k):
    """Seat s of slot e plays net k (module docstring); Wait when it is not ready (R21)."""
    if st.tick[e] < st.ready[e, s]:
        return WAIT
    write_seat_observation(st, prm, scr, e, s, work.obs, 0)
    a, gap = row_move(work.obs[e, 0], masks[e, s], k, net, work.h[e, 0], work.h[e, 1],
                      work.idx[e])
    if gap < net.tie:
        work.near[e] += 1
    return a


@njit(cache=True, error_model="numpy")
def _rows_moves(obs, masks, k, net, moves, gaps):
    h = np.zeros((2, net.b0.shape[1]), np.float32)
    idx = np.zeros(N_ACTIONS + 1, np.int64)
    for r in range(obs.shape[0]):
        moves[r], gaps[r] = row_move(obs[r], masks[r], k, net, h[0], h[1], idx)


def rows_moves(net: NetArrays, k: int, observations, masks) -> tuple:
    """(moves int64 [n], gaps float32 [n]) of net k on observation rows and their legal
    masks: the kernel's moves (tests compare them with NumpyPolicy's)."""
    obs = np.ascontiguousarray(observations, np.float32)
    m = np.ascontiguousarray(masks, np.int8)
    moves, gaps = np.empty(len(obs), np.int64), np.empty(len(obs), np.float32)
    _rows_moves(obs, m, int(k), net, moves, gaps)
    return moves, gaps
