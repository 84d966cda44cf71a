"""Throughput of the rules core: agent-steps per second (seats x ticks) under uniformly
random legal moves, masks written every tick, finished hands re-dealt inside the loop.

    python -m benchmarks.throughput            # full table (about a minute)
    python -m benchmarks.throughput --quick    # smaller batches, for a smoke run

Measures, in one run on this machine:
- core_sps: the median of 3 timed runs of the batched core (core.batch.play_random_batch) at B = 1, 64, 1024, 8192 for
  2 and 4 teams (solo seats, NNA defaults);
- oracle_sps: the same workload in the pure-Python oracle (tests/reference.py), 2 teams;
- ratio: core_sps at B = 8192, 4 teams / oracle_sps;
- compile_s: import + deal + first tick (one Table, and one batched Engine of 256 tables) in a
  fresh process with an empty numba cache;
- warm_start_s: the same in a second fresh process with the cache that run filled.
Prints a table, then one JSON line.
"""
from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]

# import, deal and first tick through both paths a user meets first: the Table (serial
# kernels) and a batched Engine of 256 tables (the prange kernels)
_START_SNIPPET = (
    "import time; t = time.perf_counter();"
    "import numpy as np; from nertz_env import Engine, Table;"
    "tb = Table.deal(seed=0); tb.step({0: tb.legal_moves(0)[-1]});"
    "eng = Engine(n_tables=256, seed=0); eng.reset();"
    "eng.step(np.zeros((256, eng.config.num_seats), np.int64));"
    "print(time.perf_counter() - t)"
)


def core_sps(teams: int, n_tables: int, seconds: float, repeats: int = 3) -> list[float]:
    """agent-steps/s of `repeats` timed runs of about `seconds` each (one compile first)."""
    from nertz_env import Engine, RulesConfig
    from nertz_env.core.batch import play_random_batch

    eng = Engine(RulesConfig(num_teams=teams), n_tables, seed=0)
    eng.reset()
    policy_rng = eng.np_random.integers(0, 2**63, size=n_tables, dtype=np.uint64)
    hands = np.zeros(n_tables, np.int64)
    steps = np.zeros(n_tables, np.int64)
    args = (eng.state, eng.params, eng.scratch, eng.masks, eng.actions, eng.priority,
            eng.applied, policy_rng)
    play_random_batch(*args, 2, hands, steps)          # compile / warm
    n_ticks = 8
    while True:                                        # grow until a run takes >= seconds / 4
        t = time.perf_counter()
        play_random_batch(*args, n_ticks, hands, steps)
        dt = time.perf_counter() - t
        if dt >= seconds / 4 or n_ticks >= 1 << 22:
            break
        n_ticks *= 2
    n_ticks = max(1, int(n_ticks * seconds / max(dt, 1e-9)))
    out = []
    for _ in range(repeats):
        steps[:] = 0
        t = time.perf_counter()
        play_random_batch(*args, n_ticks, hands, steps)
        out.append(steps.sum() / (time.perf_counter() - t))
    return out


def oracle_sps(seconds: float) -> float:
    sys.path.insert(0, str(ROOT / "tests"))
    from reference import RefTable  # noqa: E402  (the test oracle, plain Python)

    from nertz_env import RulesConfig

    cfg = RulesConfig(num_teams=2)
    rng = np.random.default_rng(0)
    cards = [r + s for s in "SHDC" for r in
             ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")]
    steps, t0 = 0, time.perf_counter()
    while time.perf_counter() - t0 < seconds:
        ref = RefTable.deal(cfg, [[cards[c] for c in rng.permutation(52)] for _ in range(2)])
        while not ref.hand_over and time.perf_counter() - t0 < seconds:
            moves = {}
            for seat in range(cfg.num_seats):
                legal = ref.legal_moves(seat)
                moves[seat] = legal[int(rng.integers(len(legal)))]
            ref.step(moves, [int(x) for x in rng.permutation(cfg.num_seats)])
            steps += cfg.num_seats
    return steps / (time.perf_counter() - t0)


def start_time(cache_dir: str) -> float:
    env = dict(os.environ, NUMBA_CACHE_DIR=cache_dir)
    out = subprocess.run([sys.executable, "-c", _START_SNIPPET], env=env, cwd=ROOT,
                         capture_output=True, text=True, check=True)
    return float(out.stdout.strip().splitlines()[-1])


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(
        description="Agent-steps per second of the Nertz core vs the pure-Python oracle, "
                    "plus cold-compile and warm-start times. Example: "
                    "python -m benchmarks.throughput --quick")
    ap.add_argument("--quick", action="store_true", help="B up to 1024, shorter timings")
    ap.add_argument("--seconds", type=float, default=None, help="time per measurement")
    ap.add_argument("--no-compile", action="store_true", help="skip the cold/warm start runs")
    args = ap.parse_args(argv)
    seconds = args.seconds or (0.5 if args.quick else 2.0)
    sizes = [1, 64, 1024] if args.quick else [1, 64, 1024, 8192]

    result = {"machine": f"{os.cpu_count()} cpus", "core_sps": {}}
    if not args.no_compile:
        with tempfile.TemporaryDirectory() as cache:
            result["compile_s"] = round(start_time(cache), 2)
            result["warm_start_s"] = round(start_time(cache), 2)
    rows = []
    for teams in (2, 4):
        for b in sizes:
            runs = sorted(core_sps(teams, b, seconds))
            result["core_sps"][f"{teams}teams_B{b}"] = round(runs[len(runs) // 2])
            rows.append((f"core, {teams} teams", b, runs))
    result["oracle_sps"] = round(oracle_sps(seconds * 2))
    rows.append(("oracle (pure Python), 2 teams", 1, [result["oracle_sps"]]))
    top = result["core_sps"][f"4teams_B{sizes[-1]}"]
    result["ratio"] = round(top / result["oracle_sps"], 1)

    print(f"{'workload':32s} {'B':>5s} {'agent-steps/s (median)':>23s} {'min - max of 3 runs':>25s}")
    for name, b, runs in rows:
        spread = f"{runs[0]:,.0f} - {runs[-1]:,.0f}" if len(runs) > 1 else ""
        print(f"{name:32s} {b:5d} {runs[len(runs) // 2]:23,.0f} {spread:>25s}")
    print(f"ratio core (4 teams, B={sizes[-1]}) / oracle: {result['ratio']:,.1f}x")
    if "compile_s" in result:
        print(f"cold compile (import, deal, first tick; Table and batched Engine; empty cache): "
              f"{result['compile_s']:.1f} s")
        print(f"warm-cache start (the same, cache filled):                              "
              f"{result['warm_start_s']:.1f} s")
    print(json.dumps(result))
    return result


if __name__ == "__main__":
    main()
