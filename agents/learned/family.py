"""`learned`'s family: shipped models picked by the table's rules (docs/models.md).

The observation (nertz_env/core/observe.py) says a table's size, its teams and its speeds, but
not every rule: whether stacking is on (R16) is nowhere in it. A model that plays best with
stacking on wins by less where it is off, and the reverse (docs/models.md), so plain `learned`
is a small family of models, listed in agents/learned/models/learned_family.json:

    {"format": "nertz-family", "version": 1,
     "members": [{"name": "generalist", "model": "learned", "rules": {"stacking": false}},
                 {"name": "stacking", "model": "learned_stacking", "rules": {}}]}

A member plays a table whose RulesConfig has every field its `rules` name at those values;
the first member that matches plays, and the last names no rules (it plays any table).
`model` is the stem of a safe-format model (NAME.npz + NAME.json) in the same folder. The
reader caps the file, and every field is checked before any model is read (a ValueError
naming the member and the field).

`learned:family=PATH` plays a family file of your own the same way (its members' models in
its folder), e.g. to judge a recipe's seeds as families (docs/models.md).

An agent hears its table's rules through `for_table(config)` (agents/base.py): tournaments,
experiments, the grid, probes, the envs' opponents and the training league call it. A family
agent that was never told plays its last member and warns once (agents/learned/shipped.py).
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import NamedTuple

from nertz_env.config import RULE_FIELDS, RulesConfig
from nertz_env.files import json_loads_bounded, read_capped

FORMAT, VERSION = "nertz-family", 1
FILE = "learned_family.json"
MAX_BYTES = 64 << 10
MAX_MEMBERS = 8
_NAME = re.compile(r"^[a-z][a-z0-9-]{0,31}$")
_STEM = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}$")


class Member(NamedTuple):
    name: str
    rules: dict       # {RulesConfig field: value}; {} for the last member
    path: Path        # its .npz


def _value(v):
    return tuple(v) if isinstance(v, list) else v


def read_family(models_dir) -> list | None:
    """The members of models_dir's learned_family.json, or None where there is none."""
    p = Path(models_dir) / FILE
    return read_family_file(p) if p.is_file() else None


def read_family_file(path) -> list:
    """The members of a family file anywhere (`learned:family=PATH`); its members' models lie
    in the file's folder."""
    p = Path(path)
    what = f"model family {str(p)!r}"
    if not p.is_file():
        raise ValueError(f"{what} is not a file (a family JSON: agents/learned/family.py)")
    return check_family(json_loads_bounded(read_capped(p, MAX_BYTES, what), what),
                        p.parent, what)


def check_family(obj, models_dir, what: str = "model family") -> list:
    """[Member] of a parsed family file (module docstring); ValueError naming the field."""
    def bad(field, allowed):
        raise ValueError(f"{what}: {field} must be {allowed}")

    if not isinstance(obj, dict):
        bad("the file", "a JSON object")
    if obj.get("format") != FORMAT or obj.get("version") != VERSION:
        bad("format/version", f"{FORMAT!r} / {VERSION}")
    extra = set(obj) - {"format", "version", "members", "note"}
    if extra:
        bad(f"key {sorted(extra)[0]!r}", "absent (keys: format, version, members, note)")
    members = obj.get("members")
    if not (isinstance(members, list) and 1 <= len(members) <= MAX_MEMBERS):
        bad("members", f"a list of 1 to {MAX_MEMBERS} members")
    out, names = [], set()
    for i, m in enumerate(members):
        where = f"members[{i}]"
        if not (isinstance(m, dict) and {"name", "model", "rules"} <= set(m)
                and set(m) <= {"name", "model", "rules", "note"}):
            bad(where, "an object with name, model and rules (and an optional note)")
        name, stem, rules = m["name"], m["model"], m["rules"]
        if not (isinstance(name, str) and _NAME.match(name)) or name in names \
                or name in ("family", "per-table"):
            bad(f"{where}.name", "a new lower-case name (letters, digits, '-'), not family or "
                "per-table")
        names.add(name)
        if not (isinstance(stem, str) and _STEM.match(stem)):
            bad(f"{where}.model", "the stem of a model file in the same folder (no path)")
        npz = Path(models_dir) / f"{stem}.npz"
        if not (npz.is_file() and npz.with_suffix(".json").is_file()):
            bad(f"{where}.model", f"a safe-format model in that folder: {stem}.npz and "
                f"{stem}.json (missing)")
        if not isinstance(rules, dict):
            bad(f"{where}.rules", "an object of RulesConfig fields")
        for k, v in rules.items():
            if k not in RULE_FIELDS:
                bad(f"{where}.rules.{k}", f"a RulesConfig field ({', '.join(RULE_FIELDS)})")
            if not isinstance(v, (bool, int, str, list)):
                bad(f"{where}.rules.{k}", "a JSON boolean, number, string or list")
        try:
            RulesConfig(**{k: _value(v) for k, v in rules.items()})
        except (TypeError, ValueError) as err:
            bad(f"{where}.rules", f"values a table can have ({err})")
        out.append(Member(name, {k: _value(v) for k, v in rules.items()}, npz))
    if out[-1].rules:
        bad(f"members[{len(out) - 1}].rules", "{} (the last member plays every other table)")
    return out


def member_for(members, config: RulesConfig) -> int:
    """The index of the member that plays a table of `config`: the first whose rules hold."""
    for i, m in enumerate(members):
        if all(getattr(config, k) == v for k, v in m.rules.items()):
            return i
    return len(members) - 1
