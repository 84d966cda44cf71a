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

Imports every other training module (none imports this one); torch, stable-baselines3 and
sb3-contrib only inside functions.
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
    if r == t:
        return (f"rules: {cfg.teams} teams, hands cut at max_ticks={r.max_ticks}: the rules "
                "`nertz tournament` plays by default; evaluations play them too")
    return (f"rules: {cfg.teams} teams, hands cut at max_ticks={r.max_ticks}, NOT the "
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
    step = vec_step_observe_batch if cfg.num_envs >= PARALLEL_MIN_TABLES else vec_step_observe_range
    return (step, policy_actions_range) if cfg.bc_rows else (step,)


def files_line(cfg: TrainConfig, run: Path, tb) -> str:
    """The last line of a run: what it left where (only what is there), and the commands
    that use it."""
    final = run / "final.zip"
    agents = shlex.quote(f"ppo:{final},{cfg.eval_against}")
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
            f"--teams {cfg.teams}")


def quiet_logger(tb):
    """SB3's logger for a run: without TensorBoard, one that writes nothing anywhere (SB3's
    own default makes an empty SB3-* folder in the system temp folder every run); with it,
    None (SB3 then logs into tb/, in the run)."""
    if tb:
        return None
    Logger = require("stable_baselines3.common.logger", "train", "training").Logger
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
    torch = require("torch", "train", "training")
    CallbackList = require("stable_baselines3.common.callbacks", "train", "training").CallbackList

    if cfg.learner != "sb3":
        raise ValueError(f"learner={cfg.learner!r}: this is SB3's run; the lean PPO is "
                         "agents/training/lean_ppo.py train_run")
    run = Path(cfg.out)
    state = check_out(cfg, overwrite)
    os.environ.setdefault("OMP_NUM_THREADS", str(cfg.torch_threads))
    torch.set_num_threads(cfg.torch_threads)
    tb, later = None, []                 # lines held until the folder exists
    if cfg.tensorboard:
        if tensorboard_available():
            tb = str(run / "tb")
        else:
            later.append("tensorboard is not installed: no TensorBoard logs (pip install "
                         "tensorboard)")
    if cfg.resume:
        model = load_checkpoint(cfg, tb, later.append)
    else:
        model = build_model(cfg, make_env(cfg), tb)
    logger = quiet_logger(tb)
    if logger is not None:
        model.set_logger(logger)
    note = compile_note(env_kernels(cfg), f"the training env ({cfg.num_envs} tables)",
                        "the progress bar waits at its start meanwhile" if cfg.progress else "")
    with stopped_cleanly(cfg, state, log):          # makes the folder
        write_json(run / "config.json", run_info(cfg))
        if begin is not None:
            begin()
        for line in [rules_line(cfg), *later, note]:
            if line:
                log(line)
        if cfg.resume and state != "own":
            adopt_snapshots(model, run)
        if not cfg.resume and cfg.bc_rows:
            log(f"imitation warm start: collecting {cfg.bc_rows:,} positions of {cfg.teacher}, "
                f"then {cfg.bc_epochs} epoch(s) of behaviour cloning...")
            with numba_compiling() as compiling:
                warm_start(model, cfg, run, LogAboveBar(log))
            if compiling[0] >= 0.5:
                log(f"imitation: {compiling[0]:.1f} s of that was numba compiling (cached for "
                    "later runs)")
        learn(model, cfg, run, log, callbacks, CallbackList)
        final = run / "final.zip"
        with naming(final), atomic_path(final) as tmp:
            model.save(tmp)
    log(files_line(cfg, run, tb))
    return model


def learn(model, cfg: TrainConfig, run: Path, log, callbacks, CallbackList) -> None:
    """The PPO part of a run, to cfg.timesteps, and its last checkpoint (a longer run can
    resume from the end too)."""
    rollout, saved = cfg.n_steps * cfg.num_envs, False
    steps = steps_to_run(model.num_timesteps, cfg.timesteps, rollout)
    if steps > 0:
        since = f" from step {model.num_timesteps:,}" if model.num_timesteps else ""
        log(f"PPO: {steps:,} steps{since}, {steps // rollout} rollouts of {rollout:,} (n_steps "
            f"{cfg.n_steps} x num_envs {cfg.num_envs}; timesteps={cfg.timesteps:,} rounded up "
            "to whole rollouts)")
        t0, n0 = time.perf_counter(), model.num_timesteps
        own = make_callbacks(cfg, run, log)
        model.learn(cfg.timesteps - model.num_timesteps,
                    callback=CallbackList(own + list(callbacks)),
                    reset_num_timesteps=False, tb_log_name="ppo")
        saved = any(getattr(c, "saved_at", None) == model.num_timesteps for c in own)
        dt = time.perf_counter() - t0
        log(f"trained {model.num_timesteps - n0:,} steps in {dt:.1f} s "
            f"({(model.num_timesteps - n0) / max(dt, 1e-9):,.0f} env-steps/s, evaluations "
            f"and checkpoints included)")
    else:
        log(f"PPO: nothing to run (the model is at step {model.num_timesteps:,}, "
            f"timesteps={cfg.timesteps:,}; give a larger --timesteps to train on)")
    if not saved:                                # the end too can be resumed (a longer run)
        log(f"checkpoint {save_checkpoint(model, cfg, run)}")


def _callbacks_base():
    """SB3's BaseCallback (imported on first use: it imports torch)."""
    return require("stable_baselines3.common.callbacks", "train", "training").BaseCallback


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
    BaseCallback = _callbacks_base()
    say = log if isinstance(log, LogAboveBar) else LogAboveBar(log)
    Snapshot, Evaluation, Checkpoint = _periodic_callbacks(BaseCallback, cfg, run, say)
    Progress, LeagueLog, Phase = _run_callbacks(BaseCallback, say)
    phase = Phase()
    parts = []
    if cfg.snapshot_every:                  # first: evaluated and listed by the checkpoint
        parts.append(("snapshot", Snapshot(cfg.snapshot_every)))
    if cfg.eval_every:                      # before the checkpoint: it keeps the league's diffs
        parts.append(("evaluation", Evaluation(cfg.eval_every)))
    if cfg.checkpoint_every:
        parts.append(("checkpoint", Checkpoint(cfg.checkpoint_every)))
    phase.parts = parts
    out = [LeagueLog(), phase] + [c for _, c in parts]
    if cfg.progress:
        out.append(Progress())
    return out


def _periodic_callbacks(BaseCallback, cfg: TrainConfig, run: Path, say) -> tuple:
    """make_callbacks' (Snapshot, Evaluation, Checkpoint) classes: each fires at the start of
    the first rollout after every `every` steps, and at the end."""

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
        saved_at = None

        def fire(self) -> None:
            path = save_checkpoint(self.model, cfg, run)
            self.saved_at = int(self.num_timesteps)
            say(f"checkpoint {path}")

    class Evaluation(RolloutEvery):
        first = True

        def fire(self) -> None:
            if self.first:
                note = compile_note(tournament_kernels(),
                                    f"first evaluation ({cfg.eval_deals} duplicate deals "
                                    f"against {cfg.eval_against})")
                if note:
                    say(note)
                self.first = False
            evaluate_run(self.model, cfg, run, self.logger, say)

    class Snapshot(RolloutEvery):
        def fire(self) -> None:
            path = save_snapshot(self.model, cfg, run)
            say(f"snapshot {path} joins the league")

    return Snapshot, Evaluation, Checkpoint


def _run_callbacks(BaseCallback, say) -> tuple:
    """make_callbacks' (Progress, LeagueLog, Phase) classes: the bar, the league's scalars
    and the bar's words before the end's snapshot, evaluation and checkpoint."""

    class Progress(BaseCallback):
        """A tqdm bar over the steps this learn() runs (SB3's own bar needs rich as well):
        its total is what SB3 will run, whole rollouts (steps_to_run)."""
        bar = None

        def _on_training_start(self) -> None:
            if not available("tqdm"):
                say("tqdm is not installed: no progress bar (pip install tqdm)")
                return
            start = self.num_timesteps
            rollout = self.model.n_steps * self.model.n_envs
            total = start + steps_to_run(start, self.locals["total_timesteps"], rollout)
            self.bar = say.bar = progress_bar(start, total)

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
                self.bar = say.bar = None

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
        """Before the end's snapshot, evaluation and checkpoint (run by the callbacks after
        it): the bar, full by then, says which of them it waits for."""
        parts = ()

        def _on_step(self) -> bool:
            return True

        def _on_training_end(self) -> None:
            due = [name for name, c in self.parts if self.model.num_timesteps >= c.next_at]
            if say.bar is not None and due:
                say.bar.set_description_str("PPO done: final " + ", ".join(due), refresh=True)

    return Progress, LeagueLog, Phase
