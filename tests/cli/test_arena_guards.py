"""Issue #40, the arena and the match commands: a pair at a solo team refused before any play,
a '+' inside an agent spec kept there, an honest precision run (its line, its bar), the Gym
env's opponents read like the vector env's, write failures as I/O (exit 1, naming OUT), a
stalling agent said on screen, leaderboard names on one line."""
from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import numpy as np
import pytest

from agents.arena import experiment as experiment_mod
from agents.arena import play as play_mod
from agents.arena import tournament as tournament_mod
from agents.arena.experiment import run_experiment, spec_from_dict
from agents.cli import main

DOC_CONSTRAINED = "ppo:docs/experiments/withholding_learned/free.npz,constraint=useful-shifts+never-withhold"
ROOT = Path(__file__).resolve().parents[2]


def run_cli(argv, capsys):
    rc = main(argv)
    out, err = capsys.readouterr()
    return rc, out, err


def one_line(rc, err, status=2):
    lines = err.splitlines()
    assert rc == status and len(lines) == 1 and lines[0].startswith("nertz: error: "), err
    assert "Traceback" not in err
    return lines[0]


# ---------------------------------------------------------------- 1. a pair at a solo team
def _no_play(monkeypatch):
    def refuse(*a, **k):
        raise AssertionError("played before the refusal")
    monkeypatch.setattr(tournament_mod, "play_deals", refuse)
    monkeypatch.setattr(experiment_mod, "play_deals", refuse)


def test_a_pair_at_the_default_solo_table_is_one_line_before_any_play(monkeypatch, capsys):
    _no_play(monkeypatch)
    rc, _, err = run_cli(["tournament", "--quiet", "--agents", "pair:greedy&heuristic,greedy",
                          "--teams", "2", "--deals", "2"], capsys)
    line = one_line(rc, err)
    assert "'pair:greedy&heuristic' is a pair and sits at a solo team (team" in line
    assert "team_sizes=[1, 1]" in line
    rc, _, err = run_cli(["experiment", "--quiet", "--treatment", "pair:greedy&heuristic",
                          "--baseline", "greedy", "--deals", "2"], capsys)
    line = one_line(rc, err)
    assert "'pair:greedy&heuristic' is a pair" in line and "team_sizes=[1, 1]" in line


def test_a_pair_at_two_player_teams_still_plays(capsys):
    rc, out, err = run_cli(["tournament", "--quiet", "--agents", "pair:greedy&heuristic,greedy",
                            "--teams", "2", "--team-sizes", "2,2", "--deals", "2"], capsys)
    assert rc == 0, err


def test_a_pair_against_the_person_at_a_solo_seat_is_refused_before_serving():
    from agents.human.session import PlaySession
    from nertz_env.config import RulesConfig
    with pytest.raises(ValueError, match=r"'pair:greedy&heuristic' is a pair and sits at a "
                                         r"solo team \(team 1, team_sizes=\[1, 1\]\)"):
        PlaySession(RulesConfig(num_teams=2), against="pair:greedy&heuristic")
    PlaySession(RulesConfig(num_teams=2, team_sizes=(1, 2)), against="pair:greedy&heuristic")


def test_a_pair_members_error_names_the_pair():
    from agents.registry import make_agent
    with pytest.raises(ValueError, match=r"^pair:ppo:bad\.npz&greedy: agent 'ppo:bad\.npz'"):
        make_agent("pair:ppo:bad.npz&greedy")


# ---------------------------------------------------------------- 2. '+' and ',' in specs
def test_a_documented_constrained_spec_is_one_opponent(monkeypatch):
    """docs/experiments/withholding_learned.md's spec: one seat, not two."""
    from agents.cli import experiment as cli_experiment
    from agents.cli import build_parser
    assert (ROOT / DOC_CONSTRAINED[4:].split(",")[0]).exists()
    args = build_parser().parse_args(
        ["experiment", "--treatment", "heuristic", "--baseline", "greedy",
         "--opponents", DOC_CONSTRAINED, "--opponents", "greedy+heuristic:style=cautious,flip=20"])
    over = cli_experiment.overrides(args)
    assert over["opponents"] == [DOC_CONSTRAINED, ["greedy", "heuristic:style=cautious,flip=20"]]
    spec = spec_from_dict({k: v for k, v in over.items() if v is not None})
    plan = experiment_mod.cell_plan(spec, spec.cells()[0])
    assert plan.specs[2:] == [DOC_CONSTRAINED]
    plan = experiment_mod.cell_plan(spec, spec.cells()[1])
    assert plan.specs[2:] == ["greedy", "heuristic:style=cautious,flip=20"]


@pytest.mark.parametrize("text, specs", [
    (DOC_CONSTRAINED + ",greedy", [DOC_CONSTRAINED, "greedy"]),
    ("learned:model=generalist,heuristic:style=cautious,flip=20,random",
     ["learned:model=generalist", "heuristic:style=cautious,flip=20", "random"]),
    ("pair:learned&heuristic:style=river-builder,greedy",
     ["pair:learned&heuristic:style=river-builder", "greedy"]),
])
def test_lists_of_documented_specs_split_at_specs_only(text, specs):
    from agents.specs import split_lineup, split_specs
    assert split_specs(text) == specs
    for s in specs:
        assert split_lineup(s) == [s]
    assert split_lineup("+".join(specs)) == specs


def test_a_constrained_opponent_plays_as_one_seat(tmp_path, capsys):
    rc, out, err = run_cli(["experiment", "--quiet", "--treatment", "heuristic", "--baseline",
                            "greedy", "--opponents", DOC_CONSTRAINED, "--teams", "3",
                            "--deals", "2", "--outcomes", "points"], capsys)
    assert rc == 0, err
    assert DOC_CONSTRAINED in out


# ---------------------------------------------------------------- 3. precision runs
class _Bar:
    def __init__(self, total, *a):
        self.total, self.n, self.seen = total, 0, [(0, total)]

    def update(self, k):
        self.n += k
        self.seen.append((self.n, self.total))

    def refresh(self):
        self.seen.append((self.n, self.total))

    def set_postfix_str(self, *a, **k):
        pass

    def close(self):
        pass


def _tiny(precision, max_deals=None):
    return spec_from_dict({"treatments": {"t": "greedy"}, "baseline": "heuristic",
                           "teams": [2, 3], "deals": 4, "precision": precision,
                           "max_deals": max_deals, "outcomes": ["points"]})


@pytest.mark.parametrize("precision, max_deals", [(1e-6, 40), (1e6, 40), (1e-6, None)])
def test_a_precision_bar_counts_to_its_cap_and_never_goes_backwards(monkeypatch, capsys,
                                                                   precision, max_deals):
    bars = []
    monkeypatch.setattr(experiment_mod, "progress_bar",
                        lambda total, on, desc: bars.append(_Bar(total)) or bars[-1])
    spec = _tiny(precision, max_deals)
    res = run_experiment(spec, progress=True)
    (bar,) = bars
    totals = [t for _, t in bar.seen]
    shares = [n / t for n, t in bar.seen]
    assert totals == sorted(totals, reverse=True)          # never grows
    assert shares == sorted(shares) and shares[-1] == 1.0  # never goes backwards, ends full
    assert bar.n == sum(c["deals"] * spec.tables_per_deal(cell)
                        for c, cell in zip(res.cells, spec.cells()))
    err = capsys.readouterr().err
    cap = spec.deal_cap()
    assert f"up to {cap:,} deals each" in err and "--max-deals N" in err
    assert "--precision off" in err and "first 4 deals" in err


def test_no_precision_no_line(capsys):
    spec = spec_from_dict({"treatments": {"t": "greedy"}, "baseline": "heuristic",
                           "deals": 2, "outcomes": ["points"]})
    run_experiment(spec, progress=True)
    assert "precision" not in capsys.readouterr().err


def test_precision_off_and_deals_from_the_command_line(tmp_path, capsys, monkeypatch):
    toml = tmp_path / "p.toml"
    toml.write_text('baseline = "heuristic"\ndeals = 4\nprecision = 0.000001\n'
                    'max_deals = 12\noutcomes = ["points"]\n[treatments]\nt = "greedy"\n')
    rc, out, err = run_cli(["experiment", str(toml), "--quiet", "--precision", "off"], capsys)
    assert rc == 0, err
    assert "1 cell(s), 16 hands" in out                    # 4 deals x 4 tables
    rc, _, err = run_cli(["experiment", str(toml), "--precision", "off", "--max-deals", "20"],
                         capsys)
    assert "--max-deals caps a precision run" in one_line(rc, err)
    rc, out, err = run_cli(["experiment", str(toml), "--deals", "6"], capsys)
    assert rc == 0 and "precision target: cells play on past their first 6 deals" in err
    assert "up to 12 deals each (max_deals" in err


def test_a_tournament_precision_run_says_so(monkeypatch, capsys):
    bars = []
    monkeypatch.setattr(tournament_mod, "progress_bar",
                        lambda total, on, desc: bars.append(_Bar(total)) or bars[-1])
    tournament_mod.run_tournament("greedy,heuristic", teams=2, deals=4, precision=1e-6,
                                  max_deals=12)
    (bar,) = bars
    assert bar.seen[0] == (0, 12 * 2) and bar.n == bar.total == 24
    assert "up to 12 deals each (max_deals" in capsys.readouterr().err


# ---------------------------------------------------------------- 4. the Gym env's opponents
def test_gym_make_takes_the_vector_envs_spec_strings():
    import gymnasium

    import nertz_env  # noqa: F401  (registers the envs)
    from agents.registry import make_agent
    a = gymnasium.make("nertz_env/Nertz-v0", opponents="heuristic", num_teams=3)
    b = gymnasium.make("nertz_env/Nertz-v0", opponents=make_agent("heuristic"), num_teams=3)
    c = gymnasium.make("nertz_env/Nertz-v0", opponents=["random", "greedy"], num_teams=3)
    for env in (a, b, c):
        env.reset(seed=3)
    for t in range(200):
        m = a.unwrapped.action_masks()
        act = int(np.flatnonzero(m)[-1])
        ra, rb = a.step(act), b.step(act)
        np.testing.assert_array_equal(ra[0], rb[0])
        c.step(int(np.flatnonzero(c.unwrapped.action_masks())[0]))
        if ra[2] or ra[3]:
            break
    with pytest.raises(ValueError, match=r"opponents: 'learned' is a model.*make_agent\('learned'\)"):
        gymnasium.make("nertz_env/Nertz-v0", opponents="learned")
    with pytest.raises(ValueError, match=r"opponents\[1\]: .*heuristic:style=nope"):
        gymnasium.make("nertz_env/Nertz-v0", opponents=["greedy", "heuristic:style=nope"],
                       num_teams=3)


# ---------------------------------------------------------------- 5. write failures: exit 1
def test_an_out_under_a_file_is_io_naming_out(tmp_path, capsys):
    (tmp_path / "file").write_text("x")
    out = tmp_path / "file" / "run"
    for argv in (["tournament", "--quiet", "--agents", "greedy,random", "--teams", "2",
                  "--deals", "2"],
                 ["experiment", "--quiet", "--treatment", "greedy", "--baseline", "random",
                  "--deals", "2"]):
        rc, _, err = run_cli(argv + ["--out", str(out)], capsys)
        line = one_line(rc, err, status=1)
        assert str(out) in line


@pytest.mark.skipif(os.name != "posix" or os.geteuid() == 0, reason="needs file permissions")
def test_a_read_only_folder_is_io_naming_out(tmp_path, capsys):
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o500)
    try:
        rc, _, err = run_cli(["tournament", "--quiet", "--agents", "greedy,random", "--teams",
                              "2", "--deals", "2", "--out", str(ro / "run")], capsys)
        line = one_line(rc, err, status=1)
        assert str(ro / "run") in line and ".part" not in line
    finally:
        ro.chmod(0o700)


def test_a_failed_write_inside_the_run_names_the_file_in_out(tmp_path, capsys, monkeypatch):
    """a writer's temporary .part file in OUT.partial is named as OUT's file."""
    from nertz_env.files import atomic
    real = atomic.os.replace

    def full_disk(src, dst):
        if str(dst).endswith("results.json"):
            raise OSError(28, "No space left on device", str(src))
        return real(src, dst)
    monkeypatch.setattr(atomic.os, "replace", full_disk)
    out = tmp_path / "full"
    rc, _, err = run_cli(["tournament", "--quiet", "--agents", "greedy,random", "--teams", "2",
                          "--deals", "2", "--no-plot", "--out", str(out)], capsys)
    line = one_line(rc, err, status=1)
    assert repr(str(out / "results.json")) in line and ".part" not in line
    assert not out.exists() and not Path(f"{out}.partial").exists()


def test_a_replay_written_under_a_file_is_io(tmp_path, capsys):
    from agents.arena.tournament import run_tournament
    res = run_tournament("greedy,random", teams=2, deals=2, record="first:1", progress=False)
    gz = tmp_path / "r.nertz.json.gz"
    res.replays[0].save(gz)
    (tmp_path / "file").write_text("")
    bad = tmp_path / "file" / "x.html"
    rc, _, err = run_cli(["replay", str(gz), "--no-check", "--html", str(bad)], capsys)
    line = one_line(rc, err, status=1)
    assert repr(str(bad)) in line and "cannot write it" in line


# ---------------------------------------------------------------- 6. a stalling agent is said
class _PostfixBar(_Bar):
    def __init__(self, total, *a):
        super().__init__(total)
        self.postfix = []

    def set_postfix_str(self, text, refresh=True):
        self.postfix.append(text)


def test_hands_at_the_tick_cap_are_said_once(monkeypatch, capsys):
    from nertz_env.config import RulesConfig
    bars = []
    monkeypatch.setattr(tournament_mod, "progress_bar",
                        lambda total, on, desc: bars.append(_PostfixBar(total)) or bars[-1])
    tournament_mod.run_tournament("greedy,heuristic", config=RulesConfig(num_teams=2,
                                  max_ticks=20), deals=8, batch_tables=4)
    err = capsys.readouterr().err
    assert err.count("hands are reaching the tick cap") == 1 and "max_ticks=20" in err
    assert bars[0].postfix == ["hands reach the tick cap"]
    tournament_mod.run_tournament("greedy,heuristic", teams=2, deals=8, batch_tables=4)
    assert "tick cap" not in capsys.readouterr().err and bars[1].postfix == []


def test_a_batch_running_long_is_said_while_it_plays(monkeypatch, capsys):
    import time

    from agents.arena import progress
    monkeypatch.setattr(progress, "STALL_S", 0.05)
    real = play_mod.play_tables
    monkeypatch.setattr(play_mod, "play_tables",
                        lambda *a: (time.sleep(0.5), real(*a))[1])
    bars = []
    monkeypatch.setattr(tournament_mod, "progress_bar",
                        lambda total, on, desc: bars.append(_PostfixBar(total)) or bars[-1])
    tournament_mod.run_tournament("greedy,heuristic", teams=2, deals=2)
    assert "hands are running long: a batch of 4 tables" in capsys.readouterr().err
    assert bars[0].postfix == ["hands running long"]


# ---------------------------------------------------------------- 7. what the tables look like
def test_long_agent_names_stay_on_one_line_with_a_legend():
    from agents.stats import report
    res = tournament_mod.run_tournament(
        "heuristic:style=river-builder,greedy,heuristic:withhold_stream=when-useful,"
        "withhold_river=0", teams=3, deals=2, progress=False)
    text = report.format_table(res.leaderboard, res.pairs)
    lines = text.splitlines()
    assert max(map(len, lines)) <= report.WIDTH
    board = lines[lines.index(next(x for x in lines if x.startswith("#  agent"))) + 2:][:3]
    assert [x.split()[0] for x in board] == ["1", "2", "3"]     # each row one line
    assert "  heuristic:withhold_stream=when-useful,withhold_river=0" in text
    assert "  heuristic:style=river-builder" in text


def test_game_totals_line_up_under_their_teams(capsys):
    assert main(["game", "--teams", "3", "--games", "4", "--target", "100", "--agents",
                 "greedy,heuristic,random"]) == 0
    lines = capsys.readouterr().out.splitlines()
    head = next(x for x in lines if x.startswith("game"))
    rows = lines[lines.index(head) + 2:lines.index(head) + 6]
    for t in range(3):
        end = head.index(f"team {t}") + len(f"team {t}")
        for r in rows:
            assert r[end - 1] == ")" and r[end:end + 1] in ("", " "), (head, r)


def test_forest_title_clears_the_panel_titles(monkeypatch, tmp_path):
    from matplotlib.figure import Figure

    from agents.arena.effects import plot_forest
    import json
    rows = json.loads((ROOT / "docs/experiments/withholding/experiment.json").read_text())["rows"]
    seen = {}
    real = Figure.savefig
    monkeypatch.setattr(Figure, "savefig",
                        lambda self, *a, **k: (seen.setdefault("fig", self), real(self, *a, **k)))
    for n in (6, len(rows)):                 # a short figure and the shipped tall one
        plot_forest(rows[:n], tmp_path / "f.png", title="a long title of an experiment " * 4)
        _title_clear(seen.pop("fig"))


def _title_clear(fig):
    r = fig.canvas.get_renderer()
    low = fig._suptitle.get_window_extent(r).y0
    assert all(low >= ax.title.get_window_extent(r).y1 for ax in fig.axes)
    for ax in fig.axes:                      # the x tick labels of a panel never collide
        boxes = sorted((t.get_window_extent(r) for t in ax.get_xticklabels() if t.get_text()),
                       key=lambda b: b.x0)
        assert all(a.x1 <= b.x0 for a, b in zip(boxes, boxes[1:])), [t.get_text() for t in
                                                                   ax.get_xticklabels()]


def test_a_missing_model_is_named_once_beside_its_spec(capsys):
    rc, _, err = run_cli(["tournament", "--quiet", "--agents", "ppo:/no/such.npz,greedy"],
                         capsys)
    assert one_line(rc, err).count("/no/such.npz") == 2        # the spec, then the file
