"""NertzSelfPlayVecEnv: the self-play game of nertz_env/envs/selfplay.py (every seat of every
table a learner row, row r = seat r % S of table r // S) as a stable-baselines3 VecEnv, so
MaskablePPO trains one policy on every seat: `MaskablePPO("MlpPolicy",
NertzSelfPlayVecEnv(n_tables=64, num_teams=2))`.

Everything NertzVecEnv (nertz_env/envs/vector.py) does, row by row: SB3 seeding (the next
reset only), `action_masks()` / `env_method("action_masks")`, SB3 auto-reset with
"terminal_observation", "final_scores" (the row's table, int64 [num_teams]) and
"TimeLimit.truncated" and `info["episode"]` = {"r": the row's return over that hand, "l":
its steps} in the info of the step a hand ends, so SB3 logs episode returns without a
VecMonitor.

It lives apart from selfplay.py because it imports SB3, hence torch; the Gymnasium face does
not.
"""
from __future__ import annotations

import types


from .episode import check_seed
from .selfplay import attach_selfplay
from .vector import NertzVecEnv, _VecEnvBase


class NertzSelfPlayVecEnv(NertzVecEnv):
    """n_tables Nertz tables, every seat a row of this stable-baselines3 VecEnv (module
    docstring); reset, seeding, options, step and `info["episode"]` as NertzVecEnv."""

    def __init__(self, n_tables: int = 16, config=None, seed=0, reward: str = "score",
                 observation: str = "v0", **rules):
        attach_selfplay(self, n_tables, config, seed, reward, rules, observation)
        self._next_seed = check_seed(seed)          # the next reset's only (NertzVecEnv)
        self._dealt = False
        self._start_episodes()
        # SB3's VecEnv.__init__, not NertzVecEnv's (that one builds a one-learner batch)
        if _VecEnvBase is not object:
            _VecEnvBase.__init__(self, self.num_envs, self.observation_space, self.action_space)

    def get_images(self):
        """One picture per row: its table with the row's team framed (NertzVecEnv's pictures,
        taken once per seat)."""
        per_seat = [NertzVecEnv.get_images(types.SimpleNamespace(
            engine=self.engine, config=self.config, learner_seat=s, num_envs=self.n_tables))
            for s in range(self.config.num_seats)]
        return [per_seat[s][e] for e, s in zip(self.row_table, self.row_seat)]

    def __repr__(self) -> str:
        return (f"NertzSelfPlayVecEnv(n_tables={self.n_tables}, {self.config.num_seats} seats: "
                f"num_envs={self.num_envs})")
