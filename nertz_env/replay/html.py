"""The pages made of nertz_env/web's files, and the replay viewer among them:
`write_html(replay, path, hand=0)` writes one hand as one self-contained HTML file.

- `asset(name)` is the text of a file of nertz_env/web (package data); `page(name, text=,
  data=)` is one of its .html templates with every placeholder filled in one pass:
  `{{table.js}}` (a name with a dot) is that asset inlined, `{{NAME}}` a value of `text`
  (HTML-escaped) or of `data` (JSON through `script_json`, safe inside a script element).
  A placeholder without a value, or a value without a placeholder, is a ValueError.
- The viewer (web/viewer.html, viewer.js, viewer.css) needs no server and fetches nothing:
  the table picture (web/table.js and table.css, the same renderer as the person-vs-bots
  page of agents/human/server.py) is inlined, and the hand's positions are embedded as
  JSON, compactly: each position is a flat map of the layout's piles ("lake.3",
  "teams.1.river.2", "tick", ...; `flatten`), stored whole every KEY_EVERY positions (a
  keyframe) and otherwise only the piles that changed, with the moves, applied flags,
  order, scores and events of its tick. viewer.js rebuilds a position from the keyframe
  before it (`unflatten` here is the same rule in Python, for tests). So the page grows by
  a few hundred bytes a tick (a 3,000-tick hand of 4 teams: under 1 MB).
- Bounded: a page holds at most MAX_PAGE_POSITIONS positions. A longer hand is sampled
  evenly (the first and last position always kept; `page_sampling`), the events of the
  skipped ticks are listed with the next kept position, and the page says so above the
  table (#sampled) and in its header line. Writing holds one position at a time: the positions
  come from Replay.iter_frames and the JSON is written to the file as they come, whole or
  not at all (nertz_env.files.atomic_path).
- Words, colours and the before/after convention are notation.py's; the page shows its
  legend.

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


KEY_EVERY = 50                   # a full position every this many records (the seek cost)
MAX_PAGE_POSITIONS = 5000        # a page's bound: a default 3,000-tick hand is kept whole
MAX_FOLDED = 20                  # events of skipped ticks listed with the next kept position
_MARK = "\u0000replay-data\u0000"


def flatten(layout: dict) -> dict:
    """A layout as a flat map of piles (module docstring): what changes in one tick is a
    few of its entries."""
    flat = {"lake.n": len(layout["lake"])}
    for p, pile in enumerate(layout["lake"]):
        flat[f"lake.{p}"] = pile
    flat["teams.n"] = len(layout["teams"])
    for t, team in enumerate(layout["teams"]):
        for key, value in team.items():
            if key == "river":
                flat[f"teams.{t}.river.n"] = len(value)
                for c, col in enumerate(value):
                    flat[f"teams.{t}.river.{c}"] = col
            else:
                flat[f"teams.{t}.{key}"] = value
    for key, value in layout.items():
        if key not in ("lake", "teams"):
            flat[key] = value
    return flat


def unflatten(flat: dict) -> dict:
    """The layout of a flat map (viewer.js does the same)."""
    lay = {"lake": [flat[f"lake.{p}"] for p in range(flat["lake.n"])], "teams": []}
    for t in range(flat["teams.n"]):
        team = {"river": [flat[f"teams.{t}.river.{c}"]
                          for c in range(flat[f"teams.{t}.river.n"])]}
        pre = f"teams.{t}."
        for key, value in flat.items():
            if key.startswith(pre) and not key[len(pre):].startswith("river"):
                team[key[len(pre):]] = value
        lay["teams"].append(team)
    for key, value in flat.items():
        if not key.startswith(("lake.", "teams.")):
            lay[key] = value
    return lay


def frame_records(frames, keep=None):
    """The compact records of a hand's frames (module docstring), one at a time; with
    `keep` (a set of position indices) only those, each kept record also listing the events
    of the ticks skipped before it ("tick 7: ...", at most MAX_FOLDED)."""
    prev, n, folded, more = None, 0, [], 0
    for i, f in enumerate(frames):
        if keep is not None and i not in keep:
            for ev in f["events"]:
                if len(folded) < MAX_FOLDED:
                    folded.append(f"tick {f['tick']}: {ev}")
                else:
                    more += 1
            continue
        flat = flatten(f["layout"])
        key = n % KEY_EVERY == 0
        diff = flat if key else {k: v for k, v in flat.items() if prev.get(k) != v}
        if more:
            folded.append(f"... and {more} more events in the ticks skipped before tick "
                          f"{f['tick']}")
        rec = {"diff": diff, "scores": f["scores"], "moves": f["moves"],
               "applied": "".join("1" if a else "0" for a in f["applied"]),
               "order": "".join("0123456789abcdef"[s] for s in f["order"]),
               "events": folded + f["events"]}
        if key:
            rec["key"] = 1
        prev, n, folded, more = flat, n + 1, [], 0
        yield rec


def page_sampling(positions: int):
    """(the kept position indices or None when every one is kept, the words saying so)."""
    from .video import kept_positions, sample_every
    every = sample_every(positions, 1, MAX_PAGE_POSITIONS)
    if every == 1:
        return None, ""
    kept = kept_positions(positions, every)
    return set(kept), (f"This page keeps 1 position every {every} ticks ({len(kept)} of "
                       f"{positions}, the last included; a page holds at most "
                       f"{MAX_PAGE_POSITIONS}): the events of the skipped ticks are listed "
                       "with the next kept one; nertz replay FILE --tick T or --browse shows "
                       "every tick.")


def decode_records(records) -> list:
    """The frames (tick, layout, scores, moves, applied, order, events) back from
    frame_records, by the rule viewer.js uses: for tests."""
    out, flat = [], {}
    for rec in records:
        flat = dict(rec["diff"]) if rec.get("key") else {**flat, **rec["diff"]}
        lay = unflatten(flat)
        out.append({"tick": lay["tick"], "layout": lay, "scores": rec["scores"],
                    "moves": rec["moves"], "applied": [c == "1" for c in rec["applied"]],
                    "order": [int(c, 16) for c in rec["order"]], "events": rec["events"]})
    return out


def _viewer_parts(replay, hand: int):
    """(the page before the data, the data's head, the page after it) of one hand."""
    from .notation import COLOUR_NAMES, LEGEND, colour_hex, hand_words, team_word
    h = replay.hand_record(hand)         # a bad hand number is the Replay's ValueError
    end = h.end
    end_text = f"{end.get('status', '?')} at tick {end.get('tick', '?')}"
    if end.get("callers"):
        end_text += ", Nertz called by " + ", ".join(team_word(t) for t in end["callers"])
    if "scores" in end:
        end_text += f", scores {end['scores']}"
    cfg = replay.config
    words = hand_words(hand, len(replay.hands), h.hand)
    _, sampled = page_sampling(h.ticks + 1)
    head = {"agents": list(replay.agents), "seat_team": list(cfg.seat_team),
            "end": end_text, "legend": list(LEGEND), "key_every": KEY_EVERY,
            "sampled": sampled,
            "colours": [colour_hex(t) for t in range(cfg.num_teams)],
            "colour_names": [COLOUR_NAMES[t % 8] for t in range(cfg.num_teams)]}
    seats = ", ".join(f"seat {s}: {a} ({team_word(t)})"
                      for s, (a, t) in enumerate(zip(replay.agents, cfg.seat_team)))
    label = " ".join(f"{k}={v}" for k, v in h.label.items())
    meta = (f"{seats}. {cfg.num_teams} teams, River {cfg.river_size}, {words}.\n"
            f" End: {end_text}. {label}" + (f"\n {sampled}" if sampled else ""))
    text = page("viewer.html", text={"TITLE": f"Nertz replay: {words}", "META": meta},
                data={"DATA": _MARK})
    before, after = text.split(script_json(_MARK))
    return before, script_json(head)[:-1] + ',"frames":[', after


def _write_viewer(replay, hand: int, write) -> None:
    before, head, after = _viewer_parts(replay, hand)
    write(before)
    write(head)
    keep, _ = page_sampling(replay.hand_record(hand).ticks + 1)
    for i, rec in enumerate(frame_records(replay.iter_frames(hand), keep)):
        write(("," if i else "") + script_json(rec))
    write("]}")
    write(after)


def replay_html(replay, hand: int = 0) -> str:
    """The viewer page of one hand of `replay` (a nertz_env.replay.Replay) as one string."""
    parts: list = []
    _write_viewer(replay, hand, parts.append)
    return "".join(parts)


def write_html(replay, path, hand: int = 0) -> Path:
    """Write the viewer page of one hand to `path` (folders made as needed), streamed and
    whole or not at all; returns it. A path that cannot be written is a ValueError of one
    line naming it."""
    from ..files import atomic_path
    path = Path(path)
    replay.hand_record(hand)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8") as fh:
            _write_viewer(replay, hand, fh.write)
    except OSError as err:
        raise ValueError(f"{str(path)!r}: cannot write it ({err.strerror or err})") from None
    return path
