"""`search:` without worlds= plays the table's default (issue 42): 32 worlds at 2 teams, 64 at
3 or more (whatever the team sizes); worlds=N always wins. The default is resolved from the
rules of the table each decision's seat view shows (agents/search/spec.py table_worlds), so
tournaments, experiments and the envs' opponents all get it; the spec is kept as written."""
from __future__ import annotations

import numpy as np
import pytest

import agents.search.agent as search_agent
from agents.arena.tournament import run_tournament
from agents.registry import make_agent
from nertz_env import NertzGymEnv, RulesConfig

TABLES = [  # (rules, the default worlds there)
    (RulesConfig(num_teams=2), 32),
    (RulesConfig(num_teams=2, team_sizes=(2, 2)), 32),
    (RulesConfig(num_teams=3), 64),
    (RulesConfig(num_teams=3, team_sizes=(2, 1, 2)), 64),
    (RulesConfig(num_teams=4), 64),
    (RulesConfig(num_teams=4, team_sizes=(2, 2, 2, 2)), 64),
    (RulesConfig(num_teams=8), 64),
]
SHORT = "horizon=3"          # cheap rollouts: the worlds are what is checked


@pytest.fixture
def worlds_played(monkeypatch):
    """The W of every searched decision (the count the agent asks world_seeds for)."""
    seen = []
    real = search_agent.world_seeds

    def counted(key, W):
        seen.append(int(W))
        return real(key, W)

    monkeypatch.setattr(search_agent, "world_seeds", counted)
    return seen


@pytest.mark.parametrize("config,want", TABLES,
                         ids=lambda x: x if isinstance(x, int) else
                         f"{x.num_teams}t{''.join(map(str, x.sizes))}")
def test_the_default_follows_the_tables_teams(config, want):
    agent = make_agent("search")
    assert agent.options.worlds is None            # left to the table, not fixed at parsing
    assert agent.worlds_at(config) == want


@pytest.mark.parametrize("worlds", [1, 2, 32, 64, 100])
def test_an_explicit_worlds_wins_at_every_table(worlds):
    agent = make_agent(f"search:worlds={worlds},se=1" if worlds > 1 else "search:worlds=1")
    assert agent.options.worlds == worlds
    assert [agent.worlds_at(c) for c, _ in TABLES] == [worlds] * len(TABLES)


def test_se_needs_two_worlds_only_when_worlds_is_given():
    make_agent("search:se=1")                      # the table's default is 32 or 64
    with pytest.raises(ValueError, match="se='1' needs worlds >= 2"):
        make_agent("search:worlds=1,se=1")


@pytest.mark.parametrize("teams,want", [(2, 32), (3, 64)])
def test_a_tournament_plays_the_tables_default(teams, want, worlds_played):
    """End to end through run_tournament (two deals, hands cut at 40 ticks): every searched
    decision used the table's default, the records equal the spec that names it, and the
    result keeps the spec as written."""
    config = RulesConfig(num_teams=teams, max_ticks=40)
    kw = dict(config=config, deals=2, seed=3, progress=False)
    got = run_tournament([f"search:{SHORT}", "greedy"], **kw)
    assert worlds_played and set(worlds_played) == {want}
    named = run_tournament([f"search:{SHORT},worlds={want}", "greedy"], **kw)
    for f in ("score", "called", "win"):
        np.testing.assert_array_equal(getattr(got.records, f), getattr(named.records, f))
    np.testing.assert_array_equal(got.ticks, named.ticks)
    assert got.names[0] == f"search:{SHORT}"     # the files name the spec as written
    worlds_played.clear()
    run_tournament([f"search:{SHORT},worlds=5", "greedy"], **kw)
    assert set(worlds_played) == {5}                # explicit wins in the tournament too


@pytest.mark.parametrize("teams,want", [(2, 32), (4, 64)])
def test_an_env_opponent_plays_the_tables_default(teams, want, worlds_played):
    """NertzGymEnv with search opponents: a few ticks, every search at the table's worlds."""
    env = NertzGymEnv(num_teams=teams, opponents=make_agent(f"search:{SHORT}"))
    obs, info = env.reset(seed=7)
    for _ in range(12):
        mask = info["action_mask"]
        obs, _, term, trunc, info = env.step(int(np.flatnonzero(mask)[-1]))
        if term or trunc:
            break
    assert worlds_played and set(worlds_played) == {want}
