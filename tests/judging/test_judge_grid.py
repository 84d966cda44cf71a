"""agents/judging/grid.py and `nertz judge grid`: the grid's rows are the arena's own effects
(an experiment of the same cell, run_experiment, gives the same numbers), the cut shares
count the hands cut at max_ticks, the held-out formats are not trained on, and the command
refuses bad input in one line before anything is played or written."""
from __future__ import annotations

import json

import pytest

from agents.arena.progress import NoBar
from agents.cli import main
from agents.judging import grid

TINY = {"learned": "learned", "rb2": "heuristic"}


def run(argv) -> int:
    """main(argv)'s exit status, argparse's own refusals (SystemExit) included."""
    try:
        return main(argv)
    except SystemExit as stop:
        return stop.code


def test_the_grids_held_out_formats_are_not_trained_on():
    """Every HELD_OUT cell is a table the 'rulebook' training preset does not hold (so "held
    out" means it), and every GRID cell is one it holds."""
    from agents.training.formats import resolve

    def fmt(teams, speeds, rules):
        seats = teams * (rules.get("team_sizes", [1])[0] if "team_sizes" in rules else 1)
        f = {"num_teams": teams, **rules}
        if speeds == "mixed":
            f["speeds"] = [1 + s % 2 for s in range(seats)]
        elif speeds != "even":
            f["speeds"] = [int(x) for x in speeds.split(",")]
        return f

    trained = [{k: v for k, v in f.items() if k != "seat"} for f in resolve("rulebook")]
    for name, teams, speeds, rules in grid.HELD_OUT:
        assert fmt(teams, speeds, rules) not in trained, name
    for name, teams, speeds, rules in grid.GRID:
        assert fmt(teams, speeds, rules) in trained, name


@pytest.mark.parametrize("teams, rules", [(2, {"river_size": 5}), (3, {"stacking": False})])
def test_a_cells_rows_equal_the_arenas_experiment_of_that_cell(teams, rules):
    """The golden: run_experiment (the arena's public API) on the same one-cell spec gives
    every effect, interval and hand count the grid reports, agent by agent, in order."""
    from agents.arena.experiment import run_experiment
    rows = grid.play_cell(TINY, teams, "even", rules, 3, 11, NoBar())
    gold = run_experiment(grid.cell_spec(TINY, teams, "even", rules, 3, 11), progress=False)
    assert [r["treatment"] for r in rows] == ["learned", "rb2"]
    for mine, theirs in zip(rows, gold.rows):
        for key in ("treatment", "baseline", "effect", "ci_low", "ci_high", "hands",
                    "treatment_mean", "baseline_mean", "deals"):
            assert mine[key] == theirs[key], key
    assert rows[0]["effect"] != rows[1]["effect"]


def test_the_cut_shares_count_the_hands_cut_at_max_ticks():
    """max_ticks 5 cuts every hand; the default cuts none
    of three deals."""
    cut = grid.play_cell(TINY, 2, "even", {"max_ticks": 5}, 3, 5, NoBar())
    whole = grid.play_cell(TINY, 2, "even", {}, 3, 5, NoBar())
    for r in cut:
        assert (r["cut_share"], r["baseline_cut_share"], r["cut_diff"], r["max_ticks"]) == (
            1.0, 1.0, 0.0, 5)
    for r in whole:
        assert (r["cut_share"], r["baseline_cut_share"]) == (0.0, 0.0)


def test_the_command_writes_the_rows_table_and_plot(tmp_path, capsys):
    out = tmp_path / "g"
    argv = ["judge", "grid", "--agents", "learned=learned;rb2=heuristic", "--deals", "3",
            "--seed", "11", "--cells", "River 5, 2 teams", "--quiet"]
    assert main(argv + ["--out", str(out)]) == 0
    text = capsys.readouterr().out
    saved = json.loads((out / "grid.json").read_text())
    gold = grid.play_cell(TINY, 2, "even", {"river_size": 5}, 3, 11, NoBar())
    assert [r["effect"] for r in saved["rows"]] == [r["effect"] for r in gold]
    assert all("seconds" not in r for r in saved["rows"])          # same options, same files
    assert saved["command"] == ("nertz judge grid --agents 'learned=learned;rb2=heuristic' "
                                "--deals 3 --seed 11 --cells 'River 5, 2 teams'")
    table = (out / "grid.md").read_text()
    assert table.splitlines()[2] in text and "| River 5, 2 teams | rb2 |" in table
    assert (out / "grid.png").stat().st_size > 1000
    assert main(argv + ["--out", str(tmp_path / "g2"), "--no-plot"]) == 0
    assert (tmp_path / "g2" / "grid.json").read_bytes() == (out / "grid.json").read_bytes()
    assert not (tmp_path / "g2" / "grid.png").exists()
    assert main(["judge", "grid", "--replot", str(out / "grid.json"), "--out",
                 str(tmp_path / "g3")]) == 0
    assert (tmp_path / "g3" / "grid.md").read_bytes() == table.encode()


@pytest.mark.parametrize("argv, says", [
    (["--cells", "nowhere"], "--cells 'nowhere' matches no cell name"),
    (["--agents", "x=nope"], "--agents"),
    (["--agents", " ; "], "names no agent"),
    (["--deals", "1"], "--deals"),
    (["--replot", "x.json"], "--replot only means something with --out"),
])
def test_bad_input_is_one_line_exit_2_and_nothing_written(argv, says, tmp_path, capsys,
                                                          monkeypatch):
    def no_work(*a, **k):
        raise AssertionError("played before refusing")
    monkeypatch.setattr(grid, "play_cell", no_work)
    out = tmp_path / "o"
    extra = [] if "--replot" in argv else ["--out", str(out)]
    assert run(["judge", "grid", *argv, *extra]) == 2
    err = capsys.readouterr().err.strip()
    assert says in err and len(err.splitlines()) == 1, err
    assert not out.exists() and not (tmp_path / "o.partial").exists()


def test_a_replot_file_that_is_no_grid_is_refused(tmp_path, capsys):
    bad = tmp_path / "bad.json"
    bad.write_text('{"rows": 3}')
    assert main(["judge", "grid", "--replot", str(bad), "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip()
    assert "is not a grid's results" in err and len(err.splitlines()) == 1
    assert not (tmp_path / "o").exists()
    assert main(["judge", "grid", "--replot", str(tmp_path / "none.json"), "--out",
                 str(tmp_path / "o")]) == 2      # a path that names no file: bad input (README)
