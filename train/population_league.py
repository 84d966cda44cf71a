"""Mains trained together: does a population of learners, each the other's moving opponent,
keep improving where one learner against bots and its own snapshots stopped?

    python -m train.population_league --help
    python -m train.population_league --out runs/pop --legs 3 --steps 2000000 \\
        --start A=runs/w128/final.npz --start B=runs/w256/final.npz

Leg k = 1 .. legs, for every main M of the population (--start NAME=MODEL, two or more):
M_k continues M_{k-1} (M_0: its start, actor and critic) for --steps of the generalist recipe
(train/exploiter_league.py RECIPE: the rulebook's formats, 2 PPO epochs) against the bots and
every *other* main's M'_{k-1}, each a `ppo:PATH` at every other seat, drawn per table. So each
main meets the others as they were one leg ago: the population moves together, leg by leg
(PSRO's mains, AlphaStar's league without exploiters). Each main keeps its own network width
(read from its start's file) and its own seeds (--seed + 10 * index + k).

The legs of one round are independent of each other: `--parallel` runs them side by side as
child processes (one torch thread each; the weights are those of the one-at-a-time run, the
lean PPO being deterministic on the CPU), else one after the other. A leg whose final.npz
exists is skipped, so rerunning continues after a stop; a folder with a config.json but no
final.npz is a stopped leg: delete it to run it again.

Judgement (at 2 solo teams, fresh duplicate deals, the deal the unit of each interval): each
main's last model against its start, the mains' last models against each other and their
starts against each other; each with the share of positions where the second plays the
first's move (train/exploiter_league.py `agreement`). OUT/judgement.json and a table.
Needs the [train] extra: `pip install -e ".[train]"` (with the CPU build of torch).
"""
from __future__ import annotations

import argparse
import itertools
import json
import subprocess
import sys
import time
from pathlib import Path

from nertz_env.files import write_json
from train.exploiter_league import BOTS, RECIPE, agreement, head_to_head, leg


def width(model: str) -> list:
    """The hidden layer widths a safe-format model's JSON names."""
    meta = json.loads(Path(model).with_suffix(".json").read_text())
    return [int(w) for w in meta["architecture"]["hidden"]]


def plan(out: Path, starts: dict, legs: int, steps: int, seed: int) -> list:
    """[[(name, folder, init, opponents, seed), ... one per main], ... one per leg]."""
    latest, rounds = dict(starts), []
    for k in range(1, legs + 1):
        rnd = []
        for i, name in enumerate(starts):
            others = [f"ppo:{latest[o]}" for o in starts if o != name]
            rnd.append((name, out / f"{name}_{k}", latest[name], BOTS + others,
                        seed + 10 * i + k))
        rounds.append(rnd)
        latest = {name: str(folder / "final.npz") for name, folder, *_ in rnd}
    return rounds


def run_population(out, starts: dict, legs: int, steps: int, seed: int,
                   recipe: dict = RECIPE, parallel: bool = False, log=print) -> dict:
    """The legs of the module docstring; {name: [start, M_1, .., M_legs]} (final.npz paths)."""
    out = Path(out)
    chain = {name: [str(p)] for name, p in starts.items()}
    for k, rnd in enumerate(plan(out, starts, legs, steps, seed), start=1):
        if parallel:
            procs = [subprocess.Popen([sys.executable, "-m", "train.population_league",
                                       "--one-leg", json.dumps([str(f), init, opp, s]),
                                       "--steps", str(steps),
                                       "--recipe", json.dumps({**recipe, "torch_threads": 1,
                                                               "net_arch": width(init)})])
                     for _, f, init, opp, s in rnd]
            if any(p.wait() for p in procs):
                raise RuntimeError(f"leg {k}: a main's run failed (see its folder's output)")
        else:
            for _, f, init, opp, s in rnd:
                leg(f, init, opp, steps, s, {**recipe, "net_arch": width(init)}, log)
        for name, f, *_ in rnd:
            chain[name].append(str(f / "final.npz"))
        log(f"leg {k} of {legs} done")
    return chain


def judge(chain: dict, deals: int, seed: int) -> list:
    """The matches of the module docstring's judgement, each on its own deals."""
    rows, names = [], list(chain)
    for i, name in enumerate(names):
        rows.append({"match": f"{name}_{len(chain[name]) - 1} vs {name}'s start",
                     **head_to_head(chain[name][-1], chain[name][0], deals, seed + i)})
    for j, (x, y) in enumerate(itertools.combinations(names, 2)):
        rows.append({"match": f"{x}_{len(chain[x]) - 1} vs {y}_{len(chain[y]) - 1}",
                     **head_to_head(chain[x][-1], chain[y][-1], deals, seed + 50 + j)})
        rows.append({"match": f"{x}'s start vs {y}'s start",
                     **head_to_head(chain[x][0], chain[y][0], deals, seed + 80 + j)})
    for r in rows:
        r["agreement"] = {t: agreement(r["a"], r["b"], t, seed + t) for t in (2, 4)}
    return rows


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m train.population_league", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", help="the population's folder (one folder per main and leg)")
    ap.add_argument("--start", action="append", default=[], metavar="NAME=MODEL",
                    help="a main and the safe-format model it starts from (two or more)")
    ap.add_argument("--legs", type=int, default=3)
    ap.add_argument("--steps", type=int, default=2_000_000, help="env steps per main and leg")
    ap.add_argument("--seed", type=int, default=60)
    ap.add_argument("--parallel", action="store_true",
                    help="a round's legs side by side (one torch thread each)")
    ap.add_argument("--deals", type=int, default=2000, help="deals per judgement match")
    ap.add_argument("--judge-seed", type=int, default=2061)
    ap.add_argument("--one-leg", help=argparse.SUPPRESS)      # a --parallel child
    ap.add_argument("--recipe", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    if a.one_leg:
        folder, init, opponents, seed = json.loads(a.one_leg)
        name = Path(folder).name                 # children's lines interleave: each named once
        leg(Path(folder), init, opponents, a.steps, seed, json.loads(a.recipe),
            log=lambda line: print(line if line.startswith(name) else f"{name}: {line}",
                                   flush=True))
        return 0
    starts = {}
    for s in a.start:
        name, sep, path = s.partition("=")
        if not sep or not name.isidentifier() or name in starts:
            ap.error(f"--start {s!r}: give NAME=MODEL with a new name (letters, digits, _)")
        if not Path(path).exists():
            ap.error(f"--start {s!r}: no such model file {path}")
        starts[name] = path
    if len(starts) < 2:
        ap.error("give two or more --start NAME=MODEL (a population of one is a continuation)")
    if not a.out:
        ap.error("--out is required")
    for name in ("legs", "steps", "deals"):
        if getattr(a, name) < 1:
            ap.error(f"--{name} must be >= 1")
    out, t0 = Path(a.out), time.perf_counter()
    chain = run_population(out, starts, a.legs, a.steps, a.seed,
                           {**RECIPE, "torch_threads": 1}, a.parallel)
    trained = time.perf_counter() - t0
    print(f"legs trained in {trained:,.0f} s; judging on {a.deals:,} deals per match")
    rows = judge(chain, a.deals, a.judge_seed)
    print("| match (2 solo teams) | deals | points per hand, first minus second (95% CI) | "
          "same move, 2 / 4 teams |")
    print("|---|---|---|---|")
    for r in rows:
        print(f"| {r['match']} | {r['deals']:,} | {r['diff']:+.2f} "
              f"[{r['ci_low']:+.2f}, {r['ci_high']:+.2f}] | {r['agreement'][2]:.4f} / "
              f"{r['agreement'][4]:.4f} |")
    cmd = "python -m train.population_league " + " ".join(
        argv if argv is not None else sys.argv[1:])
    write_json(out / "judgement.json", {"command": cmd, "train_seconds": trained,
                                        "seconds": time.perf_counter() - t0, "chain": chain,
                                        "rows": rows})
    print(f"wrote {out / 'judgement.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
