"""`search:` agents: decision-time search with the core as simulator (docs/search.md).

    search                                   river-builder base, 32 worlds (64 at 3 or
                                             more teams), 40 ticks, the memory belief,
                                             margin 0
    search:worlds=64,horizon=10,belief=uniform,margin=0.5,seed=3
    search:base=cautious,opp=greedy          base and the other teams' model: core bots
    search:base=learned,rollout=river-builder  the base move from the shipped net, rollouts
                                             by a core bot
    search:opp=learned                       the other teams played by the shipped net
                                             inside the rollouts (rollout=learned: every
                                             seat; nertz_env/core/net_policy.py)
    search:se=1,threads=2                    deviate only a standard error clear of the base;
                                             rollouts on two numba threads
    search:belief=oracle,cheat=yes           the true hidden cards: a ceiling, never a player

spec.py parses the options (one line naming a bad option), agent.py holds SearchAgent (the
decision). A search agent sees its seat's information of the engine state through the one
way agents/base.py declares (seat_view, act_view(SeatView)); it plays wherever a seat view is
passed: tournaments and experiments (the arena's Python loop, on Ray too), `nertz play
--human` and the envs' opponents.
"""
from __future__ import annotations

from .agent import SearchAgent, SearchResult
from .spec import SEARCH_OPTIONS, SearchOptions, parse_options


def parse_search(spec: str, rest: str, seed=None, make_agent=None) -> SearchAgent:
    """The SearchAgent of `search[:OPTIONS]` (rest: the text after 'search:'); ValueError
    (one line naming the option) for bad options. make_agent (the registry's, passed in as
    parse_pair's is: search sits below the registry) builds a net base (base=learned)."""
    return SearchAgent(parse_options(spec, rest), name=spec, seed=seed, make_base=make_agent)


__all__ = ["SEARCH_OPTIONS", "SearchAgent", "SearchOptions", "SearchResult", "parse_options",
           "parse_search"]
