"""`nertz tournament`: a leaderboard of agents over duplicate deals (agents/arena/
plays it; this module reads the options and prints the result)."""
from __future__ import annotations

import argparse

from ..registry import KINDS

from .common import (HelpFormatter, add_out, add_ray, add_record, add_rules, add_speeds,
                     check_record, config, finish_run, fit, int_option, out_folder,
                     positive_float, refuse_alone, say_written)

DEFAULT_AGENTS = ("random,greedy,heuristic,heuristic:style=lake-rush,"
                  "heuristic:style=river-builder,heuristic:style=cautious")
DEFAULT_DEALS = 200
FILES = "leaderboard.csv, pairs.csv, results.json, hands.csv and leaderboard.png"


def _check_precision(args, deals: int) -> None:
    if args.max_deals is None:
        return
    if args.precision is None:
        raise ValueError(f"--max-deals {args.max_deals} caps a --precision run: give "
                         f"--precision too")
    if args.max_deals < deals:
        raise ValueError(f"--max-deals {args.max_deals} is below --deals {deals}: the "
                         f"cap must be at least the first block")


def _check_games_only(args) -> None:
    """--max-game-hands and a target score mean nothing in hands mode."""
    games = args.mode == "games"
    target_rule = any(r.partition("=")[0].strip() == "target_score" for r in args.rule)
    refuse_alone(args, [
        ("--max-game-hands", args.max_game_hands is not None, "--mode games", games),
        ("--target", args.target is not None, "--mode games (a hand has no target)", games),
        ("--rule target_score", target_rule, "--mode games (a hand has no target)", games)])


def cmd_tournament(args) -> int:
    from ..arena.tournament import make_lineups, run_tournament
    from ..registry import make_agent
    from ..specs import split_specs

    cfg = config(args)                        # every value is checked before anything runs
    deals = DEFAULT_DEALS if args.deals is None else args.deals
    _check_precision(args, deals)
    _check_games_only(args)
    check_record(args)
    agents = [make_agent(s, seed=args.seed) for s in split_specs(args.agents)]
    make_lineups(len(agents), cfg.num_teams, args.format)
    ray = args.ray is not None
    with out_folder(args.out, args.overwrite, "tournament") as staging:
        res = run_tournament(split_specs(args.agents) if ray else agents, config=cfg,
                             deals=deals, seed=args.seed, mode=args.mode, format=args.format,
                             progress=not args.quiet, max_game_hands=args.max_game_hands or 40,
                             precision=args.precision, max_deals=args.max_deals,
                             executor="ray" if ray else "local",
                             ray_address=args.ray or None, block_deals=args.block_deals,
                             record=args.record)
        n_seat = sorted({len(s) for s in res.seatings})
        tables = len(res.records)
        played = (f"{tables} games ({res.hands_played} hands)" if res.mode == "games"
                  else f"{res.hands_played} hands")
        print(fit(f"{len(res.names)} agents, {cfg.num_teams} teams, {res.format}, "
                  f"{len(res.lineups)} lineup(s) x {res.deals} deals x "
                  f"{'/'.join(map(str, n_seat))} seatings = {played}, seed {res.seed}"))
        print(res.table())
        if res.precision is not None:
            print(fit("\n" + res.precision_line()))
        paths = finish_run(res, res.hands_played, args, 2, staging)
    return say_written(args, paths, staging, FILES)


def add_parser(sub) -> argparse.ArgumentParser:
    t = sub.add_parser(
        "tournament", help="a leaderboard of bots over duplicate deals",
        description="Play the named agents against each other on duplicate deals: every deal is "
                    "replayed at a balanced set of distinct seatings (every agent at every team "
                    "position, every pair of agents at every pair of positions equally often; "
                    "agents/arena/seatings.py), so the cards' luck cancels. Prints a leaderboard "
                    "(mean points per hand with 95% CI, win share, Nertz-call rate, "
                    "Plackett-Luce rating) and the paired point differences with 95% CIs; "
                    "--out writes leaderboard.csv, pairs.csv, results.json, hands.csv and "
                    "leaderboard.png. Same seed, same files. Agents: "
                    "random, greedy, heuristic[:style=S,KNOB=V,...] (styles balanced, lake-rush, "
                    "river-builder, cautious; knobs in docs/heuristics.md), "
                    "ppo:PATH.npz (a model in the safe format, nertz export: runs no code) or "
                    "ppo:PATH.zip[,deterministic=true|false][,device=cpu|cuda|cuda:N|auto]"
                    "[,trust=yes] (a saved MaskablePPO or PPO zip, read without unpickling; "
                    "trust=yes runs code stored in the file; the options follow the path after "
                    "commas), learned[:model=M][,teams=T][,deterministic=..] (the shipped "
                    "models: plain learned picks the member for the table's rules, "
                    "docs/models.md), rllib:PATH[,policy=ID][,deterministic=true|false] "
                    "(an RLlib checkpoint: loading one from someone else can run code; needs "
                    "ray[rllib]), pair:NERTZ&STREAM (a two-player team of two agents by role: "
                    "the first plays whichever seat holds the Nertz pile, the second the "
                    "Stream; quote it in a shell; agents/base.py Pair), "
                    "search[:worlds=W,horizon=N,...] (decision-time search over a core bot, "
                    "river-builder by default: docs/search.md).",
        epilog="examples:\n"
               "  nertz tournament                      # the shipped bots, 4 teams\n"
               "  nertz tournament --agents random,greedy,heuristic --deals 200 --teams 2 "
               "--seed 7 --out runs/t1\n"
               "  nertz tournament --agents heuristic,heuristic:withhold_stream=never "
               "--teams 2 --deals 2000\n"
               "  nertz tournament --agents greedy,heuristic --teams 3 --speeds 1,2,1 "
               "\\\n      --rule river_size=5 --mode games\n"
               "  nertz tournament --agents greedy,ppo:runs/m.zip,deterministic=false --teams 2\n"
               "  nertz tournament --agents greedy,heuristic --teams 2 --precision 0.5 "
               "--max-deals 20000\n"
               "      # deals until every pair is within +-0.5",
        formatter_class=HelpFormatter)
    t.add_argument("--agents", default=DEFAULT_AGENTS, metavar="SPECS",
                   help="comma-separated agent specs of the kinds " + ", ".join(KINDS)
                        + " (above; default: every shipped core bot)")
    t.add_argument("--deals", type=int_option("deals"),
                   default=None, metavar="N",
                   help=f"deals per lineup, 2 or more (default {DEFAULT_DEALS}); each is played "
                        "at every seating of the balanced design: T(T-1) seatings for T "
                        "distinct agents at T teams (60 at 6 teams), see "
                        "agents/arena/seatings.py")
    t.add_argument("--precision", type=positive_float, default=None, metavar="H",
                   help="play deals in blocks (--deals first, then more as the current "
                        "intervals project) until every paired difference's 95 percent "
                        "interval has a half-width of at most H points per hand, or --max-deals "
                        "is reached; a line (and results.json) names the pairs that were not")
    t.add_argument("--max-deals", type=int_option("max_deals"), default=None, metavar="N",
                   help="with --precision: at most N deals per lineup (default 100 x --deals, "
                        "or fewer when that many would not fit in memory); the deals are the "
                        "same as a plain run of that many deals")
    add_rules(t)
    add_speeds(t)
    t.add_argument("--rule", action="append", default=[], metavar="FIELD=VALUE",
                   help="any other RulesConfig field, repeatable: true/false, integers, "
                        "comma-separated integers (speeds, team_sizes), KIND:TICKS pairs "
                        "(move_ticks=flip:2,shift:3) or none (e.g. --rule stacking=false)")
    t.add_argument("--mode", choices=("hands", "games"), default="hands",
                   help="a deal is one hand, or a whole game to --target (default hands)")
    t.add_argument("--max-game-hands", type=int_option("max_game_hands"), default=None,
                   metavar="N", help="with --mode games: stop a game after N hands (default "
                                     "40)")
    t.add_argument("--format", choices=("auto", "round-robin", "all-play-all"), default="auto",
                   help="round-robin: every set of --teams agents; all-play-all: all agents at "
                        "each table (default auto: round-robin when there are enough agents)")
    add_out(t, FILES)
    t.add_argument("--no-plot", action="store_true", help="with --out: skip leaderboard.png")
    add_ray(t)
    add_record(t)
    t.add_argument("--quiet", action="store_true",
                   help="no progress bar, and no first-run notice (on a fresh install numba "
                        "first compiles the kernels; without --quiet a line on stderr says "
                        "so)")
    t.set_defaults(func=cmd_tournament)
    return t
