"""A `search:` agent at the human table (`nertz play --human --against search`): the session
keeps the table's public memory and passes the agent a seat view, so it plays there the moves
the arena's Python loop plays on the same position; same seed, same replay bytes; an infinite
margin plays exactly its base bot."""
from __future__ import annotations

import io

import numpy as np
import pytest

from agents.arena.play import HandResults, Roster, Tables, seat_policies
from agents.arena.seat_loop import play_python
from agents.cli import main
from agents.human.session import PlaySession
from agents.registry import make_agent
from nertz_env.config import RulesConfig
from nertz_env.core.batch import _DEAL_MIX
from nertz_env.replay import Replay

RB = "heuristic:style=river-builder"
SEARCH = "search:worlds=4,horizon=8,seed=5"


def scripted_hand(config, against, seed, path, deal_key=None) -> PlaySession:
    """One hand with the person's moves scripted as river-builder's on the person's own
    observation (PlaySession.observation), each asked for with request() and played by
    tick(), as the page and the terminal do. deal_key: the seat views' deal key instead of
    the session's own (to meet the arena's)."""
    sess = PlaySession(config, against=against, seed=seed, replay_out=path)
    if deal_key is not None:
        sess.memory.deal_keys[:] = deal_key
    person = make_agent(RB)
    while not sess.table.hand_over:
        obs, mask = sess.observation()
        move = sess.table.decode(int(person.act_batch(obs[None], mask[None])[0]), sess.seat)
        assert sess.request(str(move)) == ""
        sess.tick()
    sess.finish()
    return sess


def test_the_human_table_plays_the_arenas_moves(tmp_path):
    """The arena's Python loop (agents/arena/seat_loop.py play_python) on the session's own
    deal: deck key and priority key chosen so the arena deals the session's cards and draws
    its priority orders (core/batch.py shuffle_deal), the same deal key in the views,
    river-builder at the person's seat. Every tick's moves and resolution orders are equal,
    and the search did search and did leave its base move."""
    config, seed = RulesConfig(num_teams=2), 3
    g = np.random.default_rng(seed)                # Engine(config, 1, seed): init, then reset
    g.integers(0, 2**63, size=1, dtype=np.uint64)
    deck_key = g.integers(0, 2**63, size=1, dtype=np.uint64) ^ _DEAL_MIX       # hand 0
    sess = scripted_hand(config, SEARCH, seed, tmp_path / "a.nertz.json.gz", deck_key)
    # a fresh session of the seed holds the table's generator key after the deal: the
    # arena's priority key
    start = PlaySession(config, against=SEARCH, seed=seed, replay_out=tmp_path / "b.nertz.json.gz")
    agent = make_agent(SEARCH)
    roster = Roster.of([make_agent(RB), agent]).for_table(config)
    seat_agent = np.array([[0, 1]], np.int64)
    kinds, knobs = seat_policies(seat_agent, roster.core, config.num_seats)
    tables = Tables(seat_agent, kinds, knobs, np.zeros(1, np.uint64), deck_key,
                    start.engine.state.rng.reshape(1, 1).copy(), np.zeros(1, np.int64))
    out = HandResults.zeros(1, 1, config.num_teams)
    arena = play_python(config, roster, tables, False, out, labels=[{}]).replay().hands[0]
    mine = Replay.load(sess.replay_path).hands[0]
    assert np.array_equal(mine.decks, arena.decks)                    # the same deal
    assert sess.bots[0].decisions > 10 and sess.bots[0].deviations > 0
    assert mine.ticks == arena.ticks == int(out.ticks[0, 0])
    np.testing.assert_array_equal(mine.actions, arena.actions)
    np.testing.assert_array_equal(mine.priority, arena.priority)
    assert sess.table.hand_scores() == out.scores[0, 0].tolist()


def test_same_seed_same_replay_bytes(tmp_path):
    paths = [scripted_hand(RulesConfig(num_teams=2), SEARCH, 7,
                           tmp_path / f"{k}.nertz.json.gz").replay_path for k in "ab"]
    assert paths[0].read_bytes() == paths[1].read_bytes()
    other = scripted_hand(RulesConfig(num_teams=2), SEARCH, 8, tmp_path / "c.nertz.json.gz")
    assert other.replay_path.read_bytes() != paths[0].read_bytes()


@pytest.mark.parametrize("teams", [2, 3])
def test_an_infinite_margin_plays_its_base_bot_at_the_human_table(tmp_path, teams):
    """Every decision is searched and then the base move played: the hand is river-builder's,
    tick for tick (at 3 teams one search agent holds two seats: one view of two rows)."""
    config = RulesConfig(num_teams=teams)
    sess = scripted_hand(config, f"{SEARCH},margin=inf", 2, tmp_path / "s.nertz.json.gz")
    base = scripted_hand(config, RB, 2, tmp_path / "b.nertz.json.gz")
    assert sess.bots[0].decisions > 10 and sess.bots[0].deviations == 0
    a, b = Replay.load(sess.replay_path).hands[0], Replay.load(base.replay_path).hands[0]
    np.testing.assert_array_equal(a.actions, b.actions)
    np.testing.assert_array_equal(a.priority, b.priority)


def test_nertz_play_human_against_search_in_the_terminal(tmp_path, monkeypatch, capsys):
    """`nertz play --human --terminal --against search:...`: the person waits out the hand
    (Enter at every prompt), the search agent plays it, the replay is written."""
    out = tmp_path / "hand.nertz.json.gz"
    monkeypatch.setattr("sys.stdin", io.StringIO("\n" * 3000))   # max_ticks (R26)
    code = main(["play", "--human", "--terminal", "--teams", "2", "--seed", "1",
                 "--against", "search:worlds=2,horizon=4", "--replay-out", str(out)])
    text = capsys.readouterr().out
    assert code == 0 and out.is_file() and "search:worlds=2,horizon=4" in text
    assert Replay.load(out).agents == ["person", "search:worlds=2,horizon=4"]


@pytest.mark.parametrize("alternate", [True, False])
def test_a_pair_with_a_search_member_plays_its_members_by_role(tmp_path, alternate):
    """Teams of two: `pair:greedy&SEARCH,margin=inf` gives each seat the member of its role
    (Pair.act_batch has no view to pass): the hand equals `pair:greedy&river-builder`'s, and
    the search member (the Stream's) did search."""
    config = RulesConfig(num_teams=2, team_sizes=(2, 2), alternate_roles=alternate)
    sess = scripted_hand(config, f"pair:greedy&{SEARCH},margin=inf", 4,
                         tmp_path / "s.nertz.json.gz")
    base = scripted_hand(config, f"pair:greedy&{RB}", 4, tmp_path / "b.nertz.json.gz")
    assert sess.bots[0].stream.decisions > 10
    a, b = Replay.load(sess.replay_path).hands[0], Replay.load(base.replay_path).hands[0]
    np.testing.assert_array_equal(a.actions, b.actions)
