"""Tournament deals per second with and without Ray on this machine, and Ray's overhead.

    python -m benchmarks.ray_scaling [--deals 6000] [--block-deals 750]

Plays the same tournament (random, greedy, river-builder; 2 teams, round-robin: 3 lineups x 2
seatings per deal) locally, then with a local Ray instance of 1 and 2 CPUs (a fresh instance
each; a first, unmeasured call warms the workers). numba already runs every local batch on all
cores (prange), so one Ray worker does the local work plus Ray's cost; the per-block overhead
is (wall with 1 worker - local wall) / blocks.
"""
from __future__ import annotations

import argparse
import time

from agents.arena.tournament import run_tournament

AGENTS = ["random", "greedy", "heuristic:style=river-builder"]


def timed(**kw) -> float:
    t0 = time.perf_counter()
    run_tournament(AGENTS, teams=2, progress=False, **kw)
    return time.perf_counter() - t0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.ray_scaling", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--deals", type=int, default=6000)
    ap.add_argument("--block-deals", type=int, default=750)
    args = ap.parse_args(argv)
    import ray

    timed(deals=50, seed=1)                                    # compile / cache warm-up
    local = timed(deals=args.deals, seed=0)
    print(f"local: {args.deals / local:,.0f} deals/s ({local:.2f} s)")
    blocks = -(-args.deals // args.block_deals)
    walls = {}
    for cpus in (1, 2):
        ray.init(num_cpus=cpus, include_dashboard=False, log_to_driver=False)
        timed(deals=2 * cpus, seed=1, executor="ray", block_deals=1)          # warm workers
        wall = timed(deals=args.deals, seed=0, executor="ray", block_deals=args.block_deals)
        ray.shutdown()
        walls[cpus] = wall
        print(f"ray, {cpus} worker(s): {args.deals / wall:,.0f} deals/s ({wall:.2f} s, "
              f"{blocks} blocks of {args.block_deals})")
    print(f"overhead per block: {(walls[1] - local) / blocks * 1000:.0f} ms")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
