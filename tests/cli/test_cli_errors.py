"""Every bad value given to the `nertz` command is one line `nertz: error: ...` on stderr and
exit status 2, never a traceback; the first run says that numba is compiling."""
from __future__ import annotations

import contextlib
import io
import os
import subprocess
import sys
from pathlib import Path
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agents.arena import progress as tournament_progress
from agents.arena import tournament
from agents.cli import main

ROOT = Path(__file__).resolve().parents[2]


class _Reached(Exception):
    """Raised by the stand-in run_tournament: every value was accepted."""


def _stand_in(*args, **kwargs):
    raise _Reached


def run_cli(argv):
    """(exit status, stderr) of main(argv), play never started (a bad value that slipped
    through reaches run_tournament and raises _Reached)."""
    err = io.StringIO()
    with mock.patch.object(tournament, "run_tournament", _stand_in), \
            contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            rc = main(argv)
        except SystemExit as exc:            # argparse's own checks
            rc = exc.code
    return rc, err.getvalue()


def assert_one_line_error(rc, err):
    assert rc == 2, err
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("nertz: error: "), err
    assert "Traceback" not in err


T = ["tournament", "--quiet"]
BAD = [                                           # (argv, a word the message must hold)
    (T + ["--rule", "num_seats=3"], "num_seats is derived"),     # was a TypeError
    (T + ["--rule", "max_ticks=abc"], "max_ticks takes an integer"),
    (T + ["--rule", "max_ticks=1.5"], "max_ticks takes an integer"),
    (T + ["--rule", "max_ticks=0"], "max_ticks"),
    (T + ["--rule", f"max_ticks={10**25}"], "max_ticks"),
    (T + ["--rule", "speeds=0"], "speeds"),
    (T + ["--rule", "speeds=a,b"], "speeds takes integers"),
    (T + ["--rule", "stacking=maybe"], "stacking takes true or false"),
    (T + ["--rule", "stacking=1"], "stacking takes true or false"),
    (T + ["--rule", "colour=red"], "RulesConfig field"),
    (T + ["--rule", "=3"], "RulesConfig field"),
    (T + ["--rule", "river_size"], "FIELD=VALUE"),
    (T + ["--teams", "2", "--rule", "team_sizes=3,3"], "team_sizes"),
    (T + ["--rule", "move_ticks=flip"], "move_ticks takes KIND:TICKS"),
    (T + ["--rule", "move_ticks=flip:0"], "move_ticks"),
    (T + ["--rule", "move_ticks=jump:2"], "unknown key 'jump'"),
    (T + ["--rule", "move_ticks=flip:x"], "move_ticks takes KIND:TICKS"),
    (T + ["--rule", "illegal_move=nope"], "illegal_move"),
    (T + ["--rule", "num_teams=2", "--rule", "num_teams=3"], "given twice"),
    (T + ["--rule", "nertz_bonus=-1"], "nertz_bonus"),
    (T + ["--team-sizes", "1,x"], "--team-sizes"),
    (T + ["--team-sizes", "1,,2"], "--team-sizes"),
    (T + ["--team-sizes", "3,3,3,3"], "team_sizes"),
    (T + ["--speeds", "a"], "--speeds"),
    (T + ["--speeds", "0,1,1,1"], "speeds"),
    (T + ["--speeds", "1,2"], "speeds"),
    (T + ["--speeds", f"{10**30},1,1,1"], "speeds"),
    (T + ["--speeds", "1,1,1,1", "--rule", "speeds=1,1,1,1"], "given twice"),
    (T + ["--agents", "ppo:nope.zip"], "does not exist"),
    (T + ["--agents", "ppo:nope.zip:deterministic=true"], "ppo:nope.zip,deterministic=true"),
    (T + ["--agents", "ppo:"], "ppo:path"),
    (T + ["--agents", "ppo:m.zip,fast=1"], "unknown option 'fast'"),
    (T + ["--agents", "heuristic:style=nope"], "style 'nope'"),
    (T + ["--agents", "heuristic:flip=1.5"], "flip='1.5'"),
    (T + ["--agents", f"heuristic:flip={10**30}"], "flip="),
    (T + ["--agents", "heuristic:fast"], "key=value"),
    (T + ["--agents", ""], "at least one agent"),
    (T + ["--agents", ",,"], "at least one agent"),
    (T + ["--agents", "chess"], "unknown kind 'chess'"),
    (T + ["--agents", "flip=2,random"], "follows no agent"),
    (T + ["--agents", "random,greedy", "--format", "round-robin"], "round-robin needs"),
    (T + ["--agents", "random,greedy,heuristic", "--format", "all-play-all", "--teams", "2"],
     "all-play-all"),
    (T + ["--teams", "9"], "num_teams"), (T + ["--teams", "1"], "num_teams"),
    (T + ["--teams", "x"], "--teams"), (T + ["--teams", "1e3"], "--teams"),
    (T + ["--river", "3"], "river_size"),
    (T + ["--target", "0"], "target_score"), (T + ["--target", "abc"], "--target"),
    (T + ["--max-ticks", "0"], "max_ticks"), (T + ["--max-ticks", f"{10**25}"], "max_ticks"),
    (T + ["--deals", "0"], "--deals"), (T + ["--deals=-5"], "--deals"),
    (T + ["--deals", "1"], "--deals"), (T + ["--deals", "x"], "--deals"),
    (T + ["--deals", f"{10**30}"], "--deals"), (T + ["--hands", "1"], "--hands"),
    (T + ["--hands", "3", "--deals", "4"], "unrecognized arguments: --hands 3"),
    (T + ["--precision", "0"], "--precision"), (T + ["--precision=-0.5"], "--precision"),
    (T + ["--precision", "x"], "--precision"), (T + ["--precision", "nan"], "--precision"),
    (T + ["--precision", "inf"], "--precision"), (T + ["--precision"], "--precision"),
    (T + ["--max-deals", "100"], "give --precision too"),
    (T + ["--precision", "0.1", "--max-deals", "1"], "--max-deals"),
    (T + ["--precision", "0.1", "--max-deals", "x"], "--max-deals"),
    (T + ["--precision", "0.1", "--max-deals", f"{10**30}"], "--max-deals"),
    (T + ["--precision", "0.1", "--deals", "50", "--max-deals", "20"], "below --deals 50"),
    (T + ["--precision", "0.1", "--max-deals", "100"], "below --deals 200"),
    (T + ["--max-game-hands", "0"], "--max-game-hands"),
    (T + ["--max-game-hands", "x"], "--max-game-hands"),
    (T + ["--seed=-1"], "--seed"), (T + ["--seed", "x"], "--seed"),
    (T + ["--seed", "1.5"], "--seed"),
    (T + ["--mode", "sets"], "--mode"), (T + ["--format", "swiss"], "--format"),
    (T + ["--bogus"], "--bogus"), (T + ["--deals"], "--deals"),
    (["play", "--every", "0"], "--every"), (["play", "--every=-1"], "--every"),
    (["play", "--every", "x"], "--every"), (["play", "--teams", "9"], "num_teams"),
    (["play", "--team-sizes", "1,x"], "--team-sizes"), (["play", "--seed=-1"], "--seed"),
    (["play", "--river", "3"], "river_size"),
    (["game", "--games", "0"], "--games"), (["game", "--games=-1"], "--games"),
    (["game", "--games", f"{10**30}"], "--games"), (["game", "--target", "0"], "target_score"),
    (["game", "--max-ticks", "abc"], "--max-ticks"),
    (["game", "--agents", "chess"], "--agents: bot 'chess': unknown kind 'chess'"),
    (["game", "--agents", "random,heuristic:style=wild"], "style 'wild'"),
    (["game", "--agents", "heuristic:flip=x"], "flip='x'"),
    (["game", "--agents", "ppo:m.zip"], "unknown kind 'ppo'"),
    (["game", "--teams", "2", "--agents", "random,greedy,random"], "one per seat (2 seats)"),
    (["game", "--agents", ""], "at least one agent"),
    (["bogus"], "COMMAND"),
]


@pytest.mark.parametrize("argv, words", BAD, ids=[" ".join(a) for a, _ in BAD])
def test_bad_values_are_one_line_errors(argv, words):
    """Exit status 2, one line `nertz: error: ...` naming the option or field, no traceback."""
    rc, err = run_cli(argv)
    assert_one_line_error(rc, err)
    assert words in err


def test_out_that_cannot_be_a_folder_is_an_error(tmp_path):
    """The file system's refusal: exit 1 (README), one line naming --out's folder."""
    (tmp_path / "file").write_text("x")
    rc, err = run_cli(T + ["--out", str(tmp_path / "file" / "sub")])
    assert rc == 1 and len(err.splitlines()) == 1 and str(tmp_path / "file" / "sub") in err


def test_good_values_reach_the_tournament():
    """The stand-in is reached: the checks above do not reject everything."""
    for argv in (T, T + ["--teams", "2", "--team-sizes", "2,1", "--speeds", "1,2,1",
                         "--rule", "move_ticks=flip:2", "--rule", "stacking=false",
                         "--agents", "random,heuristic:style=cautious,flip=20"],
                 T + ["--precision", "0.05", "--max-deals", "200"], T + ["--precision", "1e-3"]):
        with pytest.raises(_Reached):
            run_cli(argv)


def test_ppo_spec_with_an_unreadable_model_is_one_line(tmp_path):
    """ppo:PATH naming a file that is no model: the reason, on one line."""
    pytest.importorskip("sb3_contrib")
    bad = tmp_path / "m.zip"
    bad.write_bytes(b"not a zip file")
    rc, err = run_cli(T + ["--agents", f"random,ppo:{bad}"])
    assert_one_line_error(rc, err)
    assert f"agent 'ppo:{bad}'" in err and "is not an SB3 model zip (BadZipFile" in err
    rc, err = run_cli(T + ["--agents", f"random,ppo:{bad}:deterministic=true"])
    assert_one_line_error(rc, err)
    assert f"ppo:{bad},deterministic=true" in err


@pytest.mark.parametrize("argv", [
    ["tournament", "--rule", "num_seats=3"],
    ["tournament", "--agents", "ppo:runs/m.zip:deterministic=true"],
])
def test_a_real_process_prints_one_line(argv):
    r = subprocess.run([sys.executable, "-m", "agents", *argv], cwd=ROOT, capture_output=True,
                       text=True, timeout=300)
    assert_one_line_error(r.returncode, r.stderr)


# --------------------------------------------------------------------------- fuzzing
FIELDS = ["num_teams", "team_sizes", "river_size", "stacking", "max_ticks", "speeds",
          "move_ticks", "illegal_move", "penalty_points", "target_score", "num_seats", "colour",
          ""]
VALUES = st.one_of(
    st.integers(-10**25, 10**25).map(str),
    st.sampled_from(["true", "false", "none", "1.5", "", "flip:2", "flip:0,lake:3", "raise",
                     "penalize", "x", "2,2", "1,2,1,1"]),
    st.lists(st.integers(-3, 200), max_size=9).map(lambda xs: ",".join(map(str, xs))),
    st.text(max_size=8),
)
RULES = st.lists(st.one_of(st.builds("{}={}".format, st.sampled_from(FIELDS), VALUES),
                           st.text(max_size=12)), max_size=3)
SPECS = st.one_of(
    st.sampled_from(["random", "greedy", "heuristic", "ppo:", "ppo:x.zip", "chess", ""]),
    st.builds("heuristic:{}={}".format, st.sampled_from(["style", "flip", "withhold_stream",
                                                         "lake_nertz", "speed"]), VALUES),
    st.builds("ppo:{},{}={}".format, st.text(max_size=6), st.sampled_from(
        ["deterministic", "device", "x"]), VALUES),
    st.text(max_size=10),
)
SPEEDS = st.one_of(st.just(""), VALUES)


def _accepted_or_one_line(argv):
    try:
        rc, err = run_cli(argv)
    except _Reached:                          # every value accepted: the tournament would start
        return
    assert_one_line_error(rc, err)


BASE = T + ["--teams", "2", "--agents", "random,greedy"]


@settings(max_examples=50, deadline=None)
@given(rules=RULES)
def test_fuzzed_rules(rules):
    """Whatever --rule holds: accepted, or refused in one line with exit status 2."""
    _accepted_or_one_line(BASE + [f"--rule={r}" for r in rules])


@settings(max_examples=50, deadline=None)
@given(specs=st.lists(SPECS, max_size=4))
def test_fuzzed_agents(specs):
    _accepted_or_one_line(T + ["--teams", "2", f"--agents={','.join(specs)}"])


@settings(max_examples=40, deadline=None)
@given(speeds=SPEEDS, teams=st.sampled_from(["2", "3"]))
def test_fuzzed_speeds(speeds, teams):
    _accepted_or_one_line(T + ["--teams", teams, "--agents", "random,greedy",
                               f"--speeds={speeds}"])


# --------------------------------------------------------------------------- first run
@pytest.mark.slow
def test_first_run_says_numba_is_compiling(tmp_path):
    """With numba's cache empty (NUMBA_CACHE_DIR: a new folder) the first tournament prints
    the compile notice on stderr; the second, with the cache filled, does not. (Compiles the
    serial tournament kernel once: slow, hence the mark.)"""
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "numba"))
    argv = [sys.executable, "-m", "agents", "tournament", "--agents", "random,greedy",
            "--teams", "2", "--deals", "2"]                       # no --out: writes nothing
    first = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert first.returncode == 0, first.stderr
    assert tournament_progress.COMPILE_NOTICE in first.stderr
    second = subprocess.run(argv, cwd=ROOT, env=env, capture_output=True, text=True, timeout=900)
    assert second.returncode == 0, second.stderr
    assert tournament_progress.COMPILE_NOTICE not in second.stderr


def test_quiet_has_no_compile_notice(tmp_path, monkeypatch, capsys):
    """--quiet: no progress bar and no notice, even with numba's cache empty (here only the
    check sees the empty folder; the kernels still load from the real cache)."""
    import numba

    monkeypatch.setattr(numba.config, "CACHE_DIR", str(tmp_path))
    argv = ["tournament", "--agents", "random,greedy", "--teams", "2", "--deals", "2"]
    assert main(argv) == 0
    assert tournament_progress.COMPILE_NOTICE in capsys.readouterr().err
    assert main(argv + ["--quiet"]) == 0
    assert capsys.readouterr().err == ""


# --------------------------------------------------------------------------- nertz export
def _tiny_safe_model(path):
    from agents.learned.weights import FORMAT, VERSION, array_shapes, save_weights
    meta = {"format": FORMAT, "version": VERSION,
            "architecture": {"type": "mlp", "hidden": [4], "activation": "tanh",
                             "action_net": "masked"},
            "observation_size": 791, "action_size": 322, "arrays": {}, "table": None,
            "rules": None, "provenance": None}
    meta["arrays"] = {k: list(v) for k, v in array_shapes(meta).items()}
    return save_weights(path, meta, {k: np.zeros(v, np.float32)
                                     for k, v in array_shapes(meta).items()})[0]


def test_export_without_onnx_installed_is_one_line_and_writes_nothing(tmp_path):
    """--onnx with the onnx package missing: one line naming the export extra, checked before
    anything is read or written (OUT is not left behind half the job done)."""
    npz = _tiny_safe_model(tmp_path / "m")
    with mock.patch.dict(sys.modules, {"onnx": None}):        # None: importing it fails
        rc, err = run_cli(["export", str(npz), str(tmp_path / "out"),
                           "--onnx", str(tmp_path / "m.onnx")])
    assert_one_line_error(rc, err)
    assert "nertz export --onnx needs onnx" in err and ".[export]" in err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["m.json", "m.npz"]


@pytest.mark.parametrize("argv, words, status", [
    (["export", "{m}"], "give OUT", 2),
    (["export", "{d}/nope.npz", "{d}/o"], "nope.npz not found", 2),
    (["export", "{m}", "{m}"], "is MODEL itself", 2),
    (["export", "{m}", "{d}/no/such/o"], "does not exist", 1),    # a folder: I/O, exit 1
])
def test_export_errors_are_one_line(tmp_path, argv, words, status):
    npz = _tiny_safe_model(tmp_path / "m")
    rc, err = run_cli([a.format(m=npz, d=tmp_path) for a in argv])
    assert rc == status, err
    assert len(err.splitlines()) == 1 and err.startswith("nertz: error: "), err
    assert words in err
