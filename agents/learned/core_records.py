"""What the learned seats' kernel (agents/learned/core_play.py) is given: which nets it plays
(`networks`), their weights stacked (`Stack`, whose arrays are `Nets`), and the named
records of its other arguments: `Seats` (who plays each seat), `Deals` (each table's keys),
`Buffers` (the engine's per-tick arrays) and `NetMemory` (each net seat's state across
launches, and the tables' public memory where a net reads it).

Nets that read the v1 observation (agents/learned/v1.py: v0's OBS_DIM floats, then the
MEM_F-float block of what the seat remembers, nertz_env/core/observe_memory.py) play here
too: a stack that holds one is V1_OBS_DIM wide, its v0 nets' first layers padded with zero
rows over the block (they compute exactly what they did: the block's entries of their rows
stay zero), and `Stack.reads_memory` says whose seats get the block. The kernel keeps the
tables' memory (nertz_env/core/memory.py) from public events, as the Python loop does
(agents/arena/seat_loop.py), and writes the block with core/observe_memory.py's writer.
Imports numpy, nertz_env's core and agents/learned (weights.py, v1.py).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from nertz_env.core.observe import OBS_DIM
from nertz_env.core.observe_memory import V1_OBS_DIM

from .core_layers import ACT_RELU, ACT_TANH
from .weights import TIE_GAP


def networks(agent, config):
    """Per seat of `config`'s table, (NumpyPolicy, constraint bits) of the net `agent` plays
    there, or None where it cannot be played in the core (a draw instead of the argmax, an
    SB3 zip, an unmasked net, a net of another input width, anything else). The agent says
    which nets by `core_networks()` once told this table (`for_table(config)`,
    agents/base.py: the caller tells it); this checks each is one the kernel plays exactly:
    a v0 net (OBS_DIM inputs) or a v1 one (its file says v1, V1_OBS_DIM inputs)."""
    from ..base import Agent
    from .v1 import reads_v1
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
        width = V1_OBS_DIM if reads_v1(policy) else OBS_DIM
        if policy.obs_size != width or policy.hidden_layers[0][0].shape[0] != width:
            return None
    return picks


class Nets(NamedTuple):
    """The networks of one batch stacked for the kernel (K nets, D inputs: OBS_DIM, or
    V1_OBS_DIM where one reads v1; L later hidden layers of width W, A actions)."""
    w0: np.ndarray       # float32 [K, D, W] first layer, input-major (v0 nets: zero rows past
    b0: np.ndarray       # float32 [K, W]                               OBS_DIM in a v1 stack)
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
    remembers: np.ndarray     # bool [n, S] its net reads v1: its row gets the memory block


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
    """Each net seat's state, kept across the kernel's launches (n tables, S seats, D the
    stack's inputs)."""
    obs: np.ndarray      # float32 [n, S, D] its last observation
    seen: np.ndarray     # float32 [n, S, D] the row its first layer describes
    pre: np.ndarray      # float64 [n, S, W] that first layer before its activation
    forced: np.ndarray   # int16 [n, S] a move Python chose (-1: none; ASK: Python is asked)
    cursor: np.ndarray   # int64 [n] FRESH, DONE or the hand a paused table is in
    tables: np.ndarray   # int32 [n, T, MEM_W] the tables' public memory (core/memory.py);
    #                      [0, T, MEM_W] where no net reads it (then never touched)


class Stack:
    """The networks of one batch: `nets` (Nets) of the K distinct (policy, constraint bits)
    picks given, `policies` and `bits` their lists, `widths` their inputs, `reads_memory`
    (bool [K]) which read v1; ok: False where they differ in depth, width or activation, or
    read neither OBS_DIM nor V1_OBS_DIM inputs (the Python loop plays them)."""

    def __init__(self, picks):
        self.policies, self.bits = [], []
        for p, b in picks:
            if not any(p is q and b == c for q, c in zip(self.policies, self.bits)):
                self.policies.append(p)
                self.bits.append(int(b))
        first = self.policies[0]
        shapes = {tuple(w.shape[1] for w, _ in p.hidden_layers) for p in self.policies}
        acts = {p.activation for p in self.policies}
        self.widths = [p.hidden_layers[0][0].shape[0] for p in self.policies]
        self.reads_memory = np.array([w == V1_OBS_DIM for w in self.widths], np.bool_)
        self.ok = len(shapes) == 1 and len(acts) == 1 and (
            len(set(next(iter(shapes)))) == 1) and set(self.widths) <= {OBS_DIM, V1_OBS_DIM}
        if not self.ok:
            return
        L = len(first.hidden_layers) - 1
        W = first.hidden_layers[0][0].shape[1]
        K = len(self.policies)
        w0 = np.zeros((K, max(self.widths), W), np.float32)
        wh = np.zeros((K, L, W, W), np.float32)
        bh = np.zeros((K, L, W), np.float32)
        for k, p in enumerate(self.policies):
            w0[k, :self.widths[k]] = p.hidden_layers[0][0]
            for l, (w, b) in enumerate(p.hidden_layers[1:]):
                wh[k, l], bh[k, l] = w, b
        self.nets = Nets(
            w0, np.stack([p.hidden_layers[0][1] for p in self.policies]).astype(np.float32),
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
