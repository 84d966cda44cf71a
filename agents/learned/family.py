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
import tempfile
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


def parse_member(text: str) -> tuple:
    """(name, model path, rules) of a member given as NAME=MODEL.npz[:FIELD=VALUE,...]; values
    read as JSON where they parse (false, 5, [1, 2]), else as strings."""
    import json
    name, eq, rest = text.partition("=")
    if not eq or not rest:
        raise ValueError(f"member {text!r}: NAME=MODEL.npz[:FIELD=VALUE,...]")
    model, _, spec = rest.partition(":")
    rules = {}
    for item in filter(None, spec.split(",")):
        k, eq, v = item.partition("=")
        if not eq:
            raise ValueError(f"member {text!r}: rule {item!r} is not FIELD=VALUE")
        try:
            rules[k.strip()] = json.loads(v)
        except ValueError:
            rules[k.strip()] = v
    return name.strip(), Path(model), rules


def write_family(out_dir, members, note: str | None = None) -> Path:
    """A family folder of your own: each member's safe-format model (MODEL.npz + MODEL.json)
    copied into out_dir as NAME.npz + NAME.json, and out_dir/learned_family.json naming
    them in order (the last with no rules), checked by the same reader
    `learned:family=PATH` uses before anything is written; every file written whole or not
    at all. members: [(name, model .npz path, rules dict)]. Returns the family file."""
    from nertz_env.files.atomic import write_bytes, write_json
    from .weights import MAX_JSON, MAX_NPZ, load_weights, weight_files
    out = Path(out_dir)
    obj = {"format": FORMAT, "version": VERSION,
           "members": [{"name": n, "model": n, "rules": dict(r)} for n, _, r in members]}
    if note:
        obj["note"] = note
    files = {}
    for name, model, _ in members:
        load_weights(model)                   # a checked safe-format model, or ValueError
        for src, ext in zip(weight_files(model), (".npz", ".json")):
            files[f"{name}{ext}"] = read_capped(src, MAX_NPZ if ext == ".npz" else MAX_JSON,
                                                f"member {name!r} model {src}")
    with tempfile.TemporaryDirectory() as tmp:  # names and rules checked before any write
        for f, data in files.items():
            if _NAME.match(Path(f).stem):    # a bad name ('../x') is written nowhere:
                (Path(tmp) / f).write_bytes(data)    # check_family refuses it by name
        check_family(obj, tmp, str(out / FILE))
    out.mkdir(parents=True, exist_ok=True)
    for f, data in files.items():
        write_bytes(out / f, data)
    return write_json(out / FILE, obj)


def main(argv=None) -> int:
    import argparse
    ap = argparse.ArgumentParser(
        prog="python -m agents.learned.family",
        description="Make a family folder of your own models, played as "
                    "learned:family=OUT/learned_family.json: the first member whose rules "
                    "the table has plays (module docstring); the last member names no rules.",
        epilog="example: python -m agents.learned.family runs/family9_s1 "
               "nostack=runs/nostack9_s1/final.npz:stacking=false "
               "stacking=runs/g_s1/checkpoints/step_3014656.npz")
    ap.add_argument("out", help="the folder to write (created if missing)")
    ap.add_argument("members", nargs="+", metavar="NAME=MODEL.npz[:FIELD=VALUE,...]",
                    help="members in order; rules are RulesConfig fields, JSON values")
    ap.add_argument("--note", default=None, help="a line kept in the family file")
    a = ap.parse_args(argv)
    try:
        path = write_family(a.out, [parse_member(m) for m in a.members], a.note)
    except ValueError as err:
        ap.error(str(err))
    print(f"{path}: play it as learned:family={path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
