"""Showing a replay in the terminal: a frame as text and a small command loop to step, jump
and search events, in notation.py's words (the same as the HTML viewer and the GIF; `l`
prints the legend). The animations are video.py's (`write_animation`, `rgb_frames`, kept
importable from here). Every view reads Replay.iter_frames(), so the terminal, the HTML
viewer (html.py) and the animations show the same ticks. Every string from the file (agent
names, labels) is made safe for a terminal (notation.safe) before it is written.

The command loop reads lines (not raw keys), so it works the same in a terminal and with
input piped in (tests): Enter or n next tick, p previous, j N jump to tick N, / TEXT the next
tick with an event containing TEXT (call, burn, conflict, illegal...), ? TEXT the previous one,
e list every event, l the legend, h help, q quit.
"""
from __future__ import annotations

from .notation import (legend_text, moves_words, pile_count, position_words, safe, safe_lines,
                       team_word)
from .video import rgb_frames, write_animation  # noqa: F401  (their old home)

HELP = ("keys: Enter/n next tick, p previous, j N jump to tick N, / TEXT next event with "
        "TEXT (call, burn, conflict, illegal), ? TEXT previous such event, e list events, "
        "s summary, l legend, q quit")


def table_text(layout, config, agents, scores) -> str:
    """A position (a docs/api.md layout) as text, in notation.py's words."""
    lines = ["scores (R29): " + ", ".join(f"{team_word(t)} {s:+d}" for t, s in enumerate(scores))
             + (f"   burns {layout['burns']}" if layout.get("burns") else "")]
    lake = "  ".join(f"{p[-1]} {pile_count(len(p))}" for p in layout["lake"])
    lines.append(f"Lake: {lake or '(no pile yet)'}")
    seat_team = config.seat_team
    for t, team in enumerate(layout["teams"]):
        seats = []
        for s in (s for s, st in enumerate(seat_team) if st == t):
            busy = layout["ready"][s] > layout["tick"]
            seats.append(f"seat {s} {safe(agents[s])}"
                         + (f" (busy until tick {layout['ready'][s]})" if busy else ""))
        caller = "  NERTZ!" if t in layout["callers"] else ""
        lines.append(f"{team_word(t).capitalize()}: {', '.join(seats)}{caller}")
        nertz = team["nertz"]
        k, n = team["waste"], len(team["stream"])
        lines.append(f"  Nertz {nertz[-1] + ' ' if nertz else '(empty) '}{pile_count(len(nertz))}"
                     f"   stock {pile_count(n - k)}"
                     f"   waste {team['stream'][k - 1] + ' ' if k else '(empty) '}{pile_count(k)}")
        for col, cards in enumerate(team["river"]):
            lines.append(f"  river{col}: {' '.join(cards) if cards else '(empty)'}")
    return "\n".join(lines)


def frame_text(replay, frame, hand: int | None = None) -> str:
    """One position as text: the tick (before its moves), the table with the agents and
    scores, then the moves chosen there and the events of that tick."""
    head = position_words(frame["tick"])
    if hand is not None:
        from .notation import hand_words
        head += f"  ({hand_words(hand, len(replay.hands), replay.hands[hand].hand)})"
    lines = [head, table_text(frame["layout"], replay.config, replay.agents, frame["scores"])]
    if frame["moves"]:
        moves = []
        for s in frame["order"]:
            ok = frame["applied"][s] if frame["applied"] else None
            flag = "" if ok is None or ok else " (failed)"
            moves.append(f"seat {s} {safe(replay.agents[s])}: {frame['moves'][s]}{flag}")
        lines.append(f"{moves_words(frame['tick'])}: " + "; ".join(moves))
    else:
        lines.append("the end of the hand: no moves after this position")
    for ev in frame["events"]:
        lines.append(f"  * {ev}")
    return safe_lines("\n".join(lines))


def find_event(frames, start: int, text: str, step: int = 1):
    """The index of the next (step 1) or previous (-1) frame after `start` whose events
    contain `text` (case-insensitive), or None."""
    text = text.lower()
    i = start + step
    while 0 <= i < len(frames):
        if any(text in ev.lower() for ev in frames[i]["events"]):
            return i
        i += step
    return None


def events(frames) -> list:
    """(tick, event) for every event of the hand."""
    return [(f["tick"], ev) for f in frames for ev in f["events"]]


def browse(replay, hand: int = 0, start: int = 0, read=input, write=print) -> None:
    """The command loop (module docstring) over one hand; ends on q or end of input.
    Everything it writes is made safe for a terminal."""
    frames = replay.frames(hand)
    raw_write = write

    def write(text):
        raw_write(safe_lines(text))
    i = min(max(int(start), 0), len(frames) - 1)
    first_tick = frames[0]["tick"]
    write(HELP)
    write(frame_text(replay, frames[i], hand))
    while True:
        try:
            line = read(f"[tick {frames[i]['tick']}/{frames[-1]['tick']}] > ").strip()
        except EOFError:
            return
        cmd, _, arg = line.partition(" ")
        arg = arg.strip()
        if cmd in ("q", "quit"):
            return
        if cmd in ("", "n"):
            if i == len(frames) - 1:
                write("end of the hand")
                continue
            i += 1
        elif cmd == "p":
            if i == 0:
                write("start of the hand")
                continue
            i -= 1
        elif cmd == "j":
            try:
                i = min(max(int(arg) - first_tick, 0), len(frames) - 1)
            except ValueError:
                write(f"j needs a tick number, {first_tick}..{frames[-1]['tick']}")
                continue
        elif cmd in ("/", "?") or cmd.startswith(("/", "?")):
            text = (cmd[1:] + " " + arg).strip() if len(cmd) > 1 else arg
            if not text:
                write("search for what? e.g. / call, / burn, / conflict")
                continue
            k = find_event(frames, i, text, 1 if cmd[0] == "/" else -1)
            if k is None:
                write(f"no {'later' if cmd[0] == '/' else 'earlier'} event with {text!r}")
                continue
            i = k
        elif cmd == "e":
            write("\n".join(f"tick {t}: {ev}" for t, ev in events(frames)) or "no events")
            continue
        elif cmd == "s":
            write("\n".join(replay.summary()))
            continue
        elif cmd == "l":
            write(legend_text())
            continue
        elif cmd == "h":
            write(HELP)
            continue
        else:
            write(f"unknown command {line!r}; {HELP}")
            continue
        write(frame_text(replay, frames[i], hand))
