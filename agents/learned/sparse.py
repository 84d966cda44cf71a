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
function). Their results equal the dense product up to float32 rounding (tests/learned/
test_sparse_layer.py). Imports numpy and numba only.

The policy head over the legal moves (`masked_head`, `masked_head_grad`): per row of the last
hidden layer, the logits of its legal moves only (a few of the 322: 2.4 on average in the
generalist's rollouts), the log-probability of the move taken and the entropy under the
masked softmax (illegal moves probability 0), and the gradient to the hidden row, the head's
weight and bias, instead of the whole [n, 322] product and a dozen passes over it
(masked_fill, log_softmax, gather, exp and their backward); the same values up to float32
rounding (tests/training/test_lean_speed_kernels.py). `legal_draw` samples a move from the same
legal logits (Gumbel-max), for the lean PPO's rollouts.
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
    rows built: one pass over x). x narrower or wider than the layer's inputs: one line (the
    kernel reads x's columns only, so a v0 row given to a v1 net would pass in silence)."""
    if np.ndim(x) != 2 or x.shape[1] != w_in.shape[0]:
        raise ValueError(f"observations of shape {np.shape(x)}: this network reads "
                         f"{w_in.shape[0]} values per row")
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
def _legal_counts(masks, rows, start):
    start[0] = 0
    for r in range(rows.shape[0]):
        m = masks[rows[r]]
        c = 0
        for a in range(m.shape[0]):
            if m[a]:
                c += 1
        start[r + 1] = start[r] + c


@njit(cache=True, fastmath=True)
def _legal_logits(h, w, b, masks, rows, start, moves, z):
    for r in range(h.shape[0]):
        m = masks[rows[r]]
        k = start[r]
        for a in range(m.shape[0]):
            if m[a]:
                s = 0.0
                for j in range(h.shape[1]):
                    s += np.float64(h[r, j]) * np.float64(w[a, j])
                moves[k] = a
                z[k] = s + b[a]
                k += 1


@njit(cache=True, inline="always")
def _logsumexp(z, lo, hi):
    """log(sum(exp(z[lo:hi]))), taken by the largest (lo < hi): the masked softmax's
    normaliser over a row's legal logits (_legal_stats, _legal_draw)."""
    top = z[lo]
    for k in range(lo + 1, hi):
        top = max(top, z[k])
    s = 0.0
    for k in range(lo, hi):
        s += np.exp(z[k] - top)
    return top + np.log(s)


@njit(cache=True)
def _legal_stats(start, moves, z, act, width, logp, ent, lse):
    for r in range(act.shape[0]):
        lo, hi = start[r], start[r + 1]
        if lo == hi:                        # no legal move: every logit -1e8, as masked_fill
            lse[r] = -1e8 + np.log(width)
            logp[r] = -np.log(width)
            ent[r] = 0.0
            continue
        lz = _logsumexp(z, lo, hi)
        lse[r] = lz
        e = 0.0
        taken = -1e8 - lz                   # an illegal act: its logit -1e8
        for k in range(lo, hi):
            lp = z[k] - lz
            e -= np.exp(lp) * lp
            if moves[k] == act[r]:
                taken = lp
        ent[r] = e
        logp[r] = taken


@njit(cache=True)
def _legal_grad(h, w, start, moves, z, act, lse, ent, g_logp, g_ent, gh, gw, gb):
    for r in range(h.shape[0]):
        g1, g2 = np.float64(g_logp[r]), np.float64(g_ent[r])
        for k in range(start[r], start[r + 1]):
            a = moves[k]
            lp = z[k] - lse[r]
            p = np.exp(lp)
            g = -g1 * p - g2 * p * (lp + ent[r])
            if a == act[r]:
                g += g1
            g32 = np.float32(g)
            gb[a] += g32
            for j in range(h.shape[1]):
                gw[a, j] += g32 * h[r, j]
                gh[r, j] += g32 * w[a, j]


def masked_head(h, w, b, masks, rows, act) -> tuple:
    """(logp float32 [n], entropy float64 [n], legal) of the policy head logits = h @ w.T + b
    (h float32 [n, width], w [A, width]: the layer's own layout) under row i's legal moves
    masks[rows[i]] (masks bool [N, A], rows int [n]: a minibatch reads its rollout's masks in
    place), computing the legal logits only: the log-probability of act[i] under the masked
    softmax (illegal logits as -1e8: MaskableCategorical's) and its entropy (illegal moves
    contribute 0). legal: what masked_head_grad needs (each row's legal moves, their logits
    and log-sum-exp)."""
    h = np.ascontiguousarray(h, np.float32)
    w = np.ascontiguousarray(w, np.float32)
    masks = np.ascontiguousarray(masks, np.bool_)
    rows = np.ascontiguousarray(rows, np.int64)
    act = np.ascontiguousarray(act, np.int64)
    n = h.shape[0]
    start = np.empty(n + 1, np.int64)
    _legal_counts(masks, rows, start)
    moves, z = np.empty(start[-1], np.int64), np.empty(start[-1], np.float64)
    _legal_logits(h, w, np.ascontiguousarray(b, np.float32), masks, rows, start, moves, z)
    logp, ent, lse = np.empty(n, np.float32), np.empty(n, np.float64), np.empty(n, np.float64)
    _legal_stats(start, moves, z, act, w.shape[0], logp, ent, lse)
    return logp, ent, (h, w, start, moves, z, act, lse, ent)


def masked_head_grad(legal, g_logp, g_ent) -> tuple:
    """(d/dh [n, width], d/dw [A, width], d/db [A]) float32 of a loss, given its gradient
    g_logp and g_ent to masked_head's log-probabilities and entropies (legal: masked_head's
    third output): at the legal logits g_logp (onehot(act) - p) - g_ent p (log p + H), none
    through the illegal ones."""
    h, w = legal[0], legal[1]
    gh, gw = np.zeros(h.shape, np.float32), np.zeros(w.shape, np.float32)
    gb = np.zeros(w.shape[0], np.float32)
    _legal_grad(*legal, np.ascontiguousarray(g_logp, np.float32),
                np.ascontiguousarray(g_ent, np.float32), gh, gw, gb)
    return gh, gw, gb


@njit(cache=True)
def _legal_draw(start, moves, z, u, width, action, logp):
    for r in range(action.shape[0]):
        lo, hi = start[r], start[r + 1]
        if lo == hi:                        # no legal move: move 0, as argmax of all -inf
            action[r] = 0
            logp[r] = -np.log(width)
            continue
        best, arg = -np.inf, lo
        for k in range(lo, hi):
            g = z[k] - np.log(-np.log(max(u[k], 1e-20)))      # Gumbel-max
            if g > best:
                best, arg = g, k
        action[r] = moves[arg]
        logp[r] = z[arg] - _logsumexp(z, lo, hi)


def legal_draw(h, w, b, masks, uniform) -> tuple:
    """(action int64 [n], its log-probability float32 [n]): a Gumbel-max draw from the masked
    softmax of the policy head h @ w.T + b under masks (bool [n, A]), computing the legal
    logits only (masked_head's, the same sums); uniform(k) gives the k uniform draws in
    [0, 1), one per legal move in row-major order."""
    h = np.ascontiguousarray(h, np.float32)
    w = np.ascontiguousarray(w, np.float32)
    masks = np.ascontiguousarray(masks, np.bool_)
    n = h.shape[0]
    rows = np.arange(n, dtype=np.int64)
    start = np.empty(n + 1, np.int64)
    _legal_counts(masks, rows, start)
    moves, z = np.empty(start[-1], np.int64), np.empty(start[-1], np.float64)
    _legal_logits(h, w, np.ascontiguousarray(b, np.float32), masks, rows, start, moves, z)
    action, logp = np.empty(n, np.int64), np.empty(n, np.float32)
    _legal_draw(start, moves, z, np.asarray(uniform(int(start[-1])), np.float64), w.shape[0],
                action, logp)
    return action, logp
