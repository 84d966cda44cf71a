"""The play page in a real browser (headless Chromium from the system, /usr/bin/chromium or
NERTZ_CHROMIUM, driven by Playwright): tick 0 until Start, then the clock runs; a queued move
drawn as queued on the position it applies to; a refusal cleared by the next move and by the
end of the hand; clicks, drag and drop and the final scores. The `page` fixture (tests/conftest.py)
skips when Playwright or Chromium is missing, except under NERTZ_REQUIRE_CLIENTS=1 (CI)."""
from __future__ import annotations

import re
import time

import pytest

from agents.human.session import PlaySession
from nertz_env.config import RulesConfig
from tests.helpers import lake_tops, pictured, play_server

ME = ".team.active"


@pytest.fixture
def serve(tmp_path):
    servers = []

    def make(max_ticks=2000, against="heuristic", **kw):
        # seed 1: seat 0's River column 0 holds AD, which R18 sends to the Lake first
        sess = PlaySession(RulesConfig(num_teams=2, max_ticks=max_ticks), against=against,
                           seed=1, replay_out=tmp_path / f"p{len(servers)}.nertz.json.gz")
        srv = play_server(sess, **kw)
        servers.append(srv)
        return srv
    yield make
    for srv in servers:
        srv.stop()


def expected(layout, team: int) -> dict:
    t = layout["teams"][team]
    return {"river": t["river"], "nertz": t["nertz"][-1] if t["nertz"] else None}


def shown_tick(pg) -> int:
    return int(re.match(r"tick (\d+)", pg.inner_text("#status")).group(1))


def test_tick_0_until_start_then_the_clock_runs(page, serve):
    srv = serve(tick_ms=50, wait_start=True)
    deal = srv.session.table.layout()
    page.goto(srv.url)
    page.wait_for_selector("#start", state="visible")
    assert re.match(r"tick 0 .*press Start", page.inner_text("#status"))
    assert pictured(page, 0) == expected(deal, 0) and lake_tops(page) == []
    time.sleep(0.6)                                    # 12 ticks' worth: nothing moves
    assert shown_tick(page) == 0 and srv.session.table.tick == 0
    assert srv.session.table.layout() == deal
    page.click(f'{ME} [data-action="flip"]')           # no move before Start
    page.wait_for_selector("#error.refused")
    assert "the hand has not started: press Start" in page.inner_text("#error")
    page.click("#start")
    page.wait_for_function("/^tick ([3-9]|\\d\\d+)/.test(document.getElementById('status')"
                           ".textContent)")
    assert page.locator("#start").is_hidden()
    assert srv.session.table.tick >= 3


def test_a_queued_move_is_shown_queued_on_its_position(page, serve):
    srv = serve(tick_ms=50, paused=True)               # paused: the queued move waits
    page.goto(srv.url)
    page.wait_for_selector(f"{ME} [data-src]")
    page.click(f'{ME} [data-src="river0:0"]')
    page.click(".lake .new-pile")
    page.wait_for_selector(f'{ME} [data-src="river0:0"].queued-src')
    assert page.inner_text("#queued") == ("queued for the end of tick 0: river0>lake (on the "
                                          "table shown)")
    assert "AD" not in lake_tops(page)                 # the position it applies to: tick 0's
    assert shown_tick(page) == 0
    page.click("#pause")                               # resume: the tick plays it
    page.wait_for_selector('.lake-pile[data-pile] .card[data-card="AD"]')
    page.wait_for_function("document.getElementById('queued').textContent === ''")
    assert page.locator(".queued-src").count() == 0
    # a River move frames its destination column too (the Nertz card into column 0, R12)
    page.click("#pause")
    page.wait_for_function("document.getElementById('status').textContent.includes('paused')")
    nertz = srv.session.table.layout()["teams"][0]["nertz"]
    page.click(f'{ME} [data-src="nertz"]')
    page.click(f'{ME} .column[data-col="0"]')
    page.wait_for_selector(f'{ME} .column[data-col="0"].queued-dst')
    assert "nertz>river0" in page.inner_text("#queued")
    assert page.get_attribute(f'{ME} [data-src="nertz"]', "data-card") == nertz[-1]
    assert "queued-src" in page.get_attribute(f'{ME} [data-src="nertz"]', "class")


def test_a_refusal_is_cleared_by_the_next_move_and_by_the_end(page, serve):
    srv = serve(tick_ms=50, paused=True, max_ticks=8, against="greedy")
    page.goto(srv.url)
    page.wait_for_selector(f"{ME} [data-src]")
    page.click(f'{ME} [data-action="flip"]')           # refused: the ace first (R18)
    page.wait_for_selector("#error.refused")
    assert page.inner_text("#error").startswith("flip refused: R18")
    page.click(f'{ME} [data-src="river0:0"]')          # the next move, accepted
    page.click(".lake .new-pile")
    page.wait_for_function("document.getElementById('error').textContent === ''")
    assert page.get_attribute("#error", "class") == ""
    page.click('#legal button:text-is("wait")')        # a refusal again, then the hand ends
    page.fill("#move-text", "waste>lake")
    page.click("#send")
    page.wait_for_selector("#error.refused")
    page.click("#pause")
    page.wait_for_selector("#final.shown")
    page.wait_for_function("document.getElementById('error').textContent === ''")
    assert page.inner_text("#queued") == ""
    assert page.locator("#legal button").count() == 0
    assert page.locator(".queued-src, .selected").count() == 0
    scores = srv.session.table.hand_scores()
    assert page.inner_text("#final") == (
        f"Hand over at tick 8. Final scores: team 0 (you) {scores[0]:+d}, team 1 "
        f"{scores[1]:+d}. Replay: {srv.session.replay_path}")
    assert page.locator(ME).count() == 0                # nothing clickable any more


def test_click_drag_and_a_named_refusal_after_start(page, serve):
    """The deal as dealt; refusals by two clicks naming the rule (R18, R11: on a running
    clock the refusal may add that the table moved on since the page's tick); a legal move
    by two clicks, then one by drag and drop, each played and logged."""
    srv = serve(tick_ms=100, wait_start=True)
    deal = srv.session.table.layout()
    assert deal["teams"][0]["river"][0] == ["AD"]
    page.goto(srv.url)
    page.wait_for_selector(f"{ME} [data-src]")
    assert pictured(page, 0) == expected(deal, 0)      # our cards move only when we move them
    page.click("#start")
    page.click(f'{ME} [data-action="flip"]')           # the stock while the ace waits (R18)
    page.wait_for_selector("#error.refused")
    assert re.match(r"flip refused: R18: the available ace AD must go to the Lake first",
                    page.inner_text("#error"))
    page.click(f'{ME} [data-src="nertz"]')             # the Nertz 2C onto column 1's 4C
    assert "selected" in page.get_attribute(f'{ME} [data-src="nertz"]', "class")
    page.click(f'{ME} .column[data-col="1"] .card')
    page.wait_for_function("document.getElementById('error').textContent.includes('R11')")
    assert re.fullmatch(re.escape("nertz>river1 refused: R11: 2C goes on a red 3 (3H or 3D); "
                                  "River column 1's top is 4C")
                        + r"( \(the table moved on: the page showed tick \d+, now tick \d+\))?",
                        page.inner_text("#error"))
    assert "AD" not in lake_tops(page)
    page.click(f'{ME} [data-src="river0:0"]')
    page.click(".lake .new-pile")
    page.wait_for_selector('.lake-pile[data-pile] .card[data-card="AD"]')
    assert page.inner_text("#error") == ""
    page.wait_for_function("[...document.querySelectorAll('#log li')].some("
                           "li => li.textContent.includes('seat 0 (you) river0>lake'))")
    nertz = deal["teams"][0]["nertz"]
    page.drag_and_drop(f'{ME} [data-src="nertz"]', f'{ME} .column[data-col="0"]')
    page.wait_for_selector(f'{ME} .column[data-col="0"] .card[data-card="{nertz[-1]}"]')
    assert page.get_attribute(f'{ME} [data-src="nertz"]', "data-card") == nertz[-2]


def test_a_move_made_right_after_start_waits_for_start(page, serve):
    """The page posts in the order the person acts: a flip clicked while a slow Start is still
    on its way reaches the server after it (R18's refusal, not 'the hand has not started')."""
    srv = serve(tick_ms=100, wait_start=True)
    start_hand = srv.start_hand

    def slow_start():
        time.sleep(0.5)                                 # the move's post would overtake it
        start_hand()
    srv.start_hand = slow_start
    page.goto(srv.url)
    page.wait_for_selector(f"{ME} [data-src]")
    page.click("#start")
    page.click(f'{ME} [data-action="flip"]')
    page.wait_for_selector("#error.refused")
    assert page.inner_text("#error").startswith("flip refused: R18: the available ace AD")

