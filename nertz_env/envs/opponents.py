"""Opponents of the single-agent environment (`NertzGymEnv(opponents=...)`).

An opponent is anything with the agent interface `act(observation, action_mask) -> int`,
a plain callable with that signature, or a trained stable-baselines3 /
sb3-contrib model (anything with `predict`), wrapped here in `FrozenPolicy` (whose
`on_illegal` says what an illegal prediction does: "raise" by default, "wait" or "pass").
"""
from __future__ import annotations

import inspect
import warnings
from collections.abc import Mapping

import numpy as np

from ..actions import WAIT

ON_ILLEGAL = ("raise", "wait", "pass")


class FrozenPolicy:
    """A trained SB3 / sb3-contrib model as an opponent: `act(observation, action_mask) -> int`.

    `act` calls `model.predict(observation, action_masks=mask, deterministic=...)` when the
    model's `predict` takes `action_masks` (MaskablePPO and other sb3-contrib maskable
    algorithms), else `model.predict(observation, deterministic=...)`. The model is frozen:
    it is never trained here. The observation must be the one the model was trained on (the
    flat float32 vector of `nertz_env/core/observe.py`, as in NertzGymEnv).

    A predicted action that is not legal now (an unmasked model can pick one) follows
    `on_illegal`:
    - `"raise"` (default): a ValueError naming the model, the row and the id: nothing is
      hidden, and a masked model never gets there;
    - `"wait"`: played as Wait (action 0, always legal) instead, so the opponent is never
      penalized under R31; `illegal` counts those replacements, and the first one warns
      (RuntimeWarning) once per FrozenPolicy;
    - `"pass"`: returned as predicted, for a caller that applies R31 itself (tournaments:
      the table's `illegal_move` decides, as for any agent).
    A prediction that is not one integer id per row is a ValueError either way."""

    def __init__(self, model, deterministic: bool = True, on_illegal: str = "raise"):
        predict = getattr(model, "predict", None)
        if not callable(predict):
            raise ValueError(f"FrozenPolicy needs a model with predict(observation, ...), got "
                             f"{type(model).__name__}")
        if not (isinstance(on_illegal, str) and on_illegal in ON_ILLEGAL):
            raise ValueError(f"on_illegal={on_illegal!r}: one of {ON_ILLEGAL}")
        self.model = model
        self.deterministic = bool(deterministic)
        self.on_illegal = on_illegal
        self.masked = _takes_action_masks(predict)
        self.illegal = 0
        self._warned = False

    def act(self, observation, action_mask) -> int:
        return int(self.act_batch(np.asarray(observation)[None], np.asarray(action_mask)[None])[0])

    def act_batch(self, observations, action_masks) -> np.ndarray:
        """int64 [n]: one predict call for n seats (observations [n, OBS_DIM], masks [n, A])."""
        masks = np.asarray(action_masks).astype(bool)
        obs = np.asarray(observations, np.float32)
        if self.masked:
            acts, _ = self.model.predict(obs, action_masks=masks, deterministic=self.deterministic)
        else:
            acts, _ = self.model.predict(obs, deterministic=self.deterministic)
        acts = np.asarray(acts)
        if acts.dtype.kind not in "iu" or acts.size != masks.shape[0]:
            raise ValueError(f"FrozenPolicy({type(self.model).__name__}): predict returned "
                             f"{acts.dtype} {acts.shape}; expected {masks.shape[0]} integer "
                             f"action ids")
        acts = acts.reshape(-1)
        ok = (acts >= 0) & (acts < masks.shape[1])
        ok[ok] = masks[np.flatnonzero(ok), acts[ok]]
        if ok.all() or self.on_illegal == "pass":
            return acts.astype(np.int64)
        row = int(np.flatnonzero(~ok)[0])
        if self.on_illegal == "raise":
            raise ValueError(f"FrozenPolicy({type(self.model).__name__}): predicted action id "
                             f"{int(acts[row])} (row {row}) is not a legal move now; "
                             f"FrozenPolicy(model, on_illegal='wait') plays Wait instead")
        self.illegal += int((~ok).sum())
        if not self._warned:
            self._warned = True
            warnings.warn(f"FrozenPolicy({type(self.model).__name__}) predicted an illegal "
                          f"action id ({int(acts[row])}); playing Wait instead "
                          f"(on_illegal='wait'; .illegal counts them). Warned once.",
                          RuntimeWarning, stacklevel=2)
        acts = acts.astype(np.int64)
        acts[~ok] = WAIT
        return acts

    def __repr__(self) -> str:
        return (f"FrozenPolicy({type(self.model).__name__}, masked={self.masked}, "
                f"on_illegal={self.on_illegal!r})")


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
