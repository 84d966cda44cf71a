"""`nertz experiment`: a treatment against a baseline over a grid of tables, effects with 95%
intervals and Holm verdicts (agents/arena/experiment.py runs it; this module turns the options
into the spec's keys, which replace a spec file's)."""
from __future__ import annotations

import argparse
import dataclasses

from .common import (MAX_SEED, HelpFormatter, add_out, add_ray, add_record, check_record, csv_list,
                     finish_run, fit, int_option, out_folder, positive_float, rules, say_written)

FILES = "effects.csv, effects.md, experiment.json and forest.png"


def _treatments(items) -> dict:
    """--treatment [NAME=]SPEC items -> {label: spec}; without a plain NAME= the spec labels
    itself (heuristic:flip=3 is a spec, not NAME=SPEC)."""
    out = {}
    for item in items:
        name, eq, spec = item.partition("=")
        if eq and name.strip().replace("-", "_").isidentifier() and ":" not in name:
            out[name.strip()] = spec.strip()
        else:
            out[item.strip()] = item.strip()
    return out


def precision_or_off(text: str):
    """--precision H (a number > 0) or off: no precision target, a spec file's included."""
    return "off" if text.strip().lower() == "off" else positive_float(text)


def overrides(args) -> dict:
    """The spec keys the options set (None: not given, the spec file's or the default)."""
    from ..specs import split_lineup, split_specs

    off = args.precision == "off"
    if off and args.max_deals is not None:
        raise ValueError("--max-deals caps a precision run; --precision off plays exactly "
                         "--deals N per cell: drop one of them")
    over = {"name": args.name, "seed": args.seed, "deals": args.deals,
            "precision": None if off else args.precision, "max_deals": args.max_deals,
            "baseline": args.baseline, "max_game_hands": args.max_game_hands}
    if args.treatment:
        over["treatments"] = _treatments(args.treatment)
    if args.opponents:
        over["opponents"] = [o if len(split_lineup(o)) == 1 else split_lineup(o)
                             for item in args.opponents for o in split_specs(item)]
    if args.teams:
        over["teams"] = csv_list("--teams", args.teams, int)
    if args.speeds:
        over["speeds"] = list(args.speeds)
    if args.modes:
        over["modes"] = csv_list("--modes", args.modes)
    if args.outcomes:
        over["outcomes"] = csv_list("--outcomes", args.outcomes)
    if args.rule:
        over["rules"] = {"custom": rules(args.rule)}
    return over


def cmd_experiment(args) -> int:
    from ..arena.experiment import load_spec, main_table, run_experiment, spec_from_dict

    over = overrides(args)
    if args.spec:
        spec = load_spec(args.spec, **over)
        if args.precision == "off":               # the file's precision and cap dropped
            spec = dataclasses.replace(spec, precision=None, max_deals=None)
    else:
        if args.baseline is None or not args.treatment:
            raise ValueError("name a spec file, or at least --treatment and --baseline "
                             "(see 'nertz experiment --help')")
        spec = spec_from_dict({k: v for k, v in over.items() if v is not None},
                              where="nertz experiment")
    check_record(args)
    with out_folder(args.out, args.overwrite, "experiment") as staging:
        res = run_experiment(spec, progress=not args.quiet,
                             executor="local" if args.ray is None else "ray",
                             ray_address=args.ray or None, block_deals=args.block_deals,
                             record=args.record)
        cells = len(res.cells)
        hands = sum(c["hands"] for c in res.cells)
        print(fit(f"experiment {spec.name!r}: {len(spec.treatments)} treatment(s) against "
                  f"{spec.baseline!r}, {cells} cell(s), {hands} hands, seed {spec.seed}"))
        print(fit(main_table(res)))
        paths = finish_run(res, hands, args, 1, staging)
    return say_written(args, paths, staging, FILES)


def add_parser(sub) -> argparse.ArgumentParser:
    x = sub.add_parser(
        "experiment", help="a strategy question: a treatment against a baseline, with CIs",
        description="Answer a strategy question with evidence: the treatment agent takes the "
                    "place of the baseline agent, on the same duplicate deals with the same "
                    "opponents, in every cell of a grid (opponents x --teams x --speeds x "
                    "rules x --modes). The unit is the deal: every effect is the mean over "
                    "deals of (treatment - baseline) with a 95% interval; 'relative %' is "
                    "the effect as a share of the baseline's points (or wins); Holm verdicts "
                    "cover every row. --out writes effects.csv, effects.md, experiment.json "
                    "and forest.png; same spec and seed, same files. A spec file (TOML) holds "
                    "the same keys as the options (agents/arena/experiment.py shows one); "
                    "options given on the command line replace the file's.",
        epilog="examples:\n"
               "  nertz experiment --treatment keep=heuristic:withhold_stream=keep "
               "\\\n      --baseline heuristic:withhold_stream=always --teams 2,4 --deals 2000\n"
               "  nertz experiment docs/experiments/withholding.toml --out runs/w\n"
               "  nertz experiment --treatment heuristic --baseline greedy --opponents half "
               "\\\n      --opponents random --speeds even --speeds mixed --modes hands,games\n\n"
               "opponents: 'baseline' (the treatment as one seat among baseline bots), an "
               "agent spec or specs joined by '+' (one seat among those bots), 'half' "
               "(treatment and baseline alternate round the table).\n"
               "speeds: 'even' (every seat moves every tick), 'mixed' (seats alternate "
               "periods 1 and 2, R21), one period per seat, e.g. 1,2,1,3, or 'focal-fast' / "
               "'focal-slow' (the focal seat's team at period 1 among period-2 seats, or the "
               "reverse), or 'focal:P/Q' (the focal team at period P, the others at Q).",
        formatter_class=HelpFormatter)
    x.add_argument("spec", nargs="?", default=None, metavar="SPEC.toml",
                   help="an experiment spec file (optional when --treatment and --baseline "
                        "are given)")
    x.add_argument("--treatment", action="append", default=[], metavar="[NAME=]SPEC",
                   help="an agent spec to test, repeatable (NAME= labels it)")
    x.add_argument("--baseline", default=None, metavar="SPEC",
                   help="the agent spec the treatments replace")
    x.add_argument("--opponents", action="append", default=[], metavar="WHO",
                   help="repeatable: baseline (default), half, or agent specs (A+B mixes)")
    x.add_argument("--teams", default="", metavar="2,3,..",
                   help="table sizes, comma separated (default 2)")
    x.add_argument("--speeds", action="append", default=[], metavar="MIX",
                   help="repeatable: even (default), mixed, focal-fast, focal-slow, focal:P/Q, or "
                        "P1,P2,... per seat")
    x.add_argument("--rule", action="append", default=[], metavar="FIELD=VALUE",
                   help="a RulesConfig field for every table, repeatable (a spec file can "
                        "name several rules variants)")
    x.add_argument("--modes", default="", metavar="hands,games",
                   help="hands (a deal is one hand; default) and/or games (a whole game to "
                        "target_score)")
    x.add_argument("--outcomes", default="", metavar="points,relative,win",
                   help="outcomes to report, the first is the headline (default all three)")
    x.add_argument("--deals", type=int_option("deals"),
                   default=None, metavar="N",
                   help="deals per cell (default 1000); with a precision target (--precision "
                        "or the spec file's precision) the first block, the least a cell "
                        "plays: cells play on past it until the target or --max-deals (the "
                        "run says so in one line first)")
    x.add_argument("--precision", type=precision_or_off, default=None, metavar="H",
                   help="play on until every headline effect's 95 percent interval has a "
                        "half-width <= H (or --max-deals); off: no target, even where the "
                        "spec file sets one (exactly --deals per cell)")
    x.add_argument("--max-deals", type=int_option("max_deals"), default=None, metavar="N",
                   help="with --precision: at most N deals per cell (default 100 x --deals, "
                        "or fewer when that many would not fit in memory)")
    x.add_argument("--max-game-hands", type=int_option("max_game_hands"), default=None,
                   metavar="N", help="with games in --modes: stop a game after N hands "
                                     "(default 40)")
    x.add_argument("--seed", type=int_option("seed"), default=None,
                   help=f"seed of the deals, an int from 0 to {MAX_SEED} (default 0)")
    x.add_argument("--name", default=None, help="a label for the report and plot")
    add_out(x, FILES)
    x.add_argument("--no-plot", action="store_true", help="with --out: skip forest.png")
    add_ray(x)
    add_record(x)
    x.add_argument("--quiet", action="store_true", help="no progress bar")
    x.set_defaults(func=cmd_experiment)
    return x
