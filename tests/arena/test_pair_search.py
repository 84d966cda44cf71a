"""A pair (`pair:NERTZ&STREAM`) with a `search:` member in whole games with roles swapping
(R4): the arena's Python loop plays each row by the member of its role and passes a searching
member its seat view (agents/arena/seat_loop.py pair_actions); Pair.act_batch has no view."""
from __future__ import annotations

import numpy as np

from agents.arena.tournament import run_tournament
from agents.registry import make_agent
from nertz_env.config import RulesConfig

RB = "heuristic:style=river-builder"
SEARCH = "search:worlds=2,horizon=5"
PAIRS = RulesConfig(num_teams=2, team_sizes=(2, 2))           # alternate_roles: on
KW = dict(config=PAIRS, deals=2, seed=3, mode="games", max_game_hands=3, progress=False)


def _same(a, b):
    for f in ("score", "called", "win"):
        np.testing.assert_array_equal(getattr(a.records, f), getattr(b.records, f))
    np.testing.assert_array_equal(a.ticks, b.ticks)


def test_an_infinite_margin_member_plays_its_base_bots_games():
    """Both roles: search (margin=inf) as the Stream member, then as the Nertz member; the
    games equal the pair with river-builder in that place, record for record."""
    for spec, base in ((f"pair:greedy&{SEARCH},margin=inf", f"pair:greedy&{RB}"),
                       (f"pair:{SEARCH},margin=inf&greedy", f"pair:{RB}&greedy")):
        pair = make_agent(spec)
        got = run_tournament([pair, "heuristic"], **KW)
        want = run_tournament([base, "heuristic"], **KW)
        member = pair.stream if spec.startswith("pair:greedy") else pair.nertz
        assert member.decisions > 10 and member.deviations == 0
        assert (got.hands > 1).any()                          # roles did swap
        _same(got, want)


def test_a_searching_member_plays_same_seed_same_records():
    runs = [run_tournament([f"pair:greedy&{SEARCH}", "heuristic"], **KW) for _ in range(2)]
    _same(*runs)
    base = run_tournament([f"pair:greedy&{RB}", "heuristic"], **KW)
    assert not np.array_equal(runs[0].records.score, base.records.score)
