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

One module per command (play, game, tournament, experiment, replay, train, exploit, probe,
judge, export,
...), each with
`add_parser(subparsers)` and its command function; common.py holds what they share.

Exit status (EXIT_STATUS, also in `nertz --help`): 0 done; 1 the system refused a file or
folder (an OSError: an input there it may not read, permission or I/O, or an output it cannot
write; printed on one line naming the path; a run's --out is then left as it was); 2 a bad
option, value or input file (a ValueError, one line: a path that is missing, a directory, not
a regular file, over its reader's cap or wrong inside; nertz_env/files/bounded.py read_fault
sorts a reader's OSError into the two); 130 interrupted (Ctrl-C; nothing half-written is
kept); 141 its output pipe was closed early (`nertz game | head`: no message).
"""
from __future__ import annotations

import sys

from . import experiment, exploit, export, game, judge, play, probe, replay, tournament, train
from .common import HelpFormatter, Parser, one_line

COMMANDS = (play, game, tournament, experiment, replay, train, exploit, probe, judge, export)
EXIT_STATUS = ("exit status: 0 done, 1 the system refused a file or folder (an input there "
               "that may not be read: permission, I/O; an output that cannot be written), 2 a "
               "bad option or value, or an input file that is missing, a directory, not a "
               "regular file, too large or wrong inside, 130 interrupted, 141 its output pipe "
               "closed early (| head); one line names the file or option; "
               "a run's --out folder is complete or left as it was")


def build_parser() -> Parser:
    import textwrap

    ap = Parser(
        prog="nertz",
        description="Nertz (Nerts, Pounce) rules engine and RL environments. Rules: "
                    "docs/rules.md (ids R1-R31); the table API (layouts, move text, card "
                    "names): docs/api.md; decisions: docs/engine_contract.md.",
        epilog="examples:\n  nertz play --teams 4 --every 50\n  nertz game --teams 3 --games 5\n"
               "  nertz tournament --agents random,greedy,heuristic --deals 200 --teams 2 "
               "--seed 7 --out runs/t1\n"
               "  nertz experiment --treatment heuristic:withhold_stream=keep --baseline "
               "\\\n      heuristic:withhold_stream=always --teams 2,4\n\n"
               "run 'nertz COMMAND --help' for "
               "each command's options\n\n" + textwrap.fill(EXIT_STATUS, 90),
        formatter_class=HelpFormatter)
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
    except BrokenPipeError:            # `nertz ... | head`: the reader left; say nothing more
        _quiet_stdout()
        return 141
    except OSError as err:             # the file system's refusal, naming the path
        print(f"nertz: error: {one_line(os_error_line(err))}", file=sys.stderr)
        return 1
    except KeyboardInterrupt as err:   # a command may say what it kept (its out_note)
        note = getattr(err, "out_note", None) or "no half-written --out folder is kept"
        print(f"nertz: interrupted ({note})", file=sys.stderr)
        return 130


def _quiet_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's own flush at exit does not fail again on
    the closed pipe (Python's documented recipe for SIGPIPE)."""
    import os
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):      # stdout not a real file (captured in tests)
        pass


def os_error_line(err: OSError) -> str:
    """'PATH: reason' (both paths of a rename) for an OSError."""
    paths = [str(p) for p in (err.filename, err.filename2) if p is not None]
    where = " -> ".join(repr(p) for p in paths) if paths else "a file"
    return f"{where}: {err.strerror or err}"


if __name__ == "__main__":
    sys.exit(main())
