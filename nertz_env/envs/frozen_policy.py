"""`FrozenPolicy`: a trained stable-baselines3 / sb3-contrib model played as an opponent (or
any seat) through the agent interface `act(observation, action_mask) -> int` and
`act_batch`. `on_illegal` says what an illegal prediction does: "raise" by default, "wait" or
"pass". A stock PPO / MaskablePPO MlpPolicy is run directly (its actor, then predict's choice
from the logits); any other model through its own `predict`.

The opponent specs of the single-agent and vector envs (`as_opponent`, `opponents_per_seat`)
live in `opponents.py`, which re-exports `FrozenPolicy`.
"""
from __future__ import annotations

import inspect
import warnings

import numpy as np
from numba import njit

from ..actions import WAIT
from ..optional import available

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
    A prediction that is not one integer id per row is a ValueError either way.

    A PPO / MaskablePPO model with its stock MlpPolicy (a flat Box observation, a Discrete
    action) is run directly (`direct`): its actor under torch.no_grad, then predict's choice
    from the logits: the legal argmax where no float32 tie is possible, SB3's own ops on the
    other rows and for every draw. The ids (and the draws from torch's generator) are
    predict's, without its per-call overhead (tensor conversion, training-mode switch,
    distribution objects) and its softmax work, which cost more than the network."""

    def __init__(self, model, deterministic: bool = True, on_illegal: str = "raise"):
        predict = getattr(model, "predict", None)
        if not callable(predict):
            raise ValueError(f"FrozenPolicy needs a model with predict(observation, ...), got "
                             f"{type(model).__name__}")
        if not (isinstance(on_illegal, str) and on_illegal in ON_ILLEGAL):
            raise ValueError(f"on_illegal={on_illegal!r}: one of {ON_ILLEGAL}")
        check_model_spaces(model, f"FrozenPolicy({type(model).__name__})")
        self.model = model
        self.deterministic = bool(deterministic)
        self.on_illegal = on_illegal
        self.masked = _takes_action_masks(predict)
        self.direct = _direct_policy(model)
        self.illegal = 0
        self._warned = False

    def act(self, observation, action_mask) -> int:
        return int(self.act_batch(np.asarray(observation)[None], np.asarray(action_mask)[None])[0])

    def act_batch(self, observations, action_masks) -> np.ndarray:
        """int64 [n]: one predict call for n seats (observations [n, OBS_DIM], masks [n, A])."""
        masks = np.asarray(action_masks).astype(bool)
        obs = np.asarray(observations, np.float32)
        if self.direct is not None and obs.shape[1:] == self.direct[1] \
                and masks.shape == (obs.shape[0], self.direct[2]):
            acts = _direct_actions(self.direct, obs, masks if self.masked else None,
                                   self.deterministic)
        elif self.masked:
            acts, _ = self.model.predict(obs, action_masks=masks, deterministic=self.deterministic)
        else:
            acts, _ = self.model.predict(obs, deterministic=self.deterministic)
        acts = np.asarray(acts)
        if acts.dtype.kind not in "iu" or acts.size != masks.shape[0]:
            raise ValueError(f"FrozenPolicy({type(self.model).__name__}): predict returned "
                             f"{acts.dtype} {acts.shape}; expected {masks.shape[0]} integer "
                             f"action ids")
        acts = acts.reshape(-1).astype(np.int64)
        if self.on_illegal == "pass":             # the caller checks them, once (envs/seats.py)
            return acts
        ok = (acts >= 0) & (acts < masks.shape[1])
        ok[ok] = masks[np.flatnonzero(ok), acts[ok]]
        if ok.all():
            return acts
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
        acts[~ok] = WAIT
        return acts

    def __repr__(self) -> str:
        return (f"FrozenPolicy({type(self.model).__name__}, masked={self.masked}, "
                f"on_illegal={self.on_illegal!r})")


def check_model_spaces(model, what: str) -> None:
    """A model that declares its spaces must fit a Nertz seat's: refused here, at load, with
    both sizes named (not at the first tick)."""
    from ..actions import N_ACTIONS
    from ..core.observe import OBS_DIM
    obs = getattr(model, "observation_space", None)
    act = getattr(model, "action_space", None)
    shape = getattr(obs, "shape", None)
    n_obs = int(np.prod(shape)) if shape else None
    n_act = getattr(act, "n", None)
    if (n_obs is not None and n_obs != OBS_DIM) or (n_act is not None and int(n_act) != N_ACTIONS):
        raise ValueError(f"{what} does not fit this game: it takes observations of "
                         f"{n_obs} values and chooses among {n_act} actions; a Nertz seat has "
                         f"{OBS_DIM} and {N_ACTIONS} (nertz_env/core/observe.py, "
                         "nertz_env/actions.py)")


def _direct_policy(model):
    """(policy, (observation size,), action count, torch, extract_features) when
    `model` is a PPO or MaskablePPO whose policy is the stock actor-critic MLP policy with a
    categorical head over a flat Box, else None (predict is used)."""
    if not available("stable_baselines3"):
        return None
    from stable_baselines3 import PPO
    from stable_baselines3.common.distributions import CategoricalDistribution
    from stable_baselines3.common.policies import ActorCriticPolicy
    kinds = {(PPO, ActorCriticPolicy, CategoricalDistribution)}
    if available("sb3_contrib"):
        from sb3_contrib import MaskablePPO
        from sb3_contrib.common.maskable.distributions import (
            MaskableCategoricalDistribution,
        )
        from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
        kinds.add((MaskablePPO, MaskableActorCriticPolicy, MaskableCategoricalDistribution))
    policy = getattr(model, "policy", None)
    dist = getattr(policy, "action_dist", None)
    if (type(model), type(policy), type(dist)) not in kinds:
        return None
    import gymnasium as gym
    if not (isinstance(policy.observation_space, gym.spaces.Box)
            and len(policy.observation_space.shape) == 1
            and isinstance(policy.action_space, gym.spaces.Discrete)):
        return None
    import torch
    from stable_baselines3.common.policies import BaseModel

    size = int(np.prod(policy.observation_space.shape))
    return policy, (size,), int(policy.action_space.n), torch, BaseModel.extract_features


def _direct_actions(direct, obs, masks, deterministic: bool) -> np.ndarray:
    """What policy.predict(obs, action_masks=masks, deterministic=...) returns. Deterministic:
    the argmax of the legal logits wherever the top two are far enough apart that predict's
    float32 ops (normalise, mask, normalise, softmax) cannot tie them (_clear_argmax); the
    other rows, and every draw, go through those ops themselves (_predict_ops)."""
    policy, _, _, th, extract_features = direct
    if policy.training:
        policy.set_training_mode(False)       # predict's eval mode (dropout, batch norm)
    device = policy.action_net.weight.device  # policy.device walks every parameter
    with th.no_grad():
        x = th.as_tensor(obs if obs.flags.writeable else obs.copy(), device=device)
        features = extract_features(policy, x, policy.pi_features_extractor)
        logits = policy.action_net(policy.mlp_extractor.forward_actor(features))
        logits = logits.view(-1, policy.action_dist.action_dim)
        if not deterministic:
            return _predict_ops(logits, masks, False).cpu().numpy()
        n = logits.shape[0]
        acts, sure = np.empty(n, np.int64), np.empty(n, np.bool_)
        _clear_argmax(logits.cpu().numpy(), np.zeros((0, 0), np.bool_) if masks is None
                      else masks, masks is not None, acts, sure)
        unsure = np.flatnonzero(~sure)
        if unsure.size:
            rows = th.as_tensor(unsure, device=logits.device)
            acts[unsure] = _predict_ops(logits[rows], None if masks is None else masks[unsure],
                                        True).cpu().numpy()
    return acts


def _predict_ops(logits, masks, deterministic: bool):
    """SB3's choice from the logits, op for op: Categorical(logits) normalises them,
    MaskableCategorical sets illegal ones to -1e8 and normalises again, then argmax of the
    softmax (mode) or one multinomial draw per row (sample, torch's global generator)."""
    import torch as th

    logits = logits - logits.logsumexp(dim=-1, keepdim=True)
    if masks is not None:
        keep = th.as_tensor(masks, dtype=th.bool, device=logits.device)
        logits = th.where(keep, logits, th.tensor(-1e8, dtype=logits.dtype,
                                                  device=logits.device))
        logits = logits - logits.logsumexp(dim=-1, keepdim=True)
    probs = th.softmax(logits, dim=-1)
    if deterministic:
        return th.argmax(probs, dim=1)
    return th.multinomial(probs, 1, True).T.reshape(-1)


@njit(cache=True, error_model="numpy")
def _clear_argmax(logits, masks, use_masks, acts, sure):
    """acts[i]: the first legal id with the highest logit of row i; sure[i]: whether it is
    surely predict's mode too. Every op of _predict_ops is monotone per row; the two
    normalisations round values of magnitude at most 2m + ln A and 4m + 3 ln A (m the row's
    largest |logit|, A the number of actions) and the softmax is off by a few ulps near 1,
    so the top two legal logits close in by at most 1.2e-7 (6m + 4 ln A) + 5e-7; a gap over
    1e-6 (8m + 5 ln A + 5), more than ten times that, keeps the argmax unique. Rows with
    ties, near ties, no legal id or a non-finite logit are left to _predict_ops."""
    n, A = logits.shape
    slack = 5.0 * np.log(A) + 5.0
    for i in range(n):
        m, best, second, arg, legal, finite = 0.0, -np.inf, -np.inf, -1, 0, True
        for j in range(A):
            v = logits[i, j]
            if not np.isfinite(v):
                finite = False
            m = max(m, abs(v))
            if use_masks and not masks[i, j]:
                continue
            legal += 1
            if v > best:
                second, best, arg = best, v, j
            elif v > second:
                second = v
        acts[i] = arg
        sure[i] = finite and legal >= 1 and (legal == 1
                                             or best - second > 1e-6 * (8.0 * m + slack))


def _takes_action_masks(fn) -> bool:
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    return "action_masks" in params or any(p.kind is inspect.Parameter.VAR_KEYWORD
                                           for p in params.values())
