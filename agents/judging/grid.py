"""The grid of table formats (`nertz judge grid`, docs/experiments/learned_grid.md): each agent
as one seat among river-builders, against river-builder in that seat, on the same duplicate
deals, in every format of GRID (and HELD_OUT: formats no training preset holds).

Each cell is an experiment of one cell (agents/arena/experiment.py's design: the focal seat
at every team position of every deal; its spec built by spec_from_dict, its lineups by
cell_plan, its effects by cell_effects), played once, so that the same hands give the
effect and the share of hands cut at max_ticks (R26). Per cell and agent: the paired
difference in points per hand (agent minus river-builder in the focal seat, 95% t-interval
over deals: the deal is the independent unit), and the cut shares of the agent's lineups and
of river-builder's with the paired difference of those shares (same unit).

Same agents, deals and seed, same rows: `GridResult.write_into` writes grid.json, grid.md and
grid.png, none holding a timing (the seconds are printed only).
"""
from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

from ..arena.effects import cell_effects, plot_forest
from ..arena.experiment import cell_plan
from ..arena.experiment_spec import spec_from_dict
from ..arena.play import MatchPlan, Roster, play_deals
from ..arena.records import hand_records
from ..registry import make_agent
from ..stats import estimators as stats
from . import RowsResult

BASELINE = "heuristic:style=river-builder"
# (name, teams, speeds, rules): speeds 'even', 'mixed' (periods 1, 2 alternating by seat) or
# one period per seat; rules: RulesConfig fields
GRID = [
    ("2 teams", 2, "even", {}), ("3 teams", 3, "even", {}), ("4 teams", 4, "even", {}),
    ("5 teams", 5, "even", {}), ("6 teams", 6, "even", {}),
    ("2 teams of 2", 2, "even", {"team_sizes": [2, 2]}),
    ("3 teams of 2", 3, "even", {"team_sizes": [2, 2, 2]}),
    ("River 5, 2 teams", 2, "even", {"river_size": 5}),
    ("River 5, 4 teams", 4, "even", {"river_size": 5}),
    ("mixed speeds, 2 teams", 2, "mixed", {}), ("mixed speeds, 4 teams", 4, "mixed", {}),
    ("uneven speeds, 4 teams", 4, "1,2,2,2", {}),
    ("no stacking, 2 teams", 2, "even", {"stacking": False}),
    ("no stacking, 4 teams", 4, "even", {"stacking": False}),
    ("no flow rules, 2 teams", 2, "even", {"flow_rules": False}),
    ("no flow rules, 4 teams", 4, "even", {"flow_rules": False}),
]
HELD_OUT = [          # formats the 'rulebook' training preset does not hold (formats.py)
    ("River 5, 6 teams", 6, "even", {"river_size": 5}),
    ("no stacking, 3 teams", 3, "even", {"stacking": False}),
    ("4 teams of 2", 4, "even", {"team_sizes": [2, 2, 2, 2]}),
    ("teams of 2, 1, 1", 3, "even", {"team_sizes": [2, 1, 1]}),
    ("River 5, 3 teams", 3, "even", {"river_size": 5}),
    ("uneven speeds, 3 teams", 3, "1,2,2", {}), ("mixed speeds, 6 teams", 6, "mixed", {}),
    ("River 5, no stacking, 2 teams", 2, "even", {"river_size": 5, "stacking": False}),
]
TABLE_HEAD = ("| cell | agent | points vs river-builder [95% CI] | cut hands: agent / "
              "river-builder |\n|---|---|---|---|")


def parse_agents(text: str) -> dict:
    """{name: spec} of 'NAME=SPEC' or 'SPEC' items separated by ';' (an item whose part
    before '=' holds ':' is a spec: heuristic:style=river-builder). ValueError when none."""
    agents = {}
    for item in filter(None, (x.strip() for x in str(text).split(";"))):
        name, eq, spec = item.partition("=")
        if not eq or ":" in name:
            name, spec = item, item
        agents[name.strip()] = spec.strip()
    if not agents:
        raise ValueError(f"--agents {text!r} names no agent: give NAME=SPEC or SPEC items "
                         "separated by ';'")
    return agents


def select_cells(held_out: bool = False, only_held_out: bool = False, text: str = "") -> list:
    """(name, teams, speeds, rules, kind) of the cells played, kind 'grid' or 'held-out', in
    order: GRID's (unless only_held_out), then HELD_OUT's (held_out or only_held_out), those
    whose name holds `text`. ValueError when none is left."""
    cells = ([] if only_held_out else [c + ("grid",) for c in GRID]) + \
        ([c + ("held-out",) for c in HELD_OUT] if held_out or only_held_out else [])
    chosen = [c for c in cells if text in c[0]]
    if not chosen:
        raise ValueError(f"--cells {text!r} matches no cell name; the names: "
                         + ", ".join(c[0] for c in cells))
    return chosen


def cell_spec(agents: dict, teams, speeds, rules, deals: int, seed: int):
    """The experiment spec of one cell (checked: a bad spec or count is a ValueError)."""
    return spec_from_dict({"baseline": BASELINE, "treatments": agents,
                           "opponents": ["baseline"], "teams": [teams], "speeds": [speeds],
                           "rules": {"cell": rules}, "deals": deals, "seed": seed,
                           "outcomes": ["points"]})


def play_cell(agents: dict, teams, speeds, rules, deals: int, seed: int, bar) -> list:
    """Rows of one cell: per agent, its points effect and cut-hand shares against BASELINE;
    `bar` (agents/arena/progress.py) advances by the tables played."""
    spec = cell_spec(agents, teams, speeds, rules, deals, seed)
    (cell,) = spec.cells()
    plan = cell_plan(spec, cell)
    config = spec.config(cell)
    roster = Roster.of([make_agent(s, seed=seed) for s in plan.specs],
                       [f"agent{i}" for i in range(len(plan.specs))])
    block = play_deals(MatchPlan(config, plan.seats, seed, "hands", 1, 4096), roster, 0,
                       deals, bar)
    records, ticks, hands = hand_records("hands", block)
    rows = cell_effects(spec, cell, plan, records, hands)
    cut = (ticks >= config.max_ticks).astype(np.float64)

    def per_deal(k):
        sel = records.lineup == k
        d = np.bincount(records.deal[sel], weights=cut[sel], minlength=deals)
        n = np.bincount(records.deal[sel], minlength=deals)
        return d / np.maximum(n, 1)

    base_cut = per_deal(len(agents))
    for k, r in enumerate(rows):
        mine = per_deal(k)
        diff, half = stats.mean_ci(mine - base_cut)
        r.update(cut_share=float(mine.mean()), baseline_cut_share=float(base_cut.mean()),
                 cut_diff=diff, cut_ci_low=diff - half, cut_ci_high=diff + half,
                 max_ticks=config.max_ticks)
    return rows


def tables_of(agents: dict, cells: list, deals: int, seed: int) -> int:
    """Tables every cell plays (the progress bar's total); every cell's spec is checked."""
    total = 0
    for _, teams, speeds, rules, _ in cells:
        spec = cell_spec(agents, teams, speeds, rules, deals, seed)
        total += deals * sum(len(s) for s in cell_plan(spec, spec.cells()[0]).seats)
    return total


def row_line(r: dict) -> str:
    """A row of the Markdown table."""
    return (f"| {r['cell']}{' (held out)' if r['kind'] == 'held-out' else ''} | "
            f"{r['treatment']} | {r['effect']:+.2f} [{r['ci_low']:+.2f}, {r['ci_high']:+.2f}] | "
            f"{r['cut_share']:.3f} / {r['baseline_cut_share']:.3f} |")


@dataclasses.dataclass
class GridResult(RowsResult):
    agents: dict
    deals: int
    seed: int
    rows: list
    command: str = ""
    head, what, stem, row_line = TABLE_HEAD, "agents", "grid", staticmethod(row_line)

    def title(self) -> str:
        return (f"one seat among river-builders, against river-builder in that seat; "
                f"{self.deals} deals per cell, seed {self.seed}")

    def write_into(self, folder, plot: bool = True) -> list:
        """grid.json (every row), grid.md (the table) and grid.png (plot) into `folder`."""
        paths = self.json_and_table(folder)
        if plot:
            plot_grid(self.rows, Path(folder) / "grid.png", self.title())
            paths.append(Path(folder) / "grid.png")
        return paths


def run_grid(agents: dict, cells: list, deals: int, seed: int, bar, on_row=None) -> list:
    """Every cell's rows (play_cell) with the cell's name, kind and seconds; on_row(row) as
    each is done."""
    import time
    rows = []
    for name, teams, speeds, rules, kind in cells:
        t1 = time.perf_counter()
        for r in play_cell(agents, teams, speeds, rules, deals, seed, bar):
            r.update(cell=name, kind=kind, seconds=time.perf_counter() - t1)
            rows.append(r)
            if on_row is not None:
                on_row(r)
    return rows


def plot_grid(rows, path, title) -> None:
    """The grid as a forest plot (agents/arena/effects.py plot_forest), one line per (cell,
    agent); filled: the interval excludes 0."""
    shown = [{"outcome": "points", "treatment": r["cell"] + (" (held out)" if r["kind"] ==
                                                             "held-out" else ""),
              "opponents": r["treatment"], "teams": "", "speeds": "", "rules": "", "mode": "",
              "effect": r["effect"], "ci_low": r["ci_low"], "ci_high": r["ci_high"],
              "holm": r["ci_low"] > 0 or r["ci_high"] < 0} for r in rows]
    plot_forest(shown, path, title, caption="points per hand, agent minus river-builder in the "
                "seat, 95% CI over deals; filled: the interval excludes 0")


__all__ = ["BASELINE", "GRID", "HELD_OUT", "GridResult", "parse_agents", "play_cell",
           "plot_grid", "run_grid", "select_cells"]
