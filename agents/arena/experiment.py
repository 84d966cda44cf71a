"""Strategy experiments: the Python API behind `nertz experiment`.

A strategy question ("does keeping Stream cards for the Nertz pile pay off, at which table
size, at which speed?") is a *treatment* against a *baseline*, each an agent spec, played on
duplicate deals in every *cell* of a grid: opponents x table sizes x speed mixes x rules
variants x modes. The answer is one row per (treatment, cell, outcome): the effect of
replacing the baseline by the treatment, with its 95% interval over deals, a p-value and a
Holm verdict over every row of the experiment.

Spec (a TOML file, or the same keys as `nertz experiment` flags):

    name = "withholding"
    seed = 0
    deals = 2000                   # deals per cell (the first block of a precision run)
    precision = 0.05               # optional: play on until the headline 95% half-width <= this
    max_deals = 100000             # optional cap per cell (default 100 x deals)
    baseline = "heuristic:withhold_stream=always"
    opponents = ["baseline", "greedy", ["greedy", "heuristic:style=river-builder"], "half"]
    teams = [2, 3, 4, 6]
    speeds = ["even", "mixed"]     # or "1,2,1,3": one period per seat (R21)
    modes = ["hands", "games"]
    outcomes = ["points", "relative", "win"]   # the first is the headline

    [treatments]                   # name = agent spec
    keep = "heuristic:withhold_stream=keep"

    [rules.default]                # rules variants: RulesConfig fields (none: the defaults)
    [rules.river5]
    river_size = 5

Design
- Opponents. `"baseline"`: the treatment takes one seat, the baseline bot every other seat.
  An agent spec (or a list of specs, filling the other seats in turn): the treatment takes
  one seat among those bots. `"half"`: treatment and baseline share the table, alternating
  (the all-play-all seatings of agents/arena/tournament.py). Opponent bots are separate agents
  from the baseline even when they play the same spec, so the focal seat is always known.
- One seat among opponents: per cell, the lineups are (treatment_k, o1, o2, ...) for every
  treatment and (baseline, o1, o2, ...); each is played at its T cyclic rotations, so the
  focal agent holds every position once per deal (every speed of a speed mix) with the same
  neighbours. All lineups play the same deals (same cards, same priority orders), so
  treatment and baseline are compared on identical luck and identical opponents.
- Outcomes, per focal seat and hand (games mode: per game): `points` (its points per hand),
  `relative` (its points minus the mean of the other teams' at the table: what it gains
  against the table), `win` (hands mode: its share of the hand's top score; games mode: it
  won the game to target_score, R30).
- The unit is the deal: per deal, the treatment's mean outcome over its seats and seatings
  minus the baseline's (agents/stats/estimators.py deal_means); the effect is the mean over deals with a
  Student-t 95% interval and a two-sided t-test p-value. `relative effect`: the effect in
  percent of the baseline's mean points per hand (win: of its mean win share), with a
  delta-method interval over deals; none when the baseline's mean is not clearly above 0.
- Holm: the verdicts control the family-wise error at 0.05 over every row of the table
  (treatments x cells x outcomes).
- Precision: a cell plays blocks of deals (agents/arena/tournament.py next_deals) until every
  treatment's headline outcome has a 95% half-width <= precision (in that outcome's units) or
  max_deals; the rows say which cells did not get there.
- Same spec and seed, same files: every key comes from the seed and the deal index
  (agents/arena/tournament.py), every cell of a table size plays deals 0..n-1, and no file holds a
  timing.
"""
from __future__ import annotations

import dataclasses
import itertools
import math
import numbers
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from nertz_env.config import RulesConfig

from ..stats import report
from ..stats import estimators as stats
from ..registry import make_agent
from .tournament import (check_executor, chosen_tables, grow_bar, hand_records, make_lineups,
                         next_deals, parse_record, play_deals, play_deals_ray, progress_bar,
                         record_tables, replay_name, seatings)

OUTCOMES = ("points", "relative", "win")
MODES = ("hands", "games")
SPEED_MIXES = ("even", "mixed")
SPEC_KEYS = ("name", "seed", "deals", "precision", "max_deals", "baseline", "treatments",
             "opponents", "teams", "speeds", "rules", "modes", "outcomes", "max_game_hands")
OUTCOME_LABEL = {"points": "points per hand", "relative": "points per hand relative to the table",
                 "win": "win share (games mode: games won)"}


@dataclass(frozen=True)
class Cell:
    """One configuration of the grid: who sits around the focal seat and under which rules."""
    opponents: str                  # "baseline", "half" or the opponents' specs joined by "+"
    teams: int
    speeds: str                     # "even", "mixed" or "1,2,..."
    rules: str                      # the rules variant's name
    mode: str


@dataclass
class ExperimentSpec:
    baseline: str
    treatments: dict
    name: str = "experiment"
    seed: int = 0
    deals: int = 1000
    precision: float | None = None
    max_deals: int | None = None
    opponents: list = field(default_factory=lambda: ["baseline"])
    teams: list = field(default_factory=lambda: [2])
    speeds: list = field(default_factory=lambda: ["even"])
    rules: dict = field(default_factory=lambda: {"default": {}})
    modes: list = field(default_factory=lambda: ["hands"])
    outcomes: list = field(default_factory=lambda: ["points", "relative", "win"])
    max_game_hands: int = 40

    def __post_init__(self):
        self.check()

    # ------------------------------------------------------------------ checks
    def check(self) -> None:
        """ValueError naming the key and what it allows; the spec is left as it was given."""
        def bad(key, value, allowed):
            return ValueError(f"experiment {key}={value!r}: {allowed}")

        if not isinstance(self.name, str) or not self.name.strip():
            raise bad("name", self.name, "must be a non-empty string")
        for key in ("seed", "deals", "max_game_hands"):
            v = getattr(self, key)
            lo = {"seed": 0, "deals": 2, "max_game_hands": 1}[key]
            if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < lo:
                raise bad(key, v, f"must be an int >= {lo}")
        if self.precision is not None and (
                isinstance(self.precision, bool) or not isinstance(self.precision, numbers.Real)
                or not math.isfinite(self.precision) or self.precision <= 0):
            raise bad("precision", self.precision, "must be a number > 0 (a 95% half-width in "
                      "the headline outcome's units) or absent")
        if self.max_deals is not None:
            if self.precision is None:
                raise bad("max_deals", self.max_deals, "caps a precision run: give precision too")
            if (isinstance(self.max_deals, bool) or not isinstance(self.max_deals, numbers.Integral)
                    or self.max_deals < self.deals):
                raise bad("max_deals", self.max_deals, f"must be an int >= deals ({self.deals})")
        if not isinstance(self.baseline, str) or not self.baseline.strip():
            raise bad("baseline", self.baseline, "must be an agent spec string, e.g. 'heuristic'")
        if not isinstance(self.treatments, dict) or not self.treatments:
            raise bad("treatments", self.treatments, "must name at least one treatment: "
                      "{name: agent spec}")
        for k, v in self.treatments.items():
            if not isinstance(k, str) or not k.strip() or not isinstance(v, str) or not v.strip():
                raise bad("treatments", self.treatments, "maps names to agent spec strings")
        for key, allowed in (("modes", MODES), ("outcomes", OUTCOMES)):
            v = getattr(self, key)
            if not isinstance(v, list) or not v or len(set(v)) != len(v) or \
                    any(x not in allowed for x in v):
                raise bad(key, v, f"must be a non-empty list of distinct values from "
                          f"{', '.join(allowed)}")
        if not isinstance(self.teams, list) or not self.teams or any(
                isinstance(t, bool) or not isinstance(t, int) or not 2 <= t <= 8 for t in self.teams):
            raise bad("teams", self.teams, "must be a non-empty list of table sizes 2-8")
        if not isinstance(self.opponents, list) or not self.opponents:
            raise bad("opponents", self.opponents, "must be a non-empty list of 'baseline', "
                      "'half', an agent spec or a list of agent specs")
        for o in self.opponents:
            specs = o if isinstance(o, list) else [o]
            if not specs or any(not isinstance(s, str) or not s.strip() for s in specs) or (
                    isinstance(o, list) and any(s in ("baseline", "half") for s in specs)):
                raise bad("opponents", o, "each entry is 'baseline', 'half', an agent spec or "
                          "a list of agent specs")
        if not isinstance(self.speeds, list) or not self.speeds:
            raise bad("speeds", self.speeds, "must be a non-empty list of 'even', 'mixed' or "
                      "'P1,P2,...' (one period per seat)")
        if not isinstance(self.rules, dict) or not self.rules or any(
                not isinstance(v, dict) for v in self.rules.values()):
            raise bad("rules", self.rules, "must map variant names to tables of RulesConfig "
                      "fields ({'default': {}} for the default rules)")
        fields = {f.name for f in dataclasses.fields(RulesConfig) if f.init}
        for name, kw in self.rules.items():
            for k in kw:
                if k in ("num_teams", "speeds"):
                    raise bad(f"rules.{name}.{k}", kw[k], "is set by the experiment's "
                              f"{'teams' if k == 'num_teams' else 'speeds'}, not by a rules variant")
                if k not in fields:
                    raise bad(f"rules.{name}.{k}", kw[k], "is not a RulesConfig field; fields: "
                              + ", ".join(sorted(fields)))
        for cell in self.cells():
            self.config(cell)                      # every table can be built

    # ------------------------------------------------------------------ grid
    def cells(self) -> list:
        out = []
        for opp, teams, speeds, rules, mode in itertools.product(
                self.opponents, self.teams, self.speeds, self.rules, self.modes):
            key = "+".join(opp) if isinstance(opp, list) else opp
            out.append(Cell(key, teams, speeds, rules, mode))
        return out

    def config(self, cell: Cell) -> RulesConfig:
        """The RulesConfig of a cell (ValueError naming the speeds or rules variant)."""
        kw = dict(self.rules[cell.rules])
        if isinstance(kw.get("team_sizes"), list):           # TOML arrays are lists
            kw["team_sizes"] = tuple(kw["team_sizes"])
        try:
            base = RulesConfig(num_teams=cell.teams, **kw)
            seats = base.num_seats
            if cell.speeds == "even":
                speeds = None
            elif cell.speeds == "mixed":
                speeds = tuple(1 + s % 2 for s in range(seats))
            else:
                try:
                    speeds = tuple(int(x) for x in cell.speeds.split(","))
                except ValueError:
                    raise ValueError(f"speeds {cell.speeds!r} must be 'even', 'mixed' or "
                                     f"integers separated by commas") from None
            return RulesConfig(num_teams=cell.teams, speeds=speeds, **kw)
        except (TypeError, ValueError) as err:
            raise ValueError(f"experiment cell teams={cell.teams}, speeds={cell.speeds!r}, "
                             f"rules {cell.rules!r}: {err}") from None

    def as_dict(self) -> dict:
        return {k: getattr(self, k) for k in SPEC_KEYS}


def load_spec(path, **overrides) -> ExperimentSpec:
    """An ExperimentSpec from a TOML file; keyword arguments (not None) replace its keys."""
    try:
        import tomllib
    except ModuleNotFoundError:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    p = Path(path)
    try:
        data = tomllib.loads(p.read_text())
    except OSError as err:
        raise ValueError(f"experiment spec {str(path)!r}: cannot read it ({err.strerror or err})") from None
    except tomllib.TOMLDecodeError as err:
        raise ValueError(f"experiment spec {str(path)!r}: not valid TOML ({err})") from None
    data.update({k: v for k, v in overrides.items() if v is not None})
    return spec_from_dict(data, where=f"experiment spec {str(path)!r}")


def spec_from_dict(data: dict, where: str = "experiment spec") -> ExperimentSpec:
    unknown = sorted(set(data) - set(SPEC_KEYS))
    if unknown:
        raise ValueError(f"{where}: unknown key {unknown[0]!r}; keys are {', '.join(SPEC_KEYS)}")
    for need in ("baseline", "treatments"):
        if need not in data:
            raise ValueError(f"{where}: {need!r} is missing (the agent spec(s) to compare)")
    return ExperimentSpec(**data)


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

    def write(self, out_dir, plot: bool = True) -> list:
        """effects.csv, effects.md, experiment.json and forest.png in out_dir."""
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        paths = [out / "effects.csv", out / "effects.md", out / "experiment.json"]
        report.write_csv(self.rows, paths[0])
        paths[1].write_text(format_effects(self.rows, self.spec, markdown=True) + "\n")
        report.write_json(self.summary(), paths[2])
        for rep in self.replays:
            paths.append(rep.save(out / "replays" / replay_name(rep)))
        if plot:
            paths.append(out / "forest.png")
            plot_forest(self.rows, paths[-1], title=f"{self.spec.name}: treatment - baseline "
                        f"({self.spec.baseline}), 95% CI over deals, seed {self.spec.seed}")
        return paths


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
    record = parse_record(record, _deal_cap(spec))
    check_executor(executor, [], block_deals)
    ray = None if executor == "local" else (ray_address, block_deals)
    for s in [spec.baseline, *spec.treatments.values()]:
        make_agent(s, seed=spec.seed)              # a bad spec fails before anything plays
    for o in spec.opponents:
        for s in (o if isinstance(o, list) else [o]):
            if s not in ("baseline", "half"):
                make_agent(s, seed=spec.seed)
    cells = spec.cells()
    plans = [_plan(spec, c) for c in cells]
    total = sum(spec.deals * sum(len(s) for s in p["seats"]) for p in plans)
    bar = progress_bar(total, progress, f"{len(cells)} cells")
    rows, cell_rows, elapsed, replays = [], [], 0.0, []
    for i, (cell, plan) in enumerate(zip(cells, plans)):
        t0 = time.perf_counter()
        records, hands, blocks, kept = _play_cell(spec, cell, plan, bar, batch_tables, ray,
                                                  record, i)
        replays += kept
        elapsed += time.perf_counter() - t0
        effects = _effects(spec, cell, plan, records, hands)
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


def _deal_cap(spec: ExperimentSpec) -> int:
    """The most deals a cell can play: deals, or a precision run's cap."""
    if spec.precision is None:
        return spec.deals
    return 100 * spec.deals if spec.max_deals is None else spec.max_deals


def _plan(spec: ExperimentSpec, cell: Cell) -> dict:
    """Agents, lineups and seatings of a cell; treatments are agents 0..K-1, the baseline K."""
    K = len(spec.treatments)
    specs = list(spec.treatments.values()) + [spec.baseline]
    T = cell.teams
    if cell.opponents == "half":
        seats = []
        for k in range(K):
            (lineup,) = make_lineups(2, T, "all-play-all")         # agents 0, 1 alternating
            seats.append([tuple(k if a == 0 else K for a in s) for s in seatings(lineup)])
    else:
        opp = [spec.baseline] if cell.opponents == "baseline" else cell.opponents.split("+")
        specs += opp
        others = [K + 1 + (i % len(opp)) for i in range(T - 1)]
        seats = []
        for focal in range(K + 1):
            lineup = (focal, *others)
            seats.append([lineup[-r:] + lineup[:-r] if r else lineup for r in range(T)])
    return {"specs": specs, "seats": seats}


def _play_cell(spec, cell, plan, bar, batch_tables, ray=None, record=None, cell_index=0):
    config = spec.config(cell)
    objs = [make_agent(s, seed=spec.seed) for s in plan["specs"]]
    names = [f"agent{i}" for i in range(len(objs))]
    core = [a.core_policy() if hasattr(a, "core_policy") else None for a in objs]
    seats = plan["seats"]
    H = 1 if cell.mode == "hands" else spec.max_game_hands
    cap = None if spec.precision is None else _deal_cap(spec)
    parts, blocks, lo, hi = [], [], 0, spec.deals
    while True:
        if ray is None:
            parts.append(play_deals(config, objs, names, core, seats, spec.seed, lo, hi,
                                    cell.mode, H, batch_tables, bar))
        else:
            parts.append(play_deals_ray(config, plan["specs"], seats, spec.seed, lo, hi,
                                        cell.mode, H, batch_tables, bar, ray[1], ray[0]))
        blocks.append(hi)
        cols = [np.concatenate(c) for c in zip(*parts)]
        order = np.lexsort((cols[2], cols[1], cols[0]))
        cols = [c[order] for c in cols]
        records, _, hands = hand_records(cell.mode, *cols)
        if spec.precision is None:
            break
        widest = max(e["half_width"] for e in _effects(spec, cell, plan, records, hands)
                     if e["outcome"] == spec.outcomes[0])
        if widest <= spec.precision or hi >= cap:
            break
        lo, hi = hi, next_deals(hi, widest, spec.precision, cap)
        grow_bar(bar, (hi - lo) * sum(len(s) for s in seats))
    if record is None:
        return records, hands, blocks, []
    chosen = chosen_tables(record, seats, hi)
    start = np.cumsum([0] + [hi * len(s) for s in seats])
    idx = [start[l] + d * len(seats[l]) + r for l, d, r in chosen]
    K = len(spec.treatments)
    shown = list(spec.treatments) + [f"baseline={spec.baseline}"] + plan["specs"][K + 1:]
    replays = record_tables(config, objs, shown, core, seats, spec.seed, cell.mode, H, chosen,
                            cols[4][idx], {"source": "experiment", "experiment": spec.name,
                                           "cell_index": cell_index,
                                           "cell": dataclasses.asdict(cell)})
    return records, hands, blocks, replays


def outcome_values(records: stats.HandRecords, outcome: str) -> np.ndarray:
    """[M, T] the outcome of every team position of every record (module docstring)."""
    if outcome == "points":
        return records.score
    if outcome == "win":
        return records.win
    if outcome == "relative":
        T = records.score.shape[1]
        others = (records.score.sum(axis=1, keepdims=True) - records.score) / (T - 1)
        return records.score - others
    raise ValueError(f"outcome {outcome!r} is unknown; outcomes are {', '.join(OUTCOMES)}")


def effect_interval(treat: np.ndarray, base: np.ndarray, scale: np.ndarray) -> dict:
    """Paired effect over deals: per-deal treatment and baseline means (NaN-free, same deals)
    and the per-deal denominator of the relative effect (the baseline's mean points or win)."""
    d = treat - base
    n = d.shape[0]
    diff, half = stats.mean_ci(d)
    sd = float(d.std(ddof=1)) if n > 1 else float("nan")
    if n > 1 and sd > 0:
        p = stats.t_pvalue(diff / (sd / math.sqrt(n)), n - 1)
    else:
        p = float("nan") if n < 2 else (1.0 if diff == 0 else 0.0)
    out = {"deals": int(n), "baseline_mean": float(base.mean()), "treatment_mean": float(treat.mean()),
           "effect": diff, "ci_low": diff - half, "ci_high": diff + half, "half_width": half,
           "p": p, "relative_pct": None, "relative_ci_low": None, "relative_ci_high": None}
    b_mean, b_half = stats.mean_ci(scale)
    if n > 1 and b_mean > 0 and b_mean - b_half > 0:       # a denominator clearly above 0
        ratio = diff / b_mean
        z = (d - ratio * scale) / b_mean                    # delta method, clustered by deal
        r_half = stats.t_quantile_975(n - 1) * float(z.std(ddof=1)) / math.sqrt(n)
        out.update(relative_pct=100 * ratio, relative_ci_low=100 * (ratio - r_half),
                   relative_ci_high=100 * (ratio + r_half))
    return out


def _effects(spec, cell, plan, records, hands) -> list:
    K = len(spec.treatments)
    n_agents = len(plan["specs"])
    means = {o: stats.deal_means(records, n_agents, outcome_values(records, o))
             for o in set(spec.outcomes) | {"points", "win"}}
    rows = []
    for k, tname in enumerate(spec.treatments):
        for o in spec.outcomes:
            m = means[o]
            scale = means["win" if o == "win" else "points"][:, K]
            row = {"treatment": tname, "treatment_spec": spec.treatments[tname],
                   "baseline": spec.baseline, **dataclasses.asdict(cell), "outcome": o}
            row.update(effect_interval(m[:, k], m[:, K], scale))
            played = records.lineup == k if cell.opponents == "half" else np.isin(records.lineup, [k, K])
            row["hands"] = int(hands[played].sum())       # the hands behind this row
            rows.append(row)
    return rows


# ---------------------------------------------------------------------- reports
def _pm(x, spec=".3f"):
    return "-" if x is None or not math.isfinite(x) else format(x, "+" + spec)


def format_effects(rows: list, spec: ExperimentSpec | None = None, *,
                   markdown: bool = False) -> str:
    """The effects table: one line per row; columns that never vary go to the header.
    markdown=True: the same table as Markdown (effects.md)."""
    if not rows:
        return "(no rows)"
    keys = ["treatment", "opponents", "teams", "speeds", "rules", "mode", "outcome"]
    varying = [k for k in keys if len({str(r[k]) for r in rows}) > 1 or k == "treatment"]
    fixed = [k for k in keys if k not in varying]
    head = varying + ["deals", "baseline", "treatment_mean", "effect [95% CI]",
                      "relative % [95% CI]", "p", "Holm"]
    body = []
    for r in rows:
        rel = ("-" if r["relative_pct"] is None else
               f"{r['relative_pct']:+.1f} [{r['relative_ci_low']:+.1f}, {r['relative_ci_high']:+.1f}]")
        verdict = "-" if not math.isfinite(r["p"]) else (
            ("better" if r["effect"] > 0 else "worse") if r["holm"] else "n.s.")
        body.append([str(r[k]) for k in varying] + [
            str(r["deals"]), f"{r['baseline_mean']:.3f}", f"{r['treatment_mean']:.3f}",
            f"{_pm(r['effect'])} [{_pm(r['ci_low'])}, {_pm(r['ci_high'])}]", rel,
            "-" if not math.isfinite(r["p"]) else f"{r['p']:.2g}", verdict])
    lines = []
    if fixed:
        lines.append("all rows: " + ", ".join(f"{k} {rows[0][k]}" for k in fixed))
    head = [("baseline mean" if h == "baseline" else "treatment mean" if h == "treatment_mean"
             else h) for h in head]
    if markdown:
        if fixed:
            lines.append("")
        lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        lines += ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in body]
    else:
        lines += report.render_rows(head, body, left=len(varying))
    n = len(rows)
    base = spec.baseline if spec else rows[0]["baseline"]
    lines += ["",
              f"effect: the treatment's outcome minus the baseline's ({base}) in the same seat "
              "on the same deals with the same opponents; 95% CI over deals (the unit).",
              "outcomes: points = points per hand; relative = points per hand minus the mean "
              "of the other teams at the table; win = win share (games mode: games won).",
              "relative %: the effect as a percentage of the baseline's mean points per hand "
              "(win: of its win share).",
              f"Holm: {n} intervals are shown; 'better'/'worse' = significant after Holm's "
              f"correction over all {n} rows (family-wise 5%), 'n.s.' = not."]
    return "\n".join(lines)


def plot_forest(rows: list, path, title: str = "") -> None:
    """A forest plot: one panel per outcome, one line per (treatment, cell), effect and 95%
    interval; filled markers are Holm-significant, a dotted line marks no effect."""
    import textwrap

    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    outcomes = list(dict.fromkeys(r["outcome"] for r in rows))
    keys = ["treatment", "opponents", "teams", "speeds", "rules", "mode"]
    varying = [k for k in keys if len({str(r[k]) for r in rows}) > 1 or k == "treatment"]
    labels = list(dict.fromkeys(
        "  ".join(f"{r[k]}{' teams' if k == 'teams' else ''}" for k in varying) for r in rows))
    n = len(labels)
    height = max(2.5, 0.28 * n + 1.6)
    width = 4.0 + 3.2 * len(outcomes)
    fig = Figure(figsize=(width, height))
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, len(outcomes), sharey=True, squeeze=False)[0]
    pos = {lab: i for i, lab in enumerate(labels)}
    for ax, o in zip(axes, outcomes):
        for r in rows:
            if r["outcome"] != o:
                continue
            y = pos["  ".join(f"{r[k]}{' teams' if k == 'teams' else ''}" for k in varying)]
            ax.plot([r["ci_low"], r["ci_high"]], [y, y], color="tab:blue", lw=1.5)
            ax.plot([r["effect"]], [y], "o", color="tab:blue",
                    mfc="tab:blue" if r["holm"] else "white", ms=5)
        ax.axvline(0.0, color="grey", ls=":", lw=1)
        ax.set_title(OUTCOME_LABEL[o], fontsize=9)
        ax.grid(axis="x", alpha=0.3)
    axes[0].set_yticks(range(n))
    axes[0].set_yticklabels(labels, fontsize=8)
    axes[0].invert_yaxis()
    fig.text(0.5, 0.005, "effect (treatment - baseline); filled: significant after Holm",
             ha="center", fontsize=8)
    if title:
        fig.suptitle("\n".join(textwrap.wrap(title, max(40, int(width * 11)))), fontsize=10)
    fig.tight_layout(rect=(0, 0.03, 1, 1))
    fig.savefig(path, format="png", dpi=100, metadata={"Software": None})


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

