"""A replayed hand as an animation: a GIF (Pillow) or an MP4 (imageio with imageio-ffmpeg),
from the environments' rgb_array picture (envs/render.py) with notation.py's words.

- Memory is flat in the hand's length: the positions come one at a time from
  Playback.iter_frames and each picture is made when the writer asks for it. An MP4 is
  streamed to ffmpeg frame by frame (imageio_ffmpeg.write_frames), so it keeps every tick
  asked for. A GIF is streamed too (`_write_gif`: each picture encoded by Pillow's GIF frame
  encoder and written at once, as the rectangle that changed), but a GIF frame is large, so
  a GIF holds at most MAX_GIF_FRAMES pictures (its file size): a longer hand is sampled
  evenly (its first and last position always kept), and `write_animation` says so through
  `note` (the CLI prints it) and in the legend of every picture.
- Every picture has the header "TICK 5  HAND NUMBER 1" (the position before tick 5's moves)
  and, under the table, the legend: the before/after convention, the hand's place in the
  file, the team colours in their colours, what the counts and columns mean, and the
  sampling when there is one. The same words as the terminal and the HTML viewer.
- The file is written whole or not at all (nertz_env.files.atomic_path); a path that cannot
  be written is a ValueError of one line naming it.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from ..files import atomic_path
from ..optional import require
from .notation import COLOUR_NAMES

MAX_GIF_FRAMES = 200
LINE_H = 9                       # a legend line at scale 1: 7 rows of glyph and a gap


def kept_positions(positions: int, every: int) -> list:
    """The indices of the positions an animation keeps: every `every`-th and the last."""
    keep = list(range(0, positions, every))
    if keep[-1] != positions - 1:
        keep.append(positions - 1)
    return keep


def sample_every(positions: int, every: int, most: int) -> int:
    """`every`, raised so that kept_positions keeps at most `most` of the positions."""
    if positions <= most:
        return every
    return max(every, -(-(positions - 1) // (most - 1)))   # the grid 0, e, 2e.. plus the last


def gif_every(positions: int, every: int) -> int:
    """`every`, raised so that a GIF keeps at most MAX_GIF_FRAMES pictures."""
    return sample_every(positions, every, MAX_GIF_FRAMES)


def _wrap(words: str, width: int) -> list:
    lines, line = [], ""
    for word in words.split():
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = word
        else:
            line = f"{line} {word}" if line else word
    return lines + ([line] if line else [])


def legend_band(width: int, num_teams: int, index: int, count: int, number: int,
                sampled: str = "") -> np.ndarray:
    """The legend under every picture of one animation (module docstring), scale 1."""
    from ..envs import render as R
    cols = max(width // 6 - 1, 10)
    text = [f"HAND {index} OF {count} IN THE FILE - HAND NUMBER {number}",
            "EACH PICTURE: THE TABLE AT THE START OF ITS TICK - BEFORE THE MOVES OF THAT TICK",
            "LAKE: TOP CARD - CARD COUNT UNDER IT - BAR IN THE COLOUR OF THE DECK'S TEAM",
            "N: CARDS IN THE NERTZ PILE - S: STOCK - W: WASTE",
            "RIVER0 RIVER1 ... FROM THE LEFT - BOTTOM CARD FIRST - LAST CARD ON TOP",
            "SCORES: HAND SCORE SO FAR (R29)"]
    if sampled:
        text.append(sampled)
    lines = [(ln, R.TEXT) for t in text for ln in _wrap(t.replace("'", ""), cols)]
    teams = [(f"TEAM {t} {COLOUR_NAMES[t % 8].upper()}", R.TEAM_COLOURS[t % 8])
             for t in range(num_teams)]
    rows, row = [], []
    for word, colour in teams:                        # team names in their own colours
        if row and sum(len(w) + 2 for w, _ in row) + len(word) > cols:
            rows.append(row)
            row = []
        row.append((word, colour))
    rows.append(row)
    band = np.empty(((len(lines) + len(rows)) * LINE_H + 4, width, 3), np.uint8)
    band[:] = R.FELT_DARK
    y = 2
    for row in rows:
        x = R.MARGIN
        for word, colour in row:
            R.draw_text(band, y, x, word, colour)
            x += R.text_width(word) + 12
        y += LINE_H
    for line, colour in lines:
        R.draw_text(band, y, R.MARGIN, line, colour)
        y += LINE_H
    return band


def rgb_frames(replay, hand: int = 0, every: int = 1, scale: int = 2, sampled: str = ""):
    """A generator: the picture (H x W x 3 uint8, envs/render.py plus the header and legend
    of the module docstring) of every `every`-th position of the hand and of the last."""
    from ..envs import render as R
    h = replay.hand_record(hand)
    keep = set(kept_positions(h.ticks + 1, every))
    T = replay.config.num_teams
    band = None
    for i, f in enumerate(replay.iter_frames(hand)):
        if i not in keep:
            continue
        img = R.render_rgb(f["layout"], scores=f["scores"])
        img[:R.HEADER_H] = R.FELT
        head = f"TICK {f['tick']}  HAND NUMBER {h.hand}"
        if f["layout"]["callers"] and R.text_width(head + "  NERTZ CALLED") < img.shape[1] - 8:
            head += "  NERTZ CALLED"
        R.draw_text(img, 3, R.MARGIN, head, R.TEXT)
        if band is None:
            band = legend_band(img.shape[1], T, int(hand), len(replay.hands), h.hand, sampled)
        img = np.concatenate([img, band])
        if scale != 1:
            img = img.repeat(scale, 0).repeat(scale, 1)
        yield img


def _palette():
    """The picture's colours as one GIF palette: (sorted RGB keys, index per key, PIL
    palette bytes)."""
    from ..envs import render as R
    colours = sorted({R.FELT, R.FELT_DARK, R.CARD_FACE, R.CARD_EDGE, R.CARD_BACK,
                      R.CARD_BACK_LINE, R.RED, R.BLACK, R.TEXT, R.COUNT, *R.TEAM_COLOURS})
    keys = np.array([(r << 16) | (g << 8) | b for r, g, b in colours], np.int64)
    order = np.argsort(keys)
    flat = [c for rgb in colours for c in rgb]
    return keys[order], order.astype(np.uint8), flat + [0] * (768 - len(flat))


def _gif_indices(pictures):
    """Each picture as palette indices (H x W uint8) of the one fixed palette; a colour
    outside it (none drawn today) is mapped to the nearest palette colour."""
    keys, index, _ = _palette()
    keys = keys.astype(np.int32)                     # 24-bit colours: half of int64's memory
    rgb = np.array([((k >> 16) & 255, (k >> 8) & 255, k & 255) for k in keys], np.int64)
    for img in pictures:
        k = (img[..., 0].astype(np.int32) << 16) | (img[..., 1].astype(np.int32) << 8) | img[..., 2]
        pos = np.searchsorted(keys, k).clip(0, len(keys) - 1)
        miss = keys[pos] != k
        if miss.any():                                # nearest colour, for the odd pixel
            d = ((img[miss].astype(np.int64)[:, None, :] - rgb[None]) ** 2).sum(-1)
            pos[miss] = d.argmin(1)
        yield index[pos].astype(np.uint8)


def _write_gif(fh, pictures, duration: int) -> None:
    """Stream an animated GIF to `fh`: the header and palette once, then each picture as
    the rectangle that changed since the one before (Pillow's GIF frame encoder), so one
    picture is held at a time (Pillow's own save_all keeps every frame until the end)."""
    Image = require("PIL.Image", "pillow", "a GIF")
    from PIL import GifImagePlugin as G
    _, _, pal = _palette()
    prev = None
    for a in _gif_indices(pictures):
        if prev is None:
            im = Image.fromarray(a, mode="P")
            im.putpalette(pal)
            head, _ = G.getheader(im, None, {"loop": 0, "duration": duration})
            fh.write(b"".join(head))
            box = (0, 0, a.shape[1], a.shape[0])
        else:
            changed = a != prev
            if not changed.any():                    # the same picture: one pixel redrawn
                changed[0, 0] = True
            rows, cols = np.flatnonzero(changed.any(1)), np.flatnonzero(changed.any(0))
            box = (int(cols[0]), int(rows[0]), int(cols[-1]) + 1, int(rows[-1]) + 1)
        part = Image.fromarray(np.ascontiguousarray(a[box[1]:box[3], box[0]:box[2]]), mode="P")
        part.putpalette(pal)
        fh.write(b"".join(G.getdata(part, (box[0], box[1]), duration=duration)))
        prev = a
    fh.write(b";")                                   # the GIF trailer


def write_animation(replay, path, hand: int = 0, every: int = 1, fps: float = 10.0,
                    scale: int = 2, note=None) -> Path:
    """An animated GIF or an MP4 of the hand, chosen by the file's suffix (module
    docstring); `note(text)` is told when a GIF is sampled. A ValueError for another suffix,
    a missing writer or a path that cannot be written."""
    path = Path(path)
    if isinstance(every, bool) or not (isinstance(every, int) and every >= 1):
        raise ValueError(f"every={every!r} must be an int >= 1 (keep every N-th tick)")
    if isinstance(fps, bool) or not (isinstance(fps, (int, float)) and 0 < fps <= 100):
        raise ValueError(f"fps={fps!r} must be a number in (0, 100]")
    suffix = path.suffix.lower()
    if suffix not in (".gif", ".mp4"):
        raise ValueError(f"{str(path)!r}: an animation is a .gif or an .mp4 file")
    h = replay.hand_record(hand)
    positions = h.ticks + 1
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        if suffix == ".mp4":
            ffmpeg = require("imageio_ffmpeg", "video", "an MP4 (the ffmpeg binary it is "
                             "written with; a .gif needs only Pillow)")
            with atomic_path(path) as tmp:
                writer = None
                try:
                    for img in rgb_frames(replay, hand, every, scale):
                        if writer is None:       # the size is known at the first picture
                            writer = ffmpeg.write_frames(
                                str(tmp), (img.shape[1], img.shape[0]), fps=fps,
                                macro_block_size=1, output_params=["-f", "mp4"])
                            writer.send(None)
                        writer.send(np.ascontiguousarray(img))
                finally:
                    if writer is not None:
                        writer.close()
            return path
        require("PIL.Image", "pillow", "a GIF")
        used, sampled = gif_every(positions, every), ""
        if used != every:
            n = len(kept_positions(positions, used))
            sampled = (f"GIF: 1 PICTURE EVERY {used} TICKS - {n} OF {positions} POSITIONS "
                       f"(A GIF HOLDS AT MOST {MAX_GIF_FRAMES} - AN MP4 KEEPS EVERY TICK)")
            if note is not None:
                note(f"{path}: the hand has {positions} positions and a GIF holds at most "
                     f"{MAX_GIF_FRAMES} pictures, so it keeps 1 every {used} ticks ({n} "
                     "pictures, the last position included); write an .mp4 for every tick")
        with atomic_path(path) as tmp, open(tmp, "wb") as fh:
            _write_gif(fh, rgb_frames(replay, hand, used, scale, sampled),
                       max(int(round(1000 / fps)), 20))
    except OSError as err:
        raise ValueError(f"{str(path)!r}: cannot write it ({err.strerror or err})") from None
    return path
