"""The bots that live inside the jitted core, named by plain strings: `random`, `greedy` and
the `heuristic` styles (docs/heuristics.md). This is where a spec string becomes the two
numbers and the knob row that core/policies.py plays; `agents` builds its Agent objects on
it, and the vector envs' `opponents=` read it directly (nertz_env never imports agents).

    core_bot("heuristic:style=cautious,flip=20") -> (POLICY_SCORED, knobs int64 [12], name)
"""
from __future__ import annotations

import numpy as np

from .core.policies import (N_KNOBS, POLICY_RANDOM, POLICY_SCORED, WITHHOLD_ALWAYS,
                            WITHHOLD_KEEP, WITHHOLD_NEVER, WITHHOLD_WHEN_USEFUL)

KNOB_NAMES = ("lake_nertz", "lake_stream", "lake_river", "empty_bonus", "nertz_river",
              "waste_river", "waste_river_useful", "shift_empty", "shift_expose", "flip",
              "withhold_stream", "withhold_river")
assert len(KNOB_NAMES) == N_KNOBS

#         lake_nertz stream river empty nertz_river waste useful s_empty s_expose flip ws wr
STYLES = {
    "greedy":        (100, 100, 100, 0, 50, -1, -1, -1, -1, 10, WITHHOLD_ALWAYS, 0),
    "balanced":      (100, 98, 97, 2, 90, 5, 80, 85, 75, 10, WITHHOLD_WHEN_USEFUL, 1),
    "lake-rush":     (100, 95, 95, 0, 50, -1, 40, 30, 25, 10, WITHHOLD_ALWAYS, 0),
    "river-builder": (95, 50, 30, 40, 100, 20, 88, 90, 85, 10, WITHHOLD_WHEN_USEFUL, 1),
    "cautious":      (100, 98, 97, 2, 90, 5, 80, 85, 75, 10, WITHHOLD_NEVER, 1),
}
HEURISTIC_STYLES = tuple(s for s in STYLES if s != "greedy")
WITHHOLD_STREAM = {"always": WITHHOLD_ALWAYS, "when-useful": WITHHOLD_WHEN_USEFUL,
                   "never": WITHHOLD_NEVER, "keep": WITHHOLD_KEEP}
CORE_KINDS = ("random", "greedy", "heuristic")
KNOB_LIMIT = 1_000_000          # knob values are scores; far beyond any sensible weight


def knob_vector(style: str = "balanced", **overrides) -> np.ndarray:
    """A style's knobs (docs/heuristics.md) with named knobs replaced; ValueError otherwise."""
    if style not in STYLES:
        raise ValueError(f"style {style!r} is unknown; styles are {', '.join(STYLES)}")
    knobs = np.array(STYLES[style], np.int64)
    for name, value in overrides.items():
        key = name[2:] if name.startswith("k_") else name
        if key not in KNOB_NAMES:
            raise ValueError(f"knob {name!r} is unknown; knobs are {', '.join(KNOB_NAMES)}")
        if key == "withhold_stream" and isinstance(value, str) and value in WITHHOLD_STREAM:
            value = WITHHOLD_STREAM[value]
        try:
            if isinstance(value, bool) or isinstance(value, float):
                raise TypeError
            v = int(value)
        except (TypeError, ValueError):
            allowed = ("always, when-useful, never, keep or 0/1/2/3" if key == "withhold_stream"
                       else "an integer")
            raise ValueError(f"knob {key}={value!r} must be {allowed}") from None
        if key == "withhold_stream" and v not in (0, 1, 2, 3):
            raise ValueError(f"knob withhold_stream={value!r} must be always, when-useful, "
                             "never, keep or 0/1/2/3")
        if key == "withhold_river" and v not in (0, 1):
            raise ValueError(f"knob withhold_river={value!r} must be 0 or 1")
        if not -KNOB_LIMIT <= v <= KNOB_LIMIT:
            raise ValueError(f"knob {key}={value!r} must be an integer from {-KNOB_LIMIT} to {KNOB_LIMIT}")
        knobs[KNOB_NAMES.index(key)] = v
    return knobs


def spec_options(spec: str, text: str) -> dict:
    """'style=cautious,flip=20' -> {'style': 'cautious', 'flip': '20'}; ValueError naming spec."""
    out = {}
    for part in filter(None, text.split(",")):
        key, eq, value = part.partition("=")
        if not eq or not key.strip():
            raise ValueError(f"agent {spec!r}: option {part!r} must be written key=value")
        if key.strip() in out:
            raise ValueError(f"agent {spec!r}: option {key.strip()!r} is given twice")
        out[key.strip()] = value.strip()
    return out


def core_bot(spec: str):
    """(kind, knobs int64 [12], name) of a core bot spec: random, greedy or
    heuristic[:style=S,KNOB=V,...]. Anything else is a ValueError naming the spec."""
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"bot spec {spec!r} must be a non-empty string such as 'random', "
                         "'greedy', 'heuristic:style=balanced'")
    spec = spec.strip()
    kind, _, rest = spec.partition(":")
    if kind == "random":
        if rest:
            raise ValueError(f"agent {spec!r}: random takes no options")
        return POLICY_RANDOM, np.zeros(N_KNOBS, np.int64), "random"
    if kind == "greedy":
        if rest:
            raise ValueError(f"agent {spec!r}: greedy takes no options (use heuristic:... knobs)")
        return POLICY_SCORED, knob_vector("greedy"), "greedy"
    if kind == "heuristic":
        opts = spec_options(spec, rest)
        style = opts.pop("style", "balanced")
        if style not in HEURISTIC_STYLES:
            raise ValueError(f"agent {spec!r}: style {style!r} is unknown; heuristic styles are "
                             + ", ".join(HEURISTIC_STYLES))
        try:
            knobs = knob_vector(style, **opts)
        except ValueError as err:
            raise ValueError(f"agent {spec!r}: {err}") from None
        return POLICY_SCORED, knobs, spec if rest else "heuristic"
    raise ValueError(f"bot {spec!r}: unknown kind {kind!r}; the core plays {', '.join(CORE_KINDS)}")
