"""Showing a replay: in the terminal (a frame as text, a small command loop to step, jump
and search events) and as an animation (GIF with Pillow, MP4 with imageio-ffmpeg) from the
environments' rgb_array picture (envs/render.py). Every view reads Replay.frames(), so the
terminal, the HTML viewer (html.py) and the animations show the same ticks.

The command loop reads lines (not raw keys), so it works the same in a terminal and with
input piped in (tests): Enter or n next tick, p previous, j N jump to tick N, / TEXT the next
tick with an event containing TEXT (call, burn, conflict, illegal...), ? TEXT the previous one,
e list every event, h help, q quit.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ..optional import require

HELP = ("keys: Enter/n next tick, p previous, j N jump to tick N, / TEXT next event with "
        "TEXT (call, burn, conflict, illegal), ? TEXT previous such event, e list events, "
        "s summary, q quit")


def frame_text(replay, frame) -> str:
    """One position as text: the table picture (Table.render) with the agents and scores,
    then the moves chosen there and the events of that tick."""
    from ..table.table import Table
    table = Table.from_layout(frame["layout"], replay.config)
    lines = [table.render()]
    lines.append("seats: " + ", ".join(f"{s} {a}" for s, a in enumerate(replay.agents)))
    if frame["moves"]:
        order = frame["order"]
        moves = []
        for s in order:
            ok = frame["applied"][s] if frame["applied"] else None
            flag = "" if ok is None or ok else " (failed)"
            moves.append(f"seat {s}: {frame['moves'][s]}{flag}")
        lines.append("moves, in priority order: " + "; ".join(moves))
    for ev in frame["events"]:
        lines.append(f"  * {ev}")
    return "\n".join(lines)


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
    """The command loop (module docstring) over one hand; ends on q or end of input."""
    frames = replay.frames(hand)
    i = min(max(int(start), 0), len(frames) - 1)
    first_tick = frames[0]["tick"]
    write(HELP)
    write(frame_text(replay, frames[i]))
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
        elif cmd == "h":
            write(HELP)
            continue
        else:
            write(f"unknown command {line!r}; {HELP}")
            continue
        write(frame_text(replay, frames[i]))


def rgb_frames(replay, hand: int = 0, every: int = 1, scale: int = 2):
    """The rgb_array picture (envs/render.py) of every `every`-th position and the last."""
    from ..envs.render import render_rgb
    frames = replay.frames(hand)
    keep = list(range(0, len(frames), every))
    if keep[-1] != len(frames) - 1:
        keep.append(len(frames) - 1)
    for i in keep:
        f = frames[i]
        yield render_rgb(f["layout"], scale=scale, scores=f["scores"])


def write_animation(replay, path, hand: int = 0, every: int = 1, fps: float = 10.0,
                    scale: int = 2) -> Path:
    """An animated GIF (Pillow) or MP4 (imageio with imageio-ffmpeg) of the hand, chosen by
    the file's suffix; a ValueError for another suffix or a missing writer."""
    path = Path(path)
    if not (isinstance(every, int) and every >= 1):
        raise ValueError(f"every={every!r} must be an int >= 1 (keep every N-th tick)")
    if not (isinstance(fps, (int, float)) and 0 < fps <= 100):
        raise ValueError(f"fps={fps!r} must be a number in (0, 100]")
    suffix = path.suffix.lower()
    if suffix not in (".gif", ".mp4"):
        raise ValueError(f"{str(path)!r}: an animation is a .gif or an .mp4 file")
    if suffix == ".mp4":
        imageio = require("imageio.v2", "video", "an MP4 (a .gif needs only Pillow)")
        require("imageio_ffmpeg", "video", "an MP4 (the ffmpeg binary imageio writes it with)")
        path.parent.mkdir(parents=True, exist_ok=True)
        with imageio.get_writer(path, fps=fps, macro_block_size=1) as w:
            for img in rgb_frames(replay, hand, every, scale):
                w.append_data(img)
        return path
    Image = require("PIL.Image", "pillow", "a GIF")
    images = [Image.fromarray(np.ascontiguousarray(img)) for img in
              rgb_frames(replay, hand, every, scale)]
    path.parent.mkdir(parents=True, exist_ok=True)
    images[0].save(path, save_all=True, append_images=images[1:],
                   duration=max(int(round(1000 / fps)), 20), loop=0, optimize=False)
    return path
