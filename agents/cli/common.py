"""What every `nertz` command shares: the parser class whose errors are one line, argparse
types that name the allowed range (agents/arena/limits.py, the one table of limits that
experiment specs use too), the rules options and --rule, the Ray, --record and --out
options, the run folder (out_folder), the refusal of options given without the option
they need, and the one-line error helpers. Never imports a command module.
"""
from __future__ import annotations

import argparse
import dataclasses
from contextlib import contextmanager

from nertz_env.config import RulesConfig

from ..arena.limits import LIMITS, MAX_DEALS, MAX_GAME_HANDS, MAX_GAMES, MAX_SEED  # noqa: F401
from ..arena.outdir import final_paths, run_folder

WIDTH = 100                     # the widest line the CLI prints (report.WIDTH)


class Parser(argparse.ArgumentParser):
    """argparse's errors as the CLI's other errors: one line on stderr, exit status 2."""

    def error(self, message):
        self.exit(2, f"nertz: error: {one_line(message)} (see '{self.prog} --help')\n")


class HelpFormatter(argparse.RawDescriptionHelpFormatter):
    """Descriptions and epilogs as written (examples stay one line each, to copy), but prose
    lines (not indented) wrapped to WIDTH columns."""

    def _fill_text(self, text, width, indent):
        import textwrap

        out = []
        for line in text.splitlines():
            if len(indent + line) <= WIDTH or line[:1].isspace():
                out.append(indent + line)
            else:
                out += textwrap.wrap(line, WIDTH, initial_indent=indent, subsequent_indent=indent,
                                     break_on_hyphens=False, break_long_words=False)
        return "\n".join(out)


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


def int_option(key: str):
    """The argparse type of a count in limits.LIMITS (the words a spec's refusal uses)."""
    lim = LIMITS[key]
    return int_at_least(lim.lo, lim.hi, lim.why)


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
    kw = dict(num_teams=args.teams, river_size=args.river, max_ticks=args.max_ticks)
    if getattr(args, "target", None) is not None:
        kw["target_score"] = args.target
    if args.team_sizes:
        kw["team_sizes"] = int_list("--team-sizes", args.team_sizes)
    if getattr(args, "speeds", ""):
        kw["speeds"] = int_list("--speeds", args.speeds)
    items = getattr(args, "rule", [])
    given = rules(items)
    for key, option in (("speeds", "--speeds"), ("team_sizes", "--team-sizes")):
        if key in given and key in kw:
            raise ValueError(f"{key} is given twice: by {option} and by --rule {key}=...")
    shown = {key: f"{OPTION_OF[key]} {getattr(args, OPTION_OF[key][2:].replace('-', '_'))}"
             for key in kw}
    shown.update({item.partition("=")[0].strip(): f"--rule {item.strip()}" for item in items})
    kw.update(given)
    try:
        return RulesConfig(**kw)
    except ValueError as err:
        raise ValueError(option_error(str(err), shown)) from None


OPTION_OF = {"num_teams": "--teams", "team_sizes": "--team-sizes", "river_size": "--river",
             "max_ticks": "--max-ticks", "target_score": "--target", "speeds": "--speeds"}
"""The RulesConfig field each rules option sets (config)."""


def option_error(message: str, shown: dict) -> str:
    """RulesConfig's refusal ('RulesConfig.FIELD=VALUE is invalid: ALLOWED') in the words of
    the command line: the option as given (shown[FIELD], e.g. '--speeds 0,1' or '--rule
    num_teams=9'; an option's field named after it) and what it allows, with no Python None
    in it."""
    import re
    m = re.match(r"RulesConfig\.(\w+)=.*? is invalid: (.*)$", message, re.S)
    if not m or m.group(1) not in shown:
        return message
    key, allowed = m.groups()
    rule = shown[key].startswith("--rule")
    seats = re.match(r"None or (\d+) periods \(ints from 1 to 100\), one per seat", allowed)
    if seats:
        n = int(seats.group(1))
        allowed = (f"one period per seat, {n} ints from 1 to 100 separated by commas (R21; "
                   f"{n} seats at this table), or " + ("none" if rule else "leave --speeds out")
                   + " for every seat at period 1")
    elif allowed.startswith("None or "):
        allowed = allowed[8:] + (", or none" if rule else "")
    teams = re.search(r"[(](\d+) entries", allowed)
    if key == "team_sizes" and teams:
        allowed += f" (the table has {teams.group(1)} teams: {shown.get('num_teams', '--teams')})"
    field = "" if rule else f" (the rules field {key}, docs/rules.md)"
    return f"{shown[key]}{field}: {allowed}"


def add_rules(p: argparse.ArgumentParser, teams: int = 4, target: bool = True) -> None:
    """--teams (default `teams`), --team-sizes, --river, --max-ticks, --target (not where a
    command plays single hands only: target=False) and --seed."""
    p.add_argument("--teams", type=int, default=teams,
                   help=f"teams at the table, 2-8 (default {teams})")
    p.add_argument("--team-sizes", default="", metavar="1,2,..",
                   help="players per team, comma separated (default: all solo)")
    p.add_argument("--river", type=int, default=4, help="River columns, 4 or 5 (default 4)")
    p.add_argument("--max-ticks", type=int, default=RulesConfig.max_ticks,
                   help=f"a hand ends after this many ticks (default {RulesConfig.max_ticks})")
    if target:
        p.add_argument("--target", type=int, default=None,
                       help=f"game target score (R30; default {RulesConfig.target_score})")
    p.add_argument("--seed", type=int_option("seed"), default=0,
                   help=f"seed of deals and moves, an int from 0 to {MAX_SEED} (default 0)")


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
    p.add_argument("--block-deals", type=int_option("block_deals"), default=None,
                   metavar="N", help="with --ray: deals per task (default: 1/8 of a run's "
                                     "deals)")


def add_record(p: argparse.ArgumentParser) -> None:
    """--record WHICH (tournaments and experiments)."""
    p.add_argument("--record", default=None, metavar="WHICH",
                   help="keep replays of some tables under --out DIR/replays: all, first:N "
                        "(the first N tables) or deals:D1,D2 (every seating of those deals); "
                        "watch one with 'nertz replay FILE'")


def check_record(args) -> None:
    """--record parsed, and every option that needs another given with it (out_needs),
    before anything is played."""
    from ..arena.records import parse_record
    parse_record(args.record)
    refuse_alone(args, out_needs(args))


def add_out(p: argparse.ArgumentParser, files: str) -> None:
    """--out DIR and --overwrite: a run's files (`files` names them) in a fresh folder."""
    p.add_argument("--out", default="", metavar="DIR",
                   help=f"write {files} into DIR, a new or empty folder (without --out nothing "
                        "is written); all of them or none: they are written to DIR.partial and "
                        "renamed to DIR at the end")
    p.add_argument("--overwrite", action="store_true",
                   help="with --out: replace an earlier nertz run in DIR (refused for a folder "
                        "holding files nertz did not write there)")


@contextmanager
def out_folder(out, overwrite: bool = False, command: str = "", option: str = "--out"):
    """The run folder of a command (agents/arena/outdir.py run_folder, named `option` in
    refusals): yields the staging folder to write into (None when `out` is empty), renamed
    to `out` when the block ends normally, removed on any error or interrupt. Refuses, as a
    one-line ValueError before anything runs: a non-empty `out` without overwrite, a folder
    that is no nertz run with it, a folder another run is writing. Use it around the whole
    run, so a concurrent run is refused at its start."""
    with run_folder(out, overwrite=overwrite, command=command, option=option) as staging:
        yield staging


def refuse_alone(args, needs) -> None:
    """needs: (option, given, other, present) tuples: `option` (given: it was) means nothing
    without `other` (present: it is), a one-line ValueError then."""
    for option, given, other, present in needs:
        if given and not present:
            raise ValueError(f"{option} only means something with {other}: give {other} too, "
                             f"or drop {option}")


def out_needs(args) -> list:
    """The refuse_alone rows of --out's companions (--overwrite, --no-plot, --record) and of
    --block-deals (with --ray)."""
    out = bool(getattr(args, "out", ""))
    return [("--overwrite", getattr(args, "overwrite", False), "--out DIR", out),
            ("--no-plot", getattr(args, "no_plot", False), "--out DIR", out),
            ("--record", getattr(args, "record", None) is not None, "--out DIR (the replays "
             "are written to DIR/replays)", out),
            ("--block-deals", getattr(args, "block_deals", None) is not None, "--ray",
             getattr(args, "ray", None) is not None)]


def finish_run(res, hands: int, args, digits: int, staging=None) -> list:
    """The end of a match command: the wall time and rate, then the files (res.write_into)
    in the run folder `staging` (none without --out); returns their paths there."""
    rate = hands / res.elapsed_s if res.elapsed_s > 0 else float("nan")
    print(f"\nplayed in {res.elapsed_s:.{digits}f} s ({rate:,.0f} hands/s, including any numba "
          "compile)")
    return res.write_into(staging, plot=not args.no_plot) if staging is not None else []


def say_written(args, paths, staging, files: str) -> int:
    """After the run folder is renamed: which files are where, or that none were written."""
    if args.out:
        print(fit("wrote " + ", ".join(str(p) for p in final_paths(paths, staging, args.out))))
    else:
        print(fit(f"no files written (give --out DIR to keep {files})"))
    return 0


def fit(text: str) -> str:
    """text with lines over WIDTH wrapped at spaces (report.fit_lines)."""
    from ..stats.report import fit_lines
    return fit_lines(text, WIDTH)


def wrote(out, write, *args, **kw) -> None:
    """write(*args, **kw), then 'wrote PATH'; an OSError is re-raised naming `out` (not a
    writer's temporary file): exit status 1, as every I/O error."""
    try:
        print(f"wrote {write(*args, **kw)}")
    except (OSError, ValueError) as err:
        # the replay writers (nertz_env/replay) turn the file system's refusal into a
        # ValueError, raised while handling it: still I/O, so exit 1 (agents/cli main)
        cause = err if isinstance(err, OSError) else err.__context__
        if not isinstance(cause, OSError):
            raise
        raise OSError(cause.errno, f"cannot write it ({cause.strerror or cause})",
                      str(out)) from None
