"""What the league scripts (train/*.py) share:

- `ScriptParser`: agents/cli/common.py's Parser (an argparse error is one line, exit 2) naming
  the script and its --help instead of `nertz`;
- the league record, OUT/league.json: the arguments that define a league's legs (its start
  models by absolute path and sha256, steps, seeds), written before the first leg trains. A
  rerun into that --out (to continue after a stop, or judge again) must give the same ones:
  `check_record` refuses any other, naming the first option that differs and both values,
  before any work (a finished leg of another configuration is never reused, nor judged
  against another start). `check_leg_configs` compares each existing leg's own config.json
  (seed, steps) with what this run would train it with, for a folder without a record;
- `check_out_path`: --out can be a folder (no file in the way, named if one is), checked
  before anything is written; `make_out` creates it and writes the record, `undo_out` takes
  both back when a run stops before any leg left a folder; `check_legs`: the leg folders
  already in --out (finished legs readable and kept, a stopped leg or a judgement refused);
- the legs: `BOTS`, `RECIPE` (the generalist's recipe, train/recipes/generalist.toml, with 2
  PPO epochs) and `leg`, one lean PPO run that a rerun skips once it finished;
- the models a league starts from or judges: `check_model` (anything `ppo:` plays),
  `check_main` (a safe-format model the lean PPO continues, its critic fitting it);
- the judgement: `head_to_head`, `agreement` (`with_agreement` adds it to each match),
  `report` (the table and OUT/judgement.json), and `exit_status`, the scripts' one line and
  exit status for whatever stopped them.

No script under train/ imports another: what two of them share lives here.
"""
from __future__ import annotations

import hashlib
import sys
from pathlib import Path

from agents.cli.common import Parser, one_line
from agents.judging.agreement import agreement as judged_agreement
from agents.judging.head_to_head import head_to_head as judged_h2h
from agents.training.folder import write_json          # an OSError names the file, not .part
from nertz_env.files import json_loads_bounded, read_capped
from nertz_env.files import write_json as write_result      # judgement.json, as ever written

RECORD = "league.json"
MAX_RECORD_BYTES = 1 << 20


class ScriptParser(Parser):
    """argparse's errors in one line naming the script and its --help, exit status 2."""

    def error(self, message):
        self.exit(2, f"{self.prog}: error: {one_line(message)} (see '{self.prog} --help')\n")


def sha256(path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def record(script: str, options: dict, files: dict) -> dict:
    """A league record: {option: value} in the order they are compared, {label: model path}
    whose bytes are recorded too (sha256)."""
    return {"script": script, "options": options,
            "sha256": {label: sha256(p) for label, p in files.items()}}


def _shown(value) -> str:
    return " ".join(map(str, value)) if isinstance(value, list) else str(value)


def _read(path: Path, what: str) -> dict:
    data = json_loads_bounded(read_capped(path, MAX_RECORD_BYTES, what), what)
    if not isinstance(data, dict):
        raise ValueError(f"{what} is not a JSON object")
    return data


def check_record(out: Path, new: dict, kind: str) -> None:
    """A rerun into `out`: the league record there (if any) must hold the same script,
    options and model bytes as `new`; ValueError naming the first that differs."""
    path = out / RECORD
    if not path.exists():
        return
    if not path.is_file():
        raise ValueError(f"--out: {str(path)!r} is not a file")
    old = _read(path, str(path))
    if old.get("script") != new["script"]:
        raise ValueError(f"{str(path)!r} was written by {old.get('script')!r}, not "
                         f"{new['script']}: give a new or empty --out")
    hint = (f"give the same options to continue (or judge) that {kind}, or a new or empty "
            "--out")
    for group in ("options", "sha256"):
        held = old.get(group)
        if not isinstance(held, dict):
            raise ValueError(f"{str(path)!r} has no {group!r} object: give a new or empty --out")
        for key, value in new[group].items():
            if key not in held or held[key] != value:
                was = _shown(held.get(key, "(none)"))
                if group == "options":
                    raise ValueError(f"--out {str(out)!r} holds a {kind} begun with {key} "
                                     f"{was}; this run gives {key} {_shown(value)}: {hint}")
                raise ValueError(f"--out {str(out)!r} holds a {kind} begun from {key} with "
                                 f"sha256 {was[:16]}; that file now has sha256 {value[:16]} "
                                 f"(it changed since): {hint}")


def check_leg_configs(legs: list) -> None:
    """legs: [(folder, {field: value this run trains it with}), ...]; each existing leg's
    config.json must agree (a leg another configuration trained is not reused)."""
    for folder, want in legs:
        path = folder / "config.json"
        if not path.is_file():
            continue
        cfg = _read(path, str(path)).get("config")
        if not isinstance(cfg, dict):
            raise ValueError(f"{str(path)!r} has no 'config' object: delete that leg")
        for key, value in want.items():
            if key in cfg and cfg[key] != value:
                raise ValueError(f"{str(folder)!r} was trained with {key}={cfg[key]}; this run "
                                 f"gives that leg {key}={value}: give the options it was "
                                 "trained with, or a new or empty --out")


def check_out_path(out: Path) -> None:
    """--out names a folder or can be made one: no file at it or above it (ValueError naming
    the file in the way)."""
    for p in (out, *out.parents):
        if p.exists() or p.is_symlink():
            if not p.is_dir():
                where = "" if p == out else f": {str(p)!r} is a file, not a folder"
                raise ValueError(f"--out {str(out)!r} is not a folder{where}")
            return


def make_out(out: Path, rec: dict) -> tuple:
    """--out created (parents too) and its league record written when it has none: (created,
    wrote). OSError naming what could not be made."""
    created = not out.exists()
    out.mkdir(parents=True, exist_ok=True)
    wrote = not (out / RECORD).exists()
    if wrote:
        try:
            write_json(out / RECORD, rec)
        except BaseException:
            undo_out(out, created, False)
            raise
    return created, wrote


def undo_out(out: Path, created: bool, wrote: bool) -> None:
    """After a run stopped: the record it wrote removed when no leg left a folder, and --out
    when this run made it and it is empty again."""
    try:
        if wrote and out.is_dir() and [p.name for p in out.iterdir()] == [RECORD]:
            (out / RECORD).unlink()
        if created and out.is_dir() and not any(out.iterdir()):
            out.rmdir()
    except OSError:
        pass


def count(option: str, value: int, lo: int, hi: int) -> int:
    """value when lo <= value <= hi, else one ValueError line naming the option."""
    if not lo <= value <= hi:
        raise ValueError(f"{option}={value} must be an int from {lo} to {hi}")
    return value


def seed(option: str, value: int, span: int) -> int:
    """A seed the run adds up to `span` to: within the limits table's seed range, less span."""
    from agents.arena.limits import MAX_SEED, check_int
    check_int("seed", value, option)
    if value > MAX_SEED - span:
        raise ValueError(f"{option}={value} must be at most {MAX_SEED - span} (the run uses "
                         f"seeds up to {option} + {span})")
    return value


def line(err) -> str:
    """An error's text on one line."""
    return " ".join(str(err).split())


# ------------------------------------------------------------------ the legs
BOTS = ["heuristic:style=river-builder", "heuristic", "greedy"]
RECIPE = dict(formats="rulebook", num_envs=184, n_steps=128, batch_size=2048, n_epochs=2,
              learning_rate=1e-4, ent_coef=0.001, shift_cost=0.02,
              constraint="useful-shifts", partner="self", checkpoint_every=1_000_000)


def leg(out: Path, init: str, opponents: list, steps: int, seed: int, recipe: dict,
        log=print) -> str:
    """One lean PPO run into `out` (skipped when out/final.npz exists); its final.npz."""
    from agents.training.lean_ppo import critic_path, lean_config, train_run    # torch: [train]
    final = out / "final.npz"
    if final.exists():
        log(f"{out.name}: done before, {final}")
        return str(final)
    if (out / "config.json").exists():
        raise ValueError(f"{out} holds a stopped leg (config.json, no final.npz): delete that "
                         "folder to run the leg again")
    warmup = 0 if critic_path(init).exists() else 300_000    # a fresh critic learns first
    cfg = lean_config(out=str(out), init=init, opponents=opponents, timesteps=steps,
                      seed=seed, critic_warmup=min(warmup, steps // 2), **recipe)
    log(f"{out.name}: {steps:,} steps from {init} against {len(opponents)} league entries")
    return str(train_run(cfg, log=lambda line: log(f"  {line}")))


# ------------------------------------------------------------------ the models
def check_model(path: str, where: str) -> None:
    """A model the legs continue or the judgement plays, read as `ppo:` reads it (the safe
    format by its loader, an SB3 zip without unpickling), every weight finite; a safe-format
    one's critic too where one lies beside it. ValueError naming `where`."""
    from agents.learned.weights import file_problem, is_weights, load_weights
    from agents.registry import make_agent
    from agents.training.lean_ppo import critic_path              # torch: the [train] extra
    try:
        problem = file_problem(path)                   # stat only: a FIFO is never opened
        if problem:
            raise ValueError("no such model file" if problem == "not found"
                             else f"model file {str(path)!r} {problem}")
        make_agent(f"ppo:{path}")                      # sizes, format, finite (safe format)
        if is_weights(path):
            crit = critic_path(path)
            if crit.is_file() and crit.with_suffix(".json").is_file():   # what lean_ppo reads
                load_weights(crit)
        else:
            import torch
            from agents.learned.sb3_zip import load_sb3
            if not all(torch.isfinite(t).all() for t in load_sb3(path).policy.parameters()):
                raise ValueError(f"ppo model {path!r} holds NaN or infinite weights")
    except ValueError as err:
        raise ValueError(f"{where}: {err}") from None


def check_main(path: str, where: str) -> list:
    """A main's model read by the safe-format loader (every weight finite, sizes this game's,
    the lean PPO's tanh layers) and its critic where one lies beside it; its hidden widths.
    ValueError naming `where`."""
    from agents.learned.sb3_zip import check_sizes
    from agents.learned.weights import is_weights, load_weights
    from agents.training.lean_ppo import critic_path              # torch: the [train] extra
    if not is_weights(path):
        raise ValueError(f"{where}: a main starts from a model in the safe format (NAME.npz "
                         "with NAME.json beside it), not an SB3 zip; `nertz export ZIP OUT` "
                         "writes one")
    try:
        meta, _ = load_weights(path)
        check_sizes(meta["observation_size"], meta["action_size"], f"model {path!r}")
        arch = meta["architecture"]
        if arch["activation"] != "tanh":
            raise ValueError(f"model {path!r} has {arch['activation']} layers; the lean PPO "
                             "continues tanh networks only")
        crit = critic_path(path)
        if crit.is_file() and crit.with_suffix(".json").is_file():   # what lean_ppo reads
            cmeta, _ = load_weights(crit)
            if (cmeta["architecture"]["hidden"] != arch["hidden"]
                    or cmeta["observation_size"] != meta["observation_size"]
                    or cmeta["action_size"] != 1):
                raise ValueError(f"critic {str(crit)!r} does not fit its actor (hidden "
                                 f"{cmeta['architecture']['hidden']}, {arch['hidden']} "
                                 "wanted, one output)")
    except ValueError as err:
        raise ValueError(f"{where}: {err}") from None
    return list(arch["hidden"])


def check_legs(out: Path, legs: list, kind: str, named: str, after, check) -> None:
    """--out: new, empty, or this `kind`'s (league, population) own folder: finished legs,
    each readable (`check(model, where)`), kept and skipped; a finished leg after an
    unfinished one (`after(leg)`: the legs that train before it, in order), a stopped leg, a
    judgement.json or anything else refused. legs: its leg folders in the order they train;
    named: how an error lists them."""
    check_out_path(out)
    if out.is_dir():
        names = sorted(p.name for p in out.iterdir() if p.name != RECORD)
        if "judgement.json" in names:
            raise ValueError(f"--out {str(out)!r} holds a judged {kind} (judgement.json): give "
                             "another folder (or delete judgement.json to judge again)")
        extra = sorted(set(names) - {f.name for f in legs})
        if extra:
            raise ValueError(f"--out {str(out)!r} holds {extra[0]!r}, which is not a leg of "
                             f"this {kind} ({named}): give a new or empty folder, or this "
                             f"{kind}'s own to continue it")
    for f in legs:
        if not f.exists():
            continue
        if not f.is_dir():
            raise ValueError(f"--out: {str(f)!r} is not a folder")
        if (f / "final.npz").exists():
            first = next((g for g in after(f) if not (g / "final.npz").exists()), None)
            if first:
                raise ValueError(f"{str(f)!r} is a finished leg after an unfinished one "
                                 f"({first.name}): delete it")
            check(str(f / "final.npz"), f"finished leg {str(f)!r}")
        elif any(f.iterdir()):
            raise ValueError(f"{f} holds a stopped leg (files, no final.npz): delete that "
                             "folder to run the leg again")


# ------------------------------------------------------------------ the judgement
def head_to_head(a: str, b: str, deals: int, seed: int) -> dict:
    """Model a against model b (paths) at 2 solo teams on `deals` duplicate deals: points per
    hand, a minus b, with its 95% interval over deals (agents/judging/head_to_head.py, the
    match of `nertz judge h2h`)."""
    row = judged_h2h(f"ppo:{a}", f"ppo:{b}", deals, seed)
    return {**row, "a": a, "b": b}


def agreement(a: str, b: str, teams: int, seed: int, tables: int = 128,
              ticks: int = 100) -> float:
    """Share of the positions with a choice where model b plays model a's move
    (agents/judging/agreement.py, `nertz judge agreement`)."""
    return judged_agreement(f"ppo:{a}", f"ppo:{b}", teams, seed, tables, ticks)


def with_agreement(rows: list, seed: int) -> list:
    """Each match with the share of positions where its second model plays the first's move,
    at 2 and 4 teams (how far training moved one from the other)."""
    for r in rows:
        r["agreement"] = {t: agreement(r["a"], r["b"], t, seed + t) for t in (2, 4)}
    return rows


def report(prog: str, argv, out: Path, rows: list, trained: float, t0: float,
           **extra) -> None:
    """The judgement printed as a table and written to OUT/judgement.json (the command,
    seconds, `extra`, the rows)."""
    import time
    print("| match (2 solo teams) | deals | points per hand, first minus second (95% CI) | "
          "same move, 2 / 4 teams |")
    print("|---|---|---|---|")
    for r in rows:
        print(f"| {r['match']} | {r['deals']:,} | {r['diff']:+.2f} "
              f"[{r['ci_low']:+.2f}, {r['ci_high']:+.2f}] | {r['agreement'][2]:.4f} / "
              f"{r['agreement'][4]:.4f} |")
    cmd = f"{prog} " + " ".join(argv if argv is not None else sys.argv[1:])
    write_result(out / "judgement.json", {"command": cmd, "train_seconds": trained,
                                          "seconds": time.perf_counter() - t0, **extra,
                                          "rows": rows})
    print(f"wrote {out / 'judgement.json'}")


def exit_status(err: BaseException, prog: str, stopped: str, failures=()):
    """What stopped a script, as one line on stderr; its exit status: 2 bad input
    (ValueError), 1 a file (OSError) or a run that failed (`failures`), 130 Ctrl-C
    (`stopped`: what the run leaves behind); None for anything else (the caller raises it)."""
    if isinstance(err, (ValueError, *failures)):
        print(f"{prog}: error: {line(err)}", file=sys.stderr)
        return 2 if isinstance(err, ValueError) else 1
    if isinstance(err, OSError):
        where = err.filename if err.filename is not None else "a file"
        print(f"{prog}: error: {where}: {line(err.strerror or err)}", file=sys.stderr)
        return 1
    if isinstance(err, KeyboardInterrupt):
        print(f"{prog}: interrupted ({stopped})", file=sys.stderr)
        return 130
    return None
