"""`nertz probe AGENT...`: what agents do at named decision classes (agents/judging/probe.py
measures it; this module reads the options and prints the table)."""
from __future__ import annotations

import argparse

from ..arena.limits import LIMITS
from .common import (HelpFormatter, add_out, add_rules, config, fit, int_option, out_folder,
                     refuse_alone, say_written)

FILES = "probe.json and probe.md"
DESCRIPTION = """\
What does an agent do when the Stream card could go to the Lake? Each AGENT plays seat 0 of
--deals tables, one hand each, the same deals for every agent, with --opponents at every
other seat. At each of its decisions the position is sorted into a class by what the seat
sees, and its move into a response:

  stream-lake       waste>lake is legal                        lake, river, flip, wait, other
  stream-lake-fits  ... the Nertz top builds on that card, and it cannot go to the River
  stream-lake-keep  ... the Nertz top builds on it, and it can go to the River
  river-lake        a River top could go to the Lake (and no Stream card)    lake, other

Rates are responses per decision of the class, with 95% intervals over deals (the deal is
the independent unit: a hand's decisions are not independent).

Every deal of an agent is played at once, so --deals is bounded by memory (about 64 KiB a
deal: agents/arena/limits.py). A progress bar on stderr counts the hands (deals x agents);
--quiet hides it."""
EPILOG = """\
examples:
  nertz probe learned heuristic:style=river-builder --teams 2 --deals 300
  nertz probe learned heuristic --teams 4 --opponents heuristic --out runs/p1
  nertz probe ppo:runs/g1/final.npz ppo:runs/g1/final.npz,constraint=never-withhold"""


def add_parser(sub) -> argparse.ArgumentParser:
    p = sub.add_parser("probe", help="what agents do at named decisions (Stream card to the "
                       "Lake...)", description=DESCRIPTION, epilog=EPILOG,
                       formatter_class=HelpFormatter)
    p.add_argument("agents", metavar="AGENT", nargs="+",
                   help="agent specs (learned, ppo:PATH, heuristic:style=..., greedy, random)")
    p.add_argument("--deals", type=int_option("probe_deals"), default=200,
                   help="deals (tables, one hand each) per agent, an int from 2 to "
                        f"{LIMITS['probe_deals'].hi:,} (default: 200)")
    p.add_argument("--opponents", default="heuristic:style=river-builder", metavar="SPEC",
                   help="the core bot at every other seat (default: heuristic:style=river-builder)")
    add_rules(p, teams=2, target=False)      # one hand per deal: no game target
    add_out(p, FILES)
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_probe)
    return p


def cmd_probe(args) -> int:
    from ..judging.probe import check_probe, probe
    refuse_alone(args, [("--overwrite", args.overwrite, "--out DIR", bool(args.out))])
    cfg = config(args)
    names = {}
    for spec in args.agents:
        names[spec if spec not in names else f"{spec} ({len(names)})"] = spec
    options = {"deals": "--deals", "seed": "--seed", "opponents": "--opponents",
               "agent": "AGENT"}
    check_probe(names, cfg, args.deals, args.seed, args.opponents, options)  # before the folder
    with out_folder(args.out, args.overwrite, "probe") as staging:
        res = probe(names, cfg, deals=args.deals, seed=args.seed, opponents=args.opponents,
                    progress=not args.quiet, names=options)
        print(fit(f"{args.deals} deals, seed {args.seed}, {cfg.num_teams} teams, opponents "
                  f"{args.opponents}; rates per decision, 95% intervals over deals"))
        print(res.table())
        paths = []
        if staging is not None:
            from nertz_env.files import write_text
            for name, text in (("probe.json", res.to_json()), ("probe.md", res.table() + "\n")):
                write_text(staging / name, text)
                paths.append(staging / name)
    return say_written(args, paths, staging, FILES)


__all__ = ["add_parser", "cmd_probe"]
