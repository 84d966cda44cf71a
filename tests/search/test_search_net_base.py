"""base=learned: the search's base move from the shipped net on the seat's observation, the
rollouts by a core bot (rollout=, river-builder by default)."""
from __future__ import annotations

import numpy as np
import pytest

from agents.arena.tournament import run_tournament
from agents.registry import make_agent
from tests.search.test_search_agent import FAST, RB, _same_records


@pytest.mark.filterwarnings("error::RuntimeWarning")      # the net is told its table
@pytest.mark.parametrize("teams", [2, 4])
def test_an_infinite_margin_over_the_net_base_plays_exactly_learned(teams):
    agent = make_agent(f"search:base=learned,{FAST},margin=inf")
    s = run_tournament([agent, "learned"], teams=teams, deals=3, seed=4, progress=False)
    b = run_tournament(["learned", "learned"], teams=teams, deals=3, seed=4, progress=False)
    assert agent.decisions > 50
    _same_records(s, b)


@pytest.mark.filterwarnings("error::RuntimeWarning")
def test_the_net_base_searches_and_deviates():
    agent = make_agent(f"search:base=learned,{FAST}", seed=2)
    res = run_tournament([agent, "learned"], teams=2, deals=3, seed=4, progress=False)
    b = run_tournament(["learned", "learned"], teams=2, deals=3, seed=4, progress=False)
    assert agent.deviations > 0
    assert not np.array_equal(res.records.score, b.records.score)


def test_net_base_options():
    o = make_agent("search:base=learned").options
    assert (o.base, o.rollout, o.opp) == ("learned", RB, RB)
    o = make_agent("search:base=learned,rollout=greedy,opp=cautious").options
    assert (o.base, o.rollout, o.opp) == ("learned", "greedy", "heuristic:style=cautious")
    o = make_agent("search:base=cautious").options               # rollout: the base
    assert o.rollout == o.opp == "heuristic:style=cautious"
    for spec, words in (("search:rollout=ppo:x", "rollout='ppo:x' must be a core bot"),
                        ("search:base=learned:model=x", "base='learned:model=x' must be")):
        with pytest.raises(ValueError) as err:
            make_agent(spec)
        assert "\n" not in str(err.value) and words in str(err.value)
