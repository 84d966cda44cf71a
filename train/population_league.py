"""Mains trained together: does a population of learners, each the other's moving opponent,
keep improving where one learner against bots and its own snapshots stopped?

    python -m train.population_league --help
    python -m train.population_league --out runs/pop --legs 3 --steps 2000000 \\
        --start A=runs/w128/final.npz --start B=runs/w256/final.npz

Leg k = 1 .. legs, for every main M of the population (--start NAME=MODEL, two or more):
M_k continues M_{k-1} (M_0: its start, actor and critic) for --steps of the generalist recipe
(train/common.py RECIPE: the rulebook's formats, 2 PPO epochs) against the bots and
every *other* main's M'_{k-1}, each a `ppo:PATH` at every other seat, drawn per table. So each
main meets the others as they were one leg ago: the population moves together, leg by leg
(PSRO's mains, AlphaStar's league without exploiters). Each main keeps its own network width
(read from its start's file) and its own seeds (--seed + 10 * index + k).

The legs of one round are independent of each other: `--parallel` runs them side by side as
child processes (one torch thread each; the weights are those of the one-at-a-time run, the
lean PPO being deterministic on the CPU), else one after the other. When a child fails
(or on Ctrl-C) the parent stops every other child of the round (SIGTERM, then SIGKILL after
GRACE seconds, each waited for), removes the folders of the legs that did not finish (those
holding a checkpoint are kept, as a stopped lean run keeps them) and exits with one line
naming the failed leg: nothing trains into --out after it returns. A leg
whose final.npz exists is skipped, so rerunning continues after a stop; a folder with a
config.json but no final.npz is a stopped leg: delete it to run it again.

Every argument is checked before any leg trains (one line, exit 2): the starts (each read by
the safe-format loader, every weight finite, and its critic where one lies beside it; an SB3
zip is refused: `nertz export` converts one), --deals and the seeds against the limits table
(agents/arena/limits.py), --legs, --steps and the number of mains against the bounds below,
the first round's training configs, and --out: new, empty, or this population's own folder
(finished legs are kept and skipped; a stopped leg or a judgement.json is refused). The
arguments that define the legs (every --start, its name, path and sha256, in order; --steps;
--seed) are recorded in OUT/league.json before the first leg trains (train/common.py); a rerun
into that folder with other values is refused, naming the first that differs and both values,
as is one whose existing legs' config.json hold other seeds or steps. --legs may grow, to add
legs. An --out that cannot be a folder (a file in the way) is refused, and one that cannot be
made is an error (exit 1), before any leg.

Judgement (at 2 solo teams, fresh duplicate deals, the deal the unit of each interval): each
main's last model against its start, the mains' last models against each other and their
starts against each other; each with the share of positions where the second plays the
first's move (train/common.py `agreement`). OUT/judgement.json and a table.
Needs the [train] extra: `pip install -e ".[train]"` (with the CPU build of torch).
"""
from __future__ import annotations

import argparse
import itertools
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from agents.arena.limits import check_int
from train.common import (BOTS, RECIPE, ScriptParser, check_leg_configs, check_legs,
                          check_main, check_record, exit_status, head_to_head, leg, make_out,
                          record, report, undo_out, with_agreement)
from train.common import count as count_arg, seed as seed_arg

PROG = "python -m train.population_league"
MAX_MAINS, MAX_LEGS, MAX_STEPS = 8, 100, 1_000_000_000
GRACE = 10.0                   # seconds a stopped child has to exit before it is killed
POLL = 0.2                     # seconds between looks at the children


class LegFailed(RuntimeError):
    """A --parallel child exited with an error (its other children are stopped)."""


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


def _signal(proc, sig) -> None:
    try:
        os.killpg(proc.pid, sig)             # the child leads its own process group
    except OSError:                          # gone already
        pass


def stop(procs, grace: float = GRACE) -> None:
    """Every child still running: SIGTERM, SIGKILL after `grace` seconds; each waited for."""
    for p in procs:
        if p.poll() is None:
            _signal(p, signal.SIGTERM)
    deadline = time.monotonic() + grace
    for p in procs:
        try:
            p.wait(timeout=max(0.0, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            _signal(p, signal.SIGKILL)
    for p in procs:
        p.wait()


def _unfinished(folders: dict) -> tuple:
    """The folders of legs that did not finish and held nothing before: removed, unless they
    hold a checkpoint (checkpoints/step_N.npz: kept, as lean_ppo keeps a stopped run's); an
    empty one is left empty. (removed, kept): their names."""
    gone, kept = [], []
    for folder, existed in folders.items():
        if (folder / "final.npz").exists() or not folder.is_dir():
            continue
        if any((folder / "checkpoints").glob("step_*.npz")):
            kept.append(folder.name)
            continue
        shutil.rmtree(folder, ignore_errors=True)
        if existed:
            folder.mkdir(exist_ok=True)
        gone.append(folder.name)
    return gone, kept


def run_round(rnd: list, steps: int, recipe: dict, grace: float = GRACE) -> None:
    """A round's legs side by side, one child process each. When one fails (LegFailed,
    naming it) or on Ctrl-C (the KeyboardInterrupt goes on) the others are stopped, each
    waited for, and the unfinished legs' folders removed before this returns."""
    # the unfinished legs that hold nothing now: all that is in them later is this round's
    existed = {f: f.exists() for _, f, *_ in rnd if not (f / "final.npz").exists()
               and (not f.exists() or f.is_dir() and not any(f.iterdir()))}
    procs, failed, ok = [], None, False
    try:
        for _, f, init, opp, s in rnd:
            procs.append(subprocess.Popen(
                [sys.executable, "-m", "train.population_league",
                 "--one-leg", json.dumps([str(f), init, opp, s]), "--steps", str(steps),
                 "--recipe", json.dumps({**recipe, "torch_threads": 1,
                                         "net_arch": width(init)})],
                start_new_session=True))       # Ctrl-C reaches the parent, which stops them
        while True:
            codes = [p.poll() for p in procs]
            failed = next(((f.name, c) for (_, f, *_), c in zip(rnd, codes)
                           if c not in (None, 0)), None)
            if failed:
                break
            if all(c == 0 for c in codes):
                ok = True
                return
            time.sleep(POLL)
    finally:
        if not ok:
            stop(procs, grace)
            gone, kept = _unfinished(existed)
    name, code = failed
    how = f"was killed by signal {-code}" if code < 0 else f"exited with status {code}"
    others = [f.name for _, f, *_ in rnd if f.name != name]
    raise LegFailed(f"leg {name} failed (its run {how}; its lines above); the round's other "
                    f"legs ({', '.join(others)}) were stopped"
                    + (f"; removed the unfinished legs' folders {', '.join(gone)}"
                       if gone else "")
                    + (f"; kept {', '.join(kept)}, which hold checkpoints (delete them to run "
                       "those legs again)" if kept else ""))


def run_population(out, starts: dict, legs: int, steps: int, seed: int,
                   recipe: dict = RECIPE, parallel: bool = False, log=print) -> dict:
    """The legs of the module docstring; {name: [start, M_1, .., M_legs]} (final.npz paths).
    A run that fails or is stopped leaves its finished legs and nothing of the others (an
    --out it created and left empty is removed)."""
    out = Path(out)
    created = not out.exists()
    chain = {name: [str(p)] for name, p in starts.items()}
    try:
        for k, rnd in enumerate(plan(out, starts, legs, steps, seed), start=1):
            if parallel:
                run_round(rnd, steps, recipe)
            else:
                for _, f, init, opp, s in rnd:
                    leg(f, init, opp, steps, s, {**recipe, "net_arch": width(init)}, log)
            for name, f, *_ in rnd:
                chain[name].append(str(f / "final.npz"))
            log(f"leg {k} of {legs} done")
    except BaseException:
        if created and out.is_dir() and not any(out.iterdir()):
            out.rmdir()
        raise
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
    return with_agreement(rows, seed)


# ------------------------------------------------------------------ checks before any work


def check_out(out: Path, rounds: list) -> None:
    """--out: new, empty, or this population's folder (finished legs, each readable, kept and
    skipped; a leg after an unfinished one, a stopped leg, a judgement.json or anything else
    refused)."""
    legs = [f for rnd in rounds for _, f, *_ in rnd]
    before = {f: [prev[i][1]] for prev, rnd in zip(rounds, rounds[1:])
              for i, (_, f, *_) in enumerate(rnd)}          # the same main, one leg earlier
    check_legs(out, legs, "population", f"{legs[0].name} .. {legs[-1].name}",
               lambda f: before.get(f, []), check_main)


def league_record(a, starts: dict) -> dict:
    """OUT/league.json: the arguments that define the legs (train/common.py)."""
    return record(PROG, {"--start": [f"{n}={Path(p).resolve()}" for n, p in starts.items()],
                         "--steps": a.steps, "--seed": a.seed},
                  {f"--start {n}": p for n, p in starts.items()})


def check_args(a, recipe: dict) -> dict:
    """Every argument the legs and the judgement need, checked before any leg trains; the
    starts {name: model}. ValueError naming the first bad one."""
    from agents.learned.weights import file_problem
    from agents.training.lean_ppo import lean_config
    starts = {}
    for s in a.start:
        name, sep, path = s.partition("=")
        if not sep or not name.isidentifier() or name in starts:
            raise ValueError(f"--start {s!r}: give NAME=MODEL with a new name (letters, "
                             "digits, _)")
        problem = file_problem(path)                   # stat only: a FIFO is never opened
        if problem:
            raise ValueError(f"--start {s!r}: " + (f"no such model file {path}"
                             if problem == "not found" else f"model file {path!r} {problem}"))
        starts[name] = path
    if len(starts) < 2:
        raise ValueError("give two or more --start NAME=MODEL (a population of one is a "
                         "continuation)")
    if len(starts) > MAX_MAINS:
        raise ValueError(f"{len(starts)} --start mains: give 2 to {MAX_MAINS}")
    if not a.out:
        raise ValueError("--out is required")
    count_arg("--legs", a.legs, 1, MAX_LEGS)
    count_arg("--steps", a.steps, 1, MAX_STEPS)
    check_int("deals", a.deals, "--deals")
    seed_arg("--seed", a.seed, 10 * len(starts) + a.legs)
    seed_arg("--judge-seed", a.judge_seed, 99)
    widths = {n: check_main(p, f"--start {n}={p}") for n, p in starts.items()}
    rounds = plan(Path(a.out), starts, a.legs, a.steps, a.seed)
    check_out(Path(a.out), rounds)
    check_record(Path(a.out), league_record(a, starts), "population")
    check_leg_configs([(f, {"seed": s, "timesteps": a.steps})
                       for rnd in rounds for _, f, _, _, s in rnd])
    for name, f, init, opp, s in rounds[0]:        # later rounds: the same, other models
        try:
            lean_config(out=str(f), init=init, opponents=opp, timesteps=a.steps, seed=s,
                        **{**recipe, "net_arch": widths[name]})
        except ValueError as err:
            raise ValueError(f"leg {f.name}: {err}") from None
    return starts



def _child(a) -> int:
    """A --parallel child: one leg, its lines named once."""
    folder, init, opponents, seed = json.loads(a.one_leg)
    name = Path(folder).name                 # children's lines interleave: each named once
    leg(Path(folder), init, opponents, a.steps, seed, json.loads(a.recipe),
        log=lambda line: print(line if line.startswith(name) else f"{name}: {line}",
                               flush=True))
    return 0


def main(argv=None) -> int:
    ap = ScriptParser(prog=PROG, description=__doc__,
                      formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", help="the population's folder (one folder per main and leg)")
    ap.add_argument("--start", action="append", default=[], metavar="NAME=MODEL",
                    help=f"a main and the safe-format model it starts from (2 to {MAX_MAINS})")
    ap.add_argument("--legs", type=int, default=3, help=f"1 to {MAX_LEGS} (default 3)")
    ap.add_argument("--steps", type=int, default=2_000_000,
                    help=f"env steps per main and leg (1 to {MAX_STEPS:,})")
    ap.add_argument("--seed", type=int, default=60)
    ap.add_argument("--parallel", action="store_true",
                    help="a round's legs side by side (one torch thread each)")
    ap.add_argument("--deals", type=int, default=2000,
                    help="deals per judgement match (the limits table's range: 2 or more)")
    ap.add_argument("--judge-seed", type=int, default=2061)
    ap.add_argument("--one-leg", help=argparse.SUPPRESS)      # a --parallel child
    ap.add_argument("--recipe", help=argparse.SUPPRESS)
    a = ap.parse_args(argv)
    recipe = {**RECIPE, "torch_threads": 1}
    out = Path(a.out or ".")
    created = wrote = False
    try:
        if a.one_leg:
            return _child(a)
        starts = check_args(a, recipe)
        created, wrote = make_out(out, league_record(a, starts))   # the folder, league.json
        t0 = time.perf_counter()
        chain = run_population(out, starts, a.legs, a.steps, a.seed, recipe, a.parallel)
        trained = time.perf_counter() - t0
        print(f"legs trained in {trained:,.0f} s; judging on {a.deals:,} deals per match")
        rows = judge(chain, a.deals, a.judge_seed)
        report(PROG, argv, out, rows, trained, t0, chain=chain)
        return 0
    except BaseException as err:
        undo_out(out, created, wrote)  # a run that trained nothing leaves no --out behind
        code = exit_status(err, PROG, "any child stopped; finished legs are kept and skipped "
                           "when the command runs again", failures=(LegFailed,))
        if code is None:
            raise
        return code


if __name__ == "__main__":
    sys.exit(main())
