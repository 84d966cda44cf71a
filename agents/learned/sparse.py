"""A first layer that reads only the observation's non-zero entries.

The observation (nertz_env/core/observe.py, 791 floats) holds about 69 non-zero entries per
row (8.7%; at most ~110: one-hot cards, counts and flags), and the first layer of a policy is
most of its arithmetic (791 x 128 of the 791x128 + 128x128 + 128x322 multiply-adds of the
shipped network). Stored as padded rows (`sparse_rows`: per row the column ids and values of
its non-zero entries, padded with value 0 to the widest row), the first layer is a sum of
~69 weight rows instead of a 791-wide product, and its weight gradient a scatter of as many.

The kernels (numba, one core, fastmath: float32 sums in a fixed order, so runs are
reproducible) serve both the numpy forward pass of a saved model (weights.py NumpyPolicy)
and the lean PPO's training (agents/training/lean_ppo.py wraps them in a torch autograd
function). Their results equal the dense product up to float32 rounding (tests/agents/
test_sparse_layer.py). Imports numpy and numba only.

The masked policy's statistics (`masked_stats`, `masked_stats_grad`): per row of logits
[n, actions] with its legal moves, the log-probability of the move taken and the entropy
under the masked softmax (illegal moves probability 0), and their gradient with respect to
the logits, in one pass over each row's legal moves (a few dozen of the 322) instead of the
dozen whole-array passes of masked_fill, log_softmax, exp and their backward; the same values
up to float32 rounding (tests/agents/test_lean_speed_kernels.py).
"""
from __future__ import annotations

import numpy as np
from numba import njit


@njit(cache=True)
def _nnz_max(x):
    best = 0
    for r in range(x.shape[0]):
        n = 0
        for c in range(x.shape[1]):
            if x[r, c] != 0.0:
                n += 1
        best = max(best, n)
    return best


@njit(cache=True)
def _fill_rows(x, idx, val):
    for r in range(x.shape[0]):
        k = 0
        for c in range(x.shape[1]):
            if x[r, c] != 0.0:
                idx[r, k] = c
                val[r, k] = x[r, c]
                k += 1


def sparse_rows(x) -> tuple:
    """(idx int32 [n, K], val float32 [n, K]) of a float32 [n, d] array: each row's non-zero
    columns and values, padded with (0, 0.0) to K = the widest row's count (at least 1)."""
    x = np.ascontiguousarray(x, np.float32)
    k = max(1, int(_nnz_max(x)))
    idx = np.zeros((x.shape[0], k), np.int32)
    val = np.zeros((x.shape[0], k), np.float32)
    _fill_rows(x, idx, val)
    return idx, val


@njit(cache=True, fastmath=True)
def _forward(idx, val, w_in, bias, out):
    h = w_in.shape[1]
    acc = np.empty(h, np.float32)           # a local row: no aliasing with out, so it vectorises
    for r in range(idx.shape[0]):
        acc[:] = bias
        for k in range(idx.shape[1]):
            v = val[r, k]
            if v != 0.0:
                c = idx[r, k]
                for j in range(h):
                    acc[j] += v * w_in[c, j]
        out[r, :] = acc


@njit(cache=True, fastmath=True)
def _dense_forward(x, w_in, bias, out):
    h = w_in.shape[1]
    acc = np.empty(h, np.float32)
    for r in range(x.shape[0]):
        acc[:] = bias
        for c in range(x.shape[1]):
            v = x[r, c]
            if v != 0.0:
                for j in range(h):
                    acc[j] += v * w_in[c, j]
        out[r, :] = acc


def first_layer(x, w_in, bias) -> np.ndarray:
    """x @ w_in + bias for a float32 [n, d] x, reading its non-zero entries only (no padded
    rows built: one pass over x)."""
    out = np.empty((x.shape[0], w_in.shape[1]), np.float32)
    _dense_forward(np.ascontiguousarray(x, np.float32), np.ascontiguousarray(w_in, np.float32),
                   np.ascontiguousarray(bias, np.float32), out)
    return out


@njit(cache=True, fastmath=True)
def _weight_grad(idx, val, grad_out, grad_w_in):
    h = grad_out.shape[1]
    for r in range(idx.shape[0]):
        for k in range(idx.shape[1]):
            v = val[r, k]
            if v != 0.0:
                c = idx[r, k]
                for j in range(h):
                    grad_w_in[c, j] += v * grad_out[r, j]


def sparse_forward(idx, val, w_in, bias) -> np.ndarray:
    """x @ w_in + bias for the rows `sparse_rows` made of x; w_in float32 [d, h] (the layer's
    weight transposed: input-major), bias float32 [h]."""
    out = np.empty((idx.shape[0], w_in.shape[1]), np.float32)
    _forward(idx, val, np.ascontiguousarray(w_in, np.float32),
             np.ascontiguousarray(bias, np.float32), out)
    return out


def sparse_weight_grad(idx, val, grad_out, d: int) -> np.ndarray:
    """x.T @ grad_out, float32 [d, h]: the gradient of w_in for those rows."""
    g = np.zeros((d, grad_out.shape[1]), np.float32)
    _weight_grad(idx, val, np.ascontiguousarray(grad_out, np.float32), g)
    return g


@njit(cache=True, fastmath=True)
def _legal_argmax(h, w_out, bias, masks, best, gap):
    n, width = h.shape
    for r in range(n):
        top, second, arg = -np.inf, -np.inf, -1
        for a in range(w_out.shape[0]):
            if masks[r, a]:
                v = bias[a]
                for j in range(width):
                    v += h[r, j] * w_out[a, j]
                if v > top:
                    second, top, arg = top, v, a
                elif v > second:
                    second = v
        best[r] = arg
        gap[r] = top - second if arg >= 0 else -1.0


def legal_argmax(h, w_out, bias, masks) -> tuple:
    """(best int64 [n], gap float32 [n]): per row the legal action with the largest logit
    h @ w_out.T + bias (w_out [actions, width], the layer's own layout), computing only the
    legal columns, and the gap to the second largest (inf with one legal action, -1 with
    none). Ties and near-ties are the caller's to settle (the gap says where)."""
    n = h.shape[0]
    best = np.empty(n, np.int64)
    gap = np.empty(n, np.float32)
    _legal_argmax(np.ascontiguousarray(h, np.float32), np.ascontiguousarray(w_out, np.float32),
                  np.ascontiguousarray(bias, np.float32),
                  np.ascontiguousarray(masks, np.bool_), best, gap)
    return best, gap


@njit(cache=True)
def _masked_stats(logits, masks, rows, act, logp, ent, lse):
    n, width = logits.shape
    for r in range(n):
        m = masks[rows[r]]
        top = -np.inf
        for a in range(width):
            if m[a] and logits[r, a] > top:
                top = logits[r, a]
        if top == -np.inf:                  # no legal move: every move -1e8, as masked_fill
            lse[r] = -1e8 + np.log(width)
            logp[r] = -np.log(width)
            ent[r] = 0.0
            continue
        s = 0.0
        for a in range(width):
            if m[a]:
                s += np.exp(np.float64(logits[r, a]) - top)
        z = top + np.log(s)
        lse[r] = z
        h = 0.0
        for a in range(width):
            if m[a]:
                lp = np.float64(logits[r, a]) - z
                h -= np.exp(lp) * lp
        ent[r] = h
        logp[r] = (logits[r, act[r]] - z) if m[act[r]] else (np.float32(-1e8) - z)


@njit(cache=True)
def _masked_stats_grad(logits, masks, rows, act, lse, ent, g_logp, g_ent, out):
    n, width = logits.shape
    for r in range(n):
        m = masks[rows[r]]
        z, h = np.float64(lse[r]), np.float64(ent[r])
        g1, g2 = np.float64(g_logp[r]), np.float64(g_ent[r])
        for a in range(width):
            if m[a]:
                lp = np.float64(logits[r, a]) - z
                p = np.exp(lp)
                g = -g1 * p - g2 * p * (lp + h)
                if a == act[r]:
                    g += g1
                out[r, a] = g
            else:
                out[r, a] = 0.0


def masked_stats(logits, masks, rows, act) -> tuple:
    """(logp float32 [n], entropy float64 [n], lse float64 [n]) of logits float32 [n, A]
    under row i's legal moves masks[rows[i]] (masks bool [N, A], rows int [n]; rows lets a
    minibatch read a rollout's masks in place): log-probability of act[i] under the masked
    softmax (illegal logits as -1e8: MaskableCategorical's), its entropy (illegal moves
    contribute 0) and the log-sum-exp over the legal moves (for masked_stats_grad)."""
    n = logits.shape[0]
    logp, ent, lse = np.empty(n, np.float32), np.empty(n, np.float64), np.empty(n, np.float64)
    _masked_stats(np.ascontiguousarray(logits, np.float32), np.ascontiguousarray(masks, np.bool_),
                  np.ascontiguousarray(rows, np.int64), np.ascontiguousarray(act, np.int64),
                  logp, ent, lse)
    return logp, ent, lse


def masked_stats_grad(logits, masks, rows, act, lse, ent, g_logp, g_ent) -> np.ndarray:
    """d(loss)/d(logits) float32 [n, A] given d(loss)/d(logp) and d(loss)/d(entropy) per row
    (masked_stats' outputs lse and ent): g_logp (onehot(act) - p) - g_ent p (log p + H) at the
    legal moves, 0 at the illegal ones."""
    out = np.empty(logits.shape, np.float32)
    _masked_stats_grad(np.ascontiguousarray(logits, np.float32),
                       np.ascontiguousarray(masks, np.bool_), np.ascontiguousarray(rows, np.int64),
                       np.ascontiguousarray(act, np.int64), lse, ent,
                       np.ascontiguousarray(g_logp, np.float32),
                       np.ascontiguousarray(g_ent, np.float32), out)
    return out
