"""write_observations: what one seat may see by the rules, as a flat float32 vector.

Fixed size for every table (2-8 teams, River 4 or 5), so one policy network serves every table
format; missing teams and columns are zeros. Values lie in [-1, 1]. Face-down cards never
appear: below the Nertz top and in the stock only counts are given.

A card is encoded in CARD_F = 6 floats: present (1/0), (rank + 1) / 13, then one-hot suit
S H D C. Teams are seen from the seat's own team: opponent k is team (t + k) % num_teams.

    | offset | size | segment                                                                 |
    |--------|------|-------------------------------------------------------------------------|
    | 0      | 7    | own Nertz top card (6), Nertz cards left / 13                           |
    | 7      | 8    | own waste top card (6), stock cards / 52, waste cards / 52              |
    | 15     | 390  | own River: 5 columns x 13 depths x card (bottom first; zeros = empty)   |
    | 405    | 52   | Lake: piles waiting for each card id / num_teams (for an ace: aces of   |
    |        |      |   that suit not yet started / num_teams)                                |
    | 457    | 4    | Lake: cards per suit / (13 * num_teams)                                 |
    | 461    | 322  | opponents k = 1..7: available cards of the 7 sources (42), Nertz / 13,  |
    |        |      |   stream / 52, waste / 52, present flag (46 each; zeros when absent)    |
    | 783    | 8    | self: ready, ticks until ready / 10 (max 1), tick / max_ticks, holds    |
    |        |      |   the Stream, holds the Nertz pile, two-player team, hand is odd,       |
    |        |      |   num_teams / 8 (one name each: SELF_READY .. SELF_TEAMS)               |
    OBS_DIM = 791

The read side lives here too, beside the writer, so no other module spells an offset:
`read_self(obs)` gives the self block as named fields (numpy, one row or a batch), numba
kernels index a row with the SELF_* names, and `read_card` / `read_river` / `read_top`
decode the own card slots (jitted: agents/constraints.py and agents/judging/probe.py use them).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit, prange

from ..encoding import MAX_TEAMS
from ..encoding import MAX_RIVER, NO_CARD, SRC_NERTZ, SRC_RIVER0, SRC_WASTE
from .chunks import chunk_bounds, n_chunks
from .rules import stream_seat, suit

CARD_F = 6
OFF_NERTZ = 0
OFF_WASTE = 7
OFF_RIVER = 15
OFF_LAKE_NEXT = OFF_RIVER + MAX_RIVER * 13 * CARD_F          # 405
OFF_LAKE_SUIT = OFF_LAKE_NEXT + 52                           # 457
OFF_OPP = OFF_LAKE_SUIT + 4                                  # 461
OPP_F = 7 * CARD_F + 4                                       # 46
MAX_OPP = 7
OFF_SELF = OFF_OPP + MAX_OPP * OPP_F                         # 783
# The self block, one entry each (write_self writes them, read_self reads them):
SELF_READY = OFF_SELF            # 1: the seat may move this tick (its speed's wait is over)
SELF_WAIT = OFF_SELF + 1         # ticks until the seat is ready / 10, at most 1
SELF_TICK = OFF_SELF + 2         # tick / max_ticks, at most 1
SELF_HOLDS_STREAM = OFF_SELF + 3  # 1: the seat holds its team's Stream this hand (R4; solo: 1)
SELF_HOLDS_NERTZ = OFF_SELF + 4  # 1: the seat holds its team's Nertz pile this hand (solo: 1)
SELF_TWO_PLAYER = OFF_SELF + 5   # 1: the seat's team has two players (R4)
SELF_ODD_HAND = OFF_SELF + 6     # 1: the hand number is odd (R4 swaps a pair's roles by hand)
SELF_TEAMS = OFF_SELF + 7        # num_teams / 8
SELF_F = 8
OBS_DIM = OFF_SELF + SELF_F                                  # 791


# Lookup tables for the per-element arithmetic of the writer (the Lake segment's divisions
# and Python-style modulos dominated a seat's observation cost). Each holds the
# float64 the formula gives, so the stored float32 is bit-identical to computing it.
_RANK_F = np.array([(c % 13 + 1) / 13.0 for c in range(52)], dtype=np.float32)
# _PER_TEAM[T, k] = k / T (piles waiting for a card, over the team count)
_PER_TEAM = np.array([[k / T if T else 0.0 for k in range(MAX_TEAMS + 1)]
                      for T in range(MAX_TEAMS + 1)], dtype=np.float64)
# _SUIT_SHARE[T, n] = n / (13 T) (a Lake pile's cards, over the most a suit can hold)
_SUIT_SHARE = np.array([[n / (13.0 * T) if T else 0.0 for n in range(14)]
                        for T in range(MAX_TEAMS + 1)], dtype=np.float64)
# Lake card (deck * 52 + card id) -> card id, and -> suit
_LAKE_CARD = np.array([v % 52 for v in range(52 * MAX_TEAMS)], dtype=np.int64)
_LAKE_SUIT = np.array([(v % 52) // 13 for v in range(52 * MAX_TEAMS)], dtype=np.int64)


@njit(cache=True, inline="always", error_model="numpy")
def put_card(row, o, card):
    """row[o:o + CARD_F] = card (row: one seat's observation vector; zeros for NO_CARD)."""
    if card == NO_CARD:
        return
    row[o] = 1.0
    row[o + 1] = _RANK_F[card]
    row[o + 2 + suit(card)] = 1.0


@njit(cache=True, inline="always", error_model="numpy")
def read_card(row, o):
    """The card id put_card wrote at row[o:o + CARD_F] (NO_CARD when the slot is empty)."""
    if row[o] < 0.5:
        return NO_CARD
    r = int(round(row[o + 1] * 13.0)) - 1
    for s in range(4):
        if row[o + 2 + s] > 0.5:
            return s * 13 + r
    return NO_CARD


@njit(cache=True, inline="always", error_model="numpy")
def read_river(row, c, d):
    """The card at depth d (0 = bottom) of the seat's own River column c (NO_CARD: none)."""
    return read_card(row, OFF_RIVER + (c * 13 + d) * CARD_F)


@njit(cache=True, inline="always", error_model="numpy")
def read_top(row, src):
    """The seat's own available card of a source (encoding.SRC_*): the Nertz top, the waste
    top or a River column's top (NO_CARD: none)."""
    if src == SRC_NERTZ:
        return read_card(row, OFF_NERTZ)
    if src == SRC_WASTE:
        return read_card(row, OFF_WASTE)
    c = src - SRC_RIVER0
    top = NO_CARD
    for d in range(13):
        card = read_river(row, c, d)
        if card == NO_CARD:
            break
        top = card
    return top


@njit(cache=True, inline="always", error_model="numpy")
def write_own(row, avail, nertz_n, stream_n, waste_n, river, river_n, t, R):
    """The seat's own team: Nertz top and count, waste top, stock/waste counts, the River in
    full (row[:OFF_LAKE_NEXT], zeroed by the caller)."""
    put_card(row, OFF_NERTZ, avail[t, 0])
    row[OFF_NERTZ + CARD_F] = nertz_n[t] / 13.0
    put_card(row, OFF_WASTE, avail[t, 1])
    row[OFF_WASTE + CARD_F] = (stream_n[t] - waste_n[t]) / 52.0
    row[OFF_WASTE + CARD_F + 1] = waste_n[t] / 52.0
    for c in range(R):
        o = OFF_RIVER + c * 13 * CARD_F
        for d in range(river_n[t, c]):
            put_card(row, o + d * CARD_F, river[t, c, d])


@njit(cache=True, inline="always", error_model="numpy")
def write_opponent(row, o, avail, nertz_n, stream_n, waste_n, u, R):
    """Team u as an opponent sees it, at row[o:o + OPP_F] (zeroed by the caller)."""
    for src in range(SRC_RIVER0 + R):
        put_card(row, o + src * CARD_F, avail[u, src])
    row[o + 7 * CARD_F] = nertz_n[u] / 13.0
    row[o + 7 * CARD_F + 1] = stream_n[u] / 52.0
    row[o + 7 * CARD_F + 2] = waste_n[u] / 52.0
    row[o + 7 * CARD_F + 3] = 1.0


@njit(cache=True, inline="always", error_model="numpy")
def write_self(row, st, prm, e, s, t):
    """row[OFF_SELF:]: readiness, tick, roles, table size (every entry assigned)."""
    T = prm.n_teams
    wait = st.ready[e, s] - st.tick[e]
    row[SELF_READY] = 1.0 if wait <= 0 else 0.0
    row[SELF_WAIT] = min(max(wait, 0), 10) / 10.0
    row[SELF_TICK] = min(st.tick[e] / prm.max_ticks, 1.0)
    holds_stream = s == stream_seat(prm.team_seat0, prm.team_size, prm.alternate_roles,
                                    st.hand[e], t)
    row[SELF_HOLDS_STREAM] = 1.0 if holds_stream else 0.0
    row[SELF_HOLDS_NERTZ] = 1.0 if (prm.team_size[t] == 1 or not holds_stream) else 0.0
    row[SELF_TWO_PLAYER] = 1.0 if prm.team_size[t] == 2 else 0.0
    row[SELF_ODD_HAND] = 1.0 if st.hand[e] % 2 == 1 else 0.0
    row[SELF_TEAMS] = T / 8.0


class SelfView(NamedTuple):
    """The self block read back by name (read_self): each field shaped like obs[..., 0]
    (a numpy scalar for one row, an array [n] for a batch)."""
    ready: np.ndarray              # bool: the seat may move this tick
    wait: np.ndarray               # float32: ticks until ready / 10, at most 1
    tick: np.ndarray               # float32: tick / max_ticks, at most 1
    holds_stream: np.ndarray       # bool: holds its team's Stream this hand (R4; solo: True)
    holds_nertz: np.ndarray        # bool: holds its team's Nertz pile this hand (solo: True)
    two_player: np.ndarray         # bool: its team has two players (R4)
    odd_hand: np.ndarray           # bool: the hand number is odd
    teams: np.ndarray              # int64: num_teams at the table

    @property
    def team_size(self) -> np.ndarray:
        """int64: players in the seat's team (2 or 1)."""
        return np.where(self.two_player, 2, 1).astype(np.int64)


def read_self(obs) -> SelfView:
    """The self block of one observation row (OBS_DIM floats) or of a batch ([..., OBS_DIM])
    as named fields (SelfView), read back the way write_self wrote it."""
    o = np.asarray(obs)
    if o.ndim < 1 or o.shape[-1] != OBS_DIM:
        raise ValueError(f"read_self: observations [..., {OBS_DIM}], got shape {o.shape}")
    return SelfView(ready=o[..., SELF_READY] > 0.5, wait=o[..., SELF_WAIT],
                    tick=o[..., SELF_TICK], holds_stream=o[..., SELF_HOLDS_STREAM] > 0.5,
                    holds_nertz=o[..., SELF_HOLDS_NERTZ] > 0.5,
                    two_player=o[..., SELF_TWO_PLAYER] > 0.5,
                    odd_hand=o[..., SELF_ODD_HAND] > 0.5,
                    teams=np.rint(o[..., SELF_TEAMS] * 8).astype(np.int64))


@njit(cache=True, error_model="numpy", _nrt=False)
def write_seat_observation(st, prm, scr, e, s, obs, r):
    """obs[e, r, :] = what seat s of table e sees (scr.avail must describe the position: it
    does after every deal and tick, as the masks do). Works on one-table views of the arrays
    (free without reference counting): one index per access instead of three or four,
    cheaper than indexing the batch arrays (benchmarks/README.md)."""
    T = prm.n_teams
    R = prm.river_size
    t = prm.seat_team[s]
    row = obs[e, r]
    row[:] = 0.0
    avail = scr.avail[e]
    nertz_n, stream_n, waste_n = st.nertz_n[e], st.stream_n[e], st.waste_n[e]
    write_own(row, avail, nertz_n, stream_n, waste_n, st.river[e], st.river_n[e], t, R)
    # the Lake: piles waiting per card (T aces per suit, minus the piles started), cards per suit
    lake, lake_n, lake_next = st.lake[e], st.lake_n[e], st.lake_next[e]
    per_team = _PER_TEAM[T]
    for su in range(4):
        for rk in range(1, 13):
            card = su * 13 + rk
            row[OFF_LAKE_NEXT + card] = per_team[lake_next[card]]
    share, inv = _SUIT_SHARE[T], 1.0 / T
    for p in range(st.lake_piles[e]):
        n = lake_n[p]
        row[OFF_LAKE_SUIT + _LAKE_SUIT[lake[p, n - 1]]] += share[n]
        row[OFF_LAKE_NEXT + _LAKE_CARD[lake[p, 0]]] -= inv
    for su in range(4):
        row[OFF_LAKE_NEXT + su * 13] += 1.0
    # opponents, seen from this team
    for k in range(1, T):
        write_opponent(row, OFF_OPP + (k - 1) * OPP_F, avail, nertz_n, stream_n, waste_n,
                       (t + k) % T, R)
    write_self(row, st, prm, e, s, t)


@njit(cache=True, inline="always", error_model="numpy")
def copy_part(dst, src, lo, hi, src_lo):
    """dst[lo:hi] = src[src_lo:src_lo + hi - lo], as a loop (a slice assignment may allocate)."""
    for i in range(hi - lo):
        dst[lo + i] = src[src_lo + i]


@njit(cache=True, error_model="numpy", _nrt=False)
def write_table_observations(st, prm, scr, e, obs):
    """obs[e, s, :] for every seat s: the vectors of write_seat_observation, with what seats
    share computed once. Seat 0's row is written in full; a partner of seat 0 copies it; a
    seat of another team writes its own team's part and copies the Lake and every opponent
    block that seat 0's row holds (team u's block is the same whoever looks at it), writing
    only seat 0's team's block itself. tests/core/test_observe.py checks that every row equals
    write_seat_observation's."""
    S, T, R = prm.n_seats, prm.n_teams, prm.river_size
    write_seat_observation(st, prm, scr, e, 0, obs, 0)
    row0 = obs[e, 0]
    t0 = prm.seat_team[0]
    avail = scr.avail[e]
    nertz_n, stream_n, waste_n = st.nertz_n[e], st.stream_n[e], st.waste_n[e]
    for s in range(1, S):
        t = prm.seat_team[s]
        row = obs[e, s]
        if t == t0:
            copy_part(row, row0, 0, OBS_DIM, 0)
        else:
            row[:OFF_LAKE_NEXT] = 0.0
            write_own(row, avail, nertz_n, stream_n, waste_n, st.river[e], st.river_n[e], t, R)
            copy_part(row, row0, OFF_LAKE_NEXT, OFF_OPP, OFF_LAKE_NEXT)
            for k in range(1, T):
                u = (t + k) % T
                o = OFF_OPP + (k - 1) * OPP_F
                if u == t0:
                    row[o:o + OPP_F] = 0.0
                    write_opponent(row, o, avail, nertz_n, stream_n, waste_n, u, R)
                else:
                    o0 = OFF_OPP + ((u - t0) % T - 1) * OPP_F
                    copy_part(row, row0, o, o + OPP_F, o0)
            row[OFF_OPP + (T - 1) * OPP_F:OFF_SELF] = 0.0
        write_self(row, st, prm, e, s, t)


@njit(cache=True, error_model="numpy", _nrt=False)
def observe_range(st, prm, scr, obs, lo, hi):
    for e in range(lo, hi):
        write_table_observations(st, prm, scr, e, obs)


@njit(cache=True, error_model="numpy", _nrt=False)
def observe_seat_range(st, prm, scr, obs, seat, lo, hi):
    """Only seat `seat` of every table, into obs[e, 0] (a learner's view)."""
    for e in range(lo, hi):
        write_seat_observation(st, prm, scr, e, seat, obs, 0)


@njit(cache=True, parallel=True, error_model="numpy")
def observe_seat_batch(st, prm, scr, obs, seat):
    E = st.tick.shape[0]
    k = n_chunks(E)
    for c in prange(k):
        lo, hi = chunk_bounds(c, k, E)
        observe_seat_range(st, prm, scr, obs, seat, lo, hi)


@njit(cache=True, parallel=True, error_model="numpy")
def observe_batch(st, prm, scr, obs):
    E = st.tick.shape[0]
    k = n_chunks(E)
    for c in prange(k):
        lo, hi = chunk_bounds(c, k, E)
        observe_range(st, prm, scr, obs, lo, hi)


# ---------------------------------------------------------------------------- fused ticks
# One tick, the R29 scores and every seat's observation in one call: the PettingZoo env
# (Engine.step_observe) pays one numba dispatch per step instead of three.
from .scoring import write_hand_scores  # noqa: E402
from .tick import step_table  # noqa: E402


# Engine.step_observe's summary row per table (int64): what the PettingZoo env reads after a
# tick, so that one .tolist() gives it all: status, tick, hand, applied per seat (1 = took
# effect), then the R29 hand score per team.
SUM_STATUS, SUM_TICK, SUM_HAND, SUM_APPLIED = 0, 1, 2, 3


def summary_width(n_seats: int, n_teams: int) -> int:
    return SUM_APPLIED + n_seats + n_teams


class TableSummary(NamedTuple):
    """One table's summary row as plain Python numbers (one .tolist(): a one-table env's step)."""
    status: int
    tick: int
    hand: int
    applied: list                  # per seat, 1 = took effect
    scores: list                   # R29 hand score per team


_new_tuple = tuple.__new__      # a NamedTuple without its Python-level __new__ (per step)


class StepSummary:
    """The one reader of Engine.step_observe's packed summary rows (int64 [B, width]): no
    other module spells a SUM_ column. Properties are views of the engine's buffer, rewritten
    by its next step_observe: copy what must outlive it."""
    __slots__ = ("rows", "n_seats")

    def __init__(self, rows: np.ndarray, n_seats: int):
        self.rows, self.n_seats = rows, n_seats

    @property
    def status(self) -> np.ndarray:
        """int64 [B]: encoding.PLAYING or how the hand ended."""
        return self.rows[:, SUM_STATUS]

    @property
    def tick(self) -> np.ndarray:
        return self.rows[:, SUM_TICK]

    @property
    def hand(self) -> np.ndarray:
        return self.rows[:, SUM_HAND]

    @property
    def applied(self) -> np.ndarray:
        """int64 [B, S]: 1 where the seat's move took effect this tick."""
        return self.rows[:, SUM_APPLIED:SUM_APPLIED + self.n_seats]

    @property
    def scores(self) -> np.ndarray:
        """int64 [B, T]: R29 hand scores after the tick."""
        return self.rows[:, SUM_APPLIED + self.n_seats:]

    def table(self, e: int) -> TableSummary:
        """Table e's row as Python numbers."""
        row = self.rows[e].tolist()
        a = SUM_APPLIED + self.n_seats
        return _new_tuple(TableSummary, (row[SUM_STATUS], row[SUM_TICK], row[SUM_HAND],
                                         row[SUM_APPLIED:a], row[a:]))


@njit(cache=True, error_model="numpy", _nrt=False)
def step_observe_range(st, prm, scr, actions, priority, masks, applied, summary, lo, hi, obs,
                       masks_out):
    """step_table at tables lo..hi, then the summary row summary[e] (the R29 scores written in
    place), obs[e, s] of every seat and a copy of the new masks[e] in masks_out[e]. obs and
    masks_out come last: the engine passes them per call (Engine.step_observe) after the
    arguments it binds once."""
    S = prm.n_seats
    scores = summary[:, SUM_APPLIED + S:]          # a view: write_hand_scores fills it
    for e in range(lo, hi):
        step_table(st, prm, scr, e, actions, priority, masks, applied)
        summary[e, SUM_STATUS] = st.status[e]
        summary[e, SUM_TICK] = st.tick[e]
        summary[e, SUM_HAND] = st.hand[e]
        for s in range(S):
            summary[e, SUM_APPLIED + s] = applied[e, s]
        write_hand_scores(st, prm, e, scores, e)
        write_table_observations(st, prm, scr, e, obs)
        for s in range(S):
            copy_part(masks_out[e, s], masks[e, s], 0, masks.shape[2], 0)


@njit(cache=True, parallel=True, error_model="numpy")
def step_observe_batch(st, prm, scr, actions, priority, masks, applied, summary, obs, masks_out):
    E = st.tick.shape[0]
    k = n_chunks(E)
    for c in prange(k):
        lo, hi = chunk_bounds(c, k, E)
        step_observe_range(st, prm, scr, actions, priority, masks, applied, summary, lo, hi,
                           obs, masks_out)
