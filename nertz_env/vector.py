"""NertzVecEnv: num_envs tables in one numba call, one learning seat per table, the other
seats played by uniformly random legal moves inside the same jitted loop (issue 3: jitted
heuristic opponents plug in here when the agents issue lands).

A stable-baselines3 VecEnv (MaskablePPO: `env_method("action_masks")`, `has_attr`), with
observations the flat float32 vector of nertz_env/core/observe.py and rewards per
`reward=` ("score" or "relative", see core/batch.py vec_step_range). Finished hands are
re-dealt at once (SB3 auto-reset): the info of that step carries "terminal_observation",
"final_scores" and "TimeLimit.truncated" (max_ticks, R26).
"""
from __future__ import annotations

import numpy as np
from gymnasium import spaces

from .actions import N_ACTIONS
from .config import RulesConfig
from .core.batch import REWARD_RELATIVE, REWARD_SCORE, vec_step_batch, vec_step_range
from .core.observe import OBS_DIM
from .engine import Engine

try:                                   # SB3 is an optional extra ([train])
    from stable_baselines3.common.vec_env.base_vec_env import VecEnv as _VecEnvBase
except ImportError:                    # pragma: no cover - exercised without the extra
    _VecEnvBase = object

REWARDS = {"score": REWARD_SCORE, "relative": REWARD_RELATIVE}


class NertzVecEnv(_VecEnvBase):
    """num_envs Nertz tables; seat `learner_seat` of every table is the learner."""

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
        self.engine = Engine(config, num_envs, seed)
        self.learner_seat = learner_seat
        self.reward_kind = REWARDS[reward]
        self.observation_space = spaces.Box(-1.0, 1.0, (OBS_DIM,), np.float32)
        self.action_space = spaces.Discrete(N_ACTIONS)
        self.num_envs = num_envs
        self.render_mode = None
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
        self._seed = seed
        if _VecEnvBase is not object:
            super().__init__(num_envs, self.observation_space, self.action_space)

    # ---------------------------------------------------------------- SB3 VecEnv API
    def reset(self):
        seed = getattr(self, "_seeds", None)
        seed = self._seed if seed is None or seed[0] is None else seed[0]
        self.engine.reset(seed=seed)
        self._policy_rng[:] = self.engine.np_random.integers(0, 2**63, size=self.num_envs,
                                                             dtype=np.uint64)
        self._prev[:] = 0
        return self.engine.observe(self.learner_seat)[:, 0].copy()

    def seed(self, seed=None):
        self._seed = seed
        return [seed] * self.num_envs

    def step_async(self, actions) -> None:
        a = np.asarray(actions).reshape(-1)
        if a.shape != (self.num_envs,) or not np.issubdtype(a.dtype, np.integer):
            raise ValueError(f"actions must be {self.num_envs} integer action ids")
        if a.size and (a.min() < 0 or a.max() >= N_ACTIONS):
            raise ValueError(f"action ids must be 0..{N_ACTIONS - 1}")
        self._actions[:] = a

    def step_wait(self):
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
        done = (self._term | self._trunc).astype(bool)
        infos = [{} for _ in range(self.num_envs)]
        for e in np.flatnonzero(done):
            infos[e] = {"terminal_observation": self._final_obs[e, 0].copy(),
                        "final_scores": self._final[e].tolist(),
                        "TimeLimit.truncated": bool(self._trunc[e])}
        return obs, self._rewards.astype(np.float32), done, infos

    def action_masks(self) -> np.ndarray:
        """Bool [num_envs, N_ACTIONS]: the learner seat's legal moves (MaskablePPO)."""
        return self.engine.masks[:, self.learner_seat].astype(bool)

    def close(self) -> None:
        pass

    def get_attr(self, attr_name, indices=None):
        return [getattr(self, attr_name)] * len(self._indices(indices))

    def set_attr(self, attr_name, value, indices=None) -> None:
        setattr(self, attr_name, value)

    def env_method(self, method_name, *args, indices=None, **kwargs):
        if method_name == "action_masks":
            masks = self.action_masks()
            return [masks[i] for i in self._indices(indices)]
        return [getattr(self, method_name)(*args, **kwargs)] * len(self._indices(indices))

    def env_is_wrapped(self, wrapper_class, indices=None):
        return [False] * len(self._indices(indices))

    def has_attr(self, attr_name) -> bool:
        return hasattr(self, attr_name)

    def _indices(self, indices):
        if indices is None:
            return range(self.num_envs)
        if isinstance(indices, int):
            return [indices]
        return indices

    def get_images(self):
        """One H x W x 3 uint8 picture per table (nertz_env.render_rgb, the learner's team
        framed), all of one shape; SB3's VecEnv.render tiles them."""
        from .core.state import copy_table
        from .render_rgb import render_rgb
        from .table import Table
        view = Engine(self.config, 1)                # a one-table copy to read each table
        table, team = Table(view), self.config.seat_team[self.learner_seat]
        images = []
        for e in range(self.num_envs):
            copy_table(self.engine.state, e, view.state, 0)
            images.append(render_rgb(table.layout(), scores=table.hand_scores(), highlight=team))
        return images
