"""Opponents of the single-agent environment (`NertzGymEnv(opponents=...)`).

An opponent is anything with the agent interface `act(observation, action_mask) -> int`,
a plain callable with that signature, or a trained stable-baselines3 /
sb3-contrib model (anything with `predict`), wrapped in `FrozenPolicy` (`frozen_policy.py`,
re-exported here; its `on_illegal` says what an illegal prediction does: "raise" by default,
"wait" or "pass").
"""
from __future__ import annotations

from collections.abc import Mapping

from .frozen_policy import ON_ILLEGAL, FrozenPolicy, check_model_spaces

__all__ = ["FrozenPolicy", "ON_ILLEGAL", "check_model_spaces", "for_table", "as_opponent",
           "opponents_per_seat"]


def for_table(agent, config):
    """`agent.for_table(config)` where the agent has it (agents/base.py: an agent whose play
    depends on rules the observation does not show, such as `learned`'s family), else the
    agent itself."""
    bind = getattr(agent, "for_table", None)
    return bind(config) if callable(bind) else agent


def as_opponent(agent, where: str):
    """The act(observation, action_mask) callable of one opponent spec, or None for the
    environment's uniformly random legal moves: an object with `act`, a model with `predict`
    (wrapped in FrozenPolicy with its defaults: an illegal prediction raises; wrap it yourself
    with on_illegal="wait" otherwise), a callable, or None. Anything else is a ValueError naming
    `where`."""
    if agent is None:
        return None
    act = getattr(agent, "act", None)
    if callable(act):
        return act
    if callable(getattr(agent, "predict", None)):
        return FrozenPolicy(agent).act
    if callable(agent):
        return agent
    raise ValueError(f"{where} has no act(observation, action_mask) method (nor a model's "
                     f"predict): got {type(agent).__name__}")


def opponents_per_seat(opponents, others: list) -> dict:
    """seat -> (spec, where) for every opponent seat in `others`, from what a user gave as
    `opponents=` (both NertzGymEnv and the vector envs): None (every seat None: the env's
    default), a mapping seat -> spec (seats left out None), a list/tuple with one spec per
    opponent seat in seat order, or one spec for every seat. `where` names the entry as the
    user wrote it, for error messages. Bad seats or lengths are ValueErrors."""
    if opponents is None:
        return {s: (None, "opponents") for s in others}
    if isinstance(opponents, Mapping):
        bad = [k for k in opponents if isinstance(k, bool) or k not in others]
        if bad:
            raise ValueError(f"opponents: seats {bad} are not opponent seats; they are {others}")
        return {s: (opponents.get(s), f"opponents[{s}]") for s in others}
    if isinstance(opponents, (list, tuple)):
        if len(opponents) != len(others):
            raise ValueError(f"opponents: give one agent per other seat ({len(others)} opponent "
                             f"seats: {others}), got {len(opponents)}")
        return {s: (spec, f"opponents[{i}]") for i, (s, spec) in enumerate(zip(others, opponents))}
    return {s: (opponents, "opponents") for s in others}
