"""HandRecords: the one data shape the statistics read, one row per hand (or game) played.

The arena (agents/arena/records.py) builds them; agents/stats/estimators.py and ratings.py
read them. Pure numpy; imports nothing of the project.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

__all__ = ["HandRecords"]


@dataclass
class HandRecords:
    """One row per hand (or per game in "game" mode) played by the runner.

    lineup:   int64 [M]     index of the lineup
    deal:     int64 [M]     index of the deal (0..D-1); every lineup plays the same deals, so
              the deal is the statistical unit (the cluster)
    rotation: int64 [M]     index of the seating of that lineup at which the deal was played
    agent:    int64 [M, T]  agent index at each team position
    score:    float64 [M, T] points of each team position in this hand
    called:   float64 [M, T] 1 if that team called Nertz (game mode: the share of the game's
              hands in which it did)
    win:      float64 [M, T] win share (1/k for each of k tied top teams)
    """

    lineup: np.ndarray
    deal: np.ndarray
    rotation: np.ndarray
    agent: np.ndarray
    score: np.ndarray
    called: np.ndarray
    win: np.ndarray

    def __post_init__(self) -> None:
        self.lineup = np.asarray(self.lineup, dtype=np.int64).reshape(-1)
        self.deal = np.asarray(self.deal, dtype=np.int64).reshape(-1)
        self.rotation = np.asarray(self.rotation, dtype=np.int64).reshape(-1)
        m = self.lineup.shape[0]
        self.agent = _as_2d(self.agent, np.int64, m)
        self.score = _as_2d(self.score, np.float64, m)
        self.called = _as_2d(self.called, np.float64, m)
        self.win = _as_2d(self.win, np.float64, m)
        if self.deal.shape[0] != m or self.rotation.shape[0] != m:
            raise ValueError("lineup, deal and rotation must have the same length")
        t = self.agent.shape[1]
        for name in ("score", "called", "win"):
            if getattr(self, name).shape != (m, t):
                raise ValueError(
                    f"{name} has shape {getattr(self, name).shape}, expected {(m, t)}"
                )

    def __len__(self) -> int:
        return int(self.lineup.shape[0])

    @property
    def num_teams(self) -> int:
        return int(self.agent.shape[1])

    @classmethod
    def concatenate(cls, parts: Sequence[HandRecords]) -> HandRecords:
        """Concatenate record batches (in order); all must have the same T."""
        parts = list(parts)
        if not parts:
            raise ValueError("nothing to concatenate")
        return cls(**{
            f: np.concatenate([getattr(p, f) for p in parts], axis=0)
            for f in ("lineup", "deal", "rotation", "agent", "score", "called", "win")
        })


def _as_2d(x: Any, dtype: Any, m: int) -> np.ndarray:
    a = np.asarray(x, dtype=dtype)
    if a.ndim == 1 and m == 0 and a.size == 0:
        a = a.reshape(0, 0)
    if a.ndim != 2 or a.shape[0] != m:
        raise ValueError(f"expected a [M={m}, T] array, got shape {a.shape}")
    return a
