"""The grammar of agent specs above the core bots: KIND[:OPTIONS] strings and lists of them.

Core bots (random, greedy, heuristic:...) are parsed by nertz_env/bot_specs.py, the one parser
of their specs; this module adds the one parser of the model kinds' options,
PATH[,KEY=VALUE...] (ppo:, rllib:; learned builds on ppo:), which agents/registry.py and
agents/learned/rllib.py both use. Builds on nertz_env.bot_specs only; never imports
registry, learned or any optional dependency.
"""
from __future__ import annotations

from nertz_env.bot_specs import CORE_KINDS, ascii_int, nearest, spec_options, split_specs

AGENT_KINDS = (*CORE_KINDS, "ppo", "learned", "rllib", "pair", "search")
"""Every agent kind (agents/registry.py KINDS): the word before a spec's first ':'."""

__all__ = ["AGENT_KINDS", "ascii_int", "checked_options", "nearest", "path_options",
           "spec_options", "split_lineup", "split_specs"]


def split_lineup(text: str) -> list:
    """'greedy+heuristic:style=cautious' -> ['greedy', 'heuristic:style=cautious'] (an
    experiment's opponents, A+B): a '+' starts a new spec only where the text after it
    starts with an agent kind (AGENT_KINDS, then ':' or the end of that spec), so a '+'
    inside a spec stays there: 'ppo:M.npz,constraint=useful-shifts+never-withhold' is one
    spec (constraints join with '+', agents/constraints.py)."""
    out = []
    for part in text.split("+"):
        kind = part.strip().partition(":")[0]
        if out and kind not in AGENT_KINDS:
            out[-1] += "+" + part
        else:
            out.append(part)
    return [p.strip() for p in out]


def checked_options(spec: str, text: str, kind: str, allowed: tuple) -> dict:
    """KEY=VALUE,... -> {key: value}, each key one of `allowed`; ValueError naming the spec
    (an unknown option with the nearest name: a misspelling, another case)."""
    opts = spec_options(spec, text)
    unknown = sorted(set(opts) - set(allowed))
    if unknown:
        raise ValueError(f"agent {spec!r}: unknown option {unknown[0]!r}"
                         f"{nearest(unknown[0], allowed)}; {kind} options are "
                         + ", ".join(allowed))
    return opts


def path_options(spec: str, rest: str, kind: str, allowed: tuple, example: str):
    """PATH[,KEY=VALUE...] of a model agent (ppo:, rllib:) -> (path, options, deterministic):
    an empty path, a path with a control character, an option not in `allowed` or a
    deterministic other than true/false is a ValueError naming the spec."""
    path, _, opts_text = rest.partition(",")
    path = path.strip()
    if not path:
        raise ValueError(f"agent {spec!r}: write {kind}:{example}")
    if not path.isprintable():          # the loaders' messages print the path as it is
        raise ValueError(f"agent {spec!r}: the path {path!r} has a character that does not "
                         f"print (a newline, a tab, ...); write {kind}:{example}")
    opts = checked_options(spec, opts_text, kind, allowed)
    det = opts.get("deterministic", "true").lower()
    if det not in ("true", "false"):
        raise ValueError(f"agent {spec!r}: deterministic={opts['deterministic']!r} must be "
                         "true or false")
    return path, opts, det == "true"
