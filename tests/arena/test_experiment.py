"""`nertz experiment` (agents/arena/experiment.py): pairing, seatings, outcomes, intervals,
reproducible files, and clear errors."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from agents.cli import main
from agents.arena.experiment import (ExperimentSpec, cell_plan, effect_interval, load_spec,
                               outcome_values, run_experiment, spec_from_dict)
from agents.stats.estimators import HandRecords
from agents.arena.tournament import run_tournament

ROOT = Path(__file__).resolve().parents[2]
ALWAYS = "heuristic:withhold_stream=always"
KEEP = "heuristic:withhold_stream=keep"


def spec(**kw):
    base = dict(baseline=ALWAYS, treatments={"keep": KEEP}, deals=12, seed=3)
    base.update(kw)
    return spec_from_dict(base)


def test_the_treatment_equal_to_the_baseline_has_exactly_zero_effect_on_every_deal():
    """Same spec in both roles: identical play on identical deals, so every per-deal
    difference is 0 (an unpaired or mis-seated comparison would not be)."""
    res = run_experiment(spec(treatments={"same": ALWAYS}, teams=[2, 3],
                              opponents=["baseline", "greedy", "half"], speeds=["even", "mixed"]),
                         progress=False)
    assert len(res.rows) == 2 * 3 * 2 * 3
    for r in res.rows:
        assert r["effect"] == 0 and r["ci_low"] == 0 and r["ci_high"] == 0, r
        assert r["holm"] is False


def test_a_weak_treatment_is_found_worse_in_its_own_seat():
    res = run_experiment(spec(treatments={"random": "random"}, baseline="heuristic",
                              opponents=["baseline"], teams=[2, 4], deals=20,
                              outcomes=["points", "win"]), progress=False)
    for r in res.rows:
        assert r["ci_high"] < 0 and r["holm"], r
        assert r["treatment_mean"] < r["baseline_mean"]


def test_one_seat_design_puts_the_focal_agent_at_every_position_once():
    for teams in (2, 3, 4, 6):
        plan = cell_plan(spec(treatments={"a": KEEP, "b": "greedy"},
                          opponents=["greedy+heuristic:style=river-builder"], teams=[teams]),
                     spec(teams=[teams]).cells()[0])
        K = 2
        assert len(plan.seats) == K + 1                        # every treatment + baseline
        for focal, seats in enumerate(plan.seats):
            assert len(seats) == teams == len(set(seats))
            where = [s.index(focal) for s in seats]
            assert sorted(where) == list(range(teams))           # every position once
            for s in seats:
                assert s.count(focal) == 1
                assert all(a > K for a in s if a != focal)       # the rest are opponents
        # the opponents sit in the same order relative to the focal seat in every lineup
        rel = {tuple(s[(s.index(f) + j) % teams] for j in range(teams))[1:]
               for f, seats in enumerate(plan.seats) for s in seats}
        assert len(rel) == 1


def test_half_design_at_two_teams_equals_the_tournament_pair():
    res = run_experiment(spec(opponents=["half"], outcomes=["points"], deals=30), progress=False)
    t = run_tournament([KEEP, ALWAYS], teams=2, deals=30, seed=3, format="all-play-all",
                       progress=False)
    (pair,) = t.pairs
    sign = 1 if pair["a"] == KEEP else -1
    (row,) = res.rows
    assert row["effect"] == pytest.approx(sign * pair["diff"], abs=1e-12)
    assert row["ci_high"] - row["ci_low"] == pytest.approx(pair["ci_high"] - pair["ci_low"])


def test_outcome_values_points_relative_and_win():
    rec = HandRecords(lineup=[0, 0], deal=[0, 1], rotation=[0, 0], agent=[[0, 1, 2], [2, 0, 1]],
                      score=[[6.0, 3.0, 0.0], [-2.0, 4.0, 4.0]],
                      called=np.zeros((2, 3)), win=[[1, 0, 0], [0, 0.5, 0.5]])
    assert outcome_values(rec, "points").tolist() == rec.score.tolist()
    assert outcome_values(rec, "relative").tolist() == [[4.5, -0.0, -4.5], [-6.0, 3.0, 3.0]]
    assert outcome_values(rec, "win").tolist() == rec.win.tolist()
    with pytest.raises(ValueError, match="outcome 'luck'"):
        outcome_values(rec, "luck")


def test_effect_and_relative_intervals_cover_at_95_percent():
    """Coverage by simulation: deals with a baseline mean of 10 points, an effect of -0.3
    (-3%) that grows with the deal's points; 95% intervals over 150 deals."""
    rng = np.random.default_rng(0)
    hits_abs = hits_rel = 0
    reps = 2000
    for _ in range(reps):
        base = rng.normal(10.0, 3.0, 150)
        d = -0.03 * base + rng.normal(0.0, 0.1, 150)     # mostly proportional: covariance matters
        out = effect_interval(base + d, base, base)
        hits_abs += out["ci_low"] <= -0.3 <= out["ci_high"]
        hits_rel += out["relative_ci_low"] <= -3.0 <= out["relative_ci_high"]
    assert 0.935 <= hits_abs / reps <= 0.965, hits_abs / reps
    assert 0.935 <= hits_rel / reps <= 0.965, hits_rel / reps


def test_relative_effect_needs_a_baseline_clearly_above_zero():
    rng = np.random.default_rng(1)
    base = rng.normal(0.0, 1.0, 50)
    out = effect_interval(base + 0.1, base, base)
    assert out["relative_pct"] is None
    assert out["effect"] == pytest.approx(0.1)


def test_games_mode_reports_games_won():
    res = run_experiment(spec(modes=["games"], outcomes=["win", "points"], deals=6,
                              max_game_hands=3, teams=[2]), progress=False)
    win = [r for r in res.rows if r["outcome"] == "win"][0]
    assert 0 <= win["baseline_mean"] <= 1 and 0 <= win["treatment_mean"] <= 1
    assert res.cells[0]["hands"] >= 6 * 2 * 2                      # 2 lineups x 2 seatings


def test_precision_plays_on_until_the_headline_is_narrow_enough_and_says_so():
    res = run_experiment(spec(precision=0.4, deals=8, max_deals=400, outcomes=["points"]),
                         progress=False)
    cell = res.cells[0]
    assert cell["deal_blocks"][0] == 8 and cell["deals"] == cell["deal_blocks"][-1] > 8
    assert cell["reached"] == (cell["headline_half_width"] <= 0.4)
    # the same numbers as a plain run of the final deal count
    plain = run_experiment(spec(deals=cell["deals"], outcomes=["points"]), progress=False)
    assert plain.rows[0]["effect"] == res.rows[0]["effect"]


def test_cli_files_are_identical_for_the_same_spec_and_seed(tmp_path):
    spec_file = tmp_path / "s.toml"
    spec_file.write_text(f'''name = "t"
seed = 5
deals = 10
baseline = "{ALWAYS}"
opponents = ["baseline", ["greedy", "random"], "half"]
teams = [2, 3]
speeds = ["even", "1,2,1"]
outcomes = ["points", "win"]
[treatments]
keep = "{KEEP}"
[rules.default]
[rules.river5]
river_size = 5
''')
    with pytest.raises(ValueError, match="speeds='1,2,1'"):   # 1,2,1 fits 3 seats, not 2
        load_spec(spec_file)
    spec_file.write_text(spec_file.read_text().replace('teams = [2, 3]', 'teams = [3]'))
    outs = []
    for k in range(2):
        out = tmp_path / f"run{k}"
        assert main(["experiment", str(spec_file), "--out", str(out), "--quiet"]) == 0
        outs.append(out)
    names = sorted(p.name for p in outs[0].iterdir() if p.name != ".nertz-run.json")
    assert names == ["effects.csv", "effects.md", "experiment.json", "forest.png"]
    for n in names:
        assert (outs[0] / n).read_bytes() == (outs[1] / n).read_bytes(), n
    rows = (outs[0] / "effects.csv").read_text().splitlines()
    assert len(rows) == 1 + 3 * 2 * 2 * 2                        # opponents x speeds x rules x 2
    md = (outs[0] / "effects.md").read_text().splitlines()
    assert md[0].startswith("all rows: teams 3") and md[2].startswith("| treatment | opponents")
    assert len([x for x in md if x.startswith("| keep")]) == 3 * 2 * 2 * 2
    # another seed, other deals
    assert main(["experiment", str(spec_file), "--out", str(tmp_path / "s9"), "--quiet",
                 "--seed", "9"]) == 0
    assert (tmp_path / "s9" / "effects.csv").read_bytes() != (outs[0] / "effects.csv").read_bytes()


def test_cli_flags_alone(capsys):
    assert main(["experiment", "--treatment", f"keep={KEEP}", "--baseline", ALWAYS,
                 "--teams", "2", "--deals", "6", "--quiet", "--outcomes", "points"]) == 0
    out = capsys.readouterr().out
    assert "keep" in out and "Holm" in out and "effect [95% CI]" in out


@pytest.mark.parametrize("argv, words", [
    (["experiment"], "name a spec file"),
    (["experiment", "--treatment", KEEP], "name a spec file"),
    (["experiment", "--treatment", KEEP, "--baseline", "nobody"], "unknown kind 'nobody'"),
    (["experiment", "--treatment", KEEP, "--baseline", ALWAYS, "--teams", "9"], "table sizes 2-8"),
    (["experiment", "--treatment", KEEP, "--baseline", ALWAYS, "--modes", "sets"], "modes"),
    (["experiment", "--treatment", KEEP, "--baseline", ALWAYS, "--outcomes", "luck"], "outcomes"),
    (["experiment", "--treatment", KEEP, "--baseline", ALWAYS, "--speeds", "fast"], "entry 0 ('fast') is not valid"),
    (["experiment", "--treatment", KEEP, "--baseline", ALWAYS, "--rule", "num_teams=3"],
     "num_teams"),
    (["experiment", "--treatment", KEEP, "--baseline", ALWAYS, "--max-deals", "50"],
     "precision"),
    (["experiment", "/nonexistent/spec.toml"], "cannot read"),
])
def test_cli_errors_are_one_line(argv, words, capsys):
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith("nertz: error:") and words in err and err.count("\n") == 1, err


def test_spec_errors_name_the_key(tmp_path):
    with pytest.raises(ValueError, match="unknown key 'deal'"):
        spec_from_dict({"baseline": ALWAYS, "treatments": {"k": KEEP}, "deal": 3})
    with pytest.raises(ValueError, match="'treatments' is missing"):
        spec_from_dict({"baseline": ALWAYS})
    with pytest.raises(ValueError, match="deals=1"):
        spec(deals=1)
    with pytest.raises(ValueError, match="rules.x.river_sise"):
        spec(rules={"x": {"river_sise": 5}})
    with pytest.raises(ValueError, match="opponents"):
        spec(opponents=[["half"]])
    bad = tmp_path / "bad.toml"
    bad.write_text("baseline = \n")
    with pytest.raises(ValueError, match="not valid TOML"):
        load_spec(bad)
    with pytest.raises(ValueError, match="must be an ExperimentSpec"):
        run_experiment({"baseline": ALWAYS})
    assert isinstance(spec(), ExperimentSpec)


def test_the_shipped_specs_load():
    specs = sorted((ROOT / "docs" / "experiments").rglob("*.toml"))
    assert len(specs) >= 5
    for path in specs:
        s = load_spec(path)
        assert s.cells() and s.treatments, path


def test_the_shipped_result_folders_can_be_rerun_in_place():
    """Every study's command (--out FOLDER, on its page in docs/experiments/) is accepted
    with --overwrite: each results folder is a nertz run listing exactly the files it
    holds, and the spec beside it (NAME.toml -> NAME/, or a spec inside its arms' folder)
    is run by a command on a page."""
    from agents.arena import outdir
    exp = ROOT / "docs" / "experiments"
    pages = "\n".join(p.read_text() for p in exp.glob("*.md"))
    for path in sorted(exp.rglob("*.toml")):
        folder = path.with_suffix("")
        assert outdir._check_target(folder, "--out", overwrite=True) is True, folder
        spec_path, out = path.relative_to(ROOT).as_posix(), folder.relative_to(ROOT).as_posix()
        assert f"nertz experiment {spec_path} --out {out}" in pages, spec_path


def test_help_teaches():
    out = subprocess.run([sys.executable, "-m", "agents", "experiment", "--help"],
                         capture_output=True, text=True, cwd=ROOT, check=True).stdout
    for words in ("--treatment", "--baseline", "--opponents", "half", "mixed", "Holm",
                  "examples:"):
        assert words in out


def test_a_focal_speed_mix_follows_the_focal_seat():
    """focal-fast: the focal team at period 1, every other seat at 2, the focal seat at team
    position 0 in its only seating; focal-slow the reverse; refused with opponents 'half'."""
    s = spec(treatments={"a": KEEP}, opponents=["greedy"], teams=[3],
             speeds=["focal-fast", "focal-slow"], rules={"pairs": {"team_sizes": [2, 1, 1]}})
    fast, slow = s.cells()
    assert s.config(fast).speeds == (1, 1, 2, 2) and s.config(slow).speeds == (2, 2, 1, 1)
    for cell in (fast, slow):
        plan = cell_plan(s, cell)
        assert [seats for seats in plan.seats] == [[(0, 2, 2)], [(1, 2, 2)]]
        assert s.tables_per_deal(cell) == 2
    with pytest.raises(ValueError, match="speeds.*'half' has no single focal seat"):
        spec(opponents=["half"], speeds=["focal:3/4"]).check()
    # any two periods: focal:P/Q; focal:1/2 is focal-fast (one cell, not two)
    s = spec(opponents=["greedy"], teams=[4], speeds=["focal:3/4", "focal:4/3"])
    assert [s.config(c).speeds for c in s.cells()] == [(3, 4, 4, 4), (4, 3, 3, 3)]
    with pytest.raises(ValueError, match="entries 0 and 1 are the same \\(focal-fast\\)"):
        spec(speeds=["focal-fast", "focal:1/2"]).check()
    for bad in ("focal:2/2", "focal:0/1", "focal:1", "focal:a/b", "focal:1/101"):
        with pytest.raises(ValueError, match="focal:P/Q"):
            spec(speeds=[bad]).check()


def test_speed_is_worth_points_and_each_arm_has_its_mean_interval():
    """A seat at period 1 among period-2 copies of the same bot scores more than the table
    (its relative points), one at period 2 among period-1 copies less; every row carries each
    arm's own 95% half-width over deals, and they cover the arm's mean by simulation."""
    res = run_experiment(spec(baseline="heuristic:style=river-builder", treatments={"g": "greedy"},
                              opponents=["baseline"], teams=[2], deals=150,
                              speeds=["focal-fast", "even", "focal-slow"],
                              outcomes=["relative"]), progress=False)
    rel = {r["speeds"]: r for r in res.rows}
    fast, even, slow = rel["focal-fast"], rel["even"], rel["focal-slow"]
    for r in (fast, slow):
        assert r["baseline_half_width"] > 0 and r["treatment_half_width"] > 0
    assert fast["baseline_mean"] - fast["baseline_half_width"] > 2
    assert slow["baseline_mean"] + slow["baseline_half_width"] < -2
    assert even["baseline_mean"] == 0 == even["baseline_half_width"]   # the same bot all round
    assert "+-" in res.table()
    rng = np.random.default_rng(1)
    hits = 0
    for _ in range(2000):
        base = rng.normal(4.0, 3.0, 80)
        out = effect_interval(base + rng.normal(0, 1, 80), base, base + 10)
        hits += abs(out["baseline_mean"] - 4.0) <= out["baseline_half_width"]
    assert 0.935 <= hits / 2000 <= 0.965
