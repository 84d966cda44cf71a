"""The pages made of nertz_env/web's files, and the replay viewer among them:
`write_html(replay, path, hand=0)` writes one hand as one self-contained HTML file.

- `asset(name)` is the text of a file of nertz_env/web (package data); `page(name, text=,
  data=)` is one of its .html templates with every placeholder filled in one pass:
  `{{table.js}}` (a name with a dot) is that asset inlined, `{{NAME}}` a value of `text`
  (HTML-escaped) or of `data` (JSON through `script_json`, safe inside a script element).
  A placeholder without a value, or a value without a placeholder, is a ValueError.
- The viewer (web/viewer.html, viewer.js, viewer.css) needs no server and fetches nothing:
  the table picture (web/table.js and table.css, the same renderer as the person-vs-bots
  page of agents/human/server.py) is inlined, and the hand's frames (Replay.frames: one
  layout, scores, moves and events per position) are embedded as JSON. Its controls are
  described in viewer.js.

Never imports `agents`; it only reads a Replay (nertz_env/replay/format.py).
"""
from __future__ import annotations

import html
import json
import re
from importlib import resources
from pathlib import Path

_PLACEHOLDER = re.compile(r"\{\{([A-Za-z][\w.-]*)\}\}")


def _web():
    return resources.files("nertz_env") / "web"


def asset(name: str) -> str:
    """The text of a file of nertz_env/web (table.js, table.css, viewer.html, ...)."""
    path = _web() / name
    if "/" in name or "\\" in name or not path.is_file():
        raise ValueError(f"asset {name!r}: nertz_env/web holds "
                         + ", ".join(sorted(p.name for p in _web().iterdir() if p.is_file())))
    return path.read_text(encoding="utf-8")


def script_json(value) -> str:
    """JSON safe inside a script element (no '</' or '<!--' can end it early)."""
    return (json.dumps(value, separators=(",", ":"))
            .replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")
            .replace("\u2028", "\\u2028").replace("\u2029", "\\u2029"))


def page(name: str, text: dict | None = None, data: dict | None = None) -> str:
    """The template `name` of nertz_env/web filled (module docstring)."""
    values = {k: html.escape(str(v)) for k, v in (text or {}).items()}
    values.update({k: script_json(v) for k, v in (data or {}).items()})
    template = asset(name)
    used = set()

    def fill(m):
        key = m.group(1)
        if "." in key:
            return asset(key)
        if key not in values:
            raise ValueError(f"{name}: no value for the placeholder {key!r}")
        used.add(key)
        return values[key]
    out = _PLACEHOLDER.sub(fill, template)
    if set(values) - used:
        raise ValueError(f"{name} has no placeholder for {sorted(set(values) - used)}")
    return out


def _frames_json(frames) -> list:
    return [{"tick": f["tick"], "layout": f["layout"], "scores": f["scores"],
             "moves": f["moves"], "applied": f["applied"], "order": f["order"],
             "events": f["events"]} for f in frames]


def replay_html(replay, hand: int = 0) -> str:
    """The viewer page of one hand of `replay` (a nertz_env.replay.Replay) as one string."""
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
    seats = ", ".join(f"seat {s}: {a} (team {t})"
                      for s, (a, t) in enumerate(zip(replay.agents, cfg.seat_team)))
    label = " ".join(f"{k}={v}" for k, v in h.label.items())
    meta = (f"{seats}. {cfg.num_teams} teams, River {cfg.river_size}, hand number {h.hand}.\n"
            f" End: {end_text}. {label}")
    return page("viewer.html", text={"TITLE": f"Nertz replay: hand {hand} of {len(replay.hands)}",
                                     "META": meta},
                data={"DATA": data})


def write_html(replay, path, hand: int = 0) -> Path:
    """Write the viewer page of one hand to `path` (folders made as needed); returns it."""
    text = replay_html(replay, hand)
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path
