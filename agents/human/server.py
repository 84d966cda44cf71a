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

import errno
import io
import json
import sys
import threading
import time
import webbrowser
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from nertz_env.config import RulesConfig
from nertz_env.replay.html import page

from .pace import DEFAULT_TICK_MS, pace_from_args
from .session import PERSON, PlaySession
from .terminal import play_terminal
from .warmup import warm_up
from .wire import BODIES, BadRequest, content_length, parse_body

HOST = "127.0.0.1"
REQUEST_TIMEOUT_S = 5.0        # a whole request (headers and body) from a client that is slow
MAX_CONNECTIONS = 16           # the page holds one at a time


# ---------------------------------------------------------------------- the web page
class _DeadlineReader(io.RawIOBase):
    """A socket's bytes, each read under what is left of the request's deadline, so a client
    that sends slowly (a byte at a time) cannot hold a server thread past it."""

    def __init__(self, sock, deadline: float):
        self.sock, self.deadline = sock, deadline

    def readable(self) -> bool:
        return True

    def readinto(self, buf) -> int:
        left = self.deadline - time.monotonic()
        if left <= 0:
            raise TimeoutError("the request took too long")
        self.sock.settimeout(left)
        return self.sock.recv_into(buf)


class _HTTPServer(ThreadingHTTPServer):
    """At most MAX_CONNECTIONS at once (one more is closed unanswered), no tracebacks."""
    daemon_threads = True

    def __init__(self, address, handler):
        self._slots = threading.BoundedSemaphore(MAX_CONNECTIONS)
        super().__init__(address, handler)

    def process_request(self, request, client_address):
        if not self._slots.acquire(blocking=False):
            self.shutdown_request(request)
            return
        try:
            super().process_request(request, client_address)
        except BaseException:
            self._slots.release()
            raise

    def process_request_thread(self, request, client_address):
        try:
            super().process_request_thread(request, client_address)
        finally:
            self._slots.release()

    def handle_error(self, request, client_address):
        err = sys.exc_info()[1]
        if not isinstance(err, (TimeoutError, ConnectionError)):  # a client gone: its loss
            print(f"nertz: play server: a request failed: {err!r}", file=sys.stderr)


def _bind(port: int) -> _HTTPServer:
    """The server on HOST:port, or a one-line ValueError naming the port."""
    def handler_placeholder(*args):            # replaced in PlayServer.__init__
        raise RuntimeError("no handler")

    try:
        return _HTTPServer((HOST, port), handler_placeholder)
    except OSError as err:
        if err.errno == errno.EADDRINUSE:
            why = "is already in use (another nertz play, or another program)"
        elif err.errno == errno.EACCES:
            why = "needs privileges this user does not have (ports below 1024 do)"
        else:
            why = f"cannot be opened ({err.strerror or err})"
        raise ValueError(f"--port {port}: {HOST}:{port} {why}; choose another port, or "
                         "--port 0 for any free one") from None


class PlayServer:
    """The session on a wall clock, served on 127.0.0.1 (module docstring).

    server = PlayServer(session, tick_ms=200, wait_start=True); server.start(); ...
    server.url ...; server.stop(). port 0 takes a free port. paused=True starts with the
    clock stopped. wait_start=True holds the hand at tick 0 until POST /start (the page's
    Start button; `nertz play --human` always does); False starts the clock with start()."""

    def __init__(self, session: PlaySession, tick_ms: int = DEFAULT_TICK_MS, host: str = HOST,
                 port: int = 0, paused: bool = False, wait_start: bool = False,
                 request_timeout_s: float = REQUEST_TIMEOUT_S):
        if host != HOST:
            raise ValueError(f"host={host!r}: the play server listens only on {HOST} (the "
                             "loopback address), so no other machine can reach it")
        if isinstance(port, bool) or not isinstance(port, int) or not 0 <= port <= 65535:
            raise ValueError(f"port={port!r} must be an int 0..65535 (0: any free port)")
        if isinstance(tick_ms, bool) or not isinstance(tick_ms, int) or not 10 <= tick_ms <= 60000:
            raise ValueError(f"tick_ms={tick_ms!r} must be an int from 10 to 60000 (ms per tick)")
        if isinstance(request_timeout_s, bool) or not isinstance(request_timeout_s, (int, float)) \
                or not 0 < request_timeout_s <= 600:
            raise ValueError(f"request_timeout_s={request_timeout_s!r} must be a number of "
                             "seconds in (0, 600]")
        self.session, self.tick_ms, self.paused = session, tick_ms, bool(paused)
        self.request_timeout_s = float(request_timeout_s)
        self.started = not wait_start
        self.httpd = _bind(port)
        self.httpd.RequestHandlerClass = _handler(self)
        self.host, self.port = self.httpd.server_address[:2]
        self.url = f"http://{self.host}:{self.port}/"
        self._stop = threading.Event()
        self._go = threading.Event()
        if self.started:
            self._go.set()
        self._threads: list = []
        self.error: str | None = None

    def start(self) -> PlayServer:
        for target in (self.httpd.serve_forever, self._clock):
            th = threading.Thread(target=target, daemon=True)
            th.start()
            self._threads.append(th)
        return self

    def start_hand(self) -> None:
        """Start the clock (POST /start): tick 0 lasts one whole tick from now."""
        self.started = True
        self._go.set()

    def _clock(self) -> None:
        while not self._go.wait(0.05):
            if self._stop.is_set():
                return
        period = self.tick_ms / 1000
        due = time.monotonic() + period
        while not self._stop.wait(max(0.0, due - time.monotonic())):
            due += period
            if time.monotonic() > due:         # fell behind (a slow agent): no burst of ticks
                due = time.monotonic() + period
            if not self.paused and not self.session.table.hand_over and self.error is None:
                try:
                    self.session.tick()
                except Exception as err:       # an agent failed (or the replay could not be
                    why = str(err) if isinstance(err, ValueError) else repr(err)  # written)
                    self.error = f"the clock stopped at tick {self.session.table.tick}: {why}"
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
        out["started"] = self.started
        out["periods"] = list(self.session.config.periods)
        return out

    def move(self, body: dict) -> tuple[int, dict]:
        """POST /move: (status, answer). Refused before Start; checked against the current
        position, naming the tick the page showed when that is not the current one."""
        move = body["move"]
        if not self.started:
            return 409, {"ok": False, "move": move,
                         "error": "the hand has not started: press Start (the clock waits at "
                                  "tick 0 until then)"}
        with self.session.lock:
            now = self.session.table.tick
            why = self.session.request(move)
            if why:
                seen = body.get("tick")
                if seen is not None and seen != now and not self.session.table.hand_over:
                    why += f" (the table moved on: the page showed tick {seen}, now tick {now})"
                return 409, {"ok": False, "move": move, "tick": now, "error": why}
            return 200, {"ok": True, "queued": str(self.session.queued), "tick": now}

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
        timeout = server.request_timeout_s     # every socket operation (the writes too)

        def setup(self):
            super().setup()
            self.rfile.close()                 # (its socket stays open: the writer holds it)
            deadline = time.monotonic() + server.request_timeout_s
            self.rfile = io.BufferedReader(_DeadlineReader(self.connection, deadline))

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
                self._json(404, {"ok": False, "error": f"no page {path[:60]!r}: GET / or /state"})

        def do_POST(self):
            self.close_connection = True
            if not self._host_ok():
                return
            path = self.path.split("?")[0]
            if path not in BODIES:
                self._json(404, {"ok": False, "error": f"no endpoint {path[:60]!r}: POST "
                                                       + ", ".join(BODIES)})
                return
            if not self.headers.get("Content-Type", "").startswith("application/json"):
                self._json(415, {"ok": False, "error": "POST a JSON body "
                                                       "(Content-Type: application/json)"})
                return
            try:
                raw = self.rfile.read(content_length(self.headers))
                body = parse_body(path, raw)
            except BadRequest as err:
                self._json(err.status, {"ok": False, "error": str(err)})
                return
            if path == "/move":
                self._json(*server.move(body))
            elif path == "/pause":
                server.paused = body["paused"]
                self._json(200, {"ok": True, "paused": server.paused})
            else:
                server.start_hand()
                self._json(200, {"ok": True, "started": True})

    return Handler


def run_web(session: PlaySession, tick_ms: int = DEFAULT_TICK_MS, port: int = 0,
            open_browser: bool = True, out=None, about: str = "") -> Path | None:
    """Serve the page until the hand ends (or Ctrl-C); returns the replay path. The hand
    waits at tick 0 until the person presses Start on the page."""
    out = sys.stdout if out is None else out
    server = PlayServer(session, tick_ms=tick_ms, port=port, wait_start=True).start()
    print(f"Nertz: open {server.url} in a browser and press Start (Ctrl-C to stop)"
          + (f"; {about}" if about else ""), file=out, flush=True)
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
    """`nertz play --human [--terminal]` (agents/cli/play.py parses the options): every
    option and the replay's path checked before the hand starts, then numba's kernels
    compiled before the clock (warmup.py: a notice on stderr when not cached yet)."""
    pace = pace_from_args(args)
    seat = 0 if args.seat is None else args.seat
    session = PlaySession(config, against=pace["against"], seat=seat, seed=args.seed,
                          human_period=args.human_period, bot_period=pace["bot_period"],
                          replay_out=args.replay_out or None)
    warm_up(session)                          # numba compiles before the clock, said once
    if args.terminal:
        play_terminal(session)
        return 0
    periods = session.config.periods
    bots = sorted({periods[s] * pace["tick_ms"] for s in session.bot_seats})
    about = (f"level {pace['level']}: " if pace["level"] else "") + \
        f"the bots move at most every {'/'.join(map(str, bots))} ms, you every " \
        f"{periods[seat] * pace['tick_ms']} ms"
    run_web(session, tick_ms=pace["tick_ms"], port=args.port or 0,
            open_browser=not args.no_browser, about=about)
    return 0
