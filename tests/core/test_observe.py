"""The flat observation (nertz_env/core/observe.py): layout of the segments, values in range,
and no face-down card ever leaks (Nertz cards under the top, the stock)."""
from __future__ import annotations

import numpy as np

from nertz_env import RulesConfig, Table
from nertz_env.core import observe as ob

OTHER = {"nertz": ["KD", "5C"], "river": [["KS"], ["KC"], ["QS"], ["QC"]],
         "stream": ["2C", "3C"], "waste": 1}


def obs_of(layout, config=None):
    t = Table.from_layout(layout, config)
    return t, t.engine.observe()[0]


def card_vec(rank1, suit):
    v = np.zeros(6, np.float32)
    v[0], v[1], v[2 + "SHDC".index(suit)] = 1, rank1 / 13, 1
    return v


def test_segments_hold_the_visible_cards():
    layout = {"lake": [["AH"]], "teams": [
        {"nertz": ["9D", "4C"], "river": [["KS", "QH"], [], ["7D"], []],
         "stream": ["4H", "JD", "2S"], "waste": 2},
        OTHER]}
    t, o = obs_of(layout)
    assert o.shape == (2, ob.OBS_DIM) and o.dtype == np.float32
    assert (o >= -1).all() and (o <= 1).all()
    me = o[0]
    assert np.allclose(me[0:6], card_vec(4, "C"))                 # Nertz top 4C
    assert np.isclose(me[6], 2 / 13)                              # two Nertz cards
    assert np.allclose(me[7:13], card_vec(11, "D"))               # waste top JD
    assert np.isclose(me[13], 1 / 52) and np.isclose(me[14], 2 / 52)
    river0 = ob.OFF_RIVER
    assert np.allclose(me[river0:river0 + 6], card_vec(13, "S"))  # River 0 bottom KS
    assert np.allclose(me[river0 + 6:river0 + 12], card_vec(12, "H"))
    col2 = ob.OFF_RIVER + 2 * 13 * 6
    assert np.allclose(me[col2:col2 + 6], card_vec(7, "D"))
    # the Lake: one pile (AH) waits for 2H; one heart ace of two is started
    two_h = 13 + 1
    assert np.isclose(me[ob.OFF_LAKE_NEXT + two_h], 1 / 2)
    assert np.isclose(me[ob.OFF_LAKE_NEXT + 13], 1 / 2)           # AH: one of 2 aces left
    assert np.isclose(me[ob.OFF_LAKE_NEXT + 0], 1.0)              # AS: both aces left
    assert np.isclose(me[ob.OFF_LAKE_SUIT + 1], 1 / 26)
    # the opponent (team 1) from seat 0: Nertz top 5C, waste 2C, River tops
    opp = ob.OFF_OPP
    assert np.allclose(me[opp:opp + 6], card_vec(5, "C"))
    assert np.allclose(me[opp + 6:opp + 12], card_vec(2, "C"))
    assert me[opp + 7 * 6 + 3] == 1.0 and me[opp + ob.OPP_F + 7 * 6 + 3] == 0.0
    # seat 1 sees team 0 as its opponent 1
    assert np.allclose(o[1][opp:opp + 6], card_vec(4, "C"))
    assert me[ob.OFF_SELF] == 1.0 and np.isclose(me[ob.OFF_SELF + 7], 2 / 8)


def test_face_down_cards_never_leak():
    """R6/R7: the cards under the Nertz top and in the stock are face down: changing them
    (same counts) leaves every seat's observation unchanged."""
    a = {"lake": [], "teams": [
        {"nertz": ["9D", "8C", "4C"], "river": [["KS"], [], [], []],
         "stream": ["4H", "JD", "2S", "6S", "7S"], "waste": 2}, OTHER]}
    b = {"lake": [], "teams": [
        {"nertz": ["8C", "9D", "4C"], "river": [["KS"], [], [], []],
         "stream": ["4H", "JD", "7S", "2S", "6S"], "waste": 2}, OTHER]}
    _, oa = obs_of(a)
    _, ob_ = obs_of(b)
    assert np.array_equal(oa, ob_)
    c = {"lake": [], "teams": [
        {"nertz": ["9D", "8C", "5C"], "river": [["KS"], [], [], []],
         "stream": ["4H", "JD", "2S", "6S", "7S"], "waste": 2}, OTHER]}
    _, oc = obs_of(c)
    assert not np.array_equal(oa, oc)          # the face-up Nertz top does show


def test_batched_observation_equals_single_tables():
    from nertz_env import Engine
    cfg = RulesConfig(num_teams=3, team_sizes=(2, 1, 2))
    eng = Engine(cfg, n_tables=300, seed=5)      # parallel kernels
    eng.reset()
    rng = np.random.default_rng(0)
    for _ in range(20):
        acts = np.zeros((300, cfg.num_seats), np.int64)
        for e in range(300):
            for s in range(cfg.num_seats):
                acts[e, s] = rng.choice(np.flatnonzero(eng.masks[e, s]))
        eng.step(acts)
    batch = eng.observe().copy()
    assert (batch >= -1).all() and (batch <= 1).all()
    one = Engine(cfg, n_tables=1, seed=0)
    from nertz_env.core.state import copy_table
    for e in (0, 137, 299):
        copy_table(eng.state, e, one.state, 0)
        one.refresh_masks()
        assert np.array_equal(one.observe()[0], batch[e])


def test_one_seat_observation_equals_that_seat_of_all():
    from nertz_env import Engine
    for n_tables in (3, 300):                    # serial and parallel kernels
        eng = Engine(RulesConfig(num_teams=3), n_tables=n_tables, seed=2)
        eng.reset()
        eng.step(np.zeros((n_tables, 3), np.int64))
        everyone = eng.observe().copy()
        for seat in range(3):
            assert np.array_equal(eng.observe(seat)[:, 0], everyone[:, seat])


def test_table_writer_equals_the_seat_writer_on_random_play():
    """observe() (core/observe.py write_table_observations: seat 0 in full, the other seats
    copying the Lake and the opponent blocks they share) gives every seat exactly the vector
    of observe(seat) (write_seat_observation, everything from the state), over random configs
    (2-8 teams, two-player teams, River 4 or 5) and random legal play."""
    from helpers import random_config

    from nertz_env import Engine
    rng = np.random.default_rng(11)
    compared = 0
    for _ in range(12):
        cfg = random_config(rng, illegal_move="penalize")
        eng = Engine(cfg, n_tables=16, seed=int(rng.integers(1 << 30)))
        eng.reset()
        for tick in range(40):
            if tick % 8 == 0:
                everyone = eng.observe().copy()
                for seat in range(cfg.num_seats):
                    assert np.array_equal(eng.observe(seat)[:, 0], everyone[:, seat]), (cfg, seat)
                    compared += 16
            acts = np.zeros((16, cfg.num_seats), np.int64)
            for e in range(16):
                for s in range(cfg.num_seats):
                    acts[e, s] = rng.choice(np.flatnonzero(eng.masks[e, s]))
            eng.step(acts)
    assert compared > 2000
