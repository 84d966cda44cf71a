"""A person against the bots: `nertz play --human` (a web page) and `--terminal`.

Design
- `PlaySession` is one hand at one table (an Engine behind the readable Table API) with the
  person at one seat and agents (agents.registry.make_agent specs: bots or learned models)
  at the others. `session.tick()` plays one tick (R20): the person's queued move (or wait),
  every agent's move from `act_batch(observations, action_masks)` of its seats, then
  `table.step`. A `Recorder` (nertz_env/replay/format.py) is attached to the engine before the
  deal, so the hand ends with a replay file that plays back exactly.
- A move the person asks for is checked at once against the current position: a legal one
  is queued for the next tick, anything else is refused with the rule that forbids it
  (nertz_env/table/explain.py). Positions change only at ticks, under one lock, so a queued move
  is still legal when its tick comes.
- `PlayServer` runs the session on a wall clock (a background thread, one tick every
  `tick_ms`; the person's speed is their seat period, R21) and serves a page on 127.0.0.1
  only (any other host is a ValueError): GET / (the page: web/table.js and table.css
  inlined, the same picture as the replay viewer), GET /state (JSON), POST /move
  {"move": "waste>lake"}, POST /pause {"paused": true}. Requests must name the loopback host
  (a guard against DNS rebinding) and POSTs must be JSON (a cross-site form cannot send one
  without a preflight).
- `play_terminal` is the fallback: tick by tick, the table as text, the legal moves
  numbered, a number or move text read from a stream (so it runs with piped stdin).
"""
from __future__ import annotations

import json
import sys
import threading
import time
import webbrowser
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import numpy as np

from nertz_env.actions import Move
from nertz_env.config import RulesConfig
from nertz_env.engine import Engine
from nertz_env.table.explain import explain_illegal, hand_over_reason
from nertz_env.replay.format import SUFFIX, Recorder
from nertz_env.table.table import Table
from nertz_env.replay.html import asset, script_json

HOST = "127.0.0.1"
PERSON = "person"
LOG_LINES = 60


def default_replay_path(seed: int) -> Path:
    stamp = datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S")
    return Path("runs") / "play" / f"{stamp}-seed{seed}{SUFFIX}"


class PlaySession:
    """One hand: the person at `seat`, agents at the other seats (module docstring).

    against: agent specs (or Agent objects) for the other seats in seat order, or one spec
    for all of them. human_period: the person's seat period (R21), None keeps the config's.
    start_layout: an API.md layout to start from instead of a seeded deal."""

    def __init__(self, config: RulesConfig | None = None, against=("heuristic",), seat: int = 0,
                 seed: int = 0, human_period: int | None = None, replay_out=None,
                 start_layout: dict | None = None):
        from ..registry import make_agent, split_specs
        config = RulesConfig() if config is None else config
        if not isinstance(config, RulesConfig):
            raise ValueError(f"config must be a RulesConfig, got {type(config).__name__}")
        S = config.num_seats
        if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < S:
            raise ValueError(f"seat={seat!r}: the person's seat must be one of 0..{S - 1}")
        if human_period is not None:
            if isinstance(human_period, bool) or not isinstance(human_period, int) \
                    or human_period < 1:
                raise ValueError(f"human_period={human_period!r} must be an int >= 1 (R21)")
            periods = list(config.periods)
            periods[seat] = human_period
            config = config.replace(speeds=tuple(periods))
        specs = split_specs(against) if isinstance(against, str) else list(against)
        if len(specs) == 1:
            specs = specs * (S - 1)
        if len(specs) != S - 1:
            raise ValueError(f"against: name one agent for the other seat, got {len(specs)}"
                             if S == 2 else
                             f"against: name one agent for all {S - 1} other seats or one per "
                             f"seat ({S - 1}), got {len(specs)}")
        self.config, self.seat, self.seed = config, seat, seed
        self.bot_seats = [s for s in range(S) if s != seat]
        made: dict = {}                       # one object per distinct spec (a learned
        self.bots = []                        # model is loaded once); random ones apart
        for i, spec in enumerate(specs):
            key = spec if isinstance(spec, str) and not spec.strip().startswith("random") else i
            if key not in made:
                made[key] = make_agent(spec, seed=seed + i)
            self.bots.append(made[key])
        self.agents = [PERSON if s == seat else None for s in range(S)]
        for s, bot in zip(self.bot_seats, self.bots):
            self.agents[s] = str(getattr(bot, "name", type(bot).__name__))
        meta = {"source": "nertz play --human", "seed": seed, "person_seat": seat}
        if start_layout is None:
            engine = Engine(config, 1, seed)
            self.recorder = Recorder(engine, agents=self.agents, meta=meta)
            engine.reset(hands=[0])
            self.table = Table(engine)
        else:
            self.table = Table.from_layout(start_layout, config)
            self.recorder = Recorder(self.table.engine, agents=self.agents, meta=meta)
        self.engine = self.table.engine
        self.team = config.seat_team[seat]
        self.queued = None                    # the person's move for the next tick (a Move)
        self.log: list = []
        self.replay_out = Path(replay_out) if replay_out else default_replay_path(seed)
        self.replay_path: Path | None = None
        self.lock = threading.RLock()

    # ------------------------------------------------------------------ the person
    def legal(self) -> list:
        return [str(m) for m in self.table.legal_moves(self.seat)]

    def request(self, move) -> str:
        """Check the person's move now: '' and queued for the next tick when legal, else
        the refusal (the rule that forbids it). Nothing is queued on a refusal."""
        with self.lock:
            why = hand_over_reason(self.table) or explain_illegal(self.table, self.seat, move)
            if why:
                return why
            self.queued = Move.parse(move)    # (a shift without index: completed by step)
            return ""

    # ------------------------------------------------------------------ a tick
    def bot_moves(self) -> dict:
        """seat -> Move of every agent seat, from act_batch on its own seats."""
        eng = self.engine
        masks = eng.masks[0]
        moves = {}
        need = [s for s in self.bot_seats if masks[s].sum() > 1]   # a busy seat only waits
        if not need:
            return moves
        obs = eng.observe()[0]
        for s in need:
            bot = self.bots[self.bot_seats.index(s)]
            rows = np.array([s])
            if hasattr(bot, "act_batch"):
                a = int(bot.act_batch(obs[rows], masks[rows])[0])
            else:
                a = int(bot.act(obs[s], masks[s]))
            moves[s] = self.table.decode(a, s)
        return moves

    def tick(self):
        """Play one tick; returns the TickResult (None when the hand is already over)."""
        with self.lock:
            if self.table.hand_over:
                return None
            t = self.table.tick
            burns = self.table.layout()["burns"]
            moves = self.bot_moves()
            mine = self.queued
            self.queued = None
            if mine is not None and self.table.is_legal(self.seat, mine):
                moves[self.seat] = mine
            res = self.table.step(moves)
            for s in sorted(moves):
                m = moves[s]
                if str(m) == "wait":
                    continue
                who = "you" if s == self.seat else self.agents[s]
                ok = "" if res.applied[s] else "  failed: another move got there first (R22)"
                self._say(f"tick {t}: seat {s} ({who}) {m}{ok}")
            lay = self.table.layout()
            if lay["burns"] > burns:
                self._say(f"tick {t}: the Streams were burned (R27)")
            for team in res.callers:
                self._say(f"tick {t}: team {team} called Nertz!")
            if res.hand_over:
                self.finish()
            return res

    def _say(self, line: str) -> None:
        self.log.append(line)
        del self.log[:-LOG_LINES]

    def finish(self) -> Path:
        """Write the replay (once) and log the end of the hand."""
        if self.replay_path is None:
            how = "max_ticks reached, R26" if self.table.truncated else "Nertz called, R24"
            self._say(f"hand over at tick {self.table.tick} ({how}): scores "
                      f"{self.table.hand_scores()}")
            self.replay_path = self.recorder.replay().save(self.replay_out)
            self._say(f"replay written to {self.replay_path}")
        return self.replay_path

    def state(self) -> dict:
        with self.lock:
            lay = self.table.layout()
            return {
                "tick": lay["tick"], "layout": lay, "scores": self.table.hand_scores(),
                "hand_over": self.table.hand_over, "truncated": self.table.truncated,
                "seat": self.seat, "team": self.team, "agents": self.agents,
                "seat_team": list(self.config.seat_team), "legal": self.legal(),
                "queued": None if self.queued is None else str(self.queued),
                "ready": lay["ready"][self.seat] <= lay["tick"],
                "log": list(self.log),
                "replay": None if self.replay_path is None else str(self.replay_path),
            }


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
        cfg = self.session.config
        title = (f"Nertz: you (seat {self.session.seat}) against "
                 + ", ".join(a for a in self.session.agents if a != PERSON))
        return (PLAY_HTML.replace("__TITLE__", _esc(title))
                .replace("__CSS__", asset("table.css"))
                .replace("__TABLE_JS__", asset("table.js"))
                .replace("__BOOT__", script_json({"seat": self.session.seat,
                                                  "team": self.session.team,
                                                  "teams": cfg.num_teams})))


def _esc(text: str) -> str:
    import html
    return html.escape(text)


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


PLAY_HTML = r"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>__TITLE__</title>
<style>__CSS__
.bar { display: flex; gap: 8px; align-items: center; padding: 8px 12px; background: #123823; flex-wrap: wrap; }
.bar button, .bar input { font: inherit; }
h1 { font-size: 16px; margin: 0; padding: 8px 12px; }
#status { font-weight: 600; }
#error { min-height: 20px; padding: 4px 12px; font-weight: 700; color: #fecaca; }
#error.refused { background: #7f1d1d; }
#queued { color: #fde047; }
.side { display: flex; gap: 30px; padding: 0 12px 16px; }
.side ul { margin: 4px 0; padding-left: 18px; max-height: 260px; overflow: auto; }
.side h3 { margin: 6px 0 0; font-size: 14px; }
#legal button { margin: 2px; font: 12px monospace; }
#final { display: none; padding: 10px 12px; background: #fde047; color: #222; font-weight: 700; }
#final.shown { display: block; }
.help { font-size: 12px; opacity: .8; padding: 0 12px; }
</style></head><body>
<h1>__TITLE__</h1>
<div class="help">Click one of your cards (yellow frame), then where it goes: the Lake (a pile,
or the dashed slot for an ace), or a River column. Or drag it there. Click the stock to flip.</div>
<div class="bar">
 <span id="status">connecting...</span>
 <button id="flip">flip</button><button id="wait">wait</button>
 <button id="call" style="display:none">call Nertz</button>
 <button id="pause">pause</button>
 <input id="move-text" placeholder="or type a move: river1+waste>lake" size="26">
 <button id="send">send</button>
 <span id="queued"></span>
</div>
<div id="error" role="alert"></div>
<div id="final"></div>
<div id="table"></div>
<div class="side">
 <div><h3>Your legal moves</h3><div id="legal"></div></div>
 <div><h3>Log</h3><ul id="log"></ul></div>
</div>
<script>__TABLE_JS__</script>
<script>
(function () {
  "use strict";
  var boot = __BOOT__;
  var $ = function (id) { return document.getElementById(id); };
  var state = null, selected = null, dragging = false, lastKey = "";

  function showError(text) {
    $("error").textContent = text || "";
    $("error").className = text ? "refused" : "";
  }

  function send(move) {
    selected = null;
    return fetch("/move", {method: "POST", headers: {"Content-Type": "application/json"},
                           body: JSON.stringify({move: move})})
      .then(function (r) { return r.json(); })
      .then(function (res) {
        if (res.ok) { showError(""); $("queued").textContent = "queued: " + res.queued; }
        else { showError(move + " refused: " + res.error); }
        draw(true);
      });
  }

  function topIndex(col) { return state.layout.teams[boot.team].river[col].length - 1; }

  function moveText(src, dst) {              // API.md move text, or null for no move
    var river = /^river(\d+):(\d+)$/.exec(src);
    if (dst === "lake") {
      if (river && parseInt(river[2], 10) === topIndex(parseInt(river[1], 10)))
        return "river" + river[1] + ">lake";
      return src + ">lake";
    }
    if (river) return river[1] === dst.slice(5) ? null : src + ">" + dst;
    return src + ">" + dst;
  }

  function draw(force) {
    if (!state || dragging) return;
    var key = JSON.stringify([state.layout, selected, state.scores]);
    if (force !== true && key === lastKey) return;
    lastKey = key;
    NertzTable.render($("table"), state.layout, {seatTeam: state.seat_team, agents: state.agents,
      scores: state.scores, active: state.hand_over ? -1 : boot.team, selected: selected});
    document.querySelectorAll("[data-src]").forEach(function (e) { e.draggable = true; });
  }

  function update(s) {
    state = s;
    var busy = s.layout.ready[s.seat] - s.tick;
    if (s.error) showError(s.error);
    $("status").textContent = "tick " + s.tick + (s.paused ? " (paused)" : "") + " \u2014 " +
      (s.hand_over ? "hand over" : (s.ready ? "your seat is ready" : "busy for " + busy + " tick(s)"));
    $("queued").textContent = s.queued ? "queued: " + s.queued : "";
    $("call").style.display = s.legal.indexOf("call") >= 0 ? "" : "none";
    $("pause").textContent = s.paused ? "resume" : "pause";
    var legal = $("legal");
    var have = Array.prototype.map.call(legal.children, function (b) { return b.textContent; });
    if (have.join() !== s.legal.join()) {
      legal.textContent = "";
      s.legal.forEach(function (m) {
        var b = document.createElement("button");
        b.textContent = m;
        b.addEventListener("click", function () { send(m); });
        legal.appendChild(b);
      });
    }
    var log = $("log");
    if (log.children.length !== s.log.length || (s.log.length && log.lastChild.textContent !== s.log[s.log.length - 1])) {
      log.textContent = "";
      s.log.slice().reverse().forEach(function (line) {
        var li = document.createElement("li");
        li.textContent = line;
        log.appendChild(li);
      });
    }
    if (s.hand_over) {
      $("final").className = "shown";
      $("final").textContent = "Hand over at tick " + s.tick + ". Final scores: " +
        s.scores.map(function (x, t) { return "team " + t + (t === s.team ? " (you)" : "") + " " + (x >= 0 ? "+" : "") + x; }).join(", ") +
        (s.replay ? ". Replay: " + s.replay : "");
    }
    draw(false);
  }

  function poll() {
    fetch("/state").then(function (r) { return r.json(); }).then(update)
      .catch(function () { $("status").textContent = "server gone"; })
      .then(function () {
        if (!(state && ((state.hand_over && state.replay) || state.error))) setTimeout(poll, 150);
      });
  }

  function pick(target) {                   // a click on the table
    if (!state || state.hand_over) return;
    if (target.closest("[data-action=flip]")) { send("flip"); return; }
    var src = target.closest("[data-src]");
    var dst = target.closest("[data-dst]");
    if (selected) {
      if (src && src.dataset.src === selected) { selected = null; draw(true); return; }
      var column = dst && dst.dataset.dst.indexOf("river") === 0 ? dst.dataset.dst : null;
      var fromCol = /^river(\d+)/.exec(selected);
      if (dst && !(column && fromCol && column === "river" + fromCol[1] && src)) {
        var m = moveText(selected, dst.dataset.dst);
        if (m) { send(m); return; }
      }
    }
    if (src) { selected = src.dataset.src; draw(true); }
  }

  $("table").addEventListener("click", function (e) { pick(e.target); });
  $("table").addEventListener("dragstart", function (e) {
    var src = e.target.closest && e.target.closest("[data-src]");
    if (!src) { e.preventDefault(); return; }
    selected = src.dataset.src;
    dragging = true;
    e.dataTransfer.setData("text/plain", selected);
    e.dataTransfer.effectAllowed = "move";
  });
  $("table").addEventListener("dragover", function (e) {
    if (e.target.closest && e.target.closest("[data-dst]")) e.preventDefault();
  });
  $("table").addEventListener("drop", function (e) {
    e.preventDefault();
    dragging = false;
    var dst = e.target.closest("[data-dst]");
    var src = e.dataTransfer.getData("text/plain") || selected;
    var m = dst && src ? moveText(src, dst.dataset.dst) : null;
    if (m) send(m); else { selected = null; draw(true); }
  });
  $("table").addEventListener("dragend", function () { if (dragging) { dragging = false; draw(true); } });
  $("flip").addEventListener("click", function () { send("flip"); });
  $("wait").addEventListener("click", function () { send("wait"); });
  $("call").addEventListener("click", function () { send("call"); });
  $("send").addEventListener("click", function () { if ($("move-text").value) send($("move-text").value); });
  $("move-text").addEventListener("keydown", function (e) { if (e.key === "Enter") $("send").click(); });
  $("pause").addEventListener("click", function () {
    fetch("/pause", {method: "POST", headers: {"Content-Type": "application/json"},
                     body: JSON.stringify({paused: !(state && state.paused)})});
  });
  poll();
})();
</script>
</body></html>
"""


# ---------------------------------------------------------------------- the terminal
def play_terminal(session: PlaySession, stdin=None, out=None) -> Path | None:
    """Tick by tick in a terminal: the table, the person's legal moves numbered, a number or
    move text per line (Enter: wait, q: quit). A refused move prints the rule and asks
    again. At the end of input the person waits out the hand quietly. Returns the replay
    path (None when the person quit)."""
    stdin = sys.stdin if stdin is None else stdin
    out = sys.stdout if out is None else out
    table, seat = session.table, session.seat
    eof = False

    def say(*lines):
        print(*lines, sep="\n", file=out, flush=True)

    say(f"You are seat {seat} (team {session.team}) against "
        + ", ".join(f"seat {s} {a}" for s, a in enumerate(session.agents) if s != seat))
    while not table.hand_over:
        legal = session.legal()
        if eof or legal == ["wait"]:
            if not eof:
                say(f"tick {table.tick}: seat {seat} is busy (R21), waiting")
            session.tick()
            continue
        say("", table.render(), "your moves: " + "  ".join(f"[{i}] {m}" for i, m in enumerate(legal)))
        while True:
            print(f"tick {table.tick} move (number or text, Enter = wait, q = quit): ",
                  end="", file=out, flush=True)
            line = stdin.readline()
            if not line:
                eof = True
                say("", "(end of input: waiting out the hand)")
                break
            text = line.strip()
            if text.lower() in ("q", "quit"):
                say("quit: no replay written")
                return None
            if text.isdigit():
                if int(text) < len(legal):
                    text = legal[int(text)]
                else:
                    say(f"no move [{text}]: choose 0..{len(legal) - 1} or type a move")
                    continue
            why = session.request(text or "wait")
            if not why:
                break
            say(f"refused: {why}")
        session.tick()
        for line in session.log[-3:]:
            if line.startswith(f"tick {table.tick - 1}:"):
                say(line)
    path = session.finish()
    say("", table.render(),
        "Final scores (R29): " + ", ".join(f"team {t}{' (you)' if t == session.team else ''} "
                                           f"{s:+d}" for t, s in enumerate(table.hand_scores())),
        f"replay written to {path}")
    return path


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
    """`nertz play --human [--terminal]` (agents/cli.py parses the options)."""
    session = PlaySession(config, against=args.against or "heuristic", seat=args.seat,
                          seed=args.seed, human_period=args.human_period,
                          replay_out=args.replay_out or None)
    if args.terminal:
        play_terminal(session)
    else:
        run_web(session, tick_ms=args.tick_ms, port=args.port, open_browser=not args.no_browser)
    return 0
