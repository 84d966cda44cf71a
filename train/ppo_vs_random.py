"""MaskablePPO against random-legal opponents on the batched vector env, then an evaluation of
the trained learner against a random-legal learner ("the learner's mean hand score
rising above the random policy's against random opponents").

One file, read top to bottom (CleanRL style): arguments, environment, training (MaskablePPO
from sb3-contrib on `nertz_env.envs.vector.NertzVecEnv`, printing SPS), evaluation, JSON out.

    python -m train.ppo_vs_random --help
    python -m train.ppo_vs_random --timesteps 200000 --eval-hands 2000 --out runs/ppo_vs_random.json

The learner holds seat 0 of every table; every other seat plays `--opponents` (default a
uniformly random legal move; greedy or a heuristic style too), chosen inside the numba loop. The reward is the change of the learner team's R29 hand score
each tick, so a hand's rewards sum to its score. Evaluation plays `--eval-hands` hands on fresh
tables with the same opponents and seed twice: once with the trained policy, once with a
uniformly random legal learner; every env counts its first hands only (no bias toward short
hands). It prints the mean hand score of each with its standard error and writes them as JSON.
Needs the [train] extra: `pip install -e ".[train]"` (with the CPU build of torch).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import time
from dataclasses import asdict, dataclass, fields
from pathlib import Path

import numpy as np


@dataclass
class Args:
    seed: int = 0
    """seed of the run: tables, opponents, network initialisation"""
    timesteps: int = 200_000
    """learner env-steps (ticks of one table) to train for"""
    num_envs: int = 64
    """tables stepped together in one numba call"""
    num_teams: int = 2
    """teams at the table (solo seats); the learner is team 0"""
    max_ticks: int = 300
    """ticks after which a hand with no Nertz call is truncated (R26; the rules default is
    3000, shorter hands give the learner more hand ends per budget)"""
    reward: str = "score"
    """'score' (own hand-score change) or 'relative' (minus the others' mean change)"""
    opponents: str = "random"
    """the other seats' bot, played inside numba: random, greedy or heuristic[:style=...]"""
    n_steps: int = 128
    """rollout length per env between PPO updates"""
    batch_size: int = 1024
    """minibatch size of the PPO update"""
    n_epochs: int = 4
    """PPO epochs per update"""
    learning_rate: float = 3e-4
    """Adam learning rate"""
    gamma: float = 0.99
    """discount factor"""
    ent_coef: float = 0.01
    """entropy bonus"""
    net_width: int = 128
    """units in each of the two hidden layers of the policy and value networks"""
    eval_hands: int = 2000
    """hands played by the trained policy and by the random learner in the evaluation"""
    eval_envs: int = 200
    """tables used for the evaluation"""
    deterministic: bool = False
    """evaluate the trained policy greedily (argmax) instead of sampling it"""
    torch_threads: int = 1
    """torch CPU threads (measured on the 2-core machine: 1 thread ran 5x faster than 2, the
    networks are too small to split)"""
    out: str = "runs/ppo_vs_random.json"
    """where the JSON result is written"""
    save: str = ""
    """also save the trained model here (a .zip; then `nertz tournament --agents ppo:PATH,...`)"""


def parse_args() -> Args:
    doc = {}                               # field docstrings, read back from the source
    import ast
    import inspect
    tree = ast.parse(inspect.getsource(Args))
    body = tree.body[0].body
    for node, nxt in zip(body, body[1:]):
        if isinstance(node, ast.AnnAssign) and isinstance(nxt, ast.Expr):
            doc[node.target.id] = " ".join(str(nxt.value.value).split())
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
        epilog="example: python -m train.ppo_vs_random --timesteps 100000 --eval-hands 1000")
    for f in fields(Args):
        flag = "--" + f.name.replace("_", "-")
        if f.type in ("bool", bool):
            p.add_argument(flag, action=argparse.BooleanOptionalAction, default=f.default,
                           help=doc.get(f.name))
        else:
            kind = {"int": int, "float": float, "str": str}[f.type if isinstance(f.type, str)
                                                           else f.type.__name__]
            p.add_argument(flag, type=kind, default=f.default, help=doc.get(f.name))
    return Args(**vars(p.parse_args()))


def mean_se(x) -> tuple[float, float]:
    x = np.asarray(x, np.float64)
    return float(x.mean()), float(x.std(ddof=1) / math.sqrt(len(x))) if len(x) > 1 else 0.0


def evaluate(make_env, policy, n_envs: int, n_hands: int) -> np.ndarray:
    """Learner-team hand scores of the first ceil(n_hands / n_envs) hands of every env
    (truncated to n_hands). policy(obs, masks) -> actions."""
    env = make_env(n_envs)
    per_env = math.ceil(n_hands / n_envs)
    me = env.config.seat_team[env.learner_seat]
    scores = [[] for _ in range(n_envs)]
    obs = env.reset()
    while min(len(s) for s in scores) < per_env:
        obs, _, dones, infos = env.step(policy(obs, env.action_masks()))
        for e in np.flatnonzero(dones):
            if len(scores[e]) < per_env:
                scores[e].append(infos[e]["final_scores"][me])
    # hand j of every env before hand j + 1 of any, so a truncation keeps the balance
    return np.array([scores[e][j] for j in range(per_env) for e in range(n_envs)])[:n_hands]


if __name__ == "__main__":
    args = parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", str(args.torch_threads))

    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.callbacks import BaseCallback

    from nertz_env.envs.vector import NertzVecEnv

    torch.set_num_threads(args.torch_threads)
    print(f"args: {json.dumps(asdict(args))}")

    def make_env(n, seed=args.seed):
        return NertzVecEnv(num_envs=n, seed=seed, num_teams=args.num_teams,
                           max_ticks=args.max_ticks, reward=args.reward,
                           opponents=args.opponents)

    # ---------------------------------------------------------------- training
    class Progress(BaseCallback):
        """After every rollout: global step, SPS, mean learner hand score of recent hands."""

        def __init__(self):
            super().__init__()
            self.t0 = time.perf_counter()
            self.recent = []

        def _on_step(self) -> bool:
            for info in self.locals["infos"]:
                if "final_scores" in info:
                    self.recent.append(info["final_scores"][0])
            return True

        def _on_rollout_end(self) -> None:
            sps = self.num_timesteps / (time.perf_counter() - self.t0)
            last = self.recent[-500:]
            score = f"{np.mean(last):7.2f} over the last {len(last)} hands" if last else "-"
            print(f"global_step={self.num_timesteps:>9,}  SPS={sps:8,.0f}  "
                  f"learner hand score {score}", flush=True)

    env = make_env(args.num_envs)
    model = MaskablePPO(
        "MlpPolicy", env, n_steps=args.n_steps, batch_size=args.batch_size,
        n_epochs=args.n_epochs, learning_rate=args.learning_rate, gamma=args.gamma,
        ent_coef=args.ent_coef, seed=args.seed, verbose=0,
        policy_kwargs={"net_arch": [args.net_width, args.net_width]})
    t0 = time.perf_counter()
    model.learn(args.timesteps, callback=Progress())
    train_s = time.perf_counter() - t0
    train_sps = model.num_timesteps / train_s
    print(f"trained {model.num_timesteps:,} steps in {train_s:.1f} s: SPS={train_sps:,.0f}")

    # ---------------------------------------------------------------- evaluation
    eval_seed = args.seed + 1_000_003            # tables the training never saw
    rng = np.random.default_rng(args.seed)

    def trained(obs, masks):
        actions, _ = model.predict(obs, action_masks=masks, deterministic=args.deterministic)
        return actions

    def random_legal(obs, masks):
        keys = rng.random(masks.shape)
        keys[~masks] = -1.0
        return keys.argmax(axis=1)

    t0 = time.perf_counter()
    ppo_scores = evaluate(lambda n: make_env(n, eval_seed), trained, args.eval_envs,
                          args.eval_hands)
    rnd_scores = evaluate(lambda n: make_env(n, eval_seed), random_legal, args.eval_envs,
                          args.eval_hands)
    eval_s = time.perf_counter() - t0
    ppo_mean, ppo_se = mean_se(ppo_scores)
    rnd_mean, rnd_se = mean_se(rnd_scores)
    diff, diff_se = ppo_mean - rnd_mean, math.hypot(ppo_se, rnd_se)
    print(f"evaluation: {len(ppo_scores)} hands each, {args.num_teams} teams, opponents "
          f"{args.opponents}, max_ticks {args.max_ticks} ({eval_s:.1f} s)")
    print(f"  MaskablePPO learner  mean hand score {ppo_mean:7.2f} +- {ppo_se:.2f} (SE)")
    print(f"  random-legal learner mean hand score {rnd_mean:7.2f} +- {rnd_se:.2f} (SE)")
    print(f"  difference                           {diff:7.2f} +- {diff_se:.2f} (SE)")

    result = {
        "args": asdict(args),
        "train_steps": int(model.num_timesteps), "train_seconds": round(train_s, 1),
        "train_sps": round(train_sps),
        "eval_hands": int(len(ppo_scores)),
        "ppo": {"mean": ppo_mean, "se": ppo_se},
        "random": {"mean": rnd_mean, "se": rnd_se},
        "difference": {"mean": diff, "se": diff_se},
    }
    if args.save:
        model.save(args.save)
        print(f"saved the model to {args.save} (an agent: ppo:{args.save})")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {out}")
