"""Snapshots you can trust (envs/episode.py take_snapshot / load_snapshot, the envs' get_state /
set_state) and the frozen RulesConfig they fingerprint.

Every snapshot carries a format version and the rules' fingerprint; set_state checks version,
fingerprint, every array's dtype (no floats, no wrap) and shape, value ranges and the state's
invariants before anything is written: a bad snapshot is a ValueError and the env is exactly as
it was (arrays, generators, ledger) and plays on as if nothing happened."""
from __future__ import annotations

import copy
import dataclasses
import json
import pickle

import numpy as np
import pytest
from gymnasium.utils.env_checker import data_equivalence
from helpers import layout_of, team

from nertz_env import N_ACTIONS, NertzGymEnv, RulesConfig, nertz_v0
from nertz_env.config import FrozenDict
from nertz_env.envs.episode import SNAPSHOT_VERSION


def gym_env(**kw):
    return NertzGymEnv(**{"num_teams": 2, "max_ticks": 200, **kw})


def parallel_env(**kw):
    return nertz_v0.parallel_env(**{"num_teams": 2, "max_ticks": 200, **kw})


ENVS = {"gym": gym_env, "parallel": parallel_env}


def steps(env, n=8, seed=3):
    """n steps of seeded action ids, legal or not (the envs penalize), their outputs."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        if isinstance(env, NertzGymEnv):
            out.append(env.step(int(rng.integers(N_ACTIONS))))
        elif env.agents:
            out.append(env.step({a: int(rng.integers(N_ACTIONS)) for a in env.agents}))
    return out


def played(kind, seed=5, **kw):
    env = ENVS[kind](**kw)
    env.reset(seed=seed)
    steps(env, 6, seed)
    return env


def same(a, b) -> bool:
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
    if isinstance(a, np.ndarray):
        return isinstance(b, np.ndarray) and a.dtype == b.dtype and np.array_equal(a, b)
    return type(a) is type(b) and a == b


def diverge(snap) -> dict:
    """Valid values that differ from the env's (generators, ledger), so that a set_state that
    writes any of them before it refuses the snapshot is caught."""
    snap["np_random"] = np.random.PCG64(12345).state
    if "env_np_random" in snap:
        snap["env_np_random"] = np.random.PCG64(54321).state
    snap["prev_scores"] = snap["prev_scores"] + 1
    snap["totals"] = snap["totals"] + 2
    snap["calls"] = snap["calls"] + 1
    snap["hands"] += 1
    return snap


def refused_and_unchanged(env, bad, match):
    before = env.get_state()
    twin = copy.deepcopy(env)
    with pytest.raises(ValueError, match=match):
        env.set_state(bad)
    assert same(env.get_state(), before), "a failed set_state changed the env"
    assert data_equivalence(steps(env), steps(twin)), "a failed set_state changed what follows"


# ----------------------------------------------------------------------------- bad snapshots
def _engine(name, fn):
    def mutate(snap, kind):
        snap["engine"][name] = fn(snap["engine"][name])
    return mutate


def _put(key, value):
    def mutate(snap, kind):
        snap[key] = value
    return mutate


def _drop(key):
    def mutate(snap, kind):
        del snap[key]
    return mutate


def _cell(name, index, value):
    def f(a):
        a = a.copy()
        a[index] = value
        return a
    return _engine(name, f)


def _wrapping(a):
    a = a.astype(np.int64)
    a[0, 0] = 300                                 # int8 would hold 44
    return a


def _duplicate(snap, kind):
    e = snap["engine"]
    e["stream"][0, 1, 0] = e["nertz"][0, 1, e["nertz_n"][0, 1] - 1]


def _card_missing(snap, kind):
    """One card out of play while the snapshot says every deck is complete."""
    e = snap["engine"]
    n = e["stream_n"][0, 0]
    e["stream"][0, 0, n - 1] = -1
    e["stream_n"][0, 0] = n - 1
    e["waste_n"][0, 0] = min(e["waste_n"][0, 0], n - 1)


def _rng_field(key, value):
    def mutate(snap, kind):
        snap["np_random"]["state"][key] = value
    return mutate


def _engine_key(drop=None, add=None):
    def mutate(snap, kind):
        if drop:
            del snap["engine"][drop]
        if add:
            snap["engine"][add] = np.zeros(1, np.int8)
    return mutate


BAD = {
    "float array": (_engine("tick", lambda a: a + 0.7), r"'tick' is a float64 array"),
    "whole floats": (_engine("nertz_n", lambda a: a.astype(np.float32)), r"'nertz_n' is a float32"),
    "wrapping int": (_engine("nertz_n", _wrapping), r"'nertz_n' holds 300, outside its dtype int8"),
    "list of str": (_engine("lake", lambda a: [["AH"]]), r"'lake' is a <U2 array"),
    "nertz_n=100": (_cell("nertz_n", (0, 0), 100), r"table 0, team 0: nertz_n = 100"),
    "duplicate card": (_duplicate, r"team 1: \w+ \(card id \d+\) of its deck appears 2 times"),
    "card missing": (_card_missing, r"team 0: \w+ \(card id \d+\) of its deck is nowhere"),
    "negative penalties": (_cell("penalties", (0, 1), -4), r"team 1: penalties = -4"),
    "tick past max_ticks": (_cell("tick", 0, 201), r"tick = 201 is outside 0\.\.max_ticks \(200\)"),
    "wrong shape": (_engine("ready", lambda a: a[:, :1]), r"'ready' has shape \(1, 1\)"),
    "engine key missing": (_engine_key(drop="burns"), r"miss \['burns'\]"),
    "engine key unknown": (_engine_key(add="score"), r"unknown \['score'\]"),
    "engine not a dict": (_put("engine", [1, 2]), r"engine arrays must be a dict"),
    "version 0": (_put("version", 0), r"snapshot version 0; this nertz_env reads version 1"),
    "version 2": (_put("version", 2), r"snapshot version 2"),
    "version '1'": (_put("version", "1"), r"snapshot version '1'"),
    "version True": (_put("version", True), r"snapshot version True"),
    "no version": (_drop("version"), r"get_state\(\): this one has no 'version'"),
    "fingerprint": (_put("fingerprint", "0" * 64), r"taken under other rules"),
    "fingerprint type": (_put("fingerprint", 7), r"taken under other rules"),
    "complete_decks type": (_put("complete_decks", "yes"), r"'complete_decks' = 'yes' must be"),
    "np_random not a dict": (_put("np_random", "PCG64"), r"np_random must be a PCG64 state"),
    "np_random kind": (_put("np_random", np.random.MT19937(1).state),
                       r"np_random must be a PCG64 state dict .*'MT19937'"),
    "np_random float": (_rng_field("state", 1.5), r"np_random is not a valid PCG64 state"),
    "np_random negative": (_rng_field("inc", -1), r"np_random is not a valid PCG64 state"),
    "np_random key": (_rng_field("inc", None), r"np_random is not a valid PCG64 state"),
    "prev_scores floats": (_put("prev_scores", np.zeros(2)), r"'prev_scores' is a float64 array"),
    "totals shape": (_put("totals", np.zeros(3, np.int64)), r"'totals' has shape \(3,\)"),
    "calls negative": (_put("calls", np.array([0, -1])), r"'calls' = \[0, -1\] is out of range"),
    "hands float": (_put("hands", 1.5), r"'hands' = 1.5 must be an int from 0"),
    "hands negative": (_put("hands", -1), r"'hands' = -1 must be an int"),
    "hands bool": (_put("hands", True), r"'hands' = True must be an int"),
}
KEYS = ("version", "fingerprint", "complete_decks", "engine", "np_random", "prev_scores",
        "totals", "calls", "hands", "applied", "agents", "env_np_random", "ended")
OWN = {   # each env's own keys
    "gym": {
        "env_np_random": (_put("env_np_random", {"bit_generator": "PCG64"}), r"env_np_random"),
        "applied": (_put("applied", "yes"), r"'applied' = 'yes' must be True or False"),
        "ended": (_put("ended", [1, 2]), r"'ended' = \[1, 2\] must be None or"),
    },
    "parallel": {
        "agents str": (_put("agents", "player_0"), r"agents 'player_0' must be a list"),
        "agents unknown": (_put("agents", ["player_9"]), r"agents \['player_9'\] must be a list"),
        "agents twice": (_put("agents", ["player_0", "player_0"]), r"must be a list of distinct"),
        "applied floats": (_put("applied", np.zeros(2)), r"'applied' must be 2 bools"),
        "applied shape": (_put("applied", np.zeros(3, bool)), r"'applied' must be 2 bools"),
    },
}


@pytest.mark.parametrize("kind", list(ENVS))
@pytest.mark.parametrize("case", list(BAD))
def test_a_bad_snapshot_is_refused_and_changes_nothing(kind, case):
    mutate, match = BAD[case]
    env = played(kind)
    bad = diverge(env.get_state())
    mutate(bad, kind)
    refused_and_unchanged(env, bad, match)


@pytest.mark.parametrize("kind, case", [(k, c) for k in OWN for c in OWN[k]])
def test_a_bad_env_key_is_refused_and_changes_nothing(kind, case):
    mutate, match = OWN[kind][case]
    env = played(kind)
    bad = diverge(env.get_state())
    mutate(bad, kind)
    refused_and_unchanged(env, bad, match)


@pytest.mark.parametrize("kind", list(ENVS))
def test_every_missing_key_is_refused(kind):
    env = played(kind)
    snap = env.get_state()
    assert set(snap) <= set(KEYS)
    for key in snap:
        refused_and_unchanged(env, {k: v for k, v in snap.items() if k != key},
                              "get_state" if key != "version" else "no 'version'")
    refused_and_unchanged(env, [snap], r"set_state needs a dict from get_state\(\), got list")


@pytest.mark.parametrize("kind", list(ENVS))
@pytest.mark.parametrize("other, match", [
    (dict(nertz_bonus=11), r"taken under other rules .*nertz_bonus=10"),
    (dict(max_ticks=300), r"taken under other rules .*max_ticks=200"),
    (dict(illegal_move="ignore"), r"taken under other rules"),
    (dict(river_size=5), r"'river' has shape \(1, 2, 5, 13\); this config needs \(1, 2, 4, 13\)"),
])
def test_a_snapshot_of_other_rules_is_refused(kind, other, match):
    env = played(kind)
    foreign = played(kind, **other).get_state()
    refused_and_unchanged(env, foreign, match)


@pytest.mark.parametrize("kind", list(ENVS))
def test_snapshots_carry_version_and_fingerprint_and_round_trip(kind):
    env = played(kind)
    snap = env.get_state()
    assert snap["version"] == SNAPSHOT_VERSION
    assert snap["fingerprint"] == env.engine.config.fingerprint()
    assert snap["complete_decks"] is True
    fresh = ENVS[kind]()
    fresh.reset(seed=99)
    fresh.set_state(snap)
    assert same(fresh.get_state(), snap)
    assert data_equivalence(steps(fresh), steps(env))


def test_a_layout_with_partial_decks_round_trips():
    """A layout leaves cards out of play (docs/api.md): its snapshot says so, and loads."""
    layout = layout_of([team(["KS", "5H"], stream=["9D", "4H"])], lake=[["AH", "2H"]])
    for env in (gym_env(), parallel_env()):
        env.reset(seed=1, options={"layout": layout})
        snap = env.get_state()
        assert snap["complete_decks"] is False
        twin = copy.deepcopy(env)
        env.set_state(snap)
        assert same(env.get_state(), snap)
        assert data_equivalence(steps(env), steps(twin))


# ----------------------------------------------------------------------------- RulesConfig
COSTS = {"flip": 1, "lake": 2, "river": 1, "shift": 3}


def test_move_ticks_cannot_be_changed():
    given = {"lake": 2, "shift": 3}
    c = RulesConfig(move_ticks=given)
    given["lake"] = 9                                   # the caller's dict is not shared
    assert c.move_ticks == COSTS and isinstance(c.move_ticks, FrozenDict)
    m = c.move_ticks
    for mutate in (lambda: m.__setitem__("lake", 5), lambda: m.__delitem__("lake"),
                   lambda: m.update(lake=5), lambda: m.pop("lake"), m.popitem, m.clear,
                   lambda: m.setdefault("teleport", 1), lambda: m.__ior__({"lake": 5})):
        with pytest.raises(TypeError, match="read-only"):
            mutate()
    assert c.move_ticks == COSTS
    costs = c.costs                                      # a fresh dict each time
    costs["lake"] = 7
    assert c.costs == COSTS and type(c.costs) is dict
    assert c.replace(river_size=5).move_ticks == COSTS


@pytest.mark.parametrize("clone", [lambda c: pickle.loads(pickle.dumps(c)), copy.deepcopy,
                                   copy.copy], ids=["pickle", "deepcopy", "copy"])
def test_config_clones_are_equal_frozen_and_fingerprinted_alike(clone):
    for c in (RulesConfig(), RulesConfig(move_ticks=COSTS, speeds=(2, 1, 3), team_sizes=(2, 1),
                                         num_teams=2)):
        d = clone(c)
        assert d == c and hash(d) == hash(c) and d.fingerprint() == c.fingerprint()
        if c.move_ticks is not None:
            assert isinstance(d.move_ticks, FrozenDict)
            with pytest.raises(TypeError):
                d.move_ticks["lake"] = 1


def test_config_as_dict_and_json():
    c = RulesConfig(move_ticks=COSTS, team_sizes=[2, 1])
    assert json.loads(json.dumps(dataclasses.asdict(c)))["move_ticks"] == COSTS
    assert RulesConfig(**c.to_dict()) == c


def test_fingerprint_is_the_rules():
    base = RulesConfig()
    assert RulesConfig(team_sizes=[1, 1]).fingerprint() == RulesConfig(team_sizes=(1, 1)).fingerprint()
    assert RulesConfig(move_ticks={"shift": 3, "lake": 2}).fingerprint() \
        == RulesConfig(move_ticks={"lake": 2, "shift": 3, "flip": 1}).fingerprint()
    seen = {base.fingerprint()}
    for change in (dict(num_teams=3), dict(team_sizes=(2, 1)), dict(river_size=5),
                   dict(stacking=False), dict(flow_rules=False), dict(nertz_bonus=11),
                   dict(lake_points=2), dict(nertz_penalty=3), dict(target_score=100),
                   dict(max_ticks=2999), dict(speeds=(1, 2)), dict(move_ticks={"flip": 2}),
                   dict(alternate_roles=False), dict(auto_nertz=False),
                   dict(illegal_move="ignore"), dict(penalty_points=4)):
        seen.add(base.replace(**change).fingerprint())
    assert len(seen) == 17
    assert len(base.fingerprint()) == 64 and int(base.fingerprint(), 16) >= 0
