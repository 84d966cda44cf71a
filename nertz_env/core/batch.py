"""The parallel code: `prange` over chunks of tables (core/chunks.py; observe.py's
observation kernels split the same way). Each kernel writes into buffers it is given.

Shape of every kernel: a serial `_..._range(lo, hi)` function loops over its tables and a
tiny `parallel=True` wrapper splits the tables into chunks, one call per chunk. Keep rule
code out of the prange bodies: numba's parfor pass, run over inlined rule code
(`inline="always"`), compiled for minutes and dropped writes to the state (numba 0.61).

- step_batch: one tick at every table (Engine.step); the *_tuples kernels: the serial ones
  the Engine binds per step, called with plain tuples.
- deal_batch / deal_seeded_batch: (re)deal chosen tables.
- play_random_batch: many ticks per table with uniformly random legal moves and automatic
  re-deals, entirely inside numba (benchmarks).
- play_random_games_batch: whole random games (R30).
- play_bots_batch: hands or whole games with every seat's bot inside numba (core/policies.py;
  tournaments, duplicate deals).
- tick_inputs_tuples: one tick's inputs when agents outside numba play (the tournament's
  Python-driven loop): the core bots' moves, and the observation and mask of every seat an
  outside agent holds, gathered into rows for one batched forward pass.
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from ..encoding import OVER_TRUNCATED, PLAYING
from .chunks import chunk_bounds, n_chunks
from .deal import deal_table, shuffle_decks
from .legal import write_table_masks
from .observe import observe_range, step_observe_range, write_seat_observation
from .policies import pick_random_legal, write_policy_actions
from .scoring import decide_winner, relative_points_jit, write_hand_scores
from .state import NertzState, Params, Scratch
from .tick import step_table


# ---------------------------------------------------------------------------- one tick
@njit(cache=True, error_model="numpy", _nrt=False)
def step_range(st, prm, scr, actions, priority, masks, applied, lo, hi):
    for e in range(lo, hi):
        step_table(st, prm, scr, e, actions, priority, masks, applied)


@njit(cache=True, error_model="numpy", parallel=True)
def step_batch(st, prm, scr, actions, priority, masks, applied):
    E = st.tick.shape[0]
    k = n_chunks(E)
    for c in prange(k):
        lo, hi = chunk_bounds(c, k, E)
        step_range(st, prm, scr, actions, priority, masks, applied, lo, hi)


# ------------------------------------------------------------- the engine's per-step calls
# The serial kernels the Engine binds once and calls every step, taking the state, params and
# scratch as plain tuples (tuple(state), ...): numba's dispatcher types a plain tuple of
# arrays in C but a NamedTuple in Python, several microseconds a call on a one-table step.
@njit(cache=True, error_model="numpy", _nrt=False)
def step_range_tuples(st, prm, scr, actions, priority, masks, applied, lo, hi):
    step_range(NertzState(*st), Params(*prm), Scratch(*scr), actions, priority, masks,
               applied, lo, hi)


@njit(cache=True, error_model="numpy", _nrt=False)
def step_observe_range_tuples(st, prm, scr, actions, priority, masks, applied, summary, lo,
                              hi, obs, masks_out):
    step_observe_range(NertzState(*st), Params(*prm), Scratch(*scr), actions, priority,
                       masks, applied, summary, lo, hi, obs, masks_out)


@njit(cache=True, error_model="numpy", _nrt=False)
def observe_range_tuples(st, prm, scr, obs, lo, hi):
    observe_range(NertzState(*st), Params(*prm), Scratch(*scr), obs, lo, hi)


# ---------------------------------------------------------------------------- deals
@njit(cache=True, error_model="numpy", _nrt=False)
def deal_range(st, prm, scr, which, decks, hands, masks, seeded, lo, hi):
    for e in range(lo, hi):
        if which[e] != 0:
            if seeded:
                shuffle_decks(st, prm, e, scr.decks[e])
                deal_table(st, prm, e, scr.decks[e], hands[e])
            else:
                deal_table(st, prm, e, decks[e], hands[e])
            write_table_masks(st, prm, scr, e, masks)


@njit(cache=True, error_model="numpy", parallel=True)
def deal_batch(st, prm, scr, which, decks, hands, masks):
    """Deal table e from decks[e] for every e with which[e] != 0."""
    E = st.tick.shape[0]
    k = n_chunks(E)
    for c in prange(k):
        lo, hi = chunk_bounds(c, k, E)
        deal_range(st, prm, scr, which, decks, hands, masks, False, lo, hi)


@njit(cache=True, error_model="numpy", parallel=True)
def deal_seeded_batch(st, prm, scr, which, hands, masks):
    """Shuffle with each table's generator and deal, for every e with which[e] != 0."""
    E = st.tick.shape[0]
    k = n_chunks(E)
    for c in prange(k):
        lo, hi = chunk_bounds(c, k, E)
        deal_range(st, prm, scr, which, scr.decks, hands, masks, True, lo, hi)


# ---------------------------------------------------------------------------- reading
@njit(cache=True, error_model="numpy", _nrt=False)
def masks_range(st, prm, scr, masks, lo, hi):
    for e in range(lo, hi):
        write_table_masks(st, prm, scr, e, masks)


@njit(cache=True, error_model="numpy", parallel=True)
def write_masks_batch(st, prm, scr, masks):
    """Masks of every seat of every table (after a position was loaded from outside)."""
    E = st.tick.shape[0]
    k = n_chunks(E)
    for c in prange(k):
        lo, hi = chunk_bounds(c, k, E)
        masks_range(st, prm, scr, masks, lo, hi)


@njit(cache=True, error_model="numpy", _nrt=False)
def write_scores_batch(st, prm, out):
    """R29 for every table: out [E, T]."""
    for e in range(st.tick.shape[0]):
        write_hand_scores(st, prm, e, out, e)


# ---------------------------------------------------------------------------- random play
@njit(cache=True, error_model="numpy", _nrt=False)
def _play_random_range(st, prm, scr, masks, actions, priority, applied, policy_rng, n_ticks,
                       hands_done, steps_done, lo, hi):
    S = prm.n_seats
    for e in range(lo, hi):
        for _ in range(n_ticks):
            if st.status[e] != PLAYING:
                hands_done[e] += 1
                shuffle_decks(st, prm, e, scr.decks[e])
                deal_table(st, prm, e, scr.decks[e], st.hand[e])
                write_table_masks(st, prm, scr, e, masks)
            for s in range(S):
                actions[e, s] = pick_random_legal(masks, e, s, policy_rng)
            step_table(st, prm, scr, e, actions, priority, masks, applied)
            steps_done[e] += S


@njit(cache=True, error_model="numpy", parallel=True)
def play_random_batch(st, prm, scr, masks, actions, priority, applied, policy_rng, n_ticks,
                      hands_done, steps_done):
    """Every table plays n_ticks ticks with uniformly random legal moves (masks written every
    tick); a finished hand is re-dealt at once from the table's generator. Counts finished
    hands and agent-steps (seats x ticks) per table into hands_done / steps_done."""
    E = st.tick.shape[0]
    k = n_chunks(E)
    for c in prange(k):
        lo, hi = chunk_bounds(c, k, E)
        _play_random_range(st, prm, scr, masks, actions, priority, applied, policy_rng,
                           n_ticks, hands_done, steps_done, lo, hi)


@njit(cache=True, error_model="numpy")  # allocates its work rows: NRT on
def _play_games_range(st, prm, scr, masks, actions, priority, applied, policy_rng,
                      hand_scores, n_hands, calls, winners, lo, hi):
    S = prm.n_seats
    T = prm.n_teams
    totals = np.zeros(T, np.int64)
    for e in range(lo, hi):
        totals[:] = 0
        winners[e] = -1
        for h in range(hand_scores.shape[1]):
            shuffle_decks(st, prm, e, scr.decks[e])
            deal_table(st, prm, e, scr.decks[e], h)
            write_table_masks(st, prm, scr, e, masks)
            while st.status[e] == PLAYING:
                for s in range(S):
                    actions[e, s] = pick_random_legal(masks, e, s, policy_rng)
                step_table(st, prm, scr, e, actions, priority, masks, applied)
            write_hand_scores(st, prm, e, hand_scores[e], h)
            for t in range(T):
                totals[t] += hand_scores[e, h, t]
                calls[e, t] += st.callers[e, t]
            n_hands[e] = h + 1
            w = decide_winner(totals, calls[e], prm.target_score)
            if w >= 0:
                winners[e] = w
                break


@njit(cache=True, error_model="numpy", parallel=True)
def play_random_games_batch(st, prm, scr, masks, actions, priority, applied, policy_rng,
                            hand_scores, n_hands, calls, winners):
    """R30: every table plays one whole game with uniformly random legal moves: hands are
    dealt from the table's generator with hand numbers 0, 1, ... (roles swap, R4) until
    decide_winner names a winner or hand_scores' hand axis is full (winner -1).
    Out: hand_scores [E, H, T], n_hands [E], calls [E, T], winners [E]."""
    E = st.tick.shape[0]
    k = n_chunks(E)
    for c in prange(k):
        lo, hi = chunk_bounds(c, k, E)
        _play_games_range(st, prm, scr, masks, actions, priority, applied, policy_rng,
                          hand_scores, n_hands, calls, winners, lo, hi)


# ---------------------------------------------------------------------------- bots
_DEAL_MIX = np.uint64(0xD1B54A32D192ED03)


@njit(cache=True, error_model="numpy", inline="always")
def shuffle_deal(st, prm, scr, e, deal_key, h):
    """scr.decks[e] = hand h's deck orders of the deal `deal_key`: drawn from a generator of
    their own, so the table's priority generator (st.rng) does not decide the cards and every
    table given the same key gets the same cards in hand h (duplicate deals)."""
    keep = st.rng[e]
    st.rng[e] = deal_key ^ (np.uint64(h + 1) * _DEAL_MIX)
    shuffle_decks(st, prm, e, scr.decks[e])
    st.rng[e] = keep


@njit(cache=True, error_model="numpy", _nrt=False)
def deal_bots_range(st, prm, scr, masks, deal_keys, hands, which, lo, hi):
    """Deal hand hands[e] of deal deal_keys[e] at every table e in lo..hi with which[e] != 0
    (the Python-driven tournament loop; play_bots_range deals the same way)."""
    for e in range(lo, hi):
        if which[e] != 0:
            shuffle_deal(st, prm, scr, e, deal_keys[e], hands[e])
            deal_table(st, prm, e, scr.decks[e], hands[e])
            write_table_masks(st, prm, scr, e, masks)


@njit(cache=True, error_model="numpy", inline="always")
def record_hand(st, prm, e, h, hand_scores, calls, ticks, n_hands, totals, game_calls):
    """Hand h of table e is over: its scores (R29), Nertz calls and ticks into the play
    loops' outputs, and the game's running totals and calls (R30) updated."""
    write_hand_scores(st, prm, e, hand_scores[e], h)
    ticks[e, h] = st.tick[e]
    for t in range(prm.n_teams):
        calls[e, h, t] = st.callers[e, t]
        totals[t] += hand_scores[e, h, t]
        game_calls[t] += st.callers[e, t]
    n_hands[e] = h + 1


@njit(cache=True, error_model="numpy")  # allocates its work rows: NRT on
def play_bots_range(st, prm, scr, masks, actions, priority, applied, policy_rng, kinds, knobs,
                    deal_keys, prio_keys, first_hand, stop_at_winner, hand_scores, n_hands,
                    calls, winners, ticks, lo, hi):
    S = prm.n_seats
    T = prm.n_teams
    totals = np.zeros(T, np.int64)
    game_calls = np.zeros(T, np.int64)
    for e in range(lo, hi):
        totals[:] = 0
        game_calls[:] = 0
        winners[e] = -1
        n_hands[e] = 0
        st.rng[e] = prio_keys[e]
        for h in range(hand_scores.shape[1]):
            hand = first_hand[e] + h
            shuffle_deal(st, prm, scr, e, deal_keys[e], hand)
            deal_table(st, prm, e, scr.decks[e], hand)
            write_table_masks(st, prm, scr, e, masks)
            while st.status[e] == PLAYING:
                write_policy_actions(masks, scr.avail, st.river, st.river_n, prm.seat_team,
                                     kinds, knobs, policy_rng, actions, e, S)
                step_table(st, prm, scr, e, actions, priority, masks, applied)
            record_hand(st, prm, e, h, hand_scores, calls, ticks, n_hands, totals, game_calls)
            if stop_at_winner:
                w = decide_winner(totals, game_calls, prm.target_score)
                if w >= 0:
                    winners[e] = w
                    break


@njit(cache=True, error_model="numpy", parallel=True)
def play_bots_batch(st, prm, scr, masks, actions, priority, applied, policy_rng, kinds, knobs,
                    deal_keys, prio_keys, first_hand, stop_at_winner, hand_scores, n_hands,
                    calls, winners, ticks):
    """Tournament play, entirely inside numba: table e seats the bots kinds[e]/knobs[e]
    (core/policies.py) and plays hands first_hand[e], first_hand[e] + 1, ... (roles follow the
    hand number, R4). Cards: hand h of deal deal_keys[e] (shuffle_deal); priority orders: the
    table generator restarted at prio_keys[e]; random bots draw from policy_rng[e]. It stops
    after hand_scores.shape[1] hands, or at the game's end when stop_at_winner (R30).
    Out: hand_scores [E, H, T] (R29), n_hands [E], calls [E, H, T] (1 = the team called Nertz),
    winners [E] (-1: none), ticks [E, H] (ticks each hand lasted)."""
    E = st.tick.shape[0]
    k = n_chunks(E)
    for c in prange(k):
        lo, hi = chunk_bounds(c, k, E)
        play_bots_range(st, prm, scr, masks, actions, priority, applied, policy_rng, kinds,
                        knobs, deal_keys, prio_keys, first_hand, stop_at_winner, hand_scores,
                        n_hands, calls, winners, ticks, lo, hi)


# ---------------------------------------------------------------------------- vector env
REWARD_SCORE, REWARD_RELATIVE = 0, 1


@njit(cache=True, error_model="numpy", _nrt=False)
def vec_tick_table(st, prm, scr, masks, actions, priority, applied, learner_actions,
                   learner_seat, kinds, knobs, policy_rng, reward_kind, prev_scores,
                   cur_scores, rewards, terminated, truncated, final_scores, e):
    """A learner step's tick and bookkeeping at table e, the one source for every vector
    env kernel (vec_step_range here, core/observe_memory.py vec_step_memory_range): the moves
    and the tick, rewards[e], terminated[e] / truncated[e] and, when the hand ended,
    final_scores[e] with prev_scores restarted (else prev_scores = the scores now).
    Returns True when the hand ended: the caller then writes final_obs of the finished
    position and calls redeal_next_hand."""
    T = prm.n_teams
    me = prm.seat_team[learner_seat]
    write_policy_actions(masks, scr.avail, st.river, st.river_n, prm.seat_team, kinds,
                         knobs, policy_rng, actions, e, prm.n_seats)
    actions[e, learner_seat] = learner_actions[e]
    step_table(st, prm, scr, e, actions, priority, masks, applied)
    write_hand_scores(st, prm, e, cur_scores, e)
    mine = cur_scores[e, me] - prev_scores[e, me]
    if reward_kind == REWARD_RELATIVE and T > 1:
        total = 0.0               # (whole points in float64: sums are exact)
        for t in range(T):
            total += cur_scores[e, t] - prev_scores[e, t]
        rewards[e] = relative_points_jit(mine, total, T)
    else:
        rewards[e] = mine
    terminated[e] = 0
    truncated[e] = 0
    if st.status[e] == PLAYING:
        for t in range(T):
            prev_scores[e, t] = cur_scores[e, t]
        return False
    if st.status[e] == OVER_TRUNCATED:
        truncated[e] = 1
    else:
        terminated[e] = 1
    for t in range(T):
        final_scores[e, t] = cur_scores[e, t]
        prev_scores[e, t] = 0
    return True


@njit(cache=True, error_model="numpy", _nrt=False)
def redeal_next_hand(st, prm, scr, masks, e):
    """Table e re-dealt from its generator with the next hand number (roles swap, R4)."""
    shuffle_decks(st, prm, e, scr.decks[e])
    deal_table(st, prm, e, scr.decks[e], st.hand[e] + 1)
    write_table_masks(st, prm, scr, e, masks)


@njit(cache=True, error_model="numpy", _nrt=False)
def vec_step_range(st, prm, scr, masks, actions, priority, applied, learner_actions,
                   learner_seat, kinds, knobs, policy_rng, reward_kind, prev_scores,
                   cur_scores, rewards, terminated, truncated, final_scores, final_obs, lo, hi):
    """One learner step at tables lo..hi: the learner's seat plays learner_actions[e], every
    other seat the move of its bot (kinds/knobs, core/policies.py: random legal, greedy or a
    heuristic style, chosen here inside numba), the tick resolves (vec_tick_table).
    rewards[e]: the change of the learner team's hand score (R29) since its last step, or that
    minus the mean change of the other teams (relative). A finished hand is recorded
    (terminated / truncated, final_scores) and the table re-dealt at once with the next hand
    number (roles swap, R4); prev_scores then restart from 0 so a hand's rewards sum to its
    score. final_obs[e, 0] keeps the learner's observation of the finished position."""
    for e in range(lo, hi):
        if vec_tick_table(st, prm, scr, masks, actions, priority, applied, learner_actions,
                          learner_seat, kinds, knobs, policy_rng, reward_kind, prev_scores,
                          cur_scores, rewards, terminated, truncated, final_scores, e):
            write_seat_observation(st, prm, scr, e, learner_seat, final_obs, 0)
            redeal_next_hand(st, prm, scr, masks, e)


@njit(cache=True, parallel=True, error_model="numpy")
def vec_step_batch(st, prm, scr, masks, actions, priority, applied, learner_actions,
                   learner_seat, kinds, knobs, policy_rng, reward_kind, prev_scores,
                   cur_scores, rewards, terminated, truncated, final_scores, final_obs):
    E = st.tick.shape[0]
    k = n_chunks(E)
    for c in prange(k):
        lo, hi = chunk_bounds(c, k, E)
        vec_step_range(st, prm, scr, masks, actions, priority, applied, learner_actions,
                       learner_seat, kinds, knobs, policy_rng, reward_kind, prev_scores,
                       cur_scores, rewards, terminated, truncated, final_scores, final_obs,
                       lo, hi)


@njit(cache=True, error_model="numpy", _nrt=False)
def vec_step_observe_range(st, prm, scr, masks, actions, priority, applied, learner_actions,
                           learner_seat, kinds, knobs, policy_rng, reward_kind, prev_scores,
                           cur_scores, rewards, terminated, truncated, final_scores, final_obs,
                           obs, lo, hi):
    """vec_step_range, then obs[e, 0] = the learner's observation of table e (after a re-deal:
    of the new hand), table by table while the table is still in cache."""
    for e in range(lo, hi):
        vec_step_range(st, prm, scr, masks, actions, priority, applied, learner_actions,
                       learner_seat, kinds, knobs, policy_rng, reward_kind, prev_scores,
                       cur_scores, rewards, terminated, truncated, final_scores, final_obs,
                       e, e + 1)
        write_seat_observation(st, prm, scr, e, learner_seat, obs, 0)


@njit(cache=True, parallel=True, error_model="numpy")
def vec_step_observe_batch(st, prm, scr, masks, actions, priority, applied, learner_actions,
                           learner_seat, kinds, knobs, policy_rng, reward_kind, prev_scores,
                           cur_scores, rewards, terminated, truncated, final_scores, final_obs,
                           obs):
    """vec_step_batch and the learner's observations in one parallel launch."""
    E = st.tick.shape[0]
    k = n_chunks(E)
    for c in prange(k):
        lo, hi = chunk_bounds(c, k, E)
        vec_step_observe_range(st, prm, scr, masks, actions, priority, applied,
                               learner_actions, learner_seat, kinds, knobs, policy_rng,
                               reward_kind, prev_scores, cur_scores, rewards, terminated,
                               truncated, final_scores, final_obs, obs, lo, hi)


@njit(cache=True, error_model="numpy", _nrt=False)
def tick_inputs_tuples(st, prm, scr, masks, kinds, knobs, policy_rng, actions, tables,
                       seat_obs, row_t, row_s, obs, row_masks):
    """One tick's inputs: actions[e] of the core bots at every table e of `tables` (as
    core/policies.py policy_actions_range), then obs[k] and row_masks[k], the observation and
    legal moves of seat row_s[k] at table row_t[k] (seat_obs [n, 1, OBS_DIM]: the row it is
    written in).
    State, params and scratch come as plain tuples (cheaper for numba's dispatcher)."""
    st, prm, scr = NertzState(*st), Params(*prm), Scratch(*scr)
    for k in range(tables.shape[0]):
        write_policy_actions(masks, scr.avail, st.river, st.river_n, prm.seat_team, kinds,
                             knobs, policy_rng, actions, tables[k], prm.n_seats)
    for k in range(row_t.shape[0]):
        e, s = row_t[k], row_s[k]
        write_seat_observation(st, prm, scr, e, s, seat_obs, 0)
        for j in range(obs.shape[1]):
            obs[k, j] = seat_obs[e, 0, j]
        for j in range(row_masks.shape[1]):
            row_masks[k, j] = masks[e, s, j]
