"""The grid of table formats of docs/models.md: each agent as one seat among river-builders,
against river-builder in that seat, on the same duplicate deals (the experiment design of
agents/arena/experiment.py: the focal seat at every team position of every deal).

    python -m benchmarks.learned_grid --agents "generalist=ppo:runs/generalist2/final.npz;learned" \
        --deals 1000 --out benchmarks/results/learned_grid.json --plot docs/learned_grid.png

Per cell and agent: the paired difference in points per hand (agent minus river-builder in
the focal seat, 95% t-interval over deals: the deal is the independent unit), and the share
of hands cut at max_ticks (R26) in the agent's lineups and in river-builder's, with the
paired difference of those shares (same unit). GRID is the issue's grid; HELD_OUT are
formats no training preset holds (--held-out plays them too). Prints a Markdown table and
writes every row as JSON (whole or not at all).
"""
from __future__ import annotations

import argparse
import os
import time

import numpy as np

os.environ.setdefault("OMP_NUM_THREADS", "1")

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


def play_cell(agents: dict, teams, speeds, rules, deals, seed) -> list:
    """Rows of one cell: per agent, points effect and cut-hand shares against BASELINE."""
    from agents.arena.effects import cell_effects
    from agents.arena.experiment import cell_plan
    from agents.arena.experiment_spec import spec_from_dict
    from agents.arena.play import MatchPlan, Roster, play_deals
    from agents.arena.progress import NoBar
    from agents.arena.records import hand_records
    from agents.registry import make_agent
    from agents.stats import estimators as stats
    spec = spec_from_dict({"baseline": BASELINE, "treatments": agents, "opponents": ["baseline"],
                           "teams": [teams], "speeds": [speeds], "rules": {"cell": rules},
                           "deals": deals, "seed": seed, "outcomes": ["points"]})
    (cell,) = spec.cells()
    plan = cell_plan(spec, cell)
    config = spec.config(cell)
    objs = [make_agent(s, seed=seed) for s in plan.specs]
    roster = Roster.of(objs, [f"agent{i}" for i in range(len(objs))])
    match = MatchPlan(config, plan.seats, seed, "hands", 1, 4096)
    block = play_deals(match, roster, 0, deals, NoBar())
    records, ticks, hands = hand_records("hands", block)
    rows = cell_effects(spec, cell, plan, records, hands)
    cut = (ticks >= config.max_ticks).astype(np.float64)
    K = len(agents)

    def per_deal(k):
        sel = records.lineup == k
        d = np.bincount(records.deal[sel], weights=cut[sel], minlength=deals)
        n = np.bincount(records.deal[sel], minlength=deals)
        return d / np.maximum(n, 1)

    base_cut = per_deal(K)
    for k, r in enumerate(rows):
        mine = per_deal(k)
        diff, half = stats.mean_ci(mine - base_cut)
        r.update(cut_share=float(mine.mean()), baseline_cut_share=float(base_cut.mean()),
                 cut_diff=diff, cut_ci_low=diff - half, cut_ci_high=diff + half,
                 max_ticks=config.max_ticks)
    return rows


def plot(rows, path, title) -> None:
    """The grid as a forest plot (agents/arena/effects.py plot_forest), one line per (cell,
    agent); filled: the interval excludes 0."""
    from agents.arena.effects import plot_forest
    shown = [{"outcome": "points", "treatment": r["cell"] + (" (held out)" if r["kind"] ==
                                                             "held-out" else ""),
              "opponents": r["treatment"], "teams": "", "speeds": "", "rules": "", "mode": "",
              "effect": r["effect"], "ci_low": r["ci_low"], "ci_high": r["ci_high"],
              "holm": r["ci_low"] > 0 or r["ci_high"] < 0} for r in rows]
    plot_forest(shown, path, title, caption="points per hand, agent minus river-builder in the "
                "seat, 95% CI over deals; filled: the interval excludes 0")


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--agents", default="learned",
                    help="NAME=SPEC or SPEC, separated by ';' (agent specs as make_agent)")
    ap.add_argument("--deals", type=int, default=1000)
    ap.add_argument("--seed", type=int, default=2027)
    ap.add_argument("--held-out", action="store_true", help="also the HELD_OUT formats")
    ap.add_argument("--only-held-out", action="store_true")
    ap.add_argument("--cells", default="", help="only cells whose name holds this text")
    ap.add_argument("--out", default="")
    ap.add_argument("--plot", default="", help="a forest plot of the effects (PNG)")
    ap.add_argument("--replot", default="", metavar="JSON",
                    help="only draw --plot from the rows of an earlier --out file")
    a = ap.parse_args(argv)
    if a.replot:
        from nertz_env.files import json_loads_bounded, read_capped
        done = json_loads_bounded(read_capped(a.replot, 16 << 20, "grid results"), a.replot)
        plot(done["rows"], a.plot, f"one seat among river-builders, against river-builder in "
             f"that seat; {done['deals']} deals per cell, seed {done['seed']}")
        return 0

    from nertz_env.files import write_json
    agents = {}
    for item in filter(None, (x.strip() for x in a.agents.split(";"))):
        name, eq, spec = item.partition("=")
        if not eq or ":" in name:
            name, spec = item, item
        agents[name] = spec
    cells = ([] if a.only_held_out else [c + ("grid",) for c in GRID]) + \
        ([c + ("held-out",) for c in HELD_OUT] if a.held_out or a.only_held_out else [])
    cells = [c for c in cells if a.cells in c[0]]
    rows, t0 = [], time.perf_counter()
    print("| cell | agent | points vs river-builder [95% CI] | cut hands: agent / river-builder |")
    print("|---|---|---|---|")
    for name, teams, speeds, rules, kind in cells:
        t1 = time.perf_counter()
        for r in play_cell(agents, teams, speeds, rules, a.deals, a.seed):
            r.update(cell=name, kind=kind, seconds=time.perf_counter() - t1)
            rows.append(r)
            print(f"| {name}{' (held out)' if kind == 'held-out' else ''} | {r['treatment']} | "
                  f"{r['effect']:+.2f} [{r['ci_low']:+.2f}, {r['ci_high']:+.2f}] | "
                  f"{r['cut_share']:.3f} / {r['baseline_cut_share']:.3f} |", flush=True)
    took = time.perf_counter() - t0
    print(f"\n{len(cells)} cells x {len(agents)} agents, {a.deals} deals each, seed {a.seed}: "
          f"{took:,.0f} s")
    if a.plot:
        plot(rows, a.plot, f"one seat among river-builders, against river-builder in that seat; "
             f"{a.deals} deals per cell, seed {a.seed}")
    if a.out:
        write_json(a.out, {"command": "python -m benchmarks.learned_grid "
                           + " ".join(argv if argv is not None else os.sys.argv[1:]),
                           "agents": agents, "deals": a.deals, "seed": a.seed,
                           "seconds": took, "rows": rows})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
