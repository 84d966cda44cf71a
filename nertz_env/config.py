"""RulesConfig: every rule variant of docs/rules.md as one frozen, validated dataclass.

Owns: the names, defaults (the NNA standard) and allowed values of every rule knob, and the
derived seat map (which seat belongs to which team). It never imports numba or the core;
`nertz_env.core.state.make_params` turns a config into the plain numbers the kernels take.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass, field
from typing import Mapping

from .encoding import MAX_TEAMS

MOVE_KINDS = ("flip", "lake", "river", "shift")
ILLEGAL_MODES = ("raise", "penalize", "ignore")
DEFAULT_MAX_TICKS = 3000


def _is_int(x) -> bool:
    return isinstance(x, int) and not isinstance(x, bool)


class FrozenDict(dict):
    """A dict that cannot be changed (RulesConfig.move_ticks): a frozen config stays frozen.
    A dict subclass, not a MappingProxyType, so that pickle, copy, dataclasses.asdict and
    json keep working; mutators raise TypeError like a tuple's or a mappingproxy's."""

    __slots__ = ()

    def _immutable(self, *args, **kwargs):
        raise TypeError("RulesConfig.move_ticks is read-only; use config.replace(move_ticks=...)")

    __setitem__ = __delitem__ = __ior__ = _immutable
    clear = pop = popitem = setdefault = update = _immutable

    def __hash__(self):
        return hash(frozenset(self.items()))

    def __reduce__(self):                  # (dict's default pickling calls __setitem__)
        return type(self), (dict(self),)

    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self


@dataclass(frozen=True)
class RulesConfig:
    """The rule set a table plays (docs/rules.md; defaults = NNA standard)."""

    num_teams: int = 2
    """teams at the table, 2 to 8 (R3)"""
    team_sizes: tuple | None = None
    """None: every team solo; else one entry per team, each 1 or 2 (R3, R4)"""
    river_size: int = 4
    """River columns per team, 4 or 5 (R5)"""
    stacking: bool = True
    """several available cards onto the Lake in one move (R16)"""
    flow_rules: bool = True
    """aces and playable Nertz cards must go to the Lake (R18, R19)"""
    nertz_bonus: int = 10
    """bonus for calling Nertz, split between simultaneous callers (R25, R29)"""
    lake_points: int = 1
    """points per own card in the Lake (R29)"""
    nertz_penalty: int = 2
    """points lost per card left in the Nertz pile (R29)"""
    target_score: int = 150
    """a game ends after a hand in which a team reaches this total (R30)"""
    max_ticks: int = DEFAULT_MAX_TICKS
    """a hand with no caller ends (truncated) after this many ticks (R26)"""
    speeds: tuple | None = None
    """None: every seat has period 1; else one period >= 1 per seat (R21)"""
    move_ticks: Mapping | None = None
    """None: every move costs 1 tick; else a mapping of flip/lake/river/shift to ticks >= 1 (R21)"""
    alternate_roles: bool = True
    """two-player teams swap Nertz and Stream roles every hand (R4)"""
    auto_nertz: bool = True
    """an empty Nertz pile ends the hand at once; False: the team must Call (R24)"""
    illegal_move: str = "raise"
    """what an illegal move does: raise, penalize or ignore (R31)"""
    penalty_points: int = 5
    """points lost per penalized illegal move (R31)"""

    # derived, filled in __post_init__
    num_seats: int = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        def bad(name, value, allowed):
            raise ValueError(f"RulesConfig.{name}={value!r} is invalid: {allowed}")

        if not _is_int(self.num_teams) or not 2 <= self.num_teams <= MAX_TEAMS:
            bad("num_teams", self.num_teams, f"an int from 2 to {MAX_TEAMS} (R3)")
        if self.team_sizes is not None:
            try:
                sizes = tuple(self.team_sizes)
            except TypeError:
                bad("team_sizes", self.team_sizes, "None or a sequence of 1s and 2s, one per team")
            if len(sizes) != self.num_teams:
                bad("team_sizes", self.team_sizes,
                    f"one entry per team ({self.num_teams} entries), each 1 or 2")
            for s in sizes:
                if not _is_int(s) or s not in (1, 2):
                    bad("team_sizes", self.team_sizes, "each team has 1 or 2 players (R3)")
            object.__setattr__(self, "team_sizes", sizes)
        if not _is_int(self.river_size) or self.river_size not in (4, 5):
            bad("river_size", self.river_size, "4 or 5 River columns (R5)")
        for name in ("stacking", "flow_rules", "alternate_roles", "auto_nertz"):
            if not isinstance(getattr(self, name), bool):
                bad(name, getattr(self, name), "True or False")
        for name in ("nertz_bonus", "lake_points", "nertz_penalty", "penalty_points"):
            v = getattr(self, name)
            if not _is_int(v) or not 0 <= v <= 1000:
                bad(name, v, "an int from 0 to 1000")
        if not _is_int(self.target_score) or not 1 <= self.target_score <= 100_000:
            bad("target_score", self.target_score, "an int from 1 to 100000")
        if not _is_int(self.max_ticks) or not 1 <= self.max_ticks <= 1_000_000:
            bad("max_ticks", self.max_ticks, "an int from 1 to 1000000")
        n_seats = sum(self.team_sizes) if self.team_sizes is not None else self.num_teams
        object.__setattr__(self, "num_seats", n_seats)
        if self.speeds is not None:
            try:
                speeds = tuple(self.speeds)
            except TypeError:
                bad("speeds", self.speeds, f"None or {n_seats} periods (ints >= 1), one per seat")
            if len(speeds) != n_seats or not all(_is_int(p) and 1 <= p <= 100 for p in speeds):
                bad("speeds", self.speeds,
                    f"None or {n_seats} periods (ints from 1 to 100), one per seat (R21)")
            object.__setattr__(self, "speeds", speeds)
        if self.move_ticks is not None:
            if not isinstance(self.move_ticks, Mapping):
                bad("move_ticks", self.move_ticks, f"None or a mapping with keys among {MOVE_KINDS}")
            for k, v in self.move_ticks.items():
                if k not in MOVE_KINDS:
                    bad("move_ticks", self.move_ticks,
                        f"keys among {MOVE_KINDS} (unknown key {k!r})")
                if not _is_int(v) or not 1 <= v <= 100:
                    bad("move_ticks", self.move_ticks, f"{k!r} must be an int from 1 to 100 (R21)")
            full = FrozenDict({k: int(self.move_ticks.get(k, 1)) for k in MOVE_KINDS})
            object.__setattr__(self, "move_ticks", full)
        if self.illegal_move not in ILLEGAL_MODES:
            bad("illegal_move", self.illegal_move, f"one of {ILLEGAL_MODES} (R31)")

    # ------------------------------------------------------------------ derived views
    @property
    def sizes(self) -> tuple:
        """Players per team (team_sizes with None expanded)."""
        return self.team_sizes if self.team_sizes is not None else (1,) * self.num_teams

    @property
    def seat_team(self) -> tuple:
        """Team of every seat; seats are numbered team by team (docs/api.md)."""
        return tuple(t for t, n in enumerate(self.sizes) for _ in range(n))

    @property
    def periods(self) -> tuple:
        return self.speeds if self.speeds is not None else (1,) * self.num_seats

    @property
    def costs(self) -> dict:
        """Tick cost of each move kind (R21), always complete."""
        return dict(self.move_ticks) if self.move_ticks is not None else {k: 1 for k in MOVE_KINDS}

    def to_dict(self) -> dict:
        """The init fields as plain Python values (tuples as lists, move_ticks as a dict):
        `RulesConfig(**config.to_dict())` is the same config."""
        out = {}
        for f in self.__dataclass_fields__:
            if f == "num_seats":
                continue
            v = getattr(self, f)
            out[f] = dict(v) if isinstance(v, Mapping) else list(v) if isinstance(v, tuple) else v
        return out

    def fingerprint(self) -> str:
        """A stable hash of the rules (sha256 of the fields as canonical JSON): equal configs,
        equal fingerprints, on every machine and Python version (snapshots carry it)."""
        cached = self.__dict__.get("_fingerprint")      # (not a field: eq, repr, pickle skip it)
        if cached is None:
            text = json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))
            cached = self.__dict__["_fingerprint"] = hashlib.sha256(text.encode()).hexdigest()
        return cached

    def replace(self, **changes) -> "RulesConfig":
        """A copy with some fields changed (validated again)."""
        kwargs = {f: getattr(self, f) for f in self.__dataclass_fields__ if f != "num_seats"}
        kwargs.update(changes)
        return RulesConfig(**kwargs)

    def __reduce__(self):                  # pickle / copy: rebuilt (and validated) from fields
        return _rebuild, (self.to_dict(),)

    def __hash__(self):
        return hash(tuple(
            tuple(sorted(v.items())) if isinstance(v, Mapping) else v
            for f, v in ((f, getattr(self, f)) for f in self.__dataclass_fields__ if f != "num_seats")))


RULE_FIELDS = tuple(f.name for f in dataclasses.fields(RulesConfig) if f.init)
"""The fields a RulesConfig is made from (every keyword it takes; num_seats is derived)."""


def _rebuild(fields: dict) -> RulesConfig:
    return RulesConfig(**fields)
