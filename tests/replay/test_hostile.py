"""Replay files as untrusted input, and views whose memory does not grow with the hand:
caps (file bytes, gzip inflation, nesting, counts) refused fast with one line, every key
checked with strict types, strings from a file neutralised before a terminal, GIF/MP4/HTML
made one position at a time and written whole or not at all (nertz_env/replay/validate.py,
video.py, html.py, notation.py)."""
from __future__ import annotations

import gzip
import inspect
import json
import re
import time
import zlib

import numpy as np
import pytest

from agents.cli import main
from nertz_env import RulesConfig, Table
from nertz_env.replay import Replay, ReplayError, record
from nertz_env.replay import format as F
from nertz_env.replay import validate as V
from nertz_env.replay.format import _checksum


def play(ticks=40, teams=2, seed=1, agents=None):
    """A recorded hand of random legal moves (no call), `ticks` long."""
    from nertz_env.engine import Engine
    cfg = RulesConfig(num_teams=teams, max_ticks=ticks, auto_nertz=False)
    engine = Engine(cfg, 1, seed)
    rec = record(engine, agents=agents)             # before the deal: a hand of dealt decks
    engine.reset(hands=[0])
    table = Table(engine)
    rng = np.random.default_rng(seed)
    while not table.hand_over:
        moves = {}
        for s in range(cfg.num_seats):
            legal = [str(m) for m in table.legal_moves(s) if str(m) != "call"]
            moves[s] = legal[int(rng.integers(len(legal)))] if legal else "wait"
        table.step(moves)
    return rec.replay(include_open=False)


@pytest.fixture(scope="module")
def short():
    return play()


def body_of(rep) -> dict:
    return json.loads(json.dumps(rep.to_json()))


def write(tmp_path, body, rehash=True, name="x.json") -> str:
    if rehash:
        body["sha256"] = _checksum({k: v for k, v in body.items() if k != "sha256"})
    p = tmp_path / name
    p.write_text(json.dumps(body))
    return str(p)


# ---------------------------------------------------------------------- caps
def test_a_gzip_bomb_is_refused_in_under_a_second(tmp_path):
    """A 256 MiB inflation (the class of the 2 GiB bomb, cheaper to build) is refused after
    the cap, fast, naming the file; benchmarks/replay_memory.py times the 2 GiB one."""
    comp = zlib.compressobj(9, zlib.DEFLATED, 31)
    p = tmp_path / "bomb.nertz.json.gz"
    with open(p, "wb") as fh:
        fh.write(comp.compress(b'{"format": "nertz-replay", "version": 1, "x": "'))
        for _ in range(16):
            fh.write(comp.compress(b" " * (1 << 24)))
        fh.write(comp.compress(b'"}') + comp.flush())
    assert p.stat().st_size < 1 << 20
    t0 = time.process_time()                 # CPU time: other jobs on the machine don't count
    with pytest.raises(ReplayError, match=r"bomb.nertz.json.gz.*inflates to more than 32 MiB"):
        Replay.load(p)
    assert time.process_time() - t0 < 1.0


def test_a_file_over_the_byte_cap_is_refused_unread(tmp_path, monkeypatch, short):
    path = short.save(tmp_path / "h.json")
    monkeypatch.setattr(F, "MAX_FILE_BYTES", 100)
    with pytest.raises(ReplayError, match="larger than"):
        Replay.load(path)


@pytest.mark.parametrize("gz", [False, True])
def test_deep_nesting_is_a_one_line_error_not_a_recursion_error(tmp_path, gz):
    deep = b'{"format": "nertz-replay", "version": 1, "meta": ' + b"[" * 200_000 \
        + b"]" * 200_000 + b"}"
    p = tmp_path / ("deep.nertz.json.gz" if gz else "deep.json")
    p.write_bytes(gzip.compress(deep) if gz else deep)
    with pytest.raises(ReplayError, match="nested 200001 levels deep; at most 64"):
        Replay.load(p)
    assert main(["replay", str(p)]) == 2


def test_meta_nesting_and_counts_within_the_file_caps(tmp_path, short, monkeypatch):
    body = body_of(short)
    body["meta"] = {"a": [[[[[[[[1]]]]]]]]}
    with pytest.raises(ReplayError, match=r"meta.*nested deeper than 6"):
        Replay.load(write(tmp_path, body))
    body["meta"] = {"a": "x" * (V.MAX_STRING + 1)}
    with pytest.raises(ReplayError, match="at most 2000"):
        Replay.load(write(tmp_path, body))
    body["meta"] = {"a": list(range(V.MAX_FREE_ITEMS + 1))}
    with pytest.raises(ReplayError, match="more than 5000 values"):
        Replay.load(write(tmp_path, body))
    body = body_of(short)
    body["agents"][0] = "n" * (V.MAX_NAME + 1)
    with pytest.raises(ReplayError, match="at most 200 characters"):
        Replay.load(write(tmp_path, body))
    body = body_of(short)
    body["hands"] = body["hands"] * 3
    monkeypatch.setattr(V, "MAX_HANDS", 2)
    with pytest.raises(ReplayError, match="at most 2 are read"):
        Replay.load(write(tmp_path, body))
    monkeypatch.setattr(V, "MAX_HANDS", 10)
    monkeypatch.setattr(V, "MAX_ACTIONS", 100)
    with pytest.raises(ReplayError, match="more than 100 action ids"):
        Replay.load(write(tmp_path, body))


# ---------------------------------------------------------------------- every key, strict types
def _hand(b):
    return b["hands"][0]


CASES = [   # (change to a valid file, words the refusal must hold)
    (lambda b: _hand(b)["end"].update(winner=0), r"hands\[0\]\.end: unknown key 'winner'; "
                                                 r"allowed: status, tick, scores"),
    (lambda b: b.update(extra=1), r"unknown key 'extra'; allowed: format, version"),
    (lambda b: _hand(b).update(notes="x"), r"hands\[0\]: unknown key 'notes'"),
    (lambda b: b["config"].update(colour="red"), r"config: unknown key 'colour'"),
    (lambda b: b.update(version=True), "version True is not supported"),
    (lambda b: _hand(b).update(hand="1"), r"hands\[0\]\.hand: must be an int"),
    (lambda b: _hand(b).update(ticks=float(_hand(b)["ticks"])), r"hands\[0\]\.ticks: must be an int"),
    (lambda b: _hand(b)["actions"].__setitem__(0, True), "'actions' must hold"),
    (lambda b: _hand(b)["actions"].__setitem__(0, 1.0), "'actions' must hold"),
    (lambda b: _hand(b)["actions"].__setitem__(0, 999), "'actions' must hold"),
    (lambda b: _hand(b)["end"].update(tick=str(_hand(b)["end"]["tick"])), r"end\.tick: must be an int"),
    (lambda b: _hand(b)["end"].update(status="won"), r"end\.status: must be one of nertz, truncated, open"),
    (lambda b: _hand(b)["end"].update(scores=[True, 0]), r"end\.scores: must list 2 ints"),
    (lambda b: _hand(b)["end"].update(callers=[1, 1]), r"end\.callers: must list distinct teams"),
    (lambda b: _hand(b)["end"].update(digest="XYZ"), r"end\.digest: must be 16 lowercase hex"),
    (lambda b: _hand(b)["end"].pop("status"), r"end: missing key 'status'"),
    (lambda b: _hand(b).update(end=[]), r"end: must be an object"),
    (lambda b: _hand(b).update(label=[1]), r"label: must be an object"),
    (lambda b: b.update(meta="hi"), r"meta: must be an object"),
    (lambda b: _hand(b).update(ticks=10**7), r"ticks: must be an int from 0 to 40"),
    (lambda b: _hand(b).update(layout={"teams": []}), "exactly one of 'decks'"),
    (lambda b: _hand(b)["decks"].__setitem__(0, 5), r"decks\[0\]: must be a string"),
    (lambda b: b.update(sha256=7), "sha256: must be 64 lowercase hex digits"),
]


@pytest.mark.parametrize("change,words", CASES, ids=[w[:30] for _, w in CASES])
def test_every_key_is_checked_with_strict_types(tmp_path, short, change, words):
    """A re-hashed file (so the checksum passes) with one bad key or value: a ReplayError
    of one line naming the key and what is allowed; the CLI prints it as one line."""
    body = body_of(short)
    change(body)
    path = write(tmp_path, body, rehash=not words.startswith("sha256"))
    with pytest.raises(ReplayError, match=words) as err:
        Replay.load(path)
    assert "\n" not in str(err.value)


def test_a_layout_hand_checks_its_layout(tmp_path):
    from tests.helpers import layout_of, team
    table = Table.from_layout(layout_of([team(["5S", "2H"]), team(["5C", "2H"])], lake=[["AH"]]))
    rec = record(table)
    table.step({0: "nertz>lake", 1: "wait"})
    body = body_of(rec.replay())
    _hand(body)["layout"]["teams"][0]["colour"] = 1
    with pytest.raises(ReplayError, match=r"hands\[0\]\.layout: teams\[0\]: unknown keys"):
        Replay.load(write(tmp_path, body))


# ---------------------------------------------------------------------- the terminal
HOSTILE = ["ev\x1b[2J\x1b]0;pwned\x07il", "bi\u202edi\r\nnext\x9b31m"]


def test_strings_from_a_file_are_neutralised_before_the_terminal(tmp_path, capsys):
    rep = play(agents=list(HOSTILE))
    rep.hands[0].label.update({"note\x1b[1m": "x\x1b[31my"})
    path = rep.save(tmp_path / "h.nertz.json.gz")
    assert main(["replay", str(path), "--tick", "3", "--events"]) == 0
    out = capsys.readouterr().out
    assert not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202e]", out)
    assert "ev\\x1b[2J\\x1b]0;pwned\\x07il" in out and "bi\\u202edi\\r\\nnext\\x9b31m" in out
    assert "note\\x1b[1m=x\\x1b[31my" in out
    from nertz_env.replay.terminal import browse
    said = []
    lines = iter(["n", "s", "q"])
    browse(Replay.load(path), 0, read=lambda p: next(lines), write=said.append)
    assert said and not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202e]", "\n".join(said))


# ---------------------------------------------------------------------- memory flat
def test_views_make_frames_lazily_and_never_hold_the_hand(tmp_path, monkeypatch):
    """Frames come from a generator; HTML, GIF and MP4 never build the list of frames."""
    from nertz_env.replay import playback, video
    assert inspect.isgeneratorfunction(playback.Playback.iter_frames)
    assert inspect.isgeneratorfunction(video.rgb_frames)
    rep = play(ticks=30)
    monkeypatch.setattr(playback.Playback, "frames",
                        lambda *a, **k: pytest.fail("a view built every frame at once"))
    from nertz_env.replay.html import write_html
    write_html(rep, tmp_path / "h.html")
    video.write_animation(rep, tmp_path / "h.gif")
    with pytest.raises(StopIteration):
        gen = video.rgb_frames(rep, 0, every=1000)
        next(gen), next(gen), next(gen)


def test_a_long_hand_gif_is_sampled_to_its_frame_budget_and_says_so(tmp_path, monkeypatch, capsys):
    from PIL import Image

    from nertz_env.replay import video
    rep = play(ticks=60)
    monkeypatch.setattr(video, "MAX_GIF_FRAMES", 8)
    said = []
    video.write_animation(rep, tmp_path / "h.gif", note=said.append)
    with Image.open(tmp_path / "h.gif") as im:
        assert im.n_frames <= 8
    assert len(said) == 1 and "a GIF holds at most 8 pictures" in said[0]
    path = rep.save(tmp_path / "h.nertz.json.gz")
    assert main(["replay", str(path), "--no-check", "--video", str(tmp_path / "c.gif")]) == 0
    assert "keeps 1 every 9 ticks" in capsys.readouterr().out


@pytest.mark.slow
def test_the_html_of_a_3000_tick_hand_stays_small(tmp_path):
    """Positions stored compactly (keyframes and changed piles): the old page of every
    layout was 87 MB for a long hand; benchmarks/replay_memory.py measures its memory."""
    from nertz_env.replay.html import decode_records, frame_records, write_html
    rep = play(ticks=3000, teams=4)
    path = write_html(rep, tmp_path / "long.html")
    assert path.stat().st_size < 1_500_000
    assert "This page keeps" not in path.read_text()          # a 3,000-tick hand is whole
    frames = rep.frames(0)
    back = decode_records(frame_records(iter(frames)))
    assert [back[k] for k in (0, 1, 150, 2999, 3000)] == [frames[k] for k in (0, 1, 150,
                                                                               2999, 3000)]


def test_a_longer_hand_page_is_sampled_to_its_bound_and_says_so(tmp_path, monkeypatch,
                                                                capsys):
    """Past MAX_PAGE_POSITIONS a page keeps positions evenly (the first and last always),
    lists the skipped ticks' events with the next kept one, and says so: its size is
    bounded whatever the hand's length."""
    from nertz_env.replay import html as H
    rep = play(ticks=80)
    frames = rep.frames(0)
    monkeypatch.setattr(H, "MAX_PAGE_POSITIONS", 12)
    monkeypatch.setattr(H, "KEY_EVERY", 5)
    keep, words = H.page_sampling(len(frames))
    kept = sorted(keep)
    assert len(kept) <= 12 and kept[0] == 0 and kept[-1] == len(frames) - 1
    every = kept[1]
    assert words.startswith(f"This page keeps 1 position every {every} ticks ({len(kept)} of "
                            f"{len(frames)}")
    for f in frames:                                  # events to fold (random play has few)
        f["events"] = [f"conflict {f['tick']}.{e}" for e in range(3)]
    recs = list(H.frame_records(iter(frames), keep))
    back = H.decode_records(recs)
    assert len(back) == len(kept)
    for got, k in zip(back, kept):
        assert {x: got[x] for x in ("tick", "layout", "scores", "moves", "order")} == \
            {x: frames[k][x] for x in ("tick", "layout", "scores", "moves", "order")}
    for j, k in enumerate(kept):                      # the skipped ticks' events come first
        lo = kept[j - 1] + 1 if j else 0
        skipped = [f"tick {f['tick']}: {e}" for f in frames[lo:k] for e in f["events"]]
        head = skipped[:H.MAX_FOLDED] + ([f"... and {len(skipped) - H.MAX_FOLDED} more events "
                                          f"in the ticks skipped before tick "
                                          f"{frames[k]['tick']}"]
                                         if len(skipped) > H.MAX_FOLDED else [])
        assert back[j]["events"] == head + frames[k]["events"]
    assert max(k - j for j, k in zip(kept, kept[1:])) * 3 > H.MAX_FOLDED + 3  # one cut short
    page = H.replay_html(rep, 0)
    assert words in page                              # the header line says it too
    data = json.loads(re.search(r'<script id="replay-data" type="application/json">(.*?)'
                                r'</script>', page, re.DOTALL).group(1))
    assert data["sampled"] == words and len(data["frames"]) == len(kept)
    path = rep.save(tmp_path / "h.nertz.json.gz")
    assert main(["replay", str(path), "--no-check", "--html", str(tmp_path / "h.html")]) == 0
    assert words in capsys.readouterr().out                # the CLI says it as well
    monkeypatch.setattr(H, "MAX_PAGE_POSITIONS", 5000)
    assert H.page_sampling(len(frames)) == (None, "")
    assert main(["replay", str(path), "--no-check", "--html", str(tmp_path / "h.html")]) == 0
    assert "This page keeps" not in capsys.readouterr().out


def test_a_gif_is_streamed_one_picture_at_a_time_and_shows_every_picture(tmp_path,
                                                                         monkeypatch):
    """Each picture is written before the next is made (Pillow's save_all, which keeps
    every frame, is not used), and the file decodes to exactly the pictures."""
    import io

    from PIL import Image

    from nertz_env.replay import video
    rep = play(ticks=24)
    pics = list(video.rgb_frames(rep, 0, every=2))
    fh, sizes = io.BytesIO(), []

    def watched():
        for pic in pics:
            sizes.append(fh.tell())
            yield pic
    video._write_gif(fh, watched(), 50)
    assert all(b > a for a, b in zip(sizes[1:], sizes[2:]))   # picture i-1 out before i made
    monkeypatch.setattr(Image.Image, "save", lambda *a, **k: pytest.fail("save_all holds all"))
    path = video.write_animation(rep, tmp_path / "h.gif", every=2, fps=20)
    assert path.read_bytes() == fh.getvalue()
    with Image.open(path) as im:
        assert im.n_frames == len(pics) and im.info["duration"] == 50 and im.info["loop"] == 0
        for i, pic in enumerate(pics):
            im.seek(i)
            assert np.array_equal(np.asarray(im.convert("RGB")), pic), i


# ---------------------------------------------------------------------- written whole
def test_outputs_are_whole_or_not_at_all(tmp_path, monkeypatch, short):
    """A failure while writing leaves the old file as it was and no temporary file."""
    import os

    from nertz_env.files import atomic
    from nertz_env.replay.html import write_html
    from nertz_env.replay.video import write_animation
    targets = [tmp_path / n for n in ("r.nertz.json.gz", "h.html", "a.gif")]
    for t in targets:
        t.write_text("old")

    def full_disk(*a):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(atomic.os, "replace", full_disk)
    for t, write in zip(targets, (lambda p: short.save(p), lambda p: write_html(short, p),
                                  lambda p: write_animation(short, p))):
        with pytest.raises(ValueError, match=f"{re.escape(str(t))}.*cannot write it"):
            write(t)
        assert t.read_text() == "old"
    assert sorted(os.listdir(tmp_path)) == sorted(t.name for t in targets)


def test_an_unwritable_output_is_one_line_naming_it(tmp_path, short):
    from nertz_env.replay.html import write_html
    from nertz_env.replay.video import write_animation
    (tmp_path / "file").write_text("")
    bad = tmp_path / "file" / "under"
    for write in (lambda: write_html(short, bad / "x.html"),
                  lambda: write_animation(short, bad / "x.gif"),
                  lambda: short.save(bad / "x.nertz.json.gz")):
        with pytest.raises(ValueError, match=f"{re.escape(str(bad))}.*cannot write it"):
            write()
