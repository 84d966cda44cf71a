"""Experiment specs: the keys of `nertz experiment` (a TOML file or flags), checked, and the
grid of cells they span.

Spec (a TOML file, or the same keys as `nertz experiment` flags):

    name = "withholding"
    seed = 0
    deals = 2000                   # deals per cell (the first block of a precision run)
    precision = 0.05               # optional: play on until the headline 95% half-width <= this
    max_deals = 100000             # optional cap per cell (default 100 x deals)
    baseline = "heuristic:withhold_stream=always"
    opponents = ["baseline", "greedy", ["greedy", "heuristic:style=river-builder"], "half"]
    teams = [2, 3, 4, 6]
    speeds = ["even", "mixed"]     # or "1,2,1,3": one period per seat (R21); or
                                   # "focal-fast", "focal-slow", "focal:3/4" (below)
    modes = ["hands", "games"]
    outcomes = ["points", "relative", "win"]   # the first is the headline

    [treatments]                   # name = agent spec
    keep = "heuristic:withhold_stream=keep"

    [rules.default]                # rules variants: RulesConfig fields (none: the defaults)
    [rules.river5]
    river_size = 5

Speed mixes: "even" (every seat at period 1), "mixed" (seats alternate periods 1 and 2), a
list of periods (one per seat), and mixes that follow the focal seat: "focal:P/Q" (the focal
team's seats at period P, every other seat at period Q; 1 <= P, Q <= 100, P != Q), with
"focal-fast" for focal:1/2 and "focal-slow" for focal:2/1 (either spelling names one cell). The
other mixes belong to the table, and the focal seat takes every team position of a deal
(every speed of the mix); a focal mix belongs to the focal seat, which then always sits at
team position 0 (one seating per lineup and deal: the rules treat positions alike, R22
draws the priority order afresh every tick, and the deal's cards are random). Not with
opponents "half", which has no single focal seat.

Plays nothing and builds no agent: agents/arena/experiment.py runs a spec.
"""
from __future__ import annotations

import itertools
import math
import numbers
from dataclasses import dataclass, field

from nertz_env.config import RULE_FIELDS, RulesConfig
from nertz_env.files.spec_toml import read_toml, toml_depth  # noqa: F401 (toml_depth: tests)

from ..specs import split_lineup
from .limits import (MAX_CELLS, MAX_GRID, MAX_LABEL, MAX_SPEC_BYTES, brief, check_int,
                     check_size, default_cap)
from .seatings import make_lineups, seatings

OUTCOMES = ("points", "relative", "win")
MODES = ("hands", "games")
SPEED_MIXES = ("even", "mixed", "focal-fast", "focal-slow")
FOCAL_NAMES = {"focal-fast": (1, 2), "focal-slow": (2, 1)}   # the focal seat's speed
_FOCAL_BY_PERIODS = {v: k for k, v in FOCAL_NAMES.items()}


def focal_periods(key):
    """(focal period, other period) of a focal mix's cell name, or None for any other mix."""
    if key in FOCAL_NAMES:
        return FOCAL_NAMES[key]
    if isinstance(key, str) and key.startswith("focal:"):
        p, _, q = key[6:].partition("/")
        return int(p), int(q)
    return None
SPEC_KEYS = ("name", "seed", "deals", "precision", "max_deals", "baseline", "treatments",
             "opponents", "teams", "speeds", "rules", "modes", "outcomes", "max_game_hands")
OUTCOME_LABEL = {"points": "points per hand", "relative": "points per hand relative to the table",
                 "win": "win share (games mode: games won)"}


def _bad(key, value, allowed) -> ValueError:
    """The refusal of a key: its value echoed briefly (limits.brief), then what it allows."""
    key = key if len(key) <= 120 else key[:100] + "..."
    return ValueError(f"experiment {key}={brief(value)}: {allowed}")


def opponents_key(o):
    """An opponents entry as its cell name ('baseline', 'half', 'A' or 'A+B'), or None when
    it is no valid entry. A string is split as the CLI's --opponents is (specs.split_lineup:
    'greedy+heuristic' is two seats' specs, the same cell as ["greedy", "heuristic"])."""
    specs = o if isinstance(o, list) else split_lineup(o) if isinstance(o, str) else [o]
    if not specs or any(not isinstance(x, str) or not x.strip() for x in specs) or (
            (isinstance(o, list) or len(specs) > 1)
            and any(x.strip() in ("baseline", "half") for x in specs)):
        return None
    return "+".join(x.strip() for x in specs)


def speeds_key(v):
    """A speeds entry as its cell name ('even', 'mixed' or '1,2,1'), or None when it is no
    valid entry (bare numbers: a list of periods is one entry, '1,2,1' or [1, 2, 1])."""
    if v in SPEED_MIXES:
        return v
    if isinstance(v, str) and v.startswith("focal:"):
        p, sep, q = v[6:].partition("/")
        if not (sep and p.strip().isdigit() and q.strip().isdigit()):
            return None
        pq = (int(p), int(q))
        if pq[0] == pq[1] or not all(1 <= x <= 100 for x in pq):
            return None
        return _FOCAL_BY_PERIODS.get(pq, f"focal:{pq[0]}/{pq[1]}")
    parts = v.split(",") if isinstance(v, str) else v if isinstance(v, list) else None
    if not parts:
        return None
    out = []
    for x in parts:
        if isinstance(x, str) and x.strip().isdigit():
            x = int(x)
        if isinstance(x, bool) or not isinstance(x, int):
            return None
        out.append(str(x))
    return ",".join(out)


def _grid(key, values, norm, allowed) -> None:
    """A grid axis: a list of 1 to MAX_GRID entries, each valid (norm(x) not None) and
    distinct after norm (a repeated entry would play and count a cell twice)."""
    if not isinstance(values, list) or not 1 <= len(values) <= MAX_GRID:
        raise _bad(key, values, f"must be a list of 1 to {MAX_GRID} {allowed}")
    seen = {}
    for i, x in enumerate(values):
        k = norm(x)
        if k is None:
            raise _bad(key, values, f"entry {i} ({brief(x)}) is not valid: {allowed}")
        if k in seen:
            raise _bad(key, values, f"entries {seen[k]} and {i} are the same ({brief(k)[1:-1]}): "
                       f"each entry once")
        seen[k] = i


@dataclass(frozen=True)
class Cell:
    """One configuration of the grid: who sits around the focal seat and under which rules."""
    opponents: str                  # "baseline", "half" or the opponents' specs joined by "+"
    teams: int
    speeds: str                     # "even", "mixed", "focal-fast", "focal-slow", "focal:P/Q"
    #                                 or "1,2,..."

    @property
    def focal_speed(self) -> bool:
        """The speed mix follows the focal seat (at team position 0 in every seating)."""
        return focal_periods(self.speeds) is not None
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
        """ValueError naming the key and what it allows (the limits of agents/arena/limits.py,
        the CLI's own); the spec is left as it was given."""
        if not isinstance(self.name, str) or not self.name.strip() or len(self.name) > MAX_LABEL:
            raise _bad("name", self.name, f"must be a non-empty string of at most {MAX_LABEL} "
                       "characters")
        for key in ("seed", "deals", "max_game_hands"):
            check_int(key, getattr(self, key), f"experiment {key}")
        if self.precision is not None and (
                isinstance(self.precision, bool) or not isinstance(self.precision, numbers.Real)
                or not math.isfinite(self.precision) or self.precision <= 0):
            raise _bad("precision", self.precision, "must be a number > 0 (a 95% half-width in "
                       "the headline outcome's units) or absent")
        if self.max_deals is not None:
            if self.precision is None:
                raise _bad("max_deals", self.max_deals, "caps a precision run: give precision too")
            check_int("max_deals", self.max_deals, "experiment max_deals")
            if self.max_deals < self.deals:
                raise _bad("max_deals", self.max_deals, f"must be an int >= deals ({self.deals})")
        if not isinstance(self.baseline, str) or not self.baseline.strip():
            raise _bad("baseline", self.baseline, "must be an agent spec string, e.g. 'heuristic'")
        self._check_treatments()
        for key, allowed in (("modes", MODES), ("outcomes", OUTCOMES)):
            _grid(key, getattr(self, key), lambda x, a=allowed: x if x in a else None,
                  f"distinct values from {', '.join(allowed)}")
        _grid("teams", self.teams, lambda t: t if isinstance(t, int) and not isinstance(t, bool)
              and 2 <= t <= 8 else None, "distinct table sizes 2-8 (ints)")
        _grid("opponents", self.opponents, opponents_key, "distinct entries, each 'baseline', "
              "'half', an agent spec or a list of agent specs")
        _grid("speeds", self.speeds, speeds_key, "distinct speed mixes, each 'even', 'mixed', "
              "'focal-fast', 'focal-slow', 'focal:P/Q' (P != Q, 1-100) or one period per seat "
              "as a string '1,2,1,3' or a list [1, 2, 1, 3] (bare numbers are "
              "no mix: speeds = ['1,2,1,3'] is one)")
        if "baseline" in self.opponents and self.baseline.strip() in map(opponents_key,
                                                                          self.opponents):
            raise _bad("opponents", self.opponents, f"'baseline' and "
                       f"{brief(self.baseline.strip())} "
                       "(the baseline's spec) are the same opponents: each entry once")
        if "half" in self.opponents and any(focal_periods(speeds_key(v)) for v in self.speeds):
            raise _bad("speeds", self.speeds, "'focal-fast', 'focal-slow' and 'focal:P/Q' set "
                       "the focal seat's speed; opponents 'half' has no single focal seat: play them "
                       "in another experiment")
        self._check_rules()
        n = (len(self.treatments) * len(self.opponents) * len(self.teams) * len(self.speeds)
             * len(self.rules) * len(self.modes))
        if n > MAX_CELLS:
            raise ValueError(f"experiment grid: {n} treatment cells (treatments x opponents x "
                             f"teams x speeds x rules x modes); at most {MAX_CELLS}")
        cap = self.deal_cap()
        for cell in self.cells():
            self.config(cell)                      # every table can be built
            check_size(cap, self.tables_per_deal(cell), self.cell_hands(cell), cell.teams,
                       f"experiment cell {cell.opponents}, {cell.teams} teams, {cell.speeds}, "
                       f"{cell.rules}, {cell.mode}", fewer=(
                           "deals" if self.precision is None else "max_deals", "treatments",
                           "teams"))

    def _check_treatments(self) -> None:
        t = self.treatments
        if not isinstance(t, dict) or not t or len(t) > MAX_GRID:
            raise _bad("treatments", t, f"must name 1 to {MAX_GRID} treatments: "
                       "{name: agent spec}")
        for k, v in t.items():
            if not isinstance(k, str) or not k.strip() or len(k) > MAX_LABEL or \
                    not isinstance(v, str) or not v.strip():
                raise _bad("treatments", t, f"maps names (at most {MAX_LABEL} characters) to agent "
                           "spec strings")
        seen = {}
        for k, v in t.items():
            if v.strip() in seen:
                raise _bad("treatments", t, f"{seen[v.strip()]!r} and {k!r} are the same agent "
                           "spec: each treatment once")
            seen[v.strip()] = k

    def _check_rules(self) -> None:
        if not isinstance(self.rules, dict) or not self.rules or len(self.rules) > MAX_GRID or \
                any(not isinstance(v, dict) for v in self.rules.values()):
            raise _bad("rules", self.rules, f"must map 1 to {MAX_GRID} variant names to tables "
                       "of RulesConfig fields ({'default': {}} for the default rules)")
        fields = set(RULE_FIELDS)
        seen = {}
        for name, kw in self.rules.items():
            for k in kw:
                if k in ("num_teams", "speeds"):
                    raise _bad(f"rules.{name}.{k}", kw[k], "is set by the experiment's "
                               f"{'teams' if k == 'num_teams' else 'speeds'}, not by a rules "
                               "variant")
                if k not in fields:
                    raise _bad(f"rules.{name}.{k}", kw[k], "is not a RulesConfig field; fields: "
                               + ", ".join(sorted(fields)))
            if "target_score" in kw and "games" not in self.modes:
                raise _bad(f"rules.{name}.target_score", kw["target_score"], "only matters in "
                           "games mode: add 'games' to modes or drop it")
            key = repr(sorted((k, v) for k, v in kw.items()))
            if key in seen:
                raise _bad(f"rules.{name}", kw, f"is the same variant as rules.{seen[key]}: "
                           "each variant once")
            seen[key] = name

    # ------------------------------------------------------------------ grid
    def cells(self) -> list:
        out = []
        for opp, teams, speeds, rules, mode in itertools.product(
                self.opponents, self.teams, self.speeds, self.rules, self.modes):
            out.append(Cell(opponents_key(opp), teams, speeds_key(speeds), rules, mode))
        return out

    def tables_per_deal(self, cell: Cell) -> int:
        """Tables a cell plays per deal (experiment.py cell_plan's seatings, counted)."""
        K = len(self.treatments)
        if cell.opponents == "half":
            (lineup,) = make_lineups(2, cell.teams, "all-play-all")
            return K * len(seatings(lineup))
        return (K + 1) * (1 if cell.focal_speed else cell.teams)

    def cell_hands(self, cell: Cell) -> int:
        """Hands a table's record holds in this cell: 1, or max_game_hands in games mode."""
        return 1 if cell.mode == "hands" else self.max_game_hands

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
            elif cell.focal_speed:                  # the focal team sits at position 0
                mine, other = focal_periods(cell.speeds)
                speeds = tuple(mine if base.seat_team[s] == 0 else other for s in range(seats))
            else:
                speeds = tuple(int(x) for x in cell.speeds.split(","))
            return RulesConfig(num_teams=cell.teams, speeds=speeds, **kw)
        except (TypeError, ValueError) as err:
            raise ValueError(f"experiment cell teams={cell.teams}, speeds={brief(cell.speeds)}, "
                             f"rules {brief(cell.rules)}: {brief(str(err), 300)[1:-1]}") from None

    def deal_cap(self) -> int:
        """The most deals a cell can play: deals, or a precision run's cap (max_deals, else
        100 x deals clipped to what every cell can keep in memory, limits.default_cap)."""
        if self.precision is None:
            return self.deals
        if self.max_deals is not None:
            return self.max_deals
        return min(default_cap(self.deals, self.tables_per_deal(c), self.cell_hands(c), c.teams)
                   for c in self.cells())

    def as_dict(self) -> dict:
        return {k: getattr(self, k) for k in SPEC_KEYS}


def load_spec(path, **overrides) -> ExperimentSpec:
    """An ExperimentSpec from a TOML file; keyword arguments (not None) replace its keys."""
    data = read_toml(path, "experiment spec", MAX_SPEC_BYTES)
    data.update({k: v for k, v in overrides.items() if v is not None})
    return spec_from_dict(data, where=f"experiment spec {str(path)!r}")


def spec_from_dict(data: dict, where: str = "experiment spec") -> ExperimentSpec:
    unknown = sorted(set(data) - set(SPEC_KEYS))
    if unknown:
        raise ValueError(f"{where}: unknown key {brief(unknown[0])}; keys are "
                         + ", ".join(SPEC_KEYS))
    for need in ("baseline", "treatments"):
        if need not in data:
            raise ValueError(f"{where}: {need!r} is missing (the agent spec(s) to compare)")
    modes = data.get("modes", ["hands"])
    if "max_game_hands" in data and isinstance(modes, list) and "games" not in modes:
        raise ValueError(f"{where}: max_game_hands={brief(data['max_game_hands'])} only matters in "
                         "games mode: add 'games' to modes (--modes hands,games) or drop it")
    return ExperimentSpec(**data)
