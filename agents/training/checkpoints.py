"""What a run leaves on disk: checkpoints that resume to the same next update, league
snapshots, config.json, and models exported for play.

Checkpoints (`checkpoint_every`): taken between updates (at the start of a rollout), so a
resumed run collects its next rollout and makes the same next update. Each is
checkpoints/step_N.zip (SB3: policy, value net, optimizer state, num_timesteps, update
count, learning-rate progress), step_N.json (the full config, the league state and its
snapshots' paths relative to the run folder) and step_N.rng.pt (torch's and
numpy's generator states). `resume` (`resume_config`, then `load_checkpoint`) loads all
three: the next update starts from the same parameters and optimizer state with the same
schedule; the tables are dealt afresh (the env's cards and positions are not saved), so the
resumed rollout is not the one the uninterrupted run would have collected.

Imports config.py and league.py; torch and sb3-contrib only inside functions.
"""
from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path

import numpy as np

from nertz_env.config import RulesConfig
from nertz_env.optional import require

from .config import FIXED_ON_RESUME, TOURNAMENT_RULES, TrainConfig
from .league import SNAPSHOT, league_of, make_env


def save_snapshot(model, cfg: TrainConfig, run: Path) -> Path:
    """snapshots/step_N.zip: the learner now, added to the league (at most max_snapshots)."""
    d = run / "snapshots"
    d.mkdir(parents=True, exist_ok=True)
    path = d / f"step_{int(model.num_timesteps)}.zip"
    model.save(path)
    league_of(model.get_env()).add_snapshot(str(path), cfg.max_snapshots)
    return path


def run_info(cfg: TrainConfig) -> dict:
    """config.json's content: every argument, the rules trained on and the rules tournaments
    play by default."""
    return {"config": cfg.to_dict(), "rules": dataclasses.asdict(cfg.rules()),
            "tournament_rules": dataclasses.asdict(TOURNAMENT_RULES),
            "same_rules_as_tournaments": cfg.rules() == RulesConfig(num_teams=cfg.teams)}


def save_checkpoint(model, cfg: TrainConfig, run: Path) -> Path:
    """checkpoints/step_N.zip + step_N.json + step_N.rng.pt (module docstring); returns the zip."""
    torch = require("torch", "train", "a training checkpoint")
    d = run / "checkpoints"
    d.mkdir(parents=True, exist_ok=True)
    n = int(model.num_timesteps)
    path = d / f"step_{n}.zip"
    model.save(path)
    info = run_info(cfg)
    league = league_of(model.get_env())
    info.update(num_timesteps=n, n_updates=int(model._n_updates), league=league.stats(),
                snapshots=[os.path.relpath(p, run) for p in league.snapshot_paths()])
    (d / f"step_{n}.json").write_text(json.dumps(info, indent=2) + "\n")
    torch.save({"torch": torch.get_rng_state(), "numpy": np.random.get_state(),
                "league_rng": league.rng.bit_generator.state}, d / f"step_{n}.rng.pt")
    return path


def export_for_play(src, dst) -> Path:
    """A model to play, not to train on: the checkpoint's policy with a fresh optimizer (its
    Adam moments are two thirds of a checkpoint's bytes and play never reads them), saved as
    dst. Loads with MaskablePPO.load and make_agent("ppo:dst") like any saved model."""
    MaskablePPO = require("sb3_contrib", "train", "export_for_play").MaskablePPO
    model = MaskablePPO.load(str(src), device="cpu")
    pol = model.policy
    pol.optimizer = pol.optimizer_class(pol.parameters(), lr=model.lr_schedule(1),
                                        **pol.optimizer_kwargs)
    model.save(dst)
    return Path(dst)


def checkpoint_files(path) -> tuple:
    """(zip, json, rng) paths of a checkpoint given as its zip (with or without .zip)."""
    p = Path(path)
    if p.suffix != ".zip":
        p = p.with_name(p.name + ".zip")
    stem = p.with_suffix("")
    return p, Path(f"{stem}.json"), Path(f"{stem}.rng.pt")


def resume_config(path, **overrides) -> TrainConfig:
    """The config saved beside a checkpoint with `overrides` applied (not those of
    FIXED_ON_RESUME: changing them is a ValueError), and resume set to the checkpoint."""
    zp, jp, _ = checkpoint_files(path)
    if not zp.is_file() or not jp.is_file():
        raise ValueError(f"resume={str(path)!r}: a checkpoint is a step_N.zip with its "
                         f"step_N.json beside it ({zp} / {jp} not found)")
    info = json.loads(jp.read_text())
    saved = info["config"]
    for p in info.get("snapshots", []):
        if not (zp.parent.parent / p).is_file():
            raise ValueError(f"resume={str(path)!r}: its league snapshot {p} is missing from "
                             f"the run folder {zp.parent.parent}")
    for k in FIXED_ON_RESUME:
        if k in overrides and overrides[k] != saved[k]:
            raise ValueError(f"{k}={overrides[k]!r} differs from the checkpoint's {saved[k]!r}; "
                             f"a resumed run keeps {', '.join(FIXED_ON_RESUME)}")
    unknown = sorted(set(overrides) - {f.name for f in dataclasses.fields(TrainConfig)})
    if unknown:
        raise ValueError(f"{unknown[0]}: not a training argument")
    saved.update(overrides)
    saved["resume"] = str(zp)
    return TrainConfig(**saved)


def load_checkpoint(cfg: TrainConfig, tensorboard_log=None, log=print):
    """The model of cfg.resume on a fresh env of the run (seeded past the checkpoint's step),
    with its league (entries, snapshots, differences, generator) and torch's and numpy's
    generator states restored (module docstring)."""
    torch = require("torch", "train", "resuming a training run")
    MaskablePPO = require("sb3_contrib", "train", "resuming a training run").MaskablePPO
    zp, jp, rp = checkpoint_files(cfg.resume)
    env = make_env(cfg, seed=cfg.seed + 1 + int(json.loads(jp.read_text())["num_timesteps"]))
    model = MaskablePPO.load(str(zp), env=env, device=cfg.device, tensorboard_log=tensorboard_log)
    saved = json.loads(jp.read_text())
    league = league_of(env)
    snaps = [str(zp.parent.parent / p) for p in saved.get("snapshots", [])]
    missing = [p for p in snaps if not Path(p).is_file()]
    if missing:
        raise ValueError(f"resume={cfg.resume!r}: its league snapshot {missing[0]} is "
                         "missing (snapshots live in the run folder's snapshots/)")
    if snaps:
        league.set_entries(list(cfg.opponents) + [SNAPSHOT + p for p in snaps])
    if saved.get("league") and [s["name"] for s in saved["league"]] == \
            [e.name for e in league.entries]:
        league.set_diffs([np.nan if s["eval_diff"] is None else s["eval_diff"]
                          for s in saved["league"]])
    if rp.is_file():
        st = torch.load(rp, weights_only=False)
        torch.set_rng_state(st["torch"])
        np.random.set_state(st["numpy"])
        if st.get("league_rng"):
            league.rng.bit_generator.state = st["league_rng"]
    log(f"resumed {zp} at {model.num_timesteps:,} steps ({model._n_updates} updates)")
    return model
