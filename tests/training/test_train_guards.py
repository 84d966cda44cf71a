"""`nertz train`'s guards (issue #40): where a run (a resume included) may write, what a
refused, interrupted or failed run leaves, the checks of every field read back from a
checkpoint, the lean PPO's own defaults and network limits, and the lines a run prints
(only files that exist, a resume hint that says TOTAL, a bar that says its last phase, bars
over the warm start, no SB3-* folder in the system temp folder, I/O errors exit 1 naming the
real path, no terminal escape codes in an error line). Tiny runs (tests/training/tiny_runs.py)."""
import errno
import json
import re
import shutil
import tempfile

import pytest

pytest.importorskip("sb3_contrib")
torch = pytest.importorskip("torch")
pytest.importorskip("tqdm.auto")                       # the bars fixture (conftest.py)

from stable_baselines3.common.callbacks import BaseCallback
from tiny_runs import tiny

from agents.cli import main as nertz_main
from agents.cli import train as train_cli
from agents.training import run as training_run
from agents.training.checkpoints import resume_config
from agents.training.config import TrainConfig
from agents.training.folder import naming, plain

pytestmark = pytest.mark.usefixtures("one_torch_thread")

TINY_ARGS = ["--learner", "sb3", "--num-envs", "8", "--n-steps", "16", "--batch-size", "64", "--bc-rows", "0",
             "--max-ticks", "150", "--net-arch", "32,32", "--n-epochs", "1",
             "--eval-every", "0", "--no-tensorboard", "--no-progress", "--torch-threads", "1"]
LEAN_ARGS = ["--learner", "lean", "--bc-rows", "0", "--num-envs", "8", "--n-steps", "16", "--batch-size", "64",
             "--max-ticks", "150", "--net-arch", "32,32", "--no-progress",
             "--torch-threads", "1", "--timesteps", "128"]


def quiet(_line):
    pass


@pytest.fixture(scope="module")
def done_run(tmp_path_factory):
    """A finished tiny SB3 run with a checkpoint at 128 steps and one league snapshot."""
    tmp = tmp_path_factory.mktemp("guards")
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    training_run.train(tiny(tmp, checkpoint_every=128, snapshot_every=128, timesteps=128,
                            n_epochs=1), log=quiet)
    torch.set_num_threads(old)
    return tmp / "run"


def copy_run(src, dst):
    shutil.copytree(src, dst)
    return dst / "checkpoints" / "step_128.zip"


def edit_json(path, change):
    data = json.loads(path.read_text())
    change(data)
    path.write_text(json.dumps(data))


def files_of(folder):
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


# ---------------------------------------------------------------------------- 1. where a resume writes
def test_resume_into_a_folder_holding_another_run_is_refused_and_changes_nothing(
        done_run, tmp_path, capsys):
    ck = copy_run(done_run, tmp_path / "a")
    other = tmp_path / "other"
    other.mkdir()
    (other / "config.json").write_text('{"config": {"mine": 1}}\n')
    (other / "final.zip").write_bytes(b"another run's model")
    before = files_of(other)
    assert nertz_main(["train", "--resume", str(ck), "--out", str(other),
                       "--timesteps", "256"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "already holds a run" in err[0] and str(other) in err[0], err
    assert files_of(other) == before
    # a folder holding anything at all is refused too (new or empty only)
    (tmp_path / "junk").mkdir()
    (tmp_path / "junk" / "notes.txt").write_text("mine")
    with pytest.raises(ValueError, match="is not empty"):
        training_run.train(resume_config(ck, out=str(tmp_path / "junk")), log=quiet)
    assert files_of(tmp_path / "junk") == {"notes.txt": b"mine"}


def test_a_resume_without_out_writes_to_the_checkpoints_own_folder_not_the_files_out(
        done_run, tmp_path):
    ck = copy_run(done_run, tmp_path / "a")
    elsewhere = tmp_path / "elsewhere"
    edit_json(ck.with_suffix(".json"), lambda d: d["config"].update(out=str(elsewhere)))
    cfg = resume_config(ck, timesteps=256)
    assert cfg.out == str(tmp_path / "a")
    training_run.train(cfg, log=quiet)
    assert not elsewhere.exists()
    assert (tmp_path / "a" / "checkpoints" / "step_256.zip").is_file()
    # a zip outside a checkpoints/ folder has no run folder of its own: --out is needed
    loose = tmp_path / "loose"
    loose.mkdir()
    for p in ck.parent.glob("step_128*"):
        shutil.copy(p, loose / p.name)
    with pytest.raises(ValueError, match="give --out"):
        resume_config(loose / "step_128.zip")


@pytest.mark.parametrize("where", ["absolute", "escaping"])
def test_a_league_snapshot_outside_the_run_folder_is_refused(done_run, tmp_path, capsys, where):
    ck = copy_run(done_run, tmp_path / "a")
    outside = tmp_path / "outside"
    outside.mkdir()
    shutil.copy(tmp_path / "a" / "snapshots" / "step_128.zip", outside / "step_128.zip")
    path = str(outside / "step_128.zip") if where == "absolute" else "../outside/step_128.zip"
    edit_json(ck.with_suffix(".json"), lambda d: d.update(snapshots=[path]))
    assert nertz_main(["train", "--resume", str(ck), "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "snapshots[0]" in err[0] and "step_128.json" in err[0], err
    assert not (tmp_path / "r").exists()


def test_a_resume_into_a_new_folder_keeps_its_snapshots_inside_it(done_run, tmp_path):
    """The snapshots a resumed run plays are copied into its own folder, so its checkpoints
    resume again (a snapshot path out of the run folder would be refused)."""
    ck = copy_run(done_run, tmp_path / "a")
    new = tmp_path / "new"
    training_run.train(resume_config(ck, out=str(new), timesteps=256), log=quiet)
    info = json.loads((new / "checkpoints" / "step_256.json").read_text())
    assert info["snapshots"] and all(not p.startswith("..") for p in info["snapshots"])
    assert resume_config(new / "checkpoints" / "step_256.zip").out == str(new)


# ---------------------------------------------------------------------------- 2. refused, stopped
def test_a_refused_run_is_refused_before_its_folder_is_made(tmp_path, capsys, monkeypatch):
    """A bad --init and a pair opponent at solo seats: refused while the run folder does not
    exist yet (not made and then removed), with one line, and nothing left."""
    from agents.training import lean_ppo, league
    seen = []

    def spy(real):
        def wrapped(*a, **kw):
            seen.append(any(p.exists() for p in tmp_path.glob("r*")))
            return real(*a, **kw)
        return wrapped

    monkeypatch.setattr(lean_ppo, "start_from", spy(lean_ppo.start_from))
    monkeypatch.setattr(league, "make_env", spy(league.make_env))
    monkeypatch.setattr(training_run, "make_env", spy(training_run.make_env))
    bad = tmp_path / "bad.npz"
    bad.write_bytes(b"not a model")
    (tmp_path / "bad.json").write_text("{}")
    out = tmp_path / "r1"
    assert nertz_main(["train", *LEAN_ARGS, "--init", str(bad), "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "bad.json" in err[0], err
    for i, argv in enumerate((LEAN_ARGS, TINY_ARGS)):       # the lean PPO, then SB3
        assert nertz_main(["train", *argv, "--opponents", "pair:greedy&heuristic",
                           "--out", str(tmp_path / f"r{i + 2}")]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "pair" in err[0], err
    assert seen and not any(seen) and not list(tmp_path.glob("r*"))


def interrupt_at(monkeypatch, step):
    """Ctrl-C at the first rollout at or past `step` (after the run's own callbacks)."""
    real = training_run.make_callbacks

    class CtrlC(BaseCallback):
        def _on_step(self):
            return True

        def _on_rollout_start(self):
            if self.num_timesteps >= step:
                raise KeyboardInterrupt

    monkeypatch.setattr(training_run, "make_callbacks",
                        lambda *a, **kw: real(*a, **kw) + [CtrlC()])


def test_ctrl_c_before_a_checkpoint_removes_the_folder(tmp_path, monkeypatch, capsys):
    interrupt_at(monkeypatch, 128)
    out = tmp_path / "run"
    argv = ["train", *TINY_ARGS, "--timesteps", "512", "--checkpoint-every", "0",
            "--out", str(out)]
    assert nertz_main(argv) == 130
    err = capsys.readouterr().err
    assert not out.exists()
    assert "no checkpoint was written" in err and "removed" in err
    assert "no half-written" not in err
    monkeypatch.undo()
    argv[argv.index("512")] = "128"
    assert nertz_main(argv) == 0                         # the same command runs again


def test_ctrl_c_after_a_checkpoint_keeps_it_and_prints_the_command_that_continues(
        tmp_path, monkeypatch, capsys):
    interrupt_at(monkeypatch, 256)
    out = tmp_path / "run"
    assert nertz_main(["train", *TINY_ARGS, "--timesteps", "384", "--checkpoint-every", "128",
                       "--out", str(out)]) == 130
    err = capsys.readouterr().err
    assert "no half-written" not in err and "is kept with its checkpoints" in err
    (cmd,) = re.findall(r"nertz train (--resume \S+ --timesteps \d+)", err)
    ck = cmd.split()[1]
    assert cmd.endswith("--timesteps 384")
    assert (out / "checkpoints").is_dir() and ck.endswith(".zip")
    assert ck == str(max((out / "checkpoints").glob("step_*.zip"),
                         key=lambda p: int(p.stem[5:])))
    monkeypatch.undo()
    assert nertz_main(["train", *cmd.split()]) == 0      # exactly the command it printed
    assert (out / "final.zip").is_file()
    assert json.loads((out / "checkpoints" / "step_384.json").read_text())["num_timesteps"] \
        == 384


def test_overwrite_replaces_a_finished_run_only_and_puts_it_back_when_stopped_early(
        tmp_path, monkeypatch, capsys):
    out = tmp_path / "run"
    argv = ["train", *TINY_ARGS, "--timesteps", "128", "--checkpoint-every", "0",
            "--out", str(out)]
    assert nertz_main(argv) == 0
    first = files_of(out)
    capsys.readouterr()
    assert nertz_main(argv) == 2                          # a run there: refused, unchanged
    assert "give --overwrite" in capsys.readouterr().err and files_of(out) == first
    interrupt_at(monkeypatch, 128)                       # stopped before a checkpoint
    assert nertz_main(argv[:-2] + ["--timesteps", "512", "--seed", "5", "--overwrite",
                                   "--out", str(out)]) == 130
    assert "holds the earlier run again" in capsys.readouterr().err
    assert files_of(out) == first and sorted(p.name for p in tmp_path.iterdir()) == ["run"]
    monkeypatch.undo()
    assert nertz_main(argv[:-2] + ["--seed", "5", "--overwrite", "--out", str(out)]) == 0
    assert files_of(out) != first and sorted(p.name for p in tmp_path.iterdir()) == ["run"]
    assert json.loads((out / "config.json").read_text())["config"]["seed"] == 5
    # not a finished run of nertz train: refused even with --overwrite, nothing changes
    (out / "final.zip").unlink()
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "config.json").write_text("{}")
    (tmp_path / "mine" / "final.zip").write_text("")
    (tmp_path / "mine" / "notes.txt").write_text("keep")
    for folder, words in ((out, "no final model"), (tmp_path / "mine", "notes.txt")):
        before = files_of(folder)
        assert nertz_main(argv[:-2] + ["--overwrite", "--out", str(folder)]) == 2
        err = capsys.readouterr().err
        assert words in err and files_of(folder) == before, err


# ---------------------------------------------------------------------------- 3, 4. lean config
def test_a_lean_network_the_safe_format_cannot_hold_is_refused_before_training(tmp_path,
                                                                               capsys):
    from agents.learned import weights
    MAX_LAYERS = getattr(weights, "MAX_HIDDEN_LAYERS", getattr(weights, "MAX_LAYERS", 8))
    MAX_WIDTH = weights.MAX_WIDTH
    for arch in ([16] * (MAX_LAYERS + 1), [MAX_WIDTH + 1]):
        with pytest.raises(ValueError, match="net_arch.*safe model format"):
            TrainConfig(learner="lean", net_arch=arch)
    TrainConfig(learner="sb3", net_arch=[16] * (MAX_LAYERS + 1))   # SB3 zips: any depth
    out = tmp_path / "deep"
    argv = [a if a != "32,32" else ",".join(["8"] * (MAX_LAYERS + 1)) for a in LEAN_ARGS]
    assert nertz_main(["train", *argv, "--out", str(out)]) == 2
    assert not out.exists() and "--net-arch" in capsys.readouterr().err


def test_the_lean_learner_runs_on_its_own_defaults(tmp_path, capsys):
    cfg = TrainConfig()
    assert cfg.learner == "lean" and cfg.bc_rows == 200_000
    assert TrainConfig(learner="sb3").bc_rows == 200_000
    out = tmp_path / "lean"
    argv = [a for a in LEAN_ARGS]
    assert nertz_main(["train", *argv, "--out", str(out)]) == 0, capsys.readouterr().err
    assert (out / "final.npz").is_file() and not (out / "bc.json").exists()
    with pytest.raises(ValueError) as err:
        TrainConfig(learner="lean", resume="x/checkpoints/step_1.zip")
    assert "resume=0" not in str(err.value) and "does not resume" in str(err.value)
    assert train_cli.default_text("bc_rows", 200_000) == "200000"


def test_a_warm_start_option_with_init_is_refused_by_its_flag(tmp_path, capsys):
    """A run from --init does no warm start: --bc-rows above 0 (or a warm-start option) with it
    is refused naming the flag; --bc-rows 0 is not."""
    from pathlib import Path
    model = str(Path(__file__).resolve().parents[2] / "agents/learned/models/learned_2teams.npz")
    for extra in (["--bc-rows", "1000"], ["--bc-epochs", "2"]):
        out = tmp_path / "r"
        argv = ["train", "--init", model, *extra, "--out", str(out), "--timesteps", "16"]
        assert nertz_main(argv) == 2
        err = capsys.readouterr().err
        assert extra[0] in err and "--init" in err and not out.exists()
    cfg = train_cli.config_from_args(train_cli.add_parser(
        __import__("argparse").ArgumentParser().add_subparsers()).parse_args(
        ["--init", model, "--bc-rows", "0"]))
    assert cfg.bc_rows == 0


# ---------------------------------------------------------------------------- 5. fields read back
RNG_TAMPER = {
    "league_rng": lambda d: d.update(league_rng={"bit_generator": "PCG64", "state": [1, 2]}),
    "league_rng.kind": lambda d: d.update(league_rng={"bit_generator": "MT19937"}),
    "numpy.key": lambda d: d["numpy"].update(key=["x"] * 624),
    "numpy.pos": lambda d: d["numpy"].update(pos=True),
    "torch": lambda d: d.update(torch=7),
}


@pytest.mark.parametrize("case", list(RNG_TAMPER))
def test_a_tampered_generator_state_is_one_line_naming_file_and_field(done_run, tmp_path,
                                                                      capsys, case):
    ck = copy_run(done_run, tmp_path / "a")
    edit_json(ck.parent / "step_128.rng.json", RNG_TAMPER[case])
    assert nertz_main(["train", "--resume", str(ck), "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    field = case.split(".")[0] if case.startswith("league") else case
    assert len(err) == 1 and "step_128.rng.json" in err[0] and f"field {field}" in err[0], err
    assert not (tmp_path / "r").exists()


INFO_TAMPER = {
    "duplicate key": (lambda t: t.replace('{', '{"num_timesteps": 1, ', 1), "twice"),
    "unknown config field": (lambda t: t.replace('"config": {', '"config": {"evil": 1, ', 1),
                             "config.evil"),
    "num_timesteps": (lambda t: re.sub(r'"num_timesteps": \d+', '"num_timesteps": true', t),
                      "num_timesteps"),
    "config value": (lambda t: t.replace('"seed": 0', '"seed": "zero"'), "seed"),
}


@pytest.mark.parametrize("case", list(INFO_TAMPER))
def test_a_tampered_checkpoint_info_is_one_line_naming_it(done_run, tmp_path, capsys, case):
    ck = copy_run(done_run, tmp_path / "a")
    info = ck.with_suffix(".json")
    change, words = INFO_TAMPER[case]
    text = info.read_text()
    info.write_text(change(text))
    assert info.read_text() != text
    assert nertz_main(["train", "--resume", str(ck), "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "step_128.json" in err[0] and words in err[0], err


# ---------------------------------------------------------------------------- 6. what it says
def test_the_last_line_lists_only_what_exists_and_the_resume_hint_says_total(tmp_path, capsys):
    out = tmp_path / "run"
    args = list(TINY_ARGS)
    args[args.index("--eval-every") + 1] = "1000000"
    assert nertz_main(["train", *args, "--timesteps", "128",
                       "--checkpoint-every", "0", "--out", str(out)]) == 0
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert not (out / "eval.csv").exists() and "eval.csv" not in last and "eval.jsonl" not in last
    assert "MORE" not in last and "--timesteps TOTAL" in last and "above its 128" in last
    assert f"--resume {out / 'checkpoints' / 'step_128.zip'}" in last


def test_the_bar_says_its_last_phase_instead_of_sitting_at_full(tmp_path, bars, monkeypatch,
                                                                capsys):
    seen = []
    real = training_run.save_checkpoint

    def spy(model, cfg, run):
        seen.append((bars[-1].n, bars[-1].total, bars[-1].desc))
        return real(model, cfg, run)

    monkeypatch.setattr(training_run, "save_checkpoint", spy)
    training_run.train(tiny(tmp_path, timesteps=256, checkpoint_every=128, progress=True,
                            n_epochs=1), log=quiet)
    n, total, desc = seen[-1]                      # the end's checkpoint: the bar is full
    assert n == total == 256 and "final checkpoint" in desc, seen


def test_the_warm_start_has_bars(tmp_path, bars):
    training_run.train(tiny(tmp_path, bc_rows=64, bc_epochs=2, progress=True, timesteps=128,
                            n_epochs=1), log=quiet)
    by = {b.desc: b for b in bars}
    assert {"imitation data", "behaviour cloning"} <= set(by), list(by)
    data, fit = by["imitation data"], by["behaviour cloning"]
    assert data.n == data.total >= 64 and fit.n == fit.total > 0


def test_no_sb3_folder_is_left_in_the_system_temp_folder(tmp_path, monkeypatch):
    systmp = tmp_path / "systmp"
    systmp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(systmp))
    assert tempfile.gettempdir() == str(systmp)
    training_run.train(tiny(tmp_path, timesteps=128), log=quiet)
    assert list(systmp.iterdir()) == []


# ---------------------------------------------------------------------------- 7. I/O errors
def test_a_write_failure_exits_1_naming_the_real_path(tmp_path, monkeypatch, capsys):
    from sb3_contrib import MaskablePPO

    def full(self, path, *a, **kw):
        raise OSError(errno.ENOSPC, "No space left on device", str(path))

    monkeypatch.setattr(MaskablePPO, "save", full)
    out = tmp_path / "run"
    assert nertz_main(["train", *TINY_ARGS, "--timesteps", "128", "--checkpoint-every", "0",
                       "--out", str(out)]) == 1
    err = capsys.readouterr().err.strip().splitlines()[-1]
    assert ".part" not in err and "step_128.zip" in err and "No space left" in err, err
    monkeypatch.undo()
    blocker = tmp_path / "a-file"
    blocker.write_text("x")
    assert nertz_main(["train", *TINY_ARGS, "--timesteps", "128",
                       "--out", str(blocker / "run")]) == 1
    assert "a-file" in capsys.readouterr().err


def test_naming_replaces_a_temporary_file_name_only(tmp_path):
    target = tmp_path / "final.zip"
    with pytest.raises(OSError) as err, naming(target):
        raise OSError(errno.ENOSPC, "full", str(tmp_path / ".final.zip.ab12.part"))
    assert err.value.filename == str(target) and err.value.errno == errno.ENOSPC
    with pytest.raises(OSError) as err, naming(target):
        raise OSError(errno.EACCES, "denied", str(tmp_path))
    assert err.value.filename == str(tmp_path)


def test_terminal_escape_codes_never_reach_an_error_line(monkeypatch, capsys, tmp_path):
    assert plain("\x1b[1mWeights only load failed\x1b[0m: \x1b]8;;http://x\x07link") == \
        "Weights only load failed: link"

    def coloured(cfg, log=print, **kw):
        raise ValueError("checkpoint: \x1b[31mUnpicklingError\x1b[0m bad")

    monkeypatch.setattr(training_run, "train", coloured)
    assert nertz_main(["train", *TINY_ARGS, "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert "\x1b" not in err and "UnpicklingError bad" in err



# ---------------------------------------------------------------------------- 8. redteam2 (#40)
def refused_alone(capsys, argv, *words):
    """nertz train refuses argv with exit 2: one error line naming `words`, nothing on stdout
    (no config line, no bar)."""
    assert nertz_main(["train", *argv]) == 2
    out, err = capsys.readouterr()
    lines = err.strip().splitlines()
    assert out == "" and len(lines) == 1, (out, err)
    for w in words:
        assert w in lines[0], lines[0]
    return lines[0]


def test_timesteps_are_bounded_by_the_limits_table_before_any_work(tmp_path, capsys):
    from agents.arena.limits import LIMITS
    hi = LIMITS["budget"].hi
    for argv in (LEAN_ARGS, TINY_ARGS):
        out = tmp_path / "r"
        refused_alone(capsys, [*argv, "--timesteps", str(10**19), "--out", str(out)],
                      "--timesteps", f"from 1 to {hi}")
        assert not out.exists()
    with pytest.raises(ValueError, match=f"timesteps={hi + 1} must be an int from 1 to {hi}"):
        TrainConfig(timesteps=hi + 1)
    assert TrainConfig(timesteps=hi).timesteps == hi


def test_sigterm_stops_a_run_as_ctrl_c_does_and_exits_143(tmp_path):
    """SIGTERM (a timeout, kill, a scheduler) during a run: stopped as after Ctrl-C, exit 143,
    the folder kept with its checkpoints and the line says how to go on. The signal is sent
    once the first checkpoint exists, so the run is inside its rollouts (a signal is handled
    between Python bytecodes only: one sent during a long C call such as a cold kernel
    compile waits for it). The folder removed before a first checkpoint is the Ctrl-C path,
    the same code (stopped_cleanly), tested by the KeyboardInterrupt tests."""
    import os
    import signal
    import subprocess
    import sys
    import time
    out = tmp_path / "run"
    argv = [a if a != "128" else "100000000" for a in LEAN_ARGS]
    env = {**os.environ, "OMP_NUM_THREADS": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "agents.cli", "train", *argv,
                             "--checkpoint-every", "256", "--out", str(out)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=env)
    try:
        t0 = time.time()
        while not list((out / "checkpoints").glob("step_*.npz")) and proc.poll() is None \
                and time.time() - t0 < 300:
            time.sleep(0.2)
        assert list((out / "checkpoints").glob("step_*.npz")), proc.poll()
        proc.send_signal(signal.SIGTERM)
        _, stderr = proc.communicate(timeout=120)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 128 + signal.SIGTERM, stderr
    assert "terminated (SIGTERM" in stderr and "is kept with its checkpoints" in stderr, stderr
    assert "--init" in stderr and (out / "config.json").is_file()
    assert "Traceback" not in stderr


def test_sigterm_handler_is_set_only_while_a_run_is_active():
    import signal
    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(train_cli.Terminated):
        with train_cli.sigterm_stops():
            assert signal.getsignal(signal.SIGTERM) is not before
            signal.raise_signal(signal.SIGTERM)
    assert signal.getsignal(signal.SIGTERM) is before


def test_a_refused_run_prints_its_error_line_alone(done_run, tmp_path, capsys, monkeypatch):
    """No config line (it says everything is in OUT/config.json), no bar, no rules line: the
    one error line; the config line of a run comes once its folder exists."""
    held = tmp_path / "held"
    held.mkdir()
    (held / "config.json").write_text("{}")
    refused_alone(capsys, [*LEAN_ARGS, "--out", str(held)], "already holds a run")
    bad = tmp_path / "bad.zip"
    bad.write_bytes(b"root:x:0:0:root:/root:/bin/bash\n")
    refused_alone(capsys, [*LEAN_ARGS, "--init", str(bad), "--out", str(tmp_path / "r1")],
                  "bad.zip")
    for argv in (LEAN_ARGS, TINY_ARGS):
        refused_alone(capsys, [*argv, "--opponents", "pair:greedy&random",
                               "--out", str(tmp_path / "r2")], "pair", "solo team")
    ck = copy_run(done_run, tmp_path / "a")
    edit_json(ck.with_suffix(".json"),
              lambda d: d["config"].update(opponents=["pair:greedy&random"]))
    refused_alone(capsys, ["--resume", str(ck), "--out", str(tmp_path / "r3")],
                  "step_128.json", "pair")
    assert not list(tmp_path.glob("r*"))
    seen = []
    real = train_cli.changed_line

    def spy(cfg):
        seen.append((tmp_path / "r4" / "config.json").is_file())
        return real(cfg)

    monkeypatch.setattr(train_cli, "changed_line", spy)
    assert nertz_main(["train", *LEAN_ARGS, "--out", str(tmp_path / "r4")]) == 0
    assert seen == [True]
    assert capsys.readouterr().out.startswith("config: ")


def test_a_checkpoints_snapshots_are_bounded_and_unique(done_run, tmp_path, capsys):
    import time
    ck = copy_run(done_run, tmp_path / "a")
    edit_json(ck.with_suffix(".json"),
              lambda d: d.update(snapshots=["snapshots/step_128.zip"] * 100_000))
    t = time.perf_counter()
    refused_alone(capsys, ["--resume", str(ck), "--out", str(tmp_path / "r")],
                  "step_128.json", "field snapshots", "at most 4")
    assert time.perf_counter() - t < 20
    edit_json(ck.with_suffix(".json"), lambda d: d.update(
        snapshots=["snapshots/step_128.zip", "snapshots/./step_128.zip"]))
    refused_alone(capsys, ["--resume", str(ck), "--out", str(tmp_path / "r")],
                  "step_128.json", "snapshots[1]", "twice")
    assert not (tmp_path / "r").exists()


def _set(path, value):
    def change(d):
        *head, last = path
        for k in head:
            d = d[k]
        d[last] = value
    return change


FIELD_TAMPER = {
    "net_arch": (_set(["config", "net_arch"], [4096] * 9), "config.net_arch"),
    "league weight": (_set(["league", 0, "weight"], "x"), "league[0].weight"),
    "league name": (_set(["league", 1, "name"], "snapshot:../../../etc/passwd"),
                    "league[1].name"),
    "num_timesteps huge": (_set(["num_timesteps"], 10**40), "num_timesteps"),
    "num_timesteps other": (_set(["num_timesteps"], 256), "num_timesteps"),
    "rules teams x": (_set(["rules", "num_teams"], "x"), "field rules"),
    "rules teams 9": (_set(["rules", "num_teams"], 9), "field rules"),
    "rules unlike config": (_set(["rules", "max_ticks"], 151), "field rules"),
    "num_envs": (_set(["config", "num_envs"], 10**9), "num_envs"),
}


@pytest.mark.parametrize("case", list(FIELD_TAMPER))
def test_every_checkpoint_field_is_checked_naming_file_and_field(done_run, tmp_path, capsys,
                                                                 case):
    ck = copy_run(done_run, tmp_path / "a")
    change, words = FIELD_TAMPER[case]
    edit_json(ck.with_suffix(".json"), change)
    refused_alone(capsys, ["--resume", str(ck), "--out", str(tmp_path / "r")],
                  "step_128.json", words)
    assert not (tmp_path / "r").exists()


def test_a_5000_digit_integer_names_the_file_and_field(done_run, tmp_path, capsys):
    ck = copy_run(done_run, tmp_path / "a")
    info = ck.with_suffix(".json")
    info.write_text(re.sub(r'"seed": \d+', '"seed": ' + "9" * 5000, info.read_text(), count=1))
    line = refused_alone(capsys, ["--resume", str(ck), "--out", str(tmp_path / "r")],
                         "step_128.json", "config.seed", "at most 40 are read")
    assert "set_int_max_str_digits" not in line


def test_an_option_is_named_as_it_was_given(tmp_path, capsys):
    refused_alone(capsys, [*LEAN_ARGS, "--num-envs", "100000000", "--out", str(tmp_path / "r")],
                  "--num-envs 100000000", "from 1 to 16777216")
    assert not (tmp_path / "r").exists()


def test_lean_says_no_hand_finished_yet_instead_of_nan(tmp_path, capsys):
    assert nertz_main(["train", *LEAN_ARGS, "--out", str(tmp_path / "r")]) == 0
    out = capsys.readouterr().out
    assert "no hand finished yet" in out and "nan" not in out.lower(), out


def test_a_checkpoint_renamed_to_another_step_is_refused(done_run, tmp_path, capsys):
    ck = copy_run(done_run, tmp_path / "a")
    for p in ck.parent.glob("step_128*"):
        p.rename(p.with_name(p.name.replace("step_128", "step_999")))
    refused_alone(capsys, ["--resume", str(ck.with_name("step_999.zip")),
                           "--out", str(tmp_path / "r")], "step_999.json", "num_timesteps",
                  "999")
