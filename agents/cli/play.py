"""`nertz play`: one hand with random legal moves printed as it goes, or (--human) a person
against agents (agents/human/server.py runs that)."""
from __future__ import annotations

import argparse

import numpy as np

from ..human.pace import DEFAULT_LEVEL, DEFAULT_TICK_MS, LEVELS, given, level_help
from .common import HelpFormatter, add_rules, add_speeds, config, int_at_least

HUMAN_ONLY = ("terminal", "against", "seat", "level", "bot_ms", "tick_ms", "human_period",
              "port", "replay_out", "no_browser")


def cmd_play(args) -> int:
    from nertz_env.table.table import Table

    cfg = config(args)
    if args.human:
        from ..human.server import play_from_args
        return play_from_args(args, cfg)
    human_only = [f"--{name.replace('_', '-')}" for name in HUMAN_ONLY
                  if given(getattr(args, name))]
    if human_only:
        raise ValueError(f"{human_only[0]} is an option of 'nertz play --human'")
    table = Table.deal(cfg, seed=args.seed)
    rng = np.random.default_rng(args.seed)
    print(table.render())
    while not table.hand_over:
        moves = {}
        for seat in range(cfg.num_seats):
            legal = table.legal_moves(seat)
            moves[seat] = legal[int(rng.integers(len(legal)))]
        table.step(moves)
        if table.tick % args.every == 0 or table.hand_over:
            print()
            print(table.render())
    lay = table.layout()
    how = (f"team(s) {lay['callers']} called Nertz" if lay["callers"]
           else f"no caller: max_ticks={cfg.max_ticks} reached (R26)")
    print(f"\nHand over after {table.tick} ticks: {how}")
    print("Scores (R29):", ", ".join(f"team {t}: {s:+d}" for t, s in enumerate(table.hand_scores())))
    return 0


def add_parser(sub) -> argparse.ArgumentParser:
    p = sub.add_parser("play", help="play one hand: random legal moves, or you against bots "
                                    "(--human)",
                       description="Deal one hand, play it with uniformly random legal moves "
                                   "(every seat, every tick), print the table every N ticks and "
                                   "the hand scores. With --human, you play one seat against "
                                   "agents on a local web page (a server on 127.0.0.1 only; "
                                   "the hand waits at tick 0 until you press Start, then ticks "
                                   "run on a wall clock, the bots at the pace of --level; click "
                                   "or drag your cards, an illegal move is refused with the "
                                   "rule that forbids it) or, "
                                   "with --terminal, tick by tick in the terminal; the hand "
                                   "ends with the scores and a replay file (nertz replay FILE).",
                       epilog="examples:\n"
                              "  nertz play --teams 4 --team-sizes 2,1,1,2 --every 100\n"
                              "  nertz play --human --teams 2 --level easy\n"
                              "  nertz play --human --teams 2 --against learned --bot-ms 1500 "
                              "--tick-ms 100\n"
                              "  nertz play --human --teams 3 --against learned:teams=4,greedy "
                              "--tick-ms 600 --speeds 1,2,2\n"
                              "  nertz play --human --terminal --teams 2 --against greedy\n"
                              "  nertz play --human --teams 2 --against search --level expert",
                       formatter_class=HelpFormatter)
    add_rules(p, target=False)               # one hand: no game target (R30)
    p.add_argument("--every", type=int_at_least(1), default=100,
                   help="print the table every N ticks, N >= 1 (default 100)")
    add_speeds(p)
    p.add_argument("--rule", action="append", default=[], metavar="FIELD=VALUE",
                   help="any other RulesConfig field, repeatable (as in nertz tournament)")
    h = p.add_argument_group("you against the bots")
    h.add_argument("--human", action="store_true",
                   help="play one seat yourself on a local web page (or --terminal)")
    h.add_argument("--terminal", action="store_true",
                   help="with --human: play tick by tick in the terminal instead of a browser")
    h.add_argument("--against", default="", metavar="SPECS",
                   help="agents at the other seats: one spec for all, or one per seat in seat "
                        "order, comma separated (random, greedy, heuristic[:style=S], learned, "
                        "ppo:PATH, search[:OPTIONS]; default: the --level's bot, heuristic "
                        "with --speeds or --terminal)")
    h.add_argument("--seat", type=int_at_least(0), default=None,
                   help="your seat (default 0); seats are numbered team by team")
    h.add_argument("--level", choices=list(LEVELS), default=None,
                   help=f"the bots' pace and skill (default {DEFAULT_LEVEL}): {level_help()}; "
                        "--against replaces the level's bot, keeping its pace")
    h.add_argument("--bot-ms", type=int_at_least(10, 600000), default=None, metavar="MS",
                   help="the bots' reaction time instead of a level: at most one move per MS "
                        "milliseconds, a multiple of --tick-ms")
    h.add_argument("--tick-ms", type=int_at_least(10, 60000), default=None,
                   help=f"milliseconds per tick on the web page (default {DEFAULT_TICK_MS}): "
                        "your queued move plays at the end of the tick; with --speeds every "
                        "seat's period is counted in these ticks")
    h.add_argument("--human-period", type=int_at_least(1, 100), default=None,
                   help="your seat's period in ticks (R21): 2 = you move at most every other "
                        "tick (default: as --speeds, else 1)")
    h.add_argument("--port", type=int_at_least(0, 65535), default=None,
                   help="the web page's port on 127.0.0.1 (default 0: any free port)")
    h.add_argument("--no-browser", action="store_true",
                   help="print the page's address without opening a browser")
    h.add_argument("--replay-out", default="", metavar="PATH",
                   help="where to write the hand's replay: a new file in an existing folder, "
                        "checked before the hand (default runs/play/<time>-seed<N>"
                        ".nertz.json.gz)")
    p.set_defaults(func=cmd_play)
    return p
