"""`nertz train`: its parser (one option per TrainConfig field, the field's docstring as its
help) and its command. The training itself is agents/training/'s; importing this module
imports neither torch nor stable-baselines3 (`nertz --help` builds every parser)."""
from __future__ import annotations

import argparse
import dataclasses
import json

from ..training.checkpoints import resume_config
from ..training.config import TrainConfig, field_docs
from ..training.run import train

BOOLEANS = ("tensorboard", "progress", "bc_value")       # --x / --no-x
LISTS = {"opponents": "; comma-separated", "net_arch": "; e.g. 128,128"}


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def add_parser(subparsers):
    """The `nertz train` sub-command on an argparse subparsers object; returns its parser."""
    docs = field_docs()
    p = subparsers.add_parser(
        "train", help="train a MaskablePPO agent: imitation warm start, league, evaluations",
        description="Train a MaskablePPO agent on the batched vector env: imitation of a "
        "heuristic, then PPO against a league of shipped bots, with duplicate-deal evaluations, "
        "checkpoints and TensorBoard logs (agents/training/run.py; the options are "
        "agents/training/config.py's TrainConfig). With --resume the checkpoint's "
        "config is used and only the options given change it.",
        epilog="examples:\n  nertz train --out runs/t2 --timesteps 2000000 --teams 2\n"
               "  nertz train --out runs/t2 --resume runs/t2/checkpoints/step_500000.zip "
               "--timesteps 4000000\n  tensorboard --logdir runs/t2/tb",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    for f in dataclasses.fields(TrainConfig):
        d = f.default if f.default is not dataclasses.MISSING else f.default_factory()
        help_ = f"{docs.get(f.name, '')} (default: {d})"
        if f.name in BOOLEANS:
            p.add_argument(_flag(f.name), action=argparse.BooleanOptionalAction, default=None,
                           help=help_)
        elif f.name in LISTS:
            p.add_argument(_flag(f.name), default=None, help=help_ + LISTS[f.name])
        else:
            kind = {int: int, float: float}.get(type(d), str)
            if f.name == "max_ticks":              # default None, an int when given
                kind = int
            p.add_argument(_flag(f.name), type=kind, default=None, help=help_)
    p.set_defaults(func=cmd_train)
    return p


def config_from_args(args) -> TrainConfig:
    """A TrainConfig from parsed `nertz train` arguments (None: not given)."""
    given = {f.name: getattr(args, f.name) for f in dataclasses.fields(TrainConfig)
             if getattr(args, f.name, None) is not None}
    if "opponents" in given:
        from ..specs import split_specs
        given["opponents"] = split_specs(given["opponents"])
    if "net_arch" in given:
        try:
            given["net_arch"] = [int(x) for x in given["net_arch"].split(",") if x.strip()]
        except ValueError:
            raise ValueError(f"net_arch={given['net_arch']!r} must be comma-separated layer "
                             "widths, e.g. 128,128") from None
    if given.get("resume"):
        resume = given.pop("resume")
        return resume_config(resume, **given)
    return TrainConfig(**given)


def cmd_train(args) -> int:
    """`nertz train`: print the config, run it."""
    cfg = config_from_args(args)
    print("config: " + json.dumps(cfg.to_dict()), flush=True)
    train(cfg, log=lambda s: print(s, flush=True))
    return 0


__all__ = ["add_parser", "cmd_train", "config_from_args"]
