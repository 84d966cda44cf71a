"""Throughput of the rules core: agent-steps per second (seats x ticks) under uniformly
random legal moves, masks written every tick, finished hands re-dealt inside the loop.

    python -m benchmarks.throughput            # full table (about a minute)
    python -m benchmarks.throughput --quick    # smaller batches, for a smoke run
    python -m benchmarks.throughput --sections parallel_env,vec_env   # the env benchmarks

Measures, in one run on this machine:
- core_sps: the median of 3 timed runs of the batched core (core.batch.play_random_batch) at B = 1, 64, 1024, 8192 for
  2 and 4 teams (solo seats, NNA defaults);
- oracle_sps: the same workload in the pure-Python oracle (tests/reference.py), 2 teams;
- ratio: core_sps at B = 8192, 4 teams / oracle_sps;
- compile_s: import + deal + first tick (one Table, and one batched Engine of 256 tables) in a
  fresh process with an empty numba cache;
- warm_start_s: the same in a second fresh process with the cache that run filled.
- parallel_env: agent-steps/s of nertz_v0.parallel_env(num_teams=4) and of a do-nothing
  ParallelEnv with the same agents and spaces (fresh return dicts every step, as any
  ParallelEnv builds them, over constant preallocated observations and masks),
  both driven by the same random-legal sampling from the observations' action_mask, in 40
  paired slices of seconds / 10 each (back to back, alternating which env goes first); their
  ratio (target: >= 0.50) as the median of the 40 paired ratios, with quartiles and
  the pooled ratio (mean rate over mean rate);
- vec_env: learner env-steps/s of the SB3 NertzVecEnv, 4 teams, num_envs = 1024 (256 with
  --quick), learner actions drawn in numpy from action_masks(), opponents random-legal inside
  numba (target: 300,000). Env time only (action_masks() + step()); the numpy draw
  of the actions is timed apart and reported as its own rate;
- threading: the same vector-env step (NertzGymVectorEnv: the same kernels without SB3, so
  without torch; env time only) in fresh processes, with and without `import torch` first,
  with NUMBA_THREADING_LAYER unset (numba picks its layer: omp on the development VM) and
  =workqueue (numba's own thread pool, which cannot spin; vs torch's OpenMP).
`--sections` picks some of core, oracle, compile, parallel_env, vec_env, threading (default
all). Prints a table per section, each row with the command that measured it, then one JSON
line.
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


def sample_legal(rng, mask) -> int:
    """One uniformly random legal id from one agent's action_mask (both ParallelEnvs)."""
    legal = np.flatnonzero(mask)
    return int(legal[rng.integers(legal.size)])


def sample_legal_batch(rng, masks) -> np.ndarray:
    """One uniformly random legal id per row of bool masks [E, N] (wait is always legal)."""
    flat = np.flatnonzero(masks)                    # row-major: each row's ids are contiguous
    counts = np.count_nonzero(masks, axis=1)
    pick = np.cumsum(counts) - counts + (rng.random(counts.size) * counts).astype(np.int64)
    return flat[pick] - np.arange(counts.size) * masks.shape[1]


def null_parallel_env(like):
    """A do-nothing pettingzoo.ParallelEnv with the agents and spaces of `like` and no game
    behind it. Fair but honest: every reset / step builds the return values any ParallelEnv
    must build, as fresh dicts: per agent a fresh {"observation", "action_mask"} dict, rewards
    (0.0), terminations and truncations (False), and per agent a fresh info dict with the
    keys and values of `like`'s reset infos (team, role, applied, tick, hand). Their arrays
    are constant (one dealt position of `like`, preallocated once, never copied); the actions
    are ignored and the episode never ends."""
    from pettingzoo import ParallelEnv

    class NullParallelEnv(ParallelEnv):
        metadata = {"name": "null_v0", "render_modes": [], "is_parallelizable": True}

        def __init__(self):
            self.possible_agents = list(like.possible_agents)
            self.agents = []
            self.observation_spaces = {a: like.observation_space(a) for a in self.possible_agents}
            self.action_spaces = {a: like.action_space(a) for a in self.possible_agents}
            obs, infos = like.reset(seed=0)             # a real dealt position, then constant
            self._rows = [(a, obs[a]["observation"].copy(), obs[a]["action_mask"].copy(),
                           dict(infos[a])) for a in self.possible_agents]

        def observation_space(self, agent):
            return self.observation_spaces[agent]

        def action_space(self, agent):
            return self.action_spaces[agent]

        def _returns(self):
            obs = {a: {"observation": o, "action_mask": m} for a, o, m, _ in self._rows}
            infos = {a: dict(info) for a, _, _, info in self._rows}
            return obs, infos

        def reset(self, seed=None, options=None):
            self.agents = self.possible_agents[:]
            return self._returns()

        def step(self, actions):
            obs, infos = self._returns()
            agents = self.agents
            return (obs, dict.fromkeys(agents, 0.0), dict.fromkeys(agents, False),
                    dict.fromkeys(agents, False), infos)

    return NullParallelEnv()


class ParallelEnvDriver:
    """Plays a ParallelEnv under random legal actions, hand after hand (re-dealt when a hand
    ends), in timed slices that continue where the last one stopped."""

    def __init__(self, env, seed: int = 0):
        self.env, self.rng = env, np.random.default_rng(seed)
        self.obs, _ = env.reset(seed=seed)

    def run(self, seconds: float) -> float:
        """agent-steps/s over one slice of about `seconds` (whole blocks of 50 steps)."""
        env, rng, obs = self.env, self.rng, self.obs
        steps, t0 = 0, time.perf_counter()
        while time.perf_counter() - t0 < seconds:
            for _ in range(50):
                actions = {a: sample_legal(rng, obs[a]["action_mask"]) for a in env.agents}
                obs, _, _, _, _ = env.step(actions)
                steps += len(actions)
                if not env.agents:
                    obs, _ = env.reset()
        self.obs = obs
        return steps / (time.perf_counter() - t0)


def parallel_env_bench(seconds: float, pairs: int = 40):
    """(ours, do-nothing, ratios): agent-steps/s of each env in `pairs` paired slices of
    seconds / 10 each, 4 teams, and the ratio ours / do-nothing within each pair. The two
    slices of a pair run back to back (which goes first alternates), so a slow phase of a
    shared machine hits both sides of a pair instead of one env's whole run: the median of
    the paired ratios is the robust figure; the pooled one (the ratio of the two envs' mean
    rates over all slices, which are of equal length) is reported beside it."""
    from nertz_env import nertz_v0

    ours = ParallelEnvDriver(nertz_v0.parallel_env(num_teams=4))
    null = ParallelEnvDriver(null_parallel_env(nertz_v0.parallel_env(num_teams=4)))
    ours.run(0.2), null.run(0.2)                                    # compile / warm
    a, b = [], []
    for r in range(pairs):
        first, second = (ours, null) if r % 2 == 0 else (null, ours)
        x, y = first.run(seconds / 10), second.run(seconds / 10)
        a.append(x if first is ours else y)
        b.append(y if first is ours else x)
    return a, b, [x / y for x, y in zip(a, b)]


def vec_env_sps(n_envs: int, seconds: float, repeats: int = 3, teams: int = 4):
    """Learner env-steps/s of the SB3 NertzVecEnv, `repeats` runs: (env, sampling). env: the
    time in env.action_masks() and env.step() only; the benchmark's own numpy draw of the
    learner actions from the masks (sample_legal_batch) is timed apart, as its own rate."""
    from nertz_env.envs.vector import NertzVecEnv

    env = NertzVecEnv(num_envs=n_envs, seed=0, num_teams=teams)
    rng = np.random.default_rng(0)
    env.reset()
    for _ in range(5):                                              # compile / warm
        env.step(sample_legal_batch(rng, env.action_masks()))
    out, sampling = [], []
    clock = time.perf_counter
    for _ in range(repeats):
        steps, t_env, t_draw, t0 = 0, 0.0, 0.0, clock()
        while clock() - t0 < seconds:
            t1 = clock()
            masks = env.action_masks()
            t2 = clock()
            actions = sample_legal_batch(rng, masks)
            t3 = clock()
            env.step(actions)
            t_env += (t2 - t1) + (clock() - t3)
            t_draw += t3 - t2
            steps += n_envs
        out.append(steps / t_env)
        sampling.append(steps / t_draw)
    return out, sampling


_THREAD_SNIPPET = (
    "import sys, time; torch = __import__('torch') if sys.argv[1] == 'torch' else None;"
    "import numpy as np, numba; from nertz_env.envs.gym_vector import NertzGymVectorEnv;"
    "from benchmarks.throughput import sample_legal_batch;"
    "n, secs = int(sys.argv[2]), float(sys.argv[3]); rng = np.random.default_rng(0);"
    "env = NertzGymVectorEnv(num_envs=n, seed=0, num_teams=4); env.reset(seed=0);"
    "[env.step(sample_legal_batch(rng, env.action_masks())) for _ in range(5)];"
    "steps, t_env, t0 = 0, 0.0, time.perf_counter()\n"
    "while time.perf_counter() - t0 < secs:\n"
    "    t1 = time.perf_counter(); m = env.action_masks(); t2 = time.perf_counter()\n"
    "    a = sample_legal_batch(rng, m); t3 = time.perf_counter(); env.step(a)\n"
    "    t_env += t2 - t1 + time.perf_counter() - t3; steps += n\n"
    "print(steps / t_env, numba.threading_layer())"
)


def threading_sps(torch_first: bool, layer: str | None, n_envs: int, seconds: float):
    """(learner env-steps/s, numba's threading layer) of the vector-env step in a fresh
    process: with or without `import torch` first, NUMBA_THREADING_LAYER unset or `layer`."""
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_THREADING_LAYER"}
    if layer:
        env["NUMBA_THREADING_LAYER"] = layer
    out = subprocess.run([sys.executable, "-c", _THREAD_SNIPPET,
                          "torch" if torch_first else "-", str(n_envs), str(seconds)],
                         env=env, cwd=ROOT, capture_output=True, text=True, check=True)
    sps, used = out.stdout.split()[-2:]
    return float(sps), used


SECTIONS = ("core", "oracle", "compile", "parallel_env", "vec_env", "threading")


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(
        description="Agent-steps per second of the Nertz core vs the pure-Python oracle, "
                    "cold-compile and warm-start times, and the environments' throughput. "
                    "Example: python -m benchmarks.throughput --quick")
    ap.add_argument("--quick", action="store_true", help="B up to 1024, shorter timings")
    ap.add_argument("--seconds", type=float, default=None, help="time per measurement")
    ap.add_argument("--no-compile", action="store_true", help="skip the cold/warm start runs")
    ap.add_argument("--sections", default=",".join(SECTIONS),
                    help=f"comma-separated, any of {', '.join(SECTIONS)} (default: all)")
    ap.add_argument("--vec-envs", type=int, default=None,
                    help="num_envs of the vec_env section (default 1024, 256 with --quick)")
    args = ap.parse_args(argv)
    sections = [x.strip() for x in args.sections.split(",") if x.strip()]
    unknown = sorted(set(sections) - set(SECTIONS))
    if unknown:
        ap.error(f"unknown section(s) {unknown}: choose from {', '.join(SECTIONS)}")
    if args.no_compile and "compile" in sections:
        sections.remove("compile")
    seconds = args.seconds or (0.5 if args.quick else 2.0)
    sizes = [1, 64, 1024] if args.quick else [1, 64, 1024, 8192]
    command = " ".join(["python -m benchmarks.throughput",
                        *(sys.argv[1:] if argv is None else argv)])
    if os.environ.get("NUMBA_THREADING_LAYER"):
        command = f"NUMBA_THREADING_LAYER={os.environ['NUMBA_THREADING_LAYER']} {command}"

    result = {"machine": f"{os.cpu_count()} cpus"}
    if "compile" in sections:
        with tempfile.TemporaryDirectory() as cache:
            result["compile_s"] = round(start_time(cache), 2)
            result["warm_start_s"] = round(start_time(cache), 2)
    rows = []
    if "core" in sections:
        result["core_sps"] = {}
        for teams in (2, 4):
            for b in sizes:
                runs = sorted(core_sps(teams, b, seconds))
                result["core_sps"][f"{teams}teams_B{b}"] = round(runs[len(runs) // 2])
                rows.append((f"core, {teams} teams", b, runs))
    if "oracle" in sections:
        result["oracle_sps"] = round(oracle_sps(seconds * 2))
        rows.append(("oracle (pure Python), 2 teams", 1, [result["oracle_sps"]]))
    if "core" in sections and "oracle" in sections:
        top = result["core_sps"][f"4teams_B{sizes[-1]}"]
        result["ratio"] = round(top / result["oracle_sps"], 1)
    env_rows = []
    if "parallel_env" in sections:
        ours, null, ratios = (sorted(x) for x in parallel_env_bench(seconds))
        result["parallel_env_sps"] = round(float(np.median(ours)))
        result["null_parallel_env_sps"] = round(float(np.median(null)))
        result["parallel_env_ratio"] = round(float(np.median(ratios)), 3)
        q1, q3 = np.percentile(ratios, [25, 75])
        result["parallel_env_ratio_iqr"] = [round(float(q1), 3), round(float(q3), 3)]
        result["parallel_env_ratio_pooled"] = round(     # equal slice times: mean rates
            float(np.mean(ours) / np.mean(null)), 3)
        env_rows += [("ParallelEnv nertz_v0, 4 teams", 1, "agent-steps/s", ours),
                     ("do-nothing ParallelEnv, same spaces", 1, "agent-steps/s", null)]
    if "vec_env" in sections:
        n = args.vec_envs or (256 if args.quick else 1024)
        runs, draws = (sorted(x) for x in vec_env_sps(n, seconds))
        result["vec_env_sps"] = {f"4teams_B{n}": round(runs[len(runs) // 2])}
        result["vec_env_sampling_sps"] = round(draws[len(draws) // 2])
        env_rows.append(("SB3 NertzVecEnv, 4 teams (env time only)", n, "learner env-steps/s",
                         runs))
        env_rows.append(("  its numpy action draw (benchmark side)", n, "learner actions/s",
                         draws))
    if "threading" in sections:
        result["threading_sps"] = {}
        for torch_first in (False, True):
            for layer in (None, "workqueue"):
                runs = sorted(threading_sps(torch_first, layer, 1024, seconds)
                              for _ in range(1 if args.quick else 3))
                sps, used = runs[len(runs) // 2]
                key = f"{'torch' if torch_first else 'no_torch'}_{layer or 'default'}"
                result["threading_sps"][key] = {"sps": round(sps), "layer": used}
                env_rows.append((f"vec step, {'torch' if torch_first else 'no torch'}, "
                                 f"layer={layer or 'unset'} ({used})", 1024,
                                 "learner env-steps/s", [r[0] for r in runs]))

    print(f"measured with: {command}")
    if rows:
        print(f"{'workload':32s} {'B':>5s} {'agent-steps/s (median)':>23s} "
              f"{'min - max of 3 runs':>25s}")
        for name, b, runs in rows:
            spread = f"{runs[0]:,.0f} - {runs[-1]:,.0f}" if len(runs) > 1 else ""
            print(f"{name:32s} {b:5d} {runs[len(runs) // 2]:23,.0f} {spread:>25s}")
    if "ratio" in result:
        print(f"ratio core (4 teams, B={sizes[-1]}) / oracle: {result['ratio']:,.1f}x")
    if "compile_s" in result:
        print(f"cold compile (import, deal, first tick; Table and batched Engine; empty cache): "
              f"{result['compile_s']:.1f} s")
        print(f"warm-cache start (the same, cache filled):                              "
              f"{result['warm_start_s']:.1f} s")
    if env_rows:
        print(f"{'environment workload':48s} {'B':>5s} {'per second (median)':>20s} "
              f"{'unit':20s} {'min - max':>21s}  command")
        for name, b, unit, runs in env_rows:
            spread = f"{runs[0]:,.0f} - {runs[-1]:,.0f}" if len(runs) > 1 else ""
            print(f"{name:48s} {b:5d} {float(np.median(runs)):20,.0f} {unit:20s} {spread:>21s}  "
                  f"{command}")
    if "parallel_env_ratio" in result:
        q1, q3 = result["parallel_env_ratio_iqr"]
        print(f"ratio nertz_v0 / do-nothing ParallelEnv: {result['parallel_env_ratio']:.2f} "
              f"(median of {len(ratios)} paired slices, quartiles {q1:.2f} - {q3:.2f}; pooled "
              f"{result['parallel_env_ratio_pooled']:.2f}; target: >= 0.50)")
    if "vec_env_sps" in result:
        print("SB3 NertzVecEnv target: 300,000 learner env-steps/s at B = 1024")
    print(json.dumps(result))
    return result

if __name__ == "__main__":
    main()
