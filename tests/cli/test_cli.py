"""The `nertz` command: every subcommand runs, --help teaches, bad options are clear errors."""
from __future__ import annotations

import json

import pytest

from agents.cli import main


def unwrapped(out: str) -> list:
    """The printed lines with the CLI's wrapped continuations (indented) joined back."""
    lines = []
    for ln in out.splitlines():
        if ln.startswith("  ") and lines and not lines[-1].startswith(("#", "-")):
            lines[-1] += " " + ln.strip()
        else:
            lines.append(ln)
    return lines


def test_tournament_writes_the_same_files_for_the_same_seed(tmp_path, capsys):
    argv = ["tournament", "--agents", "random,greedy,heuristic:style=cautious,flip=20",
            "--deals", "4", "--teams", "2", "--seed", "7", "--quiet"]
    assert main(argv + ["--out", str(tmp_path / "a")]) == 0
    out = capsys.readouterr().out
    assert "Leaderboard" in out and "heuristic:style=cautious,flip=20" in out
    assert main(argv + ["--out", str(tmp_path / "b")]) == 0
    for name in ("leaderboard.csv", "pairs.csv", "results.json", "hands.csv", "leaderboard.png"):
        assert (tmp_path / "a" / name).read_bytes() == (tmp_path / "b" / name).read_bytes(), name
    res = json.loads((tmp_path / "a" / "results.json").read_text())
    assert res["hands_played"] == 3 * 4 * 2 and res["seed"] == 7
    assert sorted(r["agent"] for r in res["leaderboard"]) == [
        "greedy", "heuristic:style=cautious,flip=20", "random"]
    assert main(argv[:-3] + ["--seed", "8", "--quiet", "--out", str(tmp_path / "c")]) == 0
    assert (tmp_path / "c" / "hands.csv").read_bytes() != (tmp_path / "a" / "hands.csv").read_bytes()


def test_tournament_rule_variants_reach_the_config(tmp_path):
    assert main(["tournament", "--agents", "greedy,heuristic", "--teams", "2", "--deals", "3",
                 "--speeds", "1,2", "--rule", "river_size=5", "--rule", "stacking=false",
                 "--quiet", "--no-plot", "--out", str(tmp_path)]) == 0
    cfg = json.loads((tmp_path / "results.json").read_text())["config"]
    assert cfg["river_size"] == 5 and cfg["stacking"] is False and list(cfg["speeds"]) == [1, 2]
    assert not (tmp_path / "leaderboard.png").exists()


def test_deals_sets_the_deals_and_hands_is_gone(tmp_path, capsys):
    """--deals N plays N deals per lineup; --hands, its removed old name, is refused."""
    base = ["tournament", "--agents", "greedy,heuristic", "--teams", "3", "--seed", "2",
            "--quiet", "--no-plot"]
    assert main(base + ["--deals", "2", "--out", str(tmp_path / "new")]) == 0
    out, err = capsys.readouterr()
    assert "x 2 deals x 6 seatings = 12 hands" in out and err == ""
    res = json.loads((tmp_path / "new" / "results.json").read_text())
    assert res["deals_per_lineup"] == 2 and res["hands_played"] == 12
    with pytest.raises(SystemExit) as exc:
        main(base + ["--hands", "2"])
    assert exc.value.code == 2
    assert "unrecognized arguments: --hands 2" in capsys.readouterr().err


def test_precision_plays_blocks_and_names_the_unmet_pairs(tmp_path, capsys):
    """--precision H --max-deals N: one printed line naming the pairs that did not reach H,
    results.json says the same, and the hands are those of --deals N."""
    base = ["tournament", "--agents", "random,greedy,heuristic", "--teams", "2",
            "--max-ticks", "200", "--seed", "5", "--quiet", "--no-plot"]
    assert main(base + ["--deals", "3", "--precision", "0.01", "--max-deals", "10",
                        "--out", str(tmp_path / "p")]) == 0
    lines = [ln for ln in unwrapped(capsys.readouterr().out) if ln.startswith("precision:")]
    assert len(lines) == 1 and "3 of 3 paired differences not within +-0.01" in lines[0]
    assert "at the cap of 10 deals" in lines[0] and "greedy - random" in lines[0]
    info = json.loads((tmp_path / "p" / "results.json").read_text())["precision"]
    assert info["target_half_width"] == 0.01 and info["deals"] == 10
    assert info["reached"] is False and len(info["unmet"]) == 3
    assert main(base + ["--deals", "10", "--out", str(tmp_path / "plain")]) == 0
    assert "precision:" not in capsys.readouterr().out
    for name in ("hands.csv", "pairs.csv", "leaderboard.csv"):
        assert (tmp_path / "p" / name).read_bytes() == (tmp_path / "plain" / name).read_bytes()
    assert main(base + ["--deals", "3", "--precision", "1000", "--out", str(tmp_path / "q")]) == 0
    (line,) = [ln for ln in unwrapped(capsys.readouterr().out) if ln.startswith("precision:")]
    assert "every paired difference within +-1000" in line and "after 3 deals" in line


@pytest.mark.parametrize("argv, words", [
    (["tournament", "--agents", "chess"], "unknown kind"),
    (["tournament", "--rule", "colour=red"], "RulesConfig field"),
    (["tournament", "--teams", "9"], "num_teams"),
    (["tournament", "--agents", "random,greedy", "--deals", "1"], "--deals"),
])
def test_bad_options_are_clear_errors(argv, words, capsys):
    try:
        rc = main(argv + ["--quiet"])
    except SystemExit as exc:                  # argparse's own checks exit
        rc = exc.code
    assert rc == 2
    assert words in capsys.readouterr().err


@pytest.mark.parametrize("cmd", [[], ["play"], ["game"], ["tournament"]])
def test_help_has_examples(cmd, capsys):
    with pytest.raises(SystemExit) as exc:
        main(cmd + ["--help"])
    assert exc.value.code == 0
    assert "example" in capsys.readouterr().out


def test_play_and_game_run(capsys):
    assert main(["play", "--teams", "2", "--every", "1000", "--seed", "1"]) == 0
    assert "Scores (R29)" in capsys.readouterr().out
    assert main(["game", "--teams", "2", "--games", "2", "--target", "20", "--json"]) == 0
    games = json.loads(capsys.readouterr().out)
    assert len(games) == 2


def test_game_seats_core_bots(capsys):
    """--agents: one spec per seat reaches the games (the heuristic's seat wins them); the
    default is random legal play, and saying random changes nothing."""
    base = ["game", "--teams", "2", "--games", "6", "--target", "100", "--seed", "4"]
    assert main(base + ["--agents", "heuristic:style=river-builder,random", "--json"]) == 0
    assert [g["winner"] for g in json.loads(capsys.readouterr().out)] == [0] * 6
    assert main(base + ["--agents", "random,heuristic"]) == 0
    last = capsys.readouterr().out.splitlines()[-1]
    assert last.startswith("6 game(s) of play by seat 0 random, seat 1 heuristic in ")
    assert main(base + ["--json"]) == 0
    default = capsys.readouterr().out
    assert main(base + ["--agents", "random", "--json"]) == 0
    assert capsys.readouterr().out == default
    assert main(base) == 0
    assert "6 game(s) of random legal play in " in capsys.readouterr().out


def test_tournament_help_explains_precision(capsys):
    with pytest.raises(SystemExit):
        main(["tournament", "--help"])
    out = capsys.readouterr().out
    assert "--precision H" in out and "--max-deals N" in out and "--precision 0.5" in out
