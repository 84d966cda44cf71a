"""Does a run keep getting stronger? Each checkpoint after N steps against the one nearest N/4,
head to head on duplicate deals (docs/models.md's evaluation curve).

    python -m benchmarks.learning_curve --run runs/generalist2 --teams 2,4 --deals 500 \
        --out benchmarks/results/learning_curve.json

Per (N, teams): the paired difference in points per hand of step N minus step ~N/4 (95%
t-interval over deals, the deal the unit: run_tournament's paired differentials, both at
every seating of every deal): at 2 teams the two alone; at more teams river-builder joins
them as a third agent (run_tournament's lineups of the three). Checkpoints are the run's
checkpoints/step_N.npz (and final.npz as its last step). Prints a Markdown table and writes
every row as JSON (whole or not at all).
"""
from __future__ import annotations

import argparse
import json
import os
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")

BASELINE = "heuristic:style=river-builder"


def checkpoints(run: Path) -> dict:
    """{step: path} of a run's checkpoints/step_N.npz, final.npz at the step its file says."""
    out = {int(p.stem.split("_")[1]): p for p in (run / "checkpoints").glob("step_*.npz")}
    final = run / "final.npz"
    if final.is_file():
        prov = json.loads(final.with_suffix(".json").read_text()).get("provenance") or {}
        out[int(prov.get("num_timesteps", max(out, default=0) + 1))] = final
    return dict(sorted(out.items()))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--run", required=True, help="a lean PPO run folder (checkpoints/)")
    ap.add_argument("--teams", default="2", help="table sizes, comma separated")
    ap.add_argument("--deals", type=int, default=500)
    ap.add_argument("--seed", type=int, default=4049)
    ap.add_argument("--min-step", type=int, default=1_000_000,
                    help="the earliest N/4 compared (default 1,000,000)")
    ap.add_argument("--at", default="",
                    help="only these N, comma separated (each a checkpoint's step; default: "
                         "every checkpoint with one near N/4)")
    ap.add_argument("--out", default="")
    a = ap.parse_args(argv)

    from agents.arena.tournament import run_tournament
    from nertz_env.files import write_json
    ck = checkpoints(Path(a.run))
    steps = list(ck)
    wanted = [int(float(x)) for x in a.at.split(",") if x.strip()]
    missing = [n for n in wanted if n not in ck]
    if missing:
        raise ValueError(f"--at {missing}: not a checkpoint's step of {a.run}; it has "
                         f"{', '.join(f'{s:,}' for s in steps)}")
    rows, t0 = [], time.perf_counter()
    print("| teams | N | N/4 | points per hand, N minus N/4 [95% CI] | deals |")
    print("|---|---|---|---|---|")
    for teams in [int(t) for t in a.teams.split(",")]:
        for n in wanted or steps:
            quarter = min(steps, key=lambda s: abs(s - n / 4))
            if quarter < a.min_step or not n / 6 <= quarter <= n / 3:   # no checkpoint near N/4
                continue
            new, old = f"ppo:{ck[n]}", f"ppo:{ck[quarter]}"
            agents = [new, old] if teams == 2 else [new, old, BASELINE]
            res = run_tournament(agents, teams=teams, deals=a.deals, seed=a.seed,
                                 progress=False)
            (p,) = [p for p in res.pairs if {p["a"], p["b"]} == {new, old}]
            sign = 1.0 if p["a"] == new else -1.0
            lo, hi = sorted((sign * p["ci_low"], sign * p["ci_high"]))
            row = {"teams": teams, "step": n, "quarter_step": quarter, "diff": sign * p["diff"],
                   "ci_low": lo, "ci_high": hi, "deals": p["units"],
                   "seconds": res.elapsed_s}
            rows.append(row)
            print(f"| {teams} | {n:,} | {quarter:,} | {row['diff']:+.2f} [{lo:+.2f}, {hi:+.2f}] "
                  f"| {p['units']} |", flush=True)
    took = time.perf_counter() - t0
    print(f"\n{len(rows)} matches, {a.deals} deals each, seed {a.seed}: {took:,.0f} s")
    if a.out:
        write_json(a.out, {"command": "python -m benchmarks.learning_curve "
                           + " ".join(argv if argv is not None else os.sys.argv[1:]),
                           "run": a.run, "deals": a.deals, "seed": a.seed, "seconds": took,
                           "rows": rows})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
