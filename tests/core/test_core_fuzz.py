"""Fuzzing the entry points below the environments: RulesConfig, the Table of
docs/api.md (deal, from_decks, from_layout, step, legal_moves, decode, encode, available_cards) and
the batched Engine (construction, seed, reset, deal, step, step_observe, observe,
seed_tables).

Every malformed call is a ValueError naming what is wrong, never a TypeError, OverflowError
or a crash inside numba, and leaves the object exactly as it was: every state array, the
masks and the generator state compare equal before and after. Objects are built once and
reused across examples (a failed call changes nothing, so every example starts alike).
"""
from __future__ import annotations

import copy

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nertz_env import N_ACTIONS, Engine, RulesConfig, Table

FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])

junk = st.one_of(
    st.none(), st.booleans(), st.floats(allow_nan=True), st.text(max_size=4),
    st.integers(min_value=-2**70, max_value=2**70), st.binary(max_size=3),
    st.lists(st.integers(-3, 400), max_size=3), st.dictionaries(st.text(max_size=2), st.integers(), max_size=2),
    st.sampled_from([object(), np.float64(1.5), np.bool_(True), np.array([[1.0]]), (1, 2), {1, 2},
                     np.uint64(2**64 - 1), np.int64(-1), float("inf"), complex(1, 1)]),
)


def snapshot(engine: Engine):
    return ([a.copy() for a in engine.state], engine.masks.copy(), engine.actions.copy(),
            copy.deepcopy(engine.np_random.bit_generator.state))


def assert_unchanged(engine: Engine, before) -> None:
    arrays, masks, actions, rng = before
    for name, a, b in zip(engine.state._fields, arrays, engine.state):
        assert np.array_equal(a, b), name
    assert np.array_equal(masks, engine.masks) and np.array_equal(actions, engine.actions)
    assert engine.np_random.bit_generator.state == rng


def only_value_errors(call, *args, **kwargs):
    """Run call; a ValueError is fine, any other exception fails the test (it propagates)."""
    try:
        call(*args, **kwargs)
    except ValueError as err:
        assert str(err)                       # says something
        return err
    return None


# ------------------------------------------------------------------------------ RulesConfig
FIELDS = ["num_teams", "team_sizes", "river_size", "stacking", "flow_rules", "nertz_bonus",
          "lake_points", "nertz_penalty", "target_score", "max_ticks", "speeds", "move_ticks",
          "alternate_roles", "auto_nertz", "illegal_move", "penalty_points"]


@FUZZ
@given(st.dictionaries(st.sampled_from(FIELDS + ["num_seats", "colour"]), junk, min_size=1,
                       max_size=3))
def test_rules_config_takes_good_values_or_names_the_bad_field(kwargs):
    try:
        RulesConfig(**kwargs)
    except ValueError as err:
        assert any(k in str(err) for k in kwargs), err
    except TypeError as err:                  # an unknown keyword: Python's own, for a dataclass
        assert set(kwargs) & {"num_seats", "colour"}, err


# ------------------------------------------------------------------------------ Engine
def valid_hands(value, n=4) -> bool:
    """Engine.reset's hands: one int hand number or one per table, 0..2**31-1."""
    if isinstance(value, (bool, np.bool_)):
        return False
    try:
        h = np.asarray(value)
    except Exception:
        return False
    return h.dtype.kind in "iu" and h.ndim <= 1 and h.size in (1, n) and \
        bool(((h >= 0) & (h < 2**31)).all())


ENGINE = Engine(RulesConfig(num_teams=3), n_tables=4, seed=0)
ENGINE.reset(seed=1)


@FUZZ
@given(junk)
def test_engine_step_with_junk_actions_changes_nothing(actions):
    before = snapshot(ENGINE)
    err = only_value_errors(ENGINE.step, actions)
    assert err is not None                    # no junk value is 4 x 3 valid ids
    assert_unchanged(ENGINE, before)


@FUZZ
@given(st.sampled_from(["f8", "f4", "?", "u8", "i8", "i2", "O", "U2"]),
       st.integers(-2**40, 2**40), st.sampled_from([(4, 3), (4,), (3, 4), (4, 3, 1), ()]))
def test_engine_step_with_bad_arrays_changes_nothing(dtype, value, shape):
    try:
        a = np.full(shape, value).astype(dtype)
    except (OverflowError, ValueError):
        return
    before = snapshot(ENGINE)
    # judged by the array's contents (a cast may have wrapped `value`, e.g. 65536 -> 0 as int16)
    ok = shape == (4, 3) and dtype[0] in "iu" and 0 <= int(a.flat[0]) < N_ACTIONS \
        and ENGINE.masks[np.arange(4)[:, None], np.arange(3), a.astype(np.int64)].all()
    if ok:
        return                                # a legal move for everyone: would play a tick
    assert only_value_errors(ENGINE.step, a) is not None
    assert_unchanged(ENGINE, before)


@FUZZ
@given(junk)
def test_engine_priority_and_hands_and_keys_junk(value):
    before = snapshot(ENGINE)
    waits = np.zeros((4, 3), np.int64)
    if value is not None:                     # None: the table's own draw, a valid tick
        assert only_value_errors(ENGINE.step, waits, priority=value) is not None
        assert_unchanged(ENGINE, before)
    only_value_errors(ENGINE.seed_tables, value)
    assert_unchanged(ENGINE, before)
    if value is not None:
        assert only_value_errors(ENGINE.deal, value) is not None
        assert_unchanged(ENGINE, before)
        if not valid_hands(value):
            eng = Engine(RulesConfig(num_teams=3), n_tables=4, seed=0)
            eng.reset(seed=1)
            mine = snapshot(eng)
            assert only_value_errors(eng.reset, hands=value) is not None
            assert_unchanged(eng, mine)


@FUZZ
@given(junk)
def test_engine_construction_and_seed_junk(value):
    for call in (lambda: Engine(n_tables=value), lambda: Engine(config=value),
                 lambda: Engine(seed=value), lambda: ENGINE.observe(seat=value)):
        only_value_errors(call)
    before = snapshot(ENGINE)
    if only_value_errors(ENGINE.seed, value) is not None:
        assert_unchanged(ENGINE, before)
    else:                                     # a valid seed: put the generators back
        ENGINE.np_random.bit_generator.state = before[3]
        ENGINE.state.rng[:] = before[0][ENGINE.state._fields.index("rng")]


def test_engine_hands_past_int32_are_refused():
    eng = Engine(n_tables=2, seed=0)
    before = snapshot(eng)
    for hands in ([2**31, 0], 2**31, -1, [0.5, 1], [[0, 1]], [0, 1, 2], True):
        with pytest.raises(ValueError, match="hand"):
            eng.reset(hands=hands)
        assert_unchanged(eng, before)
    eng.reset(hands=[2**31 - 1, 0])
    assert eng.state.hand.tolist() == [2**31 - 1, 0]


def test_engine_seed_tables_takes_uint64_keys_only():
    eng = Engine(n_tables=2, seed=0)
    before = snapshot(eng)
    for keys in ([1, 2], np.array([1.0, 2.0]), np.array([1], np.uint64), np.array([-1, 2])):
        with pytest.raises(ValueError, match="uint64"):
            eng.seed_tables(keys)
        assert_unchanged(eng, before)
    eng.seed_tables(np.array([5, 6], np.uint64))
    assert eng.state.rng.tolist() == [5, 6]


# ------------------------------------------------------------------------------ Table
LAYOUT = {"lake": [["AH", "2H@1"]],
          "teams": [{"nertz": ["9D", "3H"], "river": [["KS", "QH"], ["7D"], [], ["3C"]],
                     "stream": ["4H", "JD", "2S", "8C"], "waste": 2},
                    {"nertz": ["KC"], "river": [[], [], [], []], "stream": [], "waste": 0}]}
TABLE = Table.from_layout(LAYOUT, RulesConfig(illegal_move="raise"))


@FUZZ
@given(st.dictionaries(st.one_of(st.none(), st.booleans(), st.floats(allow_nan=False), st.text(max_size=3),
                                 st.integers(-2, 3), st.sampled_from([np.int64(1), np.float64(0.0), (0,)])),
                       st.one_of(junk, st.text(max_size=12),
                                 st.sampled_from(["wait", "flip", "nertz>lake", "nertz>river2",
                                                  "river0:1>river2", "river9>lake", "call"])),
                       max_size=2), st.one_of(st.none(), junk))
def test_table_step_with_junk_moves_or_priority_changes_nothing(moves, priority):
    before = snapshot(TABLE.engine)
    legal = {s: {str(m) for m in TABLE.legal_moves(s)} for s in (0, 1)}
    if all(isinstance(s, int) and not isinstance(s, bool) and s in (0, 1) and str(m) in legal[s]
           for s, m in moves.items()) and (priority is None):
        return                                # a legal tick: not junk
    err = only_value_errors(TABLE.step, moves, priority)
    if err is None:                           # legal moves with an acceptable priority: undo
        TABLE._engine.write_state({n: a for n, a in zip(TABLE.engine.state._fields, before[0])},
                                  complete_decks=False)
        TABLE._engine.np_random.bit_generator.state = before[3]
    assert_unchanged(TABLE.engine, before)


@FUZZ
@given(junk)
def test_table_readers_with_junk(value):
    before = snapshot(TABLE.engine)
    for call in (TABLE.legal_moves, TABLE.action_mask, TABLE.available_cards, TABLE.encode,
                 TABLE.decode, lambda v: TABLE.decode(0, seat=v), lambda v: TABLE.is_legal(v, "wait"),
                 lambda v: TABLE.is_legal(0, v)):
        only_value_errors(call, value)
    assert_unchanged(TABLE.engine, before)


def mutate(layout, path, value):
    lay = copy.deepcopy(layout)
    node = lay
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return lay


PATHS = [("lake",), ("lake", 0), ("lake", 0, 1), ("teams",), ("teams", 0), ("teams", 0, "nertz"),
         ("teams", 0, "nertz", 0), ("teams", 0, "river"), ("teams", 0, "river", 1),
         ("teams", 0, "river", 0, 1), ("teams", 0, "stream", 2), ("teams", 0, "waste"),
         ("tick",), ("hand",), ("ready",), ("burns",), ("penalties",), ("turnovers",),
         ("callers",), ("extra",), ("teams", 1, "colour")]


@FUZZ
@given(st.sampled_from(PATHS), junk)
def test_from_layout_with_junk_is_a_value_error(path, value):
    lay = mutate(LAYOUT, path, value)
    try:
        table = Table.from_layout(lay)
    except ValueError as err:
        assert str(err)
        return
    table.engine.check_invariants(complete_decks=False)   # accepted: then it is a valid table


@FUZZ
@given(junk, junk)
def test_deal_and_from_decks_with_junk(value, other):
    only_value_errors(Table.deal, value)
    only_value_errors(Table.deal, None, value)
    only_value_errors(Table.deal, None, 0, value)
    only_value_errors(Table.from_decks, value)
    only_value_errors(Table.from_decks, [list(range(52)), value])
    decks = [list(range(52)), list(range(52))]
    decks[1][5] = other
    only_value_errors(Table.from_decks, decks)
