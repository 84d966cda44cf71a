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
  both back when a run stops before any leg left a folder.
"""
from __future__ import annotations

import hashlib
from pathlib import Path

from agents.cli.common import Parser, one_line
from agents.training.folder import write_json          # an OSError names the file, not .part
from nertz_env.files import json_loads_bounded, read_capped

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
