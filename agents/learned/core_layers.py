"""The network's arithmetic inside the learned seats' kernel (agents/learned/core_play.py):
float32 tanh by a rational function (nertz_env/core/net_policy.py tanh32, the rollouts' nets'
too; `tanh_rows`), the activations, the first layer
kept per seat and updated by the entries that changed (`_first_layer`), the later layers as
one matrix product over a tick's rows (`_later_layers`), the head's legal argmax and its
near-tie flag (`_head_move`), and `logits`, the kernel's logits of one seat's rows (tests).
Imports numpy, numba (SciPy for its np.dot), nertz_env's core and agents/constraints.py.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from nertz_env.core.net_policy import ACT_RELU, ACT_TANH  # noqa: F401 (core_play's names)
from nertz_env.core.net_policy import tanh32 as _tanh

from ..constraints import constrained_moves


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
    of the row's width + 1 (a v0 row's OBS_DIM or a v1 row's V1_OBS_DIM)."""
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
