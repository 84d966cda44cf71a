"""Evaluations of a training run on duplicate deals, played as tournaments play.

Evaluation (`eval_every`): the current policy is saved to a temporary zip and loaded with
make_agent("ppo:PATH"), exactly as tournaments play it (deterministic, masked argmax), and
plays run_tournament duplicate deals (`eval_deals`, fixed seed `eval_seed`, so every
evaluation plays the same deals) against `eval_against`: head to head at 2 teams, one seat
among teams-1 copies at more teams. The paired difference per deal (policy minus the mean
of the others) with its 95% t-interval goes to TensorBoard (eval/diff, eval/ci_low,
eval/ci_high) and to eval.jsonl / eval.csv in the run folder (each rewritten whole, so never
a cut row). With `eval_league_deals` > 0 every league entry is played too (same way) and its
difference sets the league weights.

What it says on the terminal: before the first evaluation, when numba has not cached the
tournament kernels yet (a fresh install), a note that the pause is compiling
(`compile_note`); each evaluation's line gives its seconds and, when numba compiled during
it, how many of them were compiling (`numba_compiling`, numba's own compile events).

Imports config.py and league.py; the tournament runner and the estimators (agents/arena,
agents/stats) inside functions.
"""
from __future__ import annotations

import csv
import io
import json
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from nertz_env.config import RulesConfig
from nertz_env.files import read_capped, write_text

from ..learned.ppo import other_tables_expected
from .config import TrainConfig
from .league import LeagueEntry, league_of

EVAL_FIELDS = ("timesteps", "against", "deals", "hands", "diff", "ci_low", "ci_high", "points",
               "opponent_points", "deterministic", "seconds")
MAX_EVAL_FILE = 256 << 20           # eval.jsonl / eval.csv read back to append (a row is ~250 B)
COMPILE_GUESS = "up to about a minute on a 2-core machine"   # measured: 38 s and 69 s, busy


def tournament_kernels() -> tuple:
    """The numba kernels an evaluation's tournament calls (a ppo: agent is not a core bot,
    so the tick-by-tick Python path: agents/arena/progress.py PYTHON_PATH_KERNELS)."""
    from ..arena.progress import PYTHON_PATH_KERNELS
    return PYTHON_PATH_KERNELS


def compile_note(kernels, what: str, meanwhile: str = "") -> str | None:
    """A line saying numba is about to compile `what` (first run after install, cached for
    later runs; `meanwhile`: what the person sees during it), or None when every one of
    `kernels` is in numba's cache already."""
    from ..arena.progress import kernel_cached
    if all(kernel_cached(k) for k in kernels):
        return None
    return (f"{what}: numba compiles its kernels first ({COMPILE_GUESS}; first run after "
            f"install only, cached for later runs{'; ' + meanwhile if meanwhile else ''})...")


@contextmanager
def numba_compiling():
    """Yields a one-item list that holds, once the block ends, the seconds numba spent
    compiling inside it (its "numba:compile" events; loads from its cache are not events)."""
    out = [0.0]
    try:
        from numba.core import event
    except ImportError:                       # pragma: no cover - numba moved its event API
        yield out
        return
    with event.install_timer("numba:compile", lambda s: out.__setitem__(0, s)):
        yield out


def eval_line(head: dict, against: str, compiling: float) -> str:
    """The line an evaluation prints: its paired difference, deals and seconds."""
    took = f"{head['seconds']:.1f} s"
    if compiling >= 0.5:
        took += f", {compiling:.1f} s of it numba compiling (cached for later runs)"
    return (f"eval at {head['timesteps']:,} steps: {head['diff']:+.2f} "
            f"[{head['ci_low']:+.2f}, {head['ci_high']:+.2f}] points per hand against "
            f"{against} ({head['deals']} deals, {took})")


def paired_match(agents, rules: RulesConfig, deals: int, seed: int, format: str,
                 against: str, progress: bool = False, batch_tables: int = 2048) -> dict:
    """agents[0] (a ppo: agent) against the others on run_tournament duplicate deals: the
    per-deal difference of its mean points from the others' mean, with its 95% t-interval.
    progress, batch_tables: run_tournament's (its bar; neither changes a number)."""
    from ..arena.tournament import run_tournament
    from ..stats import estimators as stats
    res = run_tournament(agents, config=rules, deals=deals, seed=seed, progress=progress,
                         format=format, batch_tables=batch_tables)
    dm = stats.deal_means(res.records, len(agents))
    per_deal = dm[:, 0] - np.nanmean(dm[:, 1:], axis=1)
    diff, half = stats.mean_ci(per_deal)
    return {"against": against, "deals": len(per_deal), "hands": res.hands_played,
            "diff": diff, "ci_low": diff - half, "ci_high": diff + half,
            "points": float(np.mean(dm[:, 0])), "opponent_points": float(np.nanmean(dm[:, 1:])),
            "deterministic": bool(agents[0].policy.deterministic)}


def evaluate_policy_zip(path, against: str, rules: RulesConfig, deals: int, seed: int,
                        **play) -> dict:
    """The model at `path` played as make_agent("ppo:PATH") against `against` on duplicate
    deals (head to head at 2 teams; one seat among teams-1 copies otherwise): paired_match's
    difference and interval (play: its progress and batch_tables)."""
    from ..registry import make_agent
    T = rules.num_teams
    agents = [make_agent(f"ppo:{path}")] + [against] * (T - 1)
    return paired_match(agents, rules, deals, seed,
                        "round-robin" if T == 2 else "all-play-all", against, **play)


def evaluate_mixed(path, entry: LeagueEntry, rules: RulesConfig, deals: int, seed: int) -> dict:
    """An entry with different bots per seat: the policy at one seat, the entry's specs at
    the others, all-play-all (every agent at every position), difference from their mean."""
    from ..registry import make_agent
    agents = [make_agent(f"ppo:{path}")] + list(entry.specs)
    return paired_match(agents, rules, deals, seed, "all-play-all", entry.name)


def evaluate_run(model, cfg: TrainConfig, run: Path, logger=None, log=print) -> dict:
    """One evaluation of a run (module docstring): the headline match, then (eval_league_deals) the
    league entries, whose differences become the league weights. Appends a row per match to
    eval.jsonl and eval.csv and records eval/* scalars."""
    rules, ev = cfg.rules(), cfg.evaluation
    rows = []
    with tempfile.TemporaryDirectory() as tmp, numba_compiling() as compiling:
        path = Path(tmp) / "policy.zip"
        model.save(path)
        t0 = time.perf_counter()
        head = evaluate_policy_zip(path, ev.eval_against, rules, ev.eval_deals, ev.eval_seed)
        head.update(timesteps=int(model.num_timesteps), seconds=time.perf_counter() - t0)
        rows.append(head)
        league = league_of(model.get_env())
        if ev.eval_league_deals and len(league.entries) > 1:
            diffs = []
            for en in league.entries:
                t0 = time.perf_counter()
                with other_tables_expected():       # the league's opponents, anywhere by design
                    if len(set(en.specs)) == 1:
                        r = evaluate_policy_zip(path, en.specs[0], rules,
                                                ev.eval_league_deals, ev.eval_seed)
                    else:
                        r = evaluate_mixed(path, en, rules, ev.eval_league_deals, ev.eval_seed)
                r.update(timesteps=int(model.num_timesteps), seconds=time.perf_counter() - t0,
                         against=f"league:{en.name}")
                rows.append(r)
                diffs.append(r["diff"])
            league.set_diffs(diffs)
    write_eval_rows(run, rows)
    if logger is not None:
        logger.record("eval/diff", head["diff"])
        logger.record("eval/ci_low", head["ci_low"])
        logger.record("eval/ci_high", head["ci_high"])
        logger.record("eval/points", head["points"])
        for r in rows[1:]:
            logger.record(f"league/diff/{r['against'][7:]}", r["diff"])
        if len(league.entries) > 1:
            for s in league.stats():
                logger.record(f"league/weight/{s['name']}", s["weight"])
        logger.dump(int(model.num_timesteps))
    log(eval_line(head, ev.eval_against, compiling[0]))
    return head


def _existing(path: Path) -> str:
    return read_capped(path, MAX_EVAL_FILE, path.name).decode("utf-8") if path.exists() else ""


def write_eval_rows(run: Path, rows) -> None:
    """Append the rows' EVAL_FIELDS to eval.jsonl and eval.csv (its header on first write),
    each file written whole (a full disk or an interrupt leaves the previous rows intact)."""
    from .folder import naming
    jsonl = run / "eval.jsonl"
    with naming(jsonl):
        write_text(jsonl, _existing(jsonl) + "".join(
            json.dumps({k: r[k] for k in EVAL_FIELDS}) + "\n" for r in rows))
    path = run / "eval.csv"
    text = _existing(path)
    buf = io.StringIO()
    w = csv.DictWriter(buf, fieldnames=EVAL_FIELDS)
    if not text:
        w.writeheader()
    for r in rows:
        w.writerow({k: r[k] for k in EVAL_FIELDS})
    with naming(path):
        write_text(path, text + buf.getvalue())
