"""`nertz play --human`: the play server (loopback only, /state and /move over HTTP, the wall
clock, refusals naming the rule, a finished hand's replay) and the terminal fallback with
piped input. The hardened server: test_play_server.py; pace, Start and up-front checks:
test_play_pace.py; the page in a real browser: test_play_browser.py."""
from __future__ import annotations

import io
import json
import time
import urllib.error
import urllib.request

import pytest

from agents.human.server import PlayServer
from tests.helpers import play_server
from agents.human.session import PlaySession
from agents.human.terminal import play_terminal
from nertz_env.config import RulesConfig
from nertz_env.replay import Replay

# seed 1 at two teams deals seat 0 an ace on River column 0 (AD): R18 makes river0>lake its
# only card move, so every other card move is refused by a named rule
SEED = 1
ACE_MOVE, ACE = "river0>lake", "AD"


def session(tmp_path, max_ticks=200, **kw):
    kw.setdefault("against", "heuristic")
    return PlaySession(RulesConfig(num_teams=2, max_ticks=max_ticks), seed=SEED,
                       replay_out=tmp_path / "hand.nertz.json.gz", **kw)


@pytest.fixture
def served(tmp_path):
    servers = []

    def make(sess=None, **kw):
        srv = play_server(sess or session(tmp_path), **kw)
        servers.append(srv)
        return srv
    yield make
    for srv in servers:
        srv.stop()


def get(srv, path="state"):
    with urllib.request.urlopen(srv.url + path, timeout=10) as r:
        return json.load(r)


def post(srv, path, body, kind="application/json"):
    req = urllib.request.Request(srv.url + path, data=json.dumps(body).encode(),
                                 headers={"Content-Type": kind})
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, json.load(r)
    except urllib.error.HTTPError as err:
        return err.code, json.load(err)


def until(pred, timeout=20.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.02)
    return False


def test_listens_on_the_loopback_address_only(tmp_path, served):
    sess = session(tmp_path)
    for host in ("0.0.0.0", "", "localhost", "192.168.1.2", "::"):
        with pytest.raises(ValueError, match="listens only on 127.0.0.1"):
            PlayServer(sess, host=host)
    srv = served(sess, paused=True)
    assert srv.httpd.socket.getsockname()[0] == "127.0.0.1"
    assert srv.url.startswith("http://127.0.0.1:")
    # a request naming another host (DNS rebinding) is refused
    req = urllib.request.Request(srv.url + "state", headers={"Host": "evil.example:80"})
    with pytest.raises(urllib.error.HTTPError) as err:
        urllib.request.urlopen(req, timeout=10)
    assert err.value.code == 403


def test_state_then_a_refused_and_a_queued_move(tmp_path, served):
    srv = served(paused=True)
    st = get(srv)
    assert st["tick"] == 0 and not st["hand_over"] and st["seat"] == 0
    assert st["layout"]["teams"][0]["river"][0] == [ACE]
    assert ACE_MOVE in st["legal"] and "wait" in st["legal"]
    code, res = post(srv, "move", {"move": "flip"})
    assert code == 409 and not res["ok"]
    assert res["error"].startswith("R18: the available ace AD must go to the Lake first")
    code, res = post(srv, "move", {"move": "waste>lake"})
    assert code == 409 and res["error"].startswith("R9:")
    code, res = post(srv, "move", {"move": "nonsense"})
    assert code == 409 and res["error"].startswith("docs/api.md:")
    assert get(srv)["queued"] is None                   # nothing queued by a refusal
    code, res = post(srv, "move", {"move": ACE_MOVE})
    assert code == 200 and res == {"ok": True, "queued": ACE_MOVE, "tick": 0}
    assert get(srv)["queued_tick"] == 0                 # checked on, and played at, tick 0
    srv.session.tick()                                  # the tick the clock would play
    st = get(srv)
    assert st["tick"] == 1 and st["queued"] is None
    assert [ACE] in st["layout"]["lake"]
    assert any(f"seat 0 (you) {ACE_MOVE}" in line for line in st["log"])


def test_a_refusal_on_a_stale_page_names_both_ticks(tmp_path, served):
    srv = served(paused=True)
    srv.session.tick()                                  # the page still shows tick 0
    code, res = post(srv, "move", {"move": "flip", "tick": 0})
    assert code == 409 and res["error"].startswith("R18:")
    assert res["error"].endswith("(the table moved on: the page showed tick 0, now tick 1)")
    code, res = post(srv, "move", {"move": "flip", "tick": 1})
    assert code == 409 and "moved on" not in res["error"]


def test_bad_requests_are_refused_with_a_reason(tmp_path, served):
    srv = served(paused=True)
    assert post(srv, "move", {"move": "flip"}, kind="text/plain")[0] == 415
    assert post(srv, "move", {"mv": "flip"})[0] == 400
    assert post(srv, "nowhere", {})[0] == 404


def test_the_clock_plays_ticks(tmp_path, served):
    srv = served(tick_ms=20)
    assert until(lambda: get(srv)["tick"] >= 3)
    code, res = post(srv, "pause", {"paused": True})
    assert code == 200 and res["paused"]
    time.sleep(0.1)
    t = get(srv)["tick"]
    time.sleep(0.2)
    assert get(srv)["tick"] == t                        # paused: no tick


def test_the_hand_ends_with_scores_and_a_replay(tmp_path, served):
    srv = served(session(tmp_path, max_ticks=15), tick_ms=10)
    post(srv, "move", {"move": ACE_MOVE})
    assert srv.wait_hand_over(timeout=30)
    st = get(srv)
    assert st["hand_over"] and st["truncated"] and st["tick"] == 15
    assert st["replay"] == str(tmp_path / "hand.nertz.json.gz")
    for move in ("wait", ACE_MOVE):
        code, res = post(srv, "move", {"move": move})
        assert code == 409 and res["error"].startswith("R26: the hand is over: max_ticks=15")
    rep = Replay.load(st["replay"])
    rep.check()
    assert rep.agents == ["person", "heuristic"]
    assert rep.hands[0].end["scores"] == st["scores"]
    frames = rep.frames(0)
    assert frames[-1]["layout"] == st["layout"]


def test_a_busy_person_is_refused_by_r21(tmp_path):
    sess = session(tmp_path, human_period=3)
    assert sess.config.speeds == (3, 1)
    assert sess.request(ACE_MOVE) == ""
    sess.tick()
    assert sess.request("wait") == ""
    assert sess.request("flip").startswith("R21: seat 0 is busy until tick 3 (now tick 1)")


def test_a_start_layout_and_agents_per_seat(tmp_path):
    layout = {"lake": [], "teams": [
        {"nertz": ["2S", "AS"], "river": [["KD"], [], [], []], "stream": ["5C"], "waste": 0},
        {"nertz": ["9H"], "river": [["8C"], [], [], []], "stream": ["4D"], "waste": 0},
        {"nertz": ["7H"], "river": [[], [], [], []], "stream": ["3D"], "waste": 0}]}
    sess = PlaySession(RulesConfig(num_teams=3, max_ticks=10), against="greedy,random",
                       seat=1, start_layout=layout, replay_out=tmp_path / "l.nertz.json.gz")
    assert sess.agents == ["greedy", "person", "random"]
    sess.tick()                                         # greedy plays its ace (R18)
    assert ["AS"] in sess.table.layout()["lake"]
    while not sess.table.hand_over:
        sess.tick()
    Replay.load(sess.replay_path).check()
    with pytest.raises(ValueError, match="one agent for all 2 other seats or one per seat"):
        PlaySession(RulesConfig(num_teams=3), against="greedy,random,random")
    with pytest.raises(ValueError, match="seat=2"):
        PlaySession(RulesConfig(num_teams=2), seat=2)


def test_terminal_with_piped_input(tmp_path):
    sess = session(tmp_path, max_ticks=8, against="greedy")
    out = io.StringIO()
    # a refused flip (R18), an unknown number, then the ace by its number; then waits (Enter:
    # the end of input would quit)
    path = play_terminal(sess, io.StringIO("flip\n7\n1\n" + "\n" * 8), out)
    text = out.getvalue()
    assert "refused: R18: the available ace AD must go to the Lake first" in text
    assert "no move [7]: choose 0..1" in text
    assert f"tick 0: seat 0 (you) {ACE_MOVE}" in text
    assert "Final scores (R29): team 0 (you)" in text
    assert [ACE] in sess.table.layout()["lake"]
    Replay.load(path).check()


def test_terminal_quit_writes_no_replay(tmp_path):
    sess = session(tmp_path, max_ticks=8)
    assert play_terminal(sess, io.StringIO("q\n"), io.StringIO()) is None
    assert not (tmp_path / "hand.nertz.json.gz").exists()


def test_cli_terminal(tmp_path, monkeypatch, capsys):
    from agents.cli import main
    out = tmp_path / "cli.nertz.json.gz"
    monkeypatch.setattr("sys.stdin", io.StringIO("1\n" + "\n" * 5))
    assert main(["play", "--human", "--terminal", "--teams", "2", "--max-ticks", "5",
                 "--seed", str(SEED), "--against", "greedy", "--replay-out", str(out)]) == 0
    assert "replay written to" in capsys.readouterr().out
    Replay.load(out).check()
    assert main(["play", "--terminal", "--teams", "2"]) == 2
    assert "--terminal is an option of 'nertz play --human'" in capsys.readouterr().err


def test_against_a_learned_agent(tmp_path):
    pytest.importorskip("sb3_contrib")
    sess = session(tmp_path, max_ticks=6, against="learned")
    assert sess.agents[1] == "learned"
    while not sess.table.hand_over:
        sess.tick()
    Replay.load(sess.replay_path).check()


def test_a_failing_agent_stops_the_clock_with_its_reason(tmp_path, served):
    class Broken:
        name = "broken"

        def act(self, observation, action_mask):
            raise RuntimeError("no move today")

    srv = served(session(tmp_path, against=[Broken()]), tick_ms=10)
    assert until(lambda: get(srv)["error"] is not None)
    st = get(srv)
    assert "no move today" in st["error"] and st["tick"] == 0
    assert srv.wait_hand_over(timeout=1)          # returns at once: nothing will end the hand


def test_cli_web_serves_on_loopback_and_ends_with_a_replay(tmp_path, capsys, monkeypatch):
    """`nertz play --human` as a user runs it (no browser opened): the page answers on the
    printed loopback URL at tick 0 until Start, then the clock plays the hand out, then the
    scores and the replay."""
    import re
    import threading

    from agents.cli import main
    opened = []
    monkeypatch.setattr("webbrowser.open", opened.append)
    out = tmp_path / "web.nertz.json.gz"
    rc = []
    run = threading.Thread(target=lambda: rc.append(main(
        ["play", "--human", "--no-browser", "--teams", "2", "--max-ticks", "40", "--tick-ms",
         "20", "--seed", str(SEED), "--against", "greedy", "--replay-out", str(out)])))
    run.start()
    url = []
    assert until(lambda: url or url.extend(re.findall(r"http://127\.0\.0\.1:\d+/",
                                                        capsys.readouterr().out)))
    def state():
        with urllib.request.urlopen(url[0] + "state", timeout=10) as r:
            return json.load(r)
    assert state()["tick"] == 0 and not state()["started"] and ACE_MOVE in state()["legal"]
    time.sleep(0.3)                                   # 15 ticks of 20 ms: the clock waits
    assert state()["tick"] == 0
    req = urllib.request.Request(url[0] + "start", data=b"{}",
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=10) as r:
        assert json.load(r) == {"ok": True, "started": True}
    run.join(60)
    assert not run.is_alive() and rc == [0] and opened == []
    assert "replay written to" in capsys.readouterr().out
    Replay.load(out).check()
