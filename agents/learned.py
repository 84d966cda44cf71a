"""Learned agents: a saved stable-baselines3 / sb3-contrib model as an Agent (needs the
`[train]` extra). MaskablePPO models get the action mask; other models' illegal choices
are played as Wait (id 0), which is always legal."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from nertz_env.envs.opponents import FrozenPolicy

from .base import Agent, check_batch


class PPOAgent(Agent):
    """`ppo:path/to/model.zip`: a saved MaskablePPO (or PPO) model, deterministic actions;
    the predicting is nertz_env.envs.opponents.FrozenPolicy's."""

    def __init__(self, path, deterministic: bool = True, device: str = "cpu"):
        p = Path(path)
        if not p.exists() and not p.with_suffix(".zip").exists():
            raise ValueError(f"ppo model {str(path)!r} does not exist")
        try:
            from sb3_contrib import MaskablePPO
        except ImportError as exc:  # pragma: no cover - depends on the install
            raise ValueError("ppo agents need the train extra: pip install -e '.[train]'") from exc
        try:
            model = MaskablePPO.load(str(p), device=device)
        except Exception:
            from stable_baselines3 import PPO
            model = PPO.load(str(p), device=device)
        self.policy = FrozenPolicy(model, deterministic=deterministic)
        self.name = f"ppo:{path}"

    def act(self, observation, action_mask) -> int:
        return self.policy.act(observation, action_mask)

    def act_batch(self, observations, action_masks) -> np.ndarray:
        obs, masks = check_batch(observations, action_masks)
        return self.policy.act_batch(obs, masks)
