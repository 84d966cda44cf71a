"""Forks (nertz_env/core/fork.py): a forked slot is the source table exactly, every array of
the state (NertzState's fields, whatever they are), with the slot's own generator key; slots
not named are left alone; a world copied into its candidates' slots of the same state too.

Also the positions the other fork/worlds/rollout tests start from (mid_hand): tables of core
bots stopped in the middle of a hand.
"""
from __future__ import annotations

import numpy as np

from nertz_env import Engine, RulesConfig
from nertz_env.bot_specs import seat_bots
from nertz_env.core.fork import copy_tables, fork_rows, fork_table, state_pairs
from nertz_env.core.policies import policy_actions_range
from nertz_env.core.state import NertzState, allocate_state

CONFIGS = {2: RulesConfig(num_teams=2, max_ticks=400),
           4: RulesConfig(num_teams=4, max_ticks=300)}
BOTS = {2: "heuristic:style=river-builder,heuristic:style=balanced",
        4: "heuristic:style=river-builder,random,greedy,heuristic:style=cautious"}


class Play:
    """An engine of n tables with core bots in its seats, stepped from Python (the engine's
    own tick, not the rollout kernel): the real game that forks and rollouts are held to."""

    def __init__(self, teams: int, n: int, seed: int, bots: str | None = None):
        self.config = CONFIGS[teams]
        self.engine = Engine(self.config, n_tables=n, seed=seed)
        self.engine.reset()
        S = self.config.num_seats
        kinds, knobs, _ = seat_bots(bots or BOTS[teams], S)
        self.kinds = np.repeat(kinds[None], n, axis=0)
        self.knobs = np.repeat(knobs[None], n, axis=0)
        self.policy_rng = np.arange(1, n + 1, dtype=np.uint64) * np.uint64(0x9E3779B97F4A7C15)
        self.actions = np.zeros((n, S), np.int16)

    def bot_moves(self) -> np.ndarray:
        """Every seat's bot move in the current positions (policy_rng advances for random
        bots, as it does when the move is played)."""
        eng = self.engine
        policy_actions_range(eng.state, eng.params, eng.scratch, eng.masks, self.kinds,
                             self.knobs, self.policy_rng, self.actions, 0, eng.n_tables)
        return self.actions.copy()

    def tick(self) -> None:
        self.engine.step(self.bot_moves())

    def snapshot(self) -> NertzState:
        return NertzState(*(a.copy() for a in self.engine.state))


def mid_hand(teams: int, n: int, seed: int, ticks: int, bots: str | None = None) -> Play:
    """n tables of bots after `ticks` ticks of a fresh hand (all still in play)."""
    play = Play(teams, n, seed, bots)
    for _ in range(ticks):
        play.tick()
    assert (play.engine.state.status == 0).all()
    return play


def same_table(a: NertzState, i: int, b: NertzState, j: int) -> list[str]:
    """The fields where table i of a and table j of b differ (rng included)."""
    return [f for f, x, y in zip(NertzState._fields, a, b) if not np.array_equal(x[i], y[j])]


def test_fork_table_copies_every_array_and_sets_the_keys():
    for teams in (2, 4):
        play = mid_hand(teams, 6, seed=teams, ticks=25)
        src = play.snapshot()
        dst = allocate_state(play.config, 20)
        before = NertzState(*(a.copy() for a in dst))
        keys = np.array([11, 12, 13, 14, 15], np.uint64)
        fork_table(src, 3, dst, 7, keys)
        for w in range(5):
            assert same_table(src, 3, dst, 7 + w) == ["rng"]
            assert dst.rng[7 + w] == keys[w]
        for j in list(range(7)) + list(range(12, 20)):            # other slots untouched
            assert same_table(before, j, dst, j) == []
        assert same_table(play.snapshot(), 3, src, 3) == []       # the source is read only


def test_fork_rows_any_tables_into_any_slots_and_within_one_state():
    play = mid_hand(4, 5, seed=9, ticks=40)
    src = play.snapshot()
    dst = allocate_state(play.config, 10)
    rows = np.array([4, 0, 4, 2], np.int64)
    slots = np.array([9, 1, 3, 0], np.int64)
    keys = src.rng[rows].copy()                                   # the tables' own keys
    fork_rows(src, dst, rows, slots, keys)
    for r, s in zip(rows, slots):
        assert same_table(src, r, dst, s) == []
    # a world into its candidates' slots, inside the same state
    fork_rows(dst, dst, [9, 9], [5, 6], np.array([77, 77], np.uint64),
              pairs=state_pairs(dst, dst))
    for s in (5, 6):
        assert same_table(src, 4, dst, s) == ["rng"] and dst.rng[s] == 77


def test_every_field_is_copied_by_walking_the_pairs():
    """The copy walks the pairs it is given, not a list of names: the state's arrays paired in
    another order (reversed) are copied array for array just the same."""
    play = mid_hand(2, 3, seed=5, ticks=10)
    src = play.snapshot()
    dst = allocate_state(play.config, 3)
    copy_tables(tuple(reversed(state_pairs(src, dst))), np.array([2]), np.array([0]))
    assert same_table(src, 2, dst, 0) == []
    assert same_table(allocate_state(play.config, 3), 1, dst, 1) == []
