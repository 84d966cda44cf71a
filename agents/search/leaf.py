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


def load_leaf(value: str, name: str) -> NetArrays:
    """The NetArrays of leaf=`value` (value or PATH.npz) for agent `name`; ValueError (one
    line) naming the file and what is wrong."""
    from ..learned.weights import load_weights
    path = LEAF_FILE if value == "value" else Path(value)
    if value == "value" and not LEAF_FILE.exists():
        raise ValueError(f"agent {name!r}: leaf=value: no leaf value net is shipped "
                         f"({LEAF_FILE.name} beside agents/search/leaf.py); give a leaf net's "
                         "PATH.npz (python -m train.leaf_value writes one)")
    meta, arrays = load_weights(path)
    prov = meta.get("provenance") or {}
    if (meta["action_size"] != 1 or meta["architecture"]["action_net"] != "unmasked"
            or meta["observation_size"] != OBS_DIM
            or meta.get("observation") not in (None, "v0")
            or prov.get("role") != "leaf-value"):
        raise ValueError(f"agent {name!r}: leaf={value}: {str(path)!r} is not a leaf value "
                         f"net (a {OBS_DIM}-value v0 MLP with one unmasked output and "
                         "provenance role leaf-value, as train/leaf_value.py writes)")
    n = len(meta["architecture"]["hidden"])
    hidden = [(arrays[f"hidden{i}_weight"].T, arrays[f"hidden{i}_bias"]) for i in range(n)]
    return value_arrays(hidden, arrays["action_weight"], arrays["action_bias"],
                        meta["architecture"]["activation"])
