"""Rollout speed: the simulator a search agent runs per decision (nertz_env/core/fork.py,
core/worlds.py), serial, one thread.

    python -m benchmarks.rollout                     # W=16 worlds x C=2 candidates x H=20 ticks
    python -m benchmarks.rollout --worlds 64 --horizon 0     # H=0: to the end of the hand

One decision = world_seeds + fork_worlds (W uniform worlds of a real table, each in C slots)
+ rollout (the candidates forced for seat 0, then river-builder in every seat for H ticks),
from mid-hand positions (river-builder tables after 20 ticks). Measured, in one run, at 2 and
4 teams after a warm-up call: ms per decision (all of it, Python calls included), of which the
rollout kernel; rollouts/s (W x C per decision) and rollout ticks/s. Compile: the first
decision in a fresh process with an empty numba cache of its own (NUMBA_CACHE_DIR in a
temporary folder, so every kernel the path uses compiles, the tick's included; the project's
cache is not touched), then in another with that cache filled; the engine's first deal and
ticks before it are not counted. Prints a table with the command, then one JSON line.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

from nertz_env import Engine, RulesConfig
from nertz_env.bot_specs import seat_bots
from nertz_env.core.fork import allocate_rollouts, rollout_args, rollout_range
from nertz_env.core.policies import policy_actions_range
from nertz_env.core.worlds import fork_worlds, world_seeds

BOT = "heuristic:style=river-builder"


def positions(teams: int, n: int, ticks: int = 20, seed: int = 0):
    """An engine of n river-builder tables after `ticks` ticks, its bots' kinds and knobs."""
    config = RulesConfig(num_teams=teams)
    eng = Engine(config, n_tables=n, seed=seed)
    eng.reset()
    kinds, knobs, _ = seat_bots(BOT, config.num_seats)
    kinds = np.repeat(kinds[None], n, axis=0)
    knobs = np.repeat(knobs[None], n, axis=0)
    rng = np.zeros(n, np.uint64)
    actions = np.zeros((n, config.num_seats), np.int16)
    for _ in range(ticks):
        policy_actions_range(eng.state, eng.params, eng.scratch, eng.masks, kinds, knobs, rng,
                             actions, 0, n)
        eng.step(actions)
    live = np.flatnonzero(eng.state.status == 0)
    return eng, kinds, knobs, actions, live


def candidates(eng, actions, e, C):
    """C moves for seat 0 at table e: its bot's move first, then other legal moves (the bot's
    again where there are fewer)."""
    legal = [int(a) for a in np.flatnonzero(eng.masks[e, 0]) if a != actions[e, 0]]
    return ([int(actions[e, 0])] + legal + [int(actions[e, 0])] * C)[:C]


def decide(eng, ro, e, cands, W, H, seed):
    """One decision's simulation: worlds, forced candidates, rollouts; the kernel's seconds."""
    C = len(cands)
    keys, deals = world_seeds([seed, e], W)
    slots = fork_worlds(eng.state, e, ro.state, ro.scratch, 0, C, keys, deals)
    for c, a in enumerate(cands):
        ro.first[slots[:, c], 0] = a
    t = time.perf_counter()
    bad = rollout_range(*rollout_args(ro, eng.params, H), 0, W * C)
    assert bad < 0
    return time.perf_counter() - t


def rollouts_for(eng, kinds, knobs, actions, W, C):
    """Rollout buffers of W x C slots with the tables' bots; actions = the bots' moves now."""
    policy_actions_range(eng.state, eng.params, eng.scratch, eng.masks, kinds, knobs,
                         np.zeros(eng.n_tables, np.uint64), actions, 0, eng.n_tables)
    ro = allocate_rollouts(eng.config, W * C)
    ro.kinds[:] = kinds[0]
    ro.knobs[:] = knobs[0]
    return ro


def bench(teams: int, W: int, C: int, H: int, decisions: int) -> dict:
    eng, kinds, knobs, actions, live = positions(teams, decisions)
    ro = rollouts_for(eng, kinds, knobs, actions, W, C)
    decide(eng, ro, int(live[0]), candidates(eng, actions, int(live[0]), C), W, H, 1)  # warm
    ticks0 = kernel = 0.0
    t0 = time.perf_counter()
    for e in live:
        cands = candidates(eng, actions, int(e), C)
        start = eng.state.tick[e]
        kernel += decide(eng, ro, int(e), cands, W, H, 0)
        ticks0 += float((ro.state.tick[:W * C] - start).sum())
    total = time.perf_counter() - t0
    n = len(live)
    return {"teams": teams, "worlds": W, "candidates": C, "horizon": H, "decisions": n,
            "ms_per_decision": round(1000 * total / n, 4),
            "kernel_ms_per_decision": round(1000 * kernel / n, 4),
            "rollouts_per_s": round(n * W * C / total, 1),
            "rollout_ticks_per_s": round(ticks0 / total, 1)}


def first_decision(teams: int) -> tuple[float, float]:
    """Seconds of (the engine's deal and ticks, the first decision) in this process."""
    t = time.perf_counter()
    eng, kinds, knobs, actions, live = positions(teams, 4)
    t1 = time.perf_counter()
    ro = rollouts_for(eng, kinds, knobs, actions, 2, 2)
    decide(eng, ro, int(live[0]), candidates(eng, actions, int(live[0]), 2), 2, 2, 5)
    return t1 - t, time.perf_counter() - t1


_COLD = "from benchmarks import rollout as r; print(*r.first_decision({teams}))"


def compile_seconds(teams: int) -> list[float]:
    """[empty cache, filled cache] seconds of a fresh process's first decision (after the
    engine's own first deal and ticks, timed apart and left out)."""
    out = []
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        for _ in range(2):
            res = subprocess.run([sys.executable, "-c", _COLD.format(teams=teams)], env=env,
                                 capture_output=True, text=True, check=True)
            out.append(float(res.stdout.split()[-1]))
    return out


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.rollout", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--worlds", type=int, default=16)
    ap.add_argument("--candidates", type=int, default=2)
    ap.add_argument("--horizon", type=int, default=20, help="ticks; 0: to the end of the hand")
    ap.add_argument("--decisions", type=int, default=400)
    ap.add_argument("--no-compile", action="store_true", help="skip the compile measurement")
    args = ap.parse_args(argv)
    if min(args.worlds, args.candidates, args.decisions) < 1 or args.horizon < 0:
        ap.error("--worlds, --candidates and --decisions must be >= 1, --horizon >= 0")
    cmd = "python -m benchmarks.rollout " + " ".join(sys.argv[1:] if argv is None else argv)
    rows = [bench(t, args.worlds, args.candidates, args.horizon, args.decisions)
            for t in (2, 4)]
    result = {"command": cmd.strip(), "rows": rows}
    if not args.no_compile:
        result["compile_s"] = {t: compile_seconds(t) for t in (2, 4)}
    print(f"$ {result['command']}")
    print("| teams | W x C x H | ms / decision (kernel) | rollouts/s | rollout ticks/s |")
    print("|---|---|---|---|---|")
    for r in rows:
        h = r["horizon"] or "end"
        print(f"| {r['teams']} | {r['worlds']} x {r['candidates']} x {h} | "
              f"{r['ms_per_decision']:.3f} ({r['kernel_ms_per_decision']:.3f}) | "
              f"{r['rollouts_per_s']:,.0f} | {r['rollout_ticks_per_s']:,.0f} |")
    for t, (cold, warm) in result.get("compile_s", {}).items():
        print(f"first decision, {t} teams, fresh process: empty numba cache {cold:.1f} s, "
              f"filled {warm:.2f} s")
    print(json.dumps(result))
    return result


if __name__ == "__main__":
    main()
