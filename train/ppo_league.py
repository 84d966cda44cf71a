"""Imitation of the best heuristic, then MaskablePPO against a league of shipped bots, judged
on duplicate deals against that heuristic under the rules tournaments play.

One file, read top to bottom (CleanRL style); the pieces are agents/training/'s, the library
behind `nertz train` (which adds --resume; this recipe always starts afresh):

    python -m train.ppo_league --help
    python -m train.ppo_league --timesteps 2000000 --out runs/league2
    python -m train.ppo_league --teams 4 --opponents heuristic:style=river-builder,greedy

The arguments are `nertz train`'s, one per field of TrainConfig (agents/training/config.py,
a docstring under each field, as CleanRL's Args), plus `--final-deals`.

1. Environment: NertzVecEnv, `--num-envs` tables in one numba call, the learner at seat 0;
   each table plays one league entry per hand (drawn toward the entries the learner beats
   least), VecMonitor for episode returns.
2. Warm start: the teacher's move at every table, computed by the jitted bots, is played
   and recorded; the policy is cloned from it and its held-out accuracy printed.
3. MaskablePPO with TensorBoard logs, checkpoints and evaluations every few steps
   (run folder: config.json, bc.json, eval.jsonl/csv, checkpoints/, tb/).
4. Final judgement: the saved model as `ppo:PATH` (deterministic, as tournaments play it)
   against the teacher on `--final-deals` duplicate deals under the default rules (the
   default max_ticks, whatever the training used), written to final_eval.json.
Needs the [train] extra: `pip install -e ".[train]"` (with the CPU build of torch).
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import os
import sys
import time
from pathlib import Path

from agents.arena.limits import check_int
from agents.cli import train as train_cli
from agents.training.checkpoints import run_info, save_checkpoint
from agents.training.config import TrainConfig
from agents.training.evaluation import evaluate_policy_zip
from agents.training.imitation import warm_start
from agents.training.league import make_env
from agents.training.run import build_model, make_callbacks, rules_line, tensorboard_available
from nertz_env.config import RulesConfig


def parse_args(argv=None) -> tuple[TrainConfig, int]:
    """(the TrainConfig of `nertz train`'s options, --final-deals)."""
    p = argparse.ArgumentParser(prog="python -m train.ppo_league")
    tp = train_cli.add_parser(p.add_subparsers(dest="cmd"))     # the same options as nertz train
    tp.prog = p.prog
    tp.add_argument("--final-deals", type=int, default=200,
                    help="duplicate deals of the final match under the default rules")
    args = p.parse_args(["train"] + list(sys.argv[1:] if argv is None else argv))
    if getattr(args, "resume", None):
        raise SystemExit("this recipe starts afresh; resume with `nertz train --resume PATH`")
    try:                      # checked before training, not at the final match hours later
        check_int("deals", args.final_deals, "--final-deals")
    except ValueError as err:
        tp.error(str(err))
    return train_cli.config_from_args(args), args.final_deals


def main(argv=None) -> int:
    cfg, final_deals = parse_args(argv)
    os.environ.setdefault("OMP_NUM_THREADS", str(cfg.torch_threads))

    import torch
    from stable_baselines3.common.callbacks import CallbackList

    torch.set_num_threads(cfg.torch_threads)
    run = Path(cfg.out)
    if (run / "config.json").exists():
        raise SystemExit(f"{run} already holds a run: give another --out")
    run.mkdir(parents=True, exist_ok=True)
    print("config: " + json.dumps(cfg.to_dict()))
    print(rules_line(cfg))
    (run / "config.json").write_text(json.dumps(run_info(cfg), indent=2) + "\n")

    # ---------------------------------------------------------------- 1. environment
    env = make_env(cfg)                         # NertzVecEnv -> LeagueVecEnv -> VecMonitor
    tb = str(run / "tb") if cfg.tensorboard and tensorboard_available() else None
    model = build_model(cfg, env, tb)

    # ---------------------------------------------------------------- 2. warm start
    if cfg.bc_rows:
        warm_start(model, cfg, run)             # collect, clone, held-out accuracy: bc.json

    # ---------------------------------------------------------------- 3. PPO
    t0 = time.perf_counter()
    model.learn(cfg.timesteps, callback=CallbackList(make_callbacks(cfg, run)),
                reset_num_timesteps=False, tb_log_name="ppo")
    dt = time.perf_counter() - t0
    print(f"PPO: {model.num_timesteps:,} steps in {dt:.0f} s "
          f"({model.num_timesteps / dt:,.0f} env-steps/s with evaluations and checkpoints)")
    save_checkpoint(model, cfg, run)
    model.save(run / "final.zip")

    # ---------------------------------------------------------------- 4. final judgement
    rules = RulesConfig(num_teams=cfg.teams)                   # what tournaments play
    t0 = time.perf_counter()
    res = evaluate_policy_zip(run / "final.zip", cfg.teacher, rules, final_deals, cfg.eval_seed)
    res.update(rules=dataclasses.asdict(rules), seconds=time.perf_counter() - t0)
    (run / "final_eval.json").write_text(json.dumps(res, indent=2) + "\n")
    print(f"final: {res['diff']:+.2f} [{res['ci_low']:+.2f}, {res['ci_high']:+.2f}] points per "
          f"hand against {cfg.teacher} over {res['deals']} deals at max_ticks={rules.max_ticks} "
          f"({res['seconds']:.0f} s); {run / 'final_eval.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
