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
    |        |      |   num_teams / 8                                                         |
    OBS_DIM = 791
"""
from __future__ import annotations

from numba import njit, prange

from ..layout import MAX_RIVER, NO_CARD, SRC_RIVER0
from .rules import rank, stream_seat, suit

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
OBS_DIM = OFF_SELF + 8                                       # 791


@njit(cache=True, inline="always", error_model="numpy")
def put_card(obs, e, r, o, card):
    if card == NO_CARD:
        return
    obs[e, r, o] = 1.0
    obs[e, r, o + 1] = (rank(card) + 1) / 13.0
    obs[e, r, o + 2 + suit(card)] = 1.0


@njit(cache=True, error_model="numpy", _nrt=False)
def write_seat_observation(st, prm, scr, e, s, obs, r):
    """obs[e, r, :] = what seat s of table e sees (scr.avail must describe the position: it
    does after every deal and tick, as the masks do)."""
    for i in range(OBS_DIM):
        obs[e, r, i] = 0.0
    T = prm.n_teams
    R = prm.river_size
    t = prm.seat_team[s]
    # own Nertz pile and Stream
    put_card(obs, e, r, OFF_NERTZ, scr.avail[e, t, 0])
    obs[e, r, OFF_NERTZ + CARD_F] = st.nertz_n[e, t] / 13.0
    put_card(obs, e, r, OFF_WASTE, scr.avail[e, t, 1])
    obs[e, r, OFF_WASTE + CARD_F] = (st.stream_n[e, t] - st.waste_n[e, t]) / 52.0
    obs[e, r, OFF_WASTE + CARD_F + 1] = st.waste_n[e, t] / 52.0
    # own River in full
    for c in range(R):
        for d in range(st.river_n[e, t, c]):
            put_card(obs, e, r, OFF_RIVER + (c * 13 + d) * CARD_F, st.river[e, t, c, d])
    # the Lake
    for p in range(st.lake_piles[e]):
        n = st.lake_n[e, p]
        top = st.lake[e, p, n - 1] % 52
        obs[e, r, OFF_LAKE_SUIT + suit(top)] += n / (13.0 * T)
    for card in range(52):
        if rank(card) != 0:
            obs[e, r, OFF_LAKE_NEXT + card] = st.lake_next[e, card] / T
    for p in range(st.lake_piles[e]):
        first = st.lake[e, p, 0] % 52
        obs[e, r, OFF_LAKE_NEXT + first] -= 1.0 / T
    for su in range(4):
        obs[e, r, OFF_LAKE_NEXT + su * 13] += 1.0        # T aces per suit (T / T), minus started
    # opponents, seen from this team
    for k in range(1, T):
        u = (t + k) % T
        o = OFF_OPP + (k - 1) * OPP_F
        for src in range(SRC_RIVER0 + R):
            put_card(obs, e, r, o + src * CARD_F, scr.avail[e, u, src])
        obs[e, r, o + 7 * CARD_F] = st.nertz_n[e, u] / 13.0
        obs[e, r, o + 7 * CARD_F + 1] = st.stream_n[e, u] / 52.0
        obs[e, r, o + 7 * CARD_F + 2] = st.waste_n[e, u] / 52.0
        obs[e, r, o + 7 * CARD_F + 3] = 1.0
    # self
    wait = st.ready[e, s] - st.tick[e]
    obs[e, r, OFF_SELF] = 1.0 if wait <= 0 else 0.0
    obs[e, r, OFF_SELF + 1] = min(max(wait, 0), 10) / 10.0
    obs[e, r, OFF_SELF + 2] = min(st.tick[e] / prm.max_ticks, 1.0)
    holds_stream = s == stream_seat(prm.team_seat0, prm.team_size, prm.alternate_roles,
                                    st.hand[e], t)
    obs[e, r, OFF_SELF + 3] = 1.0 if holds_stream else 0.0
    obs[e, r, OFF_SELF + 4] = 1.0 if (prm.team_size[t] == 1 or not holds_stream) else 0.0
    obs[e, r, OFF_SELF + 5] = 1.0 if prm.team_size[t] == 2 else 0.0
    obs[e, r, OFF_SELF + 6] = 1.0 if st.hand[e] % 2 == 1 else 0.0
    obs[e, r, OFF_SELF + 7] = T / 8.0


@njit(cache=True, error_model="numpy", _nrt=False)
def observe_range(st, prm, scr, obs, lo, hi):
    for e in range(lo, hi):
        for s in range(prm.n_seats):
            write_seat_observation(st, prm, scr, e, s, obs, s)


@njit(cache=True, error_model="numpy", _nrt=False)
def observe_seat_range(st, prm, scr, obs, seat, lo, hi):
    """Only seat `seat` of every table, into obs[e, 0] (a learner's view)."""
    for e in range(lo, hi):
        write_seat_observation(st, prm, scr, e, seat, obs, 0)


@njit(cache=True, parallel=True, error_model="numpy")
def observe_seat_batch(st, prm, scr, obs, seat):
    E = st.tick.shape[0]
    k = min(E, 64)
    for c in prange(k):
        observe_seat_range(st, prm, scr, obs, seat, c * E // k, (c + 1) * E // k)


@njit(cache=True, parallel=True, error_model="numpy")
def observe_batch(st, prm, scr, obs):
    E = st.tick.shape[0]
    k = min(E, 64)
    for c in prange(k):
        observe_range(st, prm, scr, obs, c * E // k, (c + 1) * E // k)


# ---------------------------------------------------------------------------- fused ticks
# One tick, the R29 scores and every seat's observation in one call: the PettingZoo env
# (Engine.step_observe) pays one numba dispatch per step instead of three.
from .scoring import write_hand_scores  # noqa: E402
from .tick import step_table  # noqa: E402


@njit(cache=True, error_model="numpy", _nrt=False)
def step_observe_range(st, prm, scr, actions, priority, masks, applied, scores, obs, lo, hi):
    """step_table at tables lo..hi, then scores[e] (R29) and obs[e, s] of every seat."""
    for e in range(lo, hi):
        step_table(st, prm, scr, e, actions, priority, masks, applied)
        write_hand_scores(st, prm, e, scores, e)
        for s in range(prm.n_seats):
            write_seat_observation(st, prm, scr, e, s, obs, s)


@njit(cache=True, parallel=True, error_model="numpy")
def step_observe_batch(st, prm, scr, actions, priority, masks, applied, scores, obs):
    E = st.tick.shape[0]
    k = min(E, 64)
    for c in prange(k):
        step_observe_range(st, prm, scr, actions, priority, masks, applied, scores, obs,
                           c * E // k, (c + 1) * E // k)
