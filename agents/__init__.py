"""Agents for nertz-env: the interface (base.py), the shipped bots (bots.py, rules in
docs/heuristics.md; their specs parsed by nertz_env/bot_specs.py), the model kinds' spec
options (specs.py), learned agents (learned/), make_agent (registry.py), matches (arena/),
their statistics and reports (stats/), training (training/), a person against the bots
(human/) and the `nertz` command (cli/)."""
from .base import Agent, SupportsAct
from .bots import STYLES, GreedyAgent, HeuristicAgent, RandomAgent, ScoredAgent, knob_vector
from .registry import make_agent

__all__ = ["Agent", "SupportsAct", "RandomAgent", "ScoredAgent", "GreedyAgent", "HeuristicAgent",
           "STYLES", "knob_vector", "make_agent"]
