"""LearnerBatch: the batched one-learner game shared by NertzVecEnv (stable-baselines3) and
NertzGymVectorEnv (Gymnasium): num_envs tables in one numba call per step
(core/batch.py vec_step_batch / vec_step_range), seat `learner_seat` of every table played
by the caller, every other seat by a bot that lives inside the core.

Opponents (`opponents=`): None or "random" (uniformly random legal moves), one agent spec
or agent for every other seat ("greedy", "heuristic:style=cautious", ...), a list with one
per other seat in seat order, or a mapping seat -> spec. Only bots the core can play
(`core_policy()`: random, greedy, heuristic styles) are accepted: the vector envs never leave
numba per step; NertzGymEnv takes any agent, torch policies included.

Learner actions (`set_actions`) are checked before anything changes: one integer id per table
(`nertz_env.actions.check_action_array`: the same answers as every env), and under
illegal_move="raise" (R31) a ValueError naming the table and the id for a move that is not
legal now. Under "penalize" the kernel plays an illegal id as Wait and adds a penalty to the
learner's team (core/tick.py); under "ignore" it is a free Wait.

Seats played from outside numba (`external`): a caller may mark other seats POLICY_EXTERNAL
in `kinds` (per table, at any time) and set `external`, a callable
`external(obs_rows, mask_rows, table_idx, seat_idx) -> ids`. Before each step's kernel, the
seat driver (envs/seats.py) gathers the observation (float32 [n, OBS_DIM]) and legal moves
(bool [n, N_ACTIONS]) of every such seat of every table, table-major, in one numba call, and
`external` is called once with all n rows; its ids (one integer id per row, checked once
there, R31 under "raise" included) are played by those seats in that step. With `external`
None no seat is gathered and the step is the single kernel call.

Opponents that see their seat's view (`seat_view = True`, e.g. `search:` agents made by
agents.registry.make_agent; envs/opponents.py) sit at POLICY_EXTERNAL seats and are the
batch's `external`: before each step, one `act_view(SeatView)` call per agent over all its
rows (envs/memory_keeper.py keeps the tables' public memory and deal keys for it).

Observations (`observation=`): "v0" (default) the learner's flat vector of core/observe.py,
float32 [num_envs, OBS_DIM]; "v1" with its memory block appended (core/observe_memory.py,
V1_OBS_DIM). Where the memory is kept (v1 or a viewer), each step is core/observe_memory.py
vec_step_memory_batch (the same tick, rewards and re-deal, the memory updated inside it, so a
finished hand's final_obs has its block); otherwise vec_step_observe_batch as before.
"""
from __future__ import annotations

import numpy as np

from ..bot_specs import core_bot
from ..config import RulesConfig
from ..core.batch import (
    REWARD_RELATIVE,
    REWARD_SCORE,
    vec_step_observe_batch,
    vec_step_observe_range,
)
from ..core.observe_memory import vec_step_memory_batch, vec_step_memory_range
from ..core.policies import POLICY_EXTERNAL, new_policy_arrays
from ..engine import Engine
from .episode import check_rule_kwargs, check_seed, env_config
from .memory_keeper import TableMemory
from .opponents import SeatRows, for_table, is_viewer, opponents_per_seat
from .seats import SeatDriver
from .spaces import OBSERVATION_DIMS, check_observation

REWARDS = {"score": REWARD_SCORE, "relative": REWARD_RELATIVE}


def core_bots(opponents, config: RulesConfig, learner_seat: int, n_tables: int,
              viewers: dict | None = None):
    """(kinds [E, S], knobs [E, S, K], names) of the opponents (module docstring): spec
    strings of nertz_env/bot_specs.py, or objects with `core_policy() -> (kind, knobs)` (the
    agents package's bots). viewers: a dict to take agents played with a SeatView (seat ->
    the agent told the table, its seats POLICY_EXTERNAL); None refuses them."""
    others = [s for s in range(config.num_seats) if s != learner_seat]
    per_seat = opponents_per_seat(opponents, others)      # seats left out: random
    kinds, knobs = new_policy_arrays(n_tables, config.num_seats)
    kinds[:, learner_seat] = POLICY_EXTERNAL
    names = {}
    for s, (spec, where) in per_seat.items():
        spec = "random" if spec is None else spec
        if isinstance(spec, str) and spec.strip().partition(":")[0] == "search":
            raise ValueError(f"{where}: {spec!r} is a search agent, not a bot the core plays; "
                             f"the vector envs play it as an object with a seat view: give "
                             f"agents.registry.make_agent({spec!r}) instead")
        if isinstance(spec, str):
            try:
                kind, row, name = core_bot(spec)
            except ValueError as err:
                raise ValueError(f"{where}: {err}") from None
        elif viewers is not None and is_viewer(spec):
            viewers[s] = for_table(spec, config)
            kinds[:, s] = POLICY_EXTERNAL
            names[s] = getattr(spec, "name", type(spec).__name__)
            continue
        else:
            core = spec.core_policy() if callable(getattr(spec, "core_policy", None)) else None
            name = getattr(spec, "name", type(spec).__name__)
            if core is None:
                raise ValueError(f"{where}: {name!r} does not run inside the core; the vector "
                                 "envs take random, greedy and heuristic bots and agents "
                                 "played with a seat view (search:); NertzGymEnv takes any "
                                 "agent")
            kind, row = core
        kinds[:, s], knobs[:, s] = kind, row
        names[s] = name
    return kinds, knobs, names


def attach(env, num_envs, config, seed, learner_seat, reward, opponents, rules,
           observation: str = "v0") -> None:
    """Give a vector env its LearnerBatch and the attributes both vector envs expose
    (batch, config, engine, num_envs, learner_seat, render_mode, observation)."""
    if isinstance(num_envs, (bool, np.bool_)) or not isinstance(num_envs, (int, np.integer)) \
            or num_envs < 1:
        raise ValueError(f"num_envs={num_envs!r}: an int >= 1")
    check_rule_kwargs(rules, ("num_envs", "config", "seed", "learner_seat", "reward",
                              "opponents", "observation"))
    check_observation(observation)
    config = env_config(config, rules)
    env.batch = LearnerBatch(int(num_envs), config, seed, learner_seat, reward, opponents,
                             observation)
    env.observation = observation
    env.config, env.engine = config, env.batch.engine
    env.num_envs, env.learner_seat, env.render_mode = env.batch.num_envs, env.batch.learner_seat, None


class LearnerBatch:
    """The engine, buffers and bots of the batched learner game (module docstring)."""

    def __init__(self, num_envs: int, config: RulesConfig, seed, learner_seat: int,
                 reward: str, opponents=None, observation: str = "v0"):
        if not (isinstance(reward, str) and reward in REWARDS):
            raise ValueError(f"reward={reward!r} is invalid: one of {sorted(REWARDS)} for the "
                             f"vector env")
        if isinstance(learner_seat, (bool, np.bool_)) \
                or not isinstance(learner_seat, (int, np.integer)) \
                or not 0 <= learner_seat < config.num_seats:
            raise ValueError(f"learner_seat={learner_seat!r}: seats are 0..{config.num_seats - 1}")
        seed = check_seed(seed)
        self.observation = check_observation(observation)
        self.obs_dim = OBSERVATION_DIMS[observation]
        self.config = config
        self.engine = Engine(config, num_envs, seed)      # validates num_envs
        self.num_envs = num_envs
        self.learner_seat = int(learner_seat)
        self._raise_illegal = config.illegal_move == "raise"
        self.reward_kind = REWARDS[reward]
        self.viewers = {}                  # seat -> an opponent played with a SeatView
        self.kinds, self.knobs, self.opponent_names = core_bots(opponents, config, learner_seat,
                                                                num_envs, self.viewers)
        T = config.num_teams
        self.prev = np.zeros((num_envs, T), np.float64)
        self.cur = np.zeros((num_envs, T), np.float64)
        self.final_scores = np.zeros((num_envs, T), np.float64)   # (the kernel's dtype)
        self.rewards = np.zeros(num_envs, np.float64)
        self.terminated = np.zeros(num_envs, np.int8)
        self.truncated = np.zeros(num_envs, np.int8)
        self.final_obs = np.zeros((num_envs, 1, self.obs_dim), np.float32)
        self.policy_rng = np.zeros(num_envs, np.uint64)
        self.actions = np.zeros(num_envs, np.int16)
        self.external = None               # the outside seats' callable (module docstring)
        self._driver = SeatDriver(self.engine)
        # the public memory, only where v1 observations or a viewer read it (memory_keeper.py)
        self.memory = (TableMemory(self.engine) if observation == "v1" or self.viewers
                       else None)
        if self.viewers:
            self.external = self._viewer_actions

    def keep_memory(self) -> TableMemory:
        """The tables' public memory, kept from now on where it was not (an outside caller
        that plays a seat-view agent at these tables: the training league): each step then
        updates it (step); tables mid-hand are remembered afresh, so they forget what was seen
        before rather than invent it."""
        if self.memory is None:
            self.memory = TableMemory(self.engine)
            self.memory.dealt()
        return self.memory

    def reset(self, seed=None) -> np.ndarray:
        """Deal every table (seed: restart the engine's generator; None: continue it); the
        learner's observations."""
        self.engine.reset(seed=check_seed(seed))
        self.policy_rng[:] = self.engine.np_random.integers(0, 2**63, size=self.num_envs,
                                                            dtype=np.uint64)
        if self.memory is not None:
            self.memory.dealt()
        self.prev[:] = 0
        return self.observe()

    def set_actions(self, actions) -> None:
        """The learner's ids for the next step, one per table (module docstring): checked
        before anything is written."""
        tables = np.arange(self.num_envs)
        self.actions[:] = SeatDriver.check(actions, self.engine.masks[:, self.learner_seat],
                                           tables, np.full_like(tables, self.learner_seat),
                                           "actions", "raise" if self._raise_illegal else "engine")

    def step(self) -> np.ndarray:
        """One tick at every table with the actions set by set_actions; the new observations
        (a fresh float32 [num_envs, obs_dim] array, written by the same numba call that plays
        the tick: core/batch.py vec_step_observe_*, or with the memory kept core/
        observe_memory.py vec_step_memory_*). rewards / terminated / truncated /
        final_scores / final_obs hold the step's results."""
        eng = self.engine
        if self.external is not None:
            self._external_actions()
        obs = np.empty((self.num_envs, 1, self.obs_dim), np.float32)
        args = (eng.masks, eng.actions, eng.priority, eng.applied, self.actions,
                self.learner_seat, self.kinds, self.knobs, self.policy_rng, self.reward_kind,
                self.prev, self.cur, self.rewards, self.terminated, self.truncated,
                self.final_scores, self.final_obs, obs)
        if self.memory is None:
            eng.run_kernel(vec_step_observe_batch, vec_step_observe_range, *args)
        else:
            eng.run_kernel(vec_step_memory_batch, vec_step_memory_range, *args,
                           self.memory.memory, self.observation == "v1")
        if eng.recorder is not None:
            eng.recorder.after_vec_step(eng, self.terminated, self.truncated, self.final_scores)
        return obs.reshape(self.num_envs, self.obs_dim)

    def _external_actions(self) -> None:
        """eng.actions of every POLICY_EXTERNAL seat but the learner's, from one call of
        `external` over all their rows (module docstring): envs/seats.py SeatDriver."""
        ext = self.kinds == POLICY_EXTERNAL
        ext[:, self.learner_seat] = False
        row_t, row_s = np.nonzero(ext)                  # table-major
        # the vector kernel plays illegal ids by the rule (penalize/ignore) but never raises:
        # under "raise" the driver does
        self._driver.drive(row_t, row_s, lambda obs, masks: self.external(obs, masks, row_t,
                                                                          row_s),
                           illegal="raise" if self._raise_illegal else "engine",
                           where="external ids")

    def _viewer_actions(self, obs, masks, row_t, row_s) -> np.ndarray:
        """`external` when viewers sit here: one act_view per agent over its rows."""
        return SeatRows({}, self.viewers, row_t, row_s, None, self.memory.view)(obs, masks)

    def observe(self) -> np.ndarray:
        v0 = self.engine.observe(self.learner_seat)[:, 0]
        if self.observation == "v0":
            return v0.copy()
        tables = np.arange(self.num_envs)
        return self.memory.v1(v0, tables, np.full_like(tables, self.learner_seat))

    def action_masks(self) -> np.ndarray:
        """Bool [num_envs, N_ACTIONS]: the learner seat's legal moves."""
        return self.engine.masks[:, self.learner_seat].astype(bool)
