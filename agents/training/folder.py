"""A training run's folder: where a run may write (`check_out`: new, empty, or a resume's own
run folder; another run's files are never replaced), what a run stopped by Ctrl-C or an
error leaves (`stopped_cleanly`: the folder removed while it holds no checkpoint, so the
same command can run again; kept after one, with the command that continues it), and
writes whose OSError names the file asked for, never its temporary .part (`naming`,
`write_json`). `plain`: an error's text without terminal escape codes.

Imports config.py (checkpoints.py imports this module): where a checkpoint's files and
run folder are (`checkpoint_files`, `checkpoint_run`) is here.
"""
from __future__ import annotations

import os
import re
import shutil
from contextlib import contextmanager
from pathlib import Path

from nertz_env.files import write_json as _write_json

from .config import TrainConfig


@contextmanager
def naming(path):
    """An OSError raised inside names `path` where it named a temporary file (atomic_path's
    hidden .part beside it) or no file: the person is told the output they asked for."""
    try:
        yield
    except OSError as err:
        name = None if err.filename is None else str(err.filename)
        if name is None or name.endswith(".part"):
            raise OSError(err.errno, err.strerror or str(err), str(path)) from None
        raise


def write_json(path, obj) -> Path:
    """nertz_env.files.write_json, an OSError naming `path` (never its temporary file)."""
    with naming(path):
        return _write_json(path, obj)


ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[@-_]?")


def plain(text) -> str:
    """text without terminal escape codes (torch colours some of its errors) or other control
    characters but newlines and tabs: what an error line may print."""
    text = ANSI.sub("", str(text))
    return "".join(ch for ch in text if ch in "\n\t" or ch >= " " and ch != "\x7f")


def checkpoint_files(path) -> tuple:
    """(zip, json, rng) paths of a checkpoint given as its zip (with or without .zip); rng is
    step_N.rng.json, or an older checkpoint's step_N.rng.pt where only that exists."""
    p = Path(path)
    if p.suffix != ".zip":
        p = p.with_name(p.name + ".zip")
    stem = p.with_suffix("")
    rng, legacy = Path(f"{stem}.rng.json"), Path(f"{stem}.rng.pt")
    return p, Path(f"{stem}.json"), legacy if legacy.is_file() and not rng.is_file() else rng


def checkpoint_run(path) -> Path | None:
    """The run folder a checkpoint belongs to, from its path (RUN/checkpoints/step_N.zip:
    RUN), or None for a zip outside a checkpoints/ folder. Never read from its files."""
    p = checkpoint_files(path)[0]
    return p.parent.parent if p.parent.name == "checkpoints" else None


def _same(a: Path, b: Path) -> bool:
    try:
        return a.resolve() == b.resolve()
    except (OSError, RuntimeError):
        return False


def checkpoint_steps(run: Path, lean: bool) -> list:
    """(step, path) of the complete checkpoints in run/checkpoints/, by step: an SB3 run's
    step_N.zip with its step_N.json (written last), a lean run's step_N.npz with its .json."""
    d = Path(run) / "checkpoints"
    out = []
    if not d.is_dir():
        return out
    for p in d.glob("step_*.json"):
        m = re.fullmatch(r"step_(\d+)\.json", p.name)
        ext = ".npz" if lean else ".zip"
        if m and p.with_suffix(ext).is_file():
            out.append((int(m.group(1)), p.with_suffix(ext)))
    return sorted(out)


RUN_FILES = ("config.json", "bc.json", "eval.csv", "eval.jsonl", "final.zip", "final.npz",
             "final.json")
RUN_DIRS = ("checkpoints", "snapshots", "critics", "tb")


def unfinished(out: Path) -> str | None:
    """None when out holds a finished `nertz train` run and nothing else (config.json, a
    final model, and only the files and folders a run writes), else why not."""
    held = sorted(p.relative_to(out).as_posix() for p in out.rglob("*") if not p.is_dir())
    foreign = [f for f in held if f not in RUN_FILES and f.split("/")[0] not in RUN_DIRS]
    if foreign:
        return f"it holds {foreign[0]}, which nertz train does not write"
    if not (out / "config.json").is_file():
        return "it has no config.json"
    if not ((out / "final.zip").is_file() or (out / "final.npz").is_file()):
        return "it has no final model (an unfinished run: continue or remove it)"
    return None


def check_out(cfg: TrainConfig, overwrite: bool = False) -> str:
    """Where a run may write, checked before anything is: 'new' (out does not exist), 'empty'
    (an empty folder), 'own' (a resume into its checkpoint's own run folder) or, with
    overwrite, 'replace' (a finished run of nertz train and nothing else); a ValueError
    naming out otherwise (a file, or a folder holding anything: another run's files are
    never replaced without --overwrite, a resume's --out included)."""
    out = Path(cfg.run.out)
    if cfg.run.resume:
        run = checkpoint_run(cfg.run.resume)
        if run is not None and out.exists() and _same(out, run):
            return "own"
    if not out.exists():
        return "new"
    if not out.is_dir():
        raise ValueError(f"out={cfg.run.out!r} is a file, not a folder: name a new or empty folder")
    if not any(out.iterdir()):
        return "empty"
    if overwrite:
        why = unfinished(out)
        if why:
            raise ValueError(f"out={cfg.run.out!r}: --overwrite replaces only a finished nertz "
                             f"train run, and {why}; name a new or empty folder")
        if cfg.run.resume and Path(cfg.run.resume).resolve().is_relative_to(out.resolve()):
            raise ValueError(f"out={cfg.run.out!r}: --overwrite would delete the checkpoint it "
                             "resumes; name another folder")
        return "replace"
    if (out / "config.json").exists():
        what = "already holds a run (config.json)"
    else:
        what = "is not empty"
    hint = "name a new or empty folder"
    if cfg.run.resume:
        hint += (" (leave --out out to continue in the checkpoint's own run folder)"
                 if checkpoint_run(cfg.run.resume) is not None else "")
    else:
        done = checkpoint_steps(out, cfg.run.learner == "lean")
        if done and cfg.run.learner != "lean":
            hint += f", or continue that run: nertz train --resume {done[-1][1]}"
        if unfinished(out) is None:
            hint += ", or give --overwrite to replace that finished run"
    raise ValueError(f"out={cfg.run.out!r} {what}: {hint}")


def aside(run: Path) -> Path:
    """Where an earlier run replaced by --overwrite waits until the new run ends."""
    return run.with_name(f".{run.name}.old-{os.getpid()}")


def stopped_line(cfg: TrainConfig, state: str, run: Path) -> str:
    """After a run stopped (Ctrl-C or an error): its folder removed when it holds no
    checkpoint of this run (so the same command can run again; an earlier run replaced by
    --overwrite is put back), else kept; the line says which, and the command that
    continues it."""
    lean = cfg.run.learner == "lean"
    done = checkpoint_steps(run, lean)
    if state != "own" and not done:
        if state in ("new", "replace"):
            shutil.rmtree(run, ignore_errors=True)
        else:                                        # it was empty: empty again
            for p in list(run.iterdir()) if run.is_dir() else ():
                shutil.rmtree(p, ignore_errors=True) if p.is_dir() else p.unlink(missing_ok=True)
        if state == "replace":
            os.rename(aside(run), run)
            return (f"no checkpoint was written: {run} holds the earlier run again, as it was")
        return (f"no checkpoint was written: {run} was " + ("removed" if state == "new"
                else "emptied") + ", so the same command can run again")
    if state == "replace":
        shutil.rmtree(aside(run), ignore_errors=True)
    if not done:
        return f"{run} is kept as it was"
    step, ck = done[-1]
    gone = " (the earlier run --overwrite replaced is deleted)" if state == "replace" else ""
    if lean:
        return (f"{run} is kept with its checkpoints{gone} (the latest at step {step:,}: {ck}); "
                f"the lean PPO does not resume: start a new run from it with --init {ck} "
                f"(actor and critic), or remove {run} to run the same command again")
    return (f"{run} is kept with its checkpoints{gone}; continue from the latest (step "
            f"{step:,}): nertz train --resume {ck} --timesteps {cfg.run.timesteps} (this run's "
            "total)")


@contextmanager
def stopped_cleanly(cfg: TrainConfig, state: str, log=print):
    """The part of a run that writes into its folder: the folder made (an earlier run that
    --overwrite replaces moved aside first: `aside`), then on success the earlier run
    deleted; on Ctrl-C or an error the folder removed or kept (stopped_line), the line put
    on the KeyboardInterrupt (`out_note`, which `nertz` prints) or, for an error, logged
    before it propagates."""
    run = Path(cfg.run.out)
    if state == "replace":
        os.rename(run, aside(run))
    try:
        run.mkdir(parents=True, exist_ok=True)       # its OSError names the path; nothing made
    except BaseException:
        if state == "replace":
            os.rename(aside(run), run)
        raise
    try:
        yield
    except BaseException as err:
        try:
            line = stopped_line(cfg, state, run)
        except Exception:                            # the cleanup must not hide the error
            line = None
        if isinstance(err, KeyboardInterrupt):
            err.out_note = line
        elif line:
            log(line)
        raise
    if state == "replace":
        shutil.rmtree(aside(run), ignore_errors=True)
