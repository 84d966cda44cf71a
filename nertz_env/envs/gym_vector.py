"""NertzGymVectorEnv: the batched learner-vs-random-legal game of NertzVecEnv
(nertz_env/envs/vector.py) behind Gymnasium's vector API (`gymnasium.vector.VectorEnv`, 1.x).

num_envs tables step in one numba call (core/batch.py vec_step_batch / vec_step_range, the
kernels NertzVecEnv runs): seat `learner_seat` of every table takes `actions[e]`, every other
seat a uniformly random legal move chosen inside numba. It needs neither stable-baselines3 nor
torch.

- `single_observation_space`: Box(-1, 1, (OBS_DIM,), float32), the learner seat's flat vector
  of core/observe.py; `observation_space`: the batched Box (num_envs, OBS_DIM). With
  `observation="v1"`: V1_OBS_DIM = 1019, the vector plus the seat's memory block
  (core/observe_memory.py; final_obs too). `opponents=` as NertzVecEnv's: core bots inside
  numba, and agents played with a seat view (search:) from Python (learner_batch.py).
- `single_action_space`: Discrete(322) (nertz_env/actions.py); `action_space`:
  MultiDiscrete([322] * num_envs). `action_masks()` is bool [num_envs, 322], and the same
  array is `infos["action_mask"]` (with `infos["_action_mask"]`, all True) after every
  reset and step. An illegal id costs `penalty_points` under the default
  illegal_move="penalize" (R31).
- `reward=`: "score" or "relative", as NertzVecEnv: a hand's rewards sum to the learner team's
  hand score (R29), or to it minus the other teams' mean. Rewards are float64 [num_envs].
- Autoreset: `metadata["autoreset_mode"]` is `AutoresetMode.SAME_STEP`. A table whose hand
  ends (a Nertz call: `terminations`; max_ticks, R26: `truncations`) is re-dealt inside the
  same step with the next hand number (roles swap, R4): the returned observation and mask are
  the new hand's. Following Gymnasium's convention for that mode, `infos["final_obs"]` is an
  object array with the learner's observation of the finished position at those tables (None
  elsewhere), `infos["_final_obs"]` flags them, and `infos["final_info"]` holds
  `"final_scores"` (int64 [num_envs, num_teams], the finished hand's R29 scores) with
  `"_final_scores"`; `infos["_final_info"]` flags them too. These keys are absent from a step
  in which no hand ended.
- `reset(seed=int)` re-seeds the engine (the same seed and actions give the same
  trajectories); `reset()` deals fresh hands from the engine's generator (seeded by `seed=`
  at construction). One seed drives all tables, so a list of seeds is a ValueError; so is
  any `options` key (this env has no reset options: None or {}).
- `step(actions)`: one integer id per table (`nertz_env.actions.check_action_array`), checked
  before anything changes; under illegal_move="raise" (R31) an illegal id is a ValueError
  naming the table and the id; "penalize" (the default) and "ignore" as in docs/rules.md R31.
"""
from __future__ import annotations

import numpy as np
from gymnasium.vector import VectorEnv

from ..config import RulesConfig
from .learner_batch import attach
from .spaces import vector_spaces
from .episode import check_options, check_seed

try:
    from gymnasium.vector import AutoresetMode
    _SAME_STEP = AutoresetMode.SAME_STEP
except ImportError:                    # pragma: no cover - gymnasium < 1.1
    _SAME_STEP = "SameStep"

class NertzGymVectorEnv(VectorEnv):
    """num_envs Nertz tables as a Gymnasium VectorEnv; seat `learner_seat` is the learner."""

    metadata = {"autoreset_mode": _SAME_STEP, "render_modes": []}

    def __init__(self, num_envs: int = 64, config: RulesConfig | None = None, seed=0,
                 learner_seat: int = 0, reward: str = "score", opponents=None,
                 observation: str = "v0", **rules):
        attach(self, num_envs, config, seed, learner_seat, reward, opponents, rules,
               observation)
        (self.single_observation_space, self.single_action_space, self.observation_space,
         self.action_space) = vector_spaces(num_envs, observation)
        self._all_true = np.ones(num_envs, bool)
        self._dealt = False

    # ---------------------------------------------------------------- Gymnasium vector API
    def reset(self, *, seed=None, options=None):
        if isinstance(seed, (list, tuple, np.ndarray)):
            raise ValueError("seed: one int seeds every table of NertzGymVectorEnv "
                             "(the tables share one seeded generator); got a sequence")
        seed = check_seed(seed)
        check_options(options, allowed=())
        super().reset(seed=seed)
        obs = self.batch.reset(seed)
        self._dealt = True
        return obs, self._infos()

    def step(self, actions):
        if not self._dealt:
            raise ValueError("step() before reset(): call reset() first")
        b = self.batch
        b.set_actions(actions)
        obs = b.step()
        terminations = b.terminated.astype(bool)
        truncations = b.truncated.astype(bool)
        infos = self._infos()
        done = terminations | truncations
        if done.any():
            final_obs = np.full(self.num_envs, None, dtype=object)
            scores = np.zeros_like(b.final_scores, dtype=np.int64)
            for e in np.flatnonzero(done):
                final_obs[e] = b.final_obs[e, 0].copy()
                scores[e] = b.final_scores[e]
            infos["final_obs"], infos["_final_obs"] = final_obs, done
            infos["final_info"] = {"final_scores": scores, "_final_scores": done.copy()}
            infos["_final_info"] = done.copy()
        return obs, b.rewards.copy(), terminations, truncations, infos

    def action_masks(self) -> np.ndarray:
        """Bool [num_envs, N_ACTIONS]: the learner seat's legal moves."""
        return self.batch.action_masks()

    def _infos(self) -> dict:
        return {"action_mask": self.action_masks(), "_action_mask": self._all_true.copy()}

    def __repr__(self) -> str:
        return (f"NertzGymVectorEnv(num_envs={self.num_envs}, {self.config.num_teams} teams, "
                f"learner_seat={self.learner_seat})")
