"""A leaf value at the rollouts' horizon (core/fork.py; `search:leaf=value`).

A rollout stopped by its horizon before the hand's end scores its relative points at the stop
(scoring.relative_points: own points minus the mean of the other teams'). With a leaf, it
adds an estimate of the relative points still to come: a value net (train/leaf_value.py)
reads each seat's nertz_v0 observation in the slot's own position (write_seat_observation: in
a search, the sampled world, never the true hidden cards) and predicts its team's relative
points to come, V. Per team t, V_t is the mean over its seats. Relative points sum to zero
over the teams at every tick, so their changes to come do too; the V_t do not exactly, and
the leaf is the least-squares projection of (V_t) onto that constraint, team me's part:

    D_me = V_me - mean_t V_t = (T - 1) / T * (V_me - mean over the other teams of V_t)

(T = 2: half of V_me - V_other, both seats' views averaged). The slot's value becomes its
relative points now plus D_me: the predicted relative points at the hand's end.

The net is a `NetArrays` of one net (core/net_policy.py: the same hidden layers,
hidden_forward, the one layer code of the nets in numba) whose head is one row: wa [1, 1, W],
ba [1, 1], in points. `Leaf` carries its arrays with its work rows; `no_leaf()` is the stand-in of
rollouts without one (on == 0: the values are the stop's relative points, as ever).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from .net_policy import ACTIVATIONS, FAST, NetArrays, hidden_forward
from .observe import OBS_DIM, write_seat_observation


class Leaf(NamedTuple):
    """A value net's arrays (NetArrays' fields, one net: w0 [1, OBS_DIM, W], ..., wa
    [1, 1, W], ba [1, 1]; flat, not nested: numba's parallel kernels take no tuple of
    tuples) and its per-slot work rows (allocate_leaf); on == 0: no leaf."""
    w0: np.ndarray
    b0: np.ndarray
    wh: np.ndarray
    bh: np.ndarray
    wa: np.ndarray
    ba: np.ndarray
    bits: np.ndarray
    act: int
    tie: np.float32
    on: int                  # 1: add the leaf at a stop before the hand's end
    obs: np.ndarray          # float32 [M, 1, OBS_DIM] a seat's observation
    h: np.ndarray            # float32 [M, 2, W] hidden layers


def value_arrays(hidden, weight, bias, activation: str = "tanh") -> NetArrays:
    """The NetArrays of a value net: hidden [(weight [in, out], bias [out])] (NumpyPolicy's
    hidden_layers), weight [1, W] and bias [1], the head in points. ValueError (one line)
    unless it reads OBS_DIM values through equal hidden layers of one width."""
    widths = [np.shape(w) for w, _ in hidden]
    if (not hidden or activation not in ACTIVATIONS or widths[0][0] != OBS_DIM
            or any(s != (widths[0][1],) * 2 for s in widths[1:])
            or np.shape(weight) != (1, widths[0][1]) or np.shape(bias) != (1,)):
        raise ValueError(f"a leaf value net must read {OBS_DIM} values through equal hidden "
                         "layers of one width (tanh or relu) into one output")
    f32 = np.float32
    W, L = widths[0][1], len(hidden) - 1
    return NetArrays(np.asarray(hidden[0][0], f32)[None], np.asarray(hidden[0][1], f32)[None],
                     np.asarray([np.transpose(w) for w, _ in hidden[1:]], f32).reshape(
                         1, L, W, W),
                     np.asarray([b for _, b in hidden[1:]], f32).reshape(1, L, W),
                     np.asarray(weight, f32).reshape(1, 1, W),
                     np.asarray(bias, f32).reshape(1, 1), np.zeros(1, np.int64),
                     ACTIVATIONS[activation], np.float32(0))


def allocate_leaf(net: NetArrays, n_slots: int) -> Leaf:
    """A Leaf of `net` with work rows for n_slots rollout slots."""
    return Leaf(*net, 1, np.zeros((n_slots, 1, OBS_DIM), np.float32),
                np.zeros((n_slots, 2, net.b0.shape[1]), np.float32))


_NO_LEAF = []


def no_leaf() -> Leaf:
    """The stand-in of rollouts without a leaf (the kernels take the same types)."""
    if not _NO_LEAF:
        from .net_policy import empty_net
        e = empty_net()
        net = e._replace(wa=np.zeros((1, 1, 1), np.float32), ba=np.zeros((1, 1), np.float32))
        _NO_LEAF.append(Leaf(*net, 0, np.zeros((1, 1, OBS_DIM), np.float32),
                             np.zeros((1, 2, 1), np.float32)))
    return _NO_LEAF[0]


@njit(cache=True, error_model="numpy", fastmath=FAST)
def row_value(row, net, h, g):
    """The value net's output (points) on one observation row; h, g: work rows."""
    src = hidden_forward(row, 0, net, h, g)
    wr = net.wa[0, 0]
    v = net.ba[0, 0]
    for j in range(src.shape[0]):
        v += src[j] * wr[j]
    return v


@njit(cache=True, error_model="numpy")
def leaf_value(st, prm, scr, e, me, leaf):
    """D_me of slot e (module docstring): team me's predicted relative points to come, from
    every seat's observation of the slot's position (scr.avail must describe it: it does
    after every tick). A team's V_t is the mean over its prm.team_size[t] seats."""
    S, T = prm.n_seats, prm.n_teams
    net = NetArrays(leaf.w0, leaf.b0, leaf.wh, leaf.bh, leaf.wa, leaf.ba, leaf.bits, leaf.act,
                    leaf.tie)
    d = 0.0
    for s in range(S):
        write_seat_observation(st, prm, scr, e, s, leaf.obs, 0)
        v = row_value(leaf.obs[e, 0], net, leaf.h[e, 0], leaf.h[e, 1])
        t = prm.seat_team[s]
        n = prm.team_size[t]                  # the seats of team t (make_params)
        if t == me:
            d += v / n
        elif T > 1:
            d -= v / (n * (T - 1))
    return d * (T - 1) / T if T > 1 else d


@njit(cache=True, error_model="numpy")
def _rows_values(obs, net, out):
    h = np.zeros((2, net.b0.shape[1]), np.float32)
    for r in range(obs.shape[0]):
        out[r] = row_value(obs[r], net, h[0], h[1])


def rows_values(net: NetArrays, observations) -> np.ndarray:
    """float32 [n]: the kernel's value on observation rows (tests compare it with numpy)."""
    obs = np.ascontiguousarray(observations, np.float32)
    out = np.empty(len(obs), np.float32)
    _rows_values(obs, net, out)
    return out
