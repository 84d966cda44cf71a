"""The readable table of docs/api.md: `Table` over one table of an `Engine` (table.py), positions
read from and written to layout dicts (positions.py), the rule that forbids a move in one line
(explain.py), and whole games to a target score with core bots (games.py).

Builds on config, encoding, actions, bot_specs and engine; never imports envs, replay or agents.
"""
from .table import Table, TickResult, layout_of

__all__ = ["Table", "TickResult", "layout_of"]
