"""agents/judging/head_to_head.py, agreement.py and `nertz judge h2h` / `agreement`: the head
to head is the training's paired match (agents/training/evaluation.py, what the league
scripts reported), turned round when A and B swap; the agreement of an agent with itself is
1 and of two different agents below; bad input is one line, exit 2, nothing written."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

import agents.learned
from agents.cli import main
from agents.judging.agreement import agreement
from agents.judging.head_to_head import head_to_head

MODELS = Path(agents.learned.__file__).parent / "models"
GEN, TWO = f"ppo:{MODELS / 'learned.npz'}", f"ppo:{MODELS / 'learned_2teams.npz'}"


def run(argv) -> int:
    try:
        return main(argv)
    except SystemExit as stop:
        return stop.code


def test_head_to_head_is_the_paired_match_of_the_training_evaluation():
    pytest.importorskip("stable_baselines3")     # evaluation.py imports the [train] extra
    from agents.training.evaluation import evaluate_policy_zip
    from nertz_env.config import RulesConfig
    r = head_to_head(GEN, "heuristic:style=river-builder", 6, 17)
    gold = evaluate_policy_zip(MODELS / "learned.npz", "heuristic:style=river-builder",
                               RulesConfig(num_teams=2), 6, 17)
    assert (r["diff"], r["ci_low"], r["ci_high"]) == (gold["diff"], gold["ci_low"],
                                                      gold["ci_high"])
    back = head_to_head("heuristic:style=river-builder", GEN, 6, 17)
    assert back["diff"] == pytest.approx(-r["diff"]) and r["diff"] != 0
    assert back["ci_low"] == pytest.approx(-r["ci_high"])
    assert head_to_head("random", "greedy", 4, 3) == head_to_head("random", "greedy", 4, 3)


def test_agreement_is_one_with_itself_and_below_one_with_another_agent():
    assert agreement(GEN, GEN, 2, 5, tables=8, ticks=20) == 1.0
    other = agreement(GEN, "random", 2, 5, tables=8, ticks=20)
    assert 0.0 < other < 0.8
    # the golden: train/exploiter_league.py's agreement (before the move) on these models
    assert agreement(GEN, TWO, 4, 2065, tables=16, ticks=30) == 0.98125


def test_the_commands_write_their_files(tmp_path, capsys):
    assert main(["judge", "h2h", GEN, "heuristic:style=river-builder", "--deals", "6",
                 "--seed", "17", "--quiet", "--out", str(tmp_path / "h")]) == 0
    saved = json.loads((tmp_path / "h" / "h2h.json").read_text())
    assert saved["diff"] == head_to_head(GEN, "heuristic:style=river-builder", 6, 17)["diff"]
    assert saved["command"].startswith("nertz judge h2h ppo:")
    assert "points per hand, 2 teams, 6 deals, seed 17" in capsys.readouterr().out
    assert main(["judge", "agreement", GEN, TWO, "--teams", "2,4", "--seed", "5", "--tables",
                 "8", "--ticks", "20", "--out", str(tmp_path / "a")]) == 0
    saved = json.loads((tmp_path / "a" / "agreement.json").read_text())
    assert saved["agreement"] == {"2": agreement(GEN, TWO, 2, 7, 8, 20),     # seed + teams
                                  "4": agreement(GEN, TWO, 4, 9, 8, 20)}
    assert "| 4 | " in capsys.readouterr().out


@pytest.mark.parametrize("argv, says", [
    (["h2h", "nope", "greedy"], "A 'nope'"),
    (["h2h", "greedy", "ppo:/no/such.npz"], "B"),
    (["h2h", "greedy", "greedy"], "A and B are the same spec"),
    (["h2h", "greedy", "random", "--deals", "1"], "--deals"),
    (["agreement", "greedy", "random", "--teams", "1"], "--teams '1': 1 is not an int from 2"),
    (["agreement", "greedy", "random", "--ticks", "0"], "--ticks"),
    (["agreement", "greedy", "nope"], "B 'nope'"),
])
def test_bad_input_is_one_line_exit_2_and_nothing_written(argv, says, tmp_path, capsys):
    out = tmp_path / "o"
    assert run(["judge", *argv, "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert says in err and len(err.splitlines()) == 1, err
    assert not out.exists()


def test_an_out_folder_that_cannot_be_made_is_exit_1(tmp_path, capsys):
    (tmp_path / "file").write_text("x")
    assert run(["judge", "h2h", "greedy", "random", "--deals", "2", "--quiet",
                "--out", str(tmp_path / "file" / "o")]) == 1
    assert "is a file, not a folder" in capsys.readouterr().err


def test_judge_help_teaches_every_judgement(capsys):
    assert run(["judge", "--help"]) == 0
    out = capsys.readouterr().out
    for word in ("grid", "curve", "h2h", "agreement", "nertz probe", "nertz exploit",
                 "examples:"):
        assert word in out
    for judgement in ("grid", "curve", "h2h", "agreement"):
        assert run(["judge", judgement, "--help"]) == 0
        assert "examples:" in capsys.readouterr().out


def test_a_judge_run_is_refused_a_second_time_and_replaced_with_overwrite(tmp_path, capsys):
    out = tmp_path / "a"
    argv = ["judge", "agreement", "greedy", "random", "--teams", "2", "--tables", "4",
            "--ticks", "5", "--out", str(out)]
    assert run(argv) == 0
    first = (out / "agreement.json").read_bytes()
    assert run(argv) == 2
    assert "an earlier nertz judge agreement run" in capsys.readouterr().err
    assert run(argv + ["--overwrite"]) == 0
    assert (out / "agreement.json").read_bytes() == first          # same options, same file
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "mine.txt").write_text("x")
    assert run(argv[:-1] + [str(tmp_path / "other"), "--overwrite"]) == 2
    err = capsys.readouterr().err
    assert "an earlier run of nertz tournament, experiment, probe, exploit or judge" in err
    assert (tmp_path / "other" / "mine.txt").read_text() == "x"
