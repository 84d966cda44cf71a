"""A person's game: the hand waits at tick 0 until Start; the bots' pace in ms (levels,
--bot-ms) as seat periods (R21); options that contradict each other or mean nothing without
--human refused in one line; the replay's path checked before the hand, not after it; a
scripted person holds the default level and loses to the hardest (benchmarks/human_pace.py)."""
from __future__ import annotations

import io
import json
import time
import urllib.request

import pytest

from agents.cli import build_parser, main
from agents.human.pace import DEFAULT_LEVEL, DEFAULT_TICK_MS, LEVELS, pace_from_args
from tests.helpers import play_server
from agents.human.session import PlaySession
from nertz_env.config import RulesConfig

ACE_MOVE = "river0>lake"                 # seed 1, 2 teams: seat 0's only card move (R18)


def post(srv, path, body):
    req = urllib.request.Request(srv.url + path, data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, json.load(r)
    except urllib.error.HTTPError as err:
        return err.code, json.load(err)


def get(srv):
    with urllib.request.urlopen(srv.url + "state", timeout=10) as r:
        return json.load(r)


def test_the_clock_waits_at_tick_0_until_start(tmp_path):
    sess = PlaySession(RulesConfig(num_teams=2, max_ticks=500), against="greedy", seed=1,
                       replay_out=tmp_path / "s.nertz.json.gz")
    srv = play_server(sess, tick_ms=20, wait_start=True)
    try:
        st = get(srv)
        assert st["tick"] == 0 and st["started"] is False
        time.sleep(0.3)                                   # 15 ticks' worth
        assert get(srv)["tick"] == 0
        assert sess.table.layout()["lake"] == []          # the bot has played nothing
        code, res = post(srv, "move", {"move": ACE_MOVE})
        assert code == 409 and res["error"].startswith("the hand has not started: press Start")
        assert get(srv)["queued"] is None
        t = time.monotonic()
        assert post(srv, "start", {}) == (200, {"ok": True, "started": True})
        assert post(srv, "move", {"move": ACE_MOVE})[0] == 200
        end = time.monotonic() + 10
        while get(srv)["tick"] < 3 and time.monotonic() < end:
            time.sleep(0.02)
        assert get(srv)["tick"] >= 3 and time.monotonic() - t >= 0.06
        assert ["AD"] in sess.table.layout()["lake"]
        assert post(srv, "start", {})[0] == 200           # a second Start changes nothing
    finally:
        srv.stop()


def test_bot_period_sets_every_agent_seat():
    sess = PlaySession(RulesConfig(num_teams=3, team_sizes=(2, 1, 1)), against="greedy",
                       seat=1, bot_period=7, replay_out="/tmp/unused.nertz.json.gz")
    assert sess.config.speeds == (7, 1, 7, 7)
    sess = PlaySession(RulesConfig(num_teams=2), against="greedy", bot_period=4,
                       human_period=2, replay_out="/tmp/unused.nertz.json.gz")
    assert sess.config.speeds == (2, 4)
    for bad in (0, 101, 2.0, True, "3"):
        with pytest.raises(ValueError, match="bot_period"):
            PlaySession(RulesConfig(num_teams=2), bot_period=bad)


def pace(*argv):
    args = build_parser().parse_args(["play", "--human", *argv])
    return pace_from_args(args)


def test_levels_and_bot_ms_become_periods():
    lv = LEVELS[DEFAULT_LEVEL]
    assert pace() == {"tick_ms": DEFAULT_TICK_MS, "bot_period": lv.bot_ms // DEFAULT_TICK_MS,
                      "level": DEFAULT_LEVEL, "against": lv.agent}
    for name, level in LEVELS.items():
        got = pace("--level", name)
        assert got["bot_period"] * got["tick_ms"] == level.bot_ms and got["against"] == level.agent
    assert pace("--level", "easy", "--against", "heuristic")["against"] == "heuristic"
    assert pace("--bot-ms", "1500", "--tick-ms", "100")["bot_period"] == 15
    assert pace("--speeds", "1,3") == {"tick_ms": DEFAULT_TICK_MS, "bot_period": None,
                                       "level": None, "against": "heuristic"}
    assert pace("--tick-ms", "500", "--level", "medium")["bot_period"] == 4
    assert pace("--terminal")["bot_period"] is None


REFUSED = [
    (["--human", "--level", "easy", "--speeds", "1,2"], "--speeds and --level both set"),
    (["--human", "--bot-ms", "800", "--rule", "speeds=1,2"], "--speeds and --bot-ms both set"),
    (["--human", "--level", "easy", "--bot-ms", "800"], "--level and --bot-ms both set"),
    (["--human", "--bot-ms", "1500"], "--bot-ms 1500 is not a whole number of ticks of "
                                      "--tick-ms 200"),
    (["--human", "--tick-ms", "300"], "--level medium's reaction time, 2000 ms, is not a whole "
                                      "number of ticks of --tick-ms 300"),
    (["--human", "--bot-ms", "30000"], "is 150 ticks of --tick-ms 200; at most 100"),
    (["--human", "--terminal", "--level", "easy"], "--level has no meaning with --terminal"),
    (["--human", "--terminal", "--tick-ms", "100"], "--tick-ms has no meaning with --terminal"),
    (["--human", "--terminal", "--port", "0"], "--port has no meaning with --terminal"),
    (["--human", "--terminal", "--no-browser"], "--no-browser has no meaning with --terminal"),
    (["--level", "easy"], "--level is an option of 'nertz play --human'"),
    (["--bot-ms", "800"], "--bot-ms is an option of 'nertz play --human'"),
    (["--tick-ms", "100"], "--tick-ms is an option of 'nertz play --human'"),
    (["--human-period", "2"], "--human-period is an option of 'nertz play --human'"),
    (["--seat", "0"], "--seat is an option of 'nertz play --human'"),
    (["--port", "0"], "--port is an option of 'nertz play --human'"),
]


@pytest.mark.parametrize("argv,words", REFUSED, ids=[" ".join(a) for a, _ in REFUSED])
def test_conflicting_or_orphan_options_are_one_line(argv, words, capsys, monkeypatch, tmp_path):
    monkeypatch.setattr("sys.stdin", io.StringIO(""))
    monkeypatch.setattr("webbrowser.open", lambda url: pytest.fail("no page for a refusal"))
    rc = main(["play", "--teams", "2", "--max-ticks", "3", *argv,
               *(["--replay-out", str(tmp_path / "r.nertz.json.gz")] if "--human" in argv
                 else [])])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and words in err, err
    assert not (tmp_path / "r.nertz.json.gz").exists()


def test_an_unwritable_replay_out_is_refused_before_the_hand(tmp_path, capsys, monkeypatch):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    cases = [(blocker / "hand.nertz.json.gz", "cannot write in its folder"),
             (tmp_path, "is a folder; name a file")]
    for path, words in cases:
        with pytest.raises(ValueError, match=words):
            PlaySession(RulesConfig(num_teams=2), against="greedy", replay_out=path)

    def no_input():
        pytest.fail("the hand started before its replay's path was checked")

    class Stdin:
        readline = staticmethod(no_input)
    monkeypatch.setattr("sys.stdin", Stdin())
    monkeypatch.setattr("webbrowser.open", lambda url: pytest.fail("no page for a refusal"))
    for path, words in cases:
        for mode in (["--terminal"], ["--no-browser"]):
            t = time.monotonic()
            assert main(["play", "--human", *mode, "--teams", "2", "--against", "greedy",
                         "--replay-out", str(path)]) == 2
            err = capsys.readouterr().err
            assert err.count("\n") == 1 and "--replay-out" in err and words in err, err
            assert time.monotonic() - t < 10
    assert list(tmp_path.iterdir()) == [blocker]      # nothing left behind by the check


def test_the_scripted_person_holds_the_default_level_and_loses_to_the_hardest(tmp_path):
    """benchmarks/human_pace.py in small (short hands, the same six deals at both levels):
    the scripted person (one greedy move per second of clock) beats the default level on
    points and in most hands, and loses to the hardest. Fails if the default were the
    hardest, or if levels stopped setting the bots' pace."""
    from benchmarks.human_pace import play_hand
    hardest = list(LEVELS.values())[-1]                 # LEVELS: easiest first
    assert hardest.name != DEFAULT_LEVEL
    assert [lv.bot_ms for lv in LEVELS.values()] == sorted(
        (lv.bot_ms for lv in LEVELS.values()), reverse=True)
    got = {}
    for lv in (LEVELS[DEFAULT_LEVEL], hardest):
        rows = [play_hand(lv.agent, lv.bot_ms, 100 + i, tmp_path / f"{lv.name}{i}.nertz.json.gz",
                          max_ticks=300) for i in range(6)]
        assert all(r["person_moves"] <= r["ticks"] // 5 for r in rows)   # one move per s
        got[lv.name] = (sum(r["won"] for r in rows),
                        sum(r["person"] - r["other"] for r in rows) / len(rows))
    wins, diff = got[DEFAULT_LEVEL]
    assert wins >= 4 and diff > 0, got
    wins, diff = got[hardest.name]
    assert wins <= 2 and diff < 0, got
