"""NertzParallelEnv: the PettingZoo Parallel view of one Engine table.

Owns: agent names, spaces, reward shaping, episode bookkeeping (hands of a game), state
snapshots. It holds no rules: every tick is `Engine.step`, every observation `Engine.observe`,
every mask `Engine.masks`, every score `Engine.hand_scores`.

## Description
Nertz (Nerts, Pounce) for 2 to 8 teams of one or two players, played in discrete speed ticks:
every agent acts every step, the engine resolves the moves of a tick together (RULES.md R20-R23).
One step of this environment is one tick of the table.

## Action Space
`Discrete(322)` for every agent: the numbering of `nertz_env/actions.py` (0 = wait, 1 = flip,
2 = call, 3-9 to the Lake, 10-19 builds, 20-279 River shifts, 280-321 stacks). Legal ids are
marked by `action_mask`. An agent left out of `actions` (or given None) waits. An illegal id
costs `penalty_points` under the default `illegal_move="penalize"` (R31) and never raises;
an id outside 0..321 is a ValueError naming the agent and the id.

## Observation Space
`Dict({"observation": Box(-1, 1, (OBS_DIM,), float32), "action_mask": Box(0, 1, (322,), int8)})`:
the flat vector of `nertz_env/core/observe.py` (its docstring tables the segments; face-down
cards never appear) and the agent's legal moves. The same mask is in `infos[agent]["action_mask"]`.
The arrays are the env's own and never change while anything references them (keep them, or
a view of them, as long as you like); the env reuses an array only once every reference to
it is gone (CPython reference counts), so a loop that drops each step's observations
allocates nothing.

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
  after another until `nertz_env.game.decide_winner` names a winner (R30); then `terminations`
  are all True. A step that ends a hand but not the game returns the new hand's first
  observation (its reward still belongs to the finished hand). If `nertz_env.game.MAX_HANDS`
  hands pass without a winner, `truncations` are all True.
After either, `agents` is empty until `reset()`.

## Arguments
Every `RulesConfig` field as a keyword (`num_teams`, `team_sizes`, `river_size`, ..., `max_ticks`),
with `illegal_move` defaulting to `"penalize"` here; or `config=RulesConfig(...)` (fields given
as keywords override it). Then `render_mode` (None, "ansi": `render()` returns the Table's
text picture, "human": prints it, "rgb_array": `render()` returns the H x W x 3 uint8 picture of
`nertz_env.envs.render`, a constant size per number of teams), `episode` ("hand" |
"game"), `reward` ("score" | "relative" | "win"), `observation` ("flat"). A bad name or value
is a ValueError. `reset(seed=..., options={"layout": layout})` starts from an API.md layout
(other option keys are ignored).

## Version History
- v0: initial release; `render_mode="rgb_array"` added (same v0: observations, rewards and
  dynamics unchanged).
"""
from __future__ import annotations

import dataclasses
import operator
from collections.abc import Mapping
from sys import getrefcount

import numpy as np
from gymnasium import logger, spaces
from pettingzoo import ParallelEnv

from ..actions import N_ACTIONS, WAIT
from ..config import RulesConfig
from ..core.observe import OBS_DIM, SUM_APPLIED, SUM_HAND, SUM_STATUS, SUM_TICK
from ..core.state import NertzState, copy_table
from ..engine import Engine
from .episode import (GameLedger, check_reward, env_config, load_snapshot, take_snapshot,
                      team_rewards)
from ..game import MAX_HANDS
from ..layout import PLAYING
from .render import render_rgb
from ..table import Table

OBSERVATIONS = ("flat",)
RENDER_MODES = ("ansi", "human", "rgb_array")
RULE_FIELDS = tuple(f.name for f in dataclasses.fields(RulesConfig) if f.init)

# state(): every state array but the generator key (rng), then the game's totals and calls
_STATE_FIELDS = tuple(f for f in NertzState._fields if f != "rng")
_BIG = float(np.finfo(np.float32).max)
_INT_ONLY = frozenset({int})              # the fast path's action types: plain ints only
_ACTION_IDS = frozenset(range(N_ACTIONS))  # ... and values
_SLOTS = 3                                 # recycled output slots (_new_slot)


class NertzParallelEnv(ParallelEnv):
    """Nertz as a PettingZoo ParallelEnv over one Engine table (see the module docstring)."""

    metadata = {"name": "nertz_v0", "render_modes": list(RENDER_MODES), "is_parallelizable": True,
                "render_fps": 4}

    def __init__(self, config: RulesConfig | None = None, *, render_mode: str | None = None,
                 episode: str = "hand", reward: str = "score", observation: str = "flat",
                 **rules):
        unknown = sorted(set(rules) - set(RULE_FIELDS))
        if unknown:
            raise ValueError(f"unknown keyword argument(s) {unknown}: allowed are the RulesConfig "
                             f"fields {list(RULE_FIELDS)} and config, render_mode, episode, "
                             f"reward, observation")
        config = env_config(config, rules)
        if render_mode is not None and render_mode not in RENDER_MODES:
            raise ValueError(f"render_mode={render_mode!r}: one of None, {', '.join(map(repr, RENDER_MODES))}")
        check_reward(reward, episode)
        if observation not in OBSERVATIONS:
            raise ValueError(f"observation={observation!r}: one of {OBSERVATIONS}")

        self.config = config
        self.render_mode = render_mode
        self.episode, self.reward, self.observation = episode, reward, observation
        self._engine = Engine(config, n_tables=1)
        self._table = Table(self._engine)

        S, T = config.num_seats, config.num_teams
        self.possible_agents = [f"player_{i}" for i in range(S)]
        self.agents: list[str] = []
        self._seat = {a: s for s, a in enumerate(self.possible_agents)}
        self._agent_team = {a: config.seat_team[s] for a, s in self._seat.items()}
        self._sizes = config.sizes
        # one object per agent, returned by every call (PettingZoo's checkers compare identity)
        self.observation_spaces = {a: spaces.Dict({
            "observation": spaces.Box(-1.0, 1.0, (OBS_DIM,), np.float32),
            "action_mask": spaces.Box(0, 1, (N_ACTIONS,), np.int8),
        }) for a in self.possible_agents}
        self.action_spaces = {a: spaces.Discrete(N_ACTIONS) for a in self.possible_agents}
        self.state_space = _state_space(self._engine.state)

        self._applied = [0] * S                   # per seat: 1 = the last tick applied its move
        self._wait_ids = [WAIT] * S
        # per agent, precomputed once: (agent, seat, team, (role in even hands, in odd hands))
        self._rows = [(a, s, self._agent_team[a],
                       (self._role(s, self._agent_team[a], 0), self._role(s, self._agent_team[a], 1)))
                      for a, s in self._seat.items()]
        self._hand_rows, self._rows_hand = None, None    # _hand_rows_of: per hand number
        self._all_false = dict.fromkeys(self.possible_agents, False)
        self._n_seats = S
        self._actions_c = None                    # _actions_view: ctypes view of actions[0]
        self._slots, self._slot_next, self._slot_refs = [None] * _SLOTS, 0, None  # _new_slot
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
        eng = self._engine
        eng.reset(seed=seed, hands=[0])
        layout = (options or {}).get("layout") if isinstance(options, dict) else None
        if layout is not None:
            src = Table.from_layout(layout, self.config)
            if src.hand_over:
                raise ValueError("options['layout'] describes a finished hand (callers named or "
                                 "tick >= max_ticks); give a position still in play")
            key = eng.state.rng[0]                 # keep this env's seeded tick order (R22)
            copy_table(src.engine.state, 0, eng.state, 0)
            eng.state.rng[0] = key
            eng.refresh_masks()
        self.agents = self.possible_agents[:]
        self._applied = [0] * self.config.num_seats
        self._game.reset()
        return self._observe()

    def step(self, actions):
        agents = self.agents
        if not agents:
            raise ValueError("step() after the episode ended: call reset() first")
        try:                                      # the agents' actions in seat order
            ids = self._ids_in_seat_order(actions)
            fast = len(actions) == len(ids) and _INT_ONLY.issuperset(map(type, ids)) \
                and _ACTION_IDS.issuperset(ids)   # every agent, plain int ids in range
        except (KeyError, TypeError):             # an agent left out; not a dict
            fast = False
        if not fast:                              # the general path: agents left out, None,
            ids = self._action_ids(actions)       # numpy ids, and the errors
        eng = self._engine
        view = self._actions_c                    # validated: the engine's unchecked path
        if view is None:
            view = self._actions_view()
        view[:] = ids                             # engine.actions[0] = ids
        # tick, R29 scores, every seat's view and mask, into arrays no one else references
        k = self._slot_next
        self._slot_next = (k + 1) % _SLOTS
        slot = self._slots[k]
        if slot is None or getrefcount(slot[0]) != self._slot_refs[0] \
                or getrefcount(slot[1]) != self._slot_refs[1] \
                or list(map(getrefcount, slot[2])) != self._slot_refs[2]:
            slot = self._new_slot(k)
        row = eng._step_observe_into(slot[0], slot[1])[0].tolist()
        arrays = slot[2]                          # per seat: observation row, then mask row
        # row: status, tick, hand, applied[S], scores[T]
        S = self._n_seats
        self._applied = row[SUM_APPLIED:SUM_APPLIED + S]   # 1 = applied (infos give bools)
        scores = row[SUM_APPLIED + S:]
        if row[SUM_STATUS] == PLAYING:            # the common step: the hand goes on
            team_rewards = self._game.playing_delta(scores)
            if self.reward != "score":
                team_rewards = self._playing_rewards(team_rewards)
            terminated = truncated = False
            tick, hand = row[SUM_TICK], row[SUM_HAND]
        else:                                     # hand/game end, next hand (episode.py)
            out = self._game.after_tick(eng, scores)
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

    def _actions_view(self):
        """A ctypes array over engine.actions[0]: `view[:] = ids` writes S valid ids at a
        third of numpy's cost for a short sequence of ints. Built on first use, dropped when
        pickled (a ctypes view of a buffer is not picklable) and rebuilt after."""
        row = self._engine.actions[0]
        view = np.ctypeslib.as_ctypes_type(row.dtype) * row.size
        self._actions_c = view.from_buffer(row)
        return self._actions_c

    def __getstate__(self):
        state = self.__dict__.copy()
        state["_actions_c"] = None                # a ctypes view of a buffer: not picklable
        state["_slots"] = [None] * _SLOTS         # views would come back as separate copies
        return state

    def _action_ids(self, actions) -> list:
        """One validated id per seat (WAIT for an agent left out or given None); a ValueError
        naming the agent for an unknown agent or a bad action."""
        if not isinstance(actions, Mapping):
            raise ValueError(f"actions must be a dict {{agent: action id}}, got "
                             f"{type(actions).__name__}")
        ids = list(self._wait_ids)
        seat_of = self._seat
        for agent, action in actions.items():
            seat = seat_of.get(agent)
            if seat is None:
                raise ValueError(f"unknown agent {agent!r}: agents are {self.possible_agents}")
            if action is not None:
                ids[seat] = _action_id(agent, action)
        return ids

    def _playing_rewards(self, delta: list) -> list:
        """episode.team_rewards for reward "relative" or "win" of a step within a hand (no
        winner yet), delta a list of floats ("score" is delta itself): the same floats without
        numpy (tests compare the two)."""
        T = self.config.num_teams
        if self.reward == "relative":
            total = sum(delta)
            return [d - (total - d) / (T - 1) for d in delta]
        return [0.0] * T                          # "win": nothing before a game's end

    def _team_rewards(self, delta, win) -> list:
        """One float reward per team (module docstring, Rewards): episode.team_rewards."""
        return team_rewards(self.reward, delta, win)

    def _returns(self, arrays, tick, hand, team_rewards=None):
        """(observations, infos, rewards) of the live agents: fresh dicts. arrays: seat s's
        observation at arrays[s], its mask at arrays[S + s] (arrays no one else writes)."""
        S = self._n_seats
        applied = self._applied
        rows = self._hand_rows if hand == self._rows_hand else self._hand_rows_of(hand)
        agents = self.agents
        if agents != self.possible_agents:
            rows = [r for r in rows if r[0] in agents]
        observations, infos, rewards = {}, {}, {}
        for agent, seat, team, base in rows:      # one pass: most of a step's Python time
            mask = arrays[S + seat]
            observations[agent] = {"observation": arrays[seat], "action_mask": mask}
            infos[agent] = dict(base, applied=applied[seat] == 1, tick=tick, action_mask=mask)
            if team_rewards is not None:
                rewards[agent] = team_rewards[team]
        return observations, infos, rewards

    def _hand_rows_of(self, hand: int) -> list:
        """Per agent in seat order, for hand number `hand`: (agent, seat, team, base info):
        the info dict's constant part (team, R4 role, hand), its other keys filled per step
        (dict(base, ...) copies it, faster than a dict display of six keys)."""
        self._hand_rows = [(agent, seat, team, {"team": team, "role": roles[hand & 1],
                                                "applied": False, "tick": 0, "hand": hand,
                                                "action_mask": None})
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

    def _copied_rows(self) -> list:
        """_returns' arrays over copies of the engine's observation and mask buffers."""
        obs, masks = self._engine.observe()[0].copy(), self._engine.masks[0].copy()
        return [obs[s] for s in range(self._n_seats)] + [masks[s] for s in range(self._n_seats)]

    def _new_slot(self, k: int) -> tuple:
        """Output slot k: (obs [1, S, OBS_DIM] float32, masks [1, S, N_ACTIONS] int8, their S
        + S row views handed out as observations and masks). step() reuses a slot only while
        nothing but the slot references its arrays and views (CPython reference counts,
        recorded here as _slot_refs): what a caller still holds, directly or through a view,
        is never written again. In the usual loop, which drops each step's dicts, the same
        _SLOTS slots come back: no allocation, and memory still warm in the cache."""
        S = self._n_seats
        obs = np.empty((1, S, OBS_DIM), np.float32)
        masks = np.empty((1, S, N_ACTIONS), np.int8)
        slot = self._slots[k] = (obs, masks, [obs[0, s] for s in range(S)] +
                                 [masks[0, s] for s in range(S)])
        del obs, masks
        slot = self._slots[k]
        self._slot_refs = (getrefcount(slot[0]), getrefcount(slot[1]),
                           list(map(getrefcount, slot[2])))
        return slot

    def _role(self, seat, team, hand) -> str:
        """R4: "solo", or who holds the Nertz pile / the Stream in a two-player team."""
        if self._sizes[team] == 1:
            return "solo"
        first = seat == self.config.seat_team.index(team)
        first_holds_nertz = not (self.config.alternate_roles and hand % 2 == 1)
        return "nertz" if first == first_holds_nertz else "stream"

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
        return {**take_snapshot(self._engine, self._game),
                "applied": np.array(self._applied, bool), "agents": list(self.agents)}

    def set_state(self, snapshot: dict):
        """Restore a get_state() snapshot of an env with the same config; returns the
        (observations, infos) of the restored position."""
        def check(snap):
            agents = list(snap["agents"])
            applied = np.asarray(snap["applied"], bool)
            if not set(agents) <= set(self.possible_agents):
                raise ValueError(f"set_state: agents {agents} are not among {self.possible_agents}")
            return agents, applied

        agents, applied = load_snapshot(self._engine, self._game, snapshot, check)
        self._applied = np.broadcast_to(applied, (self.config.num_seats,)).tolist()
        self.agents = agents
        return self._observe()

    def __repr__(self) -> str:
        return (f"NertzParallelEnv({self.config.num_teams} teams, seats {self.config.num_seats}, "
                f"episode={self.episode!r}, reward={self.reward!r})")

    def __str__(self) -> str:
        return "nertz_v0"


def _action_id(agent, action) -> int:
    """An action as an int id in 0..N_ACTIONS-1, else a ValueError naming agent and id."""
    a = action
    if isinstance(a, np.ndarray) and a.size == 1:
        a = a.reshape(()).item() if np.issubdtype(a.dtype, np.integer) else a
    if isinstance(a, (bool, np.bool_)):
        raise ValueError(f"{agent}: action {action!r} is not an int id 0..{N_ACTIONS - 1}")
    try:
        a = operator.index(a)
    except TypeError:
        raise ValueError(f"{agent}: action {action!r} is not an int id 0..{N_ACTIONS - 1}") from None
    if not 0 <= a < N_ACTIONS:
        raise ValueError(f"{agent}: action id {a} is out of range: action ids are 0..{N_ACTIONS - 1}")
    return a


def _state_space(state: NertzState) -> spaces.Box:
    """Bounds of state(): each array's dtype range, then unbounded-ish game totals/calls."""
    lows, highs = [], []
    for name in _STATE_FIELDS:
        arr = getattr(state, name)[0]
        info = np.iinfo(arr.dtype)
        lows.append(np.full(arr.size, info.min, np.float32))
        highs.append(np.full(arr.size, info.max, np.float32))
    T = state.callers.shape[1]
    lows += [np.full(T, -_BIG, np.float32), np.zeros(T, np.float32)]
    highs += [np.full(T, _BIG, np.float32), np.full(T, MAX_HANDS, np.float32)]
    return spaces.Box(np.concatenate(lows), np.concatenate(highs), dtype=np.float32)
