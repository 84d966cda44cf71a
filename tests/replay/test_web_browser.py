"""The replay viewer and the play page in a real browser: headless Chromium from the system
(/usr/bin/chromium, or NERTZ_CHROMIUM) driven by Playwright.

Skipped when Playwright or Chromium is missing, except under NERTZ_REQUIRE_CLIENTS=1 (CI),
where a missing one fails, like tests/envs/test_clients.py."""
from __future__ import annotations

import os
import re

import numpy as np
import pytest

from nertz_env.config import RulesConfig
from nertz_env.engine import Engine
from nertz_env.replay import Recorder, Replay
from nertz_env.replay.html import write_html

REQUIRED = os.environ.get("NERTZ_REQUIRE_CLIENTS") == "1"
CHROMIUM = os.environ.get("NERTZ_CHROMIUM", "/usr/bin/chromium")


def _missing(why: str):
    if REQUIRED:
        pytest.fail(why)
    pytest.skip(why)


@pytest.fixture(scope="module")
def browser():
    try:
        from playwright.sync_api import sync_playwright
    except ImportError as err:
        _missing(f"playwright is not installed ({err}): pip install playwright")
    if not os.access(CHROMIUM, os.X_OK):
        _missing(f"no Chromium at {CHROMIUM} (apt-get install chromium, or set NERTZ_CHROMIUM)")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
        yield b
        b.close()


@pytest.fixture
def page(browser):
    pg = browser.new_page(viewport={"width": 1100, "height": 900})
    errors = []
    pg.on("pageerror", lambda err: errors.append(str(err)))
    pg.set_default_timeout(10_000)
    yield pg
    pg.close()
    assert not errors, errors                     # no script error on the page


def pictured(pg, team: int) -> dict:
    """The cards a team's panel shows: River columns (every card) and the Nertz top."""
    box = pg.locator(f'.team[data-team="{team}"]')
    cols = [[c.get_attribute("data-card") for c in col.locator(".card[data-card]").all()]
            for col in box.locator(".column").all()]
    nertz = box.locator(".nertz .card[data-card]")
    return {"river": cols, "nertz": nertz.get_attribute("data-card") if nertz.count() else None}


def lake_tops(pg) -> list:
    return [c.get_attribute("data-card") for c in pg.locator(".lake-pile[data-pile] .card").all()]


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
    frames = json.loads(data)["frames"]
    assert [f["tick"] for f in frames] == [f["tick"] for f in rep.frames(0)]
    assert json.loads(script_json({"x": "</script><!--"})) == {"x": "</script><!--"}
    assert "</" not in script_json({"x": "</script>"})
    with pytest.raises(ValueError, match="hand"):
        replay_html(rep, 5)


def test_viewer_shows_the_deal_and_scrubs(page, recorded):
    rep, html = recorded
    frames = rep.frames(0)
    last = len(frames) - 1
    page.goto(html.resolve().as_uri())
    assert page.inner_text("#tick-label") == f"tick 0 / {frames[-1]['tick']}"
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


# ---------------------------------------------------------------------- the play page
def test_play_page_click_drag_and_refusal(page, tmp_path):
    from agents.human.server import PlayServer
    from agents.human.session import PlaySession
    # seed 1: seat 0's River column 0 holds AD, which R18 sends to the Lake first
    sess = PlaySession(RulesConfig(num_teams=2, max_ticks=2000), against="heuristic", seed=1,
                       replay_out=tmp_path / "p.nertz.json.gz")
    deal = sess.table.layout()
    srv = PlayServer(sess, tick_ms=100).start()
    try:
        page.goto(srv.url)
        page.wait_for_selector(".team.active [data-src]")
        assert pictured(page, 0) == expected(deal, 0)         # the deal shows (our cards
        assert deal["teams"][0]["river"][0] == ["AD"]         # move only when we move them)
        # illegal moves: a flip (a click on the stock) while the ace waits (R18); the Nertz
        # card 2C onto River column 1's 4C (R11)
        page.click('.team.active [data-action="flip"]')
        page.wait_for_selector("#error.refused")
        assert re.match(r"flip refused: R18: the available ace AD must go to the Lake first",
                        page.inner_text("#error"))
        page.click('.team.active [data-src="nertz"]')
        assert "selected" in page.get_attribute('.team.active [data-src="nertz"]', "class")
        page.click('.team.active .column[data-col="1"] .card')
        page.wait_for_function("document.getElementById('error').textContent.includes('R11')")
        assert page.inner_text("#error") == ("nertz>river1 refused: R11: 2C goes on a red 3 (3H "
                                             "or 3D); River column 1's top is 4C")
        assert "AD" not in lake_tops(page)
        # a legal move by two clicks: the ace onto the empty-Lake slot; the Lake updates
        page.click('.team.active [data-src="river0:0"]')
        page.click(".lake .new-pile")
        page.wait_for_selector('.lake-pile[data-pile] .card[data-card="AD"]')
        assert page.inner_text("#error") == ""
        assert any("seat 0 (you) river0>lake" in x for x in page.locator("#log li").all_inner_texts())
        # a legal move by drag and drop: the Nertz card into the now empty column 0 (R12)
        nertz = deal["teams"][0]["nertz"]
        page.drag_and_drop('.team.active [data-src="nertz"]', '.team.active .column[data-col="0"]')
        page.wait_for_selector(f'.team.active .column[data-col="0"] .card[data-card="{nertz[-1]}"]')
        assert page.get_attribute('.team.active [data-src="nertz"]', "data-card") == nertz[-2]
    finally:
        srv.stop()


def test_play_page_shows_the_final_scores(page, tmp_path):
    from agents.human.server import PlayServer
    from agents.human.session import PlaySession
    sess = PlaySession(RulesConfig(num_teams=2, max_ticks=12), against="greedy", seed=1,
                       replay_out=tmp_path / "f.nertz.json.gz")
    srv = PlayServer(sess, tick_ms=30).start()
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
