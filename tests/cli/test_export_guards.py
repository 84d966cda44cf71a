"""`nertz export` (issue #40): it never writes over a file it reads or over its own other
output, refuses --teams for a safe-format model, reads the run info beside an SB3 zip field
by field (one line naming the file and field), names the real file in an I/O error, says
"is a directory" / "is not a regular file", strips terminal escape codes from a loader's
message, and its ONNX graph plays the model's constraint (the numpy policy's move) or is
refused. It replaces an existing output only with --overwrite and never a directory, FIFO,
socket or device (a link to one included); its outputs appear all or none (a failure or
Ctrl-C at any write or rename leaves every old file and no temporary); OUT must be a path
stem; --trust with a safe-format model is refused."""
from __future__ import annotations

import contextlib
import errno
import hashlib
import os
import shutil
import stat
from pathlib import Path
from unittest import mock

import numpy as np
import pytest

from agents.cli import main
from agents.learned.weights import FORMAT, VERSION, array_shapes, save_weights

from test_cli_errors import assert_one_line_error, run_cli

ROOT = Path(__file__).resolve().parents[2]
MODELS = ROOT / "agents" / "learned" / "models"
SB3 = ROOT / "train" / "models"          # the SB3 originals of the per-table models


def tiny_model(path, constraint=None, seed=0):
    meta = {"format": FORMAT, "version": VERSION,
            "architecture": {"type": "mlp", "hidden": [4], "activation": "tanh",
                             "action_net": "masked"},
            "observation_size": 791, "action_size": 322, "arrays": {}, "table": None,
            "rules": None, "provenance": None}
    if constraint:
        meta["constraint"] = constraint
    meta["arrays"] = {k: list(v) for k, v in array_shapes(meta).items()}
    rng = np.random.default_rng(seed)
    return save_weights(path, meta, {k: rng.standard_normal(v).astype(np.float32)
                                     for k, v in array_shapes(meta).items()})[0]


def snapshot(folder: Path) -> dict:
    """{relative path: sha256 or link target} of everything under folder."""
    out = {}
    for p in sorted(folder.rglob("*")):
        key = str(p.relative_to(folder))
        if p.is_symlink():
            out[key] = "->" + os.readlink(p)
        elif p.is_file():
            out[key] = hashlib.sha256(p.read_bytes()).hexdigest()
        else:
            out[key] = "dir"
    return out


def refused(argv, folder, *words):
    before = snapshot(folder)
    rc, err = run_cli([str(a) for a in argv])
    assert_one_line_error(rc, err)
    for w in words:
        assert w in err, err
    assert snapshot(folder) == before, "a refused export changed a file"
    return err


# ------------------------------------------------------------------ 1. never over an input
@pytest.mark.parametrize("onnx_name, words", [
    ("m.npz", ["--onnx", "MODEL's own file", "never writes over a file it reads"]),
    ("m.json", ["--onnx", "MODEL's own file"]),
    ("sub/../m.json", ["--onnx", "MODEL's own file"]),
    ("link.onnx", ["--onnx 'link.onnx'", "m.npz, MODEL's own file"]),       # a symlink
    ("hard.onnx", ["--onnx 'hard.onnx'", "m.json, MODEL's own file"]),      # a hard link
    ("o.npz", ["is one of the files OUT", "o.npz"]),
    ("o.json", ["is one of the files OUT", "o.json"]),
])
def test_the_graph_never_overwrites_the_model_or_out(tmp_path, monkeypatch, onnx_name, words):
    pytest.importorskip("onnx")
    monkeypatch.chdir(tmp_path)
    tiny_model(tmp_path / "m")
    (tmp_path / "sub").mkdir()
    (tmp_path / "link.onnx").symlink_to("m.npz")
    os.link(tmp_path / "m.json", tmp_path / "hard.onnx")
    refused(["export", "m.npz", "o", "--onnx", onnx_name], tmp_path, *words)
    assert not (tmp_path / "o.npz").exists()


@pytest.mark.parametrize("out", ["m", "m.json", "./m.npz", "mlink"])
def test_out_is_never_the_model(tmp_path, monkeypatch, out):
    monkeypatch.chdir(tmp_path)
    tiny_model(tmp_path / "m")
    (tmp_path / "mlink.npz").symlink_to("m.npz")
    (tmp_path / "mlink.json").symlink_to("m.json")
    refused(["export", "m.json", out], tmp_path, "MODEL itself")


@pytest.mark.parametrize("out, onnx, words", [
    ("run/step_5", None, ["OUT 'run/step_5'", "the run info read beside MODEL"]),
    ("run/config", None, ["the run info read beside MODEL"]),
    ("o", "run/step_5.json", ["--onnx", "the run info read beside MODEL"]),
    ("o", "run/step_5.zip", ["--onnx", "MODEL's own file"]),
    ("o", "config.json", ["--onnx", "the run info read beside MODEL"]),
])
def test_a_zips_run_info_is_never_written_over(tmp_path, monkeypatch, out, onnx, words):
    """step_N.json beside the zip and config.json in its folder and the one above are read
    for its table: none may be an output (checked before the zip is even opened)."""
    pytest.importorskip("onnx")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "step_5.zip").write_bytes(b"not even a zip")
    (tmp_path / "run" / "step_5.json").write_text('{"rules": {"num_teams": 2}}')
    (tmp_path / "run" / "config.json").write_text('{"rules": {"num_teams": 2}}')
    (tmp_path / "config.json").write_text('{"other": 1}')
    argv = ["export", "run/step_5.zip", out] + (["--onnx", onnx] if onnx else [])
    refused(argv, tmp_path, *words)


# ------------------------------------------------------------------ 2. --teams
@pytest.mark.parametrize("extra, words", [
    (["--teams", "4"], ["--teams/--team-size are for an SB3 zip", "carries its own table",
                        "m.json"]),
    (["--teams", "2", "--team-size", "2"], ["carries its own table"]),
    (["--team-size", "2"], ["--team-size goes with --teams"]),
])
def test_teams_with_a_safe_model_is_refused_not_ignored(tmp_path, extra, words):
    npz = tiny_model(tmp_path / "m")
    refused(["export", npz, tmp_path / "o"] + extra, tmp_path, *words)


def test_team_size_without_teams_is_refused_for_a_zip_too(tmp_path):
    (tmp_path / "m.zip").write_bytes(b"x")
    refused(["export", tmp_path / "m.zip", tmp_path / "o", "--team-size", "2"], tmp_path,
            "--team-size goes with --teams")


# ------------------------------------------------------------------ 3. the run info's fields
@pytest.mark.parametrize("body, words", [
    ('{"rules": {"num_teams": 2, "team_sizes": "ab"}}', ["rules.team_sizes"]),
    ('{"rules": {"num_teams": 2, "team_sizes": [true, 1]}}', ["rules.team_sizes"]),
    ('{"rules": {"num_teams": 2, "team_sizes": [-1, 2]}}', ["rules.team_sizes"]),
    ('{"rules": {"num_teams": 2, "team_sizes": [[1], [2]]}}', ["rules.team_sizes"]),
    ('{"rules": {"num_teams": 2, "team_sizes": ["1", "2"]}}', ["rules.team_sizes"]),
    ('{"rules": {"num_teams": 2, "team_sizes": {"a": 1}}}', ["rules.team_sizes"]),
    ('{"rules": {"num_teams": 2, "team_sizes": [1, 1, 1]}}', ["rules.team_sizes"]),
    ('{"rules": {"num_teams": 2, "team_sizes": 7}}', ["rules.team_sizes"]),
    ('{"rules": {"num_teams": true}}', ["rules.num_teams"]),
    ('{"rules": {"num_teams": "2"}}', ["rules.num_teams"]),
    ('{"rules": {"num_teams": 99}}', ["rules.num_teams"]),
    ('{"rules": {"num_teams": 2, "river_size": 3}}', ["rules.river_size"]),
    ('{"rules": {"num_teams": 2, "bogus": 1}}', ["rules.bogus is not a RulesConfig field"]),
    ('{"rules": {"num_teams": 2, "team_sizes": [2, 2], "num_seats": 3}}', ["rules.num_seats"]),
    ('{"rules": 5}', ["rules must be an object"]),
    ('{"rules": [2]}', ["rules must be an object"]),
    ('{"rules": {"num_teams": 2, "num_teams": 3}}', ["'num_teams' twice"]),
    ('{"rules": {"num_teams": 2}, "rules": {"num_teams": 4}}', ["'rules' twice"]),
    ('{"rules": {"num_teams": NaN}}', ["NaN"]),
    ('{"rules": {', ["not valid JSON"]),
])
@pytest.mark.parametrize("where", ["step_1.json", "config.json"])
def test_bad_run_info_is_one_line_naming_file_and_field(tmp_path, body, words, where):
    """Each was a TypeError traceback (team_sizes) or silently used / skipped."""
    run = tmp_path / "run"
    run.mkdir()
    (run / "step_1.zip").write_bytes(b"x")        # the run info is read before the zip
    (run / where).write_text(body)
    err = refused(["export", run / "step_1.zip", tmp_path / "o"], tmp_path, *words)
    assert str(run / where) in err


def test_good_run_info_gives_the_table(tmp_path):
    pytest.importorskip("sb3_contrib")
    run = tmp_path / "run"
    run.mkdir()
    shutil.copy(SB3 / "learned_2teams.zip", run / "step_1.zip")
    (run / "step_1.json").write_text('{"rules": {"num_teams": 2, "team_sizes": [2, 2], '
                                     '"num_seats": 4}, "other": null}')
    assert main(["export", str(run / "step_1.zip"), str(tmp_path / "o")]) == 0
    import json
    meta = json.loads((tmp_path / "o.json").read_text())
    assert meta["table"] == {"teams": 2, "team_size": 2}
    assert meta["rules"]["team_sizes"] == [2, 2]


# ------------------------------------------------------------------ 5. cosmetic
@pytest.mark.parametrize("kind, words", [("dir", "is a directory"),
                                         ("fifo", "is not a regular file"),
                                         ("none", "not found")])
@pytest.mark.parametrize("suffix", [".npz", ".json", ".zip"])
def test_a_directory_or_fifo_model_is_named_so(tmp_path, kind, words, suffix):
    model = tmp_path / f"m{suffix}"
    if suffix != ".zip":
        tiny_model(tmp_path / "m")
        model.unlink()
    if kind == "dir":
        model.mkdir()
    elif kind == "fifo":
        os.mkfifo(model)
    err = refused(["export", model, tmp_path / "o"], tmp_path,
                  words if suffix != ".zip" or kind != "none" else "does not exist")
    assert err.count(model.name) == 1, err            # named once


def test_an_io_error_names_the_output_not_its_temporary_file(tmp_path):
    npz = tiny_model(tmp_path / "m")
    real = os.replace

    def full_disk(src, dst):
        if str(dst).endswith("o.npz"):
            raise OSError(errno.ENOSPC, "No space left on device", str(src))
        return real(src, dst)

    with mock.patch("nertz_env.files.atomic.os.replace", full_disk):
        rc, err = run_cli(["export", str(npz), str(tmp_path / "o")])
    assert rc == 1, err
    assert ".part" not in err and str(tmp_path / "o.npz") in err
    assert "No space left on device" in err and len(err.splitlines()) == 1
    assert not list(tmp_path.glob("*.part")) and not list(tmp_path.glob(".*.part"))


def test_a_loaders_terminal_escape_codes_are_stripped(tmp_path):
    """torch's weights-only refusal is printed in bold (ESC[1m ... ESC[0m)."""
    pytest.importorskip("sb3_contrib")
    import datetime
    import io
    import zipfile

    import torch
    buf = io.BytesIO()
    torch.save({"x": datetime.date(2020, 1, 1)}, buf)
    src = zipfile.ZipFile(SB3 / "learned_2teams.zip")
    with zipfile.ZipFile(tmp_path / "bad.zip", "w") as z:
        for n in src.namelist():
            z.writestr(n, buf.getvalue() if n == "policy.pth" else src.read(n))
    rc, err = run_cli(["export", str(tmp_path / "bad.zip"), str(tmp_path / "o"), "--teams", "2"])
    assert_one_line_error(rc, err)
    assert "could not be loaded" in err and "\x1b" not in err


def test_error_text_strips_escapes():
    from agents.learned.sb3_zip import error_text
    assert error_text("a \x1b[1mbold\x1b[0m\n  line") == "a bold line"


# ------------------------------------------------------------------ 4. the constraint in ONNX
def real_positions():
    from nertz_env import NertzVecEnv
    out = []
    for teams in (2, 4):
        env = NertzVecEnv(num_envs=16, num_teams=teams, max_ticks=300, seed=teams,
                          opponents="heuristic")
        obs = env.reset()
        rng = np.random.default_rng(teams)
        for _ in range(60):
            m = env.action_masks()
            out.append((obs.copy(), m.copy()))
            obs, *_ = env.step(np.array([rng.choice(np.flatnonzero(r)) for r in m]))
    return (np.concatenate([o for o, _ in out]).astype(np.float32),
            np.concatenate([m for _, m in out]).astype(np.int8))


def run_graph(path, obs, masks):
    feed = {"observation": obs, "action_mask": masks}
    try:
        import onnxruntime as ort
        sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
        return sess.run(["action", "log_probs"], feed)
    except ImportError:
        from onnx.reference import ReferenceEvaluator
        return ReferenceEvaluator(str(path)).run(["action", "log_probs"], feed)


@pytest.mark.parametrize("constraint", [None, "useful-shifts+never-withhold"])
def test_the_shipped_generalists_graph_plays_its_constraint(tmp_path, constraint):
    """learned.npz plays under useful-shifts: the graph's move is the one `ppo:` / `learned`
    play (the numpy policy on the constrained mask) on every real position; the free
    policy's move differs at some of them, so a graph without the constraint fails this."""
    pytest.importorskip("onnx")
    import json

    from agents.constraints import constrain
    from agents.learned.weights import NumpyPolicy
    from agents.registry import make_agent
    obs, masks = real_positions()
    model = tmp_path / "learned"
    for ext in (".npz", ".json"):
        shutil.copy(MODELS / f"learned{ext}", f"{model}{ext}")
    if constraint:
        meta = json.loads((MODELS / "learned.json").read_text())
        meta["constraint"] = constraint
        (tmp_path / "learned.json").write_text(json.dumps(meta))
    assert main(["export", f"{model}.npz", "--onnx", str(tmp_path / "g.onnx")]) == 0
    action, log_probs = run_graph(tmp_path / "g.onnx", obs, masks)
    name = constraint or "useful-shifts"
    want = make_agent(f"ppo:{model}.npz").act_batch(obs, masks)
    policy = NumpyPolicy.load(f"{model}.npz")
    kept = constrain(obs, masks, name)
    np.testing.assert_array_equal(want, policy.act_batch(obs, kept))
    assert (policy.act_batch(obs, masks) != want).sum() > 10        # the constraint matters
    np.testing.assert_array_equal(action, want)
    lp = policy.log_probs(obs, kept)
    np.testing.assert_allclose(np.where(kept, log_probs, 0), np.where(kept, lp, 0), atol=1e-4)
    assert (log_probs[~kept] < -1e7).all()                 # forbidden moves: masked out


@pytest.mark.parametrize("constraint", ["keep-river", "useful-shifts+split-roles"])
def test_a_constraint_the_graph_cannot_apply_is_refused(tmp_path, constraint):
    pytest.importorskip("onnx")
    npz = tiny_model(tmp_path / "m", constraint=constraint)
    refused(["export", npz, tmp_path / "o", "--onnx", tmp_path / "m.onnx"], tmp_path,
            "which the ONNX graph cannot apply", constraint)
    assert not (tmp_path / "o.npz").exists() and not (tmp_path / "m.onnx").exists()


def test_an_unmasked_models_graph_ignores_its_constraint(tmp_path):
    """An unmasked net's move never reads the mask (NumpyPolicy), constrained or not."""
    pytest.importorskip("onnx")
    from agents.learned.onnx_export import graph_constraint
    meta = {"architecture": {"action_net": "unmasked"}, "constraint": "keep-river"}
    assert graph_constraint(meta) == 0


# ------------------------------------------------------------------ 6. existing outputs
def _other_model_files(tmp_path):
    """o.npz / o.json hold another model, g.onnx another graph: what a careless export
    would lose."""
    tiny_model(tmp_path / "o", seed=7)
    (tmp_path / "g.onnx").write_bytes(b"another graph")


@pytest.mark.parametrize("existing", ["o.npz", "o.json", "g.onnx"])
def test_an_existing_output_is_replaced_only_with_overwrite(tmp_path, monkeypatch, existing):
    """`nertz export M out1` silently replaced an out1.npz/.json holding another model."""
    pytest.importorskip("onnx")
    monkeypatch.chdir(tmp_path)
    tiny_model(tmp_path / "m")
    _other_model_files(tmp_path)
    for name in {"o.npz", "o.json", "g.onnx"} - {existing}:
        (tmp_path / name).unlink()
    err = refused(["export", "m.npz", "o", "--onnx", "g.onnx"], tmp_path, existing, "exists",
                  "--overwrite")
    assert ("--onnx" if existing == "g.onnx" else "OUT 'o'") in err
    assert main(["export", "m.npz", "o", "--onnx", "g.onnx", "--overwrite"]) == 0
    assert (tmp_path / "o.npz").read_bytes() == (tmp_path / "m.npz").read_bytes()
    assert (tmp_path / "o.json").read_bytes() == (tmp_path / "m.json").read_bytes()
    assert (tmp_path / "g.onnx").read_bytes()[:20] != b"another graph"[:20]
    assert sorted(p.name for p in tmp_path.iterdir()) == \
        ["g.onnx", "m.json", "m.npz", "o.json", "o.npz"]            # no temporary left


def _make_node(path: Path, kind: str, tmp_path: Path):
    if kind == "chardev":
        try:
            os.mknod(path, stat.S_IFCHR | 0o666, os.makedev(1, 3))   # a null device, here
        except PermissionError:
            pytest.skip("creating a device node needs root")
    elif kind == "fifo":
        os.mkfifo(path)
    elif kind == "dir":
        path.mkdir()
    elif kind == "link-to-fifo":
        os.mkfifo(tmp_path / "a_fifo")
        path.symlink_to("a_fifo")
    elif kind == "link-to-dir":
        (tmp_path / "a_dir").mkdir()
        path.symlink_to("a_dir")


@pytest.mark.parametrize("overwrite", [False, True])
@pytest.mark.parametrize("kind", ["chardev", "fifo", "dir", "link-to-fifo", "link-to-dir"])
@pytest.mark.parametrize("target", ["e.onnx", "o.npz", "o.json"])
def test_a_target_that_is_not_a_regular_file_is_refused_even_with_overwrite(
        tmp_path, monkeypatch, kind, target, overwrite):
    """`mknod e/nulldev c 1 3; nertz export M --onnx e/nulldev` replaced the device node
    with a file."""
    pytest.importorskip("onnx")
    monkeypatch.chdir(tmp_path)
    tiny_model(tmp_path / "m")
    _make_node(tmp_path / target, kind, tmp_path)
    before = os.lstat(tmp_path / target)
    argv = ["export", "m.npz", "o", "--onnx", "e.onnx"] + (["--overwrite"] if overwrite else [])
    err = refused(argv, tmp_path, target)
    assert ("is a directory" if "dir" in kind else "is not a regular file") in err
    after = os.lstat(tmp_path / target)
    assert (after.st_mode, after.st_ino, after.st_rdev) == \
        (before.st_mode, before.st_ino, before.st_rdev)


# ------------------------------------------------------------------ 7. all outputs or none
def _fail_rename_to(name, exc):
    real = os.replace

    def replace(src, dst):                  # a new file's rename (from a .part temporary)
        if Path(dst).name == name and ".part" in Path(src).name:
            raise exc
        return real(src, dst)
    return mock.patch("nertz_env.files.atomic.os.replace", replace)   # os itself


def _fail_graph_write():
    def write_bytes(path, data):
        raise PermissionError(errno.EACCES, "Permission denied", str(path))
    return mock.patch("nertz_env.files.write_bytes", write_bytes)


@pytest.mark.parametrize("how", ["graph write", "npz rename", "json rename", "graph rename",
                                 "ctrl-c at graph rename", "no hard links"])
@pytest.mark.parametrize("overwrite", [False, True])
def test_outputs_appear_all_or_none(tmp_path, monkeypatch, how, overwrite):
    """`nertz export z/ok.zip q --onnx /sys/q.onnx` failed with Permission denied and left
    q.npz/q.json; with --overwrite a failure must leave the old files as they were."""
    pytest.importorskip("onnx")
    monkeypatch.chdir(tmp_path)
    tiny_model(tmp_path / "m")
    if overwrite:
        _other_model_files(tmp_path)
    before = snapshot(tmp_path)
    fail = {"graph write": _fail_graph_write,
            "npz rename": lambda: _fail_rename_to("o.npz", OSError(errno.EIO, "I/O error")),
            "json rename": lambda: _fail_rename_to("o.json", OSError(errno.EIO, "I/O error")),
            "graph rename": lambda: _fail_rename_to("g.onnx", OSError(errno.EIO, "I/O error")),
            "ctrl-c at graph rename": lambda: _fail_rename_to("g.onnx", KeyboardInterrupt()),
            "no hard links": lambda: _fail_rename_to("g.onnx", OSError(errno.EIO, "I/O error")),
            }[how]
    argv = ["export", "m.npz", "o", "--onnx", "g.onnx"] + (["--overwrite"] if overwrite else [])
    with fail(), mock.patch("os.link", side_effect=OSError(errno.EPERM, "no links")) \
            if how == "no hard links" else contextlib.nullcontext():
        rc, err = run_cli(argv)
    assert rc == (130 if how.startswith("ctrl-c") else 1), err
    if rc == 1:
        assert len(err.splitlines()) == 1 and ".part" not in err and ".old" not in err
    assert snapshot(tmp_path) == before            # no output, no temporary, old files kept


def test_the_overwrite_that_succeeds_leaves_no_backup(tmp_path, monkeypatch):
    pytest.importorskip("onnx")
    monkeypatch.chdir(tmp_path)
    tiny_model(tmp_path / "m")
    _other_model_files(tmp_path)
    with mock.patch("os.link", side_effect=OSError(errno.EPERM, "no links")):
        assert main(["export", "m.npz", "o", "--onnx", "g.onnx", "--overwrite"]) == 0
    assert sorted(p.name for p in tmp_path.iterdir()) == \
        ["g.onnx", "m.json", "m.npz", "o.json", "o.npz"]
    assert (tmp_path / "o.npz").read_bytes() == (tmp_path / "m.npz").read_bytes()


# ------------------------------------------------------------------ 8. OUT is a path stem
@pytest.mark.parametrize("out, why", [
    ("", "is empty"), (".npz", "no name before its suffix"),
    (".json", "no name before its suffix"), ("sub/", "is a folder"), ("sub", "is a folder"),
    (".", "is a folder"), ("..", "is a folder"), ("sub/.", "is a folder"),
    ("newdir/", "is a folder"), (".mine", "hidden name"), ("sub/.mine.npz", "hidden name"),
    ("x.npz.npz", "doubled suffix"), ("x.json.npz", "doubled suffix"),
    ("x.onnx", "--onnx FILE"), ("x.zip", "ends in .zip"),
])
def test_out_must_be_a_path_stem(tmp_path, monkeypatch, out, why):
    """'' wrote ..npz/..json, '.npz' wrote .npz.npz, an existing folder 'sub/' wrote sub.npz
    beside it."""
    monkeypatch.chdir(tmp_path)
    tiny_model(tmp_path / "m")
    (tmp_path / "sub").mkdir()
    refused(["export", "m.npz", out], tmp_path, why, "OUT must be a path stem",
            "'models/mine' (or 'models/mine.npz') writes models/mine.npz and models/mine.json")


@pytest.mark.parametrize("out", ["o", "o.npz", "o.json", "sub/o", "./o.v2"])
def test_a_stem_with_or_without_its_suffix_writes_stem_npz_and_json(tmp_path, monkeypatch,
                                                                    out):
    monkeypatch.chdir(tmp_path)
    tiny_model(tmp_path / "m")
    (tmp_path / "sub").mkdir()
    assert main(["export", "m.npz", out]) == 0
    stem = out[:-len(Path(out).suffix)] if Path(out).suffix in (".npz", ".json") else out
    assert (tmp_path / f"{stem}.npz").read_bytes() == (tmp_path / "m.npz").read_bytes()
    assert (tmp_path / f"{stem}.json").is_file()


# ------------------------------------------------------------------ 9. meaningless options
def test_trust_with_a_safe_model_is_refused_not_ignored(tmp_path):
    npz = tiny_model(tmp_path / "m")
    refused(["export", npz, tmp_path / "o", "--trust"], tmp_path,
            "--trust is for an SB3 zip", "leave it out")


@pytest.mark.parametrize("teams", [2, 4])
def test_the_docs_command_remakes_the_shipped_files_byte_for_byte(tmp_path, monkeypatch, teams):
    """docs/models.md: `nertz export learned_Nteams.zip learned_Nteams --teams N --overwrite`
    beside the shipped files. With --teams the JSON beside the zip is not read as run info,
    so it may be replaced (it was refused as 'the run info read beside MODEL'); without
    --overwrite it is refused as existing."""
    pytest.importorskip("sb3_contrib")
    monkeypatch.chdir(tmp_path)
    name = f"learned_{teams}teams"
    for ext in (".zip", ".npz", ".json"):
        shutil.copy((SB3 if ext == ".zip" else MODELS) / f"{name}{ext}", tmp_path / f"{name}{ext}")
    argv = ["export", f"{name}.zip", name, "--teams", str(teams)]
    refused(argv, tmp_path, f"{name}.npz exists", "--overwrite")
    assert main(argv + ["--overwrite"]) == 0
    for ext in (".npz", ".json"):
        assert (tmp_path / f"{name}{ext}").read_bytes() == (MODELS / f"{name}{ext}").read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == \
        [f"{name}.json", f"{name}.npz", f"{name}.zip"]
