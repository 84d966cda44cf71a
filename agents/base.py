"""The agent interface: one small protocol for a single seat and for batches.

    act(observation, action_mask) -> int                       one seat
    act_batch(observations, action_masks) -> int64 [n]        many seats at once

`observation` is the flat float32 vector of nertz_env/core/observe.py (OBS_DIM = 791) and
`action_mask` the int8/bool vector of the 322 actions of nertz_env/actions.py; batches stack
them on a first axis. Anything with `act` works as an opponent in NertzGymEnv and in
tournaments; `Agent` gives `act_batch` for free.

Agents whose play depends on rules the observation does not show (`learned`'s family) get
told the table by `for_table(config) -> Agent`; the play loops, the envs and the league call
it through `nertz_env.envs.opponents.for_table`, which passes any other object through.

Bots that also live inside the jitted core (random, greedy, heuristic styles) say so with
`core_policy() -> (kind, knobs)` (nertz_env/core/policies.py): tournaments and the vector env
then play them inside numba, never calling `act` per tick. Their `act` is the plain-Python
version of the same decision (agents/python_policies.py); tests hold the two equal.
"""
from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np


@runtime_checkable
class SupportsAct(Protocol):
    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int: ...


class Agent:
    """Base class: subclasses define `act`; `act_batch` loops over it (override for speed)."""

    name = "agent"

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        raise NotImplementedError

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """`act` per row; every id checked (no float or bool cast to an id in silence)."""
        from nertz_env.actions import check_action_id
        where = f"agent {self.name!r} act"
        return np.array([check_action_id(self.act(o, m), where=where)
                         for o, m in zip(observations, action_masks)], np.int64)

    def core_policy(self):
        """(kind, knobs int64 [12]) when the core can play this agent itself, else None."""
        return None

    def core_networks(self, config):
        """Per seat of `config`'s table, (policy, constraint bits) of the network this agent
        plays there, for the play loop's net kernel (agents/learned/core_play.py, which
        checks the policy is one it plays exactly), or None: played from Python."""
        return None

    def for_table(self, config) -> "Agent":
        """The agent that plays a table of `config` (a RulesConfig): itself, unless its play
        depends on a rule the observation does not show (`learned`'s family picks its member
        by R16 stacking: agents/learned/family.py). Callers that know the table call it."""
        return self

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


def check_batch(observations, action_masks):
    """Validate a batch: (n, OBS_DIM) observations and (n, N_ACTIONS) masks."""
    from nertz_env.actions import N_ACTIONS
    from nertz_env.core.observe import OBS_DIM
    obs = np.asarray(observations)
    masks = np.asarray(action_masks)
    if obs.ndim != 2 or obs.shape[1] != OBS_DIM:
        raise ValueError(f"observations has shape {obs.shape}; expected (n, {OBS_DIM})")
    if masks.shape != (obs.shape[0], N_ACTIONS):
        raise ValueError(f"action_masks has shape {masks.shape}; expected ({obs.shape[0]}, {N_ACTIONS})")
    return obs, masks
