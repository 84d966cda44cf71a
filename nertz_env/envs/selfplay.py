"""Self-play: every seat of every table is a learner row, so one policy plays all of them
(PufferLib / pgx style) and trains against itself without frozen copies.

`n_tables` tables of S seats give num_envs = n_tables * S rows; row r is seat r % S of table
r // S (`row_table`, `row_seat`). Every step takes one action per row: all seats of all tables
move together, which is exactly the engine's simultaneous tick (Engine.step_observe).

- Spaces as the other envs: Box(-1, 1, (OBS_DIM,), float32) observations (each row its seat's
  view, core/observe.py), Discrete(N_ACTIONS) actions; `action_masks()` is bool
  [num_envs, N_ACTIONS], the engine's masks row by row. `observation="v1"`: each row's v1
  vector (V1_OBS_DIM, its seat's memory block appended: core/observe_memory.py; final_obs
  too), the tables' public memory kept after every tick (envs/memory_keeper.py).
- `reward=`: "score" or "relative" as the other vector envs, for the row's team (both seats of
  a two-player team get their team's reward): a hand's rewards sum to the team's R29 score,
  or to it minus the other teams' mean.
- Actions: one integer id per row (`nertz_env.actions.check_action_array`), checked before
  anything changes; under illegal_move="raise" (R31) a ValueError naming the row, its table
  and seat, and the id. "penalize" (the default) and "ignore" as in docs/rules.md R31.
- A finished hand (a Nertz call, or max_ticks, R26) is re-dealt inside the same step with the
  next hand number (roles swap, R4), as in the other vector envs.

Two faces over one `SelfPlayBatch`, which has the interface of LearnerBatch
(nertz_env/envs/learner_batch.py), so each face is its one-learner sibling with another
batch: `NertzSelfPlayGymVectorEnv` here (a Gymnasium VectorEnv as NertzGymVectorEnv: SAME_STEP
autoreset, final_obs / final_info; `gymnasium.make_vec("nertz_env/NertzSelfPlay-v0",
num_envs=rows)`), needing neither SB3 nor torch, and `NertzSelfPlayVecEnv`
(nertz_env/envs/selfplay_sb3.py, a stable-baselines3 VecEnv as NertzVecEnv, with
`info["episode"]`), on which MaskablePPO trains one policy on every seat.
"""
from __future__ import annotations

import numpy as np

from ..actions import N_ACTIONS
from ..core.batch import deal_range
from ..core.observe import OBS_DIM, observe_range
from ..core.scoring import relative_points
from ..engine import Engine
from ..encoding import OVER_TRUNCATED, PLAYING
from .episode import check_rule_kwargs, check_seed, env_config
from .gym_vector import NertzGymVectorEnv
from .learner_batch import REWARDS
from .memory_keeper import TableMemory
from .seats import SeatDriver
from .spaces import OBSERVATION_DIMS, action_space, check_observation, observation_space, \
    vector_spaces

_OWN_ARGS = ("n_tables", "config", "seed", "reward", "observation")


class SelfPlayBatch:
    """The engine and buffers of n_tables tables whose every seat is a learner row (module
    docstring); the attributes and methods LearnerBatch has, per row instead of per table."""

    def __init__(self, n_tables: int, config, seed, reward: str, observation: str = "v0"):
        if not (isinstance(reward, str) and reward in REWARDS):
            raise ValueError(f"reward={reward!r} is invalid: one of {sorted(REWARDS)} for the "
                             f"self-play env")
        seed = check_seed(seed)
        self.observation = check_observation(observation)
        self.obs_dim = OBSERVATION_DIMS[observation]
        self.config = config
        self.engine = Engine(config, n_tables, seed)      # validates n_tables
        self.n_tables, S, T = n_tables, config.num_seats, config.num_teams
        self.num_envs = n_tables * S
        self.row_table = np.repeat(np.arange(n_tables), S)
        self.row_seat = np.tile(np.arange(S), n_tables)
        self.row_team = np.asarray(config.seat_team)[self.row_seat]
        self.relative = reward == "relative"
        self._raise_illegal = config.illegal_move == "raise"
        self.prev = np.zeros((n_tables, T), np.int64)     # R29 scores at the last step
        self.rewards = np.zeros(self.num_envs, np.float64)
        self.terminated = np.zeros(self.num_envs, bool)
        self.truncated = np.zeros(self.num_envs, bool)
        self.final_scores = np.zeros((self.num_envs, T), np.int64)
        self.final_obs = np.zeros((self.num_envs, 1, self.obs_dim), np.float32)
        self.actions = np.zeros(self.num_envs, np.int16)
        self.memory = TableMemory(self.engine) if observation == "v1" else None

    def reset(self, seed=None) -> np.ndarray:
        """Deal every table (seed: restart the engine's generator; None: continue it); every
        row's observation."""
        self.engine.reset(seed=check_seed(seed))
        if self.memory is not None:
            self.memory.dealt()
        self.prev[:] = 0                  # a hand's first reward counts from 0 (sums to R29)
        return self.observe()

    def set_actions(self, actions) -> None:
        """One id per row for the next step, checked before anything is written."""
        self.actions[:] = SeatDriver.check(actions,
                                           self.engine.masks.reshape(self.num_envs, N_ACTIONS),
                                           self.row_table, self.row_seat, "actions",
                                           "raise" if self._raise_illegal else "engine")

    def step(self) -> np.ndarray:
        """One tick at every table with every row's action; the new observations (float32
        [num_envs, OBS_DIM], fresh). rewards / terminated / truncated / final_scores /
        final_obs hold the step's results, per row (final_* only where a hand ended)."""
        eng, S = self.engine, self.config.num_seats
        summary, obs, _ = eng.step_observe(self.actions.reshape(self.n_tables, S),
                                           checked=True)              # (set_actions checked)
        if self.memory is not None:
            self.memory.ticked()                  # the tick, before any re-deal (final_obs)
        rows_obs = self._rows(obs)
        scores = summary.scores
        team = scores - self.prev
        if self.relative:
            team = relative_points(team, team.sum(axis=1, keepdims=True), team.shape[1])
        self.rewards[:] = team[self.row_table, self.row_team]
        status = summary.status
        self.prev[:] = scores
        done = status != PLAYING
        self.truncated[:] = (status == OVER_TRUNCATED)[self.row_table]
        self.terminated[:] = done[self.row_table] & ~self.truncated
        if done.any():
            rows = done[self.row_table]
            self.final_scores[rows] = scores[self.row_table[rows]]
            self.final_obs[rows, 0] = rows_obs[rows]
            self.prev[done] = 0
            hands = (summary.hand + 1).astype(np.int32)
            # a serial pass over the tables (no prange variant takes `which` and a seeded
            # shuffle): it deals only the finished ones, from each table's own generator
            eng.run_kernel(deal_range, None, done.astype(np.int8), eng.scratch.decks, hands,
                           eng.masks, True, 0, self.n_tables)
            if eng.recorder is not None:
                eng.recorder.on_deal(eng, done)
            for e in np.flatnonzero(done):          # the new hands' views, table by table
                eng.run_kernel(observe_range, None, obs, e, e + 1)
            if self.memory is not None:             # the new hands remembered afresh
                self.memory.ticked()
                rows_obs = self._rows(obs)
        return rows_obs

    def _rows(self, obs) -> np.ndarray:
        """Every row's observation from every seat's v0 vector (float32 [B, S, OBS_DIM]): a
        view of it for v0, the v1 rows (a fresh array) for v1."""
        v0 = obs.reshape(self.num_envs, OBS_DIM)
        return v0 if self.memory is None else self.memory.v1(v0, self.row_table, self.row_seat)

    def observe(self) -> np.ndarray:
        return self._rows(self.engine.observe()).copy()

    def action_masks(self) -> np.ndarray:
        """Bool [num_envs, N_ACTIONS]: every row's legal moves."""
        return self.engine.masks.reshape(self.num_envs, N_ACTIONS).astype(bool)


def attach_selfplay(env, n_tables, config, seed, reward, rules, observation="v0") -> None:
    """Give a self-play env its SelfPlayBatch and the attributes the vector envs expose
    (batch, config, engine, n_tables, num_envs, render_mode) and its spaces."""
    if isinstance(n_tables, (bool, np.bool_)) or not isinstance(n_tables, (int, np.integer)) \
            or n_tables < 1:
        raise ValueError(f"n_tables={n_tables!r}: an int >= 1")
    check_rule_kwargs(rules, _OWN_ARGS)
    config = env_config(config, rules)
    env.batch = SelfPlayBatch(int(n_tables), config, seed, reward, observation)
    env.observation = observation
    env.config, env.engine, env.n_tables = config, env.batch.engine, env.batch.n_tables
    env.num_envs, env.render_mode = env.batch.num_envs, None
    env.row_table, env.row_seat = env.batch.row_table, env.batch.row_seat
    env.observation_space = observation_space(observation)
    env.action_space = action_space()


class NertzSelfPlayGymVectorEnv(NertzGymVectorEnv):
    """n_tables Nertz tables, every seat a row of this Gymnasium VectorEnv (module docstring);
    reset, step, infos and autoreset as NertzGymVectorEnv."""

    def __init__(self, n_tables: int = 16, config=None, seed=0, reward: str = "score",
                 observation: str = "v0", **rules):
        attach_selfplay(self, n_tables, config, seed, reward, rules, observation)
        (self.single_observation_space, self.single_action_space, self.observation_space,
         self.action_space) = vector_spaces(self.num_envs, observation)
        self._all_true = np.ones(self.num_envs, bool)
        self._dealt = False

    def __repr__(self) -> str:
        return (f"NertzSelfPlayGymVectorEnv(n_tables={self.n_tables}, {self.config.num_seats} "
                f"seats: num_envs={self.num_envs})")


def make_selfplay_vector(num_envs: int, config=None, seed=0, reward: str = "score",
                         observation: str = "v0", **rules) -> NertzSelfPlayGymVectorEnv:
    """The `vector_entry_point` of "nertz_env/NertzSelfPlay-v0" (gymnasium.make_vec):
    num_envs rows, a positive multiple of the seats per table (num_envs // seats tables)."""
    check_rule_kwargs(rules, ("num_envs", "config", "seed", "reward", "observation"))
    config = env_config(config, rules)
    S = config.num_seats
    if isinstance(num_envs, (bool, np.bool_)) or not isinstance(num_envs, (int, np.integer)) \
            or num_envs < S or num_envs % S:
        raise ValueError(f"num_envs={num_envs!r}: self-play rows are every seat of every "
                         f"table, so a positive multiple of the {S} seats per table")
    return NertzSelfPlayGymVectorEnv(int(num_envs) // S, config=config, seed=seed,
                                     reward=reward, observation=observation)
