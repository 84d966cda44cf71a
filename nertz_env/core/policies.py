"""Bots inside the jitted tick loop: every seat of every table chooses its move here, so a
tournament or a vector env's opponents never leave numba per tick.

A seat's bot is two numbers and a row of knobs (per table, so duplicate-deal rotations can
seat different bots at the same seat of different tables):

    kinds  int8  [E, S]      POLICY_RANDOM (uniform legal), POLICY_SCORED (greedy and every
                             heuristic style), POLICY_EXTERNAL (the action is written from
                             outside: a learner, a torch policy, a human), POLICY_NET (a
                             net's arrays, knobs[e, s, 0] its index: the rollouts only,
                             core/fork.py and core/net_policy.py; untouched here)
    knobs  int64 [E, S, 12]  the scored bots' knob vector (docs/heuristics.md, index table)

POLICY_SCORED is the one decision rule of docs/heuristics.md: score every legal action with
integers from the seat's visible cards (scr.avail: Nertz top N, waste top W; the team's River
columns), play the best, ties to the lowest id. agents/python_policies.py implements the same
page from the observation vector alone; tests compare the two move for move.

Per-seat helpers take arrays and are inline="always" (rules.py explains why).
"""
from __future__ import annotations

import numpy as np
from numba import njit

from ..encoding import MAX_RIVER, NO_CARD, SRC_NERTZ, SRC_RIVER0, SRC_WASTE
from .codec import (KIND_BUILD, KIND_CALL, KIND_FLIP, KIND_LAKE, KIND_SHIFT, KIND_WAIT,
                    N_ACTIONS, WAIT, build_id, decode)
from .rules import available_card, can_build_on, random_below, rank, suit

POLICY_RANDOM, POLICY_SCORED, POLICY_EXTERNAL = 0, 1, 2
POLICY_NET = 3    # a masked net given as arrays, played in the rollouts (core/net_policy.py)

# knob vector indices (docs/heuristics.md)
(KN_LAKE_NERTZ, KN_LAKE_STREAM, KN_LAKE_RIVER, KN_EMPTY_BONUS, KN_NERTZ_RIVER, KN_WASTE_RIVER,
 KN_WASTE_RIVER_USEFUL, KN_SHIFT_EMPTY, KN_SHIFT_EXPOSE, KN_FLIP, KN_WITHHOLD_STREAM,
 KN_WITHHOLD_RIVER) = range(12)
N_KNOBS = 12
WITHHOLD_ALWAYS, WITHHOLD_WHEN_USEFUL, WITHHOLD_NEVER, WITHHOLD_KEEP = 0, 1, 2, 3
CALL_SCORE = 10000
WITHHELD_SCORE = 1      # just above Wait: played only when nothing else scores higher
NEVER_SCORE = -1        # below Wait: never played


@njit(cache=True, error_model="numpy", inline="always")
def pick_random_legal(masks, e, s, policy_rng):
    """A uniformly random legal action of seat s at table e."""
    n = 0
    for a in range(N_ACTIONS):
        n += masks[e, s, a]
    k = random_below(policy_rng, e, n)
    for a in range(N_ACTIONS):
        if masks[e, s, a] != 0:
            if k == 0:
                return a
            k -= 1
    return 0


@njit(cache=True, error_model="numpy", inline="always")
def in_run(card, bottom, length):
    """`card` is one of the `length` same-suit cards from `bottom` upwards (a stack's cards)."""
    if card == NO_CARD:
        return False
    d = rank(card) - rank(bottom)
    return suit(card) == suit(bottom) and d >= 0 and d < length


@njit(cache=True, error_model="numpy", inline="always")
def stream_withheld(nertz_top, waste_top, withhold, waste_to_river):
    """withhold_stream: keep the Stream card off the Lake (never; when it can take N; or when
    it can take N and a waste>river move is legal now, so a kept card is never buried)."""
    if withhold == WITHHOLD_NEVER:
        return True
    if withhold == WITHHOLD_WHEN_USEFUL or withhold == WITHHOLD_KEEP:
        useful = (nertz_top != NO_CARD and waste_top != NO_CARD
                  and can_build_on(nertz_top, waste_top))
        return useful and (withhold == WITHHOLD_WHEN_USEFUL or waste_to_river)
    return False


@njit(cache=True, error_model="numpy", inline="always")
def waste_lake_score(n_top, w_top, k_lake_stream, withhold, waste_to_river):
    if k_lake_stream <= NEVER_SCORE:
        return k_lake_stream
    if stream_withheld(n_top, w_top, withhold, waste_to_river):
        return WITHHELD_SCORE
    return k_lake_stream


@njit(cache=True, error_model="numpy", inline="always")
def action_score(a, avail, river, river_n, e, t, knobs, s, waste_to_river):
    """docs/heuristics.md's score of legal action a for seat s of team t (knobs[e, s]).
    A knob <= -1 ("never") is the score itself, without bonuses or the withheld score.
    waste_to_river: some waste>riverC move is legal for the seat now (withhold_stream keep)."""
    n_top = avail[e, t, SRC_NERTZ]
    w_top = avail[e, t, SRC_WASTE]
    kd, src, dst, i, length = decode(a)
    if kd == KIND_WAIT:
        return 0
    if kd == KIND_CALL:
        return CALL_SCORE
    if kd == KIND_FLIP:
        return knobs[e, s, KN_FLIP]
    if kd == KIND_LAKE:                              # source > lake
        if src == SRC_NERTZ:
            return knobs[e, s, KN_LAKE_NERTZ]
        if src == SRC_WASTE:
            return waste_lake_score(n_top, w_top, knobs[e, s, KN_LAKE_STREAM],
                                    knobs[e, s, KN_WITHHOLD_STREAM], waste_to_river)
        k = knobs[e, s, KN_LAKE_RIVER]
        if k <= NEVER_SCORE:
            return k
        if (knobs[e, s, KN_WITHHOLD_RIVER] == 1 and n_top != NO_CARD
                and can_build_on(n_top, avail[e, t, src])):
            return WITHHELD_SCORE
        if river_n[e, t, src - SRC_RIVER0] == 1 and n_top != NO_CARD:
            k += knobs[e, s, KN_EMPTY_BONUS]
        return k
    if kd == KIND_BUILD:                             # nertz / waste > riverC
        if src == SRC_NERTZ:
            k = knobs[e, s, KN_NERTZ_RIVER]
            if k <= NEVER_SCORE:
                return k
            return k + (1 if river_n[e, t, dst] > 0 else 0)
        if n_top != NO_CARD and w_top != NO_CARD and can_build_on(n_top, w_top):
            return knobs[e, s, KN_WASTE_RIVER_USEFUL]
        return knobs[e, s, KN_WASTE_RIVER]
    if kd == KIND_SHIFT:                             # riverA:I > riverB
        col_a = src - SRC_RIVER0
        if n_top == NO_CARD:
            return NEVER_SCORE
        if i == 0:
            if river_n[e, t, dst] > 0:
                return knobs[e, s, KN_SHIFT_EMPTY]
            return NEVER_SCORE
        if can_build_on(n_top, river[e, t, col_a, i - 1]):
            return knobs[e, s, KN_SHIFT_EXPOSE]
        return NEVER_SCORE
    bottom = avail[e, t, src]                        # stack > lake
    if in_run(n_top, bottom, length):
        k = knobs[e, s, KN_LAKE_NERTZ]
        return k if k <= NEVER_SCORE else k + length
    k = knobs[e, s, KN_LAKE_RIVER]
    if k <= NEVER_SCORE:
        return k
    if in_run(w_top, bottom, length) and waste_lake_score(
            n_top, w_top, knobs[e, s, KN_LAKE_STREAM],
            knobs[e, s, KN_WITHHOLD_STREAM], waste_to_river) == WITHHELD_SCORE:
        return WITHHELD_SCORE
    return k + length


@njit(cache=True, error_model="numpy", inline="always")
def pick_scored(masks, avail, river, river_n, e, s, t, knobs):
    """The best-scoring legal action of seat s (team t), ties to the lowest id."""
    best = -(1 << 62)
    best_a = WAIT
    waste_to_river = False
    for c in range(MAX_RIVER):
        if masks[e, s, build_id(SRC_WASTE, c)] != 0:
            waste_to_river = True
    for a in range(N_ACTIONS):
        if masks[e, s, a] != 0:
            sc = action_score(a, avail, river, river_n, e, t, knobs, s, waste_to_river)
            if sc > best:
                best = sc
                best_a = a
    return best_a


@njit(cache=True, error_model="numpy", inline="always")
def write_policy_actions(masks, avail, river, river_n, seat_team, kinds, knobs, policy_rng,
                         actions, e, n_seats):
    """actions[e, s] for every seat whose bot lives in the core (external seats untouched)."""
    for s in range(n_seats):
        k = kinds[e, s]
        if k == POLICY_RANDOM:
            actions[e, s] = pick_random_legal(masks, e, s, policy_rng)
        elif k == POLICY_SCORED:
            actions[e, s] = pick_scored(masks, avail, river, river_n, e, s, seat_team[s], knobs)


@njit(cache=True, error_model="numpy", _nrt=False)
def policy_actions_range(st, prm, scr, masks, kinds, knobs, policy_rng, actions, lo, hi):
    """write_policy_actions at tables lo..hi (the Python-driven loops: agents with torch)."""
    for e in range(lo, hi):
        write_policy_actions(masks, scr.avail, st.river, st.river_n, prm.seat_team, kinds,
                             knobs, policy_rng, actions, e, prm.n_seats)


def new_policy_arrays(n_tables: int, n_seats: int):
    """kinds (all random) and zero knobs, the shapes the kernels take."""
    return (np.zeros((n_tables, n_seats), np.int8),
            np.zeros((n_tables, n_seats, N_KNOBS), np.int64))


# ---------------------------------------------------------------------------- one seat a row
@njit(cache=True, error_model="numpy", _nrt=False)
def scored_rows(nertz, nertz_n, stream, waste_n, river, river_n, teams, masks, knobs, avail,
                n_src, out):
    """out[k] = the scored bot's move for row k: team teams[k] at row k of the (gathered)
    state arrays, the seat's legal moves masks[k, 0] and knobs[k, 0]; avail an [n, T, 8]
    buffer like scr.avail (its first n_src sources written: every team's cards, R9)."""
    n_teams = avail.shape[1]
    for k in range(out.shape[0]):
        for t in range(n_teams):
            for src in range(n_src):
                avail[k, t, src] = available_card(nertz, nertz_n, stream, waste_n, river,
                                                  river_n, k, t, src)
        out[k] = pick_scored(masks, avail, river, river_n, k, 0, teams[k], knobs)


def scored_moves(st, config, rows, seats, masks, knobs) -> np.ndarray:
    """int64 [n]: the POLICY_SCORED bot's move (knob vector knobs, [N_KNOBS]) for seat seats[k]
    of table rows[k] of state st (a NertzState of RulesConfig config), whose legal moves are
    masks[k] ([n, N_ACTIONS]): the bots' rule of this module on the engine's state, the move
    agents/python_policies.py computes from the seat's observation (tests/search)."""
    rows = np.asarray(rows, np.int64)
    seats = np.asarray(seats, np.int64)
    n = rows.shape[0]
    masks = np.asarray(masks)
    if masks.shape != (n, N_ACTIONS):
        raise ValueError(f"masks must be [{n}, {N_ACTIONS}] (one legal-move mask a row), got "
                         f"{masks.shape}")
    seat_team = np.asarray(config.seat_team, np.int64)
    kn = np.broadcast_to(np.asarray(knobs, np.int64).reshape(1, 1, N_KNOBS), (n, 1, N_KNOBS))
    avail = np.full((n, config.num_teams, 8), NO_CARD, np.int8)    # scr.avail's row shape
    out = np.empty(n, np.int64)
    scored_rows(st.nertz[rows], st.nertz_n[rows], st.stream[rows], st.waste_n[rows],
                st.river[rows], st.river_n[rows], seat_team[seats],
                masks.reshape(n, 1, N_ACTIONS), kn, avail, SRC_RIVER0 + config.river_size, out)
    return out
