"""Whole games with core bots (nertz_env/table/games.py): random play is what it always was,
the bots a spec names are the bots that play, a bad spec is one ValueError naming it."""
from __future__ import annotations

import hashlib
import json

import pytest

from nertz_env import RulesConfig
from nertz_env.table.games import play_game, play_games

TWO = RulesConfig(num_teams=2, target_score=100)


def test_random_games_are_unchanged():
    """The default, and 'random' spelled out (one for all, one per seat), give the games the
    random-only play_games gave before bots could be seated (digest from that version)."""
    cfg = RulesConfig(num_teams=3, team_sizes=(2, 1, 1))
    games = play_games(cfg, 3, seed=11)
    assert hashlib.sha256(json.dumps(games).encode()).hexdigest() == (
        "68017cfdb5cfbffebc44ba2cd820038578334ed0b76f7edcffcf1b5df00285bc")
    assert [g["totals"] for g in games] == [[130, 171, 173], [114, 41, 167], [153, 109, 50]]
    assert play_games(cfg, 3, seed=11, policy="random") == games
    assert play_games(cfg, 3, seed=11, policy=["random"] * 4) == games


@pytest.mark.parametrize("policy, winner", [("heuristic:style=river-builder,random", 0),
                                            ("random,heuristic", 1)])
def test_a_heuristic_beats_random(policy, winner):
    """The seat the spec gives the heuristic wins (nearly) every game; random-vs-random
    would split them."""
    games = play_games(TWO, 12, seed=3, policy=policy)
    wins = sum(g["winner"] == winner for g in games)
    assert wins >= 11, [g["winner"] for g in games]
    assert all(sum(g["calls"]) >= 1 for g in games)
    for g in games:                                   # totals are the hands' sums
        assert g["totals"] == [sum(h[t] for h in g["hand_scores"]) for t in range(2)]


def test_bot_games_are_seeded_and_knobs_matter():
    a = play_games(TWO, 4, seed=5, policy="greedy")
    assert play_games(TWO, 4, seed=5, policy=["greedy", "greedy"]) == a
    assert play_games(TWO, 4, seed=6, policy="greedy") != a
    assert play_games(TWO, 4, seed=5, policy="heuristic") != a
    assert play_games(TWO, 4, seed=5, policy="heuristic:withhold_stream=never,flip=50") != \
        play_games(TWO, 4, seed=5, policy="heuristic")
    assert play_game(TWO, 5, policy="greedy") == play_games(TWO, 1, seed=5, policy="greedy")[0]


@pytest.mark.parametrize("policy, words", [
    ("chess", "bot 'chess': unknown kind 'chess'"),
    ("heuristic:style=wild", "agent 'heuristic:style=wild': style 'wild'"),
    ("greedy,heuristic:flip=x", "flip='x'"),
    ("ppo:m.zip", "unknown kind 'ppo'"),
    ("random,greedy,random", "one per seat (2 seats), not 3"),
    ("", "at least one agent"),
    (3, "must be a string"),
])
def test_bad_specs_are_one_line_value_errors(policy, words):
    with pytest.raises(ValueError, match="^policy") as exc:
        play_games(TWO, 1, seed=0, policy=policy)
    assert words in str(exc.value) and "\n" not in str(exc.value)
