"""Training throughput, end to end: SB3 MaskablePPO (`nertz train`'s defaults) against the lean
PPO (agents/training/lean_ppo.py), with a dense first layer and with the sparse one (the
default), same env, same opponents, same reward, same network, in one run.

    python -m benchmarks.train_throughput                   # about 3 minutes, evaluations included
    python -m benchmarks.train_throughput --steps 65536 --eval-deals 0   # a smoke run
    python -m benchmarks.train_throughput --lean-epochs 4,2 --no-dense --only lean   # epochs

Both train from a fresh network (no imitation warm start: `bc_rows=0`; the warm start is the
same for either learner) for the same `--steps` env steps: num_envs 64, n_steps 128 (rollouts
of 8,192), batch 1024, 4 epochs, lr 3e-4, net_arch [128, 128], torch_threads 1, the learner at
seat 0 of 2 teams against heuristic:style=river-builder, reward "relative". The numba kernels
are compiled (or loaded from the cache) by a tiny warm-up run first, so neither timing holds
compilation. env-steps/s is steps / wall time of the whole learn call (rollouts and updates).

With --eval-deals N (default 100), each trained policy then plays N duplicate deals against
river-builder (agents/training/evaluation.py evaluate_policy_zip, the evaluation `nertz train`
runs): the points-per-hand difference with its 95% interval: a short learning-curve check
(equal steps, not equal time). Prints one line per learner, then one JSON line.
"""
from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

os.environ.setdefault("OMP_NUM_THREADS", "1")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=196_608, help="env steps of each learner")
    ap.add_argument("--eval-deals", type=int, default=100, help="deals of each evaluation (0: none)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--only", choices=("sb3", "lean"), default=None, help="one learner only")
    ap.add_argument("--lean-epochs", default="4", metavar="E,E,..",
                    help="the sparse lean PPO once per epoch count (n_epochs; 4 is sb3's default, "
                         "2 the lean learner's): rows lean_ppo, lean_ppo_2epochs, ...")
    ap.add_argument("--no-dense", action="store_true", help="skip the dense-first-layer lean run")
    a = ap.parse_args(argv)

    import torch
    from agents.training.config import BEST_HEURISTIC, TrainConfig
    from agents.training.evaluation import evaluate_policy_zip
    from agents.training.lean_ppo import lean_config, train
    from agents.training.league import make_env
    from agents.training.run import build_model
    torch.set_num_threads(1)

    tmp = Path(tempfile.mkdtemp(prefix="train_throughput_"))
    train(lean_config(out=str(tmp / "warm"), num_envs=8, n_steps=16, batch_size=64,
                      n_epochs=1, timesteps=128, net_arch=[16]),
          log=lambda s: None)                                   # compile / load kernels
    load = os.getloadavg()
    rows = {}
    cfg = TrainConfig(out=str(tmp / "sb3"), learner="sb3", seed=a.seed, bc_rows=0, progress=False,
                      tensorboard=False)
    if a.only in (None, "sb3"):
        model = build_model(cfg, make_env(cfg))
        t0 = time.perf_counter()
        model.learn(a.steps)
        dt = time.perf_counter() - t0
        model.save(tmp / "sb3.zip")
        rows["sb3_maskable_ppo"] = {"steps": int(model.num_timesteps), "seconds": dt,
                                    "env_steps_per_s": model.num_timesteps / dt,
                                    "policy": str(tmp / "sb3.zip")}
    lean = [] if a.no_dense else [("lean_ppo_dense", False, 4)]
    for e in (int(x) for x in a.lean_epochs.split(",")):
        lean.append(("lean_ppo" if e == 4 else f"lean_ppo_{e}epochs", True, e))
    for name, sparse, epochs in lean:
        if a.only not in (None, "lean"):
            continue
        lines = []
        t0 = time.perf_counter()
        npz = train(lean_config(out=str(tmp / name), seed=a.seed, timesteps=a.steps,
                                n_epochs=epochs, torch_threads=1),
                    log=lines.append, sparse=sparse)
        dt = time.perf_counter() - t0
        steps = -(-a.steps // (cfg.n_steps * cfg.num_envs)) * cfg.n_steps * cfg.num_envs
        rows[name] = {"steps": steps, "seconds": dt, "env_steps_per_s": steps / dt,
                      "policy": str(npz), "last_line": lines[-1] if lines else ""}
    for name, r in rows.items():
        if a.eval_deals:
            ev = evaluate_policy_zip(r["policy"], BEST_HEURISTIC, cfg.rules(), a.eval_deals,
                                     cfg.eval_seed)
            r["eval"] = {k: ev[k] for k in ("diff", "ci_low", "ci_high", "deals")}
        line = (f"{name:18s} {r['steps']:>9,} steps in {r['seconds']:6.1f} s: "
                f"{r['env_steps_per_s']:>8,.0f} env-steps/s")
        if "eval" in r:
            e = r["eval"]
            line += (f"; vs river-builder {e['diff']:+.2f} [{e['ci_low']:+.2f}, "
                     f"{e['ci_high']:+.2f}] points per hand ({e['deals']} deals)")
        print(line, flush=True)
    if "sb3_maskable_ppo" in rows:
        for name in rows:
            if name != "sb3_maskable_ppo":
                ratio = rows[name]["env_steps_per_s"] / rows["sb3_maskable_ppo"]["env_steps_per_s"]
                print(f"{name} / sb3: {ratio:.2f}x")
    print(json.dumps({"load_avg_before": load, "cpus": os.cpu_count(), **rows}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
