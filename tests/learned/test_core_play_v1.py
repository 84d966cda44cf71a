"""Nets that read the v1 observation (v0's vector, then what the seat remembers) play inside the
net kernel (agents/learned/core_play.py), which keeps the tables' public memory itself: every
column of a block of deals equals the Python loop's (agents/arena/seat_loop.py, rows written
by observe_v1_rows from the memory it keeps), at 2 and 4 teams, a two-player team table and
whole games, near-ties included. The net's memory weights are non-zero and change its moves,
so a kernel that fed it zeros, or a memory kept wrongly, would differ."""
from __future__ import annotations

import numpy as np
import pytest

import agents.arena.play as play
import agents.learned.core_play as core_play
from agents import make_agent
from agents.arena.play import MatchPlan, Roster, play_deals
from agents.arena.progress import NoBar
from agents.arena.tournament import run_tournament
from agents.learned.v1 import widen_model
from agents.learned.weights import load_weights, save_weights
from agents.registry import MODELS_DIR
from nertz_env import RulesConfig
from nertz_env.core.observe import OBS_DIM
from nertz_env.core.observe_memory import V1_OBS_DIM
from tests.search.test_search_agent import _same_records

RB = "heuristic:style=river-builder"


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """{name: .npz path}: wide (the stacking model widened: zero memory weights) and mem (wide
    with seeded non-zero memory weights, so the block changes its moves)."""
    d = tmp_path_factory.mktemp("v1core")
    widen_model(MODELS_DIR / "learned_stacking.npz", d / "wide")
    meta, arrays = load_weights(d / "wide.npz")
    w = arrays["hidden0_weight"].copy()
    w[:, OBS_DIM:] = np.random.default_rng(5).normal(0, 1.0, (w.shape[0], V1_OBS_DIM - OBS_DIM))
    save_weights(d / "mem", meta, dict(arrays, hidden0_weight=w))
    return {"wide": d / "wide.npz", "mem": d / "mem.npz"}


def _block(config, specs, seats, deals, mode="hands", max_hands=1):
    """The Block of `deals` deals at the given seatings (agent index per team)."""
    objs = [make_agent(s, seed=3) for s in specs]
    plan = MatchPlan(config, [list(seats)], 7, mode, max_hands, 4096)
    return play_deals(plan, Roster.of(objs), 0, deals, NoBar())


def _both(monkeypatch, config, specs, seats, deals, **kw):
    """(kernel block, Python block, the kernel's launches, the stacks it played)."""
    launches, stacks = [], []
    real = core_play.play_nets

    def counted(eng, stack, *a, **k):
        stacks.append(stack)
        launches.append(real(eng, stack, *a, **k))
        return launches[-1]
    monkeypatch.setattr(core_play, "play_nets", counted)
    fast = _block(config, specs, seats, deals, **kw)
    monkeypatch.setattr(play, "CORE_NETS", False)
    slow = _block(config, specs, seats, deals, **kw)
    monkeypatch.setattr(play, "CORE_NETS", True)
    return fast, slow, launches, stacks


def _equal(a, b):
    for name, x, y in zip(a._fields, a, b):
        np.testing.assert_array_equal(x, y, err_msg=name)


ONE_AMONG_RB = [(0, 1, 1, 1), (1, 0, 1, 1), (1, 1, 0, 1), (1, 1, 1, 0)]
CASES = {
    "2 teams against learned": (RulesConfig(num_teams=2), ["learned"], [(0, 1), (1, 0)],
                                12, {}),
    "one seat among river-builders, 4 teams": (RulesConfig(num_teams=4), [RB], ONE_AMONG_RB,
                                               4, {}),
    "two-player teams, mixed speeds, games": (
        RulesConfig(num_teams=2, team_sizes=(2, 2), speeds=(1, 2, 2, 1), target_score=40),
        ["learned"], [(0, 1), (1, 0)], 6, dict(mode="games", max_hands=4)),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_v1_net_plays_the_python_loops_numbers_in_the_kernel(monkeypatch, models, case):
    config, others, seats, deals, kw = CASES[case]
    specs = [f"ppo:{models['mem']}", *others]
    fast, slow, launches, stacks = _both(monkeypatch, config, specs, seats, deals, **kw)
    assert launches, "the v1 net was not played in the kernel"
    assert any(s.reads_memory.any() for s in stacks)
    _equal(fast, slow)
    if kw:
        assert (fast.hands > 1).any()                 # hands dealt again inside the kernel
    zero = _block(config, [f"ppo:{models['wide']}", *others], seats, deals, **kw)
    assert not np.array_equal(zero.scores, fast.scores), "the memory block changed no move"


def test_v0_and_v1_nets_share_one_kernel_and_its_pauses(monkeypatch, models):
    """The v1 net beside `learned` (a v0 net: its first layer padded with zeros over the
    block) in one stack, at a tie gap that pauses tables at many ticks: Python then plays
    the paused seats from the rows the kernel wrote (the v1 net's with its block), and the
    tables resume with their memory where they stopped. Every column equals the Python
    loop's."""
    monkeypatch.setattr(core_play, "TIE_GAP", np.float32(0.5))
    config = RulesConfig(num_teams=3, target_score=40)
    specs = [f"ppo:{models['mem']}", "learned", "heuristic"]
    seats = [(0, 1, 2), (1, 2, 0), (2, 0, 1)]
    fast, slow, launches, stacks = _both(monkeypatch, config, specs, seats, 4, mode="games",
                                         max_hands=3)
    assert launches[0] > 3
    assert sorted(stacks[0].widths) == [OBS_DIM, V1_OBS_DIM]
    _equal(fast, slow)


def test_the_tournaments_records_are_the_python_loops(monkeypatch, models):
    """`nertz tournament`'s records (scores, calls, wins, ticks) of the v1 net against
    `learned`, kernel and Python loop, record for record."""
    a = run_tournament([f"ppo:{models['mem']}", "learned"], teams=2, deals=6, seed=4,
                       progress=False)
    monkeypatch.setattr(play, "CORE_NETS", False)
    b = run_tournament([f"ppo:{models['mem']}", "learned"], teams=2, deals=6, seed=4,
                       progress=False)
    _same_records(a, b)


def test_a_net_whose_width_is_not_its_versions_stays_in_the_python_loop(models):
    """networks() plays a v1 net only where its input is V1_OBS_DIM wide (and a v0 net's
    OBS_DIM): else None, and the Python loop plays it."""
    agent = make_agent(f"ppo:{models['mem']}")
    config = RulesConfig(num_teams=2)
    assert core_play.networks(agent.for_table(config), config) is not None
    agent.policy.obs_size = OBS_DIM              # says v1, reads another width
    assert core_play.networks(agent.for_table(config), config) is None
