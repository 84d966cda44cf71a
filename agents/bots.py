"""The shipped bots: `random`, `greedy` and the tunable `heuristic` styles.

Their decision rules are written down in docs/heuristics.md; the knob table there is STYLES
here. Every bot also runs inside the jitted core (`core_policy()`), which is how tournaments
and the vector env's opponents play them.
"""
from __future__ import annotations

import numpy as np

from nertz_env.core.policies import (N_KNOBS, POLICY_RANDOM, POLICY_SCORED, WITHHOLD_ALWAYS,
                                     WITHHOLD_NEVER, WITHHOLD_WHEN_USEFUL)

from .base import Agent

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
                   "never": WITHHOLD_NEVER}


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
            v = int(value)
        except (TypeError, ValueError):
            allowed = "always, when-useful, never or 0/1/2" if key == "withhold_stream" else "an integer"
            raise ValueError(f"knob {key}={value!r} must be {allowed}") from None
        if key == "withhold_stream" and v not in (0, 1, 2):
            raise ValueError(f"knob withhold_stream={value!r} must be always, when-useful, never or 0/1/2")
        if key == "withhold_river" and v not in (0, 1):
            raise ValueError(f"knob withhold_river={value!r} must be 0 or 1")
        knobs[KNOB_NAMES.index(key)] = v
    return knobs


class RandomAgent(Agent):
    """Uniformly random legal moves from its own seeded generator (in the core: the table's
    policy generator)."""

    name = "random"

    def __init__(self, seed=None):
        self.rng = np.random.default_rng(seed)

    def act(self, observation, action_mask) -> int:
        legal = np.flatnonzero(np.asarray(action_mask))
        if legal.size == 0:
            raise ValueError("action_mask has no legal action (Wait, id 0, is always legal)")
        return int(self.rng.choice(legal))

    def core_policy(self):
        return POLICY_RANDOM, np.zeros(N_KNOBS, np.int64)


class ScoredAgent(Agent):
    """`greedy` or a `heuristic` style: the integer-score rule of docs/heuristics.md."""

    def __init__(self, style: str = "balanced", name: str | None = None, **knobs):
        self.style = style
        self.knobs = knob_vector(style, **knobs)
        if name is None:
            name = "greedy" if style == "greedy" and not knobs else f"heuristic:style={style}"
            if knobs:
                name += "," + ",".join(f"{k}={v}" for k, v in knobs.items())
        self.name = name

    def act(self, observation, action_mask) -> int:
        from .python_policies import choose_action
        return int(choose_action(observation, action_mask, self.knobs))

    def core_policy(self):
        return POLICY_SCORED, self.knobs.copy()


def GreedyAgent() -> ScoredAgent:
    """Lake first, then Nertz to River, then flip."""
    return ScoredAgent("greedy", name="greedy")


def HeuristicAgent(style: str = "balanced", name: str | None = None, **knobs) -> ScoredAgent:
    if style not in HEURISTIC_STYLES:
        raise ValueError(f"style {style!r} is unknown; heuristic styles are "
                         + ", ".join(HEURISTIC_STYLES))
    return ScoredAgent(style, name=name, **knobs)
