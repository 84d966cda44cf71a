"""Opponents of the single-agent environment (`NertzGymEnv(opponents=...)`).

An opponent is anything with the agent interface `act(observation, action_mask) -> int`
(issue 4), a plain callable with that signature, or a trained stable-baselines3 /
sb3-contrib model (anything with `predict`), wrapped here in `FrozenPolicy`.
"""
from __future__ import annotations

import inspect

import numpy as np

from .actions import WAIT


class FrozenPolicy:
    """A trained SB3 / sb3-contrib model as an opponent: `act(observation, action_mask) -> int`.

    `act` calls `model.predict(observation, action_masks=mask, deterministic=...)` when the
    model's `predict` takes `action_masks` (MaskablePPO and other sb3-contrib maskable
    algorithms), else `model.predict(observation, deterministic=...)`. The model is frozen:
    it is never trained here. A predicted action that is not legal now (an unmasked model can
    pick one) is played as Wait (action 0) instead, so the opponent is never penalized under
    R31; `illegal` counts those replacements. The observation must be the one the model was
    trained on (the flat float32 vector of `nertz_env/core/observe.py`, as in NertzGymEnv)."""

    def __init__(self, model, deterministic: bool = True):
        predict = getattr(model, "predict", None)
        if not callable(predict):
            raise ValueError(f"FrozenPolicy needs a model with predict(observation, ...), got "
                             f"{type(model).__name__}")
        self.model = model
        self.deterministic = bool(deterministic)
        self.masked = _takes_action_masks(predict)
        self.illegal = 0

    def act(self, observation, action_mask) -> int:
        mask = np.asarray(action_mask).astype(bool)
        if self.masked:
            action, _ = self.model.predict(observation, action_masks=mask,
                                           deterministic=self.deterministic)
        else:
            action, _ = self.model.predict(observation, deterministic=self.deterministic)
        a = int(np.asarray(action).reshape(-1)[0])
        if not (0 <= a < mask.size and mask[a]):
            self.illegal += 1
            return WAIT
        return a

    def __repr__(self) -> str:
        return f"FrozenPolicy({type(self.model).__name__}, masked={self.masked})"


def _takes_action_masks(fn) -> bool:
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    return "action_masks" in params or any(p.kind is inspect.Parameter.VAR_KEYWORD
                                           for p in params.values())


def as_opponent(agent, where: str):
    """The act(observation, action_mask) callable of one opponent spec, or None for the
    environment's uniformly random legal moves: an object with `act`, a model with `predict`
    (wrapped in FrozenPolicy), a callable, or None. Anything else is a ValueError naming
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
