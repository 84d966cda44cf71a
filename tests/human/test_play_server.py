"""The play server against hostile or careless clients: bodies capped in size and nesting,
exact keys and types (a one-line 400 naming the field, nothing changed), a deadline on every
request (a slow client cannot hold a thread), a cap on connections, a port in use as one
line."""
from __future__ import annotations

import http.client
import json
import socket
import time

import pytest

from agents.human import server as server_mod
from agents.human.server import PlayServer
from agents.human.session import PlaySession
from agents.human.wire import MAX_BODY
from nertz_env.config import RulesConfig


@pytest.fixture
def srv(tmp_path):
    sess = PlaySession(RulesConfig(num_teams=2, max_ticks=200), against="greedy", seed=1,
                       replay_out=tmp_path / "h.nertz.json.gz")
    s = PlayServer(sess, paused=True, request_timeout_s=0.5).start()
    yield s
    s.stop()


def raw(srv, method, path, body=b"", headers=None, timeout=5.0):
    """(status, answer) of one request with exactly these bytes and headers."""
    conn = http.client.HTTPConnection(srv.host, srv.port, timeout=timeout)
    hdrs = {"Content-Type": "application/json", "Content-Length": str(len(body))}
    hdrs.update(headers or {})
    conn.putrequest(method, path, skip_accept_encoding=True)
    for k, v in hdrs.items():
        if v is not None:
            conn.putheader(k, v)
    conn.endheaders()
    conn.send(body)
    r = conn.getresponse()
    out = r.status, json.loads(r.read() or b"null")
    conn.close()
    return out


def state(srv):
    return raw(srv, "GET", "/state", headers={"Content-Type": None, "Content-Length": None})[1]


def unchanged(srv, before):
    now = state(srv)
    return all(now[k] == before[k] for k in ("tick", "queued", "paused", "started", "layout"))


BAD_BODIES = [
    # (path, body bytes, status, words the one-line error holds)
    ("/pause", b'{"paused": "false"}', 400, ["'paused' must be true or false", '"false"']),
    ("/pause", b'{"paused": 0}', 400, ["'paused' must be true or false"]),
    ("/pause", b'{"paused": null}', 400, ["'paused'"]),
    ("/pause", b"{}", 400, ["'paused' is missing"]),
    ("/pause", b'{"paused": false, "x": 1}', 400, ["unknown field 'x'"]),
    ("/pause", b'{"paused": true, "paused": false}', 400, ["'paused' twice"]),
    ("/move", b'{"move": 5}', 400, ["'move' must be move text"]),
    ("/move", b'{"move": ["flip"]}', 400, ["'move'"]),
    ("/move", b'{"move": "flip", "extra": true}', 400, ["unknown field 'extra'"]),
    ("/move", b'{"move": "flip", "tick": "0"}', 400, ["'tick'"]),
    ("/move", b'{"move": "flip", "tick": true}', 400, ["'tick'"]),
    ("/move", b'{"move": "flip", "tick": 1.5}', 400, ["'tick'"]),
    ("/move", b'{"move": "flip", "tick": -1}', 400, ["'tick'"]),
    ("/move", b'{"move": ""}', 400, ["1 to 80 characters"]),
    ("/move", b'{"move": "' + b"x" * 200 + b'"}', 400, ["1 to 80 characters"]),
    ("/move", b'{"move": NaN}', 400, ["NaN"]),
    ("/move", b'["flip"]', 400, ["must be a JSON object"]),
    ("/move", b'"flip"', 400, ["must be a JSON object"]),
    ("/move", b'{"move": "fl', 400, ["not valid JSON"]),
    ("/move", b'{"move": "\xff"}', 400, ["not valid JSON"]),
    ("/move", b"[" * 2000 + b"]" * 2000, 400, ["nested 2000 levels deep"]),
    ("/move", b'{"move": ' + b"[" * 1500 + b"]" * 1500 + b"}", 400, ["nested"]),
    ("/start", b'{"now": true}', 400, ["unknown field 'now'"]),
    ("/start", b"[]", 400, ["must be a JSON object"]),
]


@pytest.mark.parametrize("path,body,status,words", BAD_BODIES,
                         ids=[f"{p}:{b[:24]!r}" for p, b, _, _ in BAD_BODIES])
def test_a_bad_body_is_one_line_naming_the_field_and_changes_nothing(srv, path, body, status,
                                                                     words):
    before = state(srv)
    code, res = raw(srv, "POST", path, body)
    assert code == status and res["ok"] is False
    assert "\n" not in res["error"] and len(res["error"]) < 400
    for w in words:
        assert w in res["error"], res["error"]
    assert f"POST {path}" in res["error"] or "JSON object" in res["error"]
    assert unchanged(srv, before)


def test_the_exact_bodies_are_taken(srv):
    assert raw(srv, "POST", "/pause", b'{"paused": false}') == (200, {"ok": True,
                                                                       "paused": False})
    assert raw(srv, "POST", "/pause", b'{"paused": true}')[1]["paused"] is True
    code, res = raw(srv, "POST", "/move", b'{"move": "river0>lake", "tick": 0}')
    assert code == 200 and res["queued"] == "river0>lake"


def test_the_body_size_is_capped_before_reading(srv):
    before = state(srv)
    big = b'{"move": "' + b"w" * MAX_BODY + b'"}'
    code, res = raw(srv, "POST", "/move", big)
    assert code == 413 and f"at most {MAX_BODY} are read" in res["error"]
    # a length far beyond what is sent: refused at once, not waited for
    t = time.monotonic()
    code, res = raw(srv, "POST", "/move", b"{}", headers={"Content-Length": str(10**12)})
    assert code == 413 and time.monotonic() - t < 0.4
    for length in ("abc", "-5", "1e3", " "):
        code, res = raw(srv, "POST", "/move", b"{}", headers={"Content-Length": length})
        assert code == 400 and "Content-Length" in res["error"]
    code, res = raw(srv, "POST", "/move", b"{}", headers={"Transfer-Encoding": "chunked"})
    assert code == 411
    assert unchanged(srv, before)


def _closed_within(sock, seconds) -> bool:
    """True when the server closes the connection (recv returns b'') within `seconds`."""
    sock.settimeout(seconds)
    try:
        while sock.recv(1024):
            pass
        return True
    except (TimeoutError, socket.timeout):
        return False
    except ConnectionResetError:
        return True


def test_a_slow_client_is_cut_off_at_the_request_deadline(srv):
    silent = socket.create_connection((srv.host, srv.port))
    assert _closed_within(silent, 3.0)                 # sends nothing: closed after 0.5 s
    # a byte at a time, each well inside the per-read timeout: the whole request's deadline
    drip = socket.create_connection((srv.host, srv.port))
    drip.settimeout(3.0)
    t = time.monotonic()
    closed = False
    for ch in b"GET /state HTTP/1.1\r\nHost: x\r\nX-Slow: " + b"a" * 100:
        try:
            drip.send(bytes([ch]))
        except OSError:
            closed = True
            break
        time.sleep(0.05)
        if time.monotonic() - t > 2.5:
            break
    assert closed or _closed_within(drip, 1.0)
    assert time.monotonic() - t < 2.5
    # a body shorter than its Content-Length: the thread is freed at the deadline too
    short = socket.create_connection((srv.host, srv.port))
    short.sendall(f"POST /move HTTP/1.1\r\nHost: {srv.host}:{srv.port}\r\nContent-Type: "
                  "application/json\r\nContent-Length: 100\r\n\r\n{".encode())
    assert _closed_within(short, 3.0)
    for s in (silent, drip, short):
        s.close()
    assert state(srv)["tick"] == 0                    # and the server still answers


def test_connections_beyond_the_cap_are_closed_at_once(tmp_path):
    sess = PlaySession(RulesConfig(num_teams=2), against="greedy",
                       replay_out=tmp_path / "c.nertz.json.gz")
    srv = PlayServer(sess, request_timeout_s=5, paused=True).start()
    try:
        held = [socket.create_connection((srv.host, srv.port))
                for _ in range(server_mod.MAX_CONNECTIONS)]
        time.sleep(0.3)
        extra = socket.create_connection((srv.host, srv.port))
        t = time.monotonic()
        assert _closed_within(extra, 4.0) and time.monotonic() - t < 1.0
        for s in held + [extra]:
            s.close()
        assert until_answers(srv)                     # the slots come back
    finally:
        srv.stop()


def until_answers(srv, timeout=3.0) -> bool:
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            return state(srv)["tick"] == 0
        except (ConnectionError, http.client.HTTPException):
            time.sleep(0.05)
    return False


def test_a_port_in_use_is_one_line(tmp_path, capsys):
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen(1)
    port = busy.getsockname()[1]
    sess = PlaySession(RulesConfig(num_teams=2), against="greedy",
                       replay_out=tmp_path / "p.nertz.json.gz")
    try:
        with pytest.raises(ValueError, match=rf"--port {port}: 127\.0\.0\.1:{port} is already "
                                             r"in use .*--port 0 for any free one"):
            PlayServer(sess, port=port)
        from agents.cli import main
        assert main(["play", "--human", "--no-browser", "--teams", "2", "--port", str(port),
                     "--replay-out", str(tmp_path / "c.nertz.json.gz")]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and f"127.0.0.1:{port} is already in use" in err
        assert "Traceback" not in err
    finally:
        busy.close()
