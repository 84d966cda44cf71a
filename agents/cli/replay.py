"""`nertz replay`: check a recorded hand against the engine, then show it as text, events, a
terminal browser, an HTML page or an animation (nertz_env/replay/ does the work)."""
from __future__ import annotations

import argparse

from .common import HelpFormatter, int_at_least, positive_float, wrote


def cmd_replay(args) -> int:
    from nertz_env.replay import Replay
    from nertz_env.replay.notation import legend_text, safe, safe_lines
    from nertz_env.replay.terminal import browse, frame_text, write_animation

    def say(text) -> None:              # every string from the file made safe for a terminal
        print(safe_lines(text))

    rep = Replay.load(args.file)
    if not rep.hands:
        raise ValueError(f"replay file {args.file!r} holds no hand")
    rep.hand_record(args.hand)                # a bad --hand fails before any work
    h = rep.hands[args.hand]
    if args.tick is not None:
        first = h.layout["tick"] if h.layout is not None else 0
        if not first <= args.tick <= first + h.ticks:
            raise ValueError(f"--tick {args.tick}: hand {args.hand} of {len(rep.hands)} in "
                             f"the file has ticks "
                             f"{first}..{first + h.ticks}")
    say(f"{safe(args.file)}: {len(rep.hands)} hand(s), {rep.config.num_teams} teams, seats "
        + ", ".join(f"{s} {safe(a)}" for s, a in enumerate(rep.agents)))
    say("\n".join(rep.summary()))
    if not args.no_check:
        rep.check()
        say("checked: every hand replays to its recorded end (layout digest, scores, tick)")
    if args.events or args.tick is not None:
        found = []
        for f in rep.iter_frames(args.hand):      # one position at a time: memory flat
            found += [f"tick {f['tick']}: {ev}" for ev in f["events"]]
            if f["tick"] == args.tick:
                shown = f
        if args.events:
            say("\n".join(found) or "no events")
        if args.tick is not None:
            say(legend_text())
            say(frame_text(rep, shown, args.hand))
    if args.html:
        from nertz_env.replay.html import page_sampling, write_html
        wrote(args.html, write_html, rep, args.html, hand=args.hand)
        sampled = page_sampling(h.ticks + 1)[1]
        if sampled:                          # the page says it too, above the table
            say(f"{args.html}: {sampled}")
    if args.video:
        wrote(args.video, write_animation, rep, args.video, hand=args.hand, every=args.every,
              fps=args.fps, note=say)
    if args.browse:
        say(legend_text())
        browse(rep, args.hand, start=0)
    return 0


def add_parser(sub) -> argparse.ArgumentParser:
    r = sub.add_parser(
        "replay", help="check and watch a recorded hand (text, HTML page, GIF/MP4)",
        description="Read a replay file (written by --record, by nertz play --human or by "
                    "nertz_env.replay.record(env)), play every hand again and check it ends "
                    "exactly as recorded, then show it: one tick as text (--tick), the events "
                    "(--events), a step-by-step browser in the terminal (--browse), a "
                    "self-contained HTML page with a scrubber (--html) or an animation "
                    "(--video a.gif or a.mp4).",
        epilog="examples:\n  nertz tournament --agents heuristic,greedy --deals 20 --out runs/t "
               "--record deals:0\n  nertz replay runs/t/replays/lineup0-deal0-seating0"
               ".nertz.json.gz --events\n  nertz replay FILE --browse      (Enter next, p "
               "previous, j N jump, / call next Nertz call, q quit)\n  nertz replay FILE "
               "--html hand.html --video hand.gif --every 5",
        formatter_class=HelpFormatter)
    r.add_argument("file", help="a replay file (.nertz.json.gz or .json)")
    r.add_argument("--hand", type=int_at_least(0), default=0,
                   help="which hand of the file to show: its place in the file, 0 first "
                        "('hand 0 of 1 in the file'; not the game's hand number, R4)")
    r.add_argument("--tick", type=int_at_least(0), default=None,
                   help="print the position at the start of this tick (before its moves), the "
                        "moves chosen there and the legend of the notation")
    r.add_argument("--events", action="store_true",
                   help="list the hand's events: Nertz calls, burns, conflicts, illegal moves")
    r.add_argument("--browse", action="store_true",
                   help="step through the hand in the terminal (h for the keys)")
    r.add_argument("--html", default=None, metavar="OUT.html",
                   help="write a self-contained HTML viewer of the hand (no server needed)")
    r.add_argument("--video", default=None, metavar="OUT.gif|OUT.mp4",
                   help="write an animation of the hand (MP4 needs imageio-ffmpeg); a GIF holds "
                        "at most 200 pictures, so a longer hand is sampled evenly (and says so)")
    r.add_argument("--every", type=int_at_least(1), default=1,
                   help="--video: keep every N-th tick (default 1)")
    r.add_argument("--fps", type=positive_float, default=10.0,
                   help="--video: frames per second (default 10)")
    r.add_argument("--no-check", action="store_true",
                   help="skip playing every hand again to check it (on by default)")
    r.set_defaults(func=cmd_replay)
    return r
