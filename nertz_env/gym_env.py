"""NertzGymEnv: one Nertz table as a single-agent Gymnasium environment (`nertz_env/Nertz-v0`).

## Description

Nertz (Nerts, Pounce) is a real-time multiplayer "competitive solitaire" (shared/RULES.md).
This environment gives one seat of one table, the *learner* (`learner_seat`, default 0), to
the agent; every other seat is played inside `step` by `opponents`: uniformly random legal
moves by default, or any objects with the agent interface `act(observation, action_mask) ->
int` (issue 4). Real time is discrete speed ticks (R20-R22): one `step` is one tick, in which
the learner and every opponent choose a move and the engine resolves them together in a
seeded priority order. The engine behind it is the batched numba core with one table
(`Engine(config, n_tables=1)`); `nertz_env.vector.NertzVecEnv` is the same game for many
tables in one numba call.

```python
import gymnasium as gym
import nertz_env                                    # registers nertz_env/Nertz-v0
env = gym.make("nertz_env/Nertz-v0", num_teams=4, render_mode="ansi")
obs, info = env.reset(seed=0)
while True:
    legal = info["action_mask"].nonzero()[0]
    obs, reward, terminated, truncated, info = env.step(env.np_random.choice(legal))
    if terminated or truncated:
        break
print(env.render(), info["hand_scores"])
```

## Action Space

`Discrete(322)`: the fixed action numbering of `nertz_env/actions.py` (wait, flip, call,
source>lake, source>riverC, riverA:I>riverB shifts, stacks), the same for every table format.
The learner's legal moves are `env.action_masks()` (bool [322], what sb3-contrib's
MaskablePPO reads) and `info["action_mask"]`. An illegal action never crashes under the
default `illegal_move="penalize"`: it is played as a Wait and costs the learner's team
`penalty_points` (R31). With `illegal_move="raise"` it raises `ValueError`; with `"ignore"`
it is a Wait.

## Observation Space

`Box(-1, 1, (791,), float32)`: what the learner's seat may see by the rules, from
`nertz_env/core/observe.py` (its docstring tables the layout): own Nertz top and count, own
waste top and stock/waste counts, own River in full, the Lake as counts per suit and
next-needed rank, every opponent's available cards and pile counts (seen from the learner's
team), readiness, tick and team role. Face-down cards never appear.

## Rewards

Chosen by `reward=`:

- `"score"` (default): the change of the learner team's R29 hand score (own Lake cards,
  minus 2 per Nertz card left, plus the Nertz bonus, minus penalties) since the previous step.
  The first step is counted from 0, so the rewards of a hand sum to the team's hand score
  (which starts at -26 before any card moves: 13 Nertz cards left).
- `"relative"`: the same minus the mean change of the other teams' hand scores (zero-sum over
  teams of equal size; the rewards of a hand sum to own score minus the others' mean).

(`"win"`, +1/-1 at the end of a whole game, belongs to the multi-agent environment, whose
episodes can be games; an episode here is one hand.)

## Starting State

A freshly dealt hand (R5-R8), shuffled from the seed of `reset(seed=...)`, hand number 0
(two-player teams: the first role assignment of R4). `reset(options={"layout": layout})`
starts from an API.md layout instead (curricula, puzzles, tests).

## Episode End

One episode is one hand. `terminated` when the hand ends by a Nertz call (R24; with
`auto_nertz=True` an empty Nertz pile ends it at once). `truncated` when no team has called
after `max_ticks` ticks (R26). The last step's info holds the final `hand_scores`.

## Arguments

- `config`: a `RulesConfig`; or give its fields as keyword arguments (`num_teams`,
  `team_sizes`, `river_size`, `max_ticks`, `speeds`, ...). The default `illegal_move` is
  `"penalize"` (keyword arguments override it and the fields of `config`).
- `learner_seat`: the seat the agent plays (seats are numbered team by team).
- `opponents`: `None` (uniformly random legal moves, drawn from the environment's seeded
  `np_random`), one agent used for every other seat, or a list with one agent per other seat
  in seat order. An agent is an object with `act(observation, action_mask) -> int` (or a
  callable with that signature), receiving that seat's float32 observation and int8 mask.
  A frozen SB3 policy plugs in through a three-line adapter whose `act` calls
  `model.predict(observation, action_masks=action_mask.astype(bool), deterministic=True)`.
- `reward`: `"score"` or `"relative"` (see Rewards).
- `render_mode`: `None`, `"ansi"` (`render()` returns the `Table` text picture) or `"human"`
  (`render()` prints it).

`info` after `reset` and `step`: `action_mask` (bool [322]), `applied` (the learner's move
took effect this tick; False after reset), `tick`, `team` (the learner's team), `seat`,
`hand_scores` (list of every team's current R29 score).

## Version History

- v0: initial release (one learner seat, random-legal or agent opponents, score and relative
  rewards, layout resets).
"""
from __future__ import annotations

import gymnasium
import numpy as np
from gymnasium import spaces

from .actions import N_ACTIONS
from .config import RulesConfig
from .core.observe import OBS_DIM
from .core.state import copy_table
from .engine import Engine
from .layout import PLAYING
from .table import Table

REWARDS = ("score", "relative")


class NertzGymEnv(gymnasium.Env):
    """One Nertz table, one learning seat; see the module docstring (Gymnasium sections)."""

    metadata = {"render_modes": ["human", "ansi"], "render_fps": 4}

    def __init__(self, config: RulesConfig | None = None, learner_seat: int = 0,
                 opponents=None, reward: str = "score", render_mode: str | None = None,
                 **rules):
        if config is None:
            config = RulesConfig(**{"illegal_move": "penalize", **rules})
        elif not isinstance(config, RulesConfig):
            raise ValueError(f"config must be a RulesConfig, got {type(config).__name__}")
        elif rules:
            config = config.replace(**rules)
        if reward not in REWARDS:
            raise ValueError(f"reward={reward!r} is invalid: one of {REWARDS} for NertzGymEnv")
        if isinstance(learner_seat, bool) or not isinstance(learner_seat, (int, np.integer)) \
                or not 0 <= learner_seat < config.num_seats:
            raise ValueError(f"learner_seat={learner_seat!r}: seats are 0..{config.num_seats - 1}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode={render_mode!r} is invalid: None or one of "
                             f"{self.metadata['render_modes']}")
        self.config = config
        self.learner_seat = int(learner_seat)
        self.team = config.seat_team[self.learner_seat]
        self.reward_kind = reward
        self.render_mode = render_mode
        self.others = [s for s in range(config.num_seats) if s != self.learner_seat]
        self.opponents = self._check_opponents(opponents)
        self.engine = Engine(config, n_tables=1)
        self.observation_space = spaces.Box(-1.0, 1.0, (OBS_DIM,), np.float32)
        self.action_space = spaces.Discrete(N_ACTIONS)
        self._actions = np.zeros((1, config.num_seats), np.int64)
        self._prev = np.zeros(config.num_teams, np.int64)
        self._applied = False

    def _check_opponents(self, opponents):
        if opponents is None:
            return None
        if not isinstance(opponents, (list, tuple)):
            opponents = [opponents] * len(self.others)
        if len(opponents) != len(self.others):
            raise ValueError(f"opponents: give one agent per other seat ({len(self.others)} "
                             f"for seats {self.others}), got {len(opponents)}")
        acts = []
        for i, agent in enumerate(opponents):
            act = getattr(agent, "act", None)
            if act is None and callable(agent):
                act = agent
            if not callable(act):
                raise ValueError(f"opponents[{i}] has no act(observation, action_mask) method")
            acts.append(act)
        return acts

    # ------------------------------------------------------------------ Gymnasium API
    def reset(self, *, seed=None, options=None):
        super().reset(seed=seed)
        eng = self.engine
        eng.reset(seed=seed)
        layout = (options or {}).get("layout")
        if layout is not None:
            key = eng.state.rng[0]               # the priority draws stay tied to the seed
            table = Table.from_layout(layout, self.config)
            copy_table(table.engine.state, 0, eng.state, 0)
            eng.state.rng[0] = key
            eng.refresh_masks()
        self._prev[:] = 0
        self._applied = False
        if self.render_mode == "human":
            self.render()
        return self._obs(), self._info()

    def step(self, action):
        eng = self.engine
        if eng.state.status[0] != PLAYING:
            # Past the end of a hand (Gymnasium leaves this undefined): nothing moves.
            return (self._obs(), 0.0, not bool(eng.truncated[0]), bool(eng.truncated[0]),
                    self._info())
        acts = self._actions
        acts[0, self.learner_seat] = int(action)
        self._opponent_actions(acts)
        applied = eng.step(acts)
        self._applied = bool(applied[0, self.learner_seat])
        scores = eng.hand_scores()[0]
        delta = scores - self._prev
        self._prev[:] = scores
        reward = float(delta[self.team])
        if self.reward_kind == "relative" and self.config.num_teams > 1:
            reward -= float((delta.sum() - delta[self.team]) / (self.config.num_teams - 1))
        truncated = bool(eng.truncated[0])
        terminated = bool(eng.hand_over[0]) and not truncated
        if self.render_mode == "human":
            self.render()
        return self._obs(), reward, terminated, truncated, self._info()

    def _opponent_actions(self, acts) -> None:
        masks = self.engine.masks[0]
        if self.opponents is None:
            for s in self.others:
                legal = np.flatnonzero(masks[s])
                acts[0, s] = legal[self.np_random.integers(len(legal))] if len(legal) else 0
            return
        obs = self.engine.observe()[0]
        for s, act in zip(self.others, self.opponents):
            acts[0, s] = int(act(obs[s].copy(), masks[s].copy()))

    def action_masks(self) -> np.ndarray:
        """Bool [N_ACTIONS]: the learner seat's legal moves now (MaskablePPO)."""
        return self.engine.masks[0, self.learner_seat].astype(bool)

    def render(self):
        if self.render_mode is None:
            gymnasium.logger.warn("render() called without render_mode; "
                                  "use render_mode='ansi' or 'human'")
            return None
        text = Table(self.engine).render()
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        pass

    # ------------------------------------------------------------------ helpers
    @property
    def table(self) -> Table:
        """The readable `Table` view of the current position (hand_scores, layout, render)."""
        return Table(self.engine)

    def _obs(self) -> np.ndarray:
        return self.engine.observe()[0, self.learner_seat].copy()

    def _info(self) -> dict:
        eng = self.engine
        return {
            "action_mask": self.action_masks(),
            "applied": self._applied,
            "tick": int(eng.state.tick[0]),
            "team": self.team,
            "seat": self.learner_seat,
            "hand_scores": [int(x) for x in eng.hand_scores()[0]],
        }
