"""Tournament throughput: hands per second with the bots inside numba (play_bots_batch), and
the Python-driven path for comparison (the same bots without their core policy, as a torch
agent would be played).

    python -m benchmarks.tournament                  # 4 teams, 2,000 deals x 12 seatings
    python -m benchmarks.tournament --teams 2 --deals 5000

Measures, in one run on this machine, after warm-up calls (numba compile excluded):
- jitted: hands/s of run_tournament over the four heuristic styles (all-play-all at 4 teams:
  every table seats balanced, lake-rush, river-builder and cautious), median of 3 runs;
- python: the same bots driven tick by tick from Python (agents/python_policies.py through
  act_batch), one run on fewer deals; the ratio jitted / python.
Prints a table with the command, then one JSON line.
"""
from __future__ import annotations

import argparse
import json
import statistics
import sys

from agents.base import Agent
from agents.registry import make_agent
from agents.arena.tournament import run_tournament

STYLES = ("heuristic", "heuristic:style=lake-rush", "heuristic:style=river-builder",
          "heuristic:style=cautious")


class _PythonOnly(Agent):
    def __init__(self, spec):
        self.inner = make_agent(spec)
        self.name = "py-" + self.inner.name

    def act(self, observation, action_mask):
        return self.inner.act(observation, action_mask)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.tournament", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--teams", type=int, default=4)
    ap.add_argument("--deals", type=int, default=2000)
    ap.add_argument("--python-deals", type=int, default=10)
    args = ap.parse_args(argv)
    bots = list(STYLES[:args.teams])       # all-play-all cycles them round bigger tables
    run_tournament(bots, teams=args.teams, deals=max(8, 256 // args.teams + 1), progress=False)  # compile both kernels
    run_tournament(bots, teams=args.teams, deals=8, progress=False)
    runs = []
    for _ in range(3):
        r = run_tournament(bots, teams=args.teams, deals=args.deals, seed=len(runs),
                           progress=False)
        runs.append(r.hands_played / r.elapsed_s)
    jit = statistics.median(runs)
    py_bots = [_PythonOnly(b) for b in bots]
    run_tournament(py_bots, teams=args.teams, deals=2, progress=False)        # compile
    py = run_tournament(py_bots, teams=args.teams, deals=args.python_deals, progress=False)
    py_rate = py.hands_played / py.elapsed_s
    cmd = "python -m benchmarks.tournament " + " ".join(argv if argv is not None else sys.argv[1:])
    print("| path | teams | hands per run | hands/s | command |")
    print("|---|---|---|---|---|")
    print(f"| jitted bots (median of 3; runs {', '.join(f'{x:,.0f}' for x in runs)}) | "
          f"{args.teams} | {r.hands_played:,} | {jit:,.0f} | `{cmd.strip()}` |")
    print(f"| Python-driven bots | {args.teams} | {py.hands_played:,} | {py_rate:,.1f} | "
          f"`{cmd.strip()}` |")
    print(f"\njitted / Python-driven: {jit / py_rate:,.0f}x")
    print(json.dumps({"teams": args.teams, "jitted_hands_per_s": jit, "runs": runs,
                      "python_hands_per_s": py_rate, "ratio": jit / py_rate}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
