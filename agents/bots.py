"""The shipped bots: `random`, `greedy` and the tunable `heuristic` styles.

Their decision rules are written down in docs/heuristics.md; the knob table there is STYLES
in nertz_env/bot_specs.py, which also parses their spec strings (make_agent builds these
classes from its parse). Every bot also runs inside the jitted core (`core_policy()`), which
is how tournaments and the vector env's opponents play them.
"""
from __future__ import annotations

import numpy as np

from nertz_env.bot_specs import (HEURISTIC_STYLES, KNOB_NAMES, STYLES, WITHHOLD_STREAM,  # noqa: F401
                                check_heuristic_style, knob_vector)
from nertz_env.core.policies import N_KNOBS, POLICY_RANDOM, POLICY_SCORED

from .base import Agent


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
    """A heuristic style (not greedy) with knob overrides (docs/heuristics.md)."""
    return ScoredAgent(check_heuristic_style(style), name=name, **knobs)
