"""envs/seats.py, the one seat driver: what it gathers is the engine's own view, the ids are
checked once by one policy (raise here, or the engine's R31), and they land where the tick
reads them."""
from __future__ import annotations

import numpy as np
import pytest

from nertz_env import Engine, RulesConfig
from nertz_env.actions import N_ACTIONS
from nertz_env.core.policies import POLICY_RANDOM, new_policy_arrays
from nertz_env.envs.seats import PerRow, SeatDriver


def dealt(illegal_move="raise", n=3, teams=3):
    eng = Engine(RulesConfig(num_teams=teams, illegal_move=illegal_move), n_tables=n, seed=4)
    eng.reset()
    return eng


def test_gather_is_the_engines_observation_and_mask():
    eng = dealt()
    rows_t, rows_s = np.array([0, 1, 2, 2]), np.array([2, 0, 1, 2])
    obs, masks = SeatDriver(eng).gather(rows_t, rows_s)
    full = eng.observe()
    np.testing.assert_array_equal(obs, full[rows_t, rows_s])
    np.testing.assert_array_equal(masks, eng.masks[rows_t, rows_s].astype(bool))
    assert masks.dtype == bool and obs.dtype == np.float32


def test_drive_calls_once_and_writes_the_rows():
    eng = dealt()
    rows_t, rows_s = np.array([0, 2]), np.array([1, 1])
    calls = []

    def last_legal(obs, masks):
        calls.append(len(obs))
        return np.array([np.flatnonzero(m)[-1] for m in masks])

    out = np.zeros((3, 3), np.int64)
    ids = SeatDriver(eng).drive(rows_t, rows_s, last_legal, out=out, illegal="raise")
    assert calls == [2]
    want = [np.flatnonzero(eng.masks[t, s])[-1] for t, s in zip(rows_t, rows_s)]
    assert ids.tolist() == want and out[rows_t, rows_s].tolist() == want
    assert (out[1] == 0).all() and out[0, [0, 2]].tolist() == [0, 0]
    SeatDriver(eng).drive(rows_t, rows_s, last_legal, illegal="engine")   # default out
    assert eng.actions[rows_t, rows_s].tolist() == want
    assert SeatDriver(eng).drive([], [], last_legal, illegal="engine").size == 0
    assert calls == [2, 2]                                   # no rows: not called


@pytest.mark.parametrize("bad, words", [
    (lambda o, m: np.zeros(len(o)), "dtype float64"),
    (lambda o, m: np.zeros(len(o), bool), "dtype bool"),
    (lambda o, m: np.full(len(o), N_ACTIONS), "out of range"),
    (lambda o, m: np.zeros(len(o) + 1, np.int64), "shape"),
    (lambda o, m: [[0], [0, 1]], "not an array"),
])
def test_bad_ids_are_value_errors_and_nothing_is_written(bad, words):
    eng = dealt(illegal_move="penalize")
    out = np.full((3, 3), 7, np.int64)
    with pytest.raises(ValueError, match=words):
        SeatDriver(eng).drive([0, 1], [1, 2], bad, out=out, illegal="engine", where="bots")
    assert (out == 7).all()


def test_illegal_policy_raise_names_table_and_seat_engine_leaves_it_to_r31():
    eng = dealt()                                            # illegal_move="raise"
    illegal = lambda o, m: np.array([np.flatnonzero(~r)[0] for r in m])   # noqa: E731
    with pytest.raises(ValueError, match=r"bots\[1\] \(table 2, seat 1\).*R31"):
        SeatDriver(eng).drive([0, 2], [0, 1], lambda o, m: np.where(
            np.arange(len(o)) == 1, illegal(o, m), 0), illegal="raise", where="bots")
    ids = np.zeros((3, 3), np.int64)
    SeatDriver(eng).drive([2], [1], illegal, out=ids, illegal="engine")   # passes here...
    assert not eng.masks[2, 1, ids[2, 1]]
    with pytest.raises(ValueError, match="illegal move at table 2: seat 1"):
        eng.step(ids)                                        # ...the engine's R31 decides
    assert SeatDriver.policy(eng.config) == "raise"          # the policy to pair with checked=True
    assert SeatDriver.policy(RulesConfig(illegal_move="penalize")) == "engine"
    pen = dealt(illegal_move="penalize")
    ids = np.zeros((3, 3), np.int64)
    SeatDriver(pen).drive([2], [1], illegal, out=ids, illegal="engine")
    pen.step(ids, checked=True)                              # penalized, no error
    assert pen.state.penalties[2].sum() == 1
    with pytest.raises(ValueError, match="illegal="):
        SeatDriver(eng).drive([0], [0], illegal, illegal="penalize")


def test_core_bots_move_in_the_same_gather():
    eng = dealt(n=2)
    kinds, knobs = new_policy_arrays(2, 3)
    kinds[:, 1] = POLICY_RANDOM
    acts = np.full((2, 3), -1, np.int64).astype(np.int16)
    rng = np.arange(1, 3, dtype=np.uint64)
    SeatDriver(eng).gather([0], [2], core=(kinds, knobs, rng, acts, np.array([1])))
    assert (acts[0] == -1).all()                             # table 0 not named: untouched
    assert eng.masks[1, 1, acts[1, 1]]                       # table 1: the random bot's move


def test_per_row_reads_every_scalar_and_names_the_seat():
    eng = dealt()
    seen = []

    def act(o, m):
        seen.append(m.dtype)
        return np.int64(0)

    drawn = []
    per = PerRow({1: act, 2: None}, [1, 2], fallback=lambda m: drawn.append(m.sum()) or 0)
    assert SeatDriver(eng).drive([0, 0], [1, 2], per, illegal="engine").tolist() == [0, 0]
    assert seen == [np.int8] and len(drawn) == 1
    for bad in (True, 1.0, "wait"):
        per = PerRow({1: lambda o, m, b=bad: b}, [1])
        with pytest.raises(ValueError, match="opponent at seat 1"):
            SeatDriver(eng).drive([0], [1], per, illegal="engine")
