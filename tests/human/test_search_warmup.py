"""`nertz play --human` compiles numba's kernels before the hand, never on the person's time:
agents/human/warmup.py. A `search:` agent decides once at the dealt position (its kernels
compiled or loaded), every other agent plays its seats through a copy of itself (the
observation and bot kernels) and a throwaway table plays ticks (the step kernels), after a one-line
notice when some of those kernels are not cached, and all before the first move is asked
for; no notice where nothing needs compiling; the rehearsal changes nothing in the hand.
Nothing here depends on timing: numba's cache is probed through kernel_cached, patched."""
from __future__ import annotations

import io

import numpy as np
import pytest

from agents.cli import main
from agents.human import warmup
from agents.human.session import PlaySession
from agents.search import SearchAgent
from agents.registry import make_agent
from nertz_env.config import RulesConfig
from nertz_env.core.fork import copy_tables, rollout_batch, rollout_range
from nertz_env.core.memory import redeal_memory_slots
from nertz_env.core.worlds import redeal_uniform_slots
from nertz_env.replay import Replay

SEARCH = "search:worlds=2,horizon=4,seed=2"


class Events:
    """The order things happened in: the notice written to stderr, the searches the search
    agent played (evaluate with a searched row), the moves asked of the person (legal)."""

    def __init__(self, monkeypatch):
        self.seen: list = []
        events = self

        class Err(io.StringIO):
            def write(self, text):
                if "compiling" in text:
                    events.seen.append("notice")
                return super().write(text)

        self.err = Err()
        monkeypatch.setattr("sys.stderr", self.err)
        evaluate, legal = SearchAgent.evaluate, PlaySession.legal

        def spy_evaluate(agent, view):
            out = evaluate(agent, view)
            if any(r.searched for r in out):
                events.seen.append("search")
            return out

        def spy_legal(session):
            events.seen.append("ask")
            return legal(session)

        monkeypatch.setattr(SearchAgent, "evaluate", spy_evaluate)
        monkeypatch.setattr(PlaySession, "legal", spy_legal)


def play(out, against, mode=("--terminal",)):
    return main(["play", "--human", *mode, "--teams", "2", "--seed", "1", "--against",
                 against, "--replay-out", str(out)])


def test_a_cold_search_is_compiled_after_a_notice_before_the_first_move(tmp_path,
                                                                         monkeypatch):
    """No kernel cached (a fresh install): the notice, then a search at the dealt position,
    then the person is asked for a move (the terminal reads none: end of input quits)."""
    monkeypatch.setattr(warmup, "kernel_cached", lambda kernel: False)
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    ev = Events(monkeypatch)
    assert play(tmp_path / "hand.nertz.json.gz", SEARCH) == 0
    first_ask = ev.seen.index("ask")
    assert ev.seen[:2] == ["notice", "search"] and first_ask > 1, ev.seen[:5]
    line = ev.err.getvalue()
    assert line.startswith("compiling the search kernels (first use after install")
    assert " done in " in line and line.count("\n") == 1


def test_the_page_is_served_only_after_the_warm_up(tmp_path, monkeypatch):
    """The browser path: the search ran before run_web serves the page (the clock and the
    Start button come after)."""
    monkeypatch.setattr(warmup, "kernel_cached", lambda kernel: False)
    ev = Events(monkeypatch)
    monkeypatch.setattr("agents.human.server.run_web",
                        lambda session, **kw: ev.seen.append("page"))
    assert play(tmp_path / "hand.nertz.json.gz", SEARCH, ("--no-browser",)) == 0
    assert ev.seen == ["notice", "search", "page"]


def test_no_notice_where_nothing_needs_compiling(tmp_path, monkeypatch):
    """A core bot with the game kernels cached needs no compile: no notice, though every
    search kernel is reported uncached; a search whose kernels are cached: no notice, and it
    still rehearses (loading its kernels) before the first move."""
    monkeypatch.setattr(warmup, "kernel_cached", lambda k: k in warmup.GAME_KERNELS)
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    ev = Events(monkeypatch)
    assert play(tmp_path / "a.nertz.json.gz", "greedy") == 0
    assert "notice" not in ev.seen and "search" not in ev.seen and ev.err.getvalue() == ""

    monkeypatch.setattr(warmup, "kernel_cached", lambda k: True)
    ev.seen.clear()
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    assert play(tmp_path / "b.nertz.json.gz", SEARCH) == 0
    assert ev.seen[0] == "search" and "notice" not in ev.seen
    assert ev.err.getvalue() == ""


def test_a_core_bot_on_a_fresh_install_is_told_of_the_game_kernels(tmp_path, monkeypatch):
    monkeypatch.setattr(warmup, "kernel_cached", lambda kernel: False)
    session = PlaySession(RulesConfig(num_teams=2), against="greedy",
                          replay_out=tmp_path / "h.nertz.json.gz")
    out = io.StringIO()
    note = warmup.warm_up(session, out)
    assert note.startswith("compiling the game kernels (first use after install")
    assert out.getvalue().startswith(note) and session.table.tick == 0
    assert warmup.rehearse(session.config, session.viewers()) == 1     # one tick, no viewers


def test_the_kernels_probed_follow_the_options():
    def kernels(spec):
        return set(warmup.search_kernels(make_agent(spec)))

    assert kernels("search") == {rollout_range, copy_tables, redeal_memory_slots}
    assert kernels("search:belief=uniform,threads=2") == {rollout_batch, copy_tables,
                                                          redeal_uniform_slots}
    assert warmup.search_kernels(make_agent("greedy")) == ()


@pytest.mark.parametrize("against", [SEARCH, f"pair:greedy&{SEARCH}"])
def test_the_rehearsal_searches_and_changes_nothing(tmp_path, monkeypatch, against):
    """warm_up's rehearsal searched (on its throwaway table: the dealt position may offer
    one candidate only) and left the session's table, memory and the agents' counts as they
    were; the hand after it is the hand without it, move for move, with the same counts."""
    teams = dict(team_sizes=(2, 2)) if against.startswith("pair") else {}
    config = RulesConfig(num_teams=2, **teams)
    hands = []
    for k, warm in enumerate((True, False)):
        sess = PlaySession(config, against=against, seed=7,
                           replay_out=tmp_path / f"{k}.nertz.json.gz")
        if warm:
            ev = Events(monkeypatch)
            memory, layout = sess.memory.memory.copy(), sess.table.layout()
            warmup.warm_up(sess, io.StringIO())
            assert "search" in ev.seen
            assert sess.table.layout() == layout and sess.table.tick == 0
            np.testing.assert_array_equal(sess.memory.memory, memory)
            assert [(b.decisions, b.deviations) for b, _ in sess.viewers()] == [(0, 0)]
            monkeypatch.undo()
        while not sess.table.hand_over:
            sess.tick()
        sess.finish()
        hands.append((Replay.load(sess.replay_path).hands[0],
                      [(b.decisions, b.deviations) for b, _ in sess.viewers()]))
    (a, da), (b, db) = hands
    assert da == db and da[0][0] > 0
    np.testing.assert_array_equal(a.actions, b.actions)
    np.testing.assert_array_equal(a.priority, b.priority)


def test_the_rehearsal_plays_every_other_agent_through_a_copy(tmp_path, monkeypatch):
    """A core bot's kernels (the observation, the bot's own) compile in the rehearsal, not
    on the first tick after Start: every agent that does not see its seat plays its seats
    on the throwaway table, through a copy of itself (the real one is never called)."""
    from agents.bots import ScoredAgent

    calls: list = []
    act_batch = ScoredAgent.act_batch

    def spy(agent, obs, legal):
        calls.append((id(agent), len(obs)))
        return act_batch(agent, obs, legal)

    monkeypatch.setattr(ScoredAgent, "act_batch", spy)
    config = RulesConfig(num_teams=3)
    sess = PlaySession(config, against="heuristic", seed=3,
                       replay_out=tmp_path / "h.nertz.json.gz")
    (bot, seats), = sess.players()
    assert isinstance(bot, ScoredAgent) and seats == [1, 2] and sess.viewers() == []
    warmup.warm_up(sess, io.StringIO())
    assert calls and all(n == 2 for _, n in calls)      # both its seats, in one batch
    assert id(bot) not in {who for who, _ in calls}     # a copy played, never the agent
    assert sess.table.tick == 0


def test_a_seeded_agent_plays_the_same_hand_after_the_rehearsal(tmp_path):
    """The rehearsal draws nothing from a seeded agent's generator (it plays a copy): the
    hand against `random` after warm_up is the hand without it, move for move."""
    hands = []
    for k, warm in enumerate((True, False)):
        sess = PlaySession(RulesConfig(num_teams=2, max_ticks=60), against="random", seed=5,
                           replay_out=tmp_path / f"{k}.nertz.json.gz")
        if warm:
            warmup.warm_up(sess, io.StringIO())
        while not sess.table.hand_over:
            sess.tick()
        sess.finish()
        hands.append(Replay.load(sess.replay_path).hands[0])
    a, b = hands
    assert (a.actions != 0).any()                       # the random seat moved
    np.testing.assert_array_equal(a.actions, b.actions)
