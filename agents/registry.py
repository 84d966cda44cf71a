"""make_agent(spec): agents from short strings (the CLI's and the tournament's names).

    random                                   uniform legal moves
    greedy                                   Lake first, then Nertz to River, then flip
    heuristic                                heuristic:style=balanced
    heuristic:style=cautious,withhold_stream=when-useful,flip=20
    ppo:path/to/model.zip                    a saved MaskablePPO model (needs [train])

Styles and knobs: docs/heuristics.md (nertz_env/bots.py STYLES).
"""
from __future__ import annotations

from nertz_env.bots import spec_options as _options

from .base import Agent, SupportsAct
from .bots import GreedyAgent, HeuristicAgent, RandomAgent, ScoredAgent

KINDS = ("random", "greedy", "heuristic", "ppo")




def split_specs(text: str) -> list:
    """'random,heuristic:style=cautious,flip=20,greedy' -> ['random',
    'heuristic:style=cautious,flip=20', 'greedy']: a key=value part without ':' belongs to
    the agent before it."""
    out = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        if "=" in part and ":" not in part:
            if not out:
                raise ValueError(f"agents {text!r}: option {part!r} follows no agent")
            out[-1] += "," + part
        else:
            out.append(part)
    if not out:
        raise ValueError(f"agents {text!r}: name at least one agent, e.g. random,greedy,heuristic")
    return out


def make_agent(spec, seed=None):
    """An agent from a spec string (see the module docstring); Agent objects pass through."""
    if isinstance(spec, SupportsAct):
        return spec
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"agent spec {spec!r} must be a non-empty string such as "
                         "'random', 'greedy', 'heuristic:style=balanced', 'ppo:model.zip'")
    spec = spec.strip()
    kind, _, rest = spec.partition(":")
    if kind == "random":
        if rest:
            raise ValueError(f"agent {spec!r}: random takes no options")
        return RandomAgent(seed)
    if kind == "greedy":
        if rest:
            raise ValueError(f"agent {spec!r}: greedy takes no options (use heuristic:... knobs)")
        return GreedyAgent()
    if kind == "heuristic":
        opts = _options(spec, rest)
        style = opts.pop("style", "balanced")
        try:
            return HeuristicAgent(style, name=spec if rest else "heuristic", **opts)
        except ValueError as err:
            raise ValueError(f"agent {spec!r}: {err}") from None
    if kind == "ppo":
        if not rest:
            raise ValueError(f"agent {spec!r}: write ppo:path/to/model.zip")
        from .learned import PPOAgent
        return PPOAgent(rest)
    raise ValueError(f"agent {spec!r}: unknown kind {kind!r}; kinds are {', '.join(KINDS)}")


__all__ = ["split_specs", "Agent", "RandomAgent", "ScoredAgent", "GreedyAgent", "HeuristicAgent", "make_agent",
           "KINDS"]
