"""The README's pictures of the replay viewer and the play page, taken in headless Chromium.

    python docs/tools/screenshots.py [--out docs/img] [--chromium /usr/bin/chromium]

writes viewer.png (a recorded hand of three bots, scrubbed to a tick with a conflict or a
burn when there is one) and play.png (the play page: the person at seat 0 against two bots,
a card selected and a refused move's rule shown). Needs Playwright and a Chromium, and
nertz-env installed (pip install -e .): it runs from the repository root as a script.
"""
from __future__ import annotations

import argparse
import json
import tempfile
import time
import urllib.request
from pathlib import Path

import numpy as np

from agents.human.server import PlayServer
from agents.human.session import PlaySession
from agents.registry import make_agent
from nertz_env.config import RulesConfig
from nertz_env.engine import Engine
from nertz_env.replay import Recorder
from nertz_env.replay.html import write_html

VIEWPORT = {"width": 1100, "height": 960}


def record_hand(seed: int = 4):
    """Three bots, one hand to its end, recorded."""
    names = ["heuristic:style=river-builder", "heuristic:style=lake-rush", "greedy"]
    cfg = RulesConfig(num_teams=3, max_ticks=1500)
    eng = Engine(cfg, 1, seed)
    rec = Recorder(eng, agents=names)
    eng.reset(hands=[0])
    bots = [make_agent(n) for n in names]
    while not eng.hand_over[0]:
        obs, masks = eng.observe()[0], eng.masks[0]
        eng.step(np.array([[int(b.act_batch(obs[s:s + 1], masks[s:s + 1])[0])
                            for s, b in enumerate(bots)]]))
    return rec.replay()


def shoot_viewer(browser, out: Path) -> Path:
    rep = record_hand()
    frames = rep.frames(0)
    # a busy mid-hand position: the first tick with an event after a third of the hand
    k = next((i for i, f in enumerate(frames) if f["events"] and i > len(frames) // 3),
             len(frames) // 2)
    with tempfile.TemporaryDirectory() as tmp:
        html = write_html(rep, Path(tmp) / "viewer.html")
        page = browser.new_page(viewport=VIEWPORT)
        page.goto(html.resolve().as_uri())
        page.locator("#scrub").fill(str(k))
        path = out / "viewer.png"
        page.screenshot(path=str(path))
        page.close()
    return path


def post(url: str, body: dict) -> dict:
    req = urllib.request.Request(url, data=json.dumps(body).encode(),
                                 headers={"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req) as r:
            return json.load(r)
    except urllib.error.HTTPError as err:
        return json.load(err)


def shoot_play(browser, out: Path) -> Path:
    with tempfile.TemporaryDirectory() as tmp:
        sess = PlaySession(RulesConfig(num_teams=3, max_ticks=3000), seat=0, seed=1,
                           against="heuristic:style=river-builder,greedy",
                           replay_out=Path(tmp) / "p.nertz.json.gz")
        srv = PlayServer(sess, tick_ms=120).start()
        try:
            # the person plays a few ticks of sensible moves (the first legal card move)
            for _ in range(40):
                legal = [m for m in sess.legal() if m not in ("wait", "flip")]
                post(srv.url + "move", {"move": legal[0] if legal else "flip"})
                time.sleep(0.13)
            srv.paused = True
            page = browser.new_page(viewport=VIEWPORT)
            page.goto(srv.url)
            page.wait_for_selector(".team.active [data-src]")
            page.click('.team.active [data-src="nertz"]')
            page.click(".lake h2")                 # most often refused: the rule shows
            page.wait_for_selector("#error.refused, #queued:not(:empty)")
            page.click('.team.active [data-src="waste"]')     # a selected card in the picture
            path = out / "play.png"
            page.screenshot(path=str(path))
            page.close()
        finally:
            srv.stop()
    return path


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="docs/img", help="folder for the PNGs (default docs/img)")
    ap.add_argument("--chromium", default="/usr/bin/chromium", help="the Chromium binary")
    args = ap.parse_args(argv)
    from playwright.sync_api import sync_playwright
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=args.chromium, args=["--no-sandbox"])
        for shoot in (shoot_viewer, shoot_play):
            print("wrote", shoot(browser, out))
        browser.close()


if __name__ == "__main__":
    main()
