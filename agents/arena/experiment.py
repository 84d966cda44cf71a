"""Strategy experiments: the Python API behind `nertz experiment`.

A strategy question ("does keeping Stream cards for the Nertz pile pay off, at which table
size, at which speed?") is a *treatment* against a *baseline*, each an agent spec, played on
duplicate deals in every *cell* of a grid: opponents x table sizes x speed mixes x rules
variants x modes. The answer is one row per (treatment, cell, outcome): the effect of
replacing the baseline by the treatment, with its 95% interval over deals, a p-value and a
Holm verdict over every row of the experiment.

The spec (its keys, a TOML example, the grid of cells) is agents/arena/experiment_spec.py;
outcomes, effects and their table and plot are agents/arena/effects.py. This module plays
the cells.

Design
- Opponents. `"baseline"`: the treatment takes one seat, the baseline bot every other seat.
  An agent spec (or a list of specs, filling the other seats in turn): the treatment takes
  one seat among those bots. `"half"`: treatment and baseline share the table, alternating
  (the all-play-all seatings of agents/arena/seatings.py). Opponent bots are separate agents
  from the baseline even when they play the same spec, so the focal seat is always known.
- One seat among opponents: per cell, the lineups are (treatment_k, o1, o2, ...) for every
  treatment and (baseline, o1, o2, ...); each is played at its T cyclic rotations, so the
  focal agent holds every position once per deal (every speed of a speed mix) with the same
  neighbours; under a focal speed mix ("focal-fast", "focal-slow", "focal:P/Q":
  experiment_spec.py) the lineup plays at position 0 only, where the mix puts the focal
  team's speed. All lineups play the same deals (same cards, same priority orders), so
  treatment and baseline are compared on identical luck and identical opponents.
- Holm: the verdicts control the family-wise error at 0.05 over every row of the table
  (treatments x cells x outcomes).
- Precision: a cell plays blocks of deals (agents/arena/precision.py, the tournaments' loop)
  until every treatment's headline outcome has a 95% half-width <= precision (in that
  outcome's units) or max_deals; the rows say which cells did not get there.
- Same spec and seed, same files: every key comes from the seed and the deal index
  (agents/arena/deals.py), every cell of a table size plays deals 0..n-1, and no file holds a
  timing.
"""
from __future__ import annotations

import dataclasses
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import NamedTuple

from nertz_env.files import write_text

from ..registry import make_agent
from ..specs import split_lineup
from ..stats import estimators as stats
from ..stats import report
from .distributed import check_executor, play_deals_ray
from .effects import (cell_effects, effect_interval, format_effects,  # noqa: F401
                      outcome_values, plot_forest)
from .experiment_spec import (MODES, OUTCOME_LABEL, OUTCOMES, SPEC_KEYS,  # noqa: F401
                              SPEED_MIXES, Cell, ExperimentSpec, load_spec, spec_from_dict)
from .outdir import write_files, write_run
from .play import MatchPlan, Roster, check_pair_seats, play_deals
from .precision import play_to_precision
from .progress import precision_line, progress_bar, trim_bar
from .records import hand_records, parse_record, record_chosen, replay_name
from .seatings import make_lineups, seatings


class CellPlan(NamedTuple):
    """Who plays a cell: treatments are agents 0..K-1, the baseline K, then the opponents."""
    specs: list              # agent spec of each agent index
    seats: list              # per lineup: its seatings (one lineup per treatment + baseline)


# ---------------------------------------------------------------------- results
@dataclass
class ExperimentResult:
    spec: ExperimentSpec
    rows: list                        # one per (treatment, cell, outcome)
    cells: list                       # one per cell: deals, hands, blocks, reached
    elapsed_s: float = 0.0
    replays: list = field(default_factory=list)   # Replay of each recorded table (record=)

    def summary(self) -> dict:
        return {"spec": self.spec.as_dict(), "holm_family": len(self.rows),
                "cells": self.cells, "rows": self.rows}

    def table(self) -> str:
        return format_effects(self.rows, self.spec)

    def write(self, out_dir, plot: bool = True, overwrite: bool = False) -> list:
        """effects.csv, effects.md, experiment.json and forest.png in a fresh out_dir (and
        replays/ of record=): all of them or none (agents/arena/outdir.py; overwrite
        replaces an earlier run)."""
        return write_run(self.write_into, out_dir, plot=plot, overwrite=overwrite,
                         command="experiment")

    def write_into(self, folder, plot: bool = True) -> list:
        """write's files into `folder`, an existing folder that a run_folder claimed."""
        out = Path(folder)
        title = (f"{self.spec.name}: treatment - baseline ({self.spec.baseline}), 95% CI over "
                 f"deals, seed {self.spec.seed}")
        jobs = [(out / "effects.csv", lambda p: report.write_csv(self.rows, p)),
                (out / "effects.md", lambda p: write_text(p, format_effects(
                    self.rows, self.spec, markdown=True) + "\n")),
                (out / "experiment.json", lambda p: report.write_json(self.summary(), p))]
        jobs += [(out / "replays" / replay_name(rep), rep.save) for rep in self.replays]
        if plot:
            jobs.append((out / "forest.png", lambda p: plot_forest(self.rows, p, title=title)))
        return write_files(jobs)


def run_experiment(spec: ExperimentSpec, *, progress: bool = True, batch_tables: int = 2048,
                   executor: str = "local", ray_address: str | None = None,
                   block_deals: int | None = None, record: str | None = None) -> ExperimentResult:
    """Play every cell of the spec and return its rows (module docstring). executor "ray":
    every cell's deals in blocks of Ray tasks (run_tournament's executor), the same rows.
    record: keep replays of chosen tables of every cell, as run_tournament's `record`
    ("all", "first:N", "deals:D1,D2"); result.replays, written under replays/."""
    if not isinstance(spec, ExperimentSpec):
        raise ValueError(f"spec must be an ExperimentSpec (load_spec, spec_from_dict), got "
                         f"{type(spec).__name__}")
    spec.check()
    record = parse_record(record, spec.deal_cap())
    check_executor(executor, [], block_deals)
    ray = None if executor == "local" else (ray_address, block_deals)
    made = {}
    for s in [spec.baseline, *spec.treatments.values()]:
        made[s] = make_agent(s, seed=spec.seed)    # a bad spec fails before anything plays
    for o in spec.opponents:
        for s in (o if isinstance(o, list) else split_lineup(o)):   # as cell_plan splits
            if s not in ("baseline", "half"):
                made[s] = make_agent(s, seed=spec.seed)
    cells = spec.cells()
    plans = [cell_plan(spec, c) for c in cells]
    for cell, plan in zip(cells, plans):           # a pair at a solo team: refused now
        check_pair_seats(spec.config(cell), plan.seats,
                         Roster.of([made.get(s) or make_agent(s, seed=spec.seed)
                                    for s in plan.specs], list(plan.specs)))
    cap = spec.deal_cap()              # a precision run's bar counts to the cap (trim_bar)
    total = sum(cap * sum(len(s) for s in p.seats) for p in plans)
    if progress and spec.precision is not None:
        print(precision_notice(spec), file=sys.stderr, flush=True)
    bar = progress_bar(total, progress, f"{len(cells)} cells")
    rows, cell_rows, elapsed, replays = [], [], 0.0, []
    for i, (cell, plan) in enumerate(zip(cells, plans)):
        t0 = time.perf_counter()
        records, hands, blocks, kept = _play_cell(spec, cell, plan, bar, batch_tables, ray,
                                                  record, i)
        replays += kept
        trim_bar(bar, (cap - blocks[-1]) * sum(len(x) for x in plan.seats))
        elapsed += time.perf_counter() - t0
        effects = cell_effects(spec, cell, plan, records, hands)
        widest = max(e["half_width"] for e in effects if e["outcome"] == spec.outcomes[0])
        reached = None if spec.precision is None else bool(widest <= spec.precision)
        cell_rows.append({**dataclasses.asdict(cell), "deals": blocks[-1],
                          "hands": int(hands.sum()), "deal_blocks": blocks,
                          "headline_half_width": widest, "reached": reached})
        rows += effects
    bar.close()
    for r, h in zip(rows, stats.holm([r["p"] for r in rows])):
        r["holm"] = bool(h)
    return ExperimentResult(spec=spec, rows=rows, cells=cell_rows, elapsed_s=elapsed,
                            replays=replays)


def precision_notice(spec: ExperimentSpec) -> str:
    """The line a precision spec's run prints first (progress.precision_line): the target,
    the first block (deals), the cap and how to bound it."""
    cap = spec.deal_cap()
    hands = sum(cap * spec.tables_per_deal(c) * spec.cell_hands(c) for c in spec.cells())
    return precision_line(spec.precision, spec.deals, cap, "cells", "max_deals"
                          if spec.max_deals is not None else "the default cap, 100 x deals "
                          "or what fits in memory", hands,
                          "--precision off to play exactly --deals N per cell")


def cell_plan(spec: ExperimentSpec, cell: Cell) -> CellPlan:
    """Agents, lineups and seatings of a cell (module docstring's design)."""
    K = len(spec.treatments)
    specs = list(spec.treatments.values()) + [spec.baseline]
    T = cell.teams
    if cell.opponents == "half":
        seats = []
        for k in range(K):
            (lineup,) = make_lineups(2, T, "all-play-all")         # agents 0, 1 alternating
            seats.append([tuple(k if a == 0 else K for a in s) for s in seatings(lineup)])
    else:
        opp = [spec.baseline] if cell.opponents == "baseline" else split_lineup(cell.opponents)
        specs += opp
        others = [K + 1 + (i % len(opp)) for i in range(T - 1)]
        seats = []
        for focal in range(K + 1):
            lineup = (focal, *others)
            if cell.focal_speed:                 # the mix's focal team is position 0
                seats.append([lineup])
            else:
                seats.append([lineup[-r:] + lineup[:-r] if r else lineup for r in range(T)])
    return CellPlan(specs, seats)


def _play_cell(spec, cell, plan: CellPlan, bar, batch_tables, ray=None, record=None,
               cell_index=0):
    """A cell's records, hands per record, deal blocks and replays (record=)."""
    config = spec.config(cell)
    objs = [make_agent(s, seed=spec.seed) for s in plan.specs]
    roster = Roster.of(objs, [f"agent{i}" for i in range(len(objs))])
    match = MatchPlan(config, plan.seats, spec.seed, cell.mode,
                      1 if cell.mode == "hands" else spec.max_game_hands, batch_tables)

    def play(lo, hi):
        if ray is None:
            return play_deals(match, roster, lo, hi, bar)
        return play_deals_ray(match, plan.specs, lo, hi, bar, ray[1], ray[0])

    def widest(block):
        records, _, hands = hand_records(cell.mode, block)
        return max(e["half_width"] for e in cell_effects(spec, cell, plan, records, hands)
                   if e["outcome"] == spec.outcomes[0])

    played = play_to_precision(play, spec.deals, spec.precision,
                               None if spec.precision is None else spec.deal_cap(), widest)
    records, _, hands = hand_records(cell.mode, played.block)
    if record is None:
        return records, hands, played.deal_blocks, []
    K = len(spec.treatments)
    shown = list(spec.treatments) + [f"baseline={spec.baseline}"] + plan.specs[K + 1:]
    replays = record_chosen(match, roster.renamed(shown), record, played.block,
                            played.deal_blocks[-1],
                            {"source": "experiment", "experiment": spec.name,
                             "cell_index": cell_index, "cell": dataclasses.asdict(cell)})
    return records, hands, played.deal_blocks, replays


def main_table(result: ExperimentResult) -> str:
    """The terminal report: the table and one line per cell that missed the precision."""
    lines = [result.table()]
    missed = [c for c in result.cells if c["reached"] is False]
    if result.spec.precision is not None:
        if missed:
            lines.append(f"\nprecision: {len(missed)} of {len(result.cells)} cells not within "
                         f"+-{result.spec.precision:g} at the cap: " + "; ".join(
                             f"{c['opponents']}, {c['teams']} teams, {c['speeds']}, {c['rules']}, "
                             f"{c['mode']} +-{c['headline_half_width']:.3g}" for c in missed))
        else:
            lines.append(f"\nprecision: every cell's headline ({result.spec.outcomes[0]}) within "
                         f"+-{result.spec.precision:g} (95%)")
    return "\n".join(lines)
