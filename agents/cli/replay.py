"""`nertz replay`: check a recorded hand against the engine, then show it as text, events, a
terminal browser, an HTML page or an animation (nertz_env/replay/ does the work)."""
from __future__ import annotations

import argparse

from .common import int_at_least, positive_float, wrote


def cmd_replay(args) -> int:
    from nertz_env.replay import Replay
    from nertz_env.replay.terminal import browse, events, frame_text, write_animation

    rep = Replay.load(args.file)
    if not rep.hands:
        raise ValueError(f"replay file {args.file!r} holds no hand")
    rep.hand_record(args.hand)                # a bad --hand fails before any work
    print(f"{args.file}: {len(rep.hands)} hand(s), {rep.config.num_teams} teams, seats "
          + ", ".join(f"{s} {a}" for s, a in enumerate(rep.agents)))
    print("\n".join(rep.summary()))
    if not args.no_check:
        rep.check()
        print("checked: every hand replays to its recorded end (layout digest, scores, tick)")
    frames = None
    if args.events or args.tick is not None:
        frames = rep.frames(args.hand)
    if args.events:
        print("\n".join(f"tick {t}: {ev}" for t, ev in events(frames)) or "no events")
    if args.tick is not None:
        first, last = frames[0]["tick"], frames[-1]["tick"]
        if not first <= args.tick <= last:
            raise ValueError(f"--tick {args.tick}: hand {args.hand} has ticks {first}..{last}")
        print(frame_text(rep, frames[args.tick - first]))
    if args.html:
        from nertz_env.replay.html import write_html
        wrote(args.html, write_html, rep, args.html, hand=args.hand)
    if args.video:
        wrote(args.video, write_animation, rep, args.video, hand=args.hand, every=args.every,
              fps=args.fps)
    if args.browse:
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
        formatter_class=argparse.RawDescriptionHelpFormatter)
    r.add_argument("file", help="a replay file (.nertz.json.gz or .json)")
    r.add_argument("--hand", type=int_at_least(0), default=0,
                   help="which hand of the file to show, 0-based (default 0)")
    r.add_argument("--tick", type=int_at_least(0), default=None,
                   help="print the position at this tick and the moves chosen there")
    r.add_argument("--events", action="store_true",
                   help="list the hand's events: Nertz calls, burns, conflicts, illegal moves")
    r.add_argument("--browse", action="store_true",
                   help="step through the hand in the terminal (h for the keys)")
    r.add_argument("--html", default=None, metavar="OUT.html",
                   help="write a self-contained HTML viewer of the hand (no server needed)")
    r.add_argument("--video", default=None, metavar="OUT.gif|OUT.mp4",
                   help="write an animation of the hand (MP4 needs imageio-ffmpeg)")
    r.add_argument("--every", type=int_at_least(1), default=1,
                   help="--video: keep every N-th tick (default 1)")
    r.add_argument("--fps", type=positive_float, default=10.0,
                   help="--video: frames per second (default 10)")
    r.add_argument("--no-check", action="store_true",
                   help="skip playing every hand again to check it (on by default)")
    r.set_defaults(func=cmd_replay)
    return r
