"""Does withholding Stream cards from the Lake pay off, at which table size, at which speed?

A paired-deal experiment on the tournament runner (agents/tournament.py): the `balanced`
heuristic against itself with one knob changed, `withhold_stream` (docs/heuristics.md):
`always` (play Stream cards to the Lake when the score says so), `when-useful` (keep a Stream
card that can take the Nertz card; the balanced default), `never` (no Stream card to the Lake
unless nothing but Wait is left). At each table size the two variants alternate round the
table (A, B, A, B, ...; all-play-all), every deal is replayed at every seating of the balanced design (agents/tournament.py), and the paired
difference over deals, with its 95% t-interval, is the answer. Each table size is played again
with every other seat twice as slow (R21), the variants rotating through the slow seats (skip
with `--no-speeds`).

    python -m benchmarks.experiments.stream_withholding               # 2, 3, 4, 6 teams
    python -m benchmarks.experiments.stream_withholding --deals 2000 --teams 2,4 --out runs/sw

Prints a table (one row per table size, speed and comparison) and one JSON line; --out also
writes it as CSV and JSON.
"""
from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from agents.report import write_csv, write_json
from agents.stats import orient_pairs
from agents.tournament import run_tournament
from nertz_env import RulesConfig

VARIANTS = {"always": "heuristic:withhold_stream=always",
            "when-useful": "heuristic:withhold_stream=when-useful",
            "never": "heuristic:withhold_stream=never"}
COMPARISONS = (("when-useful", "always"), ("never", "always"))


def run(teams_list, deals, seed, speeds, progress=True):
    rows = []
    for teams in teams_list:
        for slow in ((False, True) if speeds else (False,)):
            cfg = RulesConfig(num_teams=teams,
                              speeds=tuple(1 + (s % 2) for s in range(teams)) if slow else None)
            for a, b in COMPARISONS:
                res = run_tournament([VARIANTS[a], VARIANTS[b]], config=cfg, deals=deals,
                                     seed=seed, format="all-play-all", progress=progress)
                (pair,) = orient_pairs(res.pairs, [VARIANTS[a], VARIANTS[b]])   # variant - baseline
                rows.append({"teams": teams, "speeds": "1,2,.." if slow else "all 1",
                             "variant": a, "baseline": b, "deals": deals,
                             "hands": res.hands_played, "diff": pair["diff"],
                             "ci_low": pair["ci_low"], "ci_high": pair["ci_high"],
                             "significant": pair["significant"]})
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.experiments.stream_withholding",
                                 description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--teams", default="2,3,4,6", help="table sizes, comma separated")
    ap.add_argument("--deals", type=int, default=1000, help="deals per table size (default 1000)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-speeds", action="store_true", help="skip the half-speed seats runs")
    ap.add_argument("--out", default="", help="write stream_withholding.csv/.json here")
    args = ap.parse_args(argv)
    teams = [int(x) for x in args.teams.split(",")]
    rows = run(teams, args.deals, args.seed, not args.no_speeds)
    print(f"{'teams':>5}  {'speeds':>7}  {'variant':>11} - {'baseline':<8}  {'hands':>7}  "
          f"{'diff':>6}  95% CI")
    for r in rows:
        star = " *" if r["significant"] else ""
        print(f"{r['teams']:>5}  {r['speeds']:>7}  {r['variant']:>11} - {r['baseline']:<8}  "
              f"{r['hands']:>7}  {r['diff']:+6.2f}  [{r['ci_low']:+.2f}, {r['ci_high']:+.2f}]{star}")
    print("diff: points per hand of the variant minus the baseline, paired over deals "
          "(* = the 95% interval excludes 0)")
    if args.out:
        out = Path(args.out)
        out.mkdir(parents=True, exist_ok=True)
        write_csv(rows, out / "stream_withholding.csv")
        write_json(rows, out / "stream_withholding.json")
    print(json.dumps(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
