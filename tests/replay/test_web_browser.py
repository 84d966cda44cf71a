"""The replay viewer and the play page in a real browser: headless Chromium from the system
(/usr/bin/chromium, or NERTZ_CHROMIUM) driven by Playwright, through the `page` fixture of
tests/conftest.py (skipped when either is missing, except under NERTZ_REQUIRE_CLIENTS=1, CI).
The play page's own tests: tests/human/test_play_browser.py."""
from __future__ import annotations

import re

import numpy as np
import pytest

from nertz_env.config import RulesConfig
from nertz_env.engine import Engine
from nertz_env.replay import Recorder, Replay
from nertz_env.replay.html import write_html
from tests.helpers import lake_tops, pictured, play_server


def expected(layout, team: int) -> dict:
    t = layout["teams"][team]
    return {"river": t["river"], "nertz": t["nertz"][-1] if t["nertz"] else None}


# ---------------------------------------------------------------------- the viewer
@pytest.fixture(scope="module")
def recorded(tmp_path_factory):
    """A hand of two bots to its Nertz call, recorded, saved and loaded again."""
    from agents.registry import make_agent
    cfg = RulesConfig(num_teams=2, max_ticks=600)
    eng = Engine(cfg, 1, 2)
    rec = Recorder(eng, agents=["heuristic", "greedy"])
    eng.reset(hands=[0])
    bots = [make_agent("heuristic"), make_agent("greedy")]
    while not eng.hand_over[0]:
        obs, masks = eng.observe()[0], eng.masks[0]
        acts = [int(bots[s].act_batch(obs[s:s + 1], masks[s:s + 1])[0]) for s in range(2)]
        eng.step(np.array([acts]))
    path = tmp_path_factory.mktemp("replay") / "hand.nertz.json.gz"
    rec.replay().save(path)
    rep = Replay.load(path)
    return rep, write_html(rep, path.with_suffix(".html"))


def test_viewer_is_one_self_contained_file(recorded):
    """No browser needed: nothing is fetched (no src/href URL), the frames are embedded."""
    import json

    from nertz_env.replay.html import replay_html, script_json
    rep, html = recorded
    text = html.read_text(encoding="utf-8")
    assert text == replay_html(rep, 0)
    assert not re.search(r"""<(script|link|img|iframe)[^>]*\s(src|href)=|https?://|@import|url\(""",
                         text)
    data = re.search(r'<script id="replay-data" type="application/json">(.*?)</script>', text,
                     re.DOTALL).group(1)
    from nertz_env.replay.html import decode_records
    frames = decode_records(json.loads(data)["frames"])    # compact: keyframes and changes
    assert frames == rep.frames(0)
    assert json.loads(script_json({"x": "</script><!--"})) == {"x": "</script><!--"}
    assert "</" not in script_json({"x": "</script>"})
    with pytest.raises(ValueError, match="hand"):
        replay_html(rep, 5)


def test_viewer_shows_the_deal_and_scrubs(page, recorded):
    rep, html = recorded
    frames = rep.frames(0)
    last = len(frames) - 1
    page.goto(html.resolve().as_uri())
    assert page.inner_text("#tick-label") == f"tick 0 / {frames[-1]['tick']}, before its moves"
    for team in (0, 1):                                       # the deal
        assert pictured(page, team) == expected(frames[0]["layout"], team)
    assert lake_tops(page) == []
    k = last // 2                                             # scrub to the middle
    page.locator("#scrub").fill(str(k))
    assert page.inner_text("#tick-label").startswith(f"tick {frames[k]['tick']} /")
    for team in (0, 1):
        assert pictured(page, team) == expected(frames[k]["layout"], team)
    assert lake_tops(page) == [p[-1] for p in frames[k]["layout"]["lake"]]
    moves = page.locator("#moves li").all_inner_texts()
    assert len(moves) == 2 and all(f": {frames[k]['moves'][s]}" in " ".join(moves)
                                   for s in (0, 1))
    page.keyboard.press("ArrowRight")
    assert page.inner_text("#tick-label").startswith(f"tick {frames[k + 1]['tick']} /")
    page.locator("#scrub").fill(str(last))                    # the end: the Lake is full of
    tops = lake_tops(page)                                    # the recorded plays
    assert tops and tops == [p[-1] for p in frames[last]["layout"]["lake"]]
    assert re.search(r"team \d [+-]\d+", page.inner_text(".scores"))


def test_viewer_jumps_to_the_next_event(page, recorded):
    rep, html = recorded
    frames = rep.frames(0)
    page.goto(html.resolve().as_uri())
    want = next(i for i, f in enumerate(frames) if f["events"])
    page.click("#next-event")
    assert page.inner_text("#tick-label").startswith(f"tick {frames[want]['tick']} /")
    assert page.locator("#events li").all_inner_texts() == frames[want]["events"]
    calls = [i for i, f in enumerate(frames) if any("Nertz" in e for e in f["events"])]
    assert calls                                             # the hand ended by a Nertz call
    page.keyboard.press("End")
    page.click("#prev-event")
    before = max(i for i, f in enumerate(frames[:-1]) if f["events"])
    assert page.inner_text("#tick-label").startswith(f"tick {frames[before]['tick']} /")


def test_viewer_rebuilds_every_position_from_its_keyframe(page, recorded):
    """Jumps forward, backward and across keyframes (html.KEY_EVERY): every picture is the
    recorded layout, scores and Lake counts ("x5") included."""
    from nertz_env.replay.html import KEY_EVERY
    rep, html = recorded
    frames = rep.frames(0)
    assert len(frames) > 2 * KEY_EVERY                     # the hand spans keyframes
    page.goto(html.resolve().as_uri())
    rng = np.random.default_rng(0)
    picks = [len(frames) - 1, KEY_EVERY - 1, KEY_EVERY, KEY_EVERY + 1, 3, 2 * KEY_EVERY + 7,
             *rng.integers(0, len(frames), 6)]
    for k in map(int, picks):
        page.locator("#scrub").fill(str(k))
        lay = frames[k]["layout"]
        assert page.inner_text("#tick-label").startswith(f"tick {lay['tick']} /")
        for team in (0, 1):
            assert pictured(page, team) == expected(lay, team)
        counts = page.locator(".lake-pile[data-pile] .pile-count").all_inner_texts()
        assert counts == [f"x{len(p)}" for p in lay["lake"]]


def test_viewer_of_a_sampled_hand_says_so_and_shows_the_kept_positions(page, recorded,
                                                                       tmp_path, monkeypatch):
    """Past html.MAX_PAGE_POSITIONS the page keeps positions evenly and says so above the
    table; scrubbing shows the kept positions, the last one included."""
    from nertz_env.replay import html as H
    rep, _ = recorded
    frames = rep.frames(0)
    monkeypatch.setattr(H, "MAX_PAGE_POSITIONS", 30)
    keep, words = H.page_sampling(len(frames))
    kept = sorted(keep)
    page.goto(H.write_html(rep, tmp_path / "s.html").resolve().as_uri())
    assert page.is_visible("#sampled") and page.inner_text("#sampled") == words
    assert page.get_attribute("#scrub", "max") == str(len(kept) - 1)
    for j in (0, 1, len(kept) // 2, len(kept) - 1):
        page.locator("#scrub").fill(str(j))
        lay = frames[kept[j]]["layout"]
        assert page.inner_text("#tick-label").startswith(f"tick {lay['tick']} /")
        for team in (0, 1):
            assert pictured(page, team) == expected(lay, team)
    page.goto(recorded[1].resolve().as_uri())            # written before the patch
    assert not page.is_visible("#sampled")              # a hand kept whole says nothing


def test_viewer_shows_the_legend_in_the_gif_colours(page, recorded):
    from nertz_env.envs.render import TEAM_COLOURS
    from nertz_env.replay.notation import LEGEND
    _, html = recorded
    page.goto(html.resolve().as_uri())
    assert page.locator("#legend li").all_inner_texts() == list(LEGEND)
    assert page.locator("#colours .swatch").all_inner_texts() == ["team 0 (yellow)",
                                                                  "team 1 (blue)"]
    for t in (0, 1):
        colour = page.eval_on_selector(f'.team[data-team="{t}"]',
                                       "e => getComputedStyle(e).borderLeftColor")
        assert colour == "rgb(%d, %d, %d)" % TEAM_COLOURS[t]
        assert page.inner_text(f'.team[data-team="{t}"] .team-name') == \
            f"Team {t} ({['yellow', 'blue'][t]})"
    assert page.locator('.team[data-team="0"] .col-name').all_inner_texts() == \
        ["river0", "river1", "river2", "river3"]
    assert "hand 0 of 1 in the file, hand number 0" in page.title()


# ---------------------------------------------------------------------- the play page
# (Start, clicks, drags, refusals and queued moves: tests/human/test_play_browser.py)
def test_play_page_shows_the_final_scores(page, tmp_path):
    from agents.human.session import PlaySession
    sess = PlaySession(RulesConfig(num_teams=2, max_ticks=12), against="greedy", seed=1,
                       replay_out=tmp_path / "f.nertz.json.gz")
    srv = play_server(sess, tick_ms=30)
    try:
        page.goto(srv.url)
        page.wait_for_selector("#final.shown")
        scores = sess.table.hand_scores()
        assert page.inner_text("#final") == (
            f"Hand over at tick 12. Final scores: team 0 (you) {scores[0]:+d}, team 1 "
            f"{scores[1]:+d}. Replay: {tmp_path / 'f.nertz.json.gz'}")
        assert page.locator(".team.active").count() == 0      # nothing clickable any more
    finally:
        srv.stop()
