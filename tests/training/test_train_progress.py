"""What `nertz train` shows while it runs (agents/training/run.py, evaluation.py,
agents/cli/train.py): a progress bar whose total is the steps SB3 will run (whole rollouts)
and which ends exactly there, a rate and ETA over the whole wall time (a slow evaluation
slows them), log lines printed above the bar and never into it, a line before every phase
that can pause (the warm start, numba's first compile of the env and of the tournament),
start, end and --help texts that say what the run does and where its files are, and an
option that means nothing without another refused without it, in one line. Tiny runs: 8 tables, short hands, a few hundred steps."""
import argparse
import io
import re
import time
from contextlib import contextmanager, redirect_stderr, redirect_stdout

import pytest

pytest.importorskip("sb3_contrib")
torch = pytest.importorskip("torch")
pytest.importorskip("tqdm.auto")                       # the bars fixture (conftest.py)
tqdm_std = pytest.importorskip("tqdm.std")

import tiny_runs
from stable_baselines3.common.callbacks import BaseCallback, CallbackList

from agents.arena import progress as arena_progress
from agents.cli import main as nertz_main
from agents.cli import train as train_cli
from agents.training import evaluation
from agents.training import run as training_run
from agents.training.config import TrainConfig, check_given

pytestmark = pytest.mark.usefixtures("one_torch_thread")


def tiny(tmp_path, **kw) -> TrainConfig:
    """tiny_runs.tiny with the bar on, one epoch and two evaluation deals (these tests watch
    what the run prints, not what it learns)."""
    return tiny_runs.tiny(tmp_path, **{"progress": True, "n_epochs": 1, "eval_deals": 2, **kw})


@contextmanager
def one_screen():
    """stdout and stderr as one stream, as a terminal shows them (entered in the test's own
    body: pytest sets its capture again when the call starts, after the fixtures)."""
    screen = io.StringIO()
    with redirect_stdout(screen), redirect_stderr(screen):
        yield screen


class Clock(BaseCallback):
    """The wall time of a learn() call, from its start to its end."""

    def _on_training_start(self) -> None:
        self.t0 = time.perf_counter()

    def _on_step(self) -> bool:
        return True

    def _on_training_end(self) -> None:
        self.seconds = time.perf_counter() - self.t0


def visible(screen: str) -> list:
    """The lines a terminal is left showing: a carriage return goes back to the line's start
    and what follows overwrites it; lines of blanks (a cleared bar) are dropped."""
    out = []
    for raw in screen.split("\n"):
        line = ""
        for part in raw.split("\r"):
            line = part + line[len(part):]
        if line.strip():
            out.append(line.rstrip())
    return out


def shown_rate(screen: str) -> float:
    """The last steps/s the bar drew (tqdm's unit_scale prefixes read back)."""
    value, prefix = re.findall(r"([\d.]+)([kMG]?)step/s", screen)[-1]
    return float(value) * {"": 1, "k": 1e3, "M": 1e6, "G": 1e9}[prefix]


def test_steps_to_run_are_whole_rollouts():
    assert training_run.steps_to_run(0, 300, 128) == 384
    assert training_run.steps_to_run(0, 256, 128) == 256
    assert training_run.steps_to_run(384, 584, 128) == 256        # a resumed run, from 384
    assert training_run.steps_to_run(384, 300, 128) == 0


def test_the_bar_counts_the_steps_that_run_and_ends_exactly_there(tmp_path, bars):
    cfg = tiny(tmp_path, timesteps=300)                      # 300 is not whole rollouts of 128
    model = training_run.train(cfg, log=lambda s: None)
    (bar,) = bars
    assert model.num_timesteps == 384
    assert bar.total == bar.n == 384 and bar.initial == 0
    # a second learn() from where the first ended (a resumed run): its own start and total
    model.learn(200, callback=CallbackList(training_run.make_callbacks(cfg, tmp_path / "run",
                                                                       lambda s: None)),
                reset_num_timesteps=False)
    assert model.num_timesteps == 640
    assert (bars[1].initial, bars[1].n, bars[1].total) == (384, 640, 640)


def test_log_lines_are_printed_above_the_bar_not_into_it(tmp_path, bars):
    cfg = tiny(tmp_path, timesteps=384, checkpoint_every=128, eval_every=128)
    with one_screen() as terminal:
        training_run.train(cfg)                            # the default log: print
    screen = terminal.getvalue()
    shown = visible(screen)
    logged = [ln for ln in shown if re.search(r"checkpoint |eval at ", ln)]
    assert len(logged) == 6                       # 3 checkpoints, 3 evaluations, each whole
    for line in logged:
        assert line.startswith(("checkpoint ", "eval at ")) and "step/s" not in line, line
    for line in screen.replace("\r", "\n").split("\n"):
        if line.startswith(("checkpoint ", "eval at ")):   # begun on a cleared line
            before = re.split(r"[\r\n]", screen[:screen.index(line)])[-1]
            assert before == "", f"{line!r} printed after {before!r} on the same line"
    bar_lines = [ln for ln in shown if "step/s" in ln]
    assert bar_lines == [bar_lines[-1]] and "384/384" in bar_lines[-1]  # one bar, left at 100%
    assert shown.index(bar_lines[-1]) > max(shown.index(ln) for ln in logged)
    assert len(bars) == 1


def test_rate_and_eta_are_the_steps_over_the_whole_time(monkeypatch):
    """The run's bar on a fake clock: 1,000 steps in 1 s, a 9 s evaluation, 1,000 steps in
    1 s. It shows 2,000 / 11 s (182 step/s, 11 s to go), not the 1,000 step/s of the last
    updates (a smoothed rate showed 4-6k steps/s on a 1.5k run)."""
    now = [1000.0]
    monkeypatch.setattr(tqdm_std, "time", lambda: now[0])
    with one_screen() as screen:
        bar = training_run.progress_bar(0, 4000)
        for pause in [0.0] * 10 + [9.0] + [0.0] * 9:
            now[0] += 0.1 + pause
            bar.update(100)
        running = screen.getvalue()             # as drawn while it runs (close() redraws)
        bar.close()
    last = [ln for ln in visible(running) if "step/s" in ln][-1]
    assert shown_rate(last) == pytest.approx(2000 / 11, abs=1) and "2.00k/4.00k" in last
    assert "[00:11<00:11," in last, last                       # elapsed < remaining


def test_the_rate_counts_a_slow_evaluation(tmp_path, bars, monkeypatch):
    """A 1.5 s evaluation early in a run that otherwise takes about a second: the bar spans
    the whole learn(), evaluations included, so the rate it ends on is the run's own."""
    real, calls = training_run.evaluate_run, []

    def slow_first(model, cfg, run, logger=None, log=print):
        calls.append(model.num_timesteps)
        if len(calls) == 1:
            time.sleep(1.5)
        return real(model, cfg, run, logger, log)

    monkeypatch.setattr(training_run, "evaluate_run", slow_first)
    clock = Clock()
    cfg = tiny(tmp_path, timesteps=1024, eval_every=128)
    with one_screen() as terminal:
        training_run.train(cfg, log=lambda s: None, callbacks=[clock])
    assert calls[0] == 128 and bars[0].n == 1024
    true = 1024 / clock.seconds
    shown = shown_rate(terminal.getvalue())
    assert true / 1.5 < shown < true * 1.5, (shown, true)


def test_the_first_evaluation_says_when_numba_compiles_the_tournament(tmp_path, monkeypatch):
    monkeypatch.setattr(arena_progress, "kernel_cached", lambda kernel: False)  # a fresh install
    said = []
    training_run.train(tiny(tmp_path, timesteps=384, eval_every=128), log=said.append)
    notes = [i for i, s in enumerate(said) if s.startswith("first evaluation")]
    evals = [i for i, s in enumerate(said) if s.startswith("eval at ")]
    assert len(notes) == 1 and len(evals) == 3 and notes[0] == evals[0] - 1
    assert "numba compiles" in said[notes[0]] and "cached for later runs" in said[notes[0]]
    assert any(s.startswith("the training env") and "numba compiles" in s
               and "progress bar waits" in s for s in said)
    monkeypatch.setattr(arena_progress, "kernel_cached", lambda kernel: True)   # cached
    said.clear()
    training_run.train(tiny(tmp_path, out=str(tmp_path / "r2"), timesteps=256, eval_every=128),
                       log=said.append)
    assert not any("numba compiles" in s for s in said)


def test_numba_compile_time_is_measured_and_reported():
    numba = pytest.importorskip("numba")

    @numba.njit
    def fresh(x):                          # defined here: numba has never compiled it
        return x * 3 + 1

    with evaluation.numba_compiling() as spent:
        fresh(2)
    with evaluation.numba_compiling() as again:
        fresh(3)                           # compiled already: no compile event
    assert spent[0] > 0 and again[0] == 0
    head = {"timesteps": 256, "diff": 1.0, "ci_low": 0.5, "ci_high": 1.5, "deals": 50,
            "seconds": 30.4}
    assert "27.0 s of it numba compiling" in evaluation.eval_line(head, "greedy", 27.0)
    assert "compiling" not in evaluation.eval_line(head, "greedy", 0.0)


def test_the_warm_start_is_announced_before_it_runs(tmp_path):
    said = []
    training_run.train(tiny(tmp_path, bc_rows=64, bc_epochs=1, progress=False),
                       log=said.append)
    start = next(i for i, s in enumerate(said) if s.startswith("imitation warm start: collecting"))
    done = next(i for i, s in enumerate(said) if re.match(r"imitation: [\d,]+ positions", s))
    assert start < done


def test_cli_run_prints_what_changed_and_where_the_files_are(tmp_path, capsys):
    out = tmp_path / "run"
    assert nertz_main(["train", "--learner", "sb3", "--out", str(out), "--timesteps", "200",
                       "--num-envs", "8", "--n-steps", "16", "--batch-size", "64", "--bc-rows", "0",
                       "--max-ticks", "150", "--net-arch", "32,32", "--checkpoint-every", "0",
                       "--eval-every", "0", "--no-tensorboard", "--no-progress"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith(f"config: out={out}, timesteps=200, num_envs=8")
    assert "{" not in lines[0] and "seed=" not in lines[0]        # only what changed
    assert f"{out}/config.json" in lines[0]
    assert any(s.startswith("PPO: 256 steps, 2 rollouts of 128") for s in lines)
    assert f"run folder {out}: final.zip" in lines[-1] and (out / "final.zip").is_file()
    assert f"nertz tournament --agents ppo:{out / 'final.zip'}," in lines[-1]
    assert "--resume" in lines[-1] and not list(out.glob(".*.part"))
    # the last checkpoint is written once, not by the callback and again at the end
    assert len(list((out / "checkpoints").glob("step_*.zip"))) == 1


def test_help_says_what_a_new_user_needs(capsys):
    with pytest.raises(SystemExit):
        nertz_main(["train", "--help"])
    text = capsys.readouterr().out
    assert "['" not in text and "[128, 128]" not in text          # lists as they are typed
    assert "(default: heuristic:style=river-builder)" in text
    flat = " ".join(text.split())                                # argparse wraps lines
    assert "FIXED_ON_RESUME" not in text and "a resumed run keeps teams, max_ticks" in flat
    assert "{relative,score}" in text and "{cpu,cuda,auto}" in text
    described = text[text.index("Train a PPO agent"):text.index("options:")]
    assert max(len(line) for line in described.splitlines()) <= 100
    # the resume example names a checkpoint a 2M-step run at the defaults does write
    cfg = TrainConfig()
    rollout = cfg.n_steps * cfg.num_envs
    written = {training_run.steps_to_run(0, k * cfg.checkpoint_every, rollout)
               for k in range(1, 9)}
    (step,) = re.findall(r"--resume runs/t2/checkpoints/step_(\d+)\.zip", text)
    assert int(step) in written


def test_a_bad_choice_is_one_line(capsys):
    assert_exit = pytest.raises(SystemExit)
    with assert_exit as e:
        nertz_main(["train", "--reward", "win"])
    err = capsys.readouterr().err
    assert e.value.code == 2 and len(err.strip().splitlines()) == 1 and "relative" in err


def test_the_env_compile_note_checks_the_kernels_the_env_steps_with(tmp_path):
    from nertz_env.core.batch import vec_step_observe_batch, vec_step_observe_range
    from nertz_env.core.policies import policy_actions_range
    from nertz_env.engine import PARALLEL_MIN_TABLES
    assert training_run.env_kernels(tiny(tmp_path)) == (vec_step_observe_range,)
    big = tiny(tmp_path, num_envs=PARALLEL_MIN_TABLES, bc_rows=2 * PARALLEL_MIN_TABLES)
    assert training_run.env_kernels(big) == (vec_step_observe_batch, policy_actions_range)


@pytest.mark.parametrize("argv", [
    ["--bc-rows", "0", "--teacher", "greedy"],             # no warm start to teach
    ["--bc-rows", "0", "--no-bc-value"],
    ["--eval-every", "0", "--eval-deals", "10"],           # no evaluations to size
    ["--eval-every", "0", "--eval-against", "greedy"],
    ["--max-snapshots", "2"],                              # snapshot_every is 0 by default
    ["--eval-league-deals", "10"],                         # a one-entry league: nothing to play
    ["--opponents", "greedy,random", "--eval-league-deals", "0", "--priority-uniform", "0.5"],
])
def test_an_option_that_needs_another_is_one_line_without_it(tmp_path, capsys, monkeypatch,
                                                            argv):
    """`--block-deals` without `--ray` was silently ignored; nertz train's like cases."""
    def ran(cfg, log=print):                 # a refusal that fails must not train for hours
        raise AssertionError(f"trained instead of refusing {argv}")

    monkeypatch.setattr(training_run, "train", ran)
    out = tmp_path / "run"
    assert nertz_main(["train", "--out", str(out), *argv]) == 2
    err = capsys.readouterr().err
    flag = [a for a in argv if a.startswith("--")][-1].replace("--no-", "--")
    assert err.startswith(f"nertz: error: {flag} means something only with ") and err.count(
        "\n") == 1, err
    assert not out.exists()                                  # refused before anything ran


def parsed(argv) -> TrainConfig:
    ap = argparse.ArgumentParser()
    train_cli.add_parser(ap.add_subparsers())
    return train_cli.config_from_args(ap.parse_args(["train", *argv]))


@pytest.mark.parametrize("argv", [
    ["--teacher", "greedy", "--bc-epochs", "2"],             # bc_rows on by default
    ["--snapshot-every", "1000", "--max-snapshots", "2", "--eval-league-deals", "10",
     "--priority-temperature", "1.0"],
    ["--opponents", "greedy,random", "--priority-uniform", "0.5"],
    ["--eval-every", "0", "--eval-league-deals", "0", "--bc-rows", "0"],   # switched off: fine
])
def test_an_option_with_what_it_needs_is_taken(argv):
    cfg = parsed(argv)
    assert cfg.to_dict() != TrainConfig().to_dict()


def test_a_resumed_run_refuses_warm_start_options():
    """A resumed run does no warm start: its options are refused, not silently dropped."""
    cfg = TrainConfig(learner="sb3", resume="runs/t2/checkpoints/step_128.zip")
    for name in ("bc_epochs", "teacher", "bc_rows"):
        with pytest.raises(ValueError, match=f"^--{name.replace('_', '-')} means something "
                                             "only with .*a resumed run or one from a model does no warm start"):
            check_given(cfg, [name], train_cli._flag)
    check_given(cfg, ["eval_deals", "learning_rate"], train_cli._flag)
