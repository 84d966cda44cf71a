"""Learned agents: a saved stable-baselines3 / sb3-contrib model as an Agent (needs the
`[train]` extra). MaskablePPO models get the action mask; other models' illegal choices
are played as Wait (id 0), which is always legal."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from nertz_env.envs.opponents import FrozenPolicy
from nertz_env.optional import MissingDependency, require

from ..base import Agent, check_batch


def _one_line(err: BaseException) -> str:
    """An exception as one line (the CLI prints errors on one line)."""
    text = " ".join(str(err).split())
    return f"{type(err).__name__}: {text}" if text else type(err).__name__


def load_model(path, device: str = "cpu"):
    """A saved MaskablePPO model, else a saved PPO model, from `path` (or `path`.zip, as SB3
    reads it). ValueError naming the path when the file is missing or neither class loads it
    (with both loaders' messages: the real reason is in one of them)."""
    p = Path(path)
    if not p.is_file() and not Path(f"{p}.zip").is_file():
        raise ValueError(f"ppo model {str(path)!r} does not exist (nor {str(path) + '.zip'!r}); "
                         "give the path of a model saved with model.save()")
    errors = []
    purpose = f"ppo model {str(path)!r}: a ppo agent (the train extra)"
    try:
        MaskablePPO = require("sb3_contrib", "train", purpose).MaskablePPO
    except MissingDependency as exc:       # a plain PPO model loads without sb3-contrib
        errors.append(("MaskablePPO", exc))
    else:
        try:
            return MaskablePPO.load(str(p), device=device)
        except Exception as exc:  # any loader failure: try PPO, then report both
            errors.append(("MaskablePPO", exc))
    PPO = require("stable_baselines3", "train", purpose).PPO
    try:
        return PPO.load(str(p), device=device)
    except Exception as exc:  # reported together with the MaskablePPO error
        errors.append(("PPO", exc))
    why = "; ".join(f"as {name}: {_one_line(exc)}" for name, exc in errors)
    raise ValueError(f"ppo model {str(path)!r} could not be loaded ({why})") from errors[-1][1]


class PPOAgent(Agent):
    """`ppo:path/to/model.zip`: a saved MaskablePPO (or PPO) model, deterministic actions by
    default; the predicting is nertz_env.envs.opponents.FrozenPolicy's (a stock MlpPolicy's
    network run directly: predict's ids without its per-call overhead). Tournaments call
    act_batch once per tick with every table and seat the agent holds."""

    def __init__(self, path, deterministic: bool = True, device: str = "cpu"):
        if not isinstance(deterministic, bool):
            raise ValueError(f"deterministic={deterministic!r} must be True or False")
        # illegal picks (an unmasked PPO) go to the table, whose illegal_move decides (R31)
        self.policy = FrozenPolicy(load_model(path, device=device), deterministic=deterministic,
                                   on_illegal="pass")
        self.name = f"ppo:{path}"

    def act(self, observation, action_mask) -> int:
        return self.policy.act(observation, action_mask)

    def act_batch(self, observations, action_masks) -> np.ndarray:
        obs, masks = check_batch(observations, action_masks)
        return self.policy.act_batch(obs, masks)
