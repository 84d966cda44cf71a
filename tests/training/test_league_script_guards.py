"""The league scripts (train/population_league.py, train/exploiter_league.py) refuse before any
leg trains, in one line: a start that is an SB3 zip or holds a NaN, --deals below the limits
table's range, a missing --reference, bad counts and seeds, an --out that is not new, empty or
their own; their default models are found from any working folder. A --parallel population
whose child fails (or that gets Ctrl-C) stops every other child before it returns: nothing
runs or writes into --out afterwards, and the stopped legs leave no folder to delete (unless
they hold a checkpoint)."""
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("stable_baselines3")

from agents.learned.weights import array_shapes  # noqa: E402
from train import exploiter_league as xl  # noqa: E402
from train import population_league as pl  # noqa: E402

TINY = {"num_envs": 8, "n_steps": 16, "batch_size": 64, "n_epochs": 1, "max_ticks": 100,
        "torch_threads": 1}
WIDE = "agents/learned/models/learned.npz"                         # 128 x 128, no critic
ZIP = "train/models/learned_4teams.zip"                   # an SB3 zip
LONG = 10_000_000                                                  # steps no test waits for
STOP_S = 60                                                        # Ctrl-C to exit 130


def _ctrl_c_able():
    """preexec_fn: SIGINT at its default in the child, so Python turns it into Ctrl-C. A
    suite run in the background (`nohup ... &`, a job without a terminal) inherits SIGINT
    ignored, and a Python started so never raises KeyboardInterrupt: the Ctrl-C tests then
    timed out (54c1ade raised the wait to 240 s on a wrong guess, a cold compile)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _copy(dest: Path, nan_actor=False, nan_critic=False) -> str:
    """The shipped generalist copied to dest (.npz + .json) with a critic beside it
    (critics/NAME, as lean_ppo saves one); a NaN in the actor or the critic on request."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    meta = json.loads(Path(WIDE).with_suffix(".json").read_text())
    arrays = dict(np.load(WIDE))
    if nan_actor:
        arrays["hidden0_bias"][3] = np.nan
    np.savez(dest, **arrays)
    dest.with_suffix(".json").write_text(json.dumps(meta))
    cmeta = {**meta, "action_size": 1, "constraint": None}
    cmeta["arrays"] = {k: list(v) for k, v in array_shapes(cmeta).items()}
    carr = {**arrays, "action_weight": arrays["action_weight"][:1],
            "action_bias": arrays["action_bias"][:1]}
    if nan_critic:
        carr["hidden1_bias"] = carr["hidden1_bias"].copy()
        carr["hidden1_bias"][0] = np.nan
    crit = dest.parent / "critics" / dest.name
    crit.parent.mkdir(exist_ok=True)
    np.savez(crit, **carr)
    crit.with_suffix(".json").write_text(json.dumps(cmeta))
    return str(dest)


def _legs_running(marker: str) -> list:
    """pids of live --parallel children whose command names `marker`."""
    pids = []
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                cmd = (d / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            except OSError:
                continue
            if "--one-leg" in cmd and marker in cmd:
                pids.append(int(d.name))
    return pids


def _files(folder: Path) -> list:
    return sorted(str(p) for p in folder.rglob("*")) if folder.exists() else []


def _kill_left(marker: str) -> None:
    for pid in _legs_running(marker):                  # children this test started
        try:
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass


def _quiet(monkeypatch, module, name):
    def trained(*a, **k):
        raise AssertionError("a leg trained before the arguments were checked")
    monkeypatch.setattr(module, name, trained)


# ------------------------------------------------------------------ --parallel: cancel
def test_a_failing_child_stops_the_others(tmp_path):
    """B's leg fails at its start (a NaN in the critic beside its model: only its own leg
    reads that); A's, LONG steps, must be stopped and waited for before run_population
    raises, and neither leg leaves a folder."""
    bad = _copy(tmp_path / "starts" / "B.npz", nan_critic=True)
    out = tmp_path / "pop"
    marker = str(out)
    try:
        t0 = time.monotonic()
        with pytest.raises(pl.LegFailed, match=r"^leg B_1 failed \(its run exited with status "
                                                 r"2; .*other legs \(A_1\) were stopped"):
            pl.run_population(out, {"B": bad, "A": WIDE}, legs=1, steps=LONG, seed=1,
                              recipe=TINY, parallel=True)
        assert time.monotonic() - t0 < 120
        assert _legs_running(marker) == []                  # no child left training
        left = _files(out)
        assert left == []                                   # no leg folder, no --out
        time.sleep(2)
        assert _files(out) == left                          # and nothing written later
    finally:
        _kill_left(marker)


def test_ctrl_c_stops_the_children(tmp_path):
    """Ctrl-C (SIGINT) to a --parallel parent while both children train: exit 130 with one
    line, no child running, no leg folder left, nothing written afterwards."""
    other = _copy(tmp_path / "starts" / "B.npz")
    out = tmp_path / "pop"
    marker = str(out)
    log, err = tmp_path / "stdout", tmp_path / "stderr"
    try:
        with open(log, "w") as o, open(err, "w") as e:        # files: children share them
            proc = subprocess.Popen([sys.executable, "-m", "train.population_league",
                                     "--out", str(out), "--start", f"A={WIDE}",
                                     "--start", f"B={other}", "--legs", "1",
                                     "--steps", str(LONG), "--parallel", "--deals", "2"],
                                    stdout=o, stderr=e, preexec_fn=_ctrl_c_able)
        deadline = time.monotonic() + 240
        while not all((out / f / "config.json").exists() for f in ("A_1", "B_1")):
            assert proc.poll() is None, err.read_text()
            assert time.monotonic() < deadline, "the children did not start"
            time.sleep(0.5)
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=STOP_S) == 130
        lines = err.read_text().strip().splitlines()
        assert lines[-1].startswith("python -m train.population_league: interrupted")
        assert "Traceback" not in err.read_text()
        assert _legs_running(marker) == []
        left = _files(out)
        assert left == []
        time.sleep(2)
        assert _files(out) == left
    finally:
        if proc.poll() is None:
            proc.kill()
        _kill_left(marker)


def test_stopped_legs_folders(tmp_path):
    """After the children are stopped: an unfinished leg's folder is removed (an empty one
    that was there before is left empty); one holding a checkpoint is kept, as is a
    finished leg."""
    legs = {n: tmp_path / n for n in ("A_1", "B_1", "C_1", "D_1")}
    for f in legs.values():
        (f / "checkpoints").mkdir(parents=True)
        (f / "config.json").write_text("{}")
    (legs["B_1"] / "checkpoints" / "step_64.npz").write_bytes(b"")
    (legs["C_1"] / "final.npz").write_bytes(b"")
    gone, kept = pl._unfinished({legs["A_1"]: False, legs["B_1"]: False, legs["C_1"]: False,
                                 legs["D_1"]: True})
    assert (gone, kept) == (["A_1", "D_1"], ["B_1"])
    assert not legs["A_1"].exists() and list(legs["D_1"].iterdir()) == []
    assert (legs["B_1"] / "config.json").exists() and (legs["C_1"] / "final.npz").exists()


# ------------------------------------------------------------------ population: up front
def test_population_refuses_bad_starts_before_training(tmp_path, monkeypatch, capsys):
    _quiet(monkeypatch, pl, "run_population")
    nan_actor = _copy(tmp_path / "s1" / "N.npz", nan_actor=True)
    nan_critic = _copy(tmp_path / "s2" / "C.npz", nan_critic=True)
    out = tmp_path / "pop"
    for start, says in [(ZIP, "safe format"), (nan_actor, "hidden0_bias holds NaN"),
                        (nan_critic, "hidden1_bias holds NaN")]:
        assert pl.main(["--out", str(out), "--start", f"A={WIDE}", "--start", f"B={start}",
                        "--steps", "128"]) == 2
        err = capsys.readouterr().err
        assert says in err and f"--start B={start}" in err and len(err.splitlines()) == 1
        assert not out.exists()


def _pop(out, *more):
    return ["--out", str(out), "--start", f"A={WIDE}", "--start", f"B={WIDE}", *more]


def test_population_checks_every_argument_before_training(tmp_path, monkeypatch, capsys):
    _quiet(monkeypatch, pl, "run_population")
    out = tmp_path / "pop"
    cases = [(["--deals", "1"], "--deals=1 must be an int from 2 to"),
             (["--deals", "2000000"], "--deals=2000000 must be"),
             (["--legs", "0"], "--legs=0 must be an int from 1 to"),
             (["--legs", "1000"], "--legs=1000 must be"),
             (["--steps", "0"], "--steps=0 must be"),
             (["--steps", str(10**15)], "--steps=1000000000000000 must be"),
             (["--seed", "-1"], "--seed=-1 must be"),
             (["--judge-seed", str(2**63 - 1)], "--judge-seed=9223372036854775807 must be")]
    for more, says in cases:
        assert pl.main(_pop(out, *more)) == 2
        err = capsys.readouterr().err
        assert says in err and len(err.splitlines()) == 1, (more, err)
        assert not out.exists()
    many = [x for i in range(9) for x in ("--start", f"M{i}={WIDE}")]
    assert pl.main(["--out", str(out), *many]) == 2
    assert "give 2 to 8" in capsys.readouterr().err


def test_population_out_rules(tmp_path, monkeypatch, capsys):
    _quiet(monkeypatch, pl, "run_population")
    out = tmp_path / "pop"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    assert pl.main(_pop(out, "--legs", "1")) == 2
    assert "holds 'notes.txt', which is not a leg" in capsys.readouterr().err
    (out / "notes.txt").unlink()
    (out / "judgement.json").write_text("{}")
    assert pl.main(_pop(out, "--legs", "1")) == 2
    assert "holds a judged population" in capsys.readouterr().err
    (out / "judgement.json").unlink()
    (out / "A_1").mkdir()
    (out / "A_1" / "config.json").write_text("{}")
    assert pl.main(_pop(out, "--legs", "1")) == 2
    assert "A_1 holds a stopped leg" in capsys.readouterr().err
    shutil.rmtree(out / "A_1")
    _copy(out / "A_2" / "final.npz")                      # finished, but A_1 is not
    assert pl.main(_pop(out, "--legs", "2")) == 2
    assert "finished leg after an unfinished one (A_1)" in capsys.readouterr().err
    shutil.rmtree(out / "A_2")
    _copy(out / "A_1" / "final.npz", nan_actor=True)      # finished legs are read too
    assert pl.main(_pop(out, "--legs", "2")) == 2
    assert "finished leg" in capsys.readouterr().err
    shutil.rmtree(out / "A_1")
    _copy(out / "A_1" / "final.npz")                      # a finished leg: continued
    with pytest.raises(AssertionError, match="trained before"):
        pl.main(_pop(out, "--legs", "2"))
    (tmp_path / "file").write_text("")
    assert pl.main(_pop(tmp_path / "file")) == 2
    assert "is not a folder" in capsys.readouterr().err


# ------------------------------------------------------------------ exploiter: up front
def test_exploiter_checks_every_argument_before_training(tmp_path, monkeypatch, capsys):
    _quiet(monkeypatch, xl, "run_league")
    out = tmp_path / "xl"
    nan = _copy(tmp_path / "s" / "N.npz", nan_actor=True)
    cases = [(["--deals", "1"], "--deals=1 must be an int from 2 to"),
             (["--reference", "no/such.npz"], "--reference no/such.npz: no such model file"),
             (["--reference", nan], "holds NaN"),
             (["--init", nan], "--init"),
             (["--legs", "0"], "--legs=0 must be"),
             (["--main-steps", str(10**15)], "--main-steps=1000000000000000 must be"),
             (["--exploiter-steps", "0"], "--exploiter-steps=0 must be"),
             (["--keep-mains", "-1"], "--keep-mains=-1 must be"),
             (["--torch-threads", "0"], "--torch-threads=0 must be"),
             (["--seed", "-2"], "--seed=-2 must be"),
             (["--judge-seed", "-1"], "--judge-seed=-1 must be")]
    for more, says in cases:
        assert xl.main(["--out", str(out), *more]) == 2
        err = capsys.readouterr().err
        assert says in err and len(err.splitlines()) == 1, (more, err)
        assert not out.exists()
    out.mkdir()
    (out / "main_1").mkdir()
    (out / "main_1" / "config.json").write_text("{}")
    assert xl.main(["--out", str(out)]) == 2
    assert "main_1 holds a stopped leg" in capsys.readouterr().err
    (out / "main_1" / "config.json").unlink()
    (out / "judgement.json").write_text("{}")
    assert xl.main(["--out", str(out)]) == 2
    assert "holds a judged league" in capsys.readouterr().err


def test_exploiter_defaults_found_from_any_folder(tmp_path, monkeypatch):
    """Run from another working folder: the default --init and --reference are the installed
    package's shipped models, not paths that only exist from the checkout's root."""
    monkeypatch.chdir(tmp_path)
    a = xl.parser().parse_args(["--out", "xl"])
    init, reference = xl.check_args(a, dict(xl.RECIPE))
    assert Path(init).is_file() and Path(init).name == "learned.npz"
    assert Path(reference).is_file() and Path(reference).name == "learned_4teams.npz"
    a = xl.parser().parse_args(["--out", "xl", "--reference", ""])
    assert xl.check_args(a, dict(xl.RECIPE))[1] is None
    assert not (tmp_path / "xl").exists()


def test_ppo_league_checks_final_deals_before_training(tmp_path, capsys):
    from train import ppo_league
    with pytest.raises(SystemExit) as exc:
        ppo_league.parse_args(["--out", str(tmp_path / "run"), "--final-deals", "1"])
    assert exc.value.code == 2
    assert "--final-deals=1 must be an int from 2 to" in capsys.readouterr().err
    assert not (tmp_path / "run").exists()
    assert ppo_league.parse_args(["--out", str(tmp_path / "run"), "--final-deals", "2"])[1] == 2


# ------------------------------------------------------------------ reruns: the same league
def _fake_legs(monkeypatch, module, name, folders):
    """`name` (run_league / run_population) replaced by one that leaves finished legs (a copy
    of the shipped model) in `folders` of --out, and the judgement by an empty one; the calls
    are counted."""
    calls = []

    def run(out, *a, **k):
        calls.append(a)
        for f in folders:
            if not (Path(out) / f / "final.npz").exists():
                _copy(Path(out) / f / "final.npz")
        if module is xl:
            return [a[0], str(Path(out) / "main_1" / "final.npz")], []
        return {n: [p, str(Path(out) / f"{n}_1" / "final.npz")] for n, p in a[0].items()}

    monkeypatch.setattr(module, name, run)
    monkeypatch.setattr(module, "judge", lambda *a, **k: [])
    return calls


def test_exploiter_rerun_with_other_arguments_is_refused(tmp_path, monkeypatch, capsys):
    """A finished league, judgement.json deleted, rerun with another --init, --main-steps or
    --seed: refused before any work, naming the first option that differs and both values
    (leg main_1 of 100000 steps from the shipped model is never judged against another
    start); the same arguments continue it."""
    calls = _fake_legs(monkeypatch, xl, "run_league", ["main_1"])
    out = tmp_path / "xl"
    base = ["--out", str(out), "--legs", "1", "--exploiter-steps", "1", "--deals", "2",
            "--reference", ""]
    assert xl.main(base + ["--init", WIDE, "--main-steps", "100000"]) == 0
    assert (out / "league.json").is_file() and len(calls) == 1
    (out / "judgement.json").unlink()
    capsys.readouterr()
    other = _copy(tmp_path / "other" / "M.npz")
    held = _files(out)
    for more, says in [(["--init", other, "--main-steps", "5000", "--seed", "7"],
                        f"begun with --init {Path(WIDE).resolve()}; this run gives --init "
                        f"{Path(other).resolve()}"),
                       (["--init", WIDE, "--main-steps", "5000"],
                        "begun with --main-steps 100000; this run gives --main-steps 5000"),
                       (["--init", WIDE, "--main-steps", "100000", "--seed", "7"],
                        "begun with --seed 1; this run gives --seed 7"),
                       (["--init", WIDE, "--main-steps", "100000", "--keep-mains", "0"],
                        "--keep-mains 2; this run gives --keep-mains 0")]:
        assert xl.main(base + more) == 2
        err = capsys.readouterr().err
        assert says in err and len(err.splitlines()) == 1, (more, err)
        assert len(calls) == 1 and _files(out) == held
    assert xl.main(base + ["--init", WIDE, "--main-steps", "100000"]) == 0      # continued
    assert len(calls) == 2


def test_exploiter_rerun_refused_when_the_start_changed(tmp_path, monkeypatch, capsys):
    calls = _fake_legs(monkeypatch, xl, "run_league", ["main_1"])
    out, start = tmp_path / "xl", _copy(tmp_path / "s" / "M.npz")
    argv = ["--out", str(out), "--legs", "1", "--deals", "2", "--reference", "", "--init",
            start]
    assert xl.main(argv) == 0
    (out / "judgement.json").unlink()
    arrays = dict(np.load(start))
    arrays["hidden0_bias"][0] += 1.0                      # another model at the same path
    np.savez(start, **arrays)
    capsys.readouterr()
    assert xl.main(argv) == 2
    err = capsys.readouterr().err
    assert "begun from --init with sha256" in err and "it changed since" in err
    assert len(calls) == 1


def test_a_legs_own_config_is_compared(tmp_path, monkeypatch, capsys):
    """A folder without league.json (another version's run): each leg's config.json must hold
    the seed and steps this run would give it."""
    _quiet(monkeypatch, xl, "run_league")
    out = tmp_path / "xl"
    _copy(out / "main_1" / "final.npz")
    (out / "main_1" / "config.json").write_text(json.dumps(
        {"config": {"seed": 8, "timesteps": 100000}}))
    assert xl.main(["--out", str(out), "--legs", "1", "--main-steps", "5000",
                    "--reference", ""]) == 2
    err = capsys.readouterr().err
    assert "main_1' was trained with seed=8; this run gives that leg seed=2" in err
    assert not (out / "league.json").exists()


def test_population_rerun_with_other_arguments_is_refused(tmp_path, monkeypatch, capsys):
    calls = _fake_legs(monkeypatch, pl, "run_population", ["A_1", "B_1"])
    out = tmp_path / "pop"
    other = _copy(tmp_path / "other" / "M.npz")
    assert pl.main(_pop(out, "--legs", "1", "--steps", "100000", "--deals", "2")) == 0
    (out / "judgement.json").unlink()
    capsys.readouterr()
    held = _files(out)
    for argv, says in [
            (["--out", str(out), "--start", f"A={WIDE}", "--start", f"B={other}", "--legs",
              "1", "--steps", "5000", "--seed", "7"],
             f"begun with --start A={Path(WIDE).resolve()} B={Path(WIDE).resolve()}; this run "
             f"gives --start A={Path(WIDE).resolve()} B={Path(other).resolve()}"),
            (_pop(out, "--legs", "1", "--steps", "5000"),
             "begun with --steps 100000; this run gives --steps 5000"),
            (_pop(out, "--legs", "1", "--steps", "100000", "--seed", "7"),
             "begun with --seed 60; this run gives --seed 7")]:
        assert pl.main(argv) == 2
        err = capsys.readouterr().err
        assert says in err and len(err.splitlines()) == 1, (argv, err)
        assert len(calls) == 1 and _files(out) == held
    assert pl.main(_pop(out, "--legs", "1", "--steps", "100000", "--deals", "2")) == 0
    assert len(calls) == 2


def test_a_stopped_run_takes_its_record_back(tmp_path, monkeypatch, capsys):
    """Stopped before any leg left a folder: no league.json (and no --out it made) is left
    to refuse the corrected command."""
    def stopped(*a, **k):
        raise KeyboardInterrupt
    monkeypatch.setattr(pl, "run_population", stopped)
    out = tmp_path / "pop"
    assert pl.main(_pop(out, "--legs", "1")) == 130
    assert not out.exists()
    out.mkdir()
    assert pl.main(_pop(out, "--legs", "1")) == 130
    assert list(out.iterdir()) == []


# ------------------------------------------------------------------ --out that cannot be
@pytest.mark.parametrize("module", [pl, xl])
def test_an_out_that_cannot_be_made_is_refused_before_any_leg(module, tmp_path, monkeypatch,
                                                              capsys):
    _quiet(monkeypatch, module, "run_population" if module is pl else "run_league")
    argv = (lambda out: _pop(out, "--legs", "1")) if module is pl else (
        lambda out: ["--out", str(out), "--legs", "1", "--reference", ""])
    assert module.main(argv("/proc/pop")) == 1
    err = capsys.readouterr().err
    assert "/proc/pop" in err and len(err.splitlines()) == 1 and "removed" not in err
    (tmp_path / "afile").write_text("mine")
    assert module.main(argv(tmp_path / "afile" / "x")) == 2
    err = capsys.readouterr().err
    assert f"'{tmp_path / 'afile'}' is a file, not a folder" in err
    assert len(err.splitlines()) == 1
    assert (tmp_path / "afile").read_text() == "mine"


@pytest.mark.parametrize("module", [pl, xl])
def test_argparse_errors_are_one_line(module, capsys):
    with pytest.raises(SystemExit) as exc:
        module.main(["--out", "x", "--legs", "x"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1 and "--legs" in err
    assert err.startswith(f"{module.PROG}: error: ") and f"(see '{module.PROG} --help')" in err


# ------------------------------------------------------------------ ppo_league: nertz train's rules
PPO_TINY = ["--learner", "sb3", "--bc-rows", "0", "--eval-every", "0", "--checkpoint-every", "0",
            "--num-envs", "1", "--n-steps", "8", "--batch-size", "8", "--final-deals", "2", "--no-tensorboard",
            "--no-progress", "--teams", "2", "--torch-threads", "1"]


def test_ppo_league_refuses_in_one_line_before_writing(tmp_path, capsys):
    from train import ppo_league
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "notes.txt").write_text("mine")
    (tmp_path / "afile").write_text("mine")
    for more, says in [(["--out", str(busy)], "is not empty"),
                       (["--out", str(tmp_path / "afile")], "is a file, not a folder"),
                       (["--out", str(tmp_path / "o"), "--opponents", "bogus"],
                        "unknown kind 'bogus'"),
                       (["--out", str(tmp_path / "o"), "--resume", str(tmp_path / "X")],
                        "resume=")]:
        assert ppo_league.main(PPO_TINY + ["--timesteps", "8"] + more) == 2
        err = capsys.readouterr().err
        assert says in err and len(err.splitlines()) == 1, (more, err)
    assert sorted(p.name for p in busy.iterdir()) == ["notes.txt"]
    assert not (tmp_path / "o").exists() and (tmp_path / "afile").read_text() == "mine"
    with pytest.raises(SystemExit) as exc:
        ppo_league.main(["--out", str(tmp_path / "o"), "--num-envs", "x"])
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1
    assert "(see 'python -m train.ppo_league --help')" in err


def test_ppo_league_honours_the_lean_learner(tmp_path, capsys):
    """--learner lean --init ZIP: the lean PPO trains (final.npz) and is judged, as
    config.json says (not SB3 under a config that names lean)."""
    from train import ppo_league
    out = tmp_path / "run"
    assert ppo_league.main(PPO_TINY + ["--timesteps", "8", "--learner", "lean", "--init", ZIP,
                                       "--out", str(out)]) == 0
    assert json.loads((out / "config.json").read_text())["config"]["learner"] == "lean"
    assert (out / "final.npz").is_file() and not (out / "final.zip").exists()
    assert json.loads((out / "final_eval.json").read_text())["deals"] == 2


def _ppo_league(out, tmp, *more):
    env = {**os.environ, "TMPDIR": str(tmp)}
    return subprocess.Popen([sys.executable, "-m", "train.ppo_league", *PPO_TINY,
                             "--out", str(out), *more], env=env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, preexec_fn=_ctrl_c_able)


def test_ppo_league_leaves_no_sb3_folder(tmp_path):
    """A run leaves no SB3-* folder in the temp folder (SB3's default logger makes one)."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    proc = _ppo_league(tmp_path / "run", tmp, "--timesteps", "8")
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err
    assert (tmp_path / "run" / "final_eval.json").is_file()
    assert list(tmp.glob("SB3-*")) == []


def test_ppo_league_stops_clean(tmp_path):
    """Ctrl-C exits 130 with one line and no traceback, and leaves no folder that would
    refuse the same command."""
    tmp = tmp_path / "tmp"
    tmp.mkdir()
    run = tmp_path / "stopped"
    proc = _ppo_league(run, tmp, "--timesteps", str(LONG))
    try:
        deadline = time.monotonic() + 240
        while not (run / "config.json").exists():
            assert proc.poll() is None, proc.communicate()[1]
            assert time.monotonic() < deadline, "the run did not start"
            time.sleep(0.2)
        time.sleep(1)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=STOP_S)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    assert err.strip().splitlines()[-1].startswith("python -m train.ppo_league: interrupted")
    assert not run.exists()


def test_a_directory_or_fifo_model_is_named_as_such(tmp_path, monkeypatch, capsys):
    """--reference/--init/--start given a folder or a FIFO: said so (never opened, no hang),
    not 'no such model file'."""
    import os
    _quiet(monkeypatch, xl, "run_league")
    folder, fifo = tmp_path / "d.npz", tmp_path / "f.npz"
    folder.mkdir()
    os.mkfifo(fifo)
    for path, says in ((folder, "is a directory"), (fifo, "is not a regular file")):
        assert xl.main(["--out", str(tmp_path / "xl"), "--reference", str(path)]) == 2
        err = capsys.readouterr().err
        assert says in err and len(err.splitlines()) == 1, err
        assert pl.main(["--out", str(tmp_path / "pl"), "--start", f"A={path}",
                        "--start", f"B={path}"]) == 2
        err = capsys.readouterr().err
        assert says in err and len(err.splitlines()) == 1, err
