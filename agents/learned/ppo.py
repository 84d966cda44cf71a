"""`ppo:PATH`: a saved model as an Agent, from either of two formats.

- The safe format (PATH.npz with PATH.json beside it, `nertz export` writes it;
  agents/learned/weights.py): plain arrays, played in numpy; reading it runs no code and
  needs neither torch nor SB3.
- A stable-baselines3 / sb3-contrib zip (`model.save()`, needs the `[train]` extra). An SB3
  zip holds pickled Python objects, and SB3's own `load` unpickles them: a zip from someone
  else can run any code on your machine. `ppo:` never unpickles one: the stock PPO /
  MaskablePPO MlpPolicy is rebuilt from the file's plain parts (agents/learned/sb3_zip.py)
  and anything else is refused, unless the spec says `trust=yes` (then SB3's own load runs,
  pickles and all: only for files whose author you trust).

MaskablePPO models get the action mask; a plain PPO model's illegal choices go to the table,
whose illegal_move rule decides (R31, docs/rules.md).

A safe-format model that reads the v1 observation (its JSON's "observation": "v1") is a
seat-view agent: act_view writes its rows from the seat's view (agents/learned/v1.py); the
arena's net kernel plays it too, keeping the memory itself (agents/learned/core_play.py).

A safe-format model whose JSON records the table it was trained for ("table") plays at any
table, but told another (`for_table`) it warns once (RuntimeWarning, `warn_other_table`),
naming the spec, the table recorded and the table it plays: never another table in silence.
"""
from __future__ import annotations

import contextlib
import os
import warnings

import numpy as np

from nertz_env.envs.opponents import FrozenPolicy

from ..base import Agent, check_batch
from ..constraints import check_constraint, constrain
from .sb3_zip import load_sb3
from .v1 import check_fits, no_view_error, reads_v1, view_rows
from .weights import NumpyPolicy, is_weights, weight_files


_SHOWN = set()                  # the lines warn_other_table said in this process
_EXPECTED = []                  # other_tables_expected's depth: no line while > 0


@contextlib.contextmanager
def other_tables_expected():
    """Within it, agents told a table other than their model's say nothing (and record
    nothing): a training league plays its opponents at every format by design."""
    _EXPECTED.append(True)
    try:
        yield
    finally:
        _EXPECTED.pop()


def describe(teams: int, team_size: int) -> str:
    return f"{teams} teams, " + ("solo seats" if team_size == 1 else "a 2-player team")


def recorded_table(meta: dict):
    """(teams, team_size) a model's JSON records it was trained for, or None (any table)."""
    table = meta.get("table")
    return None if table is None else (int(table["teams"]), int(table["team_size"]))


def warn_other_table(agent, trained, config, source: str) -> None:
    """Warn once per agent (its `_warned`, shared by the copies `told` makes; each line once
    per process: `_SHOWN`) where a seat of the table `config` is not of the table `trained`
    ((teams, team_size), None: any) its model was trained for; source: where that table is
    recorded. It plays on: the user chose it."""
    sizes = tuple(config.sizes)
    if trained is None or _EXPECTED or "table" in agent._warned or \
            all((config.num_teams, 2 if n == 2 else 1) == trained for n in sizes):
        return
    agent._warned.add("table")
    played = describe(config.num_teams, sizes[0]) if len(set(sizes)) == 1 else \
        f"{config.num_teams} teams of {', '.join(map(str, sizes))} players"
    text = (f"agent {agent.name!r}: its model was trained for {describe(*trained)} "
            f"({source}); playing it at this table ({played}) as asked (docs/models.md).")
    if text not in _SHOWN:        # a new agent of the same spec (each training evaluation
        _SHOWN.add(text)          # makes one) repeats no line Python's filter may let through
        warnings.warn(text, RuntimeWarning, stacklevel=4)


def load_model(path, device: str = "cpu", trust: bool = False):
    """A saved MaskablePPO (or PPO) model from its zip, unpickling nothing unless trust=True
    (agents/learned/sb3_zip.py). ValueError naming the path for every refusal."""
    return load_sb3(path, device=device, trust=trust)


def load_weights_policy(path, deterministic: bool = True, seed=None,
                        cache: dict | None = None) -> NumpyPolicy:
    """A model in the safe format (NAME.npz + NAME.json), sizes checked against this game.
    cache: {the .npz's real path: policy}, shared by one agent's calls: a file it names
    twice (family members of one model) is read once and its arrays are shared."""
    key = os.path.realpath(weight_files(path)[0])
    if cache is not None and key in cache:
        first = cache[key]
        same = deterministic and first.deterministic
        return first if same else first.twin(deterministic, seed)
    policy = NumpyPolicy.load(path, deterministic=deterministic, seed=seed, name=str(path))
    check_fits(policy.meta, f"model {str(path)!r}")       # v0 or v1 (agents/learned/v1.py)
    if cache is not None:
        cache[key] = policy
    return policy


class PPOAgent(Agent):
    """`ppo:PATH[,deterministic=false][,device=..][,trust=yes][,constraint=NAME]`:
    deterministic moves by default (SB3 predict's choice: the most probable legal move).
    constraint: the masks pass through agents/constraints.py's `constrain` first (default:
    the one a safe-format model's file names, if any; "none" plays it free). An SB3 zip plays through
    nertz_env.envs.opponents.FrozenPolicy (its network run directly); a .npz/.json model
    through NumpyPolicy, whose draws (deterministic=false) come from a generator seeded with
    `seed`. Tournaments call act_batch once per tick with every table and seat it holds."""

    def __init__(self, path, deterministic: bool = True, device: str = "cpu",
                 trust: bool = False, seed=None, constraint=None):
        if not isinstance(deterministic, bool):
            raise ValueError(f"deterministic={deterministic!r} must be True or False")
        self.constraint = check_constraint(constraint)
        self.trained, self._warned = None, set()
        if is_weights(path):
            self.policy = load_weights_policy(path, deterministic, seed)
            if constraint is None:
                self.constraint = check_constraint(self.policy.meta.get("constraint"))
            self.seat_view = reads_v1(self.policy)      # a v1 net: played with act_view
            self.trained = recorded_table(self.policy.meta)
        else:
            # illegal picks (an unmasked PPO) go to the table, whose illegal_move decides (R31)
            self.policy = FrozenPolicy(load_model(path, device=device, trust=trust),
                                       deterministic=deterministic, on_illegal="pass")
        self.name = f"ppo:{path}"

    def for_table(self, config) -> "PPOAgent":
        """Told its table (agents/base.py): the net kernel then plays its seats there; a
        model recorded for another table warns once (warn_other_table)."""
        warn_other_table(self, self.trained, config, "the table its JSON records")
        return self.told(config)

    def core_networks(self):
        """Its net at every seat of the table it was told (a v1 net too: the kernel keeps the
        memory, agents/learned/core_play.py), or None: never told."""
        if self.table is None:
            return None
        return [(self.policy, self.constraint)] * self.table.num_seats

    def act(self, observation, action_mask) -> int:
        if not self.constraint and not self.seat_view:
            return self.policy.act(observation, action_mask)
        return int(self.act_batch(np.asarray(observation)[None], np.asarray(action_mask)[None])[0])

    def act_batch(self, observations, action_masks):
        if self.seat_view:
            raise no_view_error(self.name)
        obs, masks = check_batch(observations, action_masks)
        if self.constraint:
            masks = constrain(obs, masks, self.constraint)
        return self.policy.act_batch(obs, masks)

    def act_view(self, view) -> np.ndarray:
        """A v1 net's moves on the view's rows (agents/learned/v1.py); a v0 net's act_batch."""
        if not self.seat_view:
            return self.act_batch(view.observations, view.masks)
        obs, masks = check_batch(view.observations, view.masks)
        if self.constraint:                   # constraints read the v0 prefix
            masks = constrain(obs, masks, self.constraint)
        return self.policy.act_batch(view_rows(view), masks)
