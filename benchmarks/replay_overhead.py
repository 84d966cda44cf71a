"""What recording replays costs, measured in one run on this machine.

    python -m benchmarks.replay_overhead              # defaults below
    python -m benchmarks.replay_overhead --deals 100 --steps 2000

Rows (each after a warm-up, so numba compile is excluded; the same seeds with and without):
- PettingZoo parallel env, 4 teams, random legal moves: env steps/s without and with
  `record(env)`;
- NertzVecEnv, 64 tables, greedy opponents: vector steps/s without, with every table and
  with one table recorded;
- run_tournament, 3 core bots at 3 teams: seconds without `record` and with `record="all"`
  (every table played again tick by tick, then checked against the run's scores);
- Replay.check and Replay.frames: ticks/s over the recorded tournament hands;
- file sizes: the mean gzipped replay of those bot hands, and one 3,000-tick hand at 4
  seats of waits and flips (max_ticks reached) as JSON and gzipped.
Prints a markdown table and one JSON line.
"""
from __future__ import annotations

import argparse
import json
import os
import tempfile
import time

import numpy as np

from agents.arena.tournament import run_tournament
from nertz_env import RulesConfig, Table, nertz_v0
from nertz_env.envs.vector import NertzVecEnv
from nertz_env.replay import record


def env_steps(steps: int, recorded: bool) -> float:
    env = nertz_v0.parallel_env(num_teams=4, max_ticks=400)
    rng = np.random.default_rng(0)
    rec = record(env) if recorded else None
    obs, _ = env.reset(seed=0)
    t0 = time.perf_counter()
    for _ in range(steps):
        if not env.agents:
            obs, _ = env.reset()
        obs, *_ = env.step({a: int(rng.choice(np.flatnonzero(obs[a]["action_mask"])))
                            for a in env.agents})
    dt = time.perf_counter() - t0
    if rec is not None:
        rec.replay()
    return steps / dt


def vec_steps(steps: int, recorded: bool, tables=None) -> float:
    v = NertzVecEnv(num_envs=64, num_teams=2, max_ticks=400, opponents="greedy", seed=0)
    rec = record(v, tables=tables) if recorded else None
    v.reset()
    t0 = time.perf_counter()
    for _ in range(steps):
        masks = v.action_masks()
        a = masks.argmax(axis=1)                   # a legal id per table, cheap to choose
        v.step_async(a)
        v.step_wait()
    dt = time.perf_counter() - t0
    if rec is not None:
        rec.replay()
    return steps / dt


def long_hand_sizes(folder) -> tuple:
    """(JSON bytes, gzipped bytes) of one 3,000-tick hand at 4 seats: waits and flips."""
    table = Table.deal(RulesConfig(num_teams=4, max_ticks=3000), seed=1)
    rec = record(table)
    rng = np.random.default_rng(0)
    while not table.hand_over:
        table.step({s: "flip" if rng.random() < 0.5 and table.action_mask(s)[1] else "wait"
                    for s in range(4)})
    rep = rec.replay()
    return (os.path.getsize(rep.save(os.path.join(folder, "long.json"))),
            os.path.getsize(rep.save(os.path.join(folder, "long.nertz.json.gz"))))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.replay_overhead",
                                 description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--steps", type=int, default=3000, help="env steps per env row (3000)")
    ap.add_argument("--deals", type=int, default=100, help="tournament deals (100)")
    args = ap.parse_args(argv)
    bots = ["heuristic", "greedy", "random"]

    env_steps(200, True)                            # warm-ups: compile, caches
    vec_steps(50, True)
    run_tournament(bots, teams=3, deals=2, record="first:1", progress=False)

    rows = {}
    rows["env_plain"] = env_steps(args.steps, False)
    rows["env_recorded"] = env_steps(args.steps, True)
    rows["vec_plain"] = vec_steps(args.steps // 3, False)
    rows["vec_recorded"] = vec_steps(args.steps // 3, True)
    rows["vec_recorded_one"] = vec_steps(args.steps // 3, True, tables=[0])
    t0 = time.perf_counter()
    plain = run_tournament(bots, teams=3, deals=args.deals, seed=1, progress=False)
    rows["tournament_plain_s"] = time.perf_counter() - t0
    t0 = time.perf_counter()
    rec = run_tournament(bots, teams=3, deals=args.deals, seed=1, progress=False, record="all")
    rows["tournament_record_all_s"] = time.perf_counter() - t0
    assert np.array_equal(plain.hand_scores, rec.hand_scores)
    ticks = sum(h.ticks for r in rec.replays for h in r.hands)
    t0 = time.perf_counter()
    for r in rec.replays:
        r.check()
    rows["check_ticks_per_s"] = ticks / (time.perf_counter() - t0)
    t0 = time.perf_counter()
    for r in rec.replays[:20]:
        r.frames(0)
    rows["frames_ticks_per_s"] = sum(r.hands[0].ticks for r in rec.replays[:20]) / (
        time.perf_counter() - t0)
    rows["tables"] = len(rec.replays)
    rows["ticks"] = ticks
    with tempfile.TemporaryDirectory() as folder:
        rows["bot_hand_gz_bytes"] = float(np.mean([os.path.getsize(r.save(
            os.path.join(folder, f"{i}.nertz.json.gz"))) for i, r in enumerate(rec.replays)]))
        rows["long_hand_json_bytes"], rows["long_hand_gz_bytes"] = long_hand_sizes(folder)

    print(f"command: python -m benchmarks.replay_overhead --steps {args.steps} --deals {args.deals}")
    print("| what | without | with recording | ratio |")
    print("|---|---|---|---|")
    print(f"| PettingZoo parallel env, 4 teams: steps/s | {rows['env_plain']:,.0f} | "
          f"{rows['env_recorded']:,.0f} | {rows['env_recorded'] / rows['env_plain']:.2f} |")
    print(f"| NertzVecEnv, 64 tables: steps/s | {rows['vec_plain']:,.0f} | "
          f"{rows['vec_recorded']:,.0f} (all) | {rows['vec_recorded'] / rows['vec_plain']:.2f} |")
    print(f"| NertzVecEnv, 64 tables: steps/s | {rows['vec_plain']:,.0f} | "
          f"{rows['vec_recorded_one']:,.0f} (table 0) | "
          f"{rows['vec_recorded_one'] / rows['vec_plain']:.2f} |")
    print(f"| tournament, 3 bots, 3 teams, {rows['tables']} tables: s | "
          f"{rows['tournament_plain_s']:.2f} | {rows['tournament_record_all_s']:.2f} (all) | "
          f"{rows['tournament_record_all_s'] / rows['tournament_plain_s']:.1f} |")
    print(f"| Replay.check: ticks/s | | {rows['check_ticks_per_s']:,.0f} | |")
    print(f"| Replay.frames: ticks/s | | {rows['frames_ticks_per_s']:,.0f} | |")
    print(f"| file size: a bot hand (mean {ticks / rows['tables']:.0f} ticks), gzipped | | "
          f"{rows['bot_hand_gz_bytes'] / 1024:.1f} KB | |")
    print(f"| file size: 3,000 ticks at 4 seats, JSON / gzipped | | "
          f"{rows['long_hand_json_bytes'] / 1024:.0f} KB / {rows['long_hand_gz_bytes'] / 1024:.1f} KB | |")
    print(json.dumps(rows))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
