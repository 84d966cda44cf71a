"""Opponents of the single-agent environment (`NertzGymEnv(opponents=...)`).

An opponent is anything with the agent interface `act(observation, action_mask) -> int`,
a plain callable with that signature, or a trained stable-baselines3 /
sb3-contrib model (anything with `predict`), wrapped in `FrozenPolicy` (`frozen_policy.py`,
re-exported here; its `on_illegal` says what an illegal prediction does: "raise" by default,
"wait" or "pass").

An opponent that sees its seat's information of the engine state (`seat_view = True` and
`act_view(view) -> int64 [n]`, agents/base.py; e.g. `search:` agents) is called with
`opponent.act_view(view)`, a nertz_env.seat_view.SeatView over the env's real engine and its
public memory (envs/memory_keeper.py), instead of act(): `is_viewer`, and `SeatRows` asks
every opponent seat of a step, viewers grouped into one act_view call per agent.
"""
from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ..actions import check_action_id
from .frozen_policy import ON_ILLEGAL, FrozenPolicy, check_model_spaces

__all__ = ["FrozenPolicy", "ON_ILLEGAL", "check_model_spaces", "for_table", "as_opponent",
           "opponents_per_seat", "is_viewer", "SeatRows"]


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


def is_viewer(agent) -> bool:
    """The agent is played with a SeatView (module docstring): `seat_view` is True and it has
    act_view."""
    return getattr(agent, "seat_view", False) is True and callable(getattr(agent, "act_view",
                                                                           None))


class SeatRows:
    """A batch callable for envs/seats.py SeatDriver.drive over one step's opponent rows:
    row k (table rows_t[k], seat rows_s[k]) goes to viewers[seat].act_view (one call per
    agent over all its rows, with view_of(rows_t, rows_s, obs, masks) -> SeatView), else to
    acts[seat](observation, mask) (copies), else (None) to fallback(mask) in row order. Every
    id is read by check_action_id naming "opponent at seat S"."""

    def __init__(self, acts: dict, viewers: dict, rows_t, rows_s, fallback, view_of):
        self.acts, self.viewers, self.fallback, self.view_of = acts, viewers, fallback, view_of
        self.rows_t = np.asarray(rows_t, np.int64)
        self.rows_s = [int(s) for s in rows_s]

    def __call__(self, obs, masks) -> np.ndarray:
        out = np.empty(len(self.rows_s), np.int64)
        int8 = masks.view(np.int8)
        groups = {}
        for k, s in enumerate(self.rows_s):
            viewer = self.viewers.get(s)
            if viewer is not None:
                groups.setdefault(id(viewer), (viewer, []))[1].append(k)
                continue
            act = self.acts.get(s)
            out[k] = self.fallback(int8[k]) if act is None else check_action_id(
                act(obs[k].copy(), int8[k].copy()), f"opponent at seat {s}")
        for viewer, ks in groups.values():
            ks = np.asarray(ks, np.int64)
            rows_s = np.asarray(self.rows_s, np.int64)[ks]
            ids = np.asarray(viewer.act_view(self.view_of(self.rows_t[ks], rows_s,
                                                          obs[ks].copy(), masks[ks].copy())))
            if ids.shape != (ks.size,):
                raise ValueError(f"opponent at seat {int(rows_s[0])}: act_view returned shape "
                                 f"{ids.shape}, expected ({ks.size},)")
            for j, k in enumerate(ks):
                out[k] = check_action_id(ids[j], f"opponent at seat {int(rows_s[j])}")
        return out
