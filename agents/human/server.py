"""`nertz play --human`: a PlaySession (session.py) on a wall clock, served as a web page on
127.0.0.1; `play_from_args` runs it (or the terminal fallback, terminal.py) for agents/cli.

- `PlayServer` runs the session on a wall clock (a background thread, one tick every
  `tick_ms`; the person's speed is their seat period, R21) and serves a page on 127.0.0.1
  only (any other host is a ValueError): GET / (nertz_env/web/play.html with play.js,
  play.css, table.js and table.css inlined: the same table picture as the replay viewer),
  GET /state (JSON), POST /move {"move": "waste>lake"}, POST /pause {"paused": true}.
  Requests must name the loopback host (a guard against DNS rebinding) and POSTs must be
  JSON (a cross-site form cannot send one without a preflight).
"""
from __future__ import annotations

import json
import sys
import threading
import time
import webbrowser
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from nertz_env.config import RulesConfig
from nertz_env.replay.html import page

from .session import PERSON, PlaySession
from .terminal import play_terminal

HOST = "127.0.0.1"


# ---------------------------------------------------------------------- the web page
class PlayServer:
    """The session on a wall clock, served on 127.0.0.1 (module docstring).

    server = PlayServer(session, tick_ms=400); server.start(); ... server.url ...;
    server.stop(). port 0 takes a free port. paused=True starts with the clock stopped."""

    def __init__(self, session: PlaySession, tick_ms: int = 400, host: str = HOST,
                 port: int = 0, paused: bool = False):
        if host != HOST:
            raise ValueError(f"host={host!r}: the play server listens only on {HOST} (the "
                             "loopback address), so no other machine can reach it")
        if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
            raise ValueError(f"port={port!r} must be an int 0..65535 (0: any free port)")
        if isinstance(tick_ms, bool) or not isinstance(tick_ms, int) or not 10 <= tick_ms <= 60000:
            raise ValueError(f"tick_ms={tick_ms!r} must be an int from 10 to 60000 (ms per tick)")
        self.session, self.tick_ms, self.paused = session, tick_ms, bool(paused)
        self.httpd = ThreadingHTTPServer((host, port), _handler(self))
        self.httpd.daemon_threads = True
        self.host, self.port = self.httpd.server_address[:2]
        self.url = f"http://{self.host}:{self.port}/"
        self._stop = threading.Event()
        self._threads: list = []
        self.error: str | None = None

    def start(self) -> PlayServer:
        for target in (self.httpd.serve_forever, self._clock):
            th = threading.Thread(target=target, daemon=True)
            th.start()
            self._threads.append(th)
        return self

    def _clock(self) -> None:
        period = self.tick_ms / 1000
        due = time.monotonic() + period
        while not self._stop.wait(max(0.0, due - time.monotonic())):
            due += period
            if time.monotonic() > due:         # fell behind (a slow agent): no burst of ticks
                due = time.monotonic() + period
            if not self.paused and not self.session.table.hand_over and self.error is None:
                try:
                    self.session.tick()
                except Exception as err:       # an agent failed: stop the clock, say why
                    self.error = f"the clock stopped at tick {self.session.table.tick}: {err!r}"
                    self.session._say(self.error)
                    print(f"nertz: error: {self.error}", file=sys.stderr)

    def stop(self) -> None:
        self._stop.set()
        self.httpd.shutdown()
        self.httpd.server_close()
        for th in self._threads:
            th.join(timeout=5)

    def wait_hand_over(self, timeout: float | None = None) -> bool:
        """Block until the hand is over (its replay written) or the clock stopped on an
        agent's error (self.error); False on timeout."""
        end = None if timeout is None else time.monotonic() + timeout
        while self.session.replay_path is None and self.error is None:
            if end is not None and time.monotonic() > end:
                return False
            time.sleep(0.05)
        return True

    def state(self) -> dict:
        out = self.session.state()
        out["paused"], out["tick_ms"], out["error"] = self.paused, self.tick_ms, self.error
        return out

    def page(self) -> str:
        """The play page (nertz_env/web/play.html): the title, and the seat, team and team
        count play.js reads."""
        sess = self.session
        title = (f"Nertz: you (seat {sess.seat}) against "
                 + ", ".join(a for a in sess.agents if a != PERSON))
        return page("play.html", text={"TITLE": title},
                    data={"BOOT": {"seat": sess.seat, "team": sess.team,
                                   "teams": sess.config.num_teams}})


def _handler(server: PlayServer):
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, fmt, *args):       # quiet: the page polls every 150 ms
            pass

        def _send(self, code: int, body: bytes, kind: str) -> None:
            self.send_response(code)
            self.send_header("Content-Type", kind)
            self.send_header("Content-Length", str(len(body)))
            self.send_header("Cache-Control", "no-store")
            self.end_headers()
            self.wfile.write(body)

        def _json(self, code: int, value) -> None:
            self._send(code, json.dumps(value).encode(), "application/json")

        def _host_ok(self) -> bool:
            if self.headers.get("Host") in (f"{HOST}:{server.port}", f"localhost:{server.port}"):
                return True
            self._json(403, {"ok": False, "error": "this server answers only requests to "
                                                   f"{HOST}:{server.port}"})
            return False

        def do_GET(self):
            if not self._host_ok():
                return
            path = self.path.split("?")[0]
            if path == "/":
                self._send(200, server.page().encode(), "text/html; charset=utf-8")
            elif path == "/state":
                self._json(200, server.state())
            else:
                self._json(404, {"ok": False, "error": f"no page {path!r}: GET / or /state"})

        def do_POST(self):
            if not self._host_ok():
                return
            path = self.path.split("?")[0]
            if not self.headers.get("Content-Type", "").startswith("application/json"):
                self._json(415, {"ok": False, "error": "POST a JSON body "
                                                       "(Content-Type: application/json)"})
                return
            try:
                n = int(self.headers.get("Content-Length", "0"))
                body = json.loads(self.rfile.read(min(n, 10000)) or b"{}")
            except ValueError:
                self._json(400, {"ok": False, "error": "the body is not JSON"})
                return
            if not isinstance(body, dict):
                self._json(400, {"ok": False, "error": "the body must be a JSON object"})
            elif path == "/move":
                move = body.get("move")
                if not isinstance(move, str):
                    self._json(400, {"ok": False, "error": 'send {"move": "waste>lake"} (API.md '
                                                           "move text)"})
                    return
                why = server.session.request(move)
                if why:
                    self._json(409, {"ok": False, "move": move, "error": why})
                else:
                    self._json(200, {"ok": True, "queued": str(server.session.queued)})
            elif path == "/pause":
                server.paused = bool(body.get("paused", not server.paused))
                self._json(200, {"ok": True, "paused": server.paused})
            else:
                self._json(404, {"ok": False, "error": f"no endpoint {path!r}: POST /move or /pause"})

    return Handler


def run_web(session: PlaySession, tick_ms: int = 400, port: int = 0, open_browser: bool = True,
            out=None) -> Path | None:
    """Serve the page until the hand ends (or Ctrl-C); returns the replay path."""
    out = sys.stdout if out is None else out
    server = PlayServer(session, tick_ms=tick_ms, port=port).start()
    print(f"Nertz: open {server.url} in a browser (Ctrl-C to stop)", file=out, flush=True)
    if open_browser:
        webbrowser.open(server.url)
    try:
        server.wait_hand_over()
        time.sleep(1.0)                        # the page's last poll shows the final scores
    except KeyboardInterrupt:
        print("\nstopped", file=out)
    finally:
        server.stop()
    if server.error is not None:
        raise ValueError(server.error)
    if session.replay_path is not None:
        print("Final scores (R29): " + ", ".join(f"team {t} {s:+d}" for t, s in
                                                  enumerate(session.table.hand_scores())),
              file=out)
        print(f"replay written to {session.replay_path}", file=out)
    return session.replay_path


def play_from_args(args, config: RulesConfig) -> int:
    """`nertz play --human [--terminal]` (agents/cli/play.py parses the options)."""
    session = PlaySession(config, against=args.against or "heuristic", seat=args.seat,
                          seed=args.seed, human_period=args.human_period,
                          replay_out=args.replay_out or None)
    if args.terminal:
        play_terminal(session)
    else:
        run_web(session, tick_ms=args.tick_ms, port=args.port, open_browser=not args.no_browser)
    return 0
