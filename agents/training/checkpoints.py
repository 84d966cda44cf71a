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

Imports config.py, folder.py and league.py; needs the `[train]` extra: torch is imported at
the top (through nertz_env.optional, whose error names the extra), sb3_zip.py inside functions.
"""
from __future__ import annotations

import dataclasses
import math
import os
import re
import shutil
from pathlib import Path

import numpy as np

from nertz_env.config import RulesConfig
from nertz_env.files import atomic_path, read_capped
from nertz_env.files.bounded import json_loads_strict
from nertz_env.optional import require

from .config import FIXED_ON_RESUME, MAX_SNAPSHOTS, PART_OF, TOURNAMENT_RULES, TrainConfig
from .parts import flat_defaults
from .folder import checkpoint_files, checkpoint_run, naming, plain, write_json
from .league import SNAPSHOT, league_of, make_env

torch = require("torch", "train", "training checkpoints")


def save_snapshot(model, cfg: TrainConfig, run: Path) -> Path:
    """snapshots/step_N.zip: the learner now, added to the league (at most max_snapshots)."""
    d = run / "snapshots"
    d.mkdir(parents=True, exist_ok=True)
    path = d / f"step_{int(model.num_timesteps)}.zip"
    _save_zip(model, path)
    league_of(model.get_env()).add_snapshot(str(path), cfg.league.max_snapshots)
    return path


def _save_zip(model, path: Path) -> None:
    """model.save to path, whole or not at all (an OSError names path, not its .part)."""
    with naming(path), atomic_path(path) as tmp:
        model.save(tmp)


def run_info(cfg: TrainConfig) -> dict:
    """config.json's content: every argument (flat: to_flat), the rules trained on and the
    rules tournaments play by default."""
    return {"config": cfg.to_flat(), "rules": dataclasses.asdict(cfg.rules()),
            "tournament_rules": dataclasses.asdict(TOURNAMENT_RULES),
            "same_rules_as_tournaments": cfg.rules() == RulesConfig(num_teams=cfg.tables.teams)}


def save_checkpoint(model, cfg: TrainConfig, run: Path) -> Path:
    """checkpoints/step_N.zip + step_N.rng.json + step_N.json (module docstring); returns
    the zip."""
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


MAX_INFO = 16 << 20
RNG_KEY = 624                       # numpy's MT19937 state words


MAX_INT_DIGITS = 40                 # the longest int a checkpoint holds: PCG64's 128-bit state


def strict_json(raw: bytes, what: str):
    """raw parsed as strict JSON (nertz_env/files/bounded.py json_loads_strict: the depth
    cap, a key twice, NaN/Infinity, a number too large for a float refused) with integers of
    up to MAX_INT_DIGITS digits (PCG64's state): ValueError naming `what` (and the field)."""
    return json_loads_strict(raw, what, max_int_digits=MAX_INT_DIGITS)


def _inside(run: Path, rel) -> bool:
    """Whether rel (a relative path from a checkpoint's info) stays inside run, resolved."""
    if not isinstance(rel, str) or not rel or os.path.isabs(rel) or "\x00" in rel:
        return False
    try:
        return (run / rel).resolve().is_relative_to(run.resolve())
    except (OSError, ValueError):
        return False


def _read_info(jp: Path, where: str) -> dict:
    """step_N.json, read under caps, every field checked: a damaged one is one line naming the
    file and the field; its league snapshots must lie inside its run folder (resolved: no
    absolute path, no '..' out of it). An unreadable file is the OSError itself."""
    try:
        info = strict_json(read_capped(jp, MAX_INFO, "checkpoint info"),
                           f"checkpoint info {str(jp)!r}")
    except ValueError as err:
        raise ValueError(f"{where}: {err}") from None

    def bad(field, allowed):
        raise ValueError(f"{where}: {jp}: field {field} must be {allowed}")

    if not isinstance(info, dict):
        raise ValueError(f"{where}: {jp} is not a checkpoint's info (it needs config, "
                         "num_timesteps and snapshots, as save_checkpoint writes them)")
    if not isinstance(info.get("config"), dict):
        bad("config", "an object of training arguments")
    names = PART_OF
    for k in info["config"]:
        if k not in names:
            bad(f"config.{k}", "absent: it is not a training argument")
    n = info.get("num_timesteps")
    if not isinstance(n, int) or isinstance(n, bool) or n < 0:
        bad("num_timesteps", "an int >= 0")
    league = info.get("league", [])
    if not isinstance(league, list):
        bad("league", "a list of entries")
    for i, e in enumerate(league):
        if not (isinstance(e, dict) and isinstance(e.get("name"), str)):
            bad(f"league[{i}]", "an object with a name")
        d = e.get("eval_diff")
        if d is not None and (isinstance(d, bool) or not isinstance(d, (int, float))):
            bad(f"league[{i}].eval_diff", "null or a number")
    m = re.fullmatch(r"step_(\d+)\.json", jp.name)
    if m and n != int(m.group(1)):
        bad("num_timesteps", f"the step in the file's name, {int(m.group(1))} (got {n})")
    for i, e in enumerate(league):
        for k, ok, allowed in (
                ("weight", lambda v: _number(v) and 0 <= v <= 1, "a number from 0 to 1"),
                ("hands", lambda v: isinstance(v, int) and not isinstance(v, bool) and v >= 0,
                 "an int >= 0"),
                ("eval_diff", lambda v: v is None or _number(v), "null or a number"),
                ("mean_relative", lambda v: v is None or _number(v), "null or a number")):
            if k in e and not ok(e[k]):
                bad(f"league[{i}].{k}", f"{allowed} (got {str(e[k])[:80]!r})")
    cfg = info["config"]
    keep = cfg.get("max_snapshots", flat_defaults()["max_snapshots"])
    keep = keep if isinstance(keep, int) and 1 <= keep <= MAX_SNAPSHOTS else MAX_SNAPSHOTS
    snaps = info.get("snapshots", [])
    if not isinstance(snaps, list) or len(snaps) > keep:
        bad("snapshots", f"a list of at most {keep} paths inside the run folder (its "
                         "config's max_snapshots)" + (f", not {len(snaps):,}"
                                                      if isinstance(snaps, list) else ""))
    run = jp.parent.parent
    for i, p in enumerate(snaps):
        if not _inside(run, p):
            bad(f"snapshots[{i}]", f"a relative path inside the run folder {str(run)!r} "
                                   f"(got {str(p)[:200]!r})")
        if os.path.normpath(p) in {os.path.normpath(q) for q in snaps[:i]}:
            bad(f"snapshots[{i}]", f"a snapshot not listed before it (got {p!r} twice)")
    opponents = cfg.get("opponents", flat_defaults()["opponents"])
    if league and isinstance(opponents, list) and all(isinstance(o, str) for o in opponents):
        names = [o.strip() for o in opponents] + [SNAPSHOT + Path(p).stem for p in snaps]
        for i, e in enumerate(league):
            if i >= len(names) or e["name"] != names[i]:
                want = repr(names[i]) if i < len(names) else "absent"
                bad(f"league[{i}].name", f"{want}, its config's opponents then 'snapshot:' "
                    f"and the name of each of its snapshots (got {e['name'][:200]!r})")
        if len(league) != len(names):
            bad("league", f"{len(names)} entries, its config's opponents and its snapshots")
    rules = info.get("rules")
    if rules is not None:
        if not isinstance(rules, dict):
            bad("rules", "an object of RulesConfig fields")
        try:
            RulesConfig(**{k: v for k, v in rules.items() if k != "num_seats"})
        except (TypeError, ValueError) as err:
            text = str(err).replace("RulesConfig.__init__() got an", "an")
            raise ValueError(f"{where}: {jp}: field rules: {text}") from None
    return info


def _number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _check_model(info: dict, jp: Path, data: dict, where: str) -> None:
    """step_N.json against the zip it sits beside (SB3's data entry): the model's own
    num_timesteps and network are the ones the info names, else one line naming the field."""
    def bad(field, allowed):
        raise ValueError(f"{where}: {jp}: field {field} must be {allowed}")

    if data.get("num_timesteps") != info["num_timesteps"]:
        bad("num_timesteps", f"the model's own num_timesteps in {jp.with_suffix('.zip').name} "
            f"({str(data.get('num_timesteps'))[:40]}), not {info['num_timesteps']}")
    arch = (data.get("policy_kwargs") or {}).get("net_arch", [64, 64]) \
        if isinstance(data.get("policy_kwargs", {}), dict) else None
    if isinstance(arch, dict) and arch.get("pi") == arch.get("vf"):
        arch = arch.get("pi")
    saved = info["config"].get("net_arch", flat_defaults()["net_arch"])
    if arch != saved:
        bad("config.net_arch", f"the network of the model beside it, "
            f"{str(arch)[:80]} (got {str(saved)[:80]})")


def _check_rng(raw: dict, torch, field: list) -> dict:
    """The generator states of step_N.rng.json checked field by field (`field[0]` names the
    one being read, for the caller's message)."""
    if not isinstance(raw, dict):
        raise ValueError("not a JSON object")
    field[0] = "torch"
    if not isinstance(raw.get("torch"), str):
        raise ValueError("a hex string is needed")
    torch_state = torch.tensor(list(bytes.fromhex(raw["torch"])), dtype=torch.uint8)
    field[0] = "numpy"
    n = raw.get("numpy")
    if not isinstance(n, dict):
        raise ValueError("an object is needed")
    field[0] = "numpy.name"
    if n.get("name") != "MT19937":
        raise ValueError("'MT19937' is needed")
    field[0] = "numpy.key"
    key = n.get("key")
    if not (isinstance(key, list) and len(key) == RNG_KEY
            and all(isinstance(k, int) and not isinstance(k, bool) and 0 <= k < 1 << 32
                    for k in key)):
        raise ValueError(f"{RNG_KEY} ints 0..2^32-1 are needed")
    for name, ok in (("pos", lambda v: 0 <= v <= RNG_KEY), ("has_gauss", lambda v: v in (0, 1))):
        field[0] = f"numpy.{name}"
        v = n.get(name)
        if not isinstance(v, int) or isinstance(v, bool) or not ok(v):
            raise ValueError("an int in range is needed")
    field[0] = "numpy.cached_gaussian"
    g = n.get("cached_gaussian")
    if isinstance(g, bool) or not isinstance(g, (int, float)):
        raise ValueError("a number is needed")
    return {"torch": torch_state, "league_rng": raw.get("league_rng"),
            "numpy": ("MT19937", np.array(key, dtype=np.uint32), n["pos"], n["has_gauss"],
                      float(g))}


def _check_league_rng(state) -> None:
    """A league generator state (PCG64's, as bit_generator.state gives it) or None."""
    if state is None:
        return
    if not (isinstance(state, dict) and state.get("bit_generator") == "PCG64"
            and isinstance(state.get("state"), dict)
            and all(isinstance(state["state"].get(k), int)
                    and not isinstance(state["state"].get(k), bool)
                    and 0 <= state["state"][k] < 1 << 128 for k in ("state", "inc"))
            and all(isinstance(state.get(k), int) and not isinstance(state.get(k), bool)
                    for k in ("has_uint32", "uinteger"))):
        raise ValueError("PCG64's state is needed (bit_generator, state.state, state.inc, "
                         "has_uint32, uinteger)")
    np.random.default_rng().bit_generator.state = state       # numpy's own check too


def _read_rng(rp: Path, where: str) -> dict:
    """The generator states of step_N.rng.json (or an older step_N.rng.pt, read with
    torch.load(weights_only=True)) as {"torch": ByteTensor, "numpy": tuple, "league_rng":
    dict}; missing or damaged is one line naming the file and the field."""
    if not rp.is_file():
        raise ValueError(f"{where}: its generator states {rp} are missing; a checkpoint is "
                         "step_N.zip, step_N.json and step_N.rng.json together (resuming "
                         "without them would not continue the same run)")
    field = ["the file"]
    if rp.suffix != ".pt":
        try:
            raw = strict_json(read_capped(rp, 1 << 20, "generator states"), str(rp))
        except ValueError as err:
            raise ValueError(f"{where}: its generator states {rp} are damaged ({err})") from None
    try:
        if rp.suffix == ".pt":
            reconstruct = np.ndarray((0,)).__reduce__()[0]
            allowed = [reconstruct, np.ndarray, np.dtype, type(np.dtype(np.uint32))]
            with torch.serialization.safe_globals(allowed):
                st = torch.load(rp, weights_only=True)
            st = {"torch": st["torch"], "numpy": tuple(st["numpy"]),
                  "league_rng": st.get("league_rng")}
        else:
            st = _check_rng(raw, torch, field)
        field[0] = "torch"
        state = torch.get_rng_state()
        torch.set_rng_state(st["torch"])           # checked here: a bad state fails now
        torch.set_rng_state(state)
        field[0] = "numpy"
        np.random.RandomState().set_state(st["numpy"])
        field[0] = "league_rng"
        _check_league_rng(st.get("league_rng"))
    except Exception as exc:  # any fault of the file: one line naming it and the field
        text = plain(" ".join(str(exc).split()))[:200]
        raise ValueError(f"{where}: its generator states {rp} are damaged (field {field[0]}: "
                         f"{type(exc).__name__}: {text})") from None
    return st


def resume_config(path, **overrides) -> TrainConfig:
    """The config saved beside a checkpoint with `overrides` applied (not those of
    FIXED_ON_RESUME: changing them is a ValueError), and resume set to the checkpoint. Its
    run folder (out) is overrides["out"], else the checkpoint's own (checkpoint_run: from its
    path, never from the file); the saved config's out is not read."""
    zp, jp, rp = checkpoint_files(path)
    where = f"resume={str(path)!r}"
    if not zp.is_file() or not jp.is_file():
        raise ValueError(f"{where}: a checkpoint is a step_N.zip with its "
                         f"step_N.json and step_N.rng.json beside it ({zp} / {jp} not found)")
    run = checkpoint_run(zp)
    if run is None and not overrides.get("out"):
        raise ValueError(f"{where}: the checkpoint is not in a run folder's checkpoints/ "
                         "folder, so it has no run folder to continue: give --out (a new "
                         "or empty folder)")
    info = _read_info(jp, where)
    _read_rng(rp, where)
    from ..learned.sb3_zip import read_data
    try:
        data = read_data(zp)           # a damaged zip is refused before anything starts
    except ValueError as err:
        raise ValueError(f"{where}: checkpoint {zp}: {plain(err)}") from None
    _check_model(info, jp, data, where)
    saved = dict(info["config"])
    for p in info.get("snapshots", []):
        if not (zp.parent.parent / p).is_file():
            raise ValueError(f"resume={str(path)!r}: its league snapshot {p} is missing from "
                             f"the run folder {zp.parent.parent}")
    try:                               # the file's own config, before the options change it
        base = TrainConfig(**{**saved, "out": str(run or "."), "resume": None})
    except ValueError as err:
        raise ValueError(f"{where}: {jp}: config: {err}") from None
    rules = info.get("rules")
    if rules is not None and RulesConfig(**{k: v for k, v in rules.items()
                                            if k != "num_seats"}) != base.rules():
        raise ValueError(f"{where}: {jp}: field rules must be the rules of its config (teams, "
                         "max_ticks), as the run wrote them")
    for k in FIXED_ON_RESUME:
        if k in overrides and overrides[k] != getattr(base, k):
            raise ValueError(f"{k}={overrides[k]!r} differs from the checkpoint's "
                             f"{getattr(base, k)!r}; a resumed run keeps "
                             f"{', '.join(FIXED_ON_RESUME)}")
    unknown = sorted(set(overrides) - set(PART_OF))
    if unknown:
        raise ValueError(f"{unknown[0]}: not a training argument")
    if not overrides.get("out"):
        overrides["out"] = str(run)
    saved.update(overrides)
    saved["resume"] = str(zp)
    return TrainConfig(**saved)


def load_checkpoint(cfg: TrainConfig, tensorboard_log=None, log=print):
    """The model of cfg.run.resume on a fresh env of the run (seeded past the checkpoint's
    step), with its league (entries, snapshots, differences, generator) and torch's and numpy's
    generator states restored (module docstring). Writes nothing."""
    from ..learned.sb3_zip import load_sb3
    zp, jp, rp = checkpoint_files(cfg.run.resume)
    where = f"resume={cfg.run.resume!r}"
    saved = _read_info(jp, where)
    st = _read_rng(rp, where)
    env = make_env(cfg, seed=cfg.run.seed + 1 + int(saved["num_timesteps"]))
    try:
        model = load_sb3(zp, env=env, device=cfg.run.device, tensorboard_log=tensorboard_log)
    except ValueError as err:
        raise ValueError(f"{where}: checkpoint {zp}: {plain(err)}") from None
    league = league_of(env)
    snaps = [str(zp.parent.parent / p) for p in saved.get("snapshots", [])]
    missing = [p for p in snaps if not Path(p).is_file()]
    if missing:
        raise ValueError(f"resume={cfg.run.resume!r}: its league snapshot {missing[0]} is "
                         "missing (snapshots live in the run folder's snapshots/)")
    if snaps:
        league.set_entries(list(cfg.league.opponents) + [SNAPSHOT + p for p in snaps])
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


def adopt_snapshots(model, run: Path) -> None:
    """A run resumed into another folder than its checkpoint's: the league's live snapshots
    copied into run/snapshots/ (each whole) and played from there, so the new folder's
    checkpoints name snapshots inside it (a resume reads no snapshot outside its run)."""
    league = league_of(model.get_env())
    for en in league.entries:
        if en.path is None or Path(en.path).resolve().parent == (run / "snapshots").resolve():
            continue
        dst = run / "snapshots" / Path(en.path).name
        dst.parent.mkdir(parents=True, exist_ok=True)
        with naming(dst), atomic_path(dst) as tmp:
            shutil.copyfile(en.path, tmp)
        en.path = str(dst)
        en.specs = [f"ppo:{dst}"] * len(en.specs)
