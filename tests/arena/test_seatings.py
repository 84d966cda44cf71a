"""Balanced seatings (agents/arena/seatings.py, seatings()): every deal is played at distinct
seatings; over a deal's seatings every agent holds every team position equally often and
every ordered pair of distinct agents sits at every ordered pair of distinct positions
equally often (exact, no bound needed: the design's group is 2-transitive)."""
from __future__ import annotations

import itertools
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agents.arena.seatings import make_lineups, position_group, seatings
from agents.arena.tournament import run_tournament
from nertz_env import RulesConfig


def _check_balanced(lineup, seats):
    T = len(lineup)
    agents = sorted(set(lineup))
    assert seats[0] == tuple(lineup)
    assert len(set(seats)) == len(seats), "a seating repeats"
    assert all(sorted(set(s)) == agents and len(s) == T for s in seats)
    at = Counter((a, p) for s in seats for p, a in enumerate(s))
    assert len({at[a, p] for a in agents for p in range(T)}) == 1, at
    if len(agents) >= 2:
        pairs = Counter((s[p], s[q], p, q) for s in seats
                        for p, q in itertools.permutations(range(T), 2) if s[p] != s[q])
        every = [pairs[a, b, p, q] for a, b in itertools.permutations(agents, 2)
                 for p, q in itertools.permutations(range(T), 2)]
        assert min(every) == max(every) > 0, (min(every), max(every))


@settings(max_examples=60, deadline=None)
@given(n_agents=st.integers(2, 6), n_teams=st.integers(2, 6),
       fmt=st.sampled_from(["auto", "round-robin", "all-play-all"]))
def test_seatings_are_distinct_and_balanced(n_agents, n_teams, fmt):
    if fmt == "round-robin" and n_agents < n_teams or fmt == "all-play-all" and n_agents > n_teams:
        return
    for lineup in make_lineups(n_agents, n_teams, fmt):
        _check_balanced(lineup, seatings(lineup))


def test_seatings_every_table_size_and_format():
    """Exhaustive over 2..8 agents and 2..8 teams (the first lineups of each format)."""
    for n, T in itertools.product(range(2, 9), range(2, 9)):
        for fmt in ("round-robin", "all-play-all"):
            if fmt == "round-robin" and n < T or fmt == "all-play-all" and n > T:
                continue
            for lineup in make_lineups(n, T, fmt)[:2]:
                _check_balanced(lineup, seatings(lineup))


def test_design_sizes():
    """T(T-1) seatings for T distinct agents (60 at 6 teams); 2 agents: no copies of one table
    (A,B,A,B has 6 distinct seatings; the 3-team table alternates A,A,B and A,B,B)."""
    assert [len(position_group(t)) for t in range(2, 9)] == [2, 6, 12, 20, 60, 42, 56]
    assert len(seatings((0, 1, 2, 3))) == 12 and len(seatings(range(6))) == 60
    assert len(seatings((0, 1, 0, 1))) == 6
    assert sorted(seatings((0, 1, 0))) == sorted(set(itertools.permutations((0, 0, 1)))
                                                 | set(itertools.permutations((0, 1, 1))))


@settings(max_examples=12, deadline=None)
@given(data=st.data())
def test_tournament_tables_follow_the_design(data):
    """Whole tournaments, also with two-player teams and speeds: each deal's rows are the
    lineup's seatings, distinct and balanced, and hands_played counts each once."""
    T = data.draw(st.integers(2, 4), label="teams")
    sizes = tuple(data.draw(st.lists(st.integers(1, 2), min_size=T, max_size=T), label="sizes"))
    speeds = tuple(data.draw(st.lists(st.integers(1, 2), min_size=sum(sizes),
                                      max_size=sum(sizes)), label="speeds"))
    n = data.draw(st.integers(2, 4), label="agents")
    cfg = RulesConfig(num_teams=T, team_sizes=sizes, speeds=speeds, max_ticks=40)
    bots = ["greedy", "heuristic", "random", "heuristic:style=cautious"][:n]
    res = run_tournament(bots, config=cfg, deals=2, seed=1, progress=False)
    rec = res.records
    assert res.hands_played == len(rec)
    for li, lineup in enumerate(res.lineups):
        for d in range(2):
            sel = (rec.lineup == li) & (rec.deal == d)
            rows = [tuple(r) for r in rec.agent[sel].tolist()]
            assert rows == seatings(lineup)
            assert rec.rotation[sel].tolist() == list(range(len(rows)))
            _check_balanced(lineup, rows)


def test_cyclic_rotations_fail_the_check():
    """The check can fail: the old design (cyclic rotations of the lineup) repeats tables
    and leaves relative arrangements unplayed."""
    for lineup in [(0, 1, 0, 1), (0, 1, 2, 3), (0, 1, 0)]:
        T = len(lineup)
        cyclic = [tuple(lineup[(p + r) % T] for p in range(T)) for r in range(T)]
        with pytest.raises(AssertionError):
            _check_balanced(lineup, cyclic)
