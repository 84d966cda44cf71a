"""`pair:NERTZ&STREAM`: a two-player team (R4) whose partners are different agents, by role.

NERTZ plays the seat that holds the team's Nertz pile this hand, STREAM the seat that holds the
Stream. Roles swap every hand by default (R4 `alternate_roles`) and the agents follow the roles,
not the seats, so `pair:learned&heuristic` and `pair:heuristic&learned` differ only in which
partner holds the Stream: the question "should the stronger partner hold the Stream?" becomes
two arms of one experiment on the same deals (docs/experiments/roles.md).

    pair:learned&heuristic:style=river-builder     learned holds the Nertz pile
    pair:heuristic&ppo:model.npz,constraint=none    each member any agent spec without '&'

Where it plays:
- tournaments and experiments: each table's seats get the member of their role when the
  roles are known before play (one hand per table, or `alternate_roles=false`), so each
  member plays where it would alone (core bots and nets inside numba: agents/arena/play.py
  `assign_roles`); in whole games with roles swapping, the pair is played from Python by
  `act_batch`, which reads each row's role from the observation (holds the Stream);
- anywhere else an agent plays (the envs' opponents, the human table), by `act_batch`.
A pair at a solo seat is a ValueError: a solo player holds both roles.
"""
from __future__ import annotations

import numpy as np

from nertz_env.core.observe import OFF_SELF
from nertz_env.envs.opponents import for_table

from .base import Agent, check_batch

HOLDS_STREAM = OFF_SELF + 3     # observation: this seat holds its team's Stream this hand
TWO_PLAYER = OFF_SELF + 5       # observation: this seat's team has two players


class Pair(Agent):
    """Two agents sharing a two-player team: `nertz` at the seat holding the Nertz pile,
    `stream` at the seat holding the Stream (module docstring)."""

    def __init__(self, nertz, stream, name=None):
        for role, a in (("nertz", nertz), ("stream", stream)):
            if not hasattr(a, "act_batch") or isinstance(a, Pair):
                raise ValueError(f"pair member {role}={a!r} must be an agent other than a pair")
        self.nertz, self.stream = nertz, stream
        self.name = name or f"pair:{nertz.name}&{stream.name}"

    @property
    def members(self) -> tuple:
        return self.nertz, self.stream

    def act_batch(self, observations, action_masks) -> np.ndarray:
        obs, masks = check_batch(observations, action_masks)
        if not (obs[:, TWO_PLAYER] > 0.5).all():
            raise ValueError(f"agent {self.name!r} plays two-player teams only (R4); "
                             "a solo seat holds both roles")
        stream = obs[:, HOLDS_STREAM] > 0.5
        out = np.empty(len(obs), np.int64)
        for member, rows in ((self.nertz, ~stream), (self.stream, stream)):
            if rows.any():
                out[rows] = member.act_batch(obs[rows], masks[rows])
        return out

    def act(self, observation, action_mask) -> int:
        return int(self.act_batch(np.asarray(observation)[None], np.asarray(action_mask)[None])[0])

    def for_table(self, config) -> "Pair":
        return Pair(for_table(self.nertz, config), for_table(self.stream, config), self.name)


def parse_pair(spec: str, rest: str, seed, make_agent) -> Pair:
    """The Pair of `pair:NERTZ&STREAM` (rest = 'NERTZ&STREAM')."""
    parts = rest.split("&")
    if len(parts) != 2 or not all(p.strip() for p in parts):
        raise ValueError(f"agent {spec!r}: a pair is pair:NERTZ&STREAM, two agent specs joined "
                         "by one '&' (the first holds the Nertz pile, the second the Stream), "
                         "e.g. pair:learned&heuristic:style=river-builder")
    nertz, stream = (make_agent(p.strip(), seed=seed) for p in parts)
    return Pair(nertz, stream, name=spec)
