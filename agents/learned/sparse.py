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
