"""`nertz train`: its parser (one option per TrainConfig field, flat, the field's docstring as
its help) and its command. The training itself is agents/training/'s; this module imports
only its modules without torch (config, folder, recipe) at the top, so that `nertz --help`
(which builds every parser) waits for neither torch nor stable-baselines3 and works without
the `[train]` extra; the run's modules (run.py, lean_ppo.py, checkpoints.py for --resume)
are imported when a run starts, their first line naming the extra where it is missing."""
from __future__ import annotations

import argparse
import signal
import sys
import threading
from contextlib import contextmanager

from nertz_env.config import RulesConfig

from ..training.folder import plain
from ..training.config import (
    BY_LEARNER,
    DEVICES,
    FIXED_ON_RESUME,
    LEARNERS,
    NEEDS,
    OBSERVATIONS,
    PARTNERS,
    REWARDS,
    TrainConfig,
    check_given,
    field_docs,
    flat_defaults,
    learner_default,
    require_train,
)

BOOLEANS = ("tensorboard", "progress", "bc_value")       # --x / --no-x
LISTS = ("opponents", "net_arch")                         # comma-separated on the command line
CHOICES = {"reward": REWARDS, "device": DEVICES, "learner": LEARNERS, "partner": PARTNERS,
           "observation": OBSERVATIONS}
METAVARS = {"out": "DIR", "resume": "CHECKPOINT.zip", "teacher": "SPEC", "eval_against": "SPEC",
            "formats": "PRESET", "init": "MODEL", "constraint": "NAME"}
DESCRIPTION = """\
Train a PPO agent on the batched vector env: imitation of a heuristic (the warm start,
--bc-rows: the teacher's positions collected, then cloned by cross-entropy before the first
rollout; bc.json holds its held-out accuracy), then PPO against a league of shipped bots,
with checkpoints, all in the run folder --out. The default learner is the lean PPO
(--learner lean: the model in the safe format, final.npz; table formats, --init,
--observation v1: the observation with what the seat remembers); --learner sb3 is SB3's
MaskablePPO (final.zip; duplicate-deal evaluations, TensorBoard logs, --resume), which made
the per-table models.

What it prints: the options changed from their defaults, a line before every phase that
takes a while (numba compiles its kernels the first time after install),
a progress bar over the PPO steps (whole rollouts of n_steps x num_envs; rate and ETA over
the whole run, evaluations included) with the checkpoint and evaluation lines above it,
and at the end what the run folder holds.

--out must name a new or empty folder (a folder holding another run is refused, with
--resume too; --overwrite replaces a finished nertz train run and nothing else). With
--resume the checkpoint's config is used and only the options given change it; without
--out it continues in the checkpoint's own run folder (RUN of RUN/checkpoints/step_N.zip).
A run stopped (Ctrl-C, SIGTERM, an error) before its first checkpoint removes its folder,
so the same command can run again; one stopped later keeps it and prints the command that
continues it (exit status 130 after Ctrl-C, 143 after SIGTERM). A refused run prints its
one error line and writes nothing. The options are TrainConfig's fields
(agents/training/parts.py); the run is agents/training/lean_ppo.py (sb3: run.py)."""
# a 2M-step run checkpoints at the first rollout boundary past each 250,000 steps: 507,904
EPILOG = """\
examples:
  nertz train --out runs/l2 --timesteps 2000000
  nertz tournament --agents ppo:runs/l2/final.npz,heuristic:style=river-builder --teams 2
  nertz train --learner sb3 --out runs/t2 --timesteps 2000000 --teams 2
  nertz train --resume runs/t2/checkpoints/step_507904.zip --timesteps 4000000
  tensorboard --logdir runs/t2/tb
  nertz train --formats rulebook --init MODEL.zip --out runs/g1

checkpoints are named by the step they were taken at (the first rollout boundary past
every --checkpoint-every steps): list runs/t2/checkpoints/ to find them. --timesteps is the
total to reach, the checkpoint's steps included."""


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def default_text(name: str, d) -> str:
    """A field's default as its option is written (lists comma-separated, None explained)."""
    if name in LISTS:
        return ",".join(str(x) for x in d)
    if name == "max_ticks":
        return f"the rules default, {RulesConfig.max_ticks}"
    if name == "resume":
        return "none, a fresh run"
    if name == "formats":
        return "none, one table"
    if name == "init":
        return "none, a fresh network"
    if name == "constraint":
        return "none"
    if name == "observation":
        return "init's, else v0"
    if name in BY_LEARNER:
        return (f"{learner_default(name, 'lean')} with --learner lean, "
                f"{learner_default(name, 'sb3')} with sb3")
    return str(d)


def add_parser(subparsers):
    """The `nertz train` sub-command on an argparse subparsers object; returns its parser."""
    docs = field_docs()
    p = subparsers.add_parser(
        "train", help="train a PPO agent (the lean PPO; --learner sb3): imitation warm "
                      "start, league",
        description=DESCRIPTION, epilog=EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    for name, d in flat_defaults().items():
        help_ = f"{docs.get(name, '')} (default: {default_text(name, d)})"
        if name == "resume":
            help_ += f"; a resumed run keeps {', '.join(FIXED_ON_RESUME)}"
        if name in NEEDS:
            help_ += f"; only with {NEEDS[name][1]}"
        if name in BOOLEANS:
            p.add_argument(_flag(name), action=argparse.BooleanOptionalAction, default=None,
                           help=help_)
        elif name in LISTS:
            p.add_argument(_flag(name), default=None, metavar="A,B,..", help=help_)
        elif name in CHOICES:
            p.add_argument(_flag(name), default=None, choices=CHOICES[name], help=help_)
        else:
            kind = {int: int, float: float}.get(type(d), str)
            if name == "max_ticks" or name in BY_LEARNER:   # None: an int when given
                kind = int
            p.add_argument(_flag(name), type=kind, default=None, help=help_,
                           metavar=METAVARS.get(name))
    p.add_argument("--spec", default=None, metavar="RECIPE.toml",
                   help="a recipe file (TOML; its keys the options above as written in "
                        "config.json, e.g. timesteps = 12000000, learner = \"lean\"): its "
                        "values become the defaults and the options given here override them; "
                        "the shipped models' recipes are in train/recipes/")
    p.add_argument("--overwrite", action="store_true",
                   help="replace the finished nertz train run in --out (refused for a folder "
                        "holding anything else, or a run without its final model); the "
                        "earlier run is deleted when the new one ends, and put back if it "
                        "stops before its first checkpoint")
    p.set_defaults(func=cmd_train)
    return p


def config_from_args(args) -> TrainConfig:
    """A TrainConfig from parsed `nertz train` arguments (None: not given)."""
    given = {name: getattr(args, name) for name in flat_defaults()
             if getattr(args, name, None) is not None}
    recipe = {}
    if getattr(args, "spec", None) is not None:
        if given.get("resume"):
            raise ValueError("--spec starts a fresh run from a recipe; --resume continues with "
                             "the checkpoint's own config: give one of them")
        from ..training.recipe import load_recipe
        recipe = load_recipe(args.spec)
    if "opponents" in given:
        from ..specs import split_specs
        given["opponents"] = split_specs(given["opponents"])
    if "net_arch" in given:
        try:
            given["net_arch"] = [int(x) for x in given["net_arch"].split(",") if x.strip()]
        except ValueError:
            raise ValueError(f"net_arch={given['net_arch']!r} must be comma-separated layer "
                             "widths, e.g. 128,128") from None
    spell = _flag
    if recipe:                  # the recipe's values under the options given here
        try:                                      # the recipe alone is whole
            alone = TrainConfig(**recipe)
        except ValueError as err:
            raise ValueError(f"recipe {args.spec!r}: {err}") from None
        check_given(alone, recipe, lambda n: f"recipe {args.spec!r}: {n}")
        typed = set(given)
        spell = lambda n: _flag(n) if n in typed else f"recipe {args.spec!r}: {n}"  # noqa: E731
        given = {**recipe, **given}
    try:
        if given.get("resume"):
            require_train("nertz train --resume")               # its one line, if missing
            from ..training.checkpoints import resume_config     # torch: the [train] extra
            cfg = resume_config(given.pop("resume"), **given)
        else:
            cfg = TrainConfig(**given)
    except ValueError as err:                # 'num_envs=..' of an option given: its flag
        text = str(err)
        name = text.partition("=")[0]
        if name in given and " " not in name:
            lead = spell(name)                # a recipe's key: 'recipe FILE: key=value ..'
            sep = " " if lead.startswith("--") else "="
            raise ValueError(f"{lead}{sep}{text[len(name) + 1:]}") from None
        raise
    check_given(cfg, {n: v for n, v in given.items() if spell(n).startswith("--")}, _flag)
    return cfg


def changed_line(cfg: TrainConfig) -> str:
    """The first line of a run: the options that differ from their defaults."""
    base = TrainConfig(out=cfg.run.out).to_flat()
    for name in BY_LEARNER:                                  # the learner's own defaults
        base[name] = learner_default(name, cfg.run.learner)
    diff = [f"{k}={v}" for k, v in cfg.to_flat().items()
            if k != "out" and (k not in base or v != base[k])]
    out = cfg.run.out
    return (f"config: out={out}, " + (", ".join(diff) if diff else "every other option at "
            "its default") + (" (the rest at their defaults)" if diff else "")
            + f"; all of it in {out}/config.json")


class Terminated(KeyboardInterrupt):
    """SIGTERM during a run (a timeout, kill, a scheduler): stops it as Ctrl-C does, the same
    cleanup (stopped_cleanly), and `nertz train` exits 143 (128 + SIGTERM)."""


@contextmanager
def sigterm_stops():
    """While the block runs, SIGTERM raises Terminated in the main thread (once: a second
    SIGTERM during the cleanup is ignored); the handler before it is put back after."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum, frame):
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        raise Terminated()

    old = signal.signal(signal.SIGTERM, stop)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, old)


def cmd_train(args) -> int:
    """`nertz train`: every check first (the config, then the run's own before its folder is
    made), then the options changed from their defaults, printed once the run folder exists
    (a refused run prints its one error line only), then the run. SIGTERM stops it as Ctrl-C
    does (the folder removed before a first checkpoint), exit status 143. An error's text
    reaches the error line without terminal escape codes (torch colours some of its own)."""
    try:
        cfg = config_from_args(args)
        require_train()               # the [train] extra, before anything is made or printed
        say = lambda s: print(s, flush=True)  # noqa: E731
        begin = lambda: say(changed_line(cfg))  # noqa: E731
        overwrite = bool(getattr(args, "overwrite", False))
        with sigterm_stops():
            if cfg.run.learner == "lean":
                from ..training.lean_ppo import train_run
                train_run(cfg, log=say, overwrite=overwrite, begin=begin)
            else:
                from ..training.run import train
                train(cfg, log=say, overwrite=overwrite, begin=begin)
    except Terminated as err:
        note = getattr(err, "out_note", None) or "nothing was written"
        print(f"nertz: terminated (SIGTERM; {note})", file=sys.stderr, flush=True)
        return 128 + signal.SIGTERM
    except ValueError as err:
        raise ValueError(plain(err)) from None
    except OSError as err:
        if err.strerror is None:
            raise
        raise OSError(err.errno, plain(err.strerror), err.filename, None,
                      err.filename2) from None
    return 0


__all__ = ["Terminated", "add_parser", "changed_line", "cmd_train", "config_from_args",
           "default_text", "sigterm_stops"]
