"""Memory (nertz_env/core/memory.py): what the table has seen of the face-down cards, and the
'memory' belief of core/worlds.py.

- SOUND: after every tick of bot play (2 and 4 teams, random bots, two-player teams, idle and
  Nertz burns), every card the memory places at a Stream position or Nertz depth IS the true
  card there, and it knows hidden positions (not a vacuous memory);
- PUBLIC ONLY: a twin table whose never-seen cards are permuted (the same public history, tick
  for tick: every seat's observation and mask equal) gets a byte-identical memory at every
  tick; a memory that also reads the next stock card fails the same check (negative control);
- COMPLETE where the rules make it so: a pass through the Stream with no play shows exactly
  positions 2, 5, 8, ... and the last one (R15, D8); three burns in a row (R27) have rotated
  every position into view; twelve Nertz burns (R28) every Nertz card;
- it forgets rather than lies: a skipped update or a new deal is remembered afresh;
- the memory belief's worlds: every seat's observation and mask equal the real ones, legal
  (invariants, complete decks), remembered cards in place, the other hidden cards re-dealt;
  NO PEEKING: permuting the hidden cards the memory does not know gives byte-identical worlds
  (the oracle fails it); same seed, same worlds; with nothing remembered, the uniform belief's
  worlds byte for byte; with everything remembered, the true table.
"""
from __future__ import annotations

import numpy as np
import pytest
from test_fork import BOTS, CONFIGS, Play, same_table
from test_worlds import FLIPPER, hidden_cards, hidden_positions, views

from nertz_env import Engine, RulesConfig
from nertz_env.core.codec import FLIP, WAIT
from nertz_env.core.fork import allocate_rollouts
from nertz_env.core.invariants import check_state
from nertz_env.core.memory import (MEM_NERTZ, MEM_STREAM, MEM_STREAM_N, MEM_TICK,
                                   allocate_memory, init_memory, update_memory)
from nertz_env.core.state import NertzState
from nertz_env.core.worlds import (BELIEF_MEMORY, BELIEF_ORACLE, BELIEF_UNIFORM, fork_worlds,
                                   world_seeds)

CASES = {
    "two": (RulesConfig(num_teams=2, max_ticks=400),
            "heuristic:style=river-builder,heuristic:style=balanced"),
    "four": (RulesConfig(num_teams=4, max_ticks=300), BOTS[4]),
    "random": (RulesConfig(num_teams=2, max_ticks=300), "random,greedy"),
    "pairs": (RulesConfig(num_teams=3, team_sizes=(2, 1, 2), max_ticks=400),
              "heuristic:style=river-builder"),
    "burns": (RulesConfig(num_teams=2, max_ticks=600), FLIPPER),
}


class Remembered(Play):
    """A Play (test_fork) whose memory is updated after every tick."""

    def __init__(self, case: str, n: int, seed: int):
        config, bots = CASES[case]
        CONFIGS["memory:" + case] = config
        super().__init__("memory:" + case, n, seed, bots)
        self.memory = allocate_memory(config, n)
        init_memory(self.engine.state, self.memory)

    def tick(self, actions=None):
        actions = self.bot_moves() if actions is None else actions
        self.engine.step(actions)
        update_memory(self.engine.state, self.memory)
        return actions


def stream_part(mem):
    return mem[..., MEM_STREAM:MEM_STREAM + 52]


def nertz_part(mem):
    return mem[..., MEM_NERTZ:MEM_NERTZ + 13]


def known_hidden(st, mem) -> int:
    """Hidden positions (below a Nertz top, in the Stream but its waste top) the memory knows;
    AssertionError if it places a card anywhere the truth holds another (or nothing)."""
    s, q = stream_part(mem), nertz_part(mem)
    ks, kq = s >= 0, q >= 0
    np.testing.assert_array_equal(s[ks], st.stream[ks])
    np.testing.assert_array_equal(q[kq], st.nertz[kq])
    np.testing.assert_array_equal(mem[..., MEM_STREAM_N], st.stream_n)
    np.testing.assert_array_equal(mem[..., MEM_TICK], np.repeat(st.tick[:, None], mem.shape[1], 1))
    d = np.arange(52)
    top = (st.waste_n[..., None] - 1) == d
    hidden = ks & ~top & (d < st.stream_n[..., None])
    below = kq & (np.arange(13) < st.nertz_n[..., None] - 1)
    return int(hidden.sum() + below.sum())


@pytest.mark.parametrize("case", list(CASES))
def test_the_memory_never_lies(case):
    play = Remembered(case, n=6, seed=len(case))
    known = 0
    for _ in range(CASES[case][0].max_ticks):
        play.tick()
        known += known_hidden(play.engine.state, play.memory)
        if (play.engine.state.status != 0).all():
            break
    assert known > 100                   # it does remember hidden positions
    if case == "burns":
        assert play.engine.state.burns.max() >= 1


def never_seen(st_states, n_tables, n_teams):
    """{(e, t): card ids never a waste or Nertz top at a tick boundary} over the states."""
    seen = {(e, t): set() for e in range(n_tables) for t in range(n_teams)}
    for st in st_states:
        for e in range(n_tables):
            for t in range(n_teams):
                k, q = int(st.waste_n[e, t]), int(st.nertz_n[e, t])
                if k:
                    seen[e, t].add(int(st.stream[e, t, k - 1]))
                if q:
                    seen[e, t].add(int(st.nertz[e, t, q - 1]))
    return {key: set(range(52)) - cards for key, cards in seen.items()}


def permute_cards(st, cards_of, seed) -> NertzState:
    """A copy of st with, at every table and team, the cards of cards_of[(e, t)] shuffled among
    the hidden positions where they lie."""
    out = NertzState(*(a.copy() for a in st))
    g = np.random.default_rng(seed)
    for (e, t), cards in cards_of.items():
        nd, sd = hidden_positions(st, e, t)
        places = [("nertz", d) for d in nd if st.nertz[e, t, d] in cards]
        places += [("stream", d) for d in sd if st.stream[e, t, d] in cards]
        values = [int(getattr(st, f)[e, t, d]) for f, d in places]
        for (f, d), c in zip(places, g.permutation(values)):
            getattr(out, f)[e, t, d] = c
    return out


def twin_tables(case, n=4, ticks=150, seed=5):
    """(real, twin, moves): two Remembered tables of `case` freshly dealt alike, the twin's
    cards that no seat sees in `ticks` ticks of bot play (the moves) permuted and its memory
    remembered afresh; playing `moves` at both gives them the same public history."""
    first = Remembered(case, n, seed=seed)
    states, moves = [first.snapshot()], []
    for _ in range(ticks):
        moves.append(first.tick())
        states.append(first.snapshot())
    unseen = never_seen(states, n, first.config.num_teams)
    real = Remembered(case, n, seed=seed)                   # the same deal, played again
    twin = Remembered(case, n, seed=seed)
    twin.engine.write_state(permute_cards(real.snapshot(), unseen, seed=1))
    init_memory(twin.engine.state, twin.memory)
    return real, twin, moves


def peeking(st, mem):
    """A memory that also 'remembers' face-down cards: each team's next stock card s(k) and
    the card under its Nertz top."""
    out = mem.copy()
    for e, t in np.ndindex(*st.waste_n.shape):
        k, n, q = int(st.waste_n[e, t]), int(st.stream_n[e, t]), int(st.nertz_n[e, t])
        if k < n:
            out[e, t, MEM_STREAM + k] = st.stream[e, t, k]
        if q > 1:
            out[e, t, MEM_NERTZ + q - 2] = st.nertz[e, t, q - 2]
    return out


@pytest.mark.parametrize("case", ["two", "four", "pairs", "burns"])
def test_the_memory_reads_public_events_only(case):
    n = 4
    real, twin, moves = twin_tables(case, n)
    for e in range(n):                                      # the truth did change
        assert set(same_table(real.engine.state, e, twin.engine.state, e)) in (
            {"stream"}, {"nertz", "stream"}, {"nertz"})
    peeks_differ = 0
    for a in moves:
        real.tick(a)
        twin.tick(a)
        ro, rm = views(real.engine.state, real.engine.params, real.engine.scratch)
        to, tm = views(twin.engine.state, twin.engine.params, twin.engine.scratch)
        np.testing.assert_array_equal(ro, to)               # the same public history
        np.testing.assert_array_equal(rm, tm)
        np.testing.assert_array_equal(real.memory, twin.memory)
        peeks_differ += not np.array_equal(peeking(real.engine.state, real.memory),
                                           peeking(twin.engine.state, twin.memory))
    assert peeks_differ > 0                                 # negative control: peeking fails


def flip_only(n_tables=3, seed=4):
    """Tables where every seat flips whenever it may (no flow rules: nothing forces a play):
    no card ever moves, the Streams pass and burn (R27), the Nertz piles burn (R28)."""
    config = RulesConfig(num_teams=2, flow_rules=False, max_ticks=3000)
    eng = Engine(config, n_tables=n_tables, seed=seed)
    eng.reset()
    mem = allocate_memory(config, n_tables)
    init_memory(eng.state, mem)

    def tick():
        eng.step(np.where(eng.masks[:, :, FLIP] == 1, FLIP, WAIT).astype(np.int16))
        update_memory(eng.state, mem)
    return eng, mem, tick


def test_what_a_pass_and_the_burns_show():
    eng, mem, tick = flip_only()
    st, E = eng.state, eng.n_tables
    checked = {}
    while len(checked) < E * 6:
        tick()
        known_hidden(st, mem)
        assert (st.lake_n == 0).all()                        # no card ever moved
        for e in range(E):
            b = int(st.burns[e])
            for t in range(2):
                n = int(st.stream_n[e, t])
                known = set(np.flatnonzero(stream_part(mem)[e, t] >= 0))
                nertz = int((nertz_part(mem)[e, t] >= 0).sum())
                if b == 0 and st.turnovers[e, t] == 1 and ("pass", e, t) not in checked:
                    checked["pass", e, t] = True             # R15/D8: every third card, the last
                    assert known == set(range(2, n, 3)) | {n - 1}
                if t == 0 and b in (2, 3, 14, 15) and (b, e) not in checked:
                    checked[b, e] = True
                    for u in range(2):
                        full = set(np.flatnonzero(stream_part(mem)[e, u] >= 0))
                        assert (full == set(range(n))) == (b >= 3)
                    assert nertz == {2: 1, 3: 1, 14: 12, 15: 13}[b]


def test_a_full_memory_gives_the_true_table():
    eng, mem, tick = flip_only(n_tables=1, seed=7)
    while eng.state.burns[0] < 15:
        tick()
    assert (stream_part(mem)[..., :35] >= 0).all() and (nertz_part(mem) >= 0).all()
    ro = worlds_of(eng, mem, 0, 4, seed=3)
    for w in range(4):
        assert same_table(eng.state, 0, ro.state, w) == ["rng"]


def test_it_forgets_rather_than_lies():
    play = Remembered("two", n=3, seed=2)
    for _ in range(40):
        play.tick()
    assert known_hidden(play.engine.state, play.memory) > 0
    play.engine.step(play.bot_moves())                      # a tick the memory missed
    play.engine.step(play.bot_moves())
    fresh = allocate_memory(play.config, 3)
    init_memory(play.engine.state, fresh)
    update_memory(play.engine.state, play.memory)
    np.testing.assert_array_equal(play.memory, fresh)
    for _ in range(5):
        play.tick()
    play.engine.reset(seed=9)                               # a new deal, tick 0
    update_memory(play.engine.state, play.memory)
    init_memory(play.engine.state, fresh)
    np.testing.assert_array_equal(play.memory, fresh)
    play.engine.reset(seed=10)                              # dealt again at the same tick
    update_memory(play.engine.state, play.memory)
    init_memory(play.engine.state, fresh)
    np.testing.assert_array_equal(play.memory, fresh)
    known_hidden(play.engine.state, play.memory)


# ---------------------------------------------------------------------------- the belief
def worlds_of(eng, mem, i, W, seed, belief=BELIEF_MEMORY, src=None):
    ro = allocate_rollouts(eng.config, W)
    keys, deals = world_seeds(seed, W)
    fork_worlds(eng.state if src is None else src, i, ro.state, ro.scratch, 0, 1, keys, deals,
                belief, memory=mem)
    return ro


def remembered(case, ticks, n=5, seed=3):
    play = Remembered(case, n, seed)
    for _ in range(ticks):
        play.tick()
    assert (play.engine.state.status == 0).all()
    return play


MID = [("two", 60), ("four", 30), ("pairs", 15), ("burns", 150)]


@pytest.mark.parametrize("case,ticks", MID)
def test_memory_worlds_are_indistinguishable_and_keep_what_is_remembered(case, ticks):
    play = remembered(case, ticks)
    eng, mem, W = play.engine, play.memory, 6
    assert known_hidden(eng.state, mem) > 0
    real_obs, real_masks = views(eng.state, eng.params, eng.scratch)
    moved = unknown = 0
    for i in range(eng.n_tables):
        ro = worlds_of(eng, mem, i, W, seed=[i, 7])
        check_state(ro.state, eng.params, complete_decks=True, what="world")
        obs, masks = views(ro.state, eng.params, ro.scratch)
        for w in range(W):
            np.testing.assert_array_equal(obs[w], real_obs[i])
            np.testing.assert_array_equal(masks[w], real_masks[i])
            assert set(same_table(eng.state, i, ro.state, w)) <= {"nertz", "stream", "rng"}
            for t in range(play.config.num_teams):
                assert sorted(hidden_cards(eng.state, i, t)) == sorted(hidden_cards(ro.state, w, t))
                nd, sd = hidden_positions(eng.state, i, t)
                for f, part, ds in (("nertz", nertz_part, nd), ("stream", stream_part, sd)):
                    real, world = getattr(eng.state, f)[i, t], getattr(ro.state, f)[w, t]
                    for d in ds:
                        if part(mem)[i, t, d] >= 0:          # remembered: in place
                            assert world[d] == part(mem)[i, t, d] == real[d]
                        else:
                            unknown += 1
                            moved += world[d] != real[d]
    assert moved > 0.7 * unknown


def unknown_cards(st, mem, e):
    """{(e, t): the hidden cards the memory does not know} at table e."""
    out = {}
    for t in range(st.nertz_n.shape[1]):
        nd, sd = hidden_positions(st, e, t)
        out[e, t] = ({int(st.nertz[e, t, d]) for d in nd if nertz_part(mem)[e, t, d] < 0}
                     | {int(st.stream[e, t, d]) for d in sd if stream_part(mem)[e, t, d] < 0})
    return out


@pytest.mark.parametrize("case,ticks", MID)
def test_memory_worlds_do_not_peek_and_the_oracle_fails_it(case, ticks):
    play = remembered(case, ticks, n=4, seed=8)
    eng, mem = play.engine, play.memory
    for belief, peeks in ((BELIEF_MEMORY, False), (BELIEF_ORACLE, True)):
        differ = False
        for i in range(eng.n_tables):
            other = permute_cards(eng.state, unknown_cards(eng.state, mem, i), seed=i)
            assert same_table(eng.state, i, other, i) != []   # the truth did change
            check_state(other, eng.params, complete_decks=True)
            known_hidden(other, mem)                          # the memory is as true there
            a = worlds_of(eng, mem, i, 5, seed=i, belief=belief)
            b = worlds_of(eng, mem, i, 5, seed=i, belief=belief, src=other)
            differ |= any(not np.array_equal(x, y) for x, y in zip(a.state, b.state))
        assert differ == peeks


def test_same_seed_same_worlds_and_nothing_remembered_is_the_uniform_belief():
    play = remembered("four", 30, n=2)
    eng, mem = play.engine, play.memory
    a, b = worlds_of(eng, mem, 1, 5, seed=11), worlds_of(eng, mem, 1, 5, seed=11)
    c = worlds_of(eng, mem, 1, 5, seed=12)
    assert all(np.array_equal(x, y) for x, y in zip(a.state, b.state))
    assert not np.array_equal(a.state.stream, c.state.stream)
    fresh = allocate_memory(play.config, 2)
    init_memory(eng.state, fresh)                           # remembers only what is visible
    m = worlds_of(eng, fresh, 1, 5, seed=11)
    u = worlds_of(eng, fresh, 1, 5, seed=11, belief=BELIEF_UNIFORM)
    assert all(np.array_equal(x, y) for x, y in zip(m.state, u.state))
    assert not np.array_equal(m.state.stream, a.state.stream)    # the memory does matter


def test_a_memory_not_of_the_position_is_a_one_line_error_and_writes_nothing():
    play = remembered("two", 10, n=2)
    eng, mem = play.engine, play.memory
    stale = mem.copy()
    play.tick()
    for bad, match in ((None, r"^memory must be an int32 array \[tables, 2, 71\]"),
                       (mem[:, :1], r"^memory must be an int32 array"),
                       (mem.astype(np.int64), r"^memory must be an int32 array"),
                       (stale, r"^memory of table 1 is not of its position \(tick 11, hand 0\)")):
        ro = allocate_rollouts(play.config, 4)
        keys, deals = world_seeds(1, 4)
        with pytest.raises(ValueError, match=match):
            fork_worlds(eng.state, 1, ro.state, ro.scratch, 0, 1, keys, deals, BELIEF_MEMORY,
                        memory=bad)
        assert (ro.state.tick == 0).all() and (ro.state.nertz_n == 0).all()
