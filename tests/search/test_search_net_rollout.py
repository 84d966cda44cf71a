"""Nets inside the rollouts (nertz_env/core/net_policy.py, core/fork.py POLICY_NET seats;
`search:rollout=learned` / `opp=learned`).

- the kernel's forward plays NumpyPolicy's moves (`learned`'s, under its constraint) on real
  observations at 2 and 4 teams and 2-player teams, wherever the top two legal logits are not
  a near tie (gap >= TIE_GAP), under its constraint (the one rule code,
  core/constraint_rules.py);
- FIDELITY: with the true cards and the table's own priority key, a rollout where every seat
  plays the net IS the real continuation of those tables with `learned` in every seat, state
  for state after several horizons and at the hand's end (slots with a near tie excepted:
  the kernel counts them, and they are few);
- no peeking: with opp=learned (and rollout=learned) permuting the never-seen hidden cards
  never changes a move; the oracle still fails that test;
- bad values are one line; the agent's nets change its rollouts' values.
"""
from __future__ import annotations

import numpy as np
import pytest

from agents.base import SeatView
from agents.learned.weights import TIE_GAP
from agents.registry import make_agent
from agents.search import SearchAgent, parse_options
from agents.search.agent import rollout_nets
from nertz_env import Engine, RulesConfig
from nertz_env.core.fork import HORIZON_END, allocate_rollouts, fork_rows, rollout
from nertz_env.core.net_policy import allocate_net_work, rows_moves
from nertz_env.core.policies import POLICY_NET
from nertz_env.core.scoring import relative_points
from nertz_env.core.state import NertzState
from nertz_env.envs.seats import SeatDriver
from tests.search.test_search_agent import FAST, moves_on_twins

CONFIGS = {"2t": RulesConfig(num_teams=2, max_ticks=400),
           "4t": RulesConfig(num_teams=4, max_ticks=300),
           "pairs": RulesConfig(num_teams=3, team_sizes=(2, 1, 2), max_ticks=300)}


class LearnedTables:
    """n tables with `learned` (told the table) in every seat, stepped from Python: every
    seat's observation and mask gathered from the engine, the agent's act_batch, eng.step
    (what the arena's loop does with a learned agent)."""

    def __init__(self, config, n, seed):
        self.config = config
        self.engine = Engine(config, n_tables=n, seed=seed)
        self.engine.reset()
        self.agent = make_agent("learned").for_table(config)
        self.driver = SeatDriver(self.engine)
        S = config.num_seats
        self.rows_t, self.rows_s = np.repeat(np.arange(n), S), np.tile(np.arange(S), n)

    def seen(self):
        return self.driver.gather(self.rows_t, self.rows_s)

    def tick(self):
        obs, masks = self.seen()
        moves = self.agent.act_batch(obs, masks).reshape(self.engine.n_tables, -1)
        self.engine.step(moves.astype(np.int16))
        return obs, masks

    def snapshot(self) -> NertzState:
        return NertzState(*(a.copy() for a in self.engine.state))

    def net(self):
        return SearchAgent(parse_options("search:opp=learned", "opp=learned"),
                           make_base=make_agent).rollout_net(self.config)


@pytest.mark.parametrize("name", list(CONFIGS))
def test_the_kernel_plays_numpypolicys_moves_except_near_ties(name):
    play = LearnedTables(CONFIGS[name], 32, seed=5)
    rows = [play.tick() for _ in range(70)]
    obs = np.concatenate([o for o, _ in rows])
    masks = np.concatenate([m for _, m in rows])
    net, index = play.net()
    want = play.agent.act_batch(obs, masks)
    assert len(set(index.tolist())) == 1     # the family: one member at every seat
    k = int(index[0])
    got, gap = rows_moves(net, k, obs, masks)
    real = np.isfinite(gap)                  # two or more kept moves: the forward ran
    clear = gap >= TIE_GAP
    assert real.sum() > 2000 and (clear & real).sum() > 0.95 * real.sum()
    np.testing.assert_array_equal(got[clear], want[clear])
    assert int(net.bits[k])                  # the shipped net has its constraint


def all_net_rollouts(play, n_groups, work):
    eng = play.engine
    n, S = eng.n_tables, play.config.num_seats
    net, index = play.net()
    ro = allocate_rollouts(play.config, n * n_groups)
    rows = np.tile(np.arange(n), n_groups)
    fork_rows(eng.state, ro.state, rows, np.arange(n * n_groups), eng.state.rng[rows])
    ro.kinds[:] = POLICY_NET
    ro.knobs[:, :, 0] = index[None, :]
    ro.seats[:] = S - 1
    return ro, net


HORIZONS = [1, 5, 15, 40, HORIZON_END]


@pytest.mark.parametrize("name,seed,parallel", [("2t", 21, False), ("4t", 22, True),
                                                ("pairs", 23, False)])
def test_a_net_rollout_is_the_real_continuation_of_learned(name, seed, parallel):
    n = 16
    play = LearnedTables(CONFIGS[name], n, seed=seed)
    for _ in range(20):
        play.tick()
    assert (play.engine.state.status == 0).all()
    work = allocate_net_work(n * len(HORIZONS), 128)
    ro, net = all_net_rollouts(play, len(HORIZONS), work)
    for g, h in enumerate(HORIZONS):
        rollout(ro, play.engine.params, h, lo=g * n, hi=(g + 1) * n, parallel=parallel,
                net=net, work=work)
    real, h = {}, 0
    while not play.engine.hand_over.all():
        play.tick()
        h += 1
        if h in HORIZONS:
            real[h] = play.snapshot()
    for k in HORIZONS:
        real.setdefault(k, play.snapshot())
    final = play.engine.hand_scores().copy()
    fields = NertzState._fields
    near = work.near.reshape(len(HORIZONS), n)
    exact = near[-1] == 0                     # tables whose whole rollout had no near tie
    assert exact.sum() >= n - 2, near
    for g, hz in enumerate(HORIZONS):
        for e in np.flatnonzero(near[g] == 0):
            diff = [f for f, x, y in zip(fields, real[hz], ro.state)
                    if not np.array_equal(x[e], y[g * n + e])]
            assert diff == [], (hz, e, diff)
    end = (len(HORIZONS) - 1) * n
    me = play.config.seat_team[play.config.num_seats - 1]
    want = relative_points(final[:, me], final.sum(axis=1), play.config.num_teams)
    np.testing.assert_array_equal(ro.values[end:end + n][exact], want[exact])
    assert len(set(real[HORIZON_END].tick.tolist())) > 3       # hands of many lengths


@pytest.mark.parametrize("teams", [2, 4])
@pytest.mark.parametrize("extra", ["opp=learned", "base=learned,rollout=learned,opp=learned"])
def test_no_peeking_with_nets_in_the_rollouts(teams, extra):
    real, twin, searched = moves_on_twins(f"search:{FAST},{extra}", teams, n=12,
                                          ticks=(10, 30))
    assert searched > 15
    np.testing.assert_array_equal(real, twin)


def test_the_oracle_with_net_rollouts_fails_the_no_peeking_test():
    real, twin, _ = moves_on_twins(f"search:{FAST},opp=learned,belief=oracle,cheat=yes", 2,
                                   n=12, ticks=(10, 30))
    assert (real != twin).any()


def test_the_net_changes_the_rollouts_values():
    """opp=learned plays the net in the rollouts: the gains differ from opp=river-builder's
    on the same positions, worlds and seeds; rollout=learned too."""
    from tests.search.test_search_agent import positions
    eng, mem = positions(2, 12, 20, seed=4)
    live = np.flatnonzero(eng.state.status == 0)
    rows_t, rows_s = np.repeat(live, 2), np.tile(np.arange(2), live.size)
    obs, masks = SeatDriver(eng).gather(rows_t, rows_s)
    view = SeatView(eng.config, eng.state, mem, np.arange(12, dtype=np.uint64), rows_t, rows_s,
                    obs, masks)
    gains = {}
    for extra in ("", ",opp=learned", ",rollout=learned"):
        res = make_agent(f"search:{FAST}{extra}", seed=1).evaluate(view)
        gains[extra] = np.concatenate([r.gains for r in res])
        assert sum(r.searched for r in res) > 5
    assert not np.array_equal(gains[""], gains[",opp=learned"])
    assert not np.array_equal(gains[""], gains[",rollout=learned"])
    assert not np.array_equal(gains[",opp=learned"], gains[",rollout=learned"])


def test_net_options_and_bad_values_are_one_line():
    o = make_agent("search:opp=learned").options
    assert (o.base, o.rollout, o.opp) == ("heuristic:style=river-builder",
                                          "heuristic:style=river-builder", "learned")
    o = make_agent("search:rollout=learned").options
    assert (o.rollout, o.opp) == ("learned", "learned")              # opp=base: the rollout
    o = make_agent("search:base=learned,rollout=learned,opp=greedy").options
    assert (o.base, o.rollout, o.opp) == ("learned", "learned", "greedy")
    bad = [("search:opp=learned:model=x", "opp='learned:model=x' must be a core bot"),
           ("search:rollout=ppo:x.zip", "rollout='ppo:x.zip' must be a core bot"),
           ("search:opp=random", "or learned (the shipped net)")]
    for spec, words in bad:
        with pytest.raises(ValueError) as err:
            make_agent(spec)
        assert "\n" not in str(err.value) and words in str(err.value), str(err.value)
    with pytest.raises(ValueError) as err:                # no agent maker: cannot build it
        SearchAgent(parse_options("search:opp=learned", "opp=learned"), name="s")
    assert "\n" not in str(err.value) and "opp=learned needs make_base" in str(err.value)

    class NotANet:
        policies = {0: object()}
    with pytest.raises(ValueError) as err:
        rollout_nets(NotANet(), "search:opp=learned")
    assert "\n" not in str(err.value) and "is not a safe-format net" in str(err.value)


def test_net_seats_without_a_net_are_refused_before_any_tick():
    play = LearnedTables(CONFIGS["2t"], 2, seed=1)
    ro, net = all_net_rollouts(play, 1, None)
    before = ro.state.tick.copy()
    with pytest.raises(ValueError) as err:
        rollout(ro, play.engine.params, 5)
    assert "\n" not in str(err.value) and "POLICY_NET seats need `net`" in str(err.value)
    ro.knobs[0, 0, 0] = 7
    with pytest.raises(ValueError) as err:
        rollout(ro, play.engine.params, 5, net=net)
    assert "net index 0..0" in str(err.value)
    ro.knobs[0, 0, 0] = 0
    with pytest.raises(ValueError) as err:
        rollout(ro, play.engine.params, 5, net=net, work=allocate_net_work(1, 128))
    assert "\n" not in str(err.value) and "these slots need 2" in str(err.value)
    np.testing.assert_array_equal(ro.state.tick, before)
    rollout(ro, play.engine.params, 5, net=net)           # work rows made for the call
    assert (ro.state.tick == before + 5).all()
