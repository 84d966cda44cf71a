"""`nertz export` (issue #40): it never writes over a file it reads or over its own other
output, refuses --teams for a safe-format model, reads the run info beside an SB3 zip field
by field (one line naming the file and field), names the real file in an I/O error, says
"is a directory" / "is not a regular file", strips terminal escape codes from a loader's
message, and its ONNX graph plays the model's constraint (the numpy policy's move) or is
refused."""
from __future__ import annotations

import errno
import hashlib
import os
import shutil
from pathlib import Path
from unittest import mock

import numpy as np
import pytest

from agents.cli import main
from agents.learned.weights import FORMAT, VERSION, array_shapes, save_weights

from test_cli_errors import assert_one_line_error, run_cli

ROOT = Path(__file__).resolve().parents[2]
MODELS = ROOT / "agents" / "learned" / "models"


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
    shutil.copy(MODELS / "learned_2teams.zip", run / "step_1.zip")
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
    src = zipfile.ZipFile(MODELS / "learned_2teams.zip")
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
