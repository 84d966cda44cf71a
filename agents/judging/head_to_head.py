"""Head to head (`nertz judge h2h`, the leagues' matches of docs/experiments/leagues.md): agent A
against agent B at 2 solo teams on duplicate deals, points per hand of A minus B's with its
95% t-interval over deals (every deal played at both seatings; the deal is the unit).

The match is run_tournament's (agents/arena/tournament.py) with the per-deal difference of
agents/training/evaluation.py paired_match: for two models, the numbers of the league
scripts' head_to_head (train/common.py). Same agents, deals and seed, same result: h2h.json
holds no timing.
"""
from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

from nertz_env.config import RulesConfig
from nertz_env.files import write_json

from ..arena.tournament import run_tournament
from ..stats import estimators as stats


def head_to_head(a: str, b: str, deals: int, seed: int, progress: bool = False) -> dict:
    """a against b (agent specs) at 2 solo teams on `deals` duplicate deals: points per hand,
    a minus b, with its 95% interval over deals."""
    res = run_tournament([a, b], config=RulesConfig(num_teams=2), deals=deals, seed=seed,
                         progress=progress, format="round-robin")
    dm = stats.deal_means(res.records, 2)
    diff, half = stats.mean_ci(dm[:, 0] - np.nanmean(dm[:, 1:], axis=1))
    return {"a": a, "b": b, "deals": deals, "seed": seed, "diff": float(diff),
            "ci_low": float(diff - half), "ci_high": float(diff + half)}


@dataclasses.dataclass
class HeadToHead:
    row: dict
    command: str = ""

    def line(self) -> str:
        r = self.row
        return (f"{r['a']} minus {r['b']}: {r['diff']:+.2f} [{r['ci_low']:+.2f}, "
                f"{r['ci_high']:+.2f}] points per hand, 2 teams, {r['deals']} deals, seed "
                f"{r['seed']}")

    def write_into(self, folder, plot: bool = False) -> list:
        """h2h.json: the command and the row."""
        return [Path(write_json(Path(folder) / "h2h.json",
                                {"command": self.command, **self.row}))]


__all__ = ["HeadToHead", "head_to_head"]
