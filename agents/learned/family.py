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
reader caps the file, refuses a key given twice, and checks every field (its type too: a
name is exactly a short lower-case word, a version is an integer, not `true`) before any
model is read (a ValueError naming the member and the field). Members that name one model
share it: it is read once (agents/learned/ppo.py load_weights_policy).

`learned:family=PATH` plays a family file of your own the same way (its members' models in
its folder), e.g. to judge a recipe's seeds as families (docs/models.md).

An agent hears its table's rules through `for_table(config)` (agents/base.py): tournaments,
experiments, the grid, probes, the envs' opponents and the training league call it. A family
agent that was never told plays its last member and warns once (agents/learned/shipped.py).
"""
from __future__ import annotations

import os
import re
import secrets
import shutil
import sys
from pathlib import Path
from typing import NamedTuple

from nertz_env.config import RULE_FIELDS, RulesConfig
from nertz_env.files import read_capped, swap_in_folder
from nertz_env.files.bounded import json_loads_strict

FORMAT, VERSION = "nertz-family", 1
FILE = "learned_family.json"
MAX_BYTES = 64 << 10
MAX_MEMBERS = 8
MAX_NOTE = 1000
_NAME = re.compile(r"[a-z][a-z0-9-]{0,31}")            # fullmatch: a file-name stem as it is
_STEM = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,63}")


class Member(NamedTuple):
    name: str
    rules: dict       # {RulesConfig field: value}; {} for the last member
    path: Path        # its .npz


def _value(v):
    return tuple(v) if isinstance(v, list) else v


def read_family(models_dir) -> list | None:
    """The members of models_dir's learned_family.json, or None where there is none."""
    p = Path(models_dir) / FILE
    return read_family_file(p) if os.path.lexists(p) else None


def read_family_file(path) -> list:
    """The members of a family file anywhere (`learned:family=PATH`); its members' models lie
    in the file's folder."""
    from .weights import file_problem
    p = Path(path)
    what = f"model family {str(p)!r}"
    problem = file_problem(p)
    if problem:
        problem = "is not a file" if problem == "not found" else problem
        raise ValueError(f"{what} {problem} (a family JSON: agents/learned/family.py)")
    return check_family(json_loads_strict(read_capped(p, MAX_BYTES, "model family"), what),
                        p.parent, what)


def _note(v) -> bool:
    return v is None or isinstance(v, str) and len(v) <= MAX_NOTE


def check_family(obj, models_dir, what: str = "model family", present=None) -> list:
    """[Member] of a parsed family file (module docstring); ValueError naming the field.
    present: the model stems taken as present without looking in models_dir (the writer's
    check, before it writes them)."""
    from .weights import file_problem

    def bad(field, allowed):
        raise ValueError(f"{what}: {field} must be {allowed}")

    if not isinstance(obj, dict):
        bad("the file", "a JSON object")
    if obj.get("format") != FORMAT or type(obj.get("version")) is not int \
            or obj.get("version") != VERSION:
        bad("format/version", f"{FORMAT!r} / {VERSION}")
    extra = set(obj) - {"format", "version", "members", "note"}
    if extra:
        bad(f"key {_shown(sorted(extra)[0])}", "absent (keys: format, version, members, note)")
    if not _note(obj.get("note")):
        bad("note", f"a string of at most {MAX_NOTE} characters")
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
        if not (isinstance(name, str) and _NAME.fullmatch(name)) or name in names \
                or name in ("family", "per-table"):
            bad(f"{where}.name", "a new lower-case name (letters, digits, '-', at most 32; "
                f"no path), not family or per-table (got {_shown(name)})")
        names.add(name)
        if not _note(m.get("note")):
            bad(f"{where}.note", f"a string of at most {MAX_NOTE} characters")
        if not (isinstance(stem, str) and _STEM.fullmatch(stem)):
            bad(f"{where}.model", "the stem of a model file in the same folder (no path; got "
                f"{_shown(stem)})")
        npz = Path(models_dir) / f"{stem}.npz"
        if present is None or stem not in present:
            for f in (npz, npz.with_suffix(".json")):
                problem = file_problem(f)
                if problem:
                    bad(f"{where}.model", f"a safe-format model in that folder: {stem}.npz and "
                        f"{stem}.json (" + ("missing" if problem == "not found" else
                                            f"{f.name} {problem}") + ")")
        if not isinstance(rules, dict):
            bad(f"{where}.rules", "an object of RulesConfig fields")
        for k, v in rules.items():
            if k not in RULE_FIELDS:         # the file's own key: quoted (a newline in it)
                bad(f"{where}.rules key {_shown(k)}",
                    f"a RulesConfig field ({', '.join(RULE_FIELDS)})")
            kind = _rule_kind(k)
            if not _is_kind(v, kind):
                bad(f"{where}.rules.{k}", f"{_KIND_TEXT[kind]} (got {_shown(v)})")
        try:
            RulesConfig(**{k: _value(v) for k, v in rules.items()})
        except (TypeError, ValueError) as err:
            bad(f"{where}.rules", f"values a table can have ({' '.join(str(err).split())})")
        out.append(Member(name, {k: _value(v) for k, v in rules.items()}, npz))
    if out[-1].rules:
        bad(f"members[{len(out) - 1}].rules", "{} (the last member plays every other table)")
    return out


_KIND_TEXT = {bool: "true or false", int: "an integer", str: "a string",
              list: "null or a list of integers", None: "not a rule a member can name"}


def _rule_kind(field: str):
    """What a member's rule of RulesConfig `field` is written as: bool, int, str, list
    (team_sizes, speeds: null or a list) or None (move_ticks: not matched by a family)."""
    import dataclasses
    default = next(f.default for f in dataclasses.fields(RulesConfig) if f.name == field)
    if default is None:
        return list if field in ("team_sizes", "speeds") else None
    return type(default)


def _is_kind(v, kind) -> bool:
    if kind is int:
        return type(v) is int
    if kind is list:
        return v is None or isinstance(v, list)
    return kind is not None and isinstance(v, kind)


def _shown(v) -> str:
    """A field's value in a message: short, on one line (repr escapes newlines)."""
    text = repr(v) if isinstance(v, (str, int, float)) else type(v).__name__
    return text if len(text) <= 60 else text[:57] + "..."


def member_for(members, config: RulesConfig) -> int:
    """The index of the member that plays a table of `config`: the first whose rules hold."""
    for i, m in enumerate(members):
        if all(getattr(config, k) == v for k, v in m.rules.items()):
            return i
    return len(members) - 1


def parse_member(text: str) -> tuple:
    """(name, model path, rules) of a member given as NAME=MODEL.npz[:FIELD=VALUE,...]; values
    read as JSON where they parse (false, 5, [1, 2]), else as strings (check_family checks
    them). A FIELD given twice, or not a RulesConfig field (named with the nearest), is a
    ValueError naming the member."""
    import json
    name, eq, rest = text.partition("=")
    if not eq or not rest:
        raise ValueError(f"member {text!r}: NAME=MODEL.npz[:FIELD=VALUE,...]")
    model, _, spec = rest.partition(":")
    from ..specs import nearest
    rules = {}
    for item in filter(None, _split_rules(spec, text)):
        k, eq, v = item.partition("=")
        if not eq:
            raise ValueError(f"member {text!r}: rule {item!r} is not FIELD=VALUE")
        k = k.strip()
        if k in rules:                      # the last would win unsaid
            raise ValueError(f"member {text!r}: rule {k!r} is given twice")
        if k not in RULE_FIELDS:
            raise ValueError(f"member {text!r}: rule {k!r} is not a RulesConfig field"
                             f"{nearest(k, RULE_FIELDS)}; fields are {', '.join(RULE_FIELDS)}")
        try:
            rules[k] = json.loads(v)
        except ValueError:
            rules[k] = v
    return name.strip(), Path(model), rules


def _split_rules(spec: str, text: str) -> list:
    """FIELD=VALUE items of `spec` split at the commas outside brackets and quotes (a list
    value such as team_sizes=[2, 2] keeps its commas)."""
    items, depth, quoted, start = [], 0, False, 0
    for i, c in enumerate(spec):
        if quoted:
            quoted = c != '"' or spec[i - 1] == "\\"
        elif c == '"':
            quoted = True
        elif c in "[{":
            depth += 1
        elif c in "]}":
            depth -= 1
            if depth < 0:
                raise ValueError(f"member {text!r}: a {c!r} closes no bracket")
        elif c == "," and depth == 0:
            items.append(spec[start:i])
            start = i + 1
    if depth or quoted:
        raise ValueError(f"member {text!r}: a bracket or quote is not closed")
    return items + [spec[start:]]


def _inside(folder: Path, name: str) -> Path:
    """folder/name, refused unless it resolves to a file directly inside folder."""
    target = (folder / name).resolve()
    if target.parent != folder.resolve() or target.name != name:
        raise ValueError(f"{name!r} would be written outside {str(folder)!r}; refused")
    return target


def _is_family_folder(out: Path) -> bool:
    """Whether `out` holds a family folder and nothing else: the family file, NAME.npz and
    NAME.json files (what write_family writes; --overwrite replaces only that)."""
    items = list(out.iterdir())
    return any(p.name == FILE for p in items) and all(
        p.is_file() and not p.is_symlink() and (p.name == FILE or (
            p.suffix in (".npz", ".json") and _NAME.fullmatch(p.stem))) for p in items)


def _check_out(out: Path, overwrite: bool) -> bool:
    """Whether `out` holds a family folder that overwrite replaces; ValueError when it may
    not be written (a file, or a folder holding files)."""
    if not os.path.lexists(out):
        return False
    if out.is_symlink():
        raise ValueError(f"OUT {str(out)!r} is a symbolic link (to {os.readlink(out)!r}): "
                         "name the folder itself, or a new folder")
    if not out.is_dir():
        raise ValueError(f"OUT {str(out)!r} is not a folder: name a new folder")
    if not any(out.iterdir()):
        return False
    if overwrite and _is_family_folder(out):
        return True
    raise ValueError(f"OUT {str(out)!r} is not empty: name a new folder" + (
        ", or give --overwrite to replace the family folder there" if not overwrite else
        f" (--overwrite replaces only a family folder: {FILE} and its models, nothing else)"))


def write_family(out_dir, members, note: str | None = None, overwrite: bool = False) -> Path:
    """A family folder of your own: each member's safe-format model (MODEL.npz + MODEL.json)
    copied into out_dir as NAME.npz + NAME.json (a model several members name, once, under
    the first one's name), and out_dir/learned_family.json naming them in order (the last
    with no rules). Everything is checked before anything is written: every name (a plain
    lower-case word: no path), rule and model, by the reader `learned:family=PATH` uses;
    out_dir must be new or empty (overwrite: or a family folder, replaced). The files are
    written into a staging folder beside out_dir, checked, then renamed to it: the folder is
    whole or absent. members: [(name, model .npz path, rules dict)]. Returns the family
    file. ValueError for bad input; OSError (naming out_dir) where it cannot be written."""
    from nertz_env.files.atomic import write_bytes, write_json
    from .v1 import check_fits
    from .weights import MAX_JSON, MAX_NPZ, load_weights, weight_files
    if not str(out_dir).strip():
        raise ValueError("OUT '' names no folder: give the folder to write")
    out = Path(out_dir)
    source, stems = {}, []           # {real path of the .npz: stem}, each member's stem
    for i, (name, model, _) in enumerate(members):
        if not (isinstance(name, str) and _NAME.fullmatch(name)):
            stems.append(name)       # check_family refuses it by name, before any read
            continue
        if _sb3_zip(model):
            raise ValueError(f"member {name!r}: {str(model)!r} is an SB3 zip; a family holds "
                             f"safe-format models: run `nertz export {model} OUT` first and "
                             "name OUT.npz here")
        stems.append(source.setdefault(os.path.realpath(weight_files(model)[0]), name))
    obj = {"format": FORMAT, "version": VERSION,
           "members": [{"name": n, "model": stem, "rules": dict(r)}
                       for (n, _, r), stem in zip(members, stems)]}
    if note:
        obj["note"] = note
    check_family(obj, out, str(out / FILE), present=set(source.values()))
    replace = _check_out(out, overwrite)
    files = {}                        # {file name in out: source path}
    for real, stem in source.items():
        meta, _ = load_weights(real)  # a checked safe-format model, or ValueError
        check_fits(meta, f"member {stem!r} model {real!r}")      # v0 or v1
        for src, ext in zip(weight_files(real), (".npz", ".json")):
            files[f"{stem}{ext}"] = src
    staging = None
    try:
        where = Path(os.path.abspath(out))          # "." or "a/.." has a name here
        where.parent.mkdir(parents=True, exist_ok=True)
        staging = where.parent / f".{where.name}.{secrets.token_hex(6)}.partial"
        staging.mkdir()
        for f, src in files.items():
            data = read_capped(src, MAX_NPZ if f.endswith(".npz") else MAX_JSON, "model file")
            write_bytes(_inside(staging, f), data)
        write_json(_inside(staging, FILE), obj)
        read_family_file(staging / FILE)             # as learned:family= will read it
        for stem in source.values():
            load_weights(staging / f"{stem}.npz")    # the bytes written are the ones checked
        swap_in_folder(staging, where, replace)
        staging = None
    except OSError as err:
        file = next((a for a in out.parents if os.path.lexists(a) and not a.is_dir()), None)
        reason = f"{str(file)!r} is a file, not a folder" if file else err.strerror or err
        raise OSError(err.errno, f"family folder {str(out)!r} cannot be written ({reason}); "
                      "nothing was written there") from None
    finally:
        if staging is not None:
            shutil.rmtree(staging, ignore_errors=True)
    return out / FILE


def _sb3_zip(model) -> bool:
    """Whether `model` names an SB3 zip (by its suffix, or a zip file not .npz/.json)."""
    import zipfile
    p = Path(model)
    if p.suffix == ".zip":
        return True
    try:
        return p.suffix not in (".npz", ".json") and p.is_file() and zipfile.is_zipfile(p)
    except OSError:
        return False


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
    ap.add_argument("out", help="the folder to write: new or empty (created if missing)")
    ap.add_argument("members", nargs="+", metavar="NAME=MODEL.npz[:FIELD=VALUE,...]",
                    help="members in order; rules are RulesConfig fields, JSON values")
    ap.add_argument("--note", default=None, help="a line kept in the family file")
    ap.add_argument("--overwrite", action="store_true",
                    help="replace OUT where it holds a family folder (and nothing else)")
    a = ap.parse_args(argv)
    try:
        path = write_family(a.out, [parse_member(m) for m in a.members], a.note, a.overwrite)
    except ValueError as err:          # bad input: exit 2, one line, nothing written
        print(f"{ap.prog}: error: {' '.join(str(err).split())}", file=sys.stderr)
        raise SystemExit(2) from None
    except OSError as err:             # OUT cannot be written, a model may not be read: exit 1
        where = "" if err.filename is None else f"{str(err.filename)!r}: "
        print(f"{ap.prog}: error: {where}{' '.join(str(err.strerror or err).split())}",
              file=sys.stderr)
        raise SystemExit(1) from None
    except KeyboardInterrupt:
        print(f"{ap.prog}: interrupted; nothing was written", file=sys.stderr)
        raise SystemExit(130) from None
    print(f"{path}: play it as learned:family={path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
