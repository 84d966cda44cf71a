"""One declared way a table reaches an agent (#41 item 4): Agent.for_table(config), which
the arena calls on every agent of a run (agents/arena/play.py Roster.for_table). A learned
agent hears its table only there: the net kernel's picks (core_networks, no argument) are
for the table it was told, and an agent never told plays from Python."""
from __future__ import annotations

import inspect

import pytest

import agents.arena.play as play
import agents.learned.core_play as core_play
from agents import make_agent
from agents.arena.play import MatchPlan, Roster, play_deals
from agents.arena.progress import NoBar
from agents.arena.seatings import make_lineups, seatings
from agents.base import Agent
from agents.learned.shipped import LearnedAgent
from nertz_env import RulesConfig

LEARNED = "agents/learned/models/learned.npz"


def _play(config, specs, deals=2):
    objs = [make_agent(s, seed=3) for s in specs]
    seats = [seatings(lu) for lu in make_lineups(len(objs), config.num_teams)]
    return play_deals(MatchPlan(config, seats, 7, "hands", 1, 64), Roster.of(objs), 0, deals,
                      NoBar())


def _kernel_tables(monkeypatch):
    """The (agent, table) pairs the arena's net kernel was given, appended as it runs."""
    seen = []
    real = core_play.networks

    def spy(agent, config):
        picks = real(agent, config)
        seen.append((agent, getattr(agent, "table", None), config, picks is not None))
        return picks
    monkeypatch.setattr(core_play, "networks", spy)
    return seen


@pytest.mark.filterwarnings("ignore:agent 'learned.model=per-table'")   # nearest model
@pytest.mark.parametrize("spec", ["learned", "learned:model=per-table", f"ppo:{LEARNED}"])
def test_a_net_agent_plays_in_the_kernel_only_once_told_its_table(spec):
    config = RulesConfig(num_teams=3, team_sizes=(2, 1, 1))
    agent = make_agent(spec)
    assert agent.table is None and agent.core_networks() is None
    assert core_play.networks(agent, config) is None            # never told: from Python
    told = agent.for_table(config)
    assert told is not agent and told.table == config and agent.table is None
    picks = core_play.networks(told, config)
    assert picks is not None and len(picks) == config.num_seats
    assert core_play.networks(told, RulesConfig(num_teams=4)) is None   # told another table


def test_the_arena_tells_every_agent_its_table_through_for_table(monkeypatch):
    """A learned seat reaches the kernel told the run's table, through Agent.for_table; with
    that call taken out of LearnedAgent (the base's: itself, untold) the kernel never gets
    it and the batch goes to the Python loop."""
    config = RulesConfig(num_teams=2)
    calls = []
    real = LearnedAgent.for_table

    def counted(self, cfg):
        calls.append(cfg)
        return real(self, cfg)
    monkeypatch.setattr(LearnedAgent, "for_table", counted)
    seen = _kernel_tables(monkeypatch)
    _play(config, ["learned", "heuristic"])
    assert calls and all(c == config for c in calls)
    assert seen and all(isinstance(a, LearnedAgent) and t == config and ok
                        for a, t, _, ok in seen)

    monkeypatch.setattr(LearnedAgent, "for_table", Agent.for_table)   # the declared way removed
    seen.clear()
    with pytest.warns(RuntimeWarning, match="was not told its table"):
        _play(config, ["learned", "heuristic"])
    assert seen and not any(ok for *_, ok in seen)


def test_no_getattr_probing_left_between_arena_and_agent():
    """The kernel asks an Agent by its declared methods; the arena tells Agents by theirs."""
    assert "getattr" not in inspect.getsource(core_play.networks)
    assert "getattr" not in inspect.getsource(play.Roster.for_table)
    assert list(inspect.signature(Agent.core_networks).parameters) == ["self"]
    assert list(inspect.signature(Agent.for_table).parameters) == ["self", "config"]


def test_a_family_copy_is_told_and_picks_its_member():
    config = RulesConfig(num_teams=2, stacking=False)
    agent = make_agent("learned")
    told = agent.for_table(config)
    assert told.table == config and agent.table is None and agent.member() is None
    assert told.member() is not None
    picks = told.core_networks()
    assert {id(p) for p, _ in picks} == {id(told.policies[told.by_hand])}
