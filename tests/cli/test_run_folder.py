"""A run's --out folder never mixes two runs and is never half-written: a non-empty folder is
refused unless --overwrite (and then only a nertz run's), a folder being written is refused,
every failure or interrupt leaves --out as it was; options that need another are refused
alone; help texts and printed tables fit (issue 20, parts 3, 4 and 7)."""
from __future__ import annotations

import errno
import io
import json
import os
import re
import subprocess
import sys
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

from agents.arena import outdir
from agents.arena import tournament as arena_tournament
from agents.arena.tournament import run_tournament
from agents.cli import build_parser, main
from agents.cli.common import out_folder
from agents.registry import KINDS
from agents.stats import report

ROOT = Path(__file__).resolve().parents[2]
RUN = ["tournament", "--agents", "greedy,heuristic", "--teams", "2", "--deals", "2", "--quiet"]


def cli(argv):
    """(exit status, stdout, stderr) of main(argv); argparse exits are statuses too."""
    out, err = io.StringIO(), io.StringIO()
    with redirect_stdout(out), redirect_stderr(err):
        try:
            rc = main(argv)
        except SystemExit as exc:
            rc = exc.code
    return rc, out.getvalue(), err.getvalue()


def one_line(rc, err, status=2):
    assert rc == status, err
    assert len(err.splitlines()) == 1 and err.startswith("nertz: error: "), err
    assert "Traceback" not in err


def snapshot(folder: Path) -> dict:
    return {p.relative_to(folder).as_posix(): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def beside(folder: Path) -> list:
    """What a run left beside its folder (staging or moved-aside folders)."""
    return sorted(p.name for p in folder.parent.iterdir() if p.name != folder.name)


# ------------------------------------------------------------------ fresh folders only
def test_a_second_run_into_the_same_out_is_refused_and_overwrite_replaces_it(tmp_path):
    out = tmp_path / "t"
    rc, _, err = cli(RUN + ["--out", str(out), "--record", "all"])
    assert rc == 0, err
    first = snapshot(out)
    assert "leaderboard.png" in first and any(k.startswith("replays/") for k in first)
    rc, _, err = cli(RUN + ["--seed", "3", "--no-plot", "--out", str(out)])
    one_line(rc, err)
    assert "not empty" in err and "--overwrite" in err and str(out) in err
    assert snapshot(out) == first                       # refused: nothing changed
    rc, stdout, err = cli(RUN + ["--seed", "3", "--no-plot", "--out", str(out), "--overwrite"])
    assert rc == 0, err
    now = snapshot(out)
    # exactly the second run's files: no PNG nor replays of the first beside them
    assert sorted(now) == [outdir.MARKER, "hands.csv", "leaderboard.csv", "pairs.csv",
                           "results.json"]
    assert json.loads(now["results.json"])["seed"] == 3
    assert json.loads(now[outdir.MARKER])["files"] == sorted(now)[1:]
    assert beside(out) == [] and f"wrote {out / 'leaderboard.csv'}" in stdout


def test_an_empty_folder_is_fine_and_overwrite_spares_what_nertz_did_not_write(tmp_path):
    out = tmp_path / "mine"
    out.mkdir()
    assert cli(RUN + ["--no-plot", "--out", str(out)])[0] == 0      # empty: used
    (out / "notes.txt").write_text("my notes")
    before = snapshot(out)
    rc, _, err = cli(RUN + ["--no-plot", "--out", str(out), "--overwrite"])
    one_line(rc, err)
    assert "notes.txt" in err and snapshot(out) == before
    other = tmp_path / "papers"
    other.mkdir()
    (other / "thesis.tex").write_text("x")
    rc, _, err = cli(RUN + ["--out", str(other), "--overwrite"])
    one_line(rc, err)
    assert "does not look like a nertz run" in err and snapshot(other) == {"thesis.tex": b"x"}
    (tmp_path / "file").write_text("x")
    rc, _, err = cli(RUN + ["--out", str(tmp_path / "file")])
    one_line(rc, err)
    assert "is a file" in err


def test_the_experiment_refuses_a_used_out_too(tmp_path):
    out = tmp_path / "x"
    argv = ["experiment", "--treatment", "heuristic", "--baseline", "greedy", "--deals", "2",
            "--quiet", "--no-plot", "--out", str(out)]
    assert cli(argv)[0] == 0
    first = snapshot(out)
    rc, _, err = cli(argv)
    one_line(rc, err)
    assert "not empty" in err and snapshot(out) == first
    assert cli(argv + ["--overwrite", "--seed", "4"])[0] == 0
    assert snapshot(out) != first


def test_the_python_api_write_never_mixes_either(tmp_path):
    res = run_tournament(["greedy", "heuristic"], teams=2, deals=2, progress=False)
    paths = res.write(tmp_path / "a", plot=False)
    assert [p.parent for p in paths] == [tmp_path / "a"] * 4 and all(p.exists() for p in paths)
    with pytest.raises(ValueError, match="not empty"):
        res.write(tmp_path / "a", plot=False)
    assert res.write(tmp_path / "a", plot=False, overwrite=True) == paths


# ------------------------------------------------------------------ one run at a time
def test_a_folder_being_written_is_refused_with_one_line(tmp_path):
    out = tmp_path / "busy"
    with out_folder(str(out), command="test") as staging:
        assert staging.name == "busy.partial"
        rc, _, err = cli(RUN + ["--out", str(out)])
        one_line(rc, err)
        assert "in use by another run" in err and "busy.partial" in err
        assert staging.is_dir()                   # the refused run took nothing away
    assert out.is_dir() and not staging.exists()


def test_a_staging_folder_whose_run_died_is_taken_over(tmp_path):
    out = tmp_path / "t"
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    staging = tmp_path / "t.partial"
    staging.mkdir()
    import socket
    (staging / outdir.LOCK).write_text(json.dumps({"pid": int(dead.stdout),
                                                   "host": socket.gethostname()}))
    (staging / "results.json").write_text("{cut")
    assert cli(RUN + ["--no-plot", "--out", str(out)])[0] == 0
    assert json.loads((out / "results.json").read_text())["deals_per_lineup"] == 2
    assert beside(out) == []


def test_two_processes_into_one_folder_one_wins(tmp_path):
    """Two real runs started together: one writes the folder, the other is refused in one
    line (exit 2), or runs after it and is refused as not empty; never both."""
    out = tmp_path / "race"
    argv = [sys.executable, "-m", "agents", *RUN, "--no-plot", "--out", str(out)]
    procs = [subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              text=True) for _ in range(2)]
    done = [(p.wait(timeout=300), p.stderr.read()) for p in procs]
    assert sorted(rc for rc, _ in done) == [0, 2], done
    (err,) = [e for rc, e in done if rc == 2]
    assert len(err.splitlines()) == 1 and ("in use" in err or "not empty" in err), err
    assert beside(out) == []


# ------------------------------------------------------------------ complete or absent
def _full_disk(*args, **kwargs):
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))     # as write() raises it: no path


@pytest.mark.parametrize("what", ["write_json", "plot_leaderboard"])
def test_a_full_disk_leaves_no_file_that_looks_complete(tmp_path, monkeypatch, what):
    """results.json (or the plot, written last) fails: exit 1, one line naming the file,
    no --out folder and nothing beside it; an earlier run that --overwrite would replace
    is kept whole."""
    monkeypatch.setattr(report, what, _full_disk)
    out = tmp_path / "t"
    rc, _, err = cli(RUN + ["--out", str(out)])
    one_line(rc, err, status=1)
    name = "results.json" if what == "write_json" else "leaderboard.png"
    assert name in err and "No space left on device" in err and "nothing was kept" in err
    assert not out.exists() and beside(out) == []
    monkeypatch.undo()
    assert cli(RUN + ["--out", str(out)])[0] == 0
    first = snapshot(out)
    monkeypatch.setattr(report, what, _full_disk)
    rc, _, err = cli(RUN + ["--out", str(out), "--overwrite", "--seed", "5"])
    one_line(rc, err, status=1)
    assert snapshot(out) == first and beside(out) == []


def test_an_interrupt_mid_run_or_mid_write_leaves_nothing(tmp_path, monkeypatch):
    out = tmp_path / "t"

    def interrupt(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(arena_tournament, "run_tournament", interrupt)
    rc, _, err = cli(RUN + ["--out", str(out)])
    assert rc == 130 and err.startswith("nertz: interrupted") and len(err.splitlines()) == 1
    assert not out.exists() and beside(out) == []
    monkeypatch.undo()
    monkeypatch.setattr(arena_tournament.TournamentResult, "_write_hands", interrupt)
    rc, _, err = cli(RUN + ["--out", str(out)])
    assert rc == 130 and not out.exists() and beside(out) == []


def test_every_file_is_written_atomically(tmp_path, monkeypatch):
    """A writer that fails half-way leaves neither the file nor a temporary beside it."""
    real = report.csv.DictWriter.writerow
    calls = []

    def cut(self, row):
        calls.append(row)
        if len(calls) == 2:
            raise OSError(errno.EIO, "I/O error")
        return real(self, row)

    monkeypatch.setattr(report.csv.DictWriter, "writerow", cut)
    with pytest.raises(OSError):
        report.write_csv([{"a": 1}, {"a": 2}, {"a": 3}], tmp_path / "x.csv")
    assert list(tmp_path.iterdir()) == []


def test_no_out_says_so(tmp_path):
    rc, out, err = cli(RUN)
    assert rc == 0 and "no files written (give --out DIR to keep leaderboard.csv" in out
    rc, out, err = cli(["experiment", "--treatment", "heuristic", "--baseline", "greedy",
                        "--deals", "2", "--quiet"])
    assert rc == 0 and "no files written (give --out DIR to keep effects.csv" in out


# ------------------------------------------------------------------ options alone
ALONE = [
    (RUN + ["--block-deals", "3"], "--block-deals only means something with --ray"),
    (RUN + ["--overwrite"], "--overwrite only means something with --out"),
    (RUN + ["--no-plot"], "--no-plot only means something with --out"),
    (RUN + ["--record", "all"], "--record only means something with --out"),
    (RUN + ["--max-game-hands", "5"], "--max-game-hands only means something with --mode games"),
    (RUN + ["--target", "100"], "--target only means something with --mode games"),
    (RUN + ["--rule", "target_score=100"], "--rule target_score only means"),
    (RUN + ["--max-deals", "50"], "give --precision too"),
    (["experiment", "--treatment", "heuristic", "--baseline", "greedy", "--block-deals", "2"],
     "--block-deals only means something with --ray"),
    (["experiment", "--treatment", "heuristic", "--baseline", "greedy", "--max-game-hands",
      "5"], "max_game_hands=5 only matters in games mode"),
    (["experiment", "--treatment", "heuristic", "--baseline", "greedy", "--no-plot"],
     "--no-plot only means something with --out"),
    (["experiment", "--treatment", "heuristic", "--baseline", "greedy", "--overwrite"],
     "--overwrite only means something with --out"),
]


@pytest.mark.parametrize("argv, words", ALONE, ids=[" ".join(a[-2:]) for a, _ in ALONE])
def test_an_option_that_needs_another_is_refused_alone(argv, words, tmp_path):
    rc, _, err = cli(argv)
    one_line(rc, err)
    assert words in err


def test_the_companions_are_accepted_together(tmp_path):
    assert cli(RUN + ["--mode", "games", "--max-game-hands", "3", "--target", "30"])[0] == 0
    assert cli(RUN + ["--out", str(tmp_path / "o"), "--no-plot", "--record", "first:1"])[0] == 0


# ------------------------------------------------------------------ help and widths
def _parsers():
    ap = build_parser()
    sub = next(a for a in ap._actions if a.__class__.__name__ == "_SubParsersAction")
    return [ap, *sub.choices.values()]


def test_no_help_text_shows_a_doubled_percent_sign():
    for p in _parsers():
        for action in p._actions:
            assert "%%" not in (action.help or ""), (p.prog, action.dest)
        assert "%%" not in p.format_help() and "%%" not in (p.description or ""), p.prog


def test_the_tournament_help_lists_every_agent_kind():
    (t,) = [p for p in _parsers() if p.prog.endswith("tournament")]
    agents = next(a for a in t._actions if a.dest == "agents")
    for kind in KINDS:
        assert re.search(rf"\b{kind}\b", agents.help), kind


def test_nertz_help_cites_files_that_are_in_the_repository():
    text = build_parser().format_help()
    assert "RULES" ".md" not in text and "API" ".md" not in text
    assert "docs/rules.md" in text and "docs/api.md" in text and "exit status" in text
    for cited in re.findall(r"docs/[\w./-]+\.md", " ".join(p.format_help() for p in _parsers())):
        if cited not in ("docs/rules.md", "docs/api.md"):     # added by this other parts
            assert (ROOT / cited).is_file(), cited


def _wide(text):
    return [ln for ln in text.splitlines() if len(ln) > 100]


def test_the_match_commands_help_fits_100_columns(monkeypatch):
    """Descriptions are wrapped, examples broken with a shell continuation (copyable)."""
    monkeypatch.setenv("COLUMNS", "100")
    for p in _parsers():
        if p.prog in ("nertz", "nertz tournament", "nertz experiment", "nertz game"):
            assert _wide(p.format_help()) == [], p.prog
    (t,) = [p for p in _parsers() if p.prog.endswith("tournament")]
    assert "--teams 3 --speeds 1,2,1 \\\n      --rule river_size=5" in t.format_help()


def test_printed_tables_fit_100_columns(tmp_path):
    rc, out, err = cli(["tournament", "--teams", "4", "--deals", "2", "--quiet",
                        "--agents", "random,greedy,heuristic:style=river-builder,flip=20,"
                        "heuristic:style=lake-rush,withhold_stream=keep"])
    assert rc == 0, err
    assert _wide(out) == [] and "river-builder" in out
    rc, out, err = cli(["experiment", "--treatment", "keep=heuristic:withhold_stream=keep",
                        "--baseline", "heuristic:style=river-builder,withhold_stream=always",
                        "--opponents", "greedy+heuristic:style=lake-rush", "--opponents", "half",
                        "--teams", "2,3", "--deals", "2", "--quiet"])
    assert rc == 0, err
    assert _wide(out) == [] and "lake-rush" in out
    rc, out, err = cli(["game", "--teams", "8", "--games", "3", "--target", "400"])
    assert rc == 0 and _wide(out) == []
