"""`nertz game`: whole games to --target (R30) on the batched core, with core bots
(nertz_env/table/games.py plays them; nertz_env/bot_specs.py reads --agents)."""
from __future__ import annotations

import argparse
import json
import time

from .common import MAX_GAMES, HelpFormatter, add_rules, config, fit, int_option


def cmd_game(args) -> int:
    from nertz_env.bot_specs import seat_bots
    from nertz_env.table.games import play_games

    cfg = config(args)
    _, _, names = seat_bots(args.agents, cfg.num_seats, where="--agents")
    t = time.perf_counter()
    games = play_games(cfg, args.games, seed=args.seed, policy=args.agents)
    dt = time.perf_counter() - t
    if args.json:
        print(json.dumps(games))
        return 0
    from ..stats.report import render_rows

    T = cfg.num_teams
    head = ["game", "hands", "winner"] + [f"team {t}" for t in range(T)]
    body = [[str(g), str(r["hands"]), str(r["winner"])]
            + [f"{x:d} ({c})" for x, c in zip(r["totals"], r["calls"])]
            for g, r in enumerate(games)]
    # one right-aligned column per team: the totals line up, whatever their widths
    print("each team's game total (its Nertz calls)")
    print("\n".join(render_rows(head, body, left=0)))
    who = ("random legal play" if set(names) == {"random"}
           else "play by " + ", ".join(f"seat {s} {n}" for s, n in enumerate(names)))
    print(fit(f"{args.games} game(s) of {who} in {dt:.2f} s (first call includes compile)"))
    return 0


def add_parser(sub) -> argparse.ArgumentParser:
    g = sub.add_parser("game", help="play whole games (R30) with random legal moves or core bots",
                       description="Play whole games to --target on the batched core, one table "
                                   "per game, all inside numba; print totals and winners. "
                                   "--agents seats the core's bots: random (uniform legal "
                                   "moves, the default), greedy, heuristic[:style=S,KNOB=V,...] "
                                   "(docs/heuristics.md).",
                       epilog="examples:\n"
                              "  nertz game --teams 3 --games 8 --target 100\n"
                              "  nertz game --teams 2 --agents heuristic:style=river-builder,"
                              "random",
                       formatter_class=HelpFormatter)
    add_rules(g)
    g.add_argument("--games", type=int_option("games"), default=4,
                   help=f"games to play in parallel, 1-{MAX_GAMES} (default 4)")
    g.add_argument("--agents", default="random", metavar="SPECS",
                   help="core bots: one spec for every seat, or one per seat in seat order, "
                        "comma separated (random, greedy, heuristic[:style=S,KNOB=V]; "
                        "default random)")
    g.add_argument("--json", action="store_true", help="print the results as JSON")
    g.set_defaults(func=cmd_game)
    return g
