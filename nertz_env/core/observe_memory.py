"""The v1 observation: v0's vector (core/observe.py, OBS_DIM floats) with what the seat
remembers appended, written from the table's public memory (core/memory.py) only.

Whose knowledge. The memory is public (core/memory.py: every seat watches the same events), so
the block is a function of the seat's team, the public counts and the memory: never of a
face-down card. tests/core/test_observe_memory.py proves it: permuting the cards no seat has
seen gives byte-identical v1 observations for every seat at every tick (a writer that reads
the true cards fails it).

Positions. A team's Stream is the list s0, s1, ... (stock and waste together, R15): with k
cards on the waste (waste_n) the waste top is s(k-1), the stock s(k)..s(n-1). A "showing
flip" is a flip that turns a card up (a turn-over turns none: the waste is then empty); the
next showing flips from (k, n) turn up s(min(k+3, n) - 1), ... (D8), wrapping through a
turn-over. A card is remembered where the memory holds its id at that position.

The block (MEM_F floats, every value in [0, 1]; a card in CARD_F floats as observe.put_card
writes it, all zeros when not remembered or no such position; opponent k is team (t + k) % T,
as in v0). Offsets relative to the block (MB_*), and absolute in the v1 vector (V1_* =
OBS_DIM + MB_*); this table is the one place that says them:

    | MB_ offset      | V1 offset | size | the seat's own team t                              |
    |-----------------|-----------|------|----------------------------------------------------|
    | MB_STOCK     0  | 791       | 52   | 1: card id c remembered in its stock (s(k)..)      |
    | MB_WASTE     52 | 843       | 52   | 1: card id c remembered under its waste top        |
    |                 |           |      |   (s0..s(k-2))                                     |
    | MB_UNDER_WASTE  | 895       | 6    | the card under its waste top, s(k-2) (the next     |
    |              104|           |      |   available one when the top is played)            |
    | MB_NEXT     110 | 901       | 18   | the cards its next NEXT_FLIPS = 3 showing flips    |
    |                 |           |      |   turn up, in order                                |
    | MB_UNDER_NERTZ  | 919       | 6    | the card under its Nertz top (known after R28      |
    |              128|           |      |   burns)                                           |
    | MB_KNOWN    134 | 925       | 3    | remembered stock positions / 52, remembered        |
    |                 |           |      |   positions under the waste top / 52, remembered   |
    |                 |           |      |   Nertz depths below the top / 13                  |
    | MB_OPP      137 | 928       | 91   | opponents k = 1..7, OPP_MEM_F = 13 each (zeros     |
    |                 |           |      |   when absent): the card under its waste top (6),  |
    |                 |           |      |   the card its next showing flip turns up (6),     |
    |                 |           |      |   remembered hidden Stream positions / 52 (1)      |
    MEM_F = 228, V1_OBS_DIM = OBS_DIM + MEM_F = 1019

Writers (numba, cache=True; the memory must be up to date: update_memory_range after every
tick, init at every deal, as the envs and the arena keep it):
- write_memory_block(mem, stream_n, waste_n, nertz_n, seat_team, e, s, row, o): the block of
  seat s at table e into row[o:o + MEM_F] (row zeroed there first);
- memory_block_rows(st, mem, seat_team, rows_t, rows_s, out): out[k] = the block of seat
  rows_s[k] at table rows_t[k] (out float32 [n, MEM_F] or the tail of [n, V1_OBS_DIM] rows);
- memory_block_seat_range / memory_block_all_range: one seat of tables lo..hi, every seat.

Published for other modules (e.g. networks that read v1):
- observe_v1_rows(state, config, memory, rows_t, rows_s, v0=None, scratch=None) -> float32
  [n, V1_OBS_DIM]: the v1 observations of (table, seat) rows: v0's vector as the prefix (given
  as `v0` [n, OBS_DIM], e.g. a SeatView's observations, or written here from `scratch`, the
  engine's Scratch, whose avail describes the position: it does after every deal and tick),
  then the memory block;
- read_memory(obs) -> MemoryView: the block of a v1 row or batch read back by name.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit, prange

from ..encoding import DECK, MAX_TEAMS, NO_CARD
from .batch import redeal_next_hand, vec_tick_table
from .chunks import chunk_bounds, n_chunks
from .codec import N_ACTIONS
from .memory import MEM_NERTZ, MEM_STREAM, MEM_W, update_memory_table
from .observe import CARD_F, OBS_DIM, put_card, write_seat_observation

NEXT_FLIPS = 3                   # showing flips ahead in MB_NEXT
MAX_OPP = MAX_TEAMS - 1          # 7, as in v0
MB_STOCK = 0
MB_WASTE = MB_STOCK + DECK                        # 52
MB_UNDER_WASTE = MB_WASTE + DECK                  # 104
MB_NEXT = MB_UNDER_WASTE + CARD_F                 # 110
MB_UNDER_NERTZ = MB_NEXT + NEXT_FLIPS * CARD_F    # 128
MB_KNOWN = MB_UNDER_NERTZ + CARD_F                # 134: stock, under waste, under Nertz
MB_OPP = MB_KNOWN + 3                             # 137
# one opponent's part, relative to its start
OPP_UNDER_WASTE = 0
OPP_NEXT = OPP_UNDER_WASTE + CARD_F               # 6
OPP_KNOWN = OPP_NEXT + CARD_F                     # 12
OPP_MEM_F = OPP_KNOWN + 1                         # 13
MEM_F = MB_OPP + MAX_OPP * OPP_MEM_F              # 228
V1_OBS_DIM = OBS_DIM + MEM_F                      # 1019
# absolute offsets in a v1 vector
V1_MEMORY = OBS_DIM
V1_STOCK = OBS_DIM + MB_STOCK
V1_WASTE = OBS_DIM + MB_WASTE
V1_UNDER_WASTE = OBS_DIM + MB_UNDER_WASTE
V1_NEXT = OBS_DIM + MB_NEXT
V1_UNDER_NERTZ = OBS_DIM + MB_UNDER_NERTZ
V1_KNOWN = OBS_DIM + MB_KNOWN
V1_OPP = OBS_DIM + MB_OPP


@njit(cache=True, inline="always", error_model="numpy")
def next_shown(k, n):
    """(waste_n after the next showing flip from (k, n), the position it turns up): a flip
    turns up to three cards (R15, D8), a turn-over (k == n) shows none and is skipped.
    n == 0: (0, -1), nothing to flip."""
    if n <= 0:
        return 0, -1
    if k >= n:                   # a turn-over first: the waste goes back, nothing shows
        k = 0
    k = min(k + 3, n)
    return k, k - 1


@njit(cache=True, inline="always", error_model="numpy")
def remembered(mem, e, t, d):
    """The card id the memory holds at Stream position d of team t (NO_CARD: not known)."""
    c = mem[e, t, MEM_STREAM + d]
    return c if c >= 0 else NO_CARD


@njit(cache=True, error_model="numpy", _nrt=False)
def write_memory_block(mem, stream_n, waste_n, nertz_n, seat_team, e, s, row, o):
    """row[o:o + MEM_F] = what seat s of table e remembers (module docstring), from the
    memory and the public counts only."""
    for j in range(MEM_F):
        row[o + j] = 0.0
    T = mem.shape[1]
    t = seat_team[s]
    n = stream_n[e, t]
    k = waste_n[e, t]
    q = nertz_n[e, t]
    n_stock = 0
    n_waste = 0
    for d in range(n):
        c = mem[e, t, MEM_STREAM + d]
        if c < 0:
            continue
        if d >= k:
            row[o + MB_STOCK + c] = 1.0
            n_stock += 1
        elif d < k - 1:
            row[o + MB_WASTE + c] = 1.0
            n_waste += 1
    if k >= 2:
        put_card(row, o + MB_UNDER_WASTE, remembered(mem, e, t, k - 2))
    kk = k
    for f in range(NEXT_FLIPS):
        kk, d = next_shown(kk, n)
        if d < 0:
            break
        put_card(row, o + MB_NEXT + f * CARD_F, remembered(mem, e, t, d))
    n_nertz = 0
    for d in range(q - 1):
        if mem[e, t, MEM_NERTZ + d] >= 0:
            n_nertz += 1
    if q >= 2 and mem[e, t, MEM_NERTZ + q - 2] >= 0:
        put_card(row, o + MB_UNDER_NERTZ, mem[e, t, MEM_NERTZ + q - 2])
    row[o + MB_KNOWN] = n_stock / 52.0
    row[o + MB_KNOWN + 1] = n_waste / 52.0
    row[o + MB_KNOWN + 2] = n_nertz / 13.0
    for kopp in range(1, T):
        u = (t + kopp) % T
        p = o + MB_OPP + (kopp - 1) * OPP_MEM_F
        nu = stream_n[e, u]
        ku = waste_n[e, u]
        if ku >= 2:
            put_card(row, p + OPP_UNDER_WASTE, remembered(mem, e, u, ku - 2))
        _, d = next_shown(ku, nu)
        if d >= 0:
            put_card(row, p + OPP_NEXT, remembered(mem, e, u, d))
        hidden = 0
        for d in range(nu):
            if d != ku - 1 and mem[e, u, MEM_STREAM + d] >= 0:
                hidden += 1
        row[p + OPP_KNOWN] = hidden / 52.0


@njit(cache=True, error_model="numpy", _nrt=False)
def memory_block_rows(st, mem, seat_team, rows_t, rows_s, out):
    """out[k, o:o + MEM_F] = the block of seat rows_s[k] at table rows_t[k], o = the last
    MEM_F columns of out (a block-only [n, MEM_F] array, or v1 rows [n, V1_OBS_DIM])."""
    o = out.shape[1] - MEM_F
    for k in range(rows_t.shape[0]):
        write_memory_block(mem, st.stream_n, st.waste_n, st.nertz_n, seat_team, rows_t[k],
                           rows_s[k], out[k], o)


@njit(cache=True, error_model="numpy", _nrt=False)
def memory_block_seat_range(st, mem, seat_team, seat, out, lo, hi):
    """out[e, o:] = seat `seat`'s block at tables lo..hi (out [B, width], o = width - MEM_F)."""
    o = out.shape[1] - MEM_F
    for e in range(lo, hi):
        write_memory_block(mem, st.stream_n, st.waste_n, st.nertz_n, seat_team, e, seat,
                           out[e], o)


@njit(cache=True, error_model="numpy", _nrt=False)
def memory_block_all_range(st, mem, seat_team, out, lo, hi):
    """out[e, s, o:] = every seat's block at tables lo..hi (out [B, S, width])."""
    o = out.shape[2] - MEM_F
    for e in range(lo, hi):
        for s in range(out.shape[1]):
            write_memory_block(mem, st.stream_n, st.waste_n, st.nertz_n, seat_team, e, s,
                               out[e, s], o)


def _rows(rows_t, rows_s):
    rt = np.ascontiguousarray(rows_t, np.int64).reshape(-1)
    rs = np.ascontiguousarray(rows_s, np.int64).reshape(-1)
    if rt.shape != rs.shape:
        raise ValueError(f"rows_t and rows_s must have one entry per row, got {rt.size} and "
                         f"{rs.size}")
    return rt, rs


def check_memory(memory, state) -> np.ndarray:
    """memory as the int32 [B, T, MEM_W] array of core/memory.py for `state`, else a one-line
    ValueError."""
    B, T = state.stream_n.shape
    if not (isinstance(memory, np.ndarray) and memory.dtype == np.int32
            and memory.shape == (B, T, MEM_W)):
        what = (f"{memory.dtype} {memory.shape}" if isinstance(memory, np.ndarray)
                else type(memory).__name__)
        raise ValueError(f"memory must be the int32 array [{B}, {T}, {MEM_W}] of these tables "
                         f"(core/memory.py allocate_memory), got {what}")
    return memory


def observe_v1_rows(state, config, memory, rows_t, rows_s, v0=None, scratch=None
                    ) -> np.ndarray:
    """float32 [n, V1_OBS_DIM]: the v1 observation of seat rows_s[k] at table rows_t[k] of
    `state` (a NertzState of B tables of `config`, a RulesConfig), with `memory` the tables'
    up-to-date public memory (core/memory.py). The v0 prefix is `v0` (float32 [n, OBS_DIM],
    e.g. agents/base.py SeatView.observations) or, without it, written here from `scratch`
    (the engine's Scratch: core/observe.py write_seat_observation reads its avail)."""
    from .state import make_params
    rt, rs = _rows(rows_t, rows_s)
    memory = check_memory(memory, state)
    B, S = state.tick.shape[0], config.num_seats
    if rt.size and (rt.min() < 0 or rt.max() >= B or rs.min() < 0 or rs.max() >= S):
        raise ValueError(f"rows: tables are 0..{B - 1} and seats 0..{S - 1}")
    out = np.empty((rt.size, V1_OBS_DIM), np.float32)
    if v0 is not None:
        v0 = np.asarray(v0)
        if v0.shape != (rt.size, OBS_DIM):
            raise ValueError(f"v0 must be float32 [{rt.size}, {OBS_DIM}] (the rows' v0 "
                             f"observations), got shape {v0.shape}")
        out[:, :OBS_DIM] = v0
    elif scratch is None:
        raise ValueError("observe_v1_rows needs the rows' v0 observations (v0=) or the "
                         "engine's scratch (scratch=) to write them")
    else:
        from .batch import tick_inputs_tuples
        from .policies import new_policy_arrays
        prm = make_params(config)
        kinds, knobs = new_policy_arrays(B, S)
        masks = np.zeros((B, S, N_ACTIONS), np.int8)
        seat_obs = np.zeros((B, 1, OBS_DIM), np.float32)
        row_masks = np.empty((rt.size, N_ACTIONS), np.int8)
        v0_out = np.empty((rt.size, OBS_DIM), np.float32)
        tick_inputs_tuples(tuple(state), tuple(prm), tuple(scratch), masks, kinds, knobs,
                           np.zeros(B, np.uint64), np.zeros((B, S), np.int16),
                           np.zeros(0, np.int64), seat_obs, rt, rs, v0_out, row_masks)
        out[:, :OBS_DIM] = v0_out
    memory_block_rows(state, memory, np.asarray(config.seat_team, np.int64), rt, rs, out)
    return out


# ---------------------------------------------------------------------------- read side
class MemoryView(NamedTuple):
    """The block of a v1 row ([V1_OBS_DIM]) or batch ([..., V1_OBS_DIM]) by name (read_memory).
    Cards are ids 0..51, NO_CARD (-1) where not remembered."""
    in_stock: np.ndarray         # bool [..., 52]: remembered in the own stock
    in_waste: np.ndarray         # bool [..., 52]: remembered under the own waste top
    under_waste: np.ndarray      # int64 [...]: the card under the own waste top
    next_flips: np.ndarray       # int64 [..., NEXT_FLIPS]: the next showing flips' cards
    under_nertz: np.ndarray      # int64 [...]: the card under the own Nertz top
    known_stock: np.ndarray      # int64 [...]: remembered stock positions
    known_waste: np.ndarray      # int64 [...]: remembered positions under the waste top
    known_nertz: np.ndarray      # int64 [...]: remembered Nertz depths below the top
    opp_under_waste: np.ndarray  # int64 [..., 7]: per opponent k = 1..7
    opp_next_flip: np.ndarray    # int64 [..., 7]
    opp_known: np.ndarray        # int64 [..., 7]: remembered hidden Stream positions


def cards_at(o: np.ndarray, off: int) -> np.ndarray:
    """The card ids put_card wrote at o[..., off:off + CARD_F] (NO_CARD where empty), numpy."""
    present = o[..., off] > 0.5
    rank = np.rint(o[..., off + 1] * 13.0).astype(np.int64) - 1
    suit = np.argmax(o[..., off + 2:off + 6], axis=-1).astype(np.int64)
    return np.where(present, suit * 13 + rank, NO_CARD).astype(np.int64)


def read_memory(obs) -> MemoryView:
    """The memory block of v1 observations (the last axis V1_OBS_DIM) as named fields."""
    o = np.asarray(obs)
    if o.ndim < 1 or o.shape[-1] != V1_OBS_DIM:
        raise ValueError(f"read_memory: v1 observations [..., {V1_OBS_DIM}], got shape "
                         f"{o.shape}")
    count = lambda j, scale: np.rint(o[..., j] * scale).astype(np.int64)  # noqa: E731
    opp = [V1_OPP + i * OPP_MEM_F for i in range(MAX_OPP)]
    return MemoryView(
        in_stock=o[..., V1_STOCK:V1_STOCK + DECK] > 0.5,
        in_waste=o[..., V1_WASTE:V1_WASTE + DECK] > 0.5,
        under_waste=cards_at(o, V1_UNDER_WASTE),
        next_flips=np.stack([cards_at(o, V1_NEXT + f * CARD_F) for f in range(NEXT_FLIPS)],
                            axis=-1),
        under_nertz=cards_at(o, V1_UNDER_NERTZ),
        known_stock=count(V1_KNOWN, 52), known_waste=count(V1_KNOWN + 1, 52),
        known_nertz=count(V1_KNOWN + 2, 13),
        opp_under_waste=np.stack([cards_at(o, p + OPP_UNDER_WASTE) for p in opp], axis=-1),
        opp_next_flip=np.stack([cards_at(o, p + OPP_NEXT) for p in opp], axis=-1),
        opp_known=np.stack([count(p + OPP_KNOWN, 52) for p in opp], axis=-1))


# ---------------------------------------------------------------------------- vector envs
# The learner batch's step with the memory kept and v1 observations (envs/learner_batch.py
# when observation="v1" or a seat-view opponent sits there): core/batch.py vec_step_range's
# tick, rewards and re-deal (its vec_tick_table and redeal_next_hand, one source), with the
# memory updated after the tick (so a finished hand's final_obs carries its block) and
# remembered afresh after a re-deal. tests/envs/test_nertz_v1_envs.py holds its v0 prefix,
# rewards and ends equal to vec_step_observe's.


@njit(cache=True, error_model="numpy", _nrt=False)
def vec_step_memory_range(st, prm, scr, masks, actions, priority, applied, learner_actions,
                          learner_seat, kinds, knobs, policy_rng, reward_kind, prev_scores,
                          cur_scores, rewards, terminated, truncated, final_scores, final_obs,
                          obs, mem, v1, lo, hi):
    """vec_step_observe_range (core/batch.py) with mem kept up to date; v1: obs and final_obs
    rows are V1_OBS_DIM wide and get the learner's memory block, else v0 rows."""
    for e in range(lo, hi):
        over = vec_tick_table(st, prm, scr, masks, actions, priority, applied,
                              learner_actions, learner_seat, kinds, knobs, policy_rng,
                              reward_kind, prev_scores, cur_scores, rewards, terminated,
                              truncated, final_scores, e)
        update_memory_table(st, mem, e)
        if over:
            write_seat_observation(st, prm, scr, e, learner_seat, final_obs, 0)
            if v1:
                write_memory_block(mem, st.stream_n, st.waste_n, st.nertz_n, prm.seat_team,
                                   e, learner_seat, final_obs[e, 0], OBS_DIM)
            redeal_next_hand(st, prm, scr, masks, e)
            update_memory_table(st, mem, e)          # a new deal: remembered afresh
        write_seat_observation(st, prm, scr, e, learner_seat, obs, 0)
        if v1:
            write_memory_block(mem, st.stream_n, st.waste_n, st.nertz_n, prm.seat_team, e,
                               learner_seat, obs[e, 0], OBS_DIM)


@njit(cache=True, parallel=True, error_model="numpy")
def vec_step_memory_batch(st, prm, scr, masks, actions, priority, applied, learner_actions,
                          learner_seat, kinds, knobs, policy_rng, reward_kind, prev_scores,
                          cur_scores, rewards, terminated, truncated, final_scores, final_obs,
                          obs, mem, v1):
    E = st.tick.shape[0]
    k = n_chunks(E)
    for c in prange(k):
        lo, hi = chunk_bounds(c, k, E)
        vec_step_memory_range(st, prm, scr, masks, actions, priority, applied, learner_actions,
                              learner_seat, kinds, knobs, policy_rng, reward_kind, prev_scores,
                              cur_scores, rewards, terminated, truncated, final_scores,
                              final_obs, obs, mem, v1, lo, hi)
