"""Agents for nertz-env: the interface (base.py), the shipped bots (bots.py, rules in
docs/heuristics.md), learned agents (learned.py), make_agent (registry.py), tournaments
(tournament.py), their statistics (stats.py) and reports (report.py)."""
from .base import Agent, SupportsAct
from .bots import STYLES, GreedyAgent, HeuristicAgent, RandomAgent, ScoredAgent, knob_vector
from .registry import make_agent

__all__ = ["Agent", "SupportsAct", "RandomAgent", "ScoredAgent", "GreedyAgent", "HeuristicAgent",
           "STYLES", "knob_vector", "make_agent"]
