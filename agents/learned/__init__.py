"""Learned agents: saved SB3 MaskablePPO/PPO models (ppo.py), RLlib RLModules (rllib.py) and
the models shipped with the package (models/, docs/models.md)."""
