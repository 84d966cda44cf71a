"""Worlds (nertz_env/core/worlds.py): hidden cards re-dealt within each team.

- indistinguishable: in every world, every seat's observation and legal moves equal the real
  table's (so no seat could tell a world from the table), and the world is a legal state
  (core/invariants.py, every deck complete), at 2 and 4 teams, solo and two-player teams,
  early and late in a hand (after idle burns too);
- a permutation: each team's hidden cards are the same multiset as the real ones, every
  visible card in place, and the re-deal really moves them (most hidden cards change place);
- NO PEEKING: permuting the true hidden cards of the source table (positions no seat has seen)
  gives byte-identical worlds for the same seed; the same check fails for the oracle belief
  (the true cards), the negative control;
- same seed, same worlds; another seed, other worlds.
"""
from __future__ import annotations

import numpy as np
import pytest
from test_fork import CONFIGS, mid_hand, same_table

from nertz_env import RulesConfig
from nertz_env.core.fork import allocate_rollouts
from nertz_env.core.invariants import check_state
from nertz_env.core.legal import write_table_masks
from nertz_env.core.observe import OBS_DIM, observe_range
from nertz_env.core.state import NertzState
from nertz_env.core.worlds import (BELIEF_ORACLE, BELIEF_UNIFORM, fork_worlds, world_seeds,
                                   world_slots)

PAIRS = RulesConfig(num_teams=3, team_sizes=(2, 1, 2), max_ticks=400)
FLIPPER = "heuristic:style=river-builder,flip=200"   # flips before any free card move: burns
CASES = [(2, 5), (2, 60), (4, 30), ("pairs", 25), ("burns", 150)]


def table_of(case, n=6, seed=0):
    teams, ticks = case
    if teams == "pairs":
        CONFIGS["pairs"] = PAIRS
        return mid_hand("pairs", n, seed=seed, ticks=ticks, bots="heuristic:style=river-builder")
    if teams == "burns":
        play = mid_hand(2, n, seed=seed, ticks=ticks, bots=FLIPPER)
        assert (play.engine.state.burns > 0).any()          # idle burns (R27, R28) happened
        return play
    return mid_hand(teams, n, seed=seed + teams, ticks=ticks)


def hidden_positions(st, e, t):
    """(nertz depths, stream depths) no seat can see at table e, team t (the rules' view)."""
    n, k = int(st.nertz_n[e, t]), int(st.waste_n[e, t])
    return list(range(n - 1)), [d for d in range(int(st.stream_n[e, t])) if d != k - 1]


def hidden_cards(st, e, t):
    nd, sd = hidden_positions(st, e, t)
    return [int(st.nertz[e, t, d]) for d in nd] + [int(st.stream[e, t, d]) for d in sd]


def worlds_of(play, i, W, seed, belief=BELIEF_UNIFORM, src=None):
    ro = allocate_rollouts(play.config, W)
    keys, deals = world_seeds(seed, W)
    fork_worlds(play.engine.state if src is None else src, i, ro.state, ro.scratch, 0, 1, keys,
                deals, belief)
    return ro


def views(st, params, scratch):
    """Every seat's observation and mask at every table of st."""
    E, S = st.tick.shape[0], params.n_seats
    masks = np.zeros((E, S, 322), np.int8)
    for e in range(E):
        write_table_masks(st, params, scratch, e, masks)
    obs = np.zeros((E, S, OBS_DIM), np.float32)
    observe_range(st, params, scratch, obs, 0, E)
    return obs, masks


@pytest.mark.parametrize("case", CASES)
def test_worlds_are_indistinguishable_legal_permutations(case):
    play = table_of(case)
    eng, W = play.engine, 8
    real_obs, real_masks = views(eng.state, eng.params, eng.scratch)
    moved = total = 0
    for i in range(eng.n_tables):
        ro = worlds_of(play, i, W, seed=[i, 7])
        check_state(ro.state, eng.params, complete_decks=True, what="world")
        obs, masks = views(ro.state, eng.params, ro.scratch)
        for w in range(W):
            np.testing.assert_array_equal(obs[w], real_obs[i])
            np.testing.assert_array_equal(masks[w], real_masks[i])
            diff = same_table(eng.state, i, ro.state, w)
            assert set(diff) <= {"nertz", "stream", "rng"}
            for t in range(play.config.num_teams):
                nd, sd = hidden_positions(eng.state, i, t)
                top_n = int(eng.state.nertz_n[i, t]) - 1
                k = int(eng.state.waste_n[i, t])
                assert top_n < 0 or ro.state.nertz[w, t, top_n] == eng.state.nertz[i, t, top_n]
                assert k == 0 or ro.state.stream[w, t, k - 1] == eng.state.stream[i, t, k - 1]
                real, world = hidden_cards(eng.state, i, t), hidden_cards(ro.state, w, t)
                assert sorted(real) == sorted(world)
                moved += sum(a != b for a, b in zip(real, world))
                total += len(real)
    assert moved > 0.8 * total                 # the re-deal does move the hidden cards


def permute_hidden(st, e, seed) -> NertzState:
    """A copy of st with table e's hidden cards shuffled within each team (another true
    arrangement that no seat could tell from this one)."""
    out = NertzState(*(a.copy() for a in st))
    g = np.random.default_rng(seed)
    for t in range(st.nertz_n.shape[1]):
        nd, sd = hidden_positions(st, e, t)
        cards = g.permutation(hidden_cards(st, e, t))
        for d, c in zip(nd + [None] * len(sd), cards[:len(nd)]):
            out.nertz[e, t, d] = c
        for d, c in zip(sd, cards[len(nd):]):
            out.stream[e, t, d] = c
    return out


def ignores_the_hidden_arrangement(play, belief) -> bool:
    """The worlds of every table equal, byte for byte, those of the same table with its true
    hidden cards permuted (same seed)."""
    eng = play.engine
    for i in range(eng.n_tables):
        other = permute_hidden(eng.state, i, seed=i)
        assert same_table(eng.state, i, other, i) != []     # the truth did change
        check_state(other, eng.params, complete_decks=True)
        a = worlds_of(play, i, 6, seed=i, belief=belief)
        b = worlds_of(play, i, 6, seed=i, belief=belief, src=other)
        if any(not np.array_equal(x, y) for x, y in zip(a.state, b.state)):
            return False
    return True


@pytest.mark.parametrize("case", [(2, 30), (4, 30), ("pairs", 25), ("burns", 150)])
def test_no_peeking_and_the_oracle_fails_it(case):
    play = table_of(case, n=5, seed=3)
    assert ignores_the_hidden_arrangement(play, BELIEF_UNIFORM)
    assert not ignores_the_hidden_arrangement(play, BELIEF_ORACLE)     # negative control


def test_same_seed_same_worlds_other_seed_other_worlds():
    play = table_of((4, 30), n=2)
    a, b = worlds_of(play, 1, 5, seed=11), worlds_of(play, 1, 5, seed=11)
    c = worlds_of(play, 1, 5, seed=12)
    assert all(np.array_equal(x, y) for x, y in zip(a.state, b.state))
    assert not np.array_equal(a.state.stream, c.state.stream)
    assert len({a.state.stream[w].tobytes() for w in range(5)}) == 5   # worlds differ


def test_candidates_share_their_world_and_its_key():
    play = table_of((2, 30), n=2)
    ro = allocate_rollouts(play.config, 12)
    keys, deals = world_seeds(5, 3)
    slots = fork_worlds(play.engine.state, 0, ro.state, ro.scratch, 2, 3, keys, deals)
    np.testing.assert_array_equal(slots, world_slots(2, 3, 3))
    for w in range(3):
        for c in range(3):
            assert same_table(ro.state, slots[w, 0], ro.state, slots[w, c]) == []
            assert ro.state.rng[slots[w, c]] == keys[w]
    assert ro.state.tick[0] == 0 and ro.state.tick[11] == 0           # outside: untouched


@pytest.mark.parametrize("kw,match", [
    (dict(belief=7), r"^belief=7 must be one of"),
    (dict(i=9), r"^table i=9 is not a table of the source"),
    (dict(j=3), r"^4 worlds x 2 candidates from slot 3 do not fit the 10 slots"),
    (dict(deal_seeds=np.zeros(3, np.uint64)), r"^keys and deal_seeds must be two uint64"),
])
def test_bad_arguments_are_one_line_errors_and_write_nothing(kw, match):
    play = table_of((2, 5), n=2)
    ro = allocate_rollouts(play.config, 10)
    keys, deals = world_seeds(1, 4)
    args = dict(i=0, j=0, belief=BELIEF_UNIFORM, deal_seeds=deals) | kw
    with pytest.raises(ValueError, match=match):
        fork_worlds(play.engine.state, args["i"], ro.state, ro.scratch, args["j"], 2, keys,
                    args["deal_seeds"], args["belief"])
    assert (ro.state.tick == 0).all() and (ro.state.nertz_n == 0).all()
