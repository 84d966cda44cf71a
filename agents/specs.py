"""The grammar of agent specs above the core bots: KIND[:OPTIONS] strings and lists of them.

Core bots (random, greedy, heuristic:...) are parsed by nertz_env/bot_specs.py, the one parser
of their specs; this module adds the one parser of the model kinds' options,
PATH[,KEY=VALUE...] (ppo:, rllib:; learned builds on ppo:), which agents/registry.py and
agents/learned/rllib.py both use. Builds on nertz_env.bot_specs only; never imports
registry, learned or any optional dependency.
"""
from __future__ import annotations

from nertz_env.bot_specs import spec_options, split_specs

__all__ = ["checked_options", "path_options", "spec_options", "split_specs"]


def checked_options(spec: str, text: str, kind: str, allowed: tuple) -> dict:
    """KEY=VALUE,... -> {key: value}, each key one of `allowed`; ValueError naming the spec."""
    opts = spec_options(spec, text)
    unknown = sorted(set(opts) - set(allowed))
    if unknown:
        raise ValueError(f"agent {spec!r}: unknown option {unknown[0]!r}; {kind} options are "
                         + ", ".join(allowed))
    return opts


def path_options(spec: str, rest: str, kind: str, allowed: tuple, example: str):
    """PATH[,KEY=VALUE...] of a model agent (ppo:, rllib:) -> (path, options, deterministic):
    an empty path, an option not in `allowed` or a deterministic other than true/false is a
    ValueError naming the spec."""
    path, _, opts_text = rest.partition(",")
    path = path.strip()
    if not path:
        raise ValueError(f"agent {spec!r}: write {kind}:{example}")
    opts = checked_options(spec, opts_text, kind, allowed)
    det = opts.get("deterministic", "true").lower()
    if det not in ("true", "false"):
        raise ValueError(f"agent {spec!r}: deterministic={opts['deterministic']!r} must be "
                         "true or false")
    return path, opts, det == "true"
