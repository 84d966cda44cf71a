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

With --recipe NAME (train/recipes/NAME.toml, e.g. generalist) it measures a shipped recipe end
to end instead, each row one `nertz train` call in a fresh interpreter (timed inside it, from
the call to its return: env, init, rollouts, updates and files), after an untimed tiny run of
each source tree that compiles or loads the numba kernels:

    python -m benchmarks.train_throughput --recipe generalist            # 1M steps each
    python -m benchmarks.train_throughput --recipe generalist --steps 200000 --also HEAD~3
    python -m benchmarks.train_throughput --recipe generalist --torch-threads 1  # cores shared

- `recipe`: `nertz train --spec train/recipes/NAME.toml --timesteps STEPS` (the recipe as
  shipped: its learner, init, formats, tables, constraint, partner, epochs; torch threads
  the lean default), env-steps/s and its own log's seconds in rollouts and in updates;
- `sb3`: SB3 MaskablePPO (`--learner sb3`) on the recipe's nearest config SB3 can train: the
  recipe's num_envs, n_steps, batch_size, n_epochs, learning_rate, ent_coef, opponents and
  seed at 2 solo teams, from a fresh network (no formats, init, constraint, partner or
  shift_cost: the lean PPO's only), no warm start, evaluations or checkpoints, torch threads
  its default (1); rollouts and updates timed around MaskablePPO's collect_rollouts / train;
- `recipe@REV` (--also REV, repeatable): the recipe row from the tree of git revision REV
  (`git archive`, its own numba cache), the same command: a before/after in one run.
"""
from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

_USER_OMP = os.environ.get("OMP_NUM_THREADS")     # the --recipe rows run with the user's
os.environ.setdefault("OMP_NUM_THREADS", "1")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--steps", type=int, default=None,
                    help="env steps of each learner (default 196,608; with --recipe 1,000,000)")
    ap.add_argument("--eval-deals", type=int, default=100, help="deals of each evaluation (0: none)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--only", choices=("sb3", "lean"), default=None, help="one learner only")
    ap.add_argument("--lean-epochs", default="4", metavar="E,E,..",
                    help="the sparse lean PPO once per epoch count (n_epochs; 4 is sb3's default, "
                         "2 the lean learner's): rows lean_ppo, lean_ppo_2epochs, ...")
    ap.add_argument("--no-dense", action="store_true", help="skip the dense-first-layer lean run")
    ap.add_argument("--recipe", metavar="NAME", default=None,
                    help="measure train/recipes/NAME.toml end to end beside SB3 (module "
                         "docstring); "
                         "--steps then defaults to 1,000,000")
    ap.add_argument("--also", metavar="REV", action="append", default=[],
                    help="with --recipe: the recipe row again from git revision REV's tree")
    ap.add_argument("--torch-threads", type=int, default=None, metavar="N",
                    help="with --recipe: the recipe rows on N torch threads (default: the "
                         "recipe's, else the lean default; 1 where other jobs share the cores)")
    a = ap.parse_args(argv)
    if a.recipe is not None:
        return recipe_main(a)
    if a.also or a.torch_threads is not None:
        ap.error("--also and --torch-threads need --recipe")

    a.steps = 196_608 if a.steps is None else a.steps
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


# one `nertz train` call in a fresh interpreter, timed inside it (sys.argv[1]: its arguments as
# JSON); SB3's collect_rollouts / train timed around; prints "@@" + a JSON line last
WORKER = r"""
import json, sys, time
argv = json.loads(sys.argv[1])
timers = {"rollouts": 0.0, "updates": 0.0}
if "sb3" in argv:
    from sb3_contrib import MaskablePPO
    def timed(name, f):
        def g(self, *a, **k):
            t = time.perf_counter()
            try:
                return f(self, *a, **k)
            finally:
                timers[name] += time.perf_counter() - t
        return g
    MaskablePPO.collect_rollouts = timed("rollouts", MaskablePPO.collect_rollouts)
    MaskablePPO.train = timed("updates", MaskablePPO.train)
from agents.cli import main
t0 = time.perf_counter()
rc = main(argv)
print("@@" + json.dumps({"rc": rc, "seconds": time.perf_counter() - t0, **timers}), flush=True)
"""
# the lean PPO's log line: "step N: ...; R s in rollouts, U s in updates"
LEAN_LINE = re.compile(r"^step ([\d,]+): .*; ([\d.]+) s in rollouts, ([\d.]+) s in updates$")


def run_train(root: Path, args: list) -> dict:
    """One `nertz train` (args) run by WORKER with root as the current directory and first on
    the import path: {seconds, rollouts, updates, steps (lean: from its log), log}."""
    env = {**os.environ, "PYTHONPATH": str(root)}
    if _USER_OMP is None:                        # as `nertz train` runs: threads its own
        env.pop("OMP_NUM_THREADS", None)
    proc = subprocess.run([sys.executable, "-c", WORKER, json.dumps(args)], cwd=root, env=env,
                          capture_output=True, text=True)
    lines = proc.stdout.splitlines()
    done = [json.loads(x[2:]) for x in lines if x.startswith("@@")]
    if proc.returncode or not done or done[-1]["rc"]:
        raise RuntimeError(f"nertz train {' '.join(args)} in {root} failed:\n"
                           + proc.stdout[-2000:] + proc.stderr[-2000:])
    out = dict(done[-1], log=[x for x in lines if not x.startswith("@@")])
    for x in out["log"]:
        m = LEAN_LINE.match(x.strip())
        if m:
            out.update(steps=int(m.group(1).replace(",", "")), rollouts=float(m.group(2)),
                       updates=float(m.group(3)))
    return out


def recipe_args(root: Path, name: str) -> dict:
    """The recipe's values (train/recipes/NAME.toml of the current tree, read as nertz train
    reads it)."""
    from agents.training.recipe import load_recipe
    return load_recipe(root / "train" / "recipes" / f"{name}.toml")


def sb3_args(r: dict, steps: int, out: Path) -> list:
    """SB3 MaskablePPO on the recipe's nearest config (module docstring)."""
    return ["train", "--learner", "sb3", "--out", str(out), "--timesteps", str(steps),
            "--seed", str(r.get("seed", 0)), "--teams", "2",
            "--num-envs", str(r["num_envs"]), "--n-steps", str(r["n_steps"]),
            "--batch-size", str(r["batch_size"]), "--n-epochs", str(r["n_epochs"]),
            "--learning-rate", str(r["learning_rate"]), "--ent-coef", str(r["ent_coef"]),
            "--opponents", ",".join(r["opponents"]), "--bc-rows", "0", "--eval-every", "0",
            "--checkpoint-every", "0", "--no-tensorboard", "--no-progress"]


def recipe_main(a) -> int:
    """--recipe NAME: the recipe, SB3 beside it, the recipe at other revisions (docstring)."""
    here = Path(__file__).resolve().parents[1]
    steps = 1_000_000 if a.steps is None else a.steps
    spec = f"train/recipes/{a.recipe}.toml"
    if not (here / spec).is_file():
        raise SystemExit(f"--recipe {a.recipe!r}: no {spec}")
    r = recipe_args(here, a.recipe)
    tmp = Path(tempfile.mkdtemp(prefix="train_throughput_"))
    trees = [("recipe", here)]
    for rev in a.also:
        tree = tmp / f"tree_{len(trees)}"
        tree.mkdir()
        archive = subprocess.run(["git", "-C", str(here), "archive", rev], capture_output=True,
                                 check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
        if not (tree / spec).is_file():
            raise SystemExit(f"--also {rev}: that revision has no {spec}")
        trees.append((f"recipe@{rev}", tree))
    for label, tree in trees:          # compile / load each tree's kernels, untimed
        run_train(tree, ["train", "--spec", spec, "--timesteps", "1", "--num-envs", "46",
                         "--n-steps", "16", "--batch-size", "368", "--checkpoint-every", "0",
                         "--out", str(tmp / f"warm_{label}")])
    load = os.getloadavg()
    rows = {}
    order = [] if a.only == "lean" else ["sb3"]
    order += [] if a.only == "sb3" else [label for label, _ in trees]
    for label in order:
        out = tmp / label.replace("@", "_at_")
        if label == "sb3":
            res = run_train(here, sb3_args(r, steps, out))
            rollout = r["num_envs"] * r["n_steps"]
            res["steps"] = -(-steps // rollout) * rollout
        else:
            threads = [] if a.torch_threads is None else ["--torch-threads",
                                                           str(a.torch_threads)]
            res = run_train(dict(trees)[label], ["train", "--spec", spec, "--timesteps",
                                                 str(steps), "--out", str(out), *threads])
        res["env_steps_per_s"] = res["steps"] / res["seconds"]
        rows[label] = {k: res[k] for k in ("steps", "seconds", "env_steps_per_s", "rollouts",
                                           "updates")}
        print(f"{label:18s} {res['steps']:>10,} steps in {res['seconds']:7.1f} s: "
              f"{res['env_steps_per_s']:>8,.0f} env-steps/s ({res['rollouts']:.1f} s in rollouts, "
              f"{res['updates']:.1f} s in updates)", flush=True)
    for label in rows:
        if label != "sb3" and "sb3" in rows:
            ratio = rows[label]["env_steps_per_s"] / rows["sb3"]["env_steps_per_s"]
            print(f"{label} / sb3: {ratio:.2f}x")
        if label.startswith("recipe@"):
            print(f"recipe / {label}: "
                  f"{rows['recipe']['env_steps_per_s'] / rows[label]['env_steps_per_s']:.2f}x")
    print(json.dumps({"recipe": spec, "torch_threads": a.torch_threads, "load_avg_before": load,
                      "load_avg_after": os.getloadavg(), "cpus": os.cpu_count(), **rows}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
