"""A run's output folder: fresh, claimed by one run, complete or absent.

run_folder(out) is a context manager around the writing of a run's files:
- Fresh: `out` must not exist, or be an empty folder; a folder holding files is refused
  unless overwrite=True, and even then only when it is a finished run of this project (it
  holds MARKER) and holds nothing but the files that run listed there, so --overwrite never
  deletes a file nertz did not write.
- Claimed: the files are written into a staging folder beside it, OUT.partial, created with
  mkdir (atomic: exactly one run gets it) and holding LOCK (pid and host); a second run into
  the same `out` is refused while the first runs. A staging folder whose run is gone (its pid
  no longer runs on this host) is taken over.
- Complete or absent: on success MARKER (the command and every file's name) is written last
  and the staging folder is renamed to `out` (an old run replaced by overwrite is moved
  aside first and put back if the rename fails). On any exception, KeyboardInterrupt
  included, the staging folder is removed and `out` is left as it was.
Each file inside is written whole or not at all by the writers (nertz_env.files).
"""
from __future__ import annotations

import json
import os
import re
import shutil
import socket
from contextlib import contextmanager
from pathlib import Path

from nertz_env.files import read_capped, swap_in_folder, write_json

MARKER = ".nertz-run.json"
# the commands writing MARKER
REPLACEABLE = "nertz tournament, experiment, probe, exploit or judge"
LOCK = ".nertz-lock"
SUFFIX = ".partial"


def _reason(err: OSError) -> str:
    return err.strerror or str(err)


def _files(folder: Path) -> list:
    """Every file under folder, as paths relative to it, sorted."""
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*") if not p.is_dir())


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:              # exists, owned by someone else
        return True
    return True


def _stale(staging: Path) -> bool:
    """Whether staging's run is gone: its LOCK names this host and a pid that is not running."""
    try:
        info = json.loads(read_capped(staging / LOCK, 4096, "lock file"))
        return info["host"] == socket.gethostname() and not _running(int(info["pid"]))
    except (OSError, ValueError, KeyError, TypeError):
        return False


def _claim(out: Path, option: str) -> Path:
    staging = out.with_name(out.name + SUFFIX)
    for attempt in (0, 1):
        try:
            staging.mkdir()
            break
        except FileExistsError:
            if attempt == 0 and _stale(staging):
                shutil.rmtree(staging, ignore_errors=True)
                continue
            raise ValueError(f"{option} {str(out)!r} is in use by another run (its files are "
                             f"being written to {str(staging)!r}); wait for it to finish, or "
                             "remove that folder if no run is writing there") from None
    write_json(staging / LOCK, {"pid": os.getpid(), "host": socket.gethostname()})
    return staging


def _check_target(out: Path, option: str, overwrite: bool) -> bool:
    """Whether `out` holds an old run that overwrite replaces; ValueError when it may not be
    written (module docstring)."""
    if not out.exists():
        return False
    if not out.is_dir():
        raise ValueError(f"{option} {str(out)!r} is a file, not a folder: name a folder")
    held = _files(out)
    if not held and not any(out.iterdir()):
        return False
    try:
        marker = json.loads(read_capped(out / MARKER, 1 << 20, "run marker"))
        listed, command = marker["files"], str(marker.get("command") or "")
        foreign = sorted(set(held) - set(listed) - {MARKER})
    except (OSError, ValueError, KeyError, TypeError, AttributeError):
        listed = None
    where = f"{option} {str(out)!r}"
    if listed is None:
        train = (out / "config.json").is_file()
        what = ("holds another command's run (nertz train's: config.json)" if train else
                f"does not look like a nertz run (no readable {MARKER})")
        raise ValueError(f"{where} is not empty and {what}; --overwrite replaces only an "
                         f"earlier run of {REPLACEABLE} (it lists its files in {MARKER}), "
                         "not this: name a new or empty folder" + (
                             "" if train else ", or remove it yourself"))
    if foreign:
        raise ValueError(f"{where} holds files the earlier run did not write "
                         f"(e.g. {_short(foreign[0])}): --overwrite would delete them; move "
                         "them or name another folder")
    if not overwrite:
        run = f"an earlier nertz {command} run" if command else "an earlier nertz run"
        raise ValueError(f"{where} is not empty ({run}, {len(held)} file(s)): name a new "
                         "folder, or give --overwrite to replace that run")
    return True


def _short(name: str, most: int = 80) -> str:
    """A file name shown in a message, cut to `most` characters."""
    return name if len(name) <= most else name[:most - 3] + "..."


def _commit(staging: Path, out: Path, command: str, replace: bool) -> None:
    (staging / LOCK).unlink()
    write_json(staging / MARKER, {"command": command, "files": _files(staging)})
    swap_in_folder(staging, out, replace)


@contextmanager
def run_folder(out, *, overwrite: bool = False, command: str = "", option: str = "--out"):
    """Yield the staging folder to write a run's files into (module docstring); `option`
    names the folder in refusals. out "" or None: nothing is claimed, None is yielded.
    Refusals are ValueErrors; an OSError is re-raised with the path it concerns."""
    if not out:
        yield None
        return
    out = Path(out)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
    except OSError as err:               # I/O, not bad input: exit 1 (agents/cli main)
        blocker = next((q for q in (out.parent, *out.parent.parents) if q.is_file()), None)
        why = f"{str(blocker)!r} is a file, not a folder" if blocker else _reason(err)
        raise OSError(err.errno, f"{option}: cannot create its parent folder ({why})",
                      str(out)) from None
    try:
        staging = _claim(out, option)
    except OSError as err:
        raise OSError(err.errno, f"{option}: cannot create a folder beside it "
                      f"({_reason(err)})", str(out)) from None
    try:
        replace = _check_target(out, option, overwrite)
        yield staging
        _commit(staging, out, command, replace)
    except OSError as err:
        shutil.rmtree(staging, ignore_errors=True)
        raise OSError(err.errno, f"{err.strerror or err}; nothing was kept in {str(out)!r}",
                      shown_path(err.filename, staging, out), None,
                      shown_path(err.filename2, staging, out)) from err
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def shown_path(name, staging=None, out=None):
    """The path a message names for `name`, an OSError's file: a writer's temporary file
    (nertz_env/files atomic_path: .NAME.HEX.part) as the file it stands for, and a path in
    the staging folder as the one it gets in `out`; None stays None."""
    if name is None:
        return None
    p = Path(os.fsdecode(name))
    m = _TEMPORARY.fullmatch(p.name)
    if m:
        p = p.with_name(m.group(1))
    if staging is not None:
        try:
            p = Path(out) / p.relative_to(staging)
        except ValueError:
            pass
    return str(p)


_TEMPORARY = re.compile(r"\.(.+)\.[0-9a-f]{12}\.part")


@contextmanager
def writing(path):
    """An OSError inside names `path` when it names no file itself (a full disk's write)."""
    try:
        yield
    except OSError as err:
        if err.filename is None:
            raise OSError(err.errno, err.strerror or str(err), str(path)) from err
        raise


def write_files(jobs) -> list:
    """Run each (path, write) of jobs, write(path), with OSErrors naming the path; returns
    the paths."""
    out = []
    for path, write in jobs:
        with writing(path):
            got = write(path)
        out.append(Path(got) if got is not None else Path(path))
    return out


def write_run(write_into, out_dir, *, plot: bool, overwrite: bool, command: str) -> list:
    """A result's write(out_dir): write_into(folder, plot) inside a run_folder(out_dir); the
    paths of the files as named in out_dir once it is renamed there."""
    with run_folder(out_dir, overwrite=overwrite, command=command, option="out_dir") as staging:
        paths = write_into(staging, plot)
    return final_paths(paths, staging, out_dir)


def final_paths(paths, staging, out) -> list:
    """The paths a run wrote into `staging`, as they are named once it is renamed to `out`."""
    return [Path(out) / Path(p).relative_to(staging) for p in paths]
