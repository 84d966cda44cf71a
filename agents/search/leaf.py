"""The leaf value net of `search:leaf=...` (spec.py; nertz_env/core/leaf_value.py plays it).

leaf=value reads the shipped net, LEAF_FILE (agents/search/leaf_value.npz with its .json);
leaf=PATH.npz a net of one's own (train/leaf_value.py writes them into its --out). Either is
the project's safe model format (agents/learned/weights.py load_weights: capped, no code
runs): a "nertz-policy" MLP reading the 791-value nertz_v0 observation into ONE unmasked
output, its relative points to come, with provenance "role": "leaf-value". Anything else is
refused in one line when the agent is made, before any play.
"""
from __future__ import annotations

from pathlib import Path

from nertz_env.core.leaf_value import value_arrays
from nertz_env.core.net_policy import NetArrays
from nertz_env.core.observe import OBS_DIM

LEAF_FILE = Path(__file__).with_name("leaf_value.npz")


def leaf_problem(meta: dict) -> str | None:
    """Why a safe-format model (load_weights' meta) is not a leaf value net, or None."""
    arch = meta["architecture"]
    if meta.get("observation") not in (None, "v0") or meta["observation_size"] != OBS_DIM:
        return (f"it reads the {meta.get('observation') or 'v0'} observation "
                f"({meta['observation_size']} values), not the {OBS_DIM}-value v0 one")
    if meta["action_size"] != 1 or arch["action_net"] != "unmasked":
        return (f"it has {meta['action_size']} {arch['action_net']} outputs (a move "
                "policy?), not one unmasked value")
    role = (meta.get("provenance") or {}).get("role")
    if role != "leaf-value":
        return ("it has no provenance role" if role is None else
                f"its provenance role is {role!r}") + ", not 'leaf-value'"
    return None


def load_leaf(value: str, name: str) -> NetArrays:
    """The NetArrays of leaf=`value` (value or PATH.npz) for agent `name`; ValueError (one
    line, naming the agent, leaf= and the file) for a file that is missing, unreadable, not
    the safe format or not a leaf value net (leaf_problem)."""
    from ..learned.weights import load_weights
    path = LEAF_FILE if value == "value" else Path(value)
    where = f"agent {name!r}: leaf={value}"
    if value == "value" and not LEAF_FILE.exists():
        raise ValueError(f"{where}: no leaf value net is shipped ({LEAF_FILE.name} beside "
                         "agents/search/leaf.py); give a leaf net's PATH.npz (python -m "
                         "train.leaf_value writes one)")
    try:
        meta, arrays = load_weights(path)
    except ValueError as err:        # load_weights' words name the file (and which one)
        why = str(err).removeprefix(f"model {str(path)!r}: ")
        raise ValueError(f"{where}: {why}".replace("\n", "\\n")) from None
    problem = leaf_problem(meta)
    if problem:
        raise ValueError(f"{where}: {str(path)!r} is not a leaf value net: {problem} (a leaf "
                         f"net is a {OBS_DIM}-value v0 MLP with one unmasked output and "
                         "provenance role leaf-value, as train/leaf_value.py writes)")
    n = len(meta["architecture"]["hidden"])
    hidden = [(arrays[f"hidden{i}_weight"].T, arrays[f"hidden{i}_bias"]) for i in range(n)]
    return value_arrays(hidden, arrays["action_weight"], arrays["action_bias"],
                        meta["architecture"]["activation"])
