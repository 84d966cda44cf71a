"""The `nertz` command (also `python -m nertz_env`): small, with examples in every --help.

    nertz play --teams 4 --every 50 --seed 0     one hand, random legal moves, the table
                                                 printed every 50 ticks, then the scores
    nertz game --teams 3 --seed 1                whole games to target_score (R30)
"""
from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np

from .config import RulesConfig


def _config(args) -> RulesConfig:
    sizes = None
    if args.team_sizes:
        sizes = tuple(int(x) for x in args.team_sizes.split(","))
    return RulesConfig(num_teams=args.teams, team_sizes=sizes, river_size=args.river,
                       max_ticks=args.max_ticks, target_score=args.target)


def _add_rules(p: argparse.ArgumentParser) -> None:
    p.add_argument("--teams", type=int, default=4, help="teams at the table, 2-8 (default 4)")
    p.add_argument("--team-sizes", default="", metavar="1,2,..",
                   help="players per team, comma separated (default: all solo)")
    p.add_argument("--river", type=int, default=4, help="River columns, 4 or 5 (default 4)")
    p.add_argument("--max-ticks", type=int, default=RulesConfig.max_ticks,
                   help=f"a hand ends after this many ticks (default {RulesConfig.max_ticks})")
    p.add_argument("--target", type=int, default=150, help="game target score (default 150)")
    p.add_argument("--seed", type=int, default=0, help="seed of deals and moves (default 0)")


def cmd_play(args) -> int:
    from .table import Table

    cfg = _config(args)
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


def cmd_game(args) -> int:
    from .game import play_games

    cfg = _config(args)
    t = time.perf_counter()
    games = play_games(cfg, args.games, seed=args.seed)
    dt = time.perf_counter() - t
    if args.json:
        print(json.dumps(games))
        return 0
    print(f"{'game':>4s}  {'hands':>5s}  {'winner':>6s}  totals (Nertz calls)")
    for g, r in enumerate(games):
        totals = "  ".join(f"{x:4d} ({c})" for x, c in zip(r["totals"], r["calls"]))
        print(f"{g:4d}  {r['hands']:5d}  {str(r['winner']):>6s}  {totals}")
    print(f"{args.games} game(s) of random legal play in {dt:.2f} s (first call includes compile)")
    return 0


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        prog="nertz",
        description="Nertz (Nerts, Pounce) rules engine and RL environments. Rules: RULES.md "
                    "ids R1-R31; decisions: docs/engine_contract.md.",
        epilog="examples:\n  nertz play --teams 4 --every 50\n  nertz game --teams 3 --games 5",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", metavar="COMMAND")
    p = sub.add_parser("play", help="deal one hand and play it with random legal moves",
                       description="Deal one hand, play it with uniformly random legal moves "
                                   "(every seat, every tick), print the table every N ticks and "
                                   "the hand scores.",
                       epilog="example: nertz play --teams 4 --team-sizes 2,1,1,2 --every 100",
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    _add_rules(p)
    p.add_argument("--every", type=int, default=100, help="print the table every N ticks (default 100)")
    p.set_defaults(func=cmd_play)
    g = sub.add_parser("game", help="play whole games (R30) with random legal moves",
                       description="Play whole games to --target on the batched core, one table "
                                   "per game, all inside numba; print totals and winners.",
                       epilog="example: nertz game --teams 3 --games 8 --target 100",
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    _add_rules(g)
    g.add_argument("--games", type=int, default=4, help="games to play in parallel (default 4)")
    g.add_argument("--json", action="store_true", help="print the results as JSON")
    g.set_defaults(func=cmd_game)
    return ap


def main(argv=None) -> int:
    ap = build_parser()
    args = ap.parse_args(argv)
    if not getattr(args, "func", None):
        ap.print_help()
        return 0
    try:
        return args.func(args)
    except ValueError as err:          # bad option values: the config's own message
        print(f"nertz: error: {err}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
