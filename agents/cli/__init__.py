"""The `nertz` command (also `python -m agents`): small, with examples in every --help.

    nertz play --teams 4 --every 50 --seed 0     one hand, random legal moves, the table
                                                 printed every 50 ticks, then the scores
    nertz game --teams 3 --seed 1                whole games to target_score (R30), random
                                                 legal moves or core bots (--agents)
    nertz tournament                             the shipped bots, duplicate deals, a
                                                 leaderboard (agents/arena/tournament.py)
    nertz experiment spec.toml                   a treatment against a baseline over a grid
                                                 of tables, effects with 95% CIs and Holm
                                                 verdicts (agents/arena/experiment.py)

One module per command (play, game, tournament, experiment, replay, train), each with
`add_parser(subparsers)` and its command function; common.py holds what they share. A
command's ValueError is printed on one line with exit status 2.
"""
from __future__ import annotations

import sys

from . import experiment, game, play, replay, tournament, train
from .common import Parser, one_line

COMMANDS = (play, game, tournament, experiment, replay, train)


def build_parser() -> Parser:
    import argparse

    ap = Parser(
        prog="nertz",
        description="Nertz (Nerts, Pounce) rules engine and RL environments. Rules: RULES.md "
                    "ids R1-R31; decisions: docs/engine_contract.md.",
        epilog="examples:\n  nertz play --teams 4 --every 50\n  nertz game --teams 3 --games 5\n"
               "  nertz tournament --agents random,greedy,heuristic --deals 200 --teams 2 "
               "--seed 7 --out runs/t1\n"
               "  nertz experiment --treatment heuristic:withhold_stream=keep --baseline "
               "heuristic:withhold_stream=always --teams 2,4\n\nrun 'nertz COMMAND --help' for "
               "each command's options",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", metavar="COMMAND")
    for command in COMMANDS:
        command.add_parser(sub)
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
        print(f"nertz: error: {one_line(err)}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
