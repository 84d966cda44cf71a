"""`pair:NERTZ&STREAM` (agents/base.py Pair): two agents sharing a two-player team by role (R4)."""
from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import agents.arena.play as play
from agents import make_agent
from agents.arena.play import MatchPlan, Roster, play_deals
from agents.arena.progress import NoBar
from agents.arena.seatings import make_lineups, seatings
from agents.arena.tournament import run_tournament
from agents.base import Agent, Pair
from nertz_env import RulesConfig
from nertz_env.core.observe import SELF_HOLDS_STREAM

PAIRS = RulesConfig(num_teams=2, team_sizes=(2, 2), speeds=(1, 2, 2, 1))


class _Role(Agent):
    """heuristic's moves; keeps the 'holds the Stream' entry of every row it is shown."""

    def __init__(self, name):
        self.inner, self.holds, self.name = make_agent("heuristic"), [], name

    def act_batch(self, observations, action_masks):
        self.holds.append(np.asarray(observations)[:, SELF_HOLDS_STREAM].copy())
        return self.inner.act_batch(observations, action_masks)


def _block(config, objs, deals, mode="hands", max_hands=1):
    seats = [seatings(lu) for lu in make_lineups(len(objs), config.num_teams)]
    plan = MatchPlan(config, seats, 5, mode, max_hands, 4096)
    objs = [make_agent(o) if isinstance(o, str) else o for o in objs]
    return play_deals(plan, Roster.of(objs), 0, deals, NoBar())


@pytest.mark.parametrize("mode, max_hands, rules", [
    ("hands", 1, {}),                                   # seats given by role before play
    ("games", 4, {}),                                   # roles swap: played by act_batch
    ("games", 4, {"alternate_roles": False}),           # roles fixed: seats given by role
])
def test_each_member_plays_only_its_role(mode, max_hands, rules):
    """Whichever path plays the pair, the Nertz member is shown only rows of the seat that
    holds the Nertz pile and the Stream member only the Stream holder's, and both play."""
    config = dataclasses.replace(PAIRS, target_score=40, **rules)
    nertz, stream = _Role("n"), _Role("s")
    _block(config, [Pair(nertz, stream), "heuristic:style=river-builder"], 6, mode, max_hands)
    n, s = np.concatenate(nertz.holds), np.concatenate(stream.holds)
    assert n.size > 100 and s.size > 100
    assert (n == 0).all() and (s == 1).all()


def test_seats_given_by_role_equal_the_pair_played_by_its_observations(monkeypatch):
    """Nets and a core bot as members: the core plays each seat's member (assign_roles);
    with that off, the Python loop plays the pair itself, which picks the member by each
    row's role. Every number of the block is equal (a seat given the other role's member
    would differ), and the pair's two orders differ (the roles matter)."""
    specs = ["pair:learned&heuristic:style=river-builder", "learned:teams=2"]
    fast = _block(PAIRS, [make_agent(s) for s in specs], 10)
    real = play.assign_roles
    monkeypatch.setattr(play, "assign_roles",
                        lambda cfg, sa, fh, roles, fixed, names: real(cfg, sa, fh, roles, False,
                                                                     names))
    slow = _block(PAIRS, [make_agent(s) for s in specs], 10)
    for name, x, y in zip(fast._fields, fast, slow):
        np.testing.assert_array_equal(x, y, err_msg=name)
    monkeypatch.undo()
    swapped = _block(PAIRS, [make_agent(s) for s in
                             ["pair:heuristic:style=river-builder&learned", "learned:teams=2"]],
                     10)
    assert not np.array_equal(swapped.scores, fast.scores)


def test_a_tournament_lists_the_pairs_not_their_members():
    r = run_tournament(["pair:learned&heuristic", "pair:heuristic&learned", "heuristic"],
                       config=PAIRS, deals=4, seed=1, progress=False)
    assert sorted(r.names) == sorted(["pair:learned&heuristic", "pair:heuristic&learned",
                                      "heuristic"])
    assert {row["agent"] for row in r.leaderboard} == set(r.names)


@pytest.mark.parametrize("spec, match", [
    ("pair:learned", "two agent specs joined by one '&'"),
    ("pair:learned&", "two agent specs"),
    ("pair:a&b&c", "two agent specs"),
    ("pair:learned&bogus", "unknown kind 'bogus'"),
])
def test_bad_pair_specs_say_what_is_allowed(spec, match):
    with pytest.raises(ValueError, match=match):
        make_agent(spec)


def test_a_pair_at_a_solo_team_is_refused():
    config = RulesConfig(num_teams=2, team_sizes=(2, 1))
    with pytest.raises(ValueError, match=r"'pair:learned&heuristic' is a pair and sits at a "
                                         r"solo team \(team 1, team_sizes=\[2, 1\]\)"):
        run_tournament(["pair:learned&heuristic", "heuristic"], config=config, deals=2,
                       seed=1, progress=False)
    pair = make_agent("pair:greedy&heuristic")
    obs = np.zeros((2, 791), np.float32)
    masks = np.zeros((2, 322), bool)
    masks[:, 0] = True
    with pytest.raises(ValueError, match="two-player teams only"):
        pair.act_batch(obs, masks)
