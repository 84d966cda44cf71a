"""agents/human/warmup.py warm_up: the agents rehearsed through a copy are the session's
players that do not see their seat (sees_seat false), each once with all its seats; the ones
that see their seat are the viewers, rehearsed on the throwaway table's memory. rehearse is
replaced by a recorder here: nothing is played or compiled."""
from __future__ import annotations

import io

from agents.arena.seat_loop import sees_seat
from agents.human import warmup
from agents.human.session import PlaySession
from nertz_env.config import RulesConfig


def test_the_others_are_the_players_that_do_not_see_their_seat(tmp_path, monkeypatch):
    got = []
    monkeypatch.setattr(warmup, "warmup_notice", lambda session: None)
    monkeypatch.setattr(warmup, "rehearse",
                        lambda config, viewers, seed, others: got.append((viewers, others)))
    sess = PlaySession(RulesConfig(num_teams=4), seed=3,
                       against=("search:worlds=2,horizon=4,seed=2", "heuristic", "heuristic"),
                       replay_out=tmp_path / "h.nertz.json.gz")
    (search, s1), (bot, s2) = sess.players()
    assert sees_seat(search) and not sees_seat(bot) and (s1, s2) == ([1], [2, 3])
    warmup.warm_up(sess, io.StringIO())
    (viewers, others), = got
    assert [(id(b), s) for b, s in viewers] == [(id(search), [1])]
    assert [(id(b), s) for b, s in others] == [(id(bot), [2, 3])]   # once, both its seats
