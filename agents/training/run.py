"""A training run: `train(cfg)` and the SB3 callbacks it runs (the library behind `nertz train`;
needs the `[train]` extra).

    cfg = TrainConfig(out="runs/t1", timesteps=2_000_000, teams=2)
    model = train(cfg)                       # imitation warm start, then MaskablePPO

What a run does, in order:
1. Environment: `NertzVecEnv` (num_envs tables in one numba call, the learner at seat 0) with
   the league's opponents written per table (league.py `LeagueVecEnv`), wrapped in SB3's
   `VecMonitor` (info["episode"] and rollout/ep_rew_mean: NertzVecEnv fills neither itself).
2. Warm start (`bc_rows` > 0): behaviour cloning of `teacher` (imitation.py).
3. MaskablePPO on the same env, with TensorBoard logs (`tensorboard`), a tqdm progress bar,
   league snapshots every `snapshot_every` steps, a checkpoint every `checkpoint_every`
   steps (checkpoints.py) and an evaluation every `eval_every` steps (evaluation.py).
4. The end: a last checkpoint (a longer run can resume from it) and final.zip.

The arguments and their checks are config.py's; a run with `resume` set continues a
checkpoint (checkpoints.py `resume_config`, `load_checkpoint`).

Imports every other training module (none imports this one); torch, stable-baselines3 and
sb3-contrib only inside functions.
"""
from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path

from nertz_env.config import RulesConfig
from nertz_env.optional import available, require

from .checkpoints import load_checkpoint, run_info, save_checkpoint, save_snapshot
from .config import TrainConfig
from .evaluation import evaluate_run
from .imitation import warm_start
from .league import league_of, make_env


def build_model(cfg: TrainConfig, env, tensorboard_log=None):
    """A fresh MaskablePPO of the config's hyperparameters on env."""
    MaskablePPO = require("sb3_contrib", "train", "training").MaskablePPO
    return MaskablePPO(
        "MlpPolicy", env, n_steps=cfg.n_steps, batch_size=cfg.batch_size, n_epochs=cfg.n_epochs,
        learning_rate=cfg.learning_rate, gamma=cfg.gamma, gae_lambda=cfg.gae_lambda,
        clip_range=cfg.clip_range, ent_coef=cfg.ent_coef, vf_coef=cfg.vf_coef, seed=cfg.seed,
        device=cfg.device, verbose=0, tensorboard_log=tensorboard_log,
        policy_kwargs={"net_arch": list(cfg.net_arch)})


def tensorboard_available() -> bool:
    """Whether TensorBoard logs can be written (the tensorboard package is installed)."""
    return available("tensorboard")


def rules_line(cfg: TrainConfig) -> str:
    """The line a run prints first: the rules it trains on beside those tournaments play."""
    r, t = cfg.rules(), RulesConfig(num_teams=cfg.teams)
    same = "the same as" if r == t else "NOT the same as"
    return (f"rules: training plays {cfg.teams} teams, max_ticks={r.max_ticks}; `nertz "
            f"tournament` plays max_ticks={t.max_ticks} by default ({same} training); "
            f"evaluations play the training rules")


def train(cfg: TrainConfig, log=print, callbacks=()):
    """A whole run (module docstring); returns the trained model (also saved as final.zip).
    callbacks: more SB3 callbacks, run after the run's own."""
    torch = require("torch", "train", "training")
    CallbackList = require("stable_baselines3.common.callbacks", "train", "training").CallbackList

    os.environ.setdefault("OMP_NUM_THREADS", str(cfg.torch_threads))
    torch.set_num_threads(cfg.torch_threads)
    run = Path(cfg.out)
    if not cfg.resume and (run / "config.json").exists():
        raise ValueError(f"out={cfg.out!r} already holds a run (config.json): give another "
                         "folder, or resume one of its checkpoints")
    try:
        run.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise ValueError(f"out={cfg.out!r}: cannot create that folder ({err.strerror or err})") \
            from None
    tb = None
    if cfg.tensorboard:
        if tensorboard_available():
            tb = str(run / "tb")
        else:
            log("tensorboard is not installed: no TensorBoard logs (pip install tensorboard)")
    log(rules_line(cfg))
    (run / "config.json").write_text(json.dumps(run_info(cfg), indent=2) + "\n")

    if cfg.resume:
        model = load_checkpoint(cfg, tb, log)
    else:
        env = make_env(cfg)
        model = build_model(cfg, env, tb)
        if cfg.bc_rows:
            warm_start(model, cfg, run, log)
    remaining = cfg.timesteps - model.num_timesteps
    rollout = cfg.n_steps * cfg.num_envs
    if remaining > 0:
        log(f"PPO: {remaining:,} steps to go, {-(-remaining // rollout)} rollouts of {rollout:,} "
            f"(n_steps x num_envs): {-(-remaining // rollout) * rollout:,} steps")
        t0, n0 = time.perf_counter(), model.num_timesteps
        cbs = CallbackList(make_callbacks(cfg, run, log) + list(callbacks))
        model.learn(remaining, callback=cbs,
                    reset_num_timesteps=False, tb_log_name="ppo")
        dt = time.perf_counter() - t0
        log(f"trained {model.num_timesteps - n0:,} steps in {dt:.1f} s "
            f"({(model.num_timesteps - n0) / max(dt, 1e-9):,.0f} env-steps/s, evaluations "
            f"and checkpoints included)")
    save_checkpoint(model, cfg, run)             # the end too can be resumed (a longer run)
    model.save(run / "final.zip")
    log(f"saved {run / 'final.zip'} (play it: nertz tournament --agents "
        f"ppo:{run / 'final.zip'},{cfg.eval_against} --teams {cfg.teams})")
    return model


def _callbacks_base():
    """SB3's BaseCallback (imported on first use: it imports torch)."""
    return require("stable_baselines3.common.callbacks", "train", "training").BaseCallback


def make_callbacks(cfg: TrainConfig, run: Path, log=print):
    """The callbacks of a run: LeagueLog, then those switched on of Progress, Snapshot,
    Checkpoint and Evaluation, in that order."""
    BaseCallback = _callbacks_base()

    class RolloutEvery(BaseCallback):
        """Runs `fire` at the start of the first rollout after every `every` steps (between
        updates: the model then is exactly what the next update starts from)."""

        def __init__(self, every: int):
            super().__init__()
            self.every = every
            self.next_at = None

        def _on_training_start(self) -> None:
            self.next_at = (self.num_timesteps // self.every + 1) * self.every

        def _on_rollout_start(self) -> None:
            if self.num_timesteps >= self.next_at:
                self.fire()
                self.next_at = (self.num_timesteps // self.every + 1) * self.every

        def _on_step(self) -> bool:
            return True

        def _on_training_end(self) -> None:
            if self.num_timesteps >= self.next_at:
                self.fire()

    class Checkpoint(RolloutEvery):
        def fire(self) -> None:
            path = save_checkpoint(self.model, cfg, run)
            log(f"checkpoint {path}")

    class Evaluation(RolloutEvery):
        def fire(self) -> None:
            evaluate_run(self.model, cfg, run, self.logger, log)

    class Snapshot(RolloutEvery):
        def fire(self) -> None:
            path = save_snapshot(self.model, cfg, run)
            log(f"snapshot {path} joins the league")

    class Progress(BaseCallback):
        """A tqdm bar over the run's steps (SB3's own bar needs rich as well)."""

        def _on_training_start(self) -> None:
            if not available("tqdm"):
                log("tqdm is not installed: no progress bar (pip install tqdm)")
                self.bar = None
                return
            tqdm = require("tqdm.auto", "tqdm", "the progress bar").tqdm
            self.bar = tqdm(total=self.locals["total_timesteps"], initial=self.num_timesteps,
                            unit="step", unit_scale=True, dynamic_ncols=True, file=sys.stderr)
            self.last = self.num_timesteps

        def _on_step(self) -> bool:
            if self.bar is not None:
                self.bar.update(self.num_timesteps - self.last)
                self.last = self.num_timesteps
            return True

        def _on_training_end(self) -> None:
            if self.bar is not None:
                self.bar.close()

    class LeagueLog(BaseCallback):
        """league/* scalars after every rollout: each entry's weight and the learner's mean
        relative points in its training hands."""

        def _on_step(self) -> bool:
            return True

        def _on_rollout_end(self) -> None:
            for s in league_of(self.model.get_env()).stats():
                self.logger.record(f"league/weight/{s['name']}", s["weight"])
                if s["hands"]:
                    self.logger.record(f"league/train_relative/{s['name']}", s["mean_relative"])

    out = [LeagueLog()]
    if cfg.progress:
        out.append(Progress())
    if cfg.snapshot_every:                  # before the checkpoint: it lists the snapshots
        out.append(Snapshot(cfg.snapshot_every))
    if cfg.checkpoint_every:
        out.append(Checkpoint(cfg.checkpoint_every))
    if cfg.eval_every:
        out.append(Evaluation(cfg.eval_every))
    return out
