"""The replay viewer as one self-contained HTML file: `write_html(replay, path, hand=0)`.

The page needs no server and fetches nothing: the table picture (web/table.js and
web/table.css, the same renderer as the person-vs-bots page of agents/human/server.py) is
inlined, and the hand's frames (Replay.frames: one layout, scores, moves and events per
position) are embedded as JSON. Controls: a range input over the ticks, previous / next /
play buttons, the arrow keys (Home / End for the ends), "next event" / "previous event"
(a Nertz call, a burn, a conflict, an illegal move), and a speed selector. Below the table,
the moves chosen at that tick per seat in priority order (applied or failed) and the events.

This module never imports `agents`; it only reads a Replay (nertz_env/replay/format.py).
"""
from __future__ import annotations

import html
import json
from pathlib import Path

WEB_DIR = Path(__file__).resolve().parents[1] / "web"


def asset(name: str) -> str:
    """The text of a file of nertz_env/web (table.js, table.css)."""
    path = WEB_DIR / name
    if path.parent != WEB_DIR or not path.is_file():
        raise ValueError(f"asset {name!r}: nertz_env/web holds "
                         + ", ".join(sorted(p.name for p in WEB_DIR.iterdir())))
    return path.read_text(encoding="utf-8")


def script_json(value) -> str:
    """JSON safe inside a <script> element (no '</' or '<!--' can end it early)."""
    return (json.dumps(value, separators=(",", ":"))
            .replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


VIEWER_JS = r"""
(function () {
  "use strict";
  var data = JSON.parse(document.getElementById("replay-data").textContent);
  var frames = data.frames, i = 0, timer = null;
  var $ = function (id) { return document.getElementById(id); };
  var scrub = $("scrub");
  scrub.max = frames.length - 1;

  function eventful(k) { return frames[k].events.length > 0; }

  function show(k) {
    i = Math.max(0, Math.min(frames.length - 1, k));
    $("note").textContent = "";
    var f = frames[i];
    scrub.value = i;
    $("tick-label").textContent = "tick " + f.tick + " / " + frames[frames.length - 1].tick;
    NertzTable.render($("table"), f.layout, {seatTeam: data.seat_team, agents: data.agents,
                                             scores: f.scores});
    var moves = $("moves");
    moves.textContent = "";
    if (!f.moves.length) {
      var end = document.createElement("li");
      end.textContent = "end of the hand: " + data.end;
      moves.appendChild(end);
    }
    f.order.forEach(function (s) {
      var li = document.createElement("li");
      var ok = f.applied.length ? f.applied[s] : true;
      li.className = f.moves[s] === "wait" ? "wait" : (ok ? "applied" : "failed");
      li.dataset.seat = s;
      li.textContent = "seat " + s + " (" + data.agents[s] + ", team " + data.seat_team[s] +
        "): " + f.moves[s] + (ok ? "" : "  \u2014 failed");
      moves.appendChild(li);
    });
    var ev = $("events");
    ev.textContent = "";
    if (!f.events.length) {
      var none = document.createElement("li");
      none.className = "none";
      none.textContent = "none";
      ev.appendChild(none);
    }
    f.events.forEach(function (e) {
      var li = document.createElement("li");
      li.textContent = e;
      ev.appendChild(li);
    });
  }

  function seek(step) {                 // the next (step 1) or previous (-1) eventful tick
    for (var k = i + step; k >= 0 && k < frames.length; k += step) {
      if (eventful(k)) { show(k); return; }
    }
    $("note").textContent = step > 0 ? "no later event" : "no earlier event";
  }

  function play() {
    if (timer) { clearInterval(timer); timer = null; $("play").textContent = "\u25b6 play"; return; }
    $("play").textContent = "\u23f8 pause";
    timer = setInterval(function () {
      if (i >= frames.length - 1) { play(); return; }
      show(i + 1);
    }, parseInt($("speed").value, 10));
  }

  scrub.addEventListener("input", function () { show(parseInt(scrub.value, 10)); });
  $("prev").addEventListener("click", function () { show(i - 1); });
  $("next").addEventListener("click", function () { show(i + 1); });
  $("play").addEventListener("click", play);
  $("next-event").addEventListener("click", function () { seek(1); });
  $("prev-event").addEventListener("click", function () { seek(-1); });
  $("speed").addEventListener("change", function () { if (timer) { play(); play(); } });
  document.addEventListener("keydown", function (e) {
    if (e.target && e.target.tagName === "SELECT") return;
    if (e.key === "ArrowRight") { show(i + 1); e.preventDefault(); }
    else if (e.key === "ArrowLeft") { show(i - 1); e.preventDefault(); }
    else if (e.key === "Home") show(0);
    else if (e.key === "End") show(frames.length - 1);
    else if (e.key === "n") seek(1);
    else if (e.key === "p") seek(-1);
    else if (e.key === " ") { play(); e.preventDefault(); }
  });
  show(0);
})();
"""

VIEWER_CSS = """
.bar { display: flex; gap: 8px; align-items: center; padding: 8px 12px; background: #123823;
       position: sticky; top: 0; z-index: 5; flex-wrap: wrap; }
.bar input[type=range] { flex: 1; min-width: 200px; }
.bar button, .bar select { font: inherit; }
h1 { font-size: 16px; margin: 0; padding: 8px 12px; }
.meta { font-size: 12px; opacity: .85; padding: 0 12px; }
.log { display: flex; gap: 30px; padding: 0 12px 16px; }
.log ul { margin: 4px 0; padding-left: 18px; }
.log h3 { margin: 6px 0 0; font-size: 14px; }
li.failed { color: #fca5a5; } li.wait { opacity: .6; } li.applied { color: #bbf7d0; }
#events li { color: #fde047; } #events li.none { color: inherit; opacity: .6; }
"""


def _frames_json(frames) -> list:
    return [{"tick": f["tick"], "layout": f["layout"], "scores": f["scores"],
             "moves": f["moves"], "applied": f["applied"], "order": f["order"],
             "events": f["events"]} for f in frames]


def replay_html(replay, hand: int = 0) -> str:
    """The viewer page of one hand of `replay` (a nertz_env.replay.format.Replay) as one string."""
    frames = replay.frames(hand)          # a bad hand number is the Replay's ValueError
    h = replay.hands[hand]
    end = h.end
    end_text = f"{end.get('status', '?')} at tick {end.get('tick', '?')}"
    if end.get("callers"):
        end_text += f", Nertz called by team(s) {', '.join(map(str, end['callers']))}"
    if "scores" in end:
        end_text += f", scores {end['scores']}"
    cfg = replay.config
    data = {"frames": _frames_json(frames), "agents": list(replay.agents),
            "seat_team": list(cfg.seat_team), "end": end_text}
    seats = ", ".join(f"seat {s}: {html.escape(a)} (team {t})"
                      for s, (a, t) in enumerate(zip(replay.agents, cfg.seat_team)))
    title = f"Nertz replay: hand {hand} of {len(replay.hands)}"
    label = " ".join(f"{k}={v}" for k, v in h.label.items())
    return f"""<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>{html.escape(title)}</title>
<style>{asset("table.css")}{VIEWER_CSS}</style>
</head><body>
<h1>{html.escape(title)}</h1>
<div class="meta">{seats}. {cfg.num_teams} teams, River {cfg.river_size}, hand number {h.hand}.
 End: {html.escape(end_text)}. {html.escape(label)}</div>
<div class="bar">
 <button id="prev-event" title="previous tick with an event (p)">\u21e4 event</button>
 <button id="prev" title="previous tick (left arrow)">\u25c0</button>
 <button id="play" title="play / pause (space)">\u25b6 play</button>
 <button id="next" title="next tick (right arrow)">\u25b6|</button>
 <button id="next-event" title="next tick with an event: Nertz call, burn, conflict (n)">event \u21e5</button>
 <input id="scrub" type="range" min="0" value="0" step="1" aria-label="tick">
 <span id="tick-label"></span> <span id="note"></span>
 <select id="speed" aria-label="speed"><option value="400">slow</option>
  <option value="150" selected>normal</option><option value="40">fast</option></select>
</div>
<div id="table"></div>
<div class="log">
 <div><h3>Moves chosen at this tick (priority order, R22)</h3><ul id="moves"></ul></div>
 <div><h3>Events</h3><ul id="events"></ul></div>
</div>
<script id="replay-data" type="application/json">{script_json(data)}</script>
<script>{asset("table.js")}</script>
<script>{VIEWER_JS}</script>
</body></html>
"""


def write_html(replay, path, hand: int = 0) -> Path:
    """Write the viewer page of one hand to `path` (folders made as needed); returns it."""
    text = replay_html(replay, hand)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path
