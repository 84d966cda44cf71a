"""NertzParallelEnv: the PettingZoo Parallel view of one Engine table.

Owns: agent names, spaces, reward shaping, episode bookkeeping (hands of a game), state
snapshots. It holds no rules: every tick is `Engine.step`, every observation `Engine.observe`,
every mask `Engine.masks`, every score `Engine.hand_scores`.

## Description
Nertz (Nerts, Pounce) for 2 to 8 teams of one or two players, played in discrete speed ticks:
every agent acts every step, the engine resolves the moves of a tick together (docs/rules.md R20-R23).
One step of this environment is one tick of the table.

## Action Space
`Discrete(322)` for every agent: the numbering of `nertz_env/actions.py` (0 = wait, 1 = flip,
2 = call, 3-9 to the Lake, 10-19 builds, 20-279 River shifts, 280-321 stacks). Legal ids are
marked by `action_mask`. An agent left out of `actions` (or given None) waits. An illegal id
costs `penalty_points` under the default `illegal_move="penalize"` (R31) and never raises
(`"ignore"`: a free Wait; `"raise"`: a ValueError naming the agent and the id). Anything but
an action id (a bool, a float such as 1.9, a string, an id outside 0..321), an unknown agent
or actions that are not a dict is a ValueError naming the agent (`nertz_env.actions.
check_action_id`: every env gives the same bad action the same answer), and the env is
unchanged.

## Observation Space
`Dict({"observation": Box(-1, 1, (OBS_DIM,), float32), "action_mask": Box(0, 1, (322,), int8)})`:
the flat vector of `nertz_env/core/observe.py` (its docstring tables the segments; face-down
cards never appear) and the agent's legal moves (only here: not in the infos). Every step
returns fresh arrays: what a caller keeps is never written again. With `observation="v1"`
(`nertz_env.nertz_v1`) the vector is `Box(-1, 1, (V1_OBS_DIM,), float32)`, V1_OBS_DIM = 1019:
v0's 791 floats, then what the agent's seat remembers of the face-down cards it has seen
(`nertz_env/core/observe_memory.py`, 228 floats: its own Stream cards seen and where they lie,
its next flips, the card under its waste top and under its Nertz top, per opponent the card
under its waste top and its next flip), written from the table's public memory
(`core/memory.py`), which the env then keeps after every tick.

## Infos
Numbers only (TorchRL's PettingZooWrapper builds specs from them): `team` (int), `role` (int,
R4: `ROLE_SOLO` = 0 a one-player team, `ROLE_NERTZ` = 1 holds the Nertz pile, `ROLE_STREAM` =
2 holds the Stream; two-player teams swap roles every hand), `hand` (the hand's number in the
game), `tick`, `applied` (bool: the agent's move took effect this tick; False after reset).

## Rewards (`reward=`)
- `"score"`: each step, the change of the agent's team hand score (R29, `Engine.hand_scores`)
  since the previous step. The baseline of every hand is 0, so the first step of a hand also
  carries the dealt position's score (-nertz_penalty per Nertz card): the rewards of one hand
  sum exactly to its R29 score, and over a game (`episode="game"`) to the team's total.
- `"relative"`: the "score" reward minus the mean of the other teams' "score" rewards. Summed
  over teams (one agent per team) it is zero every step.
- `"win"`: 0 on every step but the last of a game, where the winning team's agents get +1 and
  every other agent -1. It needs `episode="game"` (a single hand has no winner under R30):
  `reward="win"` with `episode="hand"` is a ValueError.

## Episode End
- `episode="hand"` (default): one hand. A Nertz call ends it: `terminations` all True. The
  hand reaching `max_ticks` (R26) ends it: `truncations` all True.
- `episode="game"`: hands numbered 0, 1, 2, ... (two-player teams swap roles, R4) are dealt one
  after another until `nertz_env.table.games.decide_winner` names a winner (R30); then `terminations`
  are all True. A step that ends a hand but not the game returns the new hand's first
  observation (its reward still belongs to the finished hand). If `nertz_env.table.games.MAX_HANDS`
  hands pass without a winner, `truncations` are all True.
After either, `agents` is empty until `reset()`.

## Arguments
Every `RulesConfig` field as a keyword (`num_teams`, `team_sizes`, `river_size`, ..., `max_ticks`),
with `illegal_move` defaulting to `"penalize"` here; or `config=RulesConfig(...)` (fields given
as keywords override it). Then `render_mode` (None, "ansi": `render()` returns the Table's
text picture, "human": prints it, "rgb_array": `render()` returns the H x W x 3 uint8 picture of
`nertz_env.envs.render`, a constant size per number of teams), `episode` ("hand" |
"game"), `reward` ("score" | "relative" | "win"), `observation` ("flat" or its other name
"v0": the v0 vector; "v1": with the memory block, nertz_v1's default). A bad name or value
is a ValueError. `reset(seed=..., options={"layout": layout})` starts from a docs/api.md layout;
`seed` is None or an int >= 0, `options` None or a dict whose only key is "layout" (anything
else is a ValueError, and the env is unchanged; the one exception is the key "options", which
PettingZoo's own api_test passes to probe reset and which does nothing).

## Version History
A change to the observation (its size, its segments, any value in it) or to the infos' keys
or kinds is a new entry here, ending with the fingerprint tests/envs/test_version_history.py
computes (v1 where agents trained on v0 no longer fit).
- v0: initial release; `render_mode="rgb_array"` added (same v0: observations, rewards and
  dynamics unchanged). Later in v0: infos hold numbers only (`role` an int code, was the
  role's name; `action_mask` only in the observation, no longer also in the infos); unknown
  reset options are ValueErrors. The observation itself has not changed since the initial
  release: `OBS_DIM` = 791 in the segments of `core/observe.py` (every rewrite of the
  writer bit-identical). Infos: `team`, `role`, `hand`, `tick`, `applied`.
  Layout fingerprint: `347f0548b3d0efde`.
- v1: `nertz_env.nertz_v1`, or `observation="v1"` (v0 unchanged byte for byte): the
  observation is v0's 791 floats followed by a 228-float memory block (`core/observe_memory.py`, its
  docstring tables the offsets): what the seat has seen of face-down cards (R15: its own Stream
  cards seen as waste tops and where they lie, its next three flips, the cards under its waste
  and Nertz tops; per opponent the card under its waste top, its next flip and how many of its
  Stream positions are known), from public events only. `V1_OBS_DIM` = 1019. Actions,
  rewards, infos and dynamics as v0; get_state/set_state carry the memory.
  Layout fingerprint: `170e460ea0a9d97a`.
"""
from __future__ import annotations

import operator
from collections.abc import Mapping

import numpy as np
from gymnasium import logger
from pettingzoo import ParallelEnv

from ..actions import N_ACTIONS, WAIT, check_action_id
from ..config import RulesConfig
from ..core.scoring import relative_points
from ..core.state import NertzState
from ..engine import Engine
from .episode import (GameLedger, check_options, check_reward, check_rule_kwargs,
                      check_seed, env_config, illegal_move_error, load_snapshot, take_snapshot,
                      team_rewards)
from ..table.games import MAX_HANDS
from ..encoding import PLAYING
from .render import render_rgb
from .memory_keeper import TableMemory
from .spaces import action_space, agent_observation_space, state_space
from ..table.table import Table

OBSERVATIONS = ("flat", "v0", "v1")     # "flat" is v0's name since the initial release
RENDER_MODES = ("ansi", "human", "rgb_array")
ROLE_SOLO, ROLE_NERTZ, ROLE_STREAM = 0, 1, 2   # infos[agent]["role"] (R4)
# PettingZoo's api_test / parallel_api_test call reset(options={"options": 1}) to see that
# reset takes options: that one key is accepted (and does nothing) so the checkers pass
_PETTINGZOO_PROBE = ("options",)

# state(): every state array but the generator key (rng), then the game's totals and calls
_STATE_FIELDS = tuple(f for f in NertzState._fields if f != "rng")
_INT_ONLY = frozenset({int})              # the fast path's action types: plain ints only
_ACTION_IDS = frozenset(range(N_ACTIONS))  # ... and values


class NertzParallelEnv(ParallelEnv):
    """Nertz as a PettingZoo ParallelEnv over one Engine table (see the module docstring)."""

    metadata = {"name": "nertz_v0", "render_modes": list(RENDER_MODES), "is_parallelizable": True,
                "render_fps": 4}

    def __init__(self, config: RulesConfig | None = None, *, render_mode: str | None = None,
                 episode: str = "hand", reward: str = "score", observation: str = "flat",
                 **rules):
        check_rule_kwargs(rules, ("config", "render_mode", "episode", "reward", "observation"))
        config = env_config(config, rules)
        if render_mode is not None and render_mode not in RENDER_MODES:
            raise ValueError(f"render_mode={render_mode!r}: one of None, {', '.join(map(repr, RENDER_MODES))}")
        check_reward(reward, episode)
        if not (isinstance(observation, str) and observation in OBSERVATIONS):
            raise ValueError(f"observation={observation!r}: one of {OBSERVATIONS} (\"flat\" "
                             f"and \"v0\" the same; \"v1\" with what each seat remembers)")

        self.config = config
        self.render_mode = render_mode
        self.episode, self.reward, self.observation = episode, reward, observation
        self._engine = Engine(config, n_tables=1)
        self._table = Table(self._engine)
        # v1: the table's public memory, kept after every tick (envs/memory_keeper.py)
        self._memory = TableMemory(self._engine) if observation == "v1" else None
        if observation == "v1":
            self.metadata = {**self.metadata, "name": "nertz_v1"}
        self._raise_illegal = config.illegal_move == "raise"

        S, T = config.num_seats, config.num_teams
        self.possible_agents = [f"player_{i}" for i in range(S)]
        self.agents: list[str] = []
        self._seat = {a: s for s, a in enumerate(self.possible_agents)}
        self._agent_team = {a: config.seat_team[s] for a, s in self._seat.items()}
        self._sizes = config.sizes
        # one object per agent, returned by every call (PettingZoo's checkers compare identity)
        version = "v1" if observation == "v1" else "v0"
        self.observation_spaces = {a: agent_observation_space(version)
                                   for a in self.possible_agents}
        self.action_spaces = {a: action_space() for a in self.possible_agents}
        self.state_space = state_space(self._engine.state, _STATE_FIELDS, MAX_HANDS)

        self._applied = [0] * S                   # per seat: 1 = the last tick applied its move
        self._wait_ids = [WAIT] * S
        self._ids = np.zeros((1, S), np.int64)   # step's ids, handed to the engine
        # per agent, precomputed once: (agent, seat, team, (role in even hands, in odd hands))
        self._rows = [(a, s, self._agent_team[a],
                       (self._role(s, self._agent_team[a], 0), self._role(s, self._agent_team[a], 1)))
                      for a, s in self._seat.items()]
        self._hand_rows, self._rows_hand = None, None    # _hand_rows_of: per hand number
        self._all_false = dict.fromkeys(self.possible_agents, False)
        self._n_seats = S
        self._seat_rows = (np.zeros(S, np.int64), np.arange(S, dtype=np.int64))
        # actions dict -> tuple of its values in seat order (KeyError if an agent is missing)
        self._ids_in_seat_order = operator.itemgetter(*self.possible_agents)
        # reward baseline, game totals/calls/hands (shared with NertzGymEnv: episode.py)
        self._game = GameLedger(T, config.target_score, episode)

    # ------------------------------------------------------------------ spaces
    def observation_space(self, agent):
        return self.observation_spaces[agent]

    def action_space(self, agent):
        return self.action_spaces[agent]

    # ------------------------------------------------------------------ episode
    def reset(self, seed=None, options=None):
        seed = check_seed(seed)
        layout = check_options(options, tolerated=_PETTINGZOO_PROBE).get("layout")
        src = None
        if layout is not None:                    # parsed before anything changes
            src = Table.from_layout(layout, self.config)
            if src.hand_over:
                raise ValueError("options['layout'] describes a finished hand (callers named or "
                                 "tick >= max_ticks); give a position still in play")
        eng = self._engine
        eng.reset(seed=seed, hands=[0])
        if src is not None:
            eng.load_position(src.engine)   # this env's seeded tick order stays (R22)
        if self._memory is not None:
            self._memory.dealt()
        self.agents = self.possible_agents[:]
        self._applied = [0] * self.config.num_seats
        self._game.reset()
        return self._observe()

    def step(self, actions):
        agents = self.agents
        if not agents:
            raise ValueError("step() after the episode ended: call reset() first")
        ids = None
        if type(actions) is dict:                 # the common case: every agent, plain int ids
            try:
                ids = self._ids_in_seat_order(actions)
            except KeyError:                      # an agent left out
                ids = None
            if ids is not None and not (len(actions) == len(ids)
                                        and _INT_ONLY.issuperset(map(type, ids))
                                        and _ACTION_IDS.issuperset(ids)):
                ids = None
        if ids is None:                           # the general path: agents left out, None,
            ids = self._action_ids(actions)       # numpy ids, and the errors
        if self._raise_illegal:
            self._check_legal(ids)
        eng = self._engine
        # tick, R29 scores, every seat's view and mask (fresh arrays) in one engine call; the
        # ids are validated above (checked=True: not again)
        self._ids[0] = ids
        summary, obs, masks = eng.step_observe(self._ids, checked=True)
        row = summary.table(0)
        if self._memory is None:
            arrays = (*obs[0], *masks[0])         # per seat: observation rows, then mask rows
        else:                                     # v1: the tick remembered, blocks appended
            self._memory.ticked()
            arrays = (*self._memory.v1(obs[0], *self._seat_rows), *masks[0])
        self._applied = row.applied               # 1 = applied (infos give bools)
        scores = row.scores
        if row.status == PLAYING:                 # the common step: the hand goes on
            team_rewards = self._game.playing_delta(scores)
            if self.reward != "score":
                team_rewards = self._playing_rewards(team_rewards)
            terminated = truncated = False
            tick, hand = row.tick, row.hand
        else:                                     # hand/game end, next hand (episode.py)
            out = self._game.after_tick(eng, scores)
            if self._memory is not None:
                self._memory.ticked()             # a game's next hand: remembered afresh
            terminated, truncated = out.terminated, out.truncated
            if out.hand_over and not (terminated or truncated):
                arrays = self._copied_rows()      # a game's next hand was dealt
            team_rewards = self._team_rewards(out.delta, out.win)
            tick, hand = eng.state.tick.item(0), eng.state.hand.item(0)
        observations, infos, rewards = self._returns(arrays, tick, hand, team_rewards)
        if terminated or truncated or agents != self.possible_agents:
            terminations = dict.fromkeys(agents, terminated)
            truncations = dict.fromkeys(agents, truncated)
        else:                                     # the common step: copies of one dict
            terminations, truncations = self._all_false.copy(), self._all_false.copy()
        if terminated or truncated:
            self.agents = []
        if self.render_mode == "human":
            self.render()
        return observations, rewards, terminations, truncations, infos

    def check_action(self, agent, action) -> int:
        """The id `agent` may send now (what step() checks per agent, also used by the AEC
        form at each agent's turn): an action id (check_action_id, ValueError naming the
        agent) and, under illegal_move="raise", one of the agent's legal moves (R31)."""
        seat = self._seat.get(agent) if isinstance(agent, str) else None
        if seat is None:
            raise ValueError(f"unknown agent {agent!r}: agents are {self.possible_agents}")
        a = check_action_id(action, agent)
        if self._raise_illegal and not self._engine.masks[0, seat, a]:
            raise illegal_move_error(agent, a, self._engine.masks[0, seat])
        return a

    def _check_legal(self, ids) -> None:
        """R31 under illegal_move="raise", before the engine sees the ids (naming the agent)."""
        masks = self._engine.masks[0]
        for seat, a in enumerate(ids):
            if not masks[seat, a]:
                raise illegal_move_error(self.possible_agents[seat], a, masks[seat])

    def _action_ids(self, actions) -> list:
        """One validated id per seat (WAIT for an agent left out or given None); a ValueError
        naming the agent for an unknown agent or a bad action."""
        if not isinstance(actions, Mapping):
            raise ValueError(f"actions must be a dict {{agent: action id}}, got "
                             f"{type(actions).__name__}")
        ids = list(self._wait_ids)
        seat_of = self._seat
        for agent, action in actions.items():
            seat = seat_of.get(agent) if isinstance(agent, str) else None
            if seat is None:
                raise ValueError(f"unknown agent {agent!r}: agents are {self.possible_agents}")
            if action is not None:
                ids[seat] = check_action_id(action, agent)
        return ids

    def _playing_rewards(self, delta: list) -> list:
        """episode.team_rewards for reward "relative" or "win" of a step within a hand (no
        winner yet), delta a list of floats ("score" is delta itself): the same floats without
        numpy (tests compare the two)."""
        T = self.config.num_teams
        if self.reward == "relative":
            total = sum(delta)
            return [relative_points(d, total, T) for d in delta]
        return [0.0] * T                          # "win": nothing before a game's end

    def _team_rewards(self, delta, win) -> list:
        """One float reward per team (module docstring, Rewards): episode.team_rewards."""
        return team_rewards(self.reward, delta, win)

    def _returns(self, arrays, tick, hand, team_rewards=None):
        """(observations, infos, rewards) of the live agents: fresh dicts. arrays: seat s's
        observation at arrays[s], its mask at arrays[S + s] (fresh arrays of this step)."""
        S = self._n_seats
        applied = self._applied
        rows = self._hand_rows if hand == self._rows_hand else self._hand_rows_of(hand)
        agents = self.agents
        if agents != self.possible_agents:
            rows = [r for r in rows if r[0] in agents]
        observations, infos, rewards = {}, {}, {}
        for agent, seat, team, base in rows:      # one pass: most of a step's Python time
            observations[agent] = {"observation": arrays[seat], "action_mask": arrays[S + seat]}
            infos[agent] = info = base.copy()
            info["applied"] = applied[seat] == 1
            info["tick"] = tick
            if team_rewards is not None:
                rewards[agent] = team_rewards[team]
        return observations, infos, rewards

    def _hand_rows_of(self, hand: int) -> list:
        """Per agent in seat order, for hand number `hand`: (agent, seat, team, base info):
        the info dict's constant part (team, R4 role, hand), its other keys filled per step
        (a copy of it, then two stores: faster than a dict display of five keys)."""
        self._hand_rows = [(agent, seat, team, {"team": team, "role": roles[hand & 1],
                                                "applied": False, "tick": 0, "hand": hand})
                           for agent, seat, team, roles in self._rows]
        self._rows_hand = hand
        return self._hand_rows

    def _observe(self):
        """(observations, infos) of the current position, from copies of the engine's
        buffers (it rewrites them)."""
        eng = self._engine
        observations, infos, _ = self._returns(self._copied_rows(), eng.state.tick.item(0),
                                               eng.state.hand.item(0))
        return observations, infos

    def _copied_rows(self) -> tuple:
        """_returns' arrays over copies of the engine's observation and mask buffers."""
        obs, masks = self._engine.observe()[0].copy(), self._engine.masks[0].copy()
        if self._memory is not None:
            obs = self._memory.v1(obs, *self._seat_rows)
        return (*obs, *masks)

    def _role(self, seat, team, hand) -> int:
        """R4: ROLE_SOLO, or who holds the Nertz pile (ROLE_NERTZ) / the Stream (ROLE_STREAM)
        in a two-player team."""
        if self._sizes[team] == 1:
            return ROLE_SOLO
        first = seat == self.config.seat_team.index(team)
        first_holds_nertz = not (self.config.alternate_roles and hand % 2 == 1)
        return ROLE_NERTZ if first == first_holds_nertz else ROLE_STREAM

    # ------------------------------------------------------------------ views
    @property
    def table(self) -> Table:
        """The readable Table over this env's engine (hand_scores(), layout(), render())."""
        return self._table

    @property
    def engine(self) -> Engine:
        return self._engine

    def render(self):
        if self.render_mode is None:
            logger.warn("render() without a render_mode: give render_mode='ansi', 'human' or "
                        "'rgb_array'")
            return None
        if self.render_mode == "rgb_array":
            return render_rgb(self._table.layout(), scores=self._table.hand_scores())
        text = self._table.render()
        if self.render_mode == "ansi":
            return text
        print(text)
        return None

    def close(self):
        pass

    def state(self) -> np.ndarray:
        """The full table for centralized critics: every state array of layout.py but the
        generator key, raveled in NertzState order and cast to float32, then the game's
        totals and Nertz calls per team (zeros with episode="hand")."""
        s = self._engine.state
        parts = [getattr(s, name)[0].ravel() for name in _STATE_FIELDS]
        parts += [self._game.totals, self._game.calls]
        return np.concatenate(parts).astype(np.float32)

    # ------------------------------------------------------------------ snapshots
    def get_state(self) -> dict:
        """A deep copy of everything that decides what follows: the engine's state arrays and
        generator, the reward baseline, the game's hands/totals/calls and the live agents."""
        snap = {**take_snapshot(self._engine, self._game),
                "applied": np.array(self._applied, bool), "agents": list(self.agents)}
        if self._memory is not None:              # v1: the memory too
            snap["table_memory"] = self._memory.get_state()
        return snap

    def set_state(self, snapshot: dict):
        """Restore a get_state() snapshot of an env with the same config; returns the
        (observations, infos) of the restored position."""
        def check(snap):
            agents, applied = snap["agents"], np.asarray(snap["applied"])
            if not isinstance(agents, list) or len(set(agents)) != len(agents) \
                    or not set(agents) <= set(self.possible_agents):
                raise ValueError(f"set_state: agents {agents!r} must be a list of distinct "
                                 f"names among {self.possible_agents}")
            if applied.dtype != bool or applied.shape != (self.config.num_seats,):
                raise ValueError(f"set_state: 'applied' must be {self.config.num_seats} bools, "
                                 f"got {snap['applied']!r}")
            return list(agents), applied.tolist()

        agents, self._applied = load_snapshot(self._engine, self._game, snapshot, check)
        self.agents = agents
        if self._memory is not None:              # (a snapshot without one: afresh)
            self._memory.set_state(snapshot.get("table_memory"))
        return self._observe()

    def __repr__(self) -> str:
        return (f"NertzParallelEnv({self.config.num_teams} teams, seats {self.config.num_seats}, "
                f"episode={self.episode!r}, reward={self.reward!r}"
                + (", observation='v1')" if self._memory is not None else ")"))

    def __str__(self) -> str:
        return self.metadata["name"]

