"""NertzGymVectorEnv: the batched learner-vs-random-legal game of NertzVecEnv
(nertz_env/vector.py) behind Gymnasium's vector API (`gymnasium.vector.VectorEnv`, 1.x).

num_envs tables step in one numba call (core/batch.py vec_step_batch / vec_step_range, the
kernels NertzVecEnv runs): seat `learner_seat` of every table takes `actions[e]`, every other
seat a uniformly random legal move chosen inside numba. It needs neither stable-baselines3 nor
torch.

- `single_observation_space`: Box(-1, 1, (OBS_DIM,), float32), the learner seat's flat vector
  of core/observe.py; `observation_space`: the batched Box (num_envs, OBS_DIM).
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
  at construction). `options` are ignored; one seed drives all tables, so a list of seeds is
  a ValueError.
"""
from __future__ import annotations

import operator

import numpy as np
from gymnasium import spaces
from gymnasium.vector import VectorEnv
from gymnasium.vector.utils import batch_space

from .actions import N_ACTIONS
from .config import RulesConfig
from .core.batch import REWARD_RELATIVE, REWARD_SCORE, vec_step_batch, vec_step_range
from .core.observe import OBS_DIM
from .engine import Engine

try:
    from gymnasium.vector import AutoresetMode
    _SAME_STEP = AutoresetMode.SAME_STEP
except ImportError:                    # pragma: no cover - gymnasium < 1.1
    _SAME_STEP = "SameStep"

REWARDS = {"score": REWARD_SCORE, "relative": REWARD_RELATIVE}


class NertzGymVectorEnv(VectorEnv):
    """num_envs Nertz tables as a Gymnasium VectorEnv; seat `learner_seat` is the learner."""

    metadata = {"autoreset_mode": _SAME_STEP, "render_modes": []}

    def __init__(self, num_envs: int = 64, config: RulesConfig | None = None, seed=0,
                 learner_seat: int = 0, reward: str = "score", **rules):
        if config is None:
            config = RulesConfig(**{"illegal_move": "penalize", **rules})
        elif rules:
            config = config.replace(**rules)
        if reward not in REWARDS:
            raise ValueError(f"reward={reward!r} is invalid: one of {sorted(REWARDS)} for the "
                             f"vector env")
        if not isinstance(learner_seat, int) or not 0 <= learner_seat < config.num_seats:
            raise ValueError(f"learner_seat={learner_seat!r}: seats are 0..{config.num_seats - 1}")
        self.config = config
        self.engine = Engine(config, num_envs, seed)      # validates num_envs
        self.num_envs = num_envs
        self.learner_seat = learner_seat
        self.reward_kind = REWARDS[reward]
        self.render_mode = None
        self.single_observation_space = spaces.Box(-1.0, 1.0, (OBS_DIM,), np.float32)
        self.single_action_space = spaces.Discrete(N_ACTIONS)
        self.observation_space = batch_space(self.single_observation_space, num_envs)
        self.action_space = batch_space(self.single_action_space, num_envs)
        T = config.num_teams
        self._prev = np.zeros((num_envs, T), np.float64)
        self._cur = np.zeros((num_envs, T), np.float64)
        self._final = np.zeros((num_envs, T), np.float64)
        self._rewards = np.zeros(num_envs, np.float64)
        self._term = np.zeros(num_envs, np.int8)
        self._trunc = np.zeros(num_envs, np.int8)
        self._final_obs = np.zeros((num_envs, 1, OBS_DIM), np.float32)
        self._policy_rng = np.zeros(num_envs, np.uint64)
        self._actions = np.zeros(num_envs, np.int16)
        self._all_true = np.ones(num_envs, bool)
        self._dealt = False

    # ---------------------------------------------------------------- Gymnasium vector API
    def reset(self, *, seed=None, options=None):
        if seed is not None:
            if isinstance(seed, (list, tuple, np.ndarray)):
                raise ValueError("seed: one int seeds every table of NertzGymVectorEnv "
                                 "(the tables share one seeded generator); got a sequence")
            seed = operator.index(seed)
        super().reset(seed=seed)
        self.engine.reset(seed=seed)
        self._policy_rng[:] = self.engine.np_random.integers(0, 2**63, size=self.num_envs,
                                                             dtype=np.uint64)
        self._prev[:] = 0
        self._dealt = True
        obs = self.engine.observe(self.learner_seat)[:, 0].copy()
        return obs, self._infos()

    def step(self, actions):
        if not self._dealt:
            raise ValueError("step() before reset(): call reset() first")
        a = np.asarray(actions).reshape(-1)
        if a.shape != (self.num_envs,) or not np.issubdtype(a.dtype, np.integer):
            raise ValueError(f"actions must be {self.num_envs} integer action ids, got shape "
                             f"{np.shape(actions)} and dtype {a.dtype}")
        if a.min() < 0 or a.max() >= N_ACTIONS:
            raise ValueError(f"action ids must be 0..{N_ACTIONS - 1}")
        self._actions[:] = a
        eng = self.engine
        args = (eng.state, eng.params, eng.scratch, eng.masks, eng.actions, eng.priority,
                eng.applied, self._actions, self.learner_seat, self._policy_rng,
                self.reward_kind, self._prev, self._cur, self._rewards, self._term,
                self._trunc, self._final, self._final_obs)
        if eng.parallel:
            vec_step_batch(*args)
        else:
            vec_step_range(*args, 0, self.num_envs)
        obs = eng.observe(self.learner_seat)[:, 0].copy()
        terminations = self._term.astype(bool)
        truncations = self._trunc.astype(bool)
        infos = self._infos()
        done = terminations | truncations
        if done.any():
            final_obs = np.full(self.num_envs, None, dtype=object)
            scores = np.zeros_like(self._final, dtype=np.int64)
            for e in np.flatnonzero(done):
                final_obs[e] = self._final_obs[e, 0].copy()
                scores[e] = self._final[e]
            infos["final_obs"], infos["_final_obs"] = final_obs, done
            infos["final_info"] = {"final_scores": scores, "_final_scores": done.copy()}
            infos["_final_info"] = done.copy()
        return obs, self._rewards.copy(), terminations, truncations, infos

    def action_masks(self) -> np.ndarray:
        """Bool [num_envs, N_ACTIONS]: the learner seat's legal moves."""
        return self.engine.masks[:, self.learner_seat].astype(bool)

    def _infos(self) -> dict:
        return {"action_mask": self.action_masks(), "_action_mask": self._all_true.copy()}

    def __repr__(self) -> str:
        return (f"NertzGymVectorEnv(num_envs={self.num_envs}, {self.config.num_teams} teams, "
                f"learner_seat={self.learner_seat})")
