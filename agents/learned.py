"""Learned agents: a saved stable-baselines3 / sb3-contrib model as an Agent (needs the
`[train]` extra). MaskablePPO models get the action mask; other models' illegal choices
are played as Wait (id 0), which is always legal."""
from __future__ import annotations

from pathlib import Path

import numpy as np

from .base import Agent, check_batch


class PPOAgent(Agent):
    """`ppo:path/to/model.zip`: a MaskablePPO (or PPO) model, deterministic actions."""

    def __init__(self, path, deterministic: bool = True, device: str = "cpu"):
        p = Path(path)
        if not p.exists() and not p.with_suffix(".zip").exists():
            raise ValueError(f"ppo model {str(path)!r} does not exist")
        try:
            from sb3_contrib import MaskablePPO
        except ImportError as exc:  # pragma: no cover - depends on the install
            raise ValueError("ppo agents need the train extra: pip install -e '.[train]'") from exc
        try:
            self.model = MaskablePPO.load(str(p), device=device)
            self.masked = True
        except Exception:
            from stable_baselines3 import PPO
            self.model = PPO.load(str(p), device=device)
            self.masked = False
        self.deterministic = deterministic
        self.name = f"ppo:{path}"

    def act(self, observation, action_mask) -> int:
        return int(self.act_batch(np.asarray(observation)[None], np.asarray(action_mask)[None])[0])

    def act_batch(self, observations, action_masks) -> np.ndarray:
        obs, masks = check_batch(observations, action_masks)
        masks = masks.astype(bool)
        if self.masked:
            acts, _ = self.model.predict(obs.astype(np.float32), action_masks=masks,
                                         deterministic=self.deterministic)
        else:
            acts, _ = self.model.predict(obs.astype(np.float32), deterministic=self.deterministic)
        acts = np.asarray(acts, np.int64).reshape(-1)
        illegal = ~masks[np.arange(len(acts)), acts]
        acts[illegal] = 0
        return acts
