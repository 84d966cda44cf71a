"""One notation in every view of a replay (nertz_env/replay/notation.py): the same legend,
words, team colours and before/after convention in the terminal, the HTML page and the
GIF."""
from __future__ import annotations

import json
import re

import numpy as np

from agents.cli import main
from nertz_env.envs import render as R
from nertz_env.replay import Replay
from nertz_env.replay.html import replay_html
from nertz_env.replay.notation import COLOUR_NAMES, LEGEND
from tests.replay.test_hostile import play


def test_the_html_colours_are_the_gif_colours():
    """table.css --t0..--t7 (team panels, Lake card marks) are render.py's TEAM_COLOURS:
    team 0 is yellow and team 1 blue in both (they were swapped)."""
    from nertz_env.replay.html import asset
    css = asset("table.css")
    got = {int(t): v.lower() for t, v in re.findall(r"--t(\d): (#[0-9a-fA-F]{6});", css)}
    assert got == {t: "#%02x%02x%02x" % c for t, c in enumerate(R.TEAM_COLOURS)}
    assert COLOUR_NAMES[:2] == ("yellow", "blue") and R.TEAM_COLOURS[0][2] < 100


def test_terminal_and_html_show_the_same_legend_and_words(tmp_path, capsys):
    rep = play(ticks=30)
    path = rep.save(tmp_path / "h.nertz.json.gz")
    assert main(["replay", str(path), "--tick", "5"]) == 0
    out = capsys.readouterr().out
    page = replay_html(Replay.load(path), 0)
    number = rep.hands[0].hand
    for line in LEGEND:
        assert line in out
    data = json.loads(re.search(r'<script id="replay-data" type="application/json">(.*?)'
                                r'</script>', page, re.DOTALL).group(1))
    assert data["legend"] == list(LEGEND)             # viewer.js lists it under the table
    words = f"hand 0 of 1 in the file, hand number {number}"
    assert words in out and f"<title>Nertz replay: {words}</title>" in page
    assert "tick 5, before its moves" in out
    assert "moves chosen at tick 5 (in priority order, R22; tick 6 shows their result)" in out
    assert "Team 0 (yellow)" in out and "team 1 (blue)" in out
    frame = rep.frames(0)[5]["layout"]
    lake = "  ".join(f"{p[-1]} x{len(p)}" for p in frame["lake"])
    assert f"Lake: {lake}" in out                     # "5C@1 x5", not "5C@1(5)"
    assert "  river0: " in out and "River 0" not in out


def test_the_gif_pictures_carry_the_header_and_legend():
    """Each picture: 'TICK t  HAND NUMBER h' on top, the legend band (team names in their
    colours) under the table, the same for every picture of a hand."""
    from nertz_env.replay.video import legend_band, rgb_frames
    rep = play(ticks=12)
    frames = rep.frames(0)
    pics = list(rgb_frames(rep, 0, every=5, scale=1))
    assert len(pics) == 4 and len({p.shape for p in pics}) == 1
    h, w, _ = R.picture_shape(2)
    band = legend_band(w, 2, 0, 1, rep.hands[0].hand)
    for pic, k in zip(pics, (0, 5, 10, 12)):
        head = np.empty((R.HEADER_H, w, 3), np.uint8)
        head[:] = R.FELT
        R.draw_text(head, 3, R.MARGIN, f"TICK {frames[k]['tick']}  HAND NUMBER "
                                        f"{rep.hands[0].hand}", R.TEXT)
        assert np.array_equal(pic[:R.HEADER_H], head)
        assert np.array_equal(pic[h:], band)
    for t in (0, 1):                                  # each team's name in its colour
        assert (band == R.TEAM_COLOURS[t]).all(axis=2).any()
