"""NertzVecEnv: num_envs tables in one numba call, one learning seat per table, the other
seats played by bots inside the same jitted loop (random legal moves by default, or greedy /
heuristic styles: `opponents=`, nertz_env/envs/learner_batch.py; agents played with a seat
view, such as `search:`, from Python before each step). `observation="v1"`: the learner's
vector with its memory block (core/observe_memory.py, 1019 floats; terminal_observation too).

A stable-baselines3 VecEnv (MaskablePPO: `env_method("action_masks")`, `has_attr`), with
observations the flat float32 vector of nertz_env/core/observe.py and rewards per
`reward=` ("score" or "relative", see core/batch.py vec_step_range). Finished hands are
re-dealt at once (SB3 auto-reset): the info of that step carries "terminal_observation",
"final_scores" (int64 [num_teams]) and "TimeLimit.truncated" (max_ticks, R26), and
"episode" = {"r": the learner's return over that hand, "l": its steps}, the keys SB3's
Monitor writes, so SB3 logs rollout/ep_rew_mean without a VecMonitor (no "t": infos stay the
same for the same seed).

Seeding follows SB3's convention: the seed given to the constructor or to `seed(s)` is used by
the next `reset()` only; later resets continue the generator (so every reset deals new hands,
and `seed(s)` + `reset()` reproduces). `seed(None)` draws a fresh seed for the next reset.

Learner actions go through `step_async`, which checks them before anything changes
(nertz_env/envs/learner_batch.py): one integer id per table, and under illegal_move="raise"
(R31) a ValueError naming the table and the id for an illegal move; "penalize" (the default)
and "ignore" as in docs/rules.md R31. `set_options` takes no keys (this env has no reset options).
"""
from __future__ import annotations

import numpy as np

from ..config import RulesConfig
from ..engine import Engine
from ..optional import available
from .learner_batch import attach
from .spaces import action_space, observation_space
from .episode import check_options, check_seed

if available("stable_baselines3"):     # SB3 is an optional extra ([train])
    from stable_baselines3.common.vec_env.base_vec_env import VecEnv as _VecEnvBase
else:                                  # exercised without the extra (tests/envs/test_vector_env.py)
    class _VecEnvBase:
        """SB3's VecEnv contract without SB3 (the [train] extra): the same reset/step/
        step_async/step_wait calls work on a fresh install with only the core dependencies."""

        def __init__(self, num_envs, observation_space, action_space):
            self.num_envs = num_envs
            self.observation_space = observation_space
            self.action_space = action_space

        def step(self, actions):
            """step_async(actions) then step_wait(): obs, rewards, dones, infos."""
            self.step_async(actions)
            return self.step_wait()

        @property
        def unwrapped(self):
            return self


class NertzVecEnv(_VecEnvBase):
    """num_envs Nertz tables; seat `learner_seat` of every table is the learner; `opponents`
    as in nertz_env/envs/learner_batch.py (default: random legal moves)."""

    def __init__(self, num_envs: int = 64, config: RulesConfig | None = None, seed=0,
                 learner_seat: int = 0, reward: str = "score", opponents=None,
                 observation: str = "v0", **rules):
        attach(self, num_envs, config, seed, learner_seat, reward, opponents, rules,
               observation)
        self.observation_space = observation_space(observation)
        self.action_space = action_space()
        self._next_seed = check_seed(seed)          # the next reset's only (module docstring)
        self._dealt = False
        self._start_episodes()
        super().__init__(self.num_envs, self.observation_space, self.action_space)

    def _start_episodes(self) -> None:
        """The per-row return and length behind info["episode"]."""
        self._episode_return = np.zeros(self.num_envs, np.float64)
        self._episode_length = np.zeros(self.num_envs, np.int64)

    # ---------------------------------------------------------------- SB3 VecEnv API
    def reset(self):
        seed, self._next_seed = self._next_seed, None
        obs = self.batch.reset(seed)
        self._dealt = True
        self._episode_return[:] = 0
        self._episode_length[:] = 0
        return obs

    def seed(self, seed=None):
        """The seed of the next reset() only (SB3: seeds apply at the next reset); None draws
        a fresh one. Returns it once per table (the tables share one seeded generator)."""
        seed = check_seed(seed)
        if seed is None:
            seed = int(np.random.SeedSequence().entropy)
        self._next_seed = seed
        return [seed] * self.num_envs

    def set_options(self, options=None) -> None:
        """SB3's per-reset options: this env has none, so only None or {} (per table or one
        for all) is accepted."""
        if isinstance(options, (list, tuple)):
            if len(options) != self.num_envs:
                raise ValueError(f"options: one dict per table ({self.num_envs}), got "
                                 f"{len(options)}")
            for opts in options:
                check_options(opts, allowed=())
        else:
            check_options(options, allowed=())

    def step_async(self, actions) -> None:
        if not self._dealt:
            raise ValueError("step() before reset(): call reset() first")
        self.batch.set_actions(actions)

    def step_wait(self):
        b = self.batch
        obs = b.step()
        done = (b.terminated | b.truncated).astype(bool)
        infos = [{} for _ in range(self.num_envs)]
        self._episode_return += b.rewards            # float64: a hand's sum is its score exactly
        self._episode_length += 1
        for e in np.flatnonzero(done):
            infos[e] = {"terminal_observation": b.final_obs[e, 0].copy(),
                        "final_scores": b.final_scores[e].astype(np.int64),
                        "TimeLimit.truncated": bool(b.truncated[e]),
                        "episode": {"r": float(self._episode_return[e]),
                                    "l": int(self._episode_length[e])}}
        self._episode_return[done] = 0
        self._episode_length[done] = 0
        return obs, b.rewards.astype(np.float32), done, infos

    def action_masks(self) -> np.ndarray:
        """Bool [num_envs, N_ACTIONS]: the learner seat's legal moves (MaskablePPO)."""
        return self.batch.action_masks()

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
        """One H x W x 3 uint8 picture per table (nertz_env.envs.render, the learner's team
        framed), all of one shape; SB3's VecEnv.render tiles them."""
        from ..core.state import copy_table
        from .render import render_rgb
        from ..table.table import Table
        view = Engine(self.config, 1)                # a one-table copy to read each table
        table, team = Table(view), self.config.seat_team[self.learner_seat]
        images = []
        for e in range(self.num_envs):
            copy_table(self.engine.state, e, view.state, 0)
            images.append(render_rgb(table.layout(), scores=table.hand_scores(), highlight=team))
        return images
