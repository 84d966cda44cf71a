"""NertzGymEnv: one Nertz table as a single-agent Gymnasium environment (`nertz_env/Nertz-v0`).

## Description

Nertz (Nerts, Pounce) is a real-time multiplayer "competitive solitaire" (docs/rules.md).
This environment gives one seat of one table, the *learner* (`learner_seat`, default 0), to
the agent; every other seat is played inside `step` by `opponents`: uniformly random legal
moves by default, objects with the agent interface `act(observation, action_mask) -> int`
or frozen stable-baselines3 / sb3-contrib models (`FrozenPolicy`). Real time is discrete speed ticks (R20-R22): one `step` is one tick, in which
the learner and every opponent choose a move and the engine resolves them together in a
seeded priority order. The engine behind it is the batched numba core with one table
(`Engine(config, n_tables=1)`); `nertz_env.envs.vector.NertzVecEnv` is the same game for many
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
`penalty_points` (R31). With `illegal_move="raise"` it raises `ValueError` before any
opponent acts; with `"ignore"` it is a Wait. Anything but an action id (a bool, a float such
as 1.9, a string, an id outside 0..321) is a `ValueError` (`nertz_env.actions.
check_action_id`, the same answer as every other env), and the env is unchanged: generators
included.

## Observation Space

`Box(-1, 1, (791,), float32)`: what the learner's seat may see by the rules, from
`nertz_env/core/observe.py` (its docstring tables the layout): own Nertz top and count, own
waste top and stock/waste counts, own River in full, the Lake as counts per suit and
next-needed rank, every opponent's available cards and pile counts (seen from the learner's
team), readiness, tick and team role. Face-down cards never appear.

`observation="v1"`: `Box(-1, 1, (1019,), float32)`, v0's 791 floats followed by what the
learner's seat remembers of the face-down cards it has seen (`nertz_env/core/observe_memory.py`
tables the 228-float block: its own Stream cards seen and where they lie, its next flips, the
cards under its waste and Nertz tops, per opponent the card under its waste top and its next
flip), from the table's public memory (`core/memory.py`), which the env keeps after every tick
only where something reads it (v1, or an opponent played with a seat view): v0 play costs what
it did. `gymnasium.make("nertz_env/Nertz-v0", observation="v1")` gives it too.

## Rewards

Chosen by `reward=`:

- `"score"` (default): the change of the learner team's R29 hand score (own Lake cards,
  minus 2 per Nertz card left, plus the Nertz bonus, minus penalties) since the previous step.
  The first step is counted from 0, so the rewards of a hand sum to the team's hand score
  (which starts at -26 before any card moves: 13 Nertz cards left).
- `"relative"`: the same minus the mean change of the other teams' hand scores (zero-sum over
  teams of equal size; the rewards of a hand sum to own score minus the others' mean).
- `"win"`: 0 on every step but the last of a game: +1 if the learner's team wins the game
  (R30), -1 if another team wins, 0 if the game is truncated without a winner (MAX_HANDS).
  It needs `episode="game"`: `reward="win"` with `episode="hand"` is a `ValueError` (a single
  hand has no winner under R30).

With `episode="game"` the "score" rewards of each hand still sum to that hand's score (every
hand's baseline is 0), so an episode's rewards sum to the learner team's game total; likewise
"relative".

## Starting State

A freshly dealt hand (R5-R8), shuffled from the seed of `reset(seed=...)`, hand number 0
(two-player teams: the first role assignment of R4). `reset(options={"layout": layout})`
starts from a docs/api.md layout instead (curricula, puzzles, tests). `seed` is None or an int
>= 0; `options` None or a dict whose only key is "layout": anything else is a `ValueError`
and nothing changes.

## Episode End

Chosen by `episode=` (the same logic as the PettingZoo env, shared in `nertz_env/envs/episode.py`):

- `"hand"` (default): one episode is one hand. `terminated` when the hand ends by a Nertz call
  (R24; with `auto_nertz=True` an empty Nertz pile ends it at once). `truncated` when no team
  has called after `max_ticks` ticks (R26). The last step's info holds the final `hand_scores`.
- `"game"`: hands 0, 1, 2, ... (two-player teams swap roles, R4) are dealt one after another
  until `nertz_env.table.games.decide_winner` names a winner (R30): `terminated`. A step that ends a
  hand but not the game returns the next hand's first observation (its reward still belongs
  to the finished hand) and `info["final_scores"]` (the finished hand's scores); the last
  step also has `info["winner"]`. After `nertz_env.table.games.MAX_HANDS` hands without a winner:
  `truncated`.

Stepping after the end changes nothing and repeats the end flags with reward 0.

## Arguments

- `config`: a `RulesConfig`; or give its fields as keyword arguments (`num_teams`,
  `team_sizes`, `river_size`, `max_ticks`, `speeds`, ...). The default `illegal_move` is
  `"penalize"` (keyword arguments override it and the fields of `config`).
- `learner_seat`: the seat the agent plays (seats are numbered team by team).
- `opponents`: `None` (uniformly random legal moves, drawn from the environment's seeded
  `np_random`), one agent used for every other seat, a list with one agent per other seat
  in seat order, or a mapping seat -> agent (seats left out, or mapped to None, play random
  legal moves). An agent may be a core bot's spec string, as the vector envs take it
  (nertz_env/bot_specs.py: "random" is the random legal moves above, "greedy",
  "heuristic:style=cautious", ... play inside the core); other agent kinds ("learned",
  "ppo:...", "rllib:...") are objects: `agents.registry.make_agent(spec)`; a "pair:A&B" team
  is one too, given only at a seat of a team of two (`team_sizes`); any other string is a
  `ValueError` listing these kinds. An agent is an object with
  `act(observation, action_mask) -> int` (or a callable with that signature), receiving
  that seat's float32 observation and int8 mask; or
  a trained stable-baselines3 / sb3-contrib model (anything with `predict`, no `act`), which
  is wrapped in `FrozenPolicy` (`nertz_env/envs/frozen_policy.py`): it calls
  `model.predict(observation, action_masks=mask, deterministic=True)` when `predict` takes
  `action_masks` (MaskablePPO), else `model.predict(observation, deterministic=True)`; a
  predicted action that is illegal now is a `ValueError` (`FrozenPolicy(model,
  on_illegal="wait")` plays it as Wait instead, counted and warned about once). An opponent
  that returns anything but an action id is a `ValueError` naming its seat (this env's
  generator is then as before the step). An agent with `seat_view = True` (`search:` agents,
  `agents.registry.make_agent("search:worlds=2,horizon=5")`) is called as
  `act_view(view)` with a `nertz_env.core.seat_view.SeatView` of this env's real engine, its
  public memory and deal key (one act_view call per agent and step over all its seats),
  never act().
- `observation`: `"v0"` (default) or `"v1"` (see Observation Space).
- `reward`: `"score"`, `"relative"` or `"win"` (see Rewards).
- `episode`: `"hand"` or `"game"` (see Episode End).
- `render_mode`: `None`, `"ansi"` (`render()` returns the `Table` text picture), `"human"`
  (`render()` prints it) or `"rgb_array"` (`render()` returns an H x W x 3 uint8 picture from
  `nertz_env.envs.render`, the learner's team framed; its size depends only on `num_teams`).

`info` after `reset` and `step` (numbers and numpy arrays only): `action_mask` (bool [322],
the same as `action_masks()`, for MaskablePPO and Gymnasium users), `applied` (the learner's
move took effect this tick; False after reset), `tick`, `team` (the learner's team), `seat`,
`hand_scores` (int64 [num_teams]: every team's current R29 score), `hand` (the hand's number
in the game); with `episode="game"` also `totals` (int64 [num_teams]: finished hands' scores),
and `final_scores` (int64 [num_teams]) / `winner` (int) as above.

Snapshots: `get_state()` / `set_state(state)` restore the position, the generators and the
episode bookkeeping exactly (not opponents' own internal state); the env also pickles
(`pickle.dumps(env)`) when its opponents do.

## Version History

- v0: initial release (one learner seat, random-legal or agent opponents, score and relative
  rewards, layout resets). Later in v0 (the default behaviour is unchanged): `episode="game"`,
  `reward="win"`, `render_mode="rgb_array"`, `get_state`/`set_state`, `FrozenPolicy` and
  mapping opponents, `info["hand"]` (and with `episode="game"` `totals`, then
  `final_scores` / `winner`); info lists became int64 arrays; bad actions, seeds and
  reset options are ValueErrors that change nothing. The observation is the PettingZoo env's
  (its Version History: unchanged since the initial release).
- v1 observation (`observation="v1"`, the PettingZoo env's v1; v0 unchanged byte for byte):
  v0's vector plus the seat's memory block, 1019 floats; get_state/set_state carry the
  memory. Opponents played with a seat view (`search:`) came with it; the v0 env plays them
  too.
"""
from __future__ import annotations

import copy

import gymnasium
import numpy as np

from ..actions import check_action_id
from ..config import RulesConfig
from ..engine import Engine
from .episode import (EPISODES, REWARDS, GameLedger, check_reward, checked_rng_state, env_config,
                      load_snapshot, take_snapshot, team_rewards)
from ..encoding import OVER_TRUNCATED, PLAYING
from ..bot_specs import CORE_KINDS, core_bot
from ..core.policies import POLICY_EXTERNAL, POLICY_RANDOM, new_policy_arrays
from .memory_keeper import TableMemory
from .opponents import (FrozenPolicy, SeatRows, as_opponent, for_table, is_viewer,
                        opponents_per_seat)
from .episode import check_options, check_rule_kwargs, check_seed, illegal_move_error
from .render import render_rgb
from .seats import PerRow, SeatDriver
from .spaces import action_space, check_observation, observation_space
from ..table.table import Table

MODEL_KINDS = ("ppo", "learned", "rllib")   # agent kinds agents.registry.make_agent builds

__all__ = ["NertzGymEnv", "FrozenPolicy", "REWARDS", "EPISODES"]
_TABLE0 = np.zeros(1, np.int64)         # the one table a core bot opponent moves at


class NertzGymEnv(gymnasium.Env):
    """One Nertz table, one learning seat; see the module docstring (Gymnasium sections)."""

    metadata = {"render_modes": ["human", "ansi", "rgb_array"], "render_fps": 4}

    def __init__(self, config: RulesConfig | None = None, learner_seat: int = 0,
                 opponents=None, reward: str = "score", render_mode: str | None = None,
                 episode: str = "hand", observation: str = "v0", **rules):
        check_rule_kwargs(rules, ("config", "learner_seat", "opponents", "reward",
                                  "render_mode", "episode", "observation"))
        config = env_config(config, rules)
        check_reward(reward, episode)
        self.observation = check_observation(observation)
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
        self.episode = episode
        self.render_mode = render_mode
        self.others = [s for s in range(config.num_seats) if s != self.learner_seat]
        self._viewers = {}                  # seat -> an opponent played with a SeatView
        self.opponents = self._check_opponents(opponents)
        self.engine = Engine(config, n_tables=1)
        # the public memory, only where v1 observations or a viewer read it (memory_keeper.py)
        self._memory = (TableMemory(self.engine) if observation == "v1" or self._viewers
                        else None)
        self._driver = SeatDriver(self.engine)
        self._rows_t = np.zeros(len(self.others), np.int64)     # every opponent row: table 0
        self.observation_space = observation_space(observation)
        self.action_space = action_space()
        self._raise_illegal = config.illegal_move == "raise"
        # reward baseline, game totals/calls/hands (shared with the PettingZoo env: episode.py)
        self._game = GameLedger(config.num_teams, config.target_score, episode)
        self._applied = False
        self._ended = None          # (terminated, truncated) once the episode has ended

    def _check_opponents(self, opponents):
        """One act(observation, action_mask) callable per other seat played from Python
        (None: random legal), or None when every other seat plays random legal moves. A
        spec string is read by the one parser of core bot specs (nertz_env/bot_specs.py,
        as the vector envs read it): "random" is the env's random legal moves, greedy and
        heuristic bots play inside the core (self._core)."""
        self._core = None
        if opponents is None:
            return None
        per_seat = opponents_per_seat(opponents, self.others)
        acts, kinds, knobs = {}, None, None
        for s, (spec, where) in per_seat.items():
            if not isinstance(spec, str):
                agent = for_table(spec, self.config)                        # told the rules
                if is_viewer(agent):
                    self._viewers[s] = agent
                    acts[s] = None
                else:
                    acts[s] = as_opponent(agent, where)
                continue
            try:
                kind, row, _ = core_bot(spec.strip())
            except ValueError as err:
                raise ValueError(self._spec_error(spec, where, s, err)) from None
            if kind == POLICY_RANDOM:
                acts[s] = None
                continue
            if kinds is None:
                kinds, knobs = new_policy_arrays(1, self.config.num_seats)
                kinds[:] = POLICY_EXTERNAL
            kinds[0, s], knobs[0, s] = kind, row
        if kinds is not None:
            self._core = (kinds, knobs, np.zeros(1, np.uint64), _TABLE0)
        return None if (self._core is None and not self._viewers
                        and all(a is None for a in acts.values())) else acts

    def _spec_error(self, spec: str, where: str, seat: int, err) -> str:
        """The one line for an opponent string the core does not play: a model kind is made
        by agents.registry.make_agent (suggested only for those); a pair is a two-player
        team and plays only at a seat of one; anything else is unknown or malformed (the
        kinds this env takes are listed)."""
        kind = spec.strip().partition(":")[0]
        if kind == "search":
            return (f"{where}: {spec!r} is a search agent, not a bot the core plays; "
                    f"NertzGymEnv plays it as an object with a seat view: give "
                    f"agents.registry.make_agent({spec!r}) instead")
        if kind in MODEL_KINDS:
            return (f"{where}: {spec!r} is a model, not a bot the core plays; NertzGymEnv takes "
                    f"it as an object: give agents.registry.make_agent({spec!r}) instead")
        if kind == "pair":
            team = self.config.seat_team[seat]
            if self.config.sizes[team] != 2:
                return (f"{where}: {spec!r} is a two-player team (R4) and seat {seat} is a "
                        f"solo team's; a pair plays only at the seats of a team of two "
                        f"(team_sizes, e.g. team_sizes=(1, 2)), made as an object with "
                        f"agents.registry.make_agent")
            return (f"{where}: {spec!r} is a two-player team (R4), not a bot the core plays; "
                    f"NertzGymEnv takes it as an object at seat {seat} (a team of two): give "
                    f"agents.registry.make_agent({spec!r}) instead")
        if kind in CORE_KINDS or not kind:
            return f"{where}: {err}"                # a core bot's bad options: its own line
        return (f"{where}: {spec!r}: unknown kind {kind!r}; this env takes the core bots "
                f"random, greedy, heuristic[:style=S,KNOB=V] as strings, and models (ppo:PATH, "
                f"learned[:...], rllib:PATH), search:... and pair:A&B teams as agent objects "
                f"made by agents.registry.make_agent")

    # ------------------------------------------------------------------ Gymnasium API
    def reset(self, *, seed=None, options=None):
        seed = check_seed(seed)                  # everything checked before anything changes
        layout = check_options(options).get("layout")
        table = None if layout is None else Table.from_layout(layout, self.config)
        super().reset(seed=seed)
        eng = self.engine
        eng.reset(seed=seed)
        if table is not None:
            eng.load_position(table.engine)   # this env's seeded tick order stays (R22)
        if self._memory is not None:
            self._memory.dealt()
        self._game.reset()
        self._applied = False
        self._ended = None
        if eng.state.status[0] != PLAYING:         # a layout of a finished hand: nothing to play
            trunc = bool(eng.state.status[0] == OVER_TRUNCATED)
            self._ended = (not trunc, trunc)
        if self.render_mode == "human":
            self.render()
        return self._obs(), self._info()

    def step(self, action):
        action = check_action_id(action, "action")    # before anything moves (opponents too)
        eng = self.engine
        if self._ended is not None:
            # Past the end of the episode (Gymnasium leaves this undefined): nothing moves.
            return (self._obs(), 0.0, *self._ended, self._info())
        mask = eng.masks[0, self.learner_seat]
        if self._raise_illegal and not mask[action]:
            raise illegal_move_error("action", action, mask)
        acts = np.zeros((1, self.config.num_seats), np.int64)
        acts[0, self.learner_seat] = action
        if self.opponents is None:               # random legal: cannot fail
            self._random_legal_actions(acts)
            applied = eng.step(acts, checked=True)
        else:                                    # agents may fail (a bad id, R31 "raise"):
            rng_state = self.np_random.bit_generator.state   # then the env is unchanged
            try:
                # every other seat in seat order (random-legal ones draw in that order); the
                # ids (R31 included) are checked once there, the learner's above
                rows_s = [s for s in self.others if s in self.opponents]
                core = None if self._core is None else (*self._core[:3], acts, self._core[3])
                rows_t = self._rows_t[:len(rows_s)]
                ask = (SeatRows(self.opponents, self._viewers, rows_t, rows_s,
                                self._random_legal, self._memory.view) if self._viewers
                       else PerRow(self.opponents, rows_s, self._random_legal))
                self._driver.drive(rows_t, rows_s, ask, out=acts,
                                   illegal=SeatDriver.policy(self.config),
                                   where="opponents", core=core)
                applied = eng.step(acts, checked=True)
            except BaseException:
                self.np_random.bit_generator.state = rng_state
                raise
        self._applied = bool(applied[0, self.learner_seat])
        out = self._game.after_tick(eng)         # hand/game end, next hand (episode.py)
        if self._memory is not None:
            self._memory.ticked()                # the tick's public events; a new hand afresh
        reward = team_rewards(self.reward_kind, out.delta, out.win)[self.team]
        if out.terminated or out.truncated:
            self._ended = (out.terminated, out.truncated)
        if self.render_mode == "human":
            self.render()
        # in play, the R29 scores after_tick just computed are the info's (a new hand: its own)
        info = self._info(None if out.hand_over else self._game.prev)
        if self.episode == "game" and out.hand_over:
            info["final_scores"] = np.array(out.final_scores, np.int64)
            if out.win is not None:
                info["winner"] = out.win
        return self._obs(), reward, out.terminated, out.truncated, info

    def _random_legal(self, mask) -> int:
        """A uniformly random legal move from this env's np_random (Wait if none)."""
        legal = np.flatnonzero(mask)
        return legal[self.np_random.integers(len(legal))] if len(legal) else 0

    def _random_legal_actions(self, acts) -> None:
        masks = self.engine.masks[0]
        for s in self.others:
            acts[0, s] = self._random_legal(masks[s])

    def action_masks(self) -> np.ndarray:
        """Bool [N_ACTIONS]: the learner seat's legal moves now (MaskablePPO)."""
        return self.engine.masks[0, self.learner_seat].astype(bool)

    def render(self):
        if self.render_mode is None:
            gymnasium.logger.warn("render() called without render_mode; "
                                  "use render_mode='ansi', 'human' or 'rgb_array'")
            return None
        table = Table(self.engine)
        if self.render_mode == "rgb_array":
            return render_rgb(table.layout(), scores=table.hand_scores(), highlight=self.team)
        text = table.render()
        if self.render_mode == "human":
            print(text)
            return None
        return text

    def close(self) -> None:
        pass

    # ------------------------------------------------------------------ snapshots
    def get_state(self) -> dict:
        """A deep copy of everything that decides what follows: the engine's state arrays and
        generator, this env's `np_random` (random-legal opponents draw from it), the reward
        baseline, the game's hands/totals/calls and whether the episode has ended. Opponents'
        own internal state (if any) is not part of it."""
        snap = {**take_snapshot(self.engine, self._game),
                "env_np_random": copy.deepcopy(self.np_random.bit_generator.state),
                "applied": self._applied, "ended": self._ended}
        if self._memory is not None:             # v1 / viewers: the memory and deal keys too
            snap["table_memory"] = self._memory.get_state()
        return snap

    def set_state(self, state: dict):
        """Restore a get_state() snapshot of an env with the same table format; returns the
        (observation, info) of the restored position. The same actions then give the same
        observations, rewards, terminations and infos as after the snapshot was taken."""
        def check(snap):
            ended, applied = snap["ended"], snap["applied"]
            flags = (bool, np.bool_)
            if ended is not None and not (isinstance(ended, (tuple, list)) and len(ended) == 2
                                          and all(isinstance(x, flags) for x in ended)):
                raise ValueError(f"set_state: 'ended' = {ended!r} must be None or "
                                 f"(terminated, truncated) bools")
            if not isinstance(applied, flags):
                raise ValueError(f"set_state: 'applied' = {applied!r} must be True or False")
            rng = checked_rng_state(self.np_random.bit_generator, snap["env_np_random"],
                                    "env_np_random")
            return rng, bool(applied), None if ended is None else tuple(map(bool, ended))

        rng_state, applied, ended = load_snapshot(self.engine, self._game, state, check)
        self.np_random.bit_generator.state = rng_state
        self._applied, self._ended = applied, ended
        if self._memory is not None:             # (a snapshot without one: remembered afresh)
            self._memory.set_state(state.get("table_memory"))
        return self._obs(), self._info()

    # ------------------------------------------------------------------ helpers
    @property
    def table(self) -> Table:
        """The readable `Table` view of the current position (hand_scores, layout, render)."""
        return Table(self.engine)

    def _obs(self) -> np.ndarray:
        """The learner's observation only (Engine.observe(seat): 1/S of every seat's); v1:
        with its memory block (core/observe_memory.py)."""
        v0 = self.engine.observe(self.learner_seat)[0]
        if self.observation == "v0":
            return v0[0].copy()
        return self._memory.v1(v0, _TABLE0, [self.learner_seat])[0]

    def _info(self, scores=None) -> dict:
        """scores: table 0's R29 scores if the caller has them for the current position."""
        eng = self.engine
        if scores is None:
            scores = eng.hand_scores()[0]
        return {
            "action_mask": self.action_masks(),
            "applied": self._applied,
            "tick": int(eng.state.tick[0]),
            "team": self.team,
            "seat": self.learner_seat,
            "hand_scores": np.array(scores, np.int64),
            "hand": int(eng.state.hand[0]),
        } | ({"totals": self._game.totals.copy()} if self.episode == "game" else {})
