"""agents/judging/curve.py and `nertz judge curve`: each checkpoint is paired with the one
nearest a quarter of its steps, the difference is oriented N minus N/4, and bad input is one
line, exit 2, before any match."""
from __future__ import annotations

import json
from types import SimpleNamespace

import pytest

from agents.cli import main
from agents.judging import curve


def run(argv) -> int:
    try:
        return main(argv)
    except SystemExit as stop:
        return stop.code


@pytest.fixture
def run_dir(tmp_path):
    """Checkpoints at 1M, 2M, 4M and final.npz at 8M (empty files: the match is faked)."""
    ck = tmp_path / "run" / "checkpoints"
    ck.mkdir(parents=True)
    for s in (1_000_000, 2_000_000, 4_000_000):
        (ck / f"step_{s}.npz").write_bytes(b"")
    (tmp_path / "run" / "final.npz").write_bytes(b"")
    (tmp_path / "run" / "final.json").write_text(
        json.dumps({"provenance": {"num_timesteps": 8_000_000}}))
    return tmp_path / "run"


@pytest.fixture
def played(monkeypatch):
    """run_tournament faked: the pair listed old-first, old ahead by 1.5."""
    calls = []

    def fake(agents, **kw):
        new, old = agents[:2]
        calls.append((new, old, kw["teams"], len(agents)))
        return SimpleNamespace(elapsed_s=1.0, pairs=[
            {"a": old, "b": new, "diff": -1.5, "ci_low": -2.0, "ci_high": -1.0, "units": 7}])
    monkeypatch.setattr(curve, "run_tournament", fake)
    return calls


def test_each_step_meets_its_quarter_and_the_difference_is_n_minus_quarter(
        run_dir, played, tmp_path, capsys):
    out = tmp_path / "c"
    assert main(["judge", "curve", "--run", str(run_dir), "--teams", "2,4", "--deals", "7",
                 "--quiet", "--out", str(out)]) == 0
    rows = json.loads((out / "curve.json").read_text())["rows"]
    assert [(r["teams"], r["step"], r["quarter_step"]) for r in rows] == [
        (2, 4_000_000, 1_000_000), (2, 8_000_000, 2_000_000),
        (4, 4_000_000, 1_000_000), (4, 8_000_000, 2_000_000)]
    assert all((r["diff"], r["ci_low"], r["ci_high"]) == (1.5, 1.0, 2.0) for r in rows)
    assert all("seconds" not in r for r in rows)
    assert played[1][0].endswith("final.npz") and played[2][3] == 3      # river-builder joins
    text = capsys.readouterr().out
    assert "| 2 | 8,000,000 | 2,000,000 | +1.50 [+1.00, +2.00] | 7 |" in text
    assert (out / "curve.md").read_text().splitlines()[3] == \
        "| 2 | 8,000,000 | 2,000,000 | +1.50 [+1.00, +2.00] | 7 |"
    played.clear()                                  # --at: only the N named
    assert main(["judge", "curve", "--run", str(run_dir), "--at", "8000000", "--quiet"]) == 0
    assert [(p[0].endswith("final.npz"), p[1].endswith("step_2000000.npz")) for p in played] == [
        (True, True)]


def test_the_rows_are_the_tournaments_paired_difference(tmp_path):
    """Not faked: two real checkpoints (the shipped 2-team model and the generalist) at 2
    teams; the row is run_tournament's pair, turned to N minus N/4."""
    import shutil

    from agents.arena.tournament import run_tournament
    import agents.learned
    models = __import__("pathlib").Path(agents.learned.__file__).parent / "models"
    ck = tmp_path / "run" / "checkpoints"
    ck.mkdir(parents=True)
    for step, name in ((1_000_000, "learned_2teams"), (4_000_000, "learned")):
        for suffix in (".npz", ".json"):
            shutil.copy(models / f"{name}{suffix}", ck / f"step_{step}{suffix}")
    (row,) = curve.run_curve(tmp_path / "run", [2], 4, 3)
    new, old = f"ppo:{ck / 'step_4000000.npz'}", f"ppo:{ck / 'step_1000000.npz'}"
    (p,) = run_tournament([new, old], teams=2, deals=4, seed=3, progress=False).pairs
    assert (row["step"], row["quarter_step"], row["deals"]) == (4_000_000, 1_000_000, 4)
    sign = 1 if p["a"] == new else -1
    assert row["diff"] == sign * p["diff"]
    assert (row["ci_low"], row["ci_high"]) == tuple(sorted((sign * p["ci_low"],
                                                            sign * p["ci_high"])))


@pytest.mark.parametrize("argv, says", [
    (["--at", "3000000"], "--at [3000000]: not a checkpoint's step"),
    (["--at", "x"], "--at 'x': 'x' is not a step count"),
    (["--teams", "2,9"], "--teams '2,9': 9 is not an int from 2 to 8"),
    (["--min-step", "9000000"], "no checkpoint pairs"),
    (["--deals", "1"], "--deals"),
])
def test_bad_input_is_one_line_exit_2_before_any_match(argv, says, run_dir, played, tmp_path,
                                                       capsys):
    out = tmp_path / "o"
    assert run(["judge", "curve", "--run", str(run_dir), *argv, "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert says in err and len(err.splitlines()) == 1, err
    assert not played and not out.exists()


def test_a_folder_without_checkpoints_is_refused(tmp_path, capsys):
    assert run(["judge", "curve", "--run", str(tmp_path)]) == 2
    assert "holds no checkpoints/step_N.npz nor final.npz" in capsys.readouterr().err


def test_a_final_json_without_a_step_count_is_refused(run_dir, played, capsys):
    (run_dir / "final.json").write_text(json.dumps({"provenance": {"num_timesteps": "8M"}}))
    assert run(["judge", "curve", "--run", str(run_dir)]) == 2
    assert "num_timesteps '8M' is not a step count" in capsys.readouterr().err
    assert not played
