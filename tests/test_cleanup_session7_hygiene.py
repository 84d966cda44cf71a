"""Issue 42's small hostile-input leftovers. (1) A labels folder (agents/training/labels.py
read_labels) follows the project's one rule for file faults (nertz_env/files/bounded.py
read_fault): a path that names no file, or wrong content, is a ValueError (exit 2); an
existing labels.json or shard the system will not let be read (permission, an I/O error) is
an OSError naming that file (exit 1), one line through the scripts that read labels. (2) An
agent spec's model file the system will not let be read is one line naming the file and the
spec ("agent 'SPEC': ...", as a bad file's line does), still exit 1. (3) A family file's own
keys are quoted (and cut short) in its refusals: a key with a newline is still one line.
Running as root, a permission fault is a monkeypatched open raising it (chmod would not)."""
from __future__ import annotations

import builtins
import errno
import io
import json
import os
import shutil
from pathlib import Path

import numpy as np
import pytest

from agents.training import labels as L
from nertz_env.actions import N_ACTIONS
from nertz_env.core.observe import OBS_DIM

SHARD = "2teams_d0000000-0000001.npz"


def _labels_folder(folder: Path) -> Path:
    """A one-row v0 labels folder as write_labels lays it out (its content is never judged)."""
    folder.mkdir(parents=True)
    legal = np.zeros((1, N_ACTIONS), bool)
    legal[0, :2] = True
    arrays = {"obs": np.zeros((1, OBS_DIM), np.float32), "legal": np.packbits(legal, axis=1),
              "net_move": np.zeros(1, np.int16), "deal": np.zeros(1, np.int64),
              "seating": np.zeros(1, np.int16), "seat": np.zeros(1, np.int8),
              "hand": np.zeros(1, np.int16), "tick": np.zeros(1, np.int32),
              "candidates": np.array([[0, 1]], np.int16), "gains": np.zeros((1, 2), np.float32),
              "se": np.ones((1, 2), np.float32), "search_move": np.zeros(1, np.int16),
              "searched": np.ones(1, bool), "net_points": np.zeros(1, np.int16),
              "range": np.array([0, 1], np.int64)}
    (folder / SHARD).write_bytes(L.shard_bytes(arrays))
    info = {"format": L.FORMAT, "version": L.VERSION, "observation": L.OBSERVATION,
            "obs_dim": OBS_DIM, "net": "x.npz", "net_sha256": "0", "search": "search",
            "opponent": "learned", "seed": 0, "deals": 1, "block": 1, "stride": 1,
            "formats": ["2teams"], "rows": 1,
            "shards": {SHARD: {"rows": 1, "searched": 1, "deviates": 0, "net_points": 0.0}}}
    (folder / L.LABELS_FILE).write_text(json.dumps(info))
    return folder


@pytest.fixture
def deny(monkeypatch):
    """deny(path, code): opening `path` (os.open, open) fails with that errno, as the system fails it."""
    denied = {}
    real_open, real_io_open = os.open, io.open

    def os_open(p, *a, **k):
        code = denied.get(os.path.abspath(os.fspath(p))) if not isinstance(p, int) else None
        if code is not None:
            raise OSError(code, os.strerror(code), os.fspath(p))
        return real_open(p, *a, **k)

    def io_open(p, *a, **k):
        code = denied.get(os.path.abspath(os.fspath(p))) if not isinstance(p, int) else None
        if code is not None:
            raise OSError(code, os.strerror(code), os.fspath(p))
        return real_io_open(p, *a, **k)

    monkeypatch.setattr(os, "open", os_open)
    monkeypatch.setattr(io, "open", io_open)
    monkeypatch.setattr(builtins, "open", io_open)

    def add(path, code=errno.EACCES):
        denied[os.path.abspath(path)] = code
    return add


@pytest.mark.parametrize("which", [L.LABELS_FILE, SHARD])
@pytest.mark.parametrize("code", [errno.EACCES, errno.EIO])
def test_a_labels_file_the_system_refuses_is_an_oserror_naming_it(tmp_path, deny, which, code):
    folder = _labels_folder(tmp_path / "lab")
    deny(folder / which, code)
    with pytest.raises(OSError) as err:
        L.read_labels(folder)
    assert not isinstance(err.value, ValueError)
    assert err.value.errno == code and err.value.filename == str(folder / which)
    assert os.strerror(code) in str(err.value) and "\n" not in str(err.value)


@pytest.mark.parametrize("which", [L.LABELS_FILE, SHARD])
@pytest.mark.parametrize("how", ["missing", "a directory"])
def test_a_labels_path_naming_no_file_is_a_valueerror_naming_it(tmp_path, which, how):
    folder = _labels_folder(tmp_path / "lab")
    (folder / which).unlink()
    if how == "a directory":
        (folder / which).mkdir()
    with pytest.raises(ValueError) as err:
        L.read_labels(folder)
    text = str(err.value)
    assert str(folder / which) in text and "\n" not in text, text    # the path, whole


def test_a_shards_disk_fault_inside_the_zip_is_exit_1_not_a_damaged_npz(tmp_path,
                                                                        monkeypatch):
    """EIO met inflating a member (zip_member_capped passes the system's OSError on): an
    OSError naming the shard, not 'not a readable npz' (exit 2)."""
    folder = _labels_folder(tmp_path / "lab")

    def eio(*a, **k):
        raise OSError(errno.EIO, "Input/output error")
    monkeypatch.setattr(L, "zip_member_capped", eio)
    with pytest.raises(OSError) as err:
        L.read_labels(folder)
    assert not isinstance(err.value, ValueError)
    assert err.value.errno == errno.EIO and err.value.filename == str(folder / SHARD)


def test_expert_iteration_exits_1_in_one_line_on_a_labels_file_it_may_not_read(
        tmp_path, capsys, deny):
    """The real script's main, resumed at a generation whose labels are there (so it reads
    them, labelling nothing): one line naming labels.json, exit 1 (it was exit 2)."""
    pytest.importorskip("torch")
    import train.expert_iteration as ei
    out = tmp_path / "run"
    argv = ["--out", str(out), "--formats", "2teams:1", "--search",
            "search:worlds=2,horizon=5", "--generations", "1", "--epochs", "1"]
    rec = ei.check(ei.parser().parse_args(argv))
    out.mkdir()
    (out / ei.RECORD).write_text(json.dumps(rec))
    labels = _labels_folder(out / "gen1" / "labels" / "2teams") / L.LABELS_FILE
    deny(labels)
    assert ei.main(argv + ["--resume"]) == 1
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and str(labels) in lines[0] and "Permission denied" in lines[0], \
        lines


def test_distill_capacity_exits_1_in_one_line_on_a_shard_it_may_not_read(tmp_path, capsys,
                                                                          deny):
    """train/distill_capacity.py caught only Ctrl-C: a labels fault was a traceback."""
    pytest.importorskip("torch")
    import train.distill_capacity as dc
    folder = _labels_folder(tmp_path / "lab")
    deny(folder / SHARD)
    start = "agents/learned/models/learned_stacking.npz"
    assert dc.main(["--labels", str(folder), "--start", start, "--hidden", "8,8",
                    "--out", str(tmp_path / "out")]) == 1
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and str(folder / SHARD) in lines[0] \
        and "Permission denied" in lines[0], lines
    assert not (tmp_path / "out").exists()


# ------------------------------------------------------------ (2) a spec's model file refused
MODELS = Path(__file__).resolve().parents[1] / "agents" / "learned" / "models"


def _model(stem: Path) -> Path:
    for ext in (".npz", ".json"):
        shutil.copy(MODELS / f"learned{ext}", stem.with_suffix(ext))
    return stem.with_suffix(".npz")


# name: (make the file that is refused in folder d, the spec that reads it)
SPECS = {
    "ppo npz": (lambda d: _model(d / "m"), lambda f: f"ppo:{f}"),
    "ppo npz description": (lambda d: _model(d / "m").with_suffix(".json"),
                            lambda f: f"ppo:{f.with_suffix('.npz')}"),
    "ppo zip": (lambda d: _write(d / "m.zip"), lambda f: f"ppo:{f}"),
    "learned family": (lambda d: _write(d / "family.json"), lambda f: f"learned:family={f}"),
    "learned model": (lambda d: MODELS / "learned.npz", lambda f: "learned:model=generalist"),
    "search leaf": (lambda d: _model(d / "leaf"), lambda f: f"search:leaf={f}"),
}


def _write(path: Path) -> Path:
    path.write_bytes(b"{}\n")
    return path


@pytest.mark.parametrize("kind", sorted(SPECS))
def test_a_spec_whose_model_file_is_refused_names_the_spec_and_the_file(tmp_path, capsys,
                                                                        deny, kind):
    from agents.cli import main as nertz_main
    make, spec_of = SPECS[kind]
    path = make(tmp_path)
    spec = spec_of(path)
    deny(path)
    assert nertz_main(["judge", "h2h", spec, "random", "--deals", "2", "--quiet"]) == 1
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1, lines
    assert str(path) in lines[0] and f"agent {spec!r}" in lines[0] \
        and "Permission denied" in lines[0], lines


def test_make_agent_keeps_the_oserror_its_class_errno_and_file(tmp_path, deny):
    from agents.registry import make_agent
    path = _model(tmp_path / "m")
    deny(path)
    with pytest.raises(PermissionError) as err:
        make_agent(f"ppo:{path}")
    assert err.value.errno == errno.EACCES and err.value.filename == str(path)
    assert str(err.value.strerror).startswith(f"agent 'ppo:{path}': ")
    deny(path, errno.EIO)                         # a pair's member names its own spec, once
    with pytest.raises(OSError) as err:
        make_agent(f"pair:ppo:{path}&random")
    assert err.value.errno == errno.EIO and err.value.filename == str(path)
    assert str(err.value.strerror).count("agent ") == 1, err.value
    assert f"agent 'ppo:{path}'" in str(err.value.strerror)


# ------------------------------------------------------------ (3) a family file's own keys
def _family(folder: Path, rules: dict, **top) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    _model(folder / "m")
    obj = {"format": "nertz-family", "version": 1,
           "members": [{"name": "one", "model": "m", "rules": rules}], **top}
    (folder / "family.json").write_text(json.dumps(obj))
    return folder / "family.json"


def test_a_family_rule_key_with_a_newline_is_one_line_quoted(tmp_path):
    from agents.learned.family import read_family_file
    from agents.registry import make_agent
    path = _family(tmp_path, {"num_teams\nstacking": 2})
    with pytest.raises(ValueError) as err:
        read_family_file(path)
    text = str(err.value)
    assert len(text.splitlines()) == 1, text
    assert "members[0].rules key 'num_teams\\nstacking' must be a RulesConfig field" in text
    with pytest.raises(ValueError) as err:                   # and through a spec
        make_agent(f"learned:family={path}")
    assert len(str(err.value).splitlines()) == 1, err.value


def test_a_family_files_long_key_is_cut_short(tmp_path):
    from agents.learned.family import read_family_file
    for path in (_family(tmp_path / "a", {"x" * 5000: 1}),
                 _family(tmp_path / "b", {}, **{"y" * 5000: 1})):
        with pytest.raises(ValueError, match="must be") as err:
            read_family_file(path)
        assert len(str(err.value)) < 500, len(str(err.value))


def test_the_family_writer_names_a_model_it_may_not_read(tmp_path, capsys, deny):
    """python -m agents.learned.family printed only 'cannot read the model weights
    (Permission denied)' (exit 1): no file named."""
    from agents.learned.family import main as family_main
    model = _model(tmp_path / "src")
    deny(model)
    with pytest.raises(SystemExit) as done:
        family_main([str(tmp_path / "fam"), f"one={model}"])
    assert done.value.code == 1
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and str(model) in lines[0] and "Permission denied" in lines[0], \
        lines
    assert not (tmp_path / "fam").exists()
