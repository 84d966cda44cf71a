"""What a run leaves on disk: checkpoints that resume to the same next update, league
snapshots, config.json, and models exported for play.

Checkpoints (`checkpoint_every`): taken between updates (at the start of a rollout), so a
resumed run collects its next rollout and makes the same next update. Each is
checkpoints/step_N.zip (SB3: policy, value net, optimizer state, num_timesteps, update
count, learning-rate progress), step_N.rng.json (torch's, numpy's and the league's generator
states, as plain data) and step_N.json (the full config, the league state and its
snapshots' paths relative to the run folder), each written whole or not at all, the json
last. `resume` (`resume_config`, then `load_checkpoint`) loads all three: the next update
starts from the same parameters and optimizer state with the same schedule; the tables are
dealt afresh (the env's cards and positions are not saved), so the resumed rollout is not
the one the uninterrupted run would have collected.

Nothing here unpickles: the zips (checkpoints and league snapshots) are read as
agents/learned/sb3_zip.py reads any SB3 zip (every pickled entry replaced, weights through
torch.load(weights_only=True)), so a checkpoint folder from someone else cannot run code
through `nertz train --resume`. A checkpoint missing a part, or with a damaged one, is
refused with one line naming the file; so is one without its generator states (resuming
without them would silently change the run). Checkpoints of older versions kept
step_N.rng.pt: it is read with torch.load(weights_only=True), numpy's arrays allowed.

Imports config.py and league.py; torch and sb3-contrib only inside functions.
"""
from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import numpy as np

from nertz_env.config import RulesConfig
from nertz_env.files import atomic_path, json_loads_bounded, read_capped, write_json
from nertz_env.optional import require

from .config import FIXED_ON_RESUME, TOURNAMENT_RULES, TrainConfig
from .league import SNAPSHOT, league_of, make_env


def save_snapshot(model, cfg: TrainConfig, run: Path) -> Path:
    """snapshots/step_N.zip: the learner now, added to the league (at most max_snapshots)."""
    d = run / "snapshots"
    d.mkdir(parents=True, exist_ok=True)
    path = d / f"step_{int(model.num_timesteps)}.zip"
    _save_zip(model, path)
    league_of(model.get_env()).add_snapshot(str(path), cfg.max_snapshots)
    return path


def _save_zip(model, path: Path) -> None:
    """model.save to path, whole or not at all."""
    with atomic_path(path) as tmp:
        model.save(tmp)


def run_info(cfg: TrainConfig) -> dict:
    """config.json's content: every argument, the rules trained on and the rules tournaments
    play by default."""
    return {"config": cfg.to_dict(), "rules": dataclasses.asdict(cfg.rules()),
            "tournament_rules": dataclasses.asdict(TOURNAMENT_RULES),
            "same_rules_as_tournaments": cfg.rules() == RulesConfig(num_teams=cfg.teams)}


def save_checkpoint(model, cfg: TrainConfig, run: Path) -> Path:
    """checkpoints/step_N.zip + step_N.rng.json + step_N.json (module docstring); returns
    the zip."""
    torch = require("torch", "train", "a training checkpoint")
    d = run / "checkpoints"
    d.mkdir(parents=True, exist_ok=True)
    n = int(model.num_timesteps)
    path = d / f"step_{n}.zip"
    _save_zip(model, path)
    info = run_info(cfg)
    league = league_of(model.get_env())
    info.update(num_timesteps=n, n_updates=int(model._n_updates), league=league.stats(),
                snapshots=[os.path.relpath(p, run) for p in league.snapshot_paths()])
    name, key, pos, has_gauss, cached = np.random.get_state()
    write_json(d / f"step_{n}.rng.json", {
        "torch": torch.get_rng_state().numpy().tobytes().hex(),
        "numpy": {"name": name, "key": [int(k) for k in key], "pos": int(pos),
                  "has_gauss": int(has_gauss), "cached_gaussian": float(cached)},
        "league_rng": league.rng.bit_generator.state})
    write_json(d / f"step_{n}.json", info)      # last: it is what marks a checkpoint
    return path


def export_for_play(src, dst) -> Path:
    """A model to play, not to train on: the checkpoint's policy with a fresh optimizer (its
    Adam moments are two thirds of a checkpoint's bytes and play never reads them), saved as
    dst (whole or not at all). src is read without unpickling (agents/learned/sb3_zip.py);
    dst loads with make_agent("ppo:dst") like any saved model. For a file that runs no code
    at all, `nertz export` writes the safe format."""
    from ..learned.sb3_zip import load_sb3
    model = load_sb3(src, device="cpu")
    pol = model.policy
    pol.optimizer = pol.optimizer_class(pol.parameters(), lr=model.lr_schedule(1),
                                        **pol.optimizer_kwargs)
    _save_zip(model, Path(dst))
    return Path(dst)


def checkpoint_files(path) -> tuple:
    """(zip, json, rng) paths of a checkpoint given as its zip (with or without .zip); rng is
    step_N.rng.json, or an older checkpoint's step_N.rng.pt where only that exists."""
    p = Path(path)
    if p.suffix != ".zip":
        p = p.with_name(p.name + ".zip")
    stem = p.with_suffix("")
    rng, legacy = Path(f"{stem}.rng.json"), Path(f"{stem}.rng.pt")
    return p, Path(f"{stem}.json"), legacy if legacy.is_file() and not rng.is_file() else rng


MAX_INFO = 16 << 20


def _read_info(jp: Path, where: str) -> dict:
    """step_N.json, read under caps; a damaged one is one line naming it."""
    try:
        info = json_loads_bounded(read_capped(jp, MAX_INFO, "checkpoint info"),
                                  f"checkpoint info {str(jp)!r}")
    except OSError as err:
        raise ValueError(f"{where}: cannot read {jp} ({err.strerror or err})") from None
    except ValueError as err:
        raise ValueError(f"{where}: {err}") from None
    if not (isinstance(info, dict) and isinstance(info.get("config"), dict)
            and isinstance(info.get("num_timesteps"), int)
            and isinstance(info.get("snapshots", []), list)
            and all(isinstance(p, str) for p in info.get("snapshots", []))
            and isinstance(info.get("league", []), list)
            and all(isinstance(e, dict) and isinstance(e.get("name"), str)
                    and (e.get("eval_diff") is None or isinstance(e["eval_diff"], (int, float)))
                    for e in info.get("league", []))):
        raise ValueError(f"{where}: {jp} is not a checkpoint's info (it needs config, "
                         "num_timesteps and snapshots, as save_checkpoint writes them)")
    return info


def _read_rng(rp: Path, where: str) -> dict:
    """The generator states of step_N.rng.json (or an older step_N.rng.pt, read with
    torch.load(weights_only=True)) as {"torch": ByteTensor, "numpy": tuple, "league_rng":
    dict}; missing or damaged is one line naming the file."""
    torch = require("torch", "train", "resuming a training run")
    if not rp.is_file():
        raise ValueError(f"{where}: its generator states {rp} are missing; a checkpoint is "
                         "step_N.zip, step_N.json and step_N.rng.json together (resuming "
                         "without them would not continue the same run)")
    try:
        if rp.suffix == ".pt":
            reconstruct = np.ndarray((0,)).__reduce__()[0]
            allowed = [reconstruct, np.ndarray, np.dtype, type(np.dtype(np.uint32))]
            with torch.serialization.safe_globals(allowed):
                st = torch.load(rp, weights_only=True)
            st = {"torch": st["torch"], "numpy": tuple(st["numpy"]),
                  "league_rng": st.get("league_rng")}
        else:
            raw = json_loads_bounded(read_capped(rp, 1 << 20, "generator states"), str(rp))
            n = raw["numpy"]
            key = np.array(n["key"], dtype=np.uint32)
            torch_state = torch.tensor(list(bytes.fromhex(raw["torch"])), dtype=torch.uint8)
            st = {"torch": torch_state, "league_rng": raw.get("league_rng"),
                  "numpy": (str(n["name"]), key, int(n["pos"]), int(n["has_gauss"]),
                            float(n["cached_gaussian"]))}
        state = torch.get_rng_state()
        torch.set_rng_state(st["torch"])           # checked here: a bad state fails now
        torch.set_rng_state(state)
        np.random.RandomState().set_state(st["numpy"])
    except Exception as exc:  # any fault of the file: one line naming it
        raise ValueError(f"{where}: its generator states {rp} are damaged "
                         f"({type(exc).__name__}: {' '.join(str(exc).split())[:200]})") from None
    return st


def resume_config(path, **overrides) -> TrainConfig:
    """The config saved beside a checkpoint with `overrides` applied (not those of
    FIXED_ON_RESUME: changing them is a ValueError), and resume set to the checkpoint."""
    zp, jp, rp = checkpoint_files(path)
    where = f"resume={str(path)!r}"
    if not zp.is_file() or not jp.is_file():
        raise ValueError(f"{where}: a checkpoint is a step_N.zip with its "
                         f"step_N.json and step_N.rng.json beside it ({zp} / {jp} not found)")
    info = _read_info(jp, where)
    _read_rng(rp, where)
    from ..learned.sb3_zip import read_data
    try:
        read_data(zp)                  # a damaged zip is refused before anything starts
    except ValueError as err:
        raise ValueError(f"{where}: checkpoint {zp}: {err}") from None
    saved = dict(info["config"])
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
    from ..learned.sb3_zip import load_sb3
    torch = require("torch", "train", "resuming a training run")
    zp, jp, rp = checkpoint_files(cfg.resume)
    where = f"resume={cfg.resume!r}"
    saved = _read_info(jp, where)
    st = _read_rng(rp, where)
    env = make_env(cfg, seed=cfg.seed + 1 + int(saved["num_timesteps"]))
    try:
        model = load_sb3(zp, env=env, device=cfg.device, tensorboard_log=tensorboard_log)
    except ValueError as err:
        raise ValueError(f"{where}: checkpoint {zp}: {err}") from None
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
    torch.set_rng_state(st["torch"])
    np.random.set_state(st["numpy"])
    if st.get("league_rng"):
        league.rng.bit_generator.state = st["league_rng"]
    log(f"resumed {zp} at {model.num_timesteps:,} steps ({model._n_updates} updates)")
    return model
