"""`learned`: the models shipped in agents/learned/models/ (docs/models.md), in the safe format
(learned_<T>teams.npz + .json, the generalist learned.npz + .json and the other members of
learned_family.json: read without pickle, played in numpy).

Where the family ships (learned_family.json, agents/learned/family.py), plain `learned` is the
family: at each table the member its rules pick, once the agent is told the table
(`for_table(config)`, which the play loops, envs and league call); never told, it plays the
last member and warns once. `learned:model=NAME` plays one member at every table by hand.

Where the generalist ships (learned.npz, trained over the rulebook's table formats: its JSON
lists them), plain `learned` plays it at every table, under the constraint its file names
(agents/constraints.py). Without it, plain `learned` picks, row by row, the model trained for the table the seat sits at: the
observation says it (nertz_env/core/observe.py: num_teams / 8 and the two-player-team flag in
the self segment). At a table no shipped model was trained for it plays the nearest one (by
team count, ties to the larger) and warns once per table format, naming both tables: never a
model for another table in silence. `learned:teams=N` picks the N-team model by hand for
every table; told a table of another size it warns once per agent, as `ppo:` does with a
model whose JSON records another table (agents/learned/ppo.py warn_other_table).

A model that reads the v1 observation (a family of your own may hold one: agents/learned/v1.py)
makes the agent a seat-view agent wherever it plays such a model (`seat_view`, set again by
for_table for the models of that table): its rows are written from the view where the Python
loop plays it; the arena's net kernel plays v0 and v1 models alike (agents/learned/core_play.py
keeps the memory).
"""
from __future__ import annotations

import warnings
from pathlib import Path

import numpy as np

from nertz_env.core.observe import read_self

from ..base import Agent, check_batch
from ..constraints import check_constraint, constrain
from .family import member_for
from .ppo import describe, load_weights_policy, recorded_table, warn_other_table
from .v1 import no_view_error, reads_v1, view_rows

GENERALIST = 0                  # the generalist's key among LearnedAgent.policies


def shipped_models(models_dir) -> dict:
    """{teams: path of the .npz} of learned_<T>teams.npz (with its .json) in models_dir."""
    out = {}
    for p in sorted(Path(models_dir).glob("learned_*teams.npz")):
        t = p.stem[len("learned_"):-len("teams")]
        if t.isdigit() and p.with_suffix(".json").is_file():
            out[int(t)] = p
    return out


def generalist_model(models_dir):
    """The generalist's .npz in models_dir (learned.npz with its .json), or None."""
    p = Path(models_dir) / "learned.npz"
    return p if p.is_file() and p.with_suffix(".json").is_file() else None


def table_of_rows(observations) -> tuple:
    """(teams int64 [n], team_size int64 [n]) of each row's table, read off its observation."""
    obs = np.asarray(observations)
    seat = read_self(obs)
    return seat.teams, seat.team_size


class LearnedAgent(Agent):
    """The shipped models as one agent (module docstring). models: {teams: .npz path};
    teams: the one to play everywhere (by hand) or None (the family where given, else the
    generalist where given, else each table's own); generalist: the generalist's .npz or
    None; family: [family.Member] or None (its members are keys 0, 1, ...). tables: {key:
    (teams, team_size)} each model was trained for, what model_for matches a table against
    (empty for a family)."""

    def __init__(self, models: dict, teams=None, deterministic: bool = True, seed=None,
                 name: str = "learned", generalist=None, family=None):
        self.name = name
        self.by_hand = teams
        self.family = None
        self.policies = {}
        self.tables = {}
        self.constraints = {}
        ss = np.random.SeedSequence(seed) if seed is not None else None
        if teams is None and family is not None:
            models = {i: m.path for i, m in enumerate(family)}
            self.family = list(family)
        elif teams is None and generalist is not None:
            models = {GENERALIST: generalist}
            self.by_hand = GENERALIST
        loaded = {}                     # a file named twice is read once, its arrays shared
        for t, path in sorted(models.items()):
            if teams is not None and t != teams:
                continue
            s = None if ss is None else ss.spawn(1)[0]
            self.policies[t] = load_weights_policy(path, deterministic, s, cache=loaded)
            self.constraints[t] = check_constraint(self.policies[t].meta.get("constraint"))
            if self.family is None:     # a family picks by rules (member_for), not by table
                table = self.policies[t].meta.get("table") or {"teams": t, "team_size": 1}
                self.tables[t] = (int(table["teams"]), int(table["team_size"]))
        self._warned = set()
        self.seat_view = any(map(reads_v1, self.policies.values()))

    def model_for(self, teams: int, team_size: int) -> int:
        """The key of the model that plays a seat of that table (warning once where none was
        trained for it)."""
        if self.by_hand is not None:
            return self.by_hand
        if self.family is not None:              # never told its table: the last member
            last = len(self.family) - 1
            if "rules" not in self._warned:
                self._warned.add("rules")
                warnings.warn(f"agent {self.name!r} was not told its table's rules (stacking, "
                              f"R16, is not in the observation); playing its "
                              f"{self.family[last].name!r} member, trained for "
                              f"{self._where(last)}. Tournaments, experiments and the envs "
                              f"tell it; elsewhere call agent.for_table(config) "
                              f"(docs/models.md).", RuntimeWarning, stacklevel=3)
            return last
        for t, table in self.tables.items():
            if table == (teams, team_size):
                return t
        t = min(self.tables, key=lambda k: (abs(self.tables[k][0] - teams), -k))
        if (teams, team_size) not in self._warned:
            self._warned.add((teams, team_size))
            warnings.warn(f"agent {self.name!r}: no shipped model was trained for this table "
                          f"({describe(teams, team_size)}); playing the one trained for "
                          f"{describe(*self.tables[t])} (learned_{t}teams). Pick one with "
                          f"learned:teams=N (docs/models.md).", RuntimeWarning, stacklevel=3)
        return t

    def _where(self, i: int) -> str:
        others = [m.rules for m in self.family[:i] if m.rules]
        return "any table" if not others else "tables other than " + " or ".join(
            ", ".join(f"{k}={v}" for k, v in r.items()) for r in others)

    def for_table(self, config) -> "LearnedAgent":
        """This agent told a table of `config` (agents/base.py: its seats pick their models
        for the net kernel, core_networks); a family's copy plays the member the table's
        rules pick at every seat (agents/learned/family.py)."""
        if self.family is None and self.by_hand is not None:      # teams=N, model=NAME
            key = self.by_hand
            warn_other_table(self, recorded_table(self.policies[key].meta), config,
                             f"learned_{key}teams" if key != GENERALIST else "its JSON")
        bound = self.told(config)
        if self.family is not None:
            bound.by_hand = member_for(self.family, config)
            bound._warned = set()
        if bound.seat_view:             # a v1 model among those this table plays: a view
            bound.seat_view = any(reads_v1(p) for p, _ in bound._seat_picks())
        return bound

    def core_networks(self):
        """Each seat's model on the table it was told (model_for the seat: its table's team
        count and team size; a v1 model too: the kernel keeps the memory), or None: never
        told."""
        if self.table is None:
            return None
        return self._seat_picks()

    def _seat_picks(self) -> list:
        config = self.table
        out = []
        for s in range(config.num_seats):
            size = list(config.seat_team).count(config.seat_team[s])
            key = self.model_for(config.num_teams, 2 if size == 2 else 1)
            out.append((self.policies[key], self.constraints[key]))
        return out

    def member(self) -> str | None:
        """The family member this agent plays (None: unbound, or not a family)."""
        return None if self.family is None or self.by_hand is None \
            else self.family[self.by_hand].name

    def act(self, observation, action_mask) -> int:
        return int(self.act_batch(np.asarray(observation)[None], np.asarray(action_mask)[None])[0])

    def act_batch(self, observations, action_masks) -> np.ndarray:
        return self._moves(observations, action_masks)

    def act_view(self, view) -> np.ndarray:
        """act_batch's moves, a v1 model's rows written from the view (agents/learned/v1.py)."""
        return self._moves(view.observations, view.masks, view)

    def _moves(self, observations, action_masks, view=None) -> np.ndarray:
        obs, masks = check_batch(observations, action_masks)
        teams, sizes = table_of_rows(obs)
        pick = np.empty(len(obs), np.int64)
        for t, s in {(int(t), int(s)) for t, s in zip(teams, sizes)}:
            pick[(teams == t) & (sizes == s)] = self.model_for(t, s)
        out = np.empty(len(obs), np.int64)
        for m in np.unique(pick):
            rows = np.flatnonzero(pick == m)
            legal = masks[rows]
            if self.constraints[int(m)]:
                legal = constrain(obs[rows], legal, self.constraints[int(m)])
            policy, x = self.policies[int(m)], obs[rows]
            if reads_v1(policy):
                if view is None:
                    raise no_view_error(self.name)
                x = view_rows(view._replace(rows=view.rows[rows], seats=view.seats[rows],
                                            observations=x, masks=masks[rows]))
            out[rows] = policy.act_batch(x, legal)
        return out
