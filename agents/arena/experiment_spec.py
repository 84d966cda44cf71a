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
    speeds = ["even", "mixed"]     # or "1,2,1,3": one period per seat (R21)
    modes = ["hands", "games"]
    outcomes = ["points", "relative", "win"]   # the first is the headline

    [treatments]                   # name = agent spec
    keep = "heuristic:withhold_stream=keep"

    [rules.default]                # rules variants: RulesConfig fields (none: the defaults)
    [rules.river5]
    river_size = 5

Plays nothing and builds no agent: agents/arena/experiment.py runs a spec.
"""
from __future__ import annotations

import dataclasses
import itertools
import math
import numbers
from dataclasses import dataclass, field
from pathlib import Path

from nertz_env.config import RulesConfig

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

    def deal_cap(self) -> int:
        """The most deals a cell can play: deals, or a precision run's cap."""
        if self.precision is None:
            return self.deals
        return 100 * self.deals if self.max_deals is None else self.max_deals

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
