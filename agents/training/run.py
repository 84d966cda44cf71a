"""A training run: `train(cfg)` and the SB3 callbacks it runs (the library behind `nertz train
--learner sb3`; needs the `[train]` extra).

    cfg = TrainConfig(out="runs/t1", learner="sb3", timesteps=2_000_000, teams=2)
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

What it prints: a line before every phase that can take more than a few seconds (numba's
first compile included), so no pause is silent. The progress bar counts the steps that will
run (SB3 runs whole rollouts of n_steps x num_envs: `steps_to_run`) and ends exactly there;
its rate and ETA are steps over the bar's whole wall time, evaluations and checkpoints
included (no smoothing); the other lines of the run are printed above it (`LogAboveBar`),
never through it.

The arguments and their checks are config.py's; a run with `resume` set continues a
checkpoint (checkpoints.py `resume_config`, `load_checkpoint`).

Imports every other training module but lean_ppo.py (only lean_ppo.py imports this one:
its log line above the bar); needs the `[train]` extra: torch, stable-baselines3 and
sb3-contrib are imported at the top, through nertz_env.optional, whose error names the extra.
"""
from __future__ import annotations

import os
import shlex
import sys
import time
from pathlib import Path

from nertz_env.config import RulesConfig
from nertz_env.files import atomic_path
from nertz_env.optional import available, require

from .checkpoints import adopt_snapshots, load_checkpoint, run_info, save_checkpoint, save_snapshot
from .folder import check_out, checkpoint_steps, naming, stopped_cleanly, write_json
from .config import TrainConfig
from .evaluation import compile_note, evaluate_run, numba_compiling, tournament_kernels
from .imitation import warm_start
from .league import league_of, make_env

torch = require("torch", "train", "training")
MaskablePPO = require("sb3_contrib", "train", "training").MaskablePPO
_callbacks = require("stable_baselines3.common.callbacks", "train", "training")
BaseCallback, CallbackList = _callbacks.BaseCallback, _callbacks.CallbackList
Logger = require("stable_baselines3.common.logger", "train", "training").Logger


def build_model(cfg: TrainConfig, env, tensorboard_log=None):
    """A fresh MaskablePPO of the config's hyperparameters on env."""
    p = cfg.ppo
    return MaskablePPO(
        "MlpPolicy", env, n_steps=p.n_steps, batch_size=p.batch_size, n_epochs=p.n_epochs,
        learning_rate=p.learning_rate, gamma=p.gamma, gae_lambda=p.gae_lambda,
        clip_range=p.clip_range, ent_coef=p.ent_coef, vf_coef=p.vf_coef, seed=cfg.run.seed,
        device=cfg.run.device, verbose=0, tensorboard_log=tensorboard_log,
        policy_kwargs={"net_arch": list(p.net_arch)})


def tensorboard_available() -> bool:
    """Whether TensorBoard logs can be written (the tensorboard package is installed)."""
    return available("tensorboard")


def rules_line(cfg: TrainConfig) -> str:
    """The line a run prints first: the rules it trains on beside those tournaments play."""
    r, t = cfg.rules(), RulesConfig(num_teams=cfg.tables.teams)
    if r == t:
        return (f"rules: {t.num_teams} teams, hands cut at max_ticks={r.max_ticks}: the rules "
                "`nertz tournament` plays by default; evaluations play them too")
    return (f"rules: {t.num_teams} teams, hands cut at max_ticks={r.max_ticks}, NOT the "
            f"max_ticks={t.max_ticks} `nertz tournament` plays by default; evaluations play "
            "the training rules, so judge the final model with `nertz tournament`")


def steps_to_run(done: int, target: int, rollout: int) -> int:
    """The steps model.learn(target - done) runs from `done`: SB3 collects whole rollouts
    (`rollout` = n_steps x num_envs steps), so target - done rounded up to a multiple of it."""
    return max(0, -(-(target - done) // rollout)) * rollout


def env_kernels(cfg: TrainConfig) -> tuple:
    """The numba kernels the training env and the warm start's teacher call."""
    from nertz_env.core.batch import vec_step_observe_batch, vec_step_observe_range
    from nertz_env.core.policies import policy_actions_range
    from nertz_env.engine import PARALLEL_MIN_TABLES
    big = cfg.tables.num_envs >= PARALLEL_MIN_TABLES
    step = vec_step_observe_batch if big else vec_step_observe_range
    return (step, policy_actions_range) if cfg.warm_start.bc_rows else (step,)


def files_line(cfg: TrainConfig, run: Path, tb) -> str:
    """The last line of a run: what it left where (only what is there), and the commands
    that use it."""
    final = run / "final.zip"
    agents = shlex.quote(f"ppo:{final},{cfg.evaluation.eval_against}")
    out = [f"run folder {run}: final.zip (the model)"]
    done = checkpoint_steps(run, lean=False)
    if done:
        step, ck = done[-1]
        out.append(f"checkpoints/ (continue the latest: nertz train --resume "
                   f"{shlex.quote(str(ck))} --timesteps TOTAL, TOTAL the steps to reach in "
                   f"all, above its {step:,})")
    evals = [n for n in ("eval.csv", "eval.jsonl") if (run / n).is_file()]
    if evals:
        out.append(" and ".join(evals) + " (every evaluation)")
    if (run / "bc.json").is_file():
        out.append("bc.json (the warm start)")
    if tb and Path(tb).is_dir():
        out.append(f"tb/ (tensorboard --logdir {shlex.quote(str(run / 'tb'))})")
    return (", ".join(out) + f"; play the model: nertz tournament --agents {agents} "
            f"--teams {cfg.tables.teams}")


def quiet_logger(tb):
    """SB3's logger for a run: without TensorBoard, one that writes nothing anywhere (SB3's
    own default makes an empty SB3-* folder in the system temp folder every run); with it,
    None (SB3 then logs into tb/, in the run)."""
    if tb:
        return None
    return Logger(folder=None, output_formats=[])


def train(cfg: TrainConfig, log=print, callbacks=(), overwrite: bool = False, begin=None):
    """A whole run (module docstring); returns the trained model (also saved as final.zip).
    callbacks: more SB3 callbacks, run after the run's own; overwrite: out may hold a
    finished run of nertz train, which this one replaces (deleted once it ends; put back if
    it stops before its first checkpoint); begin(): called once the run folder exists (every
    refusal before it), before any other line of the run: `nertz train` prints its config
    line there.

    The run folder (out) is checked first (new, empty, or a resume's own run folder:
    checkpoints.py check_out) and created only once the model is made (every refusal
    before it, and no line printed before it: a refused run prints its error alone); a run
    stopped before its first checkpoint removes it again, one stopped later keeps it and
    says which checkpoint continues it (checkpoints.py stopped_cleanly)."""
    if cfg.run.learner != "sb3":
        raise ValueError(f"learner={cfg.run.learner!r}: this is SB3's run; the lean PPO is "
                         "agents/training/lean_ppo.py train_run")
    run = Path(cfg.run.out)
    state = check_out(cfg, overwrite)
    os.environ.setdefault("OMP_NUM_THREADS", str(cfg.run.torch_threads))
    torch.set_num_threads(cfg.run.torch_threads)
    tb, later = None, []                 # lines held until the folder exists
    if cfg.run.tensorboard:
        if tensorboard_available():
            tb = str(run / "tb")
        else:
            later.append("tensorboard is not installed: no TensorBoard logs (pip install "
                         "tensorboard)")
    if cfg.run.resume:
        model = load_checkpoint(cfg, tb, later.append)
    else:
        model = build_model(cfg, make_env(cfg), tb)
    logger = quiet_logger(tb)
    if logger is not None:
        model.set_logger(logger)
    note = compile_note(env_kernels(cfg), f"the training env ({cfg.tables.num_envs} tables)",
                        "the progress bar waits at its start meanwhile" if cfg.run.progress else "")
    with stopped_cleanly(cfg, state, log):          # makes the folder
        write_json(run / "config.json", run_info(cfg))
        if begin is not None:
            begin()
        for line in [rules_line(cfg), *later, note]:
            if line:
                log(line)
        if cfg.run.resume and state != "own":
            adopt_snapshots(model, run)
        ws = cfg.warm_start
        if not cfg.run.resume and ws.bc_rows:
            log(f"imitation warm start: collecting {ws.bc_rows:,} positions of {ws.teacher}, "
                f"then {ws.bc_epochs} epoch(s) of behaviour cloning...")
            with numba_compiling() as compiling:
                warm_start(model, cfg, run, LogAboveBar(log))
            if compiling[0] >= 0.5:
                log(f"imitation: {compiling[0]:.1f} s of that was numba compiling (cached for "
                    "later runs)")
        learn(model, cfg, run, log, callbacks)
        final = run / "final.zip"
        with naming(final), atomic_path(final) as tmp:
            model.save(tmp)
    log(files_line(cfg, run, tb))
    return model


def learn(model, cfg: TrainConfig, run: Path, log, callbacks) -> None:
    """The PPO part of a run, to cfg.run.timesteps, and its last checkpoint (a longer run can
    resume from the end too)."""
    rollout, saved = cfg.ppo.n_steps * cfg.tables.num_envs, False
    steps = steps_to_run(model.num_timesteps, cfg.run.timesteps, rollout)
    if steps > 0:
        since = f" from step {model.num_timesteps:,}" if model.num_timesteps else ""
        log(f"PPO: {steps:,} steps{since}, {steps // rollout} rollouts of {rollout:,} (n_steps "
            f"{cfg.ppo.n_steps} x num_envs {cfg.tables.num_envs}; timesteps="
            f"{cfg.run.timesteps:,} rounded up to whole rollouts)")
        t0, n0 = time.perf_counter(), model.num_timesteps
        own = make_callbacks(cfg, run, log)
        model.learn(cfg.run.timesteps - model.num_timesteps,
                    callback=CallbackList(own + list(callbacks)),
                    reset_num_timesteps=False, tb_log_name="ppo")
        saved = any(getattr(c, "saved_at", None) == model.num_timesteps for c in own)
        dt = time.perf_counter() - t0
        log(f"trained {model.num_timesteps - n0:,} steps in {dt:.1f} s "
            f"({(model.num_timesteps - n0) / max(dt, 1e-9):,.0f} env-steps/s, evaluations "
            f"and checkpoints included)")
    else:
        log(f"PPO: nothing to run (the model is at step {model.num_timesteps:,}, "
            f"timesteps={cfg.run.timesteps:,}; give a larger --timesteps to train on)")
    if not saved:                                # the end too can be resumed (a longer run)
        log(f"checkpoint {save_checkpoint(model, cfg, run)}")


class LogAboveBar:
    """A run's log: lines go to `log`, and while a progress bar is drawn (`bar`) each is
    printed above it (tqdm clears the bar, the line is written, the bar is drawn again)
    instead of into the middle of its line."""

    def __init__(self, log=print):
        self.log = log
        self.bar = None

    def __call__(self, line: str) -> None:
        if self.bar is None:
            self.log(line)
            return
        with self.bar.external_write_mode(file=sys.stdout):
            self.log(line)
            sys.stdout.flush()             # the line out before the bar is drawn again below it


def progress_bar(start: int, total: int):
    """The run's tqdm bar from step `start` to `total`: rate and ETA from the steps over the
    whole elapsed time (smoothing 0), so a long evaluation slows them as it slows the run."""
    tqdm = require("tqdm.auto", "tqdm", "the progress bar").tqdm
    return tqdm(total=total, initial=start, desc="PPO", unit="step", unit_scale=True,
                dynamic_ncols=True, smoothing=0, mininterval=0.5, file=sys.stderr)


def make_callbacks(cfg: TrainConfig, run: Path, log=print):
    """The callbacks of a run: LeagueLog, then those switched on of Snapshot, Evaluation,
    Checkpoint and Progress, in that order (a checkpoint holds the league differences of the
    evaluation at its step, so the one at the end is final; Progress last: its bar closes
    after the final evaluation and checkpoint, so its time includes them). Their lines go
    through one LogAboveBar of `log`."""
    say = log if isinstance(log, LogAboveBar) else LogAboveBar(log)
    phase = Phase(say)
    parts = []
    if cfg.league.snapshot_every:           # first: evaluated and listed by the checkpoint
        parts.append(("snapshot", Snapshot(cfg.league.snapshot_every, cfg, run, say)))
    if cfg.evaluation.eval_every:           # before the checkpoint: it keeps the league's diffs
        parts.append(("evaluation", Evaluation(cfg.evaluation.eval_every, cfg, run, say)))
    if cfg.run.checkpoint_every:
        parts.append(("checkpoint", Checkpoint(cfg.run.checkpoint_every, cfg, run, say)))
    phase.parts = parts
    out = [LeagueLog(), phase] + [c for _, c in parts]
    if cfg.run.progress:
        out.append(Progress(say))
    return out


class RolloutEvery(BaseCallback):
    """Runs `fire` at the start of the first rollout after every `every` steps (between
    updates: the model then is exactly what the next update starts from), and at the end;
    Snapshot, Evaluation and Checkpoint are its kinds, each with the run's config, folder and
    log."""

    def __init__(self, every: int, cfg: TrainConfig, run: Path, say):
        super().__init__()
        self.every, self.cfg, self.run, self.say = every, cfg, run, say
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
    saved_at = None

    def fire(self) -> None:
        path = save_checkpoint(self.model, self.cfg, self.run)
        self.saved_at = int(self.num_timesteps)
        self.say(f"checkpoint {path}")


class Evaluation(RolloutEvery):
    first = True

    def fire(self) -> None:
        ev = self.cfg.evaluation
        if self.first:
            note = compile_note(tournament_kernels(), f"first evaluation ({ev.eval_deals} "
                                f"duplicate deals against {ev.eval_against})")
            if note:
                self.say(note)
            self.first = False
        evaluate_run(self.model, self.cfg, self.run, self.logger, self.say)


class Snapshot(RolloutEvery):
    def fire(self) -> None:
        path = save_snapshot(self.model, self.cfg, self.run)
        self.say(f"snapshot {path} joins the league")


class Progress(BaseCallback):
    """A tqdm bar over the steps this learn() runs (SB3's own bar needs rich as well): its
    total is what SB3 will run, whole rollouts (steps_to_run); drawn through `say` (its
    lines above it)."""
    bar = None

    def __init__(self, say):
        super().__init__()
        self.say = say

    def _on_training_start(self) -> None:
        if not available("tqdm"):
            self.say("tqdm is not installed: no progress bar (pip install tqdm)")
            return
        start = self.num_timesteps
        rollout = self.model.n_steps * self.model.n_envs
        total = start + steps_to_run(start, self.locals["total_timesteps"], rollout)
        self.bar = self.say.bar = progress_bar(start, total)

    def _on_step(self) -> bool:
        if self.bar is not None:
            self.bar.update(self.num_timesteps - self.bar.n)
        return True

    def _on_rollout_end(self) -> None:
        if self.bar is not None and self.num_timesteps >= self.bar.total:
            self.bar.set_description_str("PPO: last update", refresh=True)

    def _on_training_end(self) -> None:
        if self.bar is not None:
            self.bar.update(self.num_timesteps - self.bar.n)
            self.bar.close()
            self.bar = self.say.bar = None


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


class Phase(BaseCallback):
    """Before the end's snapshot, evaluation and checkpoint (run by the callbacks after it):
    the bar, full by then, says which of them it waits for."""
    parts = ()

    def __init__(self, say):
        super().__init__()
        self.say = say

    def _on_step(self) -> bool:
        return True

    def _on_training_end(self) -> None:
        due = [name for name, c in self.parts if self.model.num_timesteps >= c.next_at]
        if self.say.bar is not None and due:
            self.say.bar.set_description_str("PPO done: final " + ", ".join(due), refresh=True)
