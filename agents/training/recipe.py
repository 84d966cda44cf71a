"""Recipes as files: `nertz train --spec RECIPE.toml`. A recipe is TOML whose keys are `nertz
train`'s option names as TrainConfig spells them flat, config.json's keys (parts.py FIELDS:
`learner = "lean"`, `timesteps = 12000000`, `net_arch = [128, 128]`, `opponents =
["heuristic:style=river-builder", "greedy"]`), plus an optional `[recipe]` table of `name`
and `note`. Its values become the command's defaults; the
options given on the command line override them. The run folder (--out) and --resume are the
command line's only: a recipe says how a model is made, not where one run of it goes.

Read as experiment specs are (agents/arena/experiment_spec.py): a capped file, its nesting
counted before tomllib parses it, every refusal one line naming the file and the key.
The shipped models' recipes are in train/recipes/."""
from __future__ import annotations

from .parts import FIELDS, flat_defaults

NOT_IN_A_RECIPE = {"out": "the run folder is the command line's: give --out",
                   "resume": "a recipe starts a fresh run; --resume continues a checkpoint's "
                             "own config"}
INFO_KEYS = ("name", "note")                  # the optional [recipe] table
RECIPE_KEYS = tuple(n for n in FIELDS if n not in NOT_IN_A_RECIPE)
_OPTIONAL_INT = ("max_ticks", "n_epochs", "torch_threads", "bc_rows")
_OPTIONAL_STR = ("init", "constraint", "observation")


def _default(name):
    return flat_defaults()[name]


def _kind(name) -> str:
    """What a recipe's value for `name` must be, in words."""
    if name in _OPTIONAL_INT:
        return "an integer"
    if name in _OPTIONAL_STR:
        return "a string"
    if name == "net_arch":
        return "a list of integers (layer widths), e.g. [128, 128]"
    if name == "opponents":
        return 'a list of agent spec strings, e.g. ["heuristic:style=river-builder", "greedy"]'
    if name == "formats":
        return "a preset's name (a string) or a list of tables"
    d = _default(name)
    return {bool: "true or false", int: "an integer", float: "a number",
            str: "a string"}[type(d)]


def _typed(name, v):
    """`v` as TrainConfig's field `name` takes it, or None when its type is wrong."""
    def is_int(x):
        return isinstance(x, int) and not isinstance(x, bool)
    if name in _OPTIONAL_INT:
        return v if is_int(v) else None
    if name in _OPTIONAL_STR:
        return v if isinstance(v, str) else None
    if name == "net_arch":
        return list(v) if isinstance(v, list) and all(is_int(x) for x in v) else None
    if name == "opponents":
        return list(v) if isinstance(v, list) and all(isinstance(x, str) for x in v) else None
    if name == "formats":
        if isinstance(v, str) or (isinstance(v, list) and all(isinstance(x, dict) for x in v)):
            return v
        return None
    d = _default(name)
    if isinstance(d, bool):
        return v if isinstance(v, bool) else None
    if isinstance(d, int):
        return v if is_int(v) else None
    if isinstance(d, float):
        return float(v) if is_int(v) or isinstance(v, float) else None
    return v if isinstance(v, str) else None


def recipe_from_dict(data: dict, where: str = "recipe") -> dict:
    """{TrainConfig field: value} from a recipe's parsed TOML; ValueError (one line naming
    `where` and the key) for an unknown key, a key a recipe may not set or a wrong type."""
    info = data.get("recipe", {})
    if not isinstance(info, dict):
        raise ValueError(f"{where}: 'recipe' must be a table ([recipe]) of "
                         + ", ".join(INFO_KEYS))
    extra = sorted(set(info) - set(INFO_KEYS))
    if extra:
        raise ValueError(f"{where}: unknown key {extra[0][:60]!r} in [recipe]; its keys are "
                         + ", ".join(INFO_KEYS))
    for k, v in info.items():
        if not isinstance(v, str):
            raise ValueError(f"{where}: recipe.{k} must be a string")
    out = {}
    for key, value in data.items():
        if key == "recipe":
            continue
        if key in NOT_IN_A_RECIPE:
            raise ValueError(f"{where}: {key!r} cannot be in a recipe ({NOT_IN_A_RECIPE[key]})")
        if key not in FIELDS:
            raise ValueError(f"{where}: unknown key {key[:60]!r}; keys are the options of "
                             "nertz train as TrainConfig spells them: " + ", ".join(RECIPE_KEYS)
                             + " (and a [recipe] table of name, note)")
        typed = _typed(key, value)
        if typed is None:
            raise ValueError(f"{where}: {key} must be {_kind(key)}, not "
                             f"{type(value).__name__}")
        out[key] = typed
    return out


def read_recipe_toml(path) -> dict:
    """The parsed TOML of the recipe file `path`, read as experiment specs are: capped at
    their size, its nesting counted before tomllib parses it (64 levels, as the JSON
    readers); ValueError, one line naming the file, for anything else."""
    from nertz_env.files.spec_toml import read_toml

    from ..arena.limits import MAX_SPEC_BYTES
    return read_toml(path, "recipe", MAX_SPEC_BYTES)


def load_recipe(path) -> dict:
    """{TrainConfig field: value} from the recipe file `path` (read_recipe_toml), its keys
    and types checked (recipe_from_dict)."""
    return recipe_from_dict(read_recipe_toml(path), f"recipe {str(path)!r}")


__all__ = ["INFO_KEYS", "NOT_IN_A_RECIPE", "RECIPE_KEYS", "load_recipe", "recipe_from_dict"]
