"""Learned seats inside numba (agents/learned/core_play.py) play the same moves as the
Python-driven loop: every column of a block of deals equal, near-ties included."""
from __future__ import annotations

import numpy as np
import pytest

import agents.arena.play as play
import agents.learned.core_play as core_play
from agents import make_agent
from agents.arena.play import MatchPlan, Roster, play_deals
from agents.arena.progress import NoBar
from agents.arena.tournament import run_tournament
from agents.base import Agent
from agents.arena.seatings import make_lineups, seatings
from agents.learned.weights import NumpyPolicy, load_weights, save_weights
from nertz_env import RulesConfig
from nertz_env.core.codec import FLIP, WAIT, lake_id
from nertz_env.encoding import SRC_WASTE

LEARNED = "agents/learned/models/learned.npz"
WASTE_LAKE = lake_id.py_func(SRC_WASTE)


def _block(config, specs, deals, mode="hands", batch=4096, max_hands=1):
    objs = [make_agent(s, seed=3) for s in specs]
    seats = [seatings(lu) for lu in make_lineups(len(objs), config.num_teams)]
    plan = MatchPlan(config, seats, 7, mode, max_hands, batch)
    return play_deals(plan, Roster.of(objs), 0, deals, NoBar())


def _both(monkeypatch, config, specs, deals, in_step=None, **kw):
    """(core block, Python block, kernel launches of the core run); in_step: the tables a
    chunk plays in step (core_play.IN_STEP when None)."""
    launches = []
    real = core_play.play_nets

    def counted(*a, **k):
        if in_step is not None:
            k["in_step"] = in_step
        launches.append(real(*a, **k))
        return launches[-1]
    monkeypatch.setattr(core_play, "play_nets", counted)
    fast = _block(config, specs, deals, **kw)
    monkeypatch.setattr(play, "CORE_NETS", False)
    slow = _block(config, specs, deals, **kw)
    return fast, slow, launches


def _equal(a, b):
    for name, x, y in zip(a._fields, a, b):
        np.testing.assert_array_equal(x, y, err_msg=name)


@pytest.mark.parametrize("config, specs, mode", [
    (RulesConfig(num_teams=4), ["learned", "heuristic:style=river-builder", "random"],
     "hands"),
    (RulesConfig(num_teams=2, team_sizes=(2, 2), speeds=(1, 2, 2, 1)),
     ["learned", "learned:teams=2"], "hands"),          # two nets, R4 roles, mixed speeds
    (RulesConfig(num_teams=2, target_score=30), ["learned", "heuristic"], "games"),
])
def test_core_play_equals_the_python_loop(monkeypatch, config, specs, mode):
    fast, slow, launches = _both(monkeypatch, config, specs, 12, mode=mode,
                                 max_hands=8 if mode == "games" else 1)
    assert launches, "the nets were not played in the core"
    _equal(fast, slow)
    if mode == "games":
        assert (fast.hands > 1).any()


@pytest.mark.parametrize("in_step", [1, 2, 3])
def test_tables_played_in_step_take_the_next_table_as_one_ends(monkeypatch, in_step):
    """Few slots for the chunk's tables: a slot that ends its game (whole games of several
    hands, so hands also begin inside a slot) or pauses at a near-tie takes the next table,
    and the rows of one tick's product belong to different tables and two nets. Every
    number equals the Python loop's: a slot keeping the last table's totals, a seat reading
    another row of the product, or a paused table losing its place would differ."""
    config = RulesConfig(num_teams=2, team_sizes=(2, 2), speeds=(1, 2, 2, 1), target_score=40)
    specs = ["learned", "learned:teams=2", "heuristic"]
    fast, slow, launches = _both(monkeypatch, config, specs, 12, in_step=in_step,
                                 mode="games", max_hands=6)
    assert launches and (fast.hands > 1).any()
    _equal(fast, slow)
    monkeypatch.undo()                                              # the core loop again,
    monkeypatch.setattr(core_play, "TIE_GAP", np.float32(0.5))    # pausing at many ticks
    fast, slow, launches = _both(monkeypatch, config, specs, 6, in_step=in_step,
                                 mode="games", max_hands=3)
    assert launches[0] > 3
    _equal(fast, slow)


def test_paused_tables_resume_where_they_stopped(monkeypatch):
    """A tie gap wider than any pauses every table at every choice (Python then plays
    predict's ops, whose move is the legal argmax there too): a launch per tick, the same
    numbers."""
    monkeypatch.setattr(core_play, "TIE_GAP", np.float32(1e30))
    config = RulesConfig(num_teams=3)
    fast, slow, launches = _both(monkeypatch, config, ["learned", "random", "heuristic"], 8)
    assert launches[0] > 10
    _equal(fast, slow)


def _tie_model(tmp_path, hidden=(128, 128), activation="tanh"):
    """A net whose action logits are constant: Flip 0.1, waste>lake one float32 ulp above
    it, the rest far below. predict's float32 normalisations tie the two and pick Flip (the
    first); the raw argmax would play the waste top to the Lake whenever it can."""
    meta, arrays = load_weights(LEARNED)
    rng = np.random.default_rng(0)
    meta = dict(meta, architecture=dict(meta["architecture"], hidden=list(hidden),
                                        activation=activation), constraint=None)
    sizes = [meta["observation_size"], *hidden]
    arrays = {}
    for i in range(len(hidden)):
        arrays[f"hidden{i}_weight"] = rng.normal(0, 0.1, (sizes[i + 1], sizes[i])).astype(
            np.float32)
        arrays[f"hidden{i}_bias"] = np.zeros(sizes[i + 1], np.float32)
    arrays["action_weight"] = np.zeros((meta["action_size"], hidden[-1]), np.float32)
    bias = np.full(meta["action_size"], -20.0, np.float32)
    bias[FLIP] = 0.1
    bias[WASTE_LAKE] = np.nextafter(np.float32(0.1), np.float32(1))
    arrays["action_bias"] = bias
    meta["arrays"] = {k: list(v.shape) for k, v in arrays.items()}
    save_weights(tmp_path / "tie.npz", meta, arrays)
    return tmp_path / "tie.npz"


def test_a_near_tie_is_played_as_predict_plays_it(tmp_path, monkeypatch):
    """Flip and waste>lake tied by predict's ops: the seat must Flip. The fast numpy path and
    the core both see a gap under TIE_GAP and defer to predict's ops; without that deferral
    (either path) the seat plays to the Lake and the scores differ."""
    path = _tie_model(tmp_path)
    policy = NumpyPolicy.load(path)
    masks = np.zeros((3, 322), bool)
    masks[:, [WAIT, FLIP, WASTE_LAKE]] = True
    obs = np.zeros((3, 791), np.float32)
    assert policy.predict_rows(obs, masks).tolist() == [FLIP] * 3
    assert policy.act_batch(obs, masks).tolist() == [FLIP] * 3          # the fast path too
    config = RulesConfig(num_teams=2)
    fast, slow, launches = _both(monkeypatch, config, [f"ppo:{path}", "heuristic"], 4)
    assert launches[0] > 5                          # it paused (nearly) every tick
    _equal(fast, slow)
    monkeypatch.undo()                                       # the core loop again, and
    monkeypatch.setattr(core_play, "TIE_GAP", np.float32(0))        # no deferral: to the Lake
    broken = _block(config, [f"ppo:{path}", "heuristic"], 4)
    assert not np.array_equal(broken.scores, slow.scores)


@pytest.mark.parametrize("hidden", [(32, 32, 32), (48,)])       # two later layers, none
def test_a_relu_net_of_another_shape_plays_in_the_core_too(tmp_path, monkeypatch, hidden):
    meta, arrays = load_weights(_tie_model(tmp_path, hidden=hidden, activation="relu"))
    arrays["action_weight"] = np.random.default_rng(1).normal(
        0, 0.3, arrays["action_weight"].shape).astype(np.float32)   # moves that use the layers
    path = save_weights(tmp_path / "shaped", meta, arrays)[0]
    config = RulesConfig(num_teams=2)
    fast, slow, launches = _both(monkeypatch, config, [f"ppo:{path}", "greedy"], 4)
    assert launches
    _equal(fast, slow)


def test_what_the_core_cannot_play_goes_to_the_python_loop(tmp_path, monkeypatch):
    """A draw (deterministic=false), or nets of different widths at one table: the Python
    loop plays the batch (play_networks declines) and the numbers are its own."""
    config = RulesConfig(num_teams=2)
    small = _tie_model(tmp_path, hidden=(32, 32))
    for specs in ([f"ppo:{LEARNED},deterministic=false", "greedy"],
                  ["learned", f"ppo:{small}"]):
        fast, slow, launches = _both(monkeypatch, config, specs, 3)
        assert not launches
        _equal(fast, slow)


def test_the_learned_agent_plays_each_seat_its_own_model(monkeypatch):
    """`learned` (told its table: one member of its family) is one net at every seat; learned:model=per-table picks a
    model per seat (here the 2-team model for the two-player team and the solo seats: the
    nearest by team count), as its act_batch does row by row; the numbers equal."""
    config = RulesConfig(num_teams=3, team_sizes=(2, 1, 1))
    picks = core_play.networks(make_agent("learned").for_table(config), config)
    assert len(picks) == config.num_seats and len({id(p) for p, _ in picks}) == 1
    assert picks[0][1] != 0                             # the member's constraint rides along
    per = make_agent("learned:model=per-table")
    with pytest.warns(RuntimeWarning):
        keys = [per.model_for(3, 2), per.model_for(3, 1)]
    got = core_play.networks(per.for_table(config), config)    # told its table
    want = [per.policies[keys[0 if config.seat_team.count(t) == 2 else 1]]
            for t in config.seat_team]
    assert [p for p, _ in got] == want
    with pytest.warns(RuntimeWarning, match="no shipped model was trained"):
        fast, slow, launches = _both(monkeypatch, config,
                                     ["learned:model=per-table", "heuristic"], 4)
    assert launches
    _equal(fast, slow)


class _Seen(Agent):
    """heuristic's moves, every observation it is shown kept."""

    def __init__(self):
        self.inner, self.rows, self.name = make_agent("heuristic"), [], "seen"

    def act_batch(self, observations, action_masks):
        self.rows.append(np.array(observations))
        return self.inner.act_batch(observations, action_masks)


def _observations(config, n):
    seen = _Seen()
    run_tournament([seen, "heuristic:style=river-builder", "greedy", "random"], config=config,
                   deals=2, seed=1, progress=False)
    rows = np.concatenate(seen.rows)
    return rows[np.random.default_rng(0).choice(len(rows), n, replace=False)]


def test_the_kernels_logits_stay_far_inside_the_tie_gap(tmp_path):
    """The pauses' premise: the kernel's logits (its own tanh and summation order) are
    within TIE_GAP / 10 of NumpyPolicy's on real observations, for tanh and relu nets; and
    its tanh is within 1e-6 of float64 tanh over [-12, 12]."""
    from agents.learned.weights import TIE_GAP
    from nertz_env.core.observe import OBS_DIM
    x = np.linspace(-12, 12, 200_001, dtype=np.float32)
    assert np.abs(core_play.tanh_rows(x) - np.tanh(x.astype(np.float64))).max() < 1e-6
    rows = _observations(RulesConfig(num_teams=4), 400)
    assert rows.shape[1] == OBS_DIM and (rows != 0).sum(1).mean() > 30
    relu = NumpyPolicy.load(_tie_model(tmp_path, hidden=(64, 64), activation="relu"))
    for policy in (*make_agent("learned").policies.values(), relu):     # both members
        stack = core_play.Stack([(policy, 0)])
        gap = np.abs(core_play.logits(stack, 0, rows) - policy.logits(rows)).max()
        assert gap < TIE_GAP / 10


def _one_seat_in_order(config, tables, ticks, seed):
    """Seat 0's observations [tables * ticks, OBS_DIM] over random play, every tick, table
    by table: the order in which the kernel's seat meets them."""
    from nertz_env.engine import Engine
    eng = Engine(config, n_tables=tables, seed=seed, parallel=False)
    eng.reset(seed=seed)
    rng = np.random.default_rng(seed)
    seq = []
    for _ in range(ticks):
        seq.append(eng.observe(0)[:, 0].copy())
        legal = [np.flatnonzero(eng.masks[e, s]) for e in range(tables)
                 for s in range(config.num_seats)]
        eng.step(np.array([rng.choice(m) for m in legal]).reshape(tables, -1))
    return np.stack(seq, axis=1).reshape(tables * ticks, -1)


def test_the_kernels_first_layer_does_not_drift_over_a_long_game(tmp_path):
    """The kernel keeps each seat's first layer and adds only the entries that changed
    since its last move: over thousands of consecutive rows (a table's whole run, then the
    next table's, never reset) its logits stay within TIE_GAP / 10 of a fresh forward pass,
    and most rows differ from the one before in only a few entries (the update's premise)."""
    from agents.learned.weights import TIE_GAP
    rows = _one_seat_in_order(RulesConfig(num_teams=3), tables=12, ticks=400, seed=2)
    changed = (rows[1:] != rows[:-1]).sum(1)
    moved = changed[changed > 0]         # a table whose hand has ended stays as it is
    assert moved.size > 3000 and np.median(moved) < 20 and changed.max() > 50
    meta, arrays = load_weights(_tie_model(tmp_path, hidden=(64, 64), activation="relu"))
    arrays["action_weight"] = np.random.default_rng(1).normal(
        0, 0.3, arrays["action_weight"].shape).astype(np.float32)   # logits that use the layers
    relu = NumpyPolicy.load(save_weights(tmp_path / "relu", meta, arrays)[0])
    for policy in (*make_agent("learned").policies.values(), relu):
        stack = core_play.Stack([(policy, 0)])
        gap = np.abs(core_play.logits(stack, 0, rows) - policy.logits(rows)).max(1)
        assert gap.max() < TIE_GAP / 10, (gap.argmax(), gap.max())
