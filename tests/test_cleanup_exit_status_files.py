"""The exit status of a file fault is the same whatever reads it (README.md, Exit status): a path
that names no file (missing, a directory, through a file) is bad input, exit 2; an existing
file the system will not let be read (permission, an I/O error) is exit 1. Either way one line
on stderr naming the file. Checked through the real CLI entry (agents.cli main, and once as a
subprocess) for every reader kind: models (ppo:PATH .npz and SB3 .zip, learned:family=,
search:leaf=), replays, experiment specs and recipes, judge grid --replot results. Running as
root, a permission fault is a monkeypatched open, stat or read raising it (chmod would not)."""
from __future__ import annotations

import builtins
import errno
import io
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from agents.cli import main as nertz_main
from nertz_env.files.bounded import read_capped, read_fault, zip_member_capped

ROOT = Path(__file__).resolve().parents[1]
MODELS = ROOT / "agents" / "learned" / "models"


def _model(stem: Path) -> Path:
    for ext in (".npz", ".json"):
        shutil.copy(MODELS / f"learned{ext}", stem.with_suffix(ext))
    return stem.with_suffix(".npz")


def _plain(path: Path) -> Path:
    path.write_bytes(b"{}\n")             # there; its content never matters: it is not read
    return path


# kind: (the file a reader opens, made in tmp_path, or None to leave it missing; the argv)
def _h2h(spec):
    return ["judge", "h2h", spec, "random", "--deals", "2", "--quiet"]


KINDS = {
    "model weights": (lambda d: _model(d / "m"), lambda p, d: _h2h(f"ppo:{p}")),
    "model description": (lambda d: _model(d / "m").with_suffix(".json"),
                          lambda p, d: _h2h(f"ppo:{p.with_suffix('.npz')}")),
    "ppo model zip": (lambda d: _plain(d / "m.zip"), lambda p, d: _h2h(f"ppo:{p}")),
    "model family": (lambda d: _plain(d / "family.json"),
                     lambda p, d: _h2h(f"learned:family={p}")),
    "leaf net": (lambda d: _model(d / "leaf"), lambda p, d: _h2h(f"search:leaf={p}")),
    "replay file": (lambda d: _plain(d / "r.nertz.json.gz"), lambda p, d: ["replay", str(p)]),
    "experiment spec": (lambda d: _plain(d / "x.toml"), lambda p, d: ["experiment", str(p)]),
    "recipe": (lambda d: _plain(d / "r.toml"),
               lambda p, d: ["train", "--spec", str(p), "--out", str(d / "out")]),
    "grid results": (lambda d: _plain(d / "grid.json"),
                     lambda p, d: ["judge", "grid", "--replot", str(p), "--out", str(d / "out")]),
}
MISSING = {"model weights": "m.npz", "model description": "m.json", "ppo model zip": "m.zip",
           "model family": "family.json", "leaf net": "leaf.npz",
           "replay file": "r.nertz.json.gz", "experiment spec": "x.toml", "recipe": "r.toml",
           "grid results": "grid.json"}


class _FailingRead:
    """An open file whose reads before offset `below` fail as a bad disk's do (EIO)."""

    def __init__(self, fh, below):
        self._fh, self._below = fh, below

    def read(self, *args):
        if self._fh.tell() < self._below:
            raise OSError(errno.EIO, "Input/output error")
        return self._fh.read(*args)

    def __getattr__(self, name):
        return getattr(self._fh, name)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._fh.close()


@pytest.fixture
def deny(monkeypatch):
    """deny(path, how, below): opening ("open"), stat()ing ("stat") or reading ("read", its
    bytes before `below`) `path` fails as the system would fail it (PermissionError; EIO
    for a read)."""
    denied = {"open": set(), "stat": set(), "read": {}}
    real_os_open, real_io_open, real_stat, real_fdopen = os.open, io.open, os.stat, os.fdopen

    def hit(how, p) -> bool:
        if isinstance(p, int):
            return False
        try:
            return os.path.abspath(os.fspath(p)) in denied[how]
        except TypeError:
            return False

    def refuse(p):
        raise PermissionError(errno.EACCES, "Permission denied", os.fspath(p))

    def os_open(p, *a, **k):
        return refuse(p) if hit("open", p) else real_os_open(p, *a, **k)

    def io_open(p, *a, **k):
        return refuse(p) if hit("open", p) else real_io_open(p, *a, **k)

    def os_stat(p, *a, **k):
        return refuse(p) if hit("stat", p) else real_stat(p, *a, **k)

    def fdopen(fd, *a, **k):
        fh = real_fdopen(fd, *a, **k)
        below = denied["read"].get(os.readlink(f"/proc/self/fd/{fd}"))
        return fh if below is None else _FailingRead(fh, below)

    monkeypatch.setattr(os, "open", os_open)
    monkeypatch.setattr(io, "open", io_open)
    monkeypatch.setattr(builtins, "open", io_open)
    monkeypatch.setattr(os, "stat", os_stat)
    monkeypatch.setattr(os, "fdopen", fdopen)

    def add(path, how="open", below=float("inf")):
        if how == "read":
            denied["read"][os.path.realpath(path)] = below
        else:
            denied[how].add(os.path.abspath(path))
    return add


def _one_line_naming(err: str, path: Path) -> str:
    lines = err.strip().splitlines()
    assert len(lines) == 1 and str(path) in lines[0], err
    return lines[0]


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_missing_file_is_bad_input_exit_2(tmp_path, capsys, kind):
    make, argv = KINDS[kind]
    path = tmp_path / MISSING[kind]
    if kind == "model description":           # the .npz there, its .json beside it missing
        make(tmp_path).unlink()
    assert nertz_main(argv(path, tmp_path)) == 2
    _one_line_naming(capsys.readouterr().err, path)
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_file_the_system_will_not_open_is_exit_1(tmp_path, capsys, deny, kind):
    make, argv = KINDS[kind]
    path = make(tmp_path)
    deny(path)
    assert nertz_main(argv(path, tmp_path)) == 1
    line = _one_line_naming(capsys.readouterr().err, path)
    assert "Permission denied" in line
    assert not (tmp_path / "out").exists()


def test_a_model_whose_stat_is_refused_is_exit_1(tmp_path, capsys, deny):
    """A folder on its path without search permission: stat fails with EACCES (it said
    'cannot be read (Permission denied)' and exit 2, as if the path were wrong)."""
    path = _model(tmp_path / "m")
    deny(path, "stat")
    assert nertz_main(_h2h(f"ppo:{path}")) == 1
    assert "Permission denied" in _one_line_naming(capsys.readouterr().err, path)


@pytest.mark.parametrize("kind", ["replay file", "experiment spec", "model description"])
def test_an_io_error_while_reading_is_exit_1(tmp_path, capsys, deny, kind):
    make, argv = KINDS[kind]
    path = make(tmp_path)
    deny(path, "read")
    assert nertz_main(argv(path, tmp_path)) == 1
    assert "Input/output error" in _one_line_naming(capsys.readouterr().err, path)


def test_an_io_error_inside_a_models_zip_member_is_exit_1(tmp_path, capsys, deny):
    """The .npz's directory (at its end) reads, its first array's data does not: the disk's
    EIO inside a zip member is exit 1 naming the file, not 'damaged' (exit 2)."""
    path = _model(tmp_path / "m")
    deny(path, "read", below=path.stat().st_size - 70_000)
    assert nertz_main(_h2h(f"ppo:{path}")) == 1
    assert "Input/output error" in _one_line_naming(capsys.readouterr().err, path)


class _Zip:
    """A zipfile whose member's open fails with `exc`."""

    def __init__(self, exc):
        self.exc = exc

    def getinfo(self, name):
        return zipfile.ZipInfo(name)

    def open(self, info):
        raise self.exc


def test_a_zip_member_fault_is_the_disks_or_the_files():
    with pytest.raises(OSError) as err:
        zip_member_capped(_Zip(OSError(errno.EIO, "Input/output error")), "data", 10, "zip")
    assert err.value.errno == errno.EIO
    for exc in (OSError("Invalid data stream"), zipfile.BadZipFile("Bad CRC-32"), EOFError()):
        with pytest.raises(ValueError, match="'data' is damaged or unreadable"):
            zip_member_capped(_Zip(exc), "data", 10, "zip")


@pytest.mark.parametrize("make", [lambda d: d, lambda d: _plain(d / "afile") / "x.toml"],
                         ids=["a directory", "through a file"])
def test_a_path_that_names_no_file_is_exit_2(tmp_path, capsys, make):
    path = make(tmp_path)
    assert nertz_main(["experiment", str(path)]) == 2
    _one_line_naming(capsys.readouterr().err, path)


def test_read_fault_sorts_by_errno(tmp_path):
    p = tmp_path / "f"
    for code in (errno.ENOENT, errno.ENOTDIR, errno.EISDIR, errno.ELOOP, errno.ENAMETOOLONG,
                 errno.EINVAL):
        got = read_fault(OSError(code, os.strerror(code)), p, "spec")
        assert type(got) is ValueError and str(p) in str(got), got
    for code in (errno.EACCES, errno.EPERM, errno.EIO):
        got = read_fault(OSError(code, os.strerror(code)), p, "spec")
        assert isinstance(got, OSError) and got.errno == code and got.filename == str(p)
    assert type(read_fault(OSError("no errno"), p)) is ValueError
    with pytest.raises(ValueError, match="cannot read it"):
        read_capped(p, 10, "spec")


def test_the_installed_entry_point_exits_2_on_a_missing_replay(tmp_path):
    """`python -m agents replay MISSING`, a process of its own: exit 2, one line."""
    path = tmp_path / "gone.nertz.json.gz"
    done = subprocess.run([sys.executable, "-m", "agents", "replay", str(path)], cwd=ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2, done.stderr
    assert "No such file" in _one_line_naming(done.stderr, path)
