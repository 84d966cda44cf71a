"""Multi-agent PPO on `nertz_v0` with RLlib's new API stack, then a saved policy that plays in
`nertz tournament` as `rllib:OUT/checkpoint`.

    python -m train.rllib_ppo --help
    python -m train.rllib_ppo --policy shared --teams 2 --iterations 20 --out runs/rllib
    python -m train.rllib_ppo --policy per-team --teams 3 --iterations 20 --out runs/rllib3
    nertz tournament --agents rllib:runs/rllib/checkpoint,heuristic --deals 100

One file, read top to bottom: arguments, environment, algorithm config, training loop, save.

- Environment: PettingZoo's `nertz_v0.parallel_env` (one step = one tick, every seat acts,
  one hand per episode, the env's own "score" reward: a hand's rewards sum to its R29 score),
  with `illegal_move="penalize"` so that an illegal pick would show as a penalty rather than
  a crash, wrapped by RLlib's `ParallelPettingZooEnv`. A thin PettingZoo wrapper
  (`IllegalMoveCount`) adds two numbers to each agent's infos: `illegal` (1 when the agent's
  id was off its own action mask) and `penalties` (the new R31 penalties of the agent's team
  this tick, read from the engine's `penalties` counter); an on_episode_step callback sums
  them into the results as `illegal_picks` and `penalties` (lifetime sums: they must stay 0).
- Policy: `agents.learned.rllib.MaskedPPOModule` (RLModule, default network 64x64 tanh):
  the policy head's logits are FLOAT_MIN wherever "action_mask" is 0, in forward_inference,
  forward_exploration and forward_train; the value head sees the plain "observation".
  `--policy shared`: one module "shared" for every seat; `--policy per-team`: one module per
  team ("team0", "team1", ...), policy_mapping_fn maps each agent to its team's module.
- Output (`--out DIR`): `checkpoint/` (algo.save_to_path: resumable with
  Algorithm.from_checkpoint, and the RLModules inside it; beside them `nertz_table.json`, the
  table it trained at in plain JSON (`write_table`), which the `rllib:` agent reads to warn
  when it plays a table of another size), `results.json` (per iteration:
  seconds, env steps, episodes, RLlib's mean episode return (the sum over every agent of the
  hand's rewards) and per module (the rewards of the agents it plays), illegal picks,
  penalties, agent steps checked). The agent kind
  `rllib:DIR/checkpoint[,policy=team0]` (agents/learned/rllib.py) loads a module without Ray.

Needs ray[rllib] and torch (`pip install -e ".[clients]"`). docs/rllib.md has timings.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
import time
from dataclasses import dataclass, fields
from pathlib import Path

from pettingzoo.utils.wrappers import BaseParallelWrapper

from agents.learned.rllib import DEFAULT_HIDDEN, TABLE_FILE, table_record
from agents.training.config import field_docs
from nertz_env import nertz_v0
from nertz_env.files import write_json

POLICIES = ("shared", "per-team")
SHARED = "shared"
ENV_NAME = "nertz_v0_rllib"


class IllegalMoveCount(BaseParallelWrapper):
    """nertz_v0 with infos[agent]["illegal"] (the agent's id was off its mask this tick) and
    infos[agent]["penalties"] (its team's new R31 penalties this tick, from the engine)."""

    def __init__(self, env):
        super().__init__(env)
        self._masks, self._pen = {}, None

    def reset(self, seed=None, options=None):
        obs, infos = self.env.reset(seed=seed, options=options)
        self._masks = {a: o["action_mask"] for a, o in obs.items()}
        self._pen = self.env.unwrapped.engine.state.penalties[0].copy()
        return obs, infos

    def step(self, actions):
        obs, rewards, terms, truncs, infos = self.env.step(actions)   # it validates the ids
        illegal = {a: int(not self._masks[a][int(i)]) for a, i in actions.items()
                   if i is not None}
        pen = self.env.unwrapped.engine.state.penalties[0].copy()   # one hand per episode
        new = pen - self._pen
        self._pen = pen
        for a, info in infos.items():
            info["illegal"] = illegal.get(a, 0)
            info["penalties"] = int(new[info["team"]])
        self._masks = {a: o["action_mask"] for a, o in obs.items()}
        return obs, rewards, terms, truncs, infos


def env_config(teams: int = 2, max_ticks: int | None = None, **extra) -> dict:
    """The nertz_v0 keywords the recipe trains on (illegal_move="penalize", one hand per
    episode: IllegalMoveCount reads one hand's penalty counter); extra: other env keywords."""
    for key, want in (("episode", "hand"), ("illegal_move", "penalize")):
        if extra.get(key, want) != want:
            raise ValueError(f"{key}={extra[key]!r}: the recipe trains with {key}={want!r}")
    cfg = {"num_teams": teams, "illegal_move": "penalize", "episode": "hand", **extra}
    if max_ticks is not None:
        cfg["max_ticks"] = max_ticks
    return cfg


def make_env(cfg: dict):
    """RLlib's env creator: nertz_v0 -> IllegalMoveCount -> ParallelPettingZooEnv."""
    from ray.rllib.env.wrappers.pettingzoo_env import ParallelPettingZooEnv
    return ParallelPettingZooEnv(IllegalMoveCount(nertz_v0.parallel_env(**dict(cfg))))


def agent_teams(cfg: dict) -> dict:
    """{agent: team} of the table cfg describes (the env's own seat_team)."""
    env = nertz_v0.parallel_env(**cfg)
    return {a: env.config.seat_team[s] for s, a in enumerate(env.possible_agents)}


def write_table(ckpt, cfg: dict) -> Path:
    """CKPT/nertz_table.json: the table of the env keywords `cfg` (agents/learned/rllib.py
    table_record), written whole or not at all; the rllib agent reads it (read_table)."""
    config = nertz_v0.parallel_env(**cfg).config
    return write_json(Path(ckpt) / TABLE_FILE, table_record(config))


def policy_mapping(policy: str, cfg: dict) -> tuple[list, dict]:
    """(policy ids, {agent: policy id}) for --policy shared / per-team."""
    if policy not in POLICIES:
        raise ValueError(f"policy={policy!r}: one of {', '.join(POLICIES)}")
    teams = agent_teams(cfg)
    if policy == "shared":
        return [SHARED], dict.fromkeys(teams, SHARED)
    mapping = {a: f"team{t}" for a, t in teams.items()}
    return sorted(set(mapping.values()), key=lambda p: int(p[4:])), mapping


def count_illegal(*, episode, metrics_logger=None, **kwargs):
    """on_episode_step: the tick's illegal picks and new penalties (each team once) into the
    results' lifetime sums."""
    infos = episode.get_infos(-1)
    illegal = sum(int(i.get("illegal", 0)) for i in infos.values())
    penalties = sum({i["team"]: int(i.get("penalties", 0)) for i in infos.values()}.values())
    if metrics_logger is not None:
        metrics_logger.log_value("illegal_picks", illegal, reduce="lifetime_sum")
        metrics_logger.log_value("penalties", penalties, reduce="lifetime_sum")
        metrics_logger.log_value("agent_steps_checked", len(infos), reduce="lifetime_sum")


def build_config(policy: str = "shared", teams: int = 2, *, seed: int = 0,
                 max_ticks: int | None = 300, env_runners: int = 0, hidden=DEFAULT_HIDDEN,
                 train_batch: int = 4000, minibatch: int = 500, epochs: int = 4,
                 lr: float = 3e-4, gamma: float = 0.99, entropy: float = 0.01):
    """The PPOConfig of the recipe (new API stack: RLModule, Learner, ConnectorV2)."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.core.rl_module.multi_rl_module import MultiRLModuleSpec
    from ray.rllib.core.rl_module.rl_module import RLModuleSpec
    from ray.tune.registry import register_env

    from agents.learned.rllib import MaskedPPOModule

    cfg = env_config(teams, max_ticks)
    ids, mapping = policy_mapping(policy, cfg)
    register_env(ENV_NAME, make_env)
    spec = MultiRLModuleSpec(rl_module_specs={
        pid: RLModuleSpec(module_class=MaskedPPOModule, model_config={"hidden": list(hidden)})
        for pid in ids})
    return (PPOConfig()
            .api_stack(enable_rl_module_and_learner=True, enable_env_runner_and_connector_v2=True)
            .framework("torch")
            .environment(ENV_NAME, env_config=cfg)
            .env_runners(num_env_runners=env_runners, num_envs_per_env_runner=1)
            .learners(num_learners=0)
            .multi_agent(policies=set(ids),
                         policy_mapping_fn=lambda agent_id, episode, **kw: mapping[agent_id])
            .rl_module(rl_module_spec=spec)
            .training(train_batch_size_per_learner=train_batch, minibatch_size=minibatch,
                      num_epochs=epochs, lr=lr, gamma=gamma, entropy_coeff=entropy)
            .callbacks(on_episode_step=count_illegal)
            .debugging(seed=seed))


def _number(x):
    return None if x is None or not math.isfinite(x) else float(x)


def summarize(result: dict, seconds: float) -> dict:
    """The numbers of one train() result this recipe reports."""
    runners = result.get("env_runners", {})
    ret = runners.get("episode_return_mean")
    return {"iteration": int(result.get("training_iteration", 0)),
            "seconds": round(seconds, 3),
            "env_steps": int(runners.get("num_env_steps_sampled", 0)),
            "episodes": int(runners.get("num_episodes", 0)),
            "episode_return_mean": _number(ret),
            "module_return_mean": {k: _number(v) for k, v in
                                   runners.get("module_episode_returns_mean", {}).items()},
            "illegal_picks": int(runners.get("illegal_picks", 0)),
            "penalties": int(runners.get("penalties", 0)),
            "agent_steps_checked": int(runners.get("agent_steps_checked", 0))}


def train(config, iterations: int, out=None, log=print) -> tuple[list, Path | None]:
    """Build the algorithm, run `iterations` train() calls, save the checkpoint to
    OUT/checkpoint; returns (per-iteration summaries, checkpoint path or None)."""
    if iterations < 1:
        raise ValueError(f"iterations={iterations!r} must be >= 1")
    algo = config.build_algo()
    rows, ckpt = [], None
    try:
        for _ in range(iterations):
            t0 = time.perf_counter()
            result = algo.train()
            rows.append(summarize(result, time.perf_counter() - t0))
            if log:
                log(json.dumps(rows[-1]))
        if out is not None:
            out = Path(out)
            out.mkdir(parents=True, exist_ok=True)
            ckpt = out / "checkpoint"
            algo.save_to_path(str(ckpt.resolve()))
            write_table(ckpt, dict(config.env_config))
            write_json(out / "results.json", rows, indent=1)
    finally:
        algo.stop()
    return rows, ckpt


@dataclass
class Args:
    """The recipe's arguments, one `--flag` each (`--train-batch` for train_batch)."""
    policy: str = "shared"
    """'shared' (one policy for every seat) or 'per-team' (one per team)"""
    teams: int = 2
    """teams at the table, 2..8"""
    iterations: int = 10
    """train() calls"""
    seed: int = 0
    """seed of envs and networks"""
    out: str = "runs/rllib"
    """output dir: checkpoint/ and results.json"""
    env_runners: int = 0
    """remote EnvRunner actors; 0 samples in the driver"""
    max_ticks: int = 300
    """ticks after which a hand is truncated (R26)"""
    hidden: tuple = DEFAULT_HIDDEN
    """hidden layer widths of both heads, comma-separated"""
    train_batch: int = 4000
    """env steps per iteration"""
    minibatch: int = 500
    """PPO minibatch size"""
    epochs: int = 4
    """PPO epochs per iteration"""
    lr: float = 3e-4
    """Adam learning rate"""
    num_cpus: int | None = None
    """CPUs of the local Ray instance (None: all)"""
    address: str | None = None
    """join a running Ray cluster (ray start)"""


def parse_args(argv=None) -> Args:
    """Args from the command line; argparse's exit (code 2) on a bad value."""
    p = argparse.ArgumentParser(prog="python -m train.rllib_ppo",
                                description=__doc__.split("\n\n")[0])
    docs = field_docs(Args)
    kinds = {"lr": float, "num_cpus": int, "hidden": str}       # the others: their default's type
    for f in fields(Args):
        shown = ",".join(map(str, f.default)) if f.name == "hidden" else f.default
        p.add_argument("--" + f.name.replace("_", "-"), default=shown,
                       type=kinds.get(f.name, type(f.default) if f.default is not None else str),
                       choices=POLICIES if f.name == "policy" else None,
                       help=f"{docs[f.name]} (default {shown})")
    args = p.parse_args(argv)
    try:
        args.hidden = tuple(int(h) for h in args.hidden.split(","))
    except ValueError:
        p.error(f"--hidden {args.hidden!r}: comma-separated positive ints, e.g. 64,64")
    for name in ("teams", "iterations", "train_batch", "minibatch", "epochs"):
        if getattr(args, name) < 1:
            p.error(f"--{name.replace('_', '-')} must be >= 1")
    if not 2 <= args.teams <= 8:
        p.error("--teams must be 2..8")
    if args.env_runners < 0 or any(h < 1 for h in args.hidden):
        p.error("--env-runners must be >= 0 and --hidden widths >= 1")
    return Args(**vars(args))


def main(argv=None) -> int:
    args = parse_args(argv)
    import ray
    import torch
    torch.set_num_threads(1)                     # small nets: threads only contend
    ray.init(address=args.address, num_cpus=args.num_cpus, include_dashboard=False,
             log_to_driver=False)
    try:
        config = build_config(args.policy, args.teams, seed=args.seed, max_ticks=args.max_ticks,
                              env_runners=args.env_runners, hidden=args.hidden,
                              train_batch=args.train_batch, minibatch=args.minibatch,
                              epochs=args.epochs, lr=args.lr)
        rows, ckpt = train(config, args.iterations, args.out)
    finally:
        ray.shutdown()
    illegal = rows[-1]["illegal_picks"] + rows[-1]["penalties"]
    print(f"saved {ckpt}; illegal picks {rows[-1]['illegal_picks']}, penalties "
          f"{rows[-1]['penalties']} over {rows[-1]['agent_steps_checked']} agent steps")
    spec = f"rllib:{ckpt}" + (",policy=team0" if args.policy == "per-team" else "")
    print(f"play it: nertz tournament --agents {spec},heuristic --teams {args.teams} --deals 100")
    return 1 if illegal else 0


if __name__ == "__main__":
    sys.exit(main())
