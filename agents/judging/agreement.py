"""Same-move agreement (`nertz judge agreement`, docs/experiments/plateau.md and leagues.md):
the share of positions with a choice (more than one legal move) where agent B plays agent A's
move, how far training moved one model from another.

A plays seat 0 of `tables` tables among river-builders for `ticks` ticks (NertzVecEnv, seed
`seed`; every other seat river-builder; agents that draw, such as random, seeded by it too); at
every tick both are asked for seat 0's move on the same observation and legal moves, and A's
is played. For two models, the numbers of the league scripts' agreement (train/common.py).
Same agents, counts and seed, same shares: agreement.json holds no timing.
"""
from __future__ import annotations

import dataclasses
import warnings
from pathlib import Path

from nertz_env.files import write_json

from ..registry import make_agent

OPPONENTS = "heuristic:style=river-builder"


def agreement(a: str, b: str, teams: int, seed: int, tables: int = 128,
              ticks: int = 100) -> float:
    """Share of the positions with a choice where b (an agent spec) plays a's move (module
    docstring)."""
    from nertz_env import NertzVecEnv
    from nertz_env.envs.opponents import for_table
    from nertz_env.config import RulesConfig
    config = RulesConfig(num_teams=teams)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")              # untold tables: the models are nets
        pa, pb = (for_table(make_agent(s, seed=seed), config) for s in (a, b))
    env = NertzVecEnv(num_envs=tables, num_teams=teams, seed=seed, opponents=OPPONENTS)
    obs, same, n = env.reset(), 0, 0
    for _ in range(ticks):
        masks = env.action_masks()
        moves = pa.act_batch(obs, masks)
        choice = masks.sum(1) > 1
        same += int(((pb.act_batch(obs, masks) == moves) & choice).sum())
        n += int(choice.sum())
        obs, *_ = env.step(moves)
    if not n:
        raise ValueError(f"no position with a choice in {tables} tables x {ticks} ticks: "
                         "give more --ticks")
    return same / n


@dataclasses.dataclass
class Agreement:
    a: str
    b: str
    seed: int
    tables: int
    ticks: int
    shares: dict                     # {teams: share}
    command: str = ""

    def table(self) -> str:
        lines = ["| teams | same move | tables x ticks |", "|---|---|---|"]
        lines += [f"| {t} | {s:.4f} | {self.tables} x {self.ticks} |"
                  for t, s in self.shares.items()]
        return "\n".join(lines)

    def to_dict(self) -> dict:
        return {"command": self.command, "a": self.a, "b": self.b, "seed": self.seed,
                "tables": self.tables, "ticks": self.ticks,
                "agreement": {str(t): s for t, s in self.shares.items()}}

    def write_into(self, folder, plot: bool = False) -> list:
        """agreement.json: the command, the counts and the share per table size."""
        return [Path(write_json(Path(folder) / "agreement.json", self.to_dict()))]


__all__ = ["Agreement", "agreement"]
