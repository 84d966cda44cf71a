"""The agent interface: one small protocol for a single seat and for batches.

    act(observation, action_mask) -> int                       one seat
    act_batch(observations, action_masks) -> int64 [n]        many seats at once

`observation` is the flat float32 vector of nertz_env/core/observe.py (OBS_DIM = 791) and
`action_mask` the int8/bool vector of the 322 actions of nertz_env/actions.py; batches stack
them on a first axis. Anything with `act` works as an opponent in NertzGymEnv and in
tournaments; `Agent` gives `act_batch` for free.

A table reaches an agent one way: `for_table(config) -> Agent`, called with the table's
RulesConfig before play, returns the agent that plays that table. The arena calls it on every
Agent of a run (agents/arena/play.py Roster.for_table); the envs, the league and the human
table call it through `nertz_env.envs.opponents.for_table`, which passes objects without it
through. An agent whose play depends on the table (`learned`'s family picks its member by
rules the observation does not show; a net says which net plays each seat, below) returns a
copy that keeps it (`told`: its `table`); the others return themselves. Nothing else hands an
agent its table.

Bots that also live inside the jitted core (random, greedy, heuristic styles) say so with
`core_policy() -> (kind, knobs)` (nertz_env/core/policies.py): tournaments and the vector env
then play them inside numba, never calling `act` per tick. Their `act` is the plain-Python
version of the same decision (agents/python_policies.py); tests hold the two equal. Agents
that play safe-format nets say which, per seat of the table they were told, with
`core_networks()` (the arena's net kernel, agents/learned/core_play.py).

An agent may see its seat's information of the engine state one way: it sets `seat_view =
True` and defines `act_view(view) -> int64 [n]`, and the arena's Python loop (agents/arena/
seat_loop.py play_python) then calls `act_view` with a `SeatView` instead of `act_batch`: the
batch's state, the rows' tables and seats, their observations and masks, the tables' public
memory (nertz_env/core/memory.py) and deal keys. The state holds every card, the face-down
ones too: such an agent reads what no seat sees only through nertz_env/core/worlds.py's
re-deal (fork_worlds under the uniform or memory belief), which never reads the hidden
arrangement, so permuting the never-seen cards cannot change its move
(tests/search/test_search_agent.py proves it for `search:`, agents/search). The envs'
opponents (NertzGymEnv and the vector envs, nertz_env/envs/opponents.py) and the human table
(agents/human/session.py) pass a view too; `SeatView` is defined in nertz_env/core/
seat_view.py (re-exported here).

`Pair` (`pair:NERTZ&STREAM`) is two agents sharing a two-player team by role (R4).
"""
from __future__ import annotations

import copy
from typing import Protocol, runtime_checkable

import numpy as np

from nertz_env.core.observe import read_self
from nertz_env.envs.opponents import for_table
from nertz_env.core.seat_view import SeatView  # noqa: F401  (the envs build one too)


@runtime_checkable
class SupportsAct(Protocol):
    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int: ...


class Agent:
    """Base class: subclasses define `act`; `act_batch` loops over it (override for speed)."""

    name = "agent"

    def act(self, observation: np.ndarray, action_mask: np.ndarray) -> int:
        raise NotImplementedError

    def act_batch(self, observations: np.ndarray, action_masks: np.ndarray) -> np.ndarray:
        """`act` per row; every id checked (no float or bool cast to an id in silence)."""
        from nertz_env.actions import check_action_id
        where = f"agent {self.name!r} act"
        return np.array([check_action_id(self.act(o, m), where=where)
                         for o, m in zip(observations, action_masks)], np.int64)

    def core_policy(self):
        """(kind, knobs int64 [12]) when the core can play this agent itself, else None."""
        return None

    seat_view = False
    """True: the arena's Python loop calls act_view(SeatView) instead of act_batch."""

    def act_view(self, view: SeatView) -> np.ndarray:
        """The moves (int64 [n]) of the view's rows; by default act_batch of its
        observations and masks (module docstring: the one way to see the engine state)."""
        return self.act_batch(view.observations, view.masks)

    table = None
    """The RulesConfig of the table this agent was told (`told`), or None: never told."""

    def core_networks(self):
        """Per seat of its table (`self.table`), (policy, constraint bits) of the network this
        agent plays there, for the arena's net kernel (agents/learned/core_play.py, which
        checks the policy is one it plays exactly), or None: played from Python (also when
        it was never told a table)."""
        return None

    def for_table(self, config) -> "Agent":
        """The one way a table reaches an agent (module docstring): the agent that plays a
        table of `config` (a RulesConfig). Itself here; an agent whose play depends on the
        table returns `self.told(config)` (a copy), adjusted (`learned`'s family picks its
        member by R16 stacking: agents/learned/family.py). Callers that know the table call
        it before play."""
        return self

    def told(self, config) -> "Agent":
        """A shallow copy of this agent whose `table` is `config` (for for_table): the copy
        shares everything else (its networks, its generators)."""
        bound = copy.copy(self)
        bound.table = config
        return bound

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.name!r})"


def check_batch(observations, action_masks):
    """Validate a batch: (n, OBS_DIM) observations and (n, N_ACTIONS) masks."""
    from nertz_env.actions import N_ACTIONS
    from nertz_env.core.observe import OBS_DIM
    obs = np.asarray(observations)
    masks = np.asarray(action_masks)
    if obs.ndim != 2 or obs.shape[1] != OBS_DIM:
        raise ValueError(f"observations has shape {obs.shape}; expected (n, {OBS_DIM})")
    if masks.shape != (obs.shape[0], N_ACTIONS):
        raise ValueError(f"action_masks has shape {masks.shape}; expected ({obs.shape[0]}, {N_ACTIONS})")
    return obs, masks


class Pair(Agent):
    """`pair:NERTZ&STREAM`: a two-player team (R4) whose partners are different agents, by role.
    
    NERTZ plays the seat that holds the team's Nertz pile this hand, STREAM the seat that holds the
    Stream. Roles swap every hand by default (R4 `alternate_roles`) and the agents follow the roles,
    not the seats, so `pair:learned&heuristic` and `pair:heuristic&learned` differ only in which
    partner holds the Stream: the question "should the stronger partner hold the Stream?" becomes
    two arms of one experiment on the same deals (docs/experiments/roles.md).
    
        pair:learned&heuristic:style=river-builder     learned holds the Nertz pile
        pair:heuristic&ppo:model.npz,constraint=none    each member any agent spec without '&'
    
    Where it plays:
    - tournaments and experiments: each table's seats get the member of their role when the
      roles are known before play (one hand per table, or `alternate_roles=false`), so each
      member plays where it would alone (core bots and nets inside numba: agents/arena/play.py
      `assign_roles`); in whole games with roles swapping, the arena's Python loop plays each
      row by the member of the role its observation holds (agents/arena/seat_loop.py
      `pair_actions`; a seat-view member gets a view of its rows);
    - at the human table each seat of the pair gets the member of its role (agents/human/
      session.py); at the envs' opponents, by `act_batch`, which reads each row's role from
      the observation (holds the Stream).
    A pair at a solo seat is a ValueError: a solo player holds both roles.
    """

    def __init__(self, nertz, stream, name=None):
        for role, a in (("nertz", nertz), ("stream", stream)):
            if not hasattr(a, "act_batch") or isinstance(a, Pair):
                raise ValueError(f"pair member {role}={a!r} must be an agent other than a pair")
        self.nertz, self.stream = nertz, stream
        self.name = name or f"pair:{nertz.name}&{stream.name}"

    @property
    def members(self) -> tuple:
        return self.nertz, self.stream

    def act_batch(self, observations, action_masks) -> np.ndarray:
        obs, masks = check_batch(observations, action_masks)
        seat = read_self(obs)
        if not seat.two_player.all():
            raise ValueError(f"agent {self.name!r} plays two-player teams only (R4); "
                             "a solo seat holds both roles")
        stream = seat.holds_stream
        out = np.empty(len(obs), np.int64)
        for member, rows in ((self.nertz, ~stream), (self.stream, stream)):
            if rows.any():
                out[rows] = member.act_batch(obs[rows], masks[rows])
        return out

    def act(self, observation, action_mask) -> int:
        return int(self.act_batch(np.asarray(observation)[None], np.asarray(action_mask)[None])[0])

    def for_table(self, config) -> "Pair":
        return Pair(for_table(self.nertz, config), for_table(self.stream, config), self.name)


def parse_pair(spec: str, rest: str, seed, make_agent) -> Pair:
    """The Pair of `pair:NERTZ&STREAM` (rest = 'NERTZ&STREAM')."""
    parts = rest.split("&")
    if any(p.strip().partition(":")[0].strip() == "pair" for p in parts):
        raise ValueError(f"agent {spec!r}: a pair's two members are single agents, not pairs "
                         "(a pair is pair:NERTZ&STREAM, two agent specs joined by one '&')")
    if len(parts) != 2 or not all(p.strip() for p in parts):
        found = {1: "one member", 2: "an empty member"}.get(len(parts), f"{len(parts)} members")
        raise ValueError(f"agent {spec!r}: a pair is pair:NERTZ&STREAM, two agent specs joined "
                         "by one '&' (the first holds the Nertz pile, the second the Stream), "
                         f"e.g. pair:learned&heuristic:style=river-builder; found {found}")
    members = []
    name = spec if spec.isprintable() else repr(spec)       # one line, whatever the spec
    for p in parts:
        try:
            members.append(make_agent(p.strip(), seed=seed))
        except ValueError as err:            # a member's error names the pair it is in
            raise ValueError(f"{name}: {err}") from err.__cause__
    return Pair(*members, name=spec)


def pair_at_solo_error(name, team: int, config) -> ValueError:
    """The one refusal of a pair seated at a solo team (R4), naming the pair's spec, the team
    and the table's team_sizes."""
    return ValueError(f"agent {name!r} is a pair and sits at a solo team (team {team}, "
                      f"team_sizes={list(config.sizes)}): pairs play two-player teams only "
                      "(R4); give every team a pair can sit at two players (--team-sizes 2,2,..)")
