"""What every `nertz` command shares: the parser class whose errors are one line, argparse
types that name the allowed range, the rules options and --rule, the Ray and --record
options, and the one-line error helpers. Never imports a command module.
"""
from __future__ import annotations

import argparse
import dataclasses
from pathlib import Path

from nertz_env.config import RulesConfig

# upper bounds of counts: far beyond any useful run, well inside every buffer's dtype
MAX_DEALS = 1_000_000
MAX_GAMES = 10_000              # each game keeps up to games.MAX_HANDS hand rows
MAX_GAME_HANDS = 10_000


class Parser(argparse.ArgumentParser):
    """argparse's errors as the CLI's other errors: one line on stderr, exit status 2."""

    def error(self, message):
        self.exit(2, f"nertz: error: {one_line(message)} (see '{self.prog} --help')\n")


def one_line(text) -> str:
    """A message's non-blank lines joined by '; ' (the CLI prints every error on one line)."""
    return "; ".join(line.strip() for line in str(text).splitlines() if line.strip())


def int_at_least(lo: int, hi: int | None = None, why: str = ""):
    """An argparse type: an int in lo..hi, else argparse's one-line error naming the option."""
    allowed = f"an int >= {lo}" if hi is None else f"an int from {lo} to {hi}"
    allowed += f" ({why})" if why else ""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not {allowed}") from None
        if value < lo or (hi is not None and value > hi):
            raise argparse.ArgumentTypeError(f"{text} is out of range: {allowed}")
        return value

    return parse


def positive_float(text: str) -> float:
    """An argparse type: a finite number > 0, else argparse's one-line error."""
    allowed = "a number > 0 (a 95% half-width in points per hand, e.g. 0.05)"
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not {allowed}") from None
    if not (value > 0 and value != float("inf")):
        raise argparse.ArgumentTypeError(f"{text} is out of range: {allowed}")
    return value


def int_list(option: str, text: str) -> tuple:
    """'1,2,1' -> (1, 2, 1); ValueError naming the option otherwise."""
    out = []
    for part in text.split(","):
        try:
            out.append(int(part))
        except ValueError:
            raise ValueError(f"{option} {text!r}: {part.strip()!r} is not an integer; write "
                             "integers separated by commas, e.g. 1,2,1") from None
    return tuple(out)


def csv_list(option: str, text: str, kind=str) -> list:
    """'2,4' -> [2, 4] (kind int) or ['hands', 'games']; empty parts skipped, none left is a
    ValueError naming the option."""
    out = []
    for part in filter(None, (x.strip() for x in text.split(","))):
        try:
            out.append(kind(part))
        except ValueError:
            raise ValueError(f"{option} {text!r}: {part!r} is not an integer") from None
    if not out:
        raise ValueError(f"{option} {text!r}: give at least one value")
    return out


def _mapping_value(text: str, bad) -> dict:
    """'flip:2,shift:3' (or flip=2) -> {'flip': 2, 'shift': 3}."""
    out, pairs = {}, "KIND:TICKS pairs separated by commas, e.g. flip:2,shift:3 (or none)"
    for part in text.split(","):
        name, sep, num = part.replace("=", ":").partition(":")
        try:
            out[name.strip()] = int(num)
        except ValueError:
            raise bad(pairs) from None
        if not sep:
            raise bad(pairs)
    return out


def rule_value(key: str, kind: str, text: str):
    """The value of --rule KEY=TEXT, read by the annotation `kind` of the RulesConfig field."""
    def bad(allowed):
        return ValueError(f"--rule {key}={text}: {key} takes {allowed}")

    low = text.strip().lower()
    if "None" in kind and low in ("none", "null"):
        return None
    if kind.startswith("bool"):
        if low not in ("true", "false"):
            raise bad("true or false")
        return low == "true"
    if kind.startswith("int"):
        try:
            return int(text)
        except ValueError:
            raise bad("an integer") from None
    if kind.startswith("float"):
        try:
            return float(text)
        except ValueError:
            raise bad("a number") from None
    if kind.startswith("tuple"):
        try:
            return int_list(f"--rule {key}", text)
        except ValueError:
            raise bad("integers separated by commas (or none)") from None
    if kind.startswith("Mapping"):
        return _mapping_value(text, bad)
    return text


def rules(items) -> dict:
    """--rule FIELD=VALUE items -> RulesConfig keyword arguments."""
    fields = {f.name: f for f in dataclasses.fields(RulesConfig)}
    settable = sorted(n for n, f in fields.items() if f.init)
    kw = {}
    for item in items:
        key, eq, value = item.partition("=")
        key = key.strip()
        if key in fields and not fields[key].init:
            raise ValueError(f"--rule {item!r}: {key} is derived from the other fields (num_teams, "
                             f"team_sizes), not set; settable fields: {', '.join(settable)}")
        if not eq or key not in fields:
            raise ValueError(f"--rule {item!r}: write FIELD=VALUE with a RulesConfig field: "
                             + ", ".join(settable))
        if key in kw:
            raise ValueError(f"--rule {item!r}: {key} is given twice")
        kind = fields[key].type if isinstance(fields[key].type, str) else str(fields[key].type)
        kw[key] = rule_value(key, kind, value)
    return kw


def config(args) -> RulesConfig:
    """The table's RulesConfig from the rules options (and, where a command has them, --speeds
    and --rule; --rule wins over the options that set the same field)."""
    kw = dict(num_teams=args.teams, river_size=args.river, max_ticks=args.max_ticks,
              target_score=args.target)
    if args.team_sizes:
        kw["team_sizes"] = int_list("--team-sizes", args.team_sizes)
    if getattr(args, "speeds", ""):
        kw["speeds"] = int_list("--speeds", args.speeds)
    given = rules(getattr(args, "rule", []))
    for key, option in (("speeds", "--speeds"), ("team_sizes", "--team-sizes")):
        if key in given and key in kw:
            raise ValueError(f"{key} is given twice: by {option} and by --rule {key}=...")
    kw.update(given)
    return RulesConfig(**kw)


def add_rules(p: argparse.ArgumentParser) -> None:
    """--teams, --team-sizes, --river, --max-ticks, --target and --seed."""
    p.add_argument("--teams", type=int, default=4, help="teams at the table, 2-8 (default 4)")
    p.add_argument("--team-sizes", default="", metavar="1,2,..",
                   help="players per team, comma separated (default: all solo)")
    p.add_argument("--river", type=int, default=4, help="River columns, 4 or 5 (default 4)")
    p.add_argument("--max-ticks", type=int, default=RulesConfig.max_ticks,
                   help=f"a hand ends after this many ticks (default {RulesConfig.max_ticks})")
    p.add_argument("--target", type=int, default=150, help="game target score (default 150)")
    p.add_argument("--seed", type=int_at_least(0), default=0,
                   help="seed of deals and moves, an int >= 0 (default 0)")


def add_speeds(p: argparse.ArgumentParser) -> None:
    """--speeds, as `nertz play` and `nertz tournament` read it."""
    p.add_argument("--speeds", default="", metavar="1,2,..",
                   help="ticks between moves per seat (R21; default: all 1)")


def add_ray(p: argparse.ArgumentParser) -> None:
    """--ray [ADDRESS] and --block-deals, the same for tournaments and experiments."""
    p.add_argument("--ray", nargs="?", const="", default=None, metavar="ADDRESS",
                   help="play the deals as Ray tasks in blocks (--block-deals), on the Ray "
                        "cluster at ADDRESS (e.g. auto, ray://host:10001) or, without one, a "
                        "local Ray instance; the same files as without --ray")
    p.add_argument("--block-deals", type=int_at_least(1, MAX_DEALS), default=None,
                   metavar="N", help="with --ray: deals per task (default: 1/8 of a run's "
                                     "deals)")


def add_record(p: argparse.ArgumentParser) -> None:
    """--record WHICH (tournaments and experiments)."""
    p.add_argument("--record", default=None, metavar="WHICH",
                   help="keep replays of some tables under --out DIR/replays: all, first:N "
                        "(the first N tables) or deals:D1,D2 (every seating of those deals); "
                        "watch one with 'nertz replay FILE'")


def check_record(args) -> None:
    """--record parsed, and given --out, before anything is played."""
    from ..arena.tournament import parse_record
    parse_record(args.record)
    if args.record is not None and not args.out:
        raise ValueError("--record needs --out DIR: the replays are written to DIR/replays")


def make_out_dir(out: str) -> None:
    """Create --out before playing, so a bad folder fails at once (a one-line ValueError)."""
    if not out:
        return
    try:
        Path(out).mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise ValueError(f"--out {out!r}: cannot create that folder "
                         f"({err.strerror or err})") from None


def finish_run(res, hands: int, args, digits: int) -> int:
    """The end of a match command: the wall time and rate, then --out's files (res.write)."""
    rate = hands / res.elapsed_s if res.elapsed_s > 0 else float("nan")
    print(f"\nplayed in {res.elapsed_s:.{digits}f} s ({rate:,.0f} hands/s, including any numba "
          "compile)")
    if args.out:
        paths = res.write(args.out, plot=not args.no_plot)
        print("wrote " + ", ".join(str(p) for p in paths))
    return 0


def wrote(out, write, *args, **kw) -> None:
    """write(*args, **kw), then 'wrote PATH'; an OSError becomes a one-line ValueError."""
    try:
        print(f"wrote {write(*args, **kw)}")
    except OSError as err:
        raise ValueError(f"{out!r}: cannot write it ({err.strerror or err})") from None
