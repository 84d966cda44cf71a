"""Hostile inputs and mistakes of issue #40 (second round), each a one-line refusal in the
user's words before any work: a deeply nested experiment spec, rules errors naming the option
(not RulesConfig's field), probe's --teams default as its help says, spec-file opponents split
on '+' as the CLI's are, --replay-out checked before the page is served, and hints that name
only what the command has, with echoed values kept short."""
from __future__ import annotations

import os
import re
from pathlib import Path

import pytest

import agents.arena.experiment as experiment_mod
import agents.human.server as server_mod
from agents.arena.experiment import load_spec, run_experiment
from agents.arena.experiment_spec import opponents_key, spec_from_dict, toml_depth
from agents.cli import main
from agents.constraints import CONSTRAINTS
from agents.specs import AGENT_KINDS, split_lineup

REPO = Path(__file__).resolve().parents[2]
MODEL = REPO / "agents" / "learned" / "models" / "learned.npz"


class Worked(AssertionError):
    """Raised by a stand-in for the work: the refusal came too late (or the checks passed)."""


def _no_work(*args, **kwargs):
    raise Worked("the work started")


def run(argv) -> int:
    try:
        return main(argv)
    except SystemExit as stop:
        return stop.code


def one_line(capsys) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("nertz: error: "), err
    return err


def option_words(err: str) -> str:
    """err without the field an option sets ('--teams 9 (the rules field num_teams, ...)')."""
    return re.sub(r" \(the rules field \w+, docs/rules\.md\)", "", err)


# ------------------------------------------------------------------ 1. nested too deep

def test_a_deeply_nested_spec_is_one_line_exit_2(tmp_path, capsys):
    deep = tmp_path / "deep.toml"
    deep.write_text("a = " + "[" * 100_000 + "]" * 100_000 + "\n")
    assert run(["experiment", str(deep), "--deals", "2"]) == 2
    err = one_line(capsys)
    assert "nested too deep" in err and "deep.toml" in err and "64" in err, err
    just = tmp_path / "65.toml"                     # one level past the limit is refused too
    just.write_text("a = " + "[" * 65 + "]" * 65 + "\n")
    with pytest.raises(ValueError, match="nested too deep"):
        load_spec(just)


def test_brackets_in_strings_and_comments_do_not_count():
    assert toml_depth('a = [[1], [2]]\ny = {b = [{c = 1}]}\n') == 3
    text = ('name = "' + "[" * 90 + '"\n# ' + "[" * 500 + "\n"
            + "x = '" + "{" * 90 + "'\n" + 'z = """\n' + "[" * 90 + '\\"""\n"""\n'
            + "w = '''" + "[" * 90 + "'''\n")
    assert toml_depth(text) == 0


def test_a_spec_with_brackets_in_its_strings_still_loads(tmp_path):
    ok = tmp_path / "ok.toml"
    ok.write_text('# ' + "[" * 200 + '\nname = "' + "[" * 80 + '"\nbaseline = "greedy"\n'
                  '[treatments]\nh = "heuristic"\n')
    assert load_spec(ok).name == "[" * 80


# ------------------------------------------------------------------ 2. options, not fields

@pytest.mark.parametrize("argv, says", [
    (["probe", "greedy", "--teams", "9"], "--teams 9: an int from 2 to 8"),
    (["tournament", "--rule", "num_teams=9"], "--rule num_teams=9: an int from 2 to 8"),
    (["play", "--teams", "9"], "--teams 9: an int from 2 to 8"),
    (["tournament", "--river", "7"], "--river 7: 4 or 5 River columns"),
    (["tournament", "--max-ticks", "0"], "--max-ticks 0: an int from 1 to"),
    (["game", "--target", "-5"], "--target -5: an int from 1 to"),
    (["tournament", "--teams", "2", "--team-sizes", "1,1,1"], "--team-sizes 1,1,1: one "
     "entry per team (2 entries)"),
    (["tournament", "--rule", "nertz_bonus=-1"], "--rule nertz_bonus=-1: an int from 0"),
])
def test_rules_errors_name_the_option(argv, says, capsys, monkeypatch):
    monkeypatch.setattr("agents.judging.probe.probe_counts", _no_work)
    assert run(argv) == 2
    err = one_line(capsys)
    assert says in option_words(err) and "RulesConfig" not in err, err


@pytest.mark.parametrize("argv, says", [
    (["tournament", "--speeds", "0,1"], "--speeds 0,1: one period per seat, 4 ints from 1 "
     "to 100"),
    (["play", "--teams", "2", "--speeds", "1,2,3"], "--speeds 1,2,3: one period per seat, 2"),
    (["tournament", "--rule", "speeds=0,1"], "--rule speeds=0,1: one period per seat"),
])
def test_speeds_errors_say_what_is_allowed_without_python_none(argv, says, capsys):
    assert run(argv) == 2
    err = one_line(capsys)
    assert says in option_words(err) and "None" not in err and "RulesConfig" not in err, err


# ------------------------------------------------------------------ 3. probe's --teams

def test_probe_help_states_the_real_teams_default(capsys, monkeypatch):
    assert run(["probe", "--help"]) == 0
    out = capsys.readouterr().out
    line = out[out.index("  --teams"):].split("\n")[0]
    assert "(default 2)" in line, line
    from agents.cli import build_parser
    assert build_parser().parse_args(["probe", "greedy"]).teams == 2
    assert build_parser().parse_args(["tournament"]).teams == 4
    monkeypatch.setattr("agents.judging.probe.probe_counts", _no_work)
    assert run(["probe", "greedy", "--team-sizes", "1,2,1,1"]) == 2
    assert "(2 entries)" in one_line(capsys)


# ------------------------------------------------------------------ 4. '+' in spec files

def test_kind_names_never_collide_with_constraint_names():
    assert not set(AGENT_KINDS) & set(CONSTRAINTS)


def test_split_lineup_starts_a_spec_at_a_kind_even_after_constraints():
    spec = "ppo:M.npz,constraint=useful-shifts+never-withhold"
    assert split_lineup(spec) == [spec]
    assert split_lineup(spec + "+greedy") == [spec, "greedy"]
    assert split_lineup(f"greedy+{spec}+heuristic:style=cautious") == [
        "greedy", spec, "heuristic:style=cautious"]


def _checked(tmp_path, monkeypatch, opponents: str):
    """run_experiment of a spec file with that opponents entry, stopped where play starts."""
    path = tmp_path / "s.toml"
    path.write_text(f'baseline = "greedy"\nteams = [3]\nopponents = [{opponents!r}]\n'
                    '[treatments]\nh = "heuristic"\n'.replace("'", '"'))
    monkeypatch.setattr(experiment_mod, "_play_cell", _no_work)
    with pytest.raises(Worked):
        run_experiment(load_spec(path), progress=False)


def test_spec_file_opponents_split_on_plus_as_the_cli_does(tmp_path, monkeypatch):
    _checked(tmp_path, monkeypatch, "greedy+heuristic")
    assert opponents_key("greedy + heuristic") == opponents_key(["greedy", "heuristic"])


def test_spec_file_opponents_split_after_a_constraint_list(tmp_path, monkeypatch):
    _checked(tmp_path, monkeypatch,
             f"ppo:{MODEL},constraint=useful-shifts+never-withhold+greedy")


def test_baseline_inside_a_plus_entry_is_refused():
    with pytest.raises(ValueError, match="opponents"):
        spec_from_dict({"baseline": "greedy", "treatments": {"h": "heuristic"},
                        "opponents": ["baseline+greedy"]})


# ------------------------------------------------------------------ 5. --replay-out

def test_replay_out_is_checked_before_the_page(tmp_path, capsys, monkeypatch):
    monkeypatch.setattr(server_mod, "run_web", _no_work)
    monkeypatch.setattr("webbrowser.open", _no_work)
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    existing = tmp_path / "old.nertz.json.gz"
    existing.write_bytes(b"keep me")
    link = tmp_path / "link.nertz.json.gz"
    link.symlink_to(tmp_path / "nowhere")
    cases = [(fifo, "already exists"), (tmp_path / "missing" / "r.nertz.json.gz",
                                        "does not exist"),
             (existing, "already exists"), (link, "already exists"),
             (tmp_path, "is a folder")]
    for path, says in cases:
        assert run(["play", "--human", "--no-browser", "--teams", "2", "--against", "greedy",
                    "--replay-out", str(path)]) == 2
        err = one_line(capsys)
        assert "--replay-out" in err and says in err, err
    assert existing.read_bytes() == b"keep me" and not (tmp_path / "missing").exists()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["fifo", "link.nertz.json.gz",
                                                          "old.nertz.json.gz"]
    good = tmp_path / "new.nertz.json.gz"           # a new file in an existing folder: served
    with pytest.raises(Worked):
        run(["play", "--human", "--no-browser", "--teams", "2", "--against", "greedy",
             "--replay-out", str(good)])


def test_the_default_replay_folder_is_still_made(tmp_path, monkeypatch):
    from agents.human.session import PlaySession
    from nertz_env.config import RulesConfig
    monkeypatch.chdir(tmp_path)
    sess = PlaySession(RulesConfig(max_ticks=3), against="greedy")
    assert not (tmp_path / "runs").exists()         # made only when the replay is written
    while not sess.table.hand_over:
        sess.tick()
    assert (tmp_path / "runs" / "play").is_dir() and sess.replay_path.is_file()


# ------------------------------------------------------------------ 6. hints

def test_overwrite_hint_for_another_commands_run(tmp_path, capsys):
    train = tmp_path / "t"
    train.mkdir()
    (train / "config.json").write_text("{}")
    (train / "final.npz").write_bytes(b"x")
    base = ["tournament", "--agents", "greedy,random", "--teams", "2", "--deals", "2",
            "--quiet", "--out", str(train)]
    for more in ([], ["--overwrite"]):
        assert run(base + more) == 2
        err = one_line(capsys)
        assert "another command's run" in err and "nertz train" in err, err
        assert "give --overwrite" not in err and "does not look like" not in err, err
    assert sorted(p.name for p in train.iterdir()) == ["config.json", "final.npz"]


def test_exploit_memory_hint_names_only_its_options(capsys, monkeypatch):
    pytest.importorskip("torch")
    pytest.importorskip("stable_baselines3")
    monkeypatch.setattr("agents.judging.exploitability.train", _no_work)
    assert run(["exploit", "greedy", "--teams", "8", "--deals", "1000000", "--quiet"]) == 2
    err = one_line(capsys)
    assert "use fewer deals or teams" in err and "agents" not in err.split("use fewer")[1], err
    assert "max game hands" not in err


def test_a_spec_with_thousands_of_treatments_is_a_short_line(tmp_path, capsys):
    many = tmp_path / "many.toml"
    many.write_text('baseline = "greedy"\n[treatments]\n'
                    + "".join(f'h{i} = "heuristic"\n' for i in range(5000)))
    assert run(["experiment", str(many), "--deals", "2"]) == 2
    err = one_line(capsys)
    assert len(err) < 400 and "5000 entries" in err and "1 to 64 treatments" in err, err
    huge = tmp_path / "seed.toml"
    huge.write_text('baseline = "greedy"\nseed = 1' + "0" * 400 + '\n[treatments]\nh = "g"\n')
    with pytest.raises(ValueError) as got:
        load_spec(huge)
    assert len(str(got.value)) < 300 and "seed" in str(got.value)
