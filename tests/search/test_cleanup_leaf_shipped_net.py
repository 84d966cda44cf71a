"""train/leaf_value.py takes the shipped `learned` net's rollout arrays directly
(shipped_net: the family told the table, core_networks, net_arrays), as a
`search:opp=learned` agent's rollout_net makes them, and plays its hands without making a
search agent."""
from __future__ import annotations

import numpy as np
import pytest

from agents.registry import make_agent
from agents.search import SearchAgent
from nertz_env.config import RulesConfig
from train import leaf_value


@pytest.mark.parametrize("config", [RulesConfig(num_teams=2), RulesConfig(num_teams=4),
                                    RulesConfig(num_teams=3, team_sizes=(2, 1, 1))])
def test_the_arrays_are_the_search_agents_rollout_arrays(config):
    net, index = leaf_value.shipped_net(config)
    want_net, want_index = make_agent("search:opp=learned", seed=0).rollout_net(config)
    np.testing.assert_array_equal(index, want_index)
    assert index.dtype == want_index.dtype and len(index) == config.num_seats
    for field, got, want in zip(net._fields, net, want_net):
        assert np.asarray(got).dtype == np.asarray(want).dtype, field
        np.testing.assert_array_equal(got, want, err_msg=field)


def test_the_hands_are_played_without_a_search_agent(monkeypatch):
    def refuse(self, *args, **kw):
        raise AssertionError("train/leaf_value.py made a search agent")

    monkeypatch.setattr(SearchAgent, "__init__", refuse)
    x, y, deal, rel = leaf_value.play_hands(2, 2, 20, 0)
    assert len(x) == len(y) == len(deal) == len(rel) > 0
