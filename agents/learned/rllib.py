"""RLlib policies as agents (needs the `[clients]` extra: ray[rllib] and torch).

    rllib:PATH                      the one policy saved under PATH (greedy)
    rllib:PATH,policy=team0         one policy of a multi-policy save (train/rllib_ppo.py --policy per-team)
    rllib:PATH,deterministic=false  sample from the masked action distribution

PATH is an RLlib checkpoint: an Algorithm checkpoint (`algo.save_to_path`, what
train/rllib_ppo.py writes), a MultiRLModule directory (one sub-directory per policy id) or a
single RLModule directory (`module.save_to_path`). The RLModule is rebuilt with
`RLModule.from_checkpoint` in this process: no Ray instance and no Algorithm are started.

`MaskedPPOModule` is the module train/rllib_ppo.py trains (RLlib's new API stack): two small
MLPs over the env's plain "observation" vector, the policy head's logits set to FLOAT_MIN on
every action whose "action_mask" entry is 0 (in forward_inference, forward_exploration and
forward_train alike), the value head on the observation alone. It reads nertz_v0's own
observation keys, so no connector renames anything. The class is built on first access
(PEP 562 module __getattr__): importing this module imports neither ray nor torch, yet a
checkpoint's pickled reference `agents.learned.rllib.MaskedPPOModule` resolves.

An RLlib checkpoint is pickles: RLModule.from_checkpoint unpickles class_and_ctor_args.pkl
(and RLlib's state files), so loading a checkpoint from someone else runs whatever code they
put in it. There is no safe way to read one: load only checkpoints you made or whose author
you trust, and share models in the safe format instead (NAME.npz + NAME.json, numpy only,
docs/models.md). A module whose observation or action size does not fit a Nertz seat is
refused at load, naming both sizes.

The table it was trained for lives in RLlib's pickled Algorithm state only, so the recipe also
writes TABLE_FILE (`nertz_table.json`, plain JSON: `table_record`) into the checkpoint
directory. Where PATH (or PATH/checkpoint) holds one, it is read under a cap, checked key by
key (a bad one is a one-line ValueError naming it, before the module loads), and told a table
of another size (`for_table`) the agent warns once, as `ppo:` does (agents/learned/ppo.py).
"""
from __future__ import annotations

from pathlib import Path

import numpy as np

from nertz_env.files import json_loads_strict, read_capped
from nertz_env.optional import require

from ..base import Agent, check_batch
from ..specs import path_options
from .ppo import warn_other_table

DEFAULT_HIDDEN = (64, 64)
RLLIB_OPTIONS = ("policy", "deterministic")
# Checkpointable's file naming the class to rebuild (every RLModule / MultiRLModule dir has one)
_CTOR_FILE = "class_and_ctor_args.pkl"
_ALGO_MODULES = ("learner_group", "learner", "rl_module")   # inside an Algorithm checkpoint
TABLE_FILE, TABLE_FORMAT, MAX_TABLE_FILE = "nertz_table.json", "nertz-rllib-table", 1 << 16
_LAZY = {}
_NEEDS = "an rllib agent (ray[rllib] and torch)"


def _clients(module: str, purpose: str = _NEEDS):
    """An import from the [clients] extra (ray[rllib], torch), else one MissingDependency."""
    return require(module, "clients", purpose)


def __getattr__(name):
    if name == "MaskedPPOModule":
        if name not in _LAZY:
            _LAZY[name] = _build_module_class()
        return _LAZY[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _build_module_class():
    import gymnasium as gym
    torch = _clients("torch")
    nn = torch.nn
    Columns = _clients("ray.rllib.core.columns").Columns
    ValueFunctionAPI = _clients("ray.rllib.core.rl_module.apis").ValueFunctionAPI
    TorchRLModule = _clients("ray.rllib.core.rl_module.torch").TorchRLModule
    FLOAT_MIN = _clients("ray.rllib.utils.torch_utils").FLOAT_MIN

    def mlp(n_in, hidden, n_out):
        layers, width = [], n_in
        for h in hidden:
            layers += [nn.Linear(width, h), nn.Tanh()]
            width = h
        return nn.Sequential(*layers, nn.Linear(width, n_out))

    class MaskedPPOModule(TorchRLModule, ValueFunctionAPI):
        """PPO's actor-critic over nertz_v0's Dict observation; illegal logits = FLOAT_MIN
        (finite, so PPO's entropy of a masked distribution stays a number, never NaN)."""

        def setup(self):
            space = self.observation_space
            if not isinstance(space, gym.spaces.Dict) or \
                    set(space.spaces) != {"observation", "action_mask"}:
                raise ValueError(f"MaskedPPOModule needs nertz_v0's Dict observation space "
                                 f"{{'observation', 'action_mask'}}, got {space}")
            n_obs = int(np.prod(space["observation"].shape))
            hidden = tuple(int(h) for h in (self.model_config or {}).get("hidden", DEFAULT_HIDDEN))
            self.pi = mlp(n_obs, hidden, self.action_space.n)
            self.vf = mlp(n_obs, hidden, 1)

        def _masked_logits(self, batch):
            obs = batch[Columns.OBS]
            logits = self.pi(obs["observation"])
            return torch.where(obs["action_mask"] > 0, logits,
                               torch.full_like(logits, FLOAT_MIN))

        def _forward(self, batch, **kwargs):          # inference and exploration
            return {Columns.ACTION_DIST_INPUTS: self._masked_logits(batch)}

        def _forward_train(self, batch, **kwargs):
            return {Columns.ACTION_DIST_INPUTS: self._masked_logits(batch)}

        def compute_values(self, batch, embeddings=None):
            return self.vf(batch[Columns.OBS]["observation"]).squeeze(-1)

    MaskedPPOModule.__module__ = __name__
    MaskedPPOModule.__qualname__ = "MaskedPPOModule"
    return MaskedPPOModule


def policy_dirs(path) -> dict:
    """{policy id: directory} of the RLModules saved under `path` (an Algorithm checkpoint,
    a MultiRLModule dir or one RLModule dir, whose id is ''). ValueError naming the path when
    it holds none."""
    p = Path(path)
    if not p.is_dir():
        raise ValueError(f"rllib checkpoint {str(path)!r} is not a directory; give the "
                         "directory train/rllib_ppo.py --out wrote (its checkpoint/ inside)")
    for root in (p, p / "checkpoint"):           # --out itself names its checkpoint/ too
        modules = root.joinpath(*_ALGO_MODULES)
        if modules.is_dir():
            p = modules
            break
    subs = {d.name: d for d in sorted(p.iterdir()) if (d / _CTOR_FILE).is_file()} \
        if p.is_dir() else {}
    if subs:
        return subs
    if (p / _CTOR_FILE).is_file():
        return {"": p}
    raise ValueError(f"rllib checkpoint {str(path)!r} is not an RLlib module checkpoint (no "
                     f"{_CTOR_FILE} in it, in its sub-directories or in "
                     f"{'/'.join(_ALGO_MODULES)}); give what train/rllib_ppo.py --out wrote")


def load_module(path, policy: str | None = None):
    """(policy id, RLModule) from an RLlib checkpoint (policy_dirs), without Ray running.
    policy: the id to pick when the checkpoint holds several (None: the only one)."""
    dirs = policy_dirs(path)
    if policy is None:
        if len(dirs) != 1:
            raise ValueError(f"rllib checkpoint {str(path)!r} holds policies "
                             f"{', '.join(dirs)}: pick one with ,policy=ID")
        policy = next(iter(dirs))
    elif policy not in dirs:
        raise ValueError(f"rllib checkpoint {str(path)!r}: policy={policy!r} is not saved "
                         f"there; its policies are {', '.join(dirs) or '(one unnamed)'}")
    purpose = f"rllib checkpoint {str(path)!r}: an rllib agent"
    _clients("torch", purpose)
    RLModule = _clients("ray.rllib.core.rl_module.rl_module", purpose).RLModule
    try:
        module = RLModule.from_checkpoint(str(dirs[policy].resolve()))
    except Exception as exc:  # any loader failure is the checkpoint's: name it
        raise ValueError(f"rllib checkpoint {str(path)!r}: policy {policy!r} could not be "
                         f"loaded ({type(exc).__name__}: {' '.join(str(exc).split())})") from exc
    module.eval()
    _check_module_sizes(module, f"rllib checkpoint {str(path)!r}: policy {policy!r}")
    return policy, module


def _check_module_sizes(module, what: str) -> None:
    """The module's spaces against a seat's (observation Dict or flat Box, Discrete actions)."""
    from .sb3_zip import check_sizes
    space = getattr(module, "observation_space", None)
    spaces = getattr(space, "spaces", None)
    if spaces is not None and "observation" in spaces:
        space = spaces["observation"]
    shape = getattr(space, "shape", None)
    n = getattr(getattr(module, "action_space", None), "n", None)
    if shape is not None and n is not None:
        check_sizes(int(np.prod(shape)), int(n), what)


def table_record(config) -> dict:
    """TABLE_FILE's content for a checkpoint trained at tables of `config` (a RulesConfig whose
    teams are all of one size): the table as the safe format records it, and its rules."""
    from nertz_env.config import RULE_FIELDS
    sizes = set(config.sizes)
    if len(sizes) != 1:
        raise ValueError(f"team_sizes={config.sizes}: {TABLE_FILE} records teams of one size")
    return {"format": TABLE_FORMAT, "version": 1,
            "table": {"teams": config.num_teams, "team_size": sizes.pop()},
            "rules": {k: getattr(config, k) for k in RULE_FIELDS}}


def read_table(path):
    """(teams, team_size) the checkpoint at `path` was trained for, from its TABLE_FILE (in
    PATH or PATH/checkpoint), or None where it has none. A bad file: one-line ValueError."""
    from .weights import rules_problem
    found = [f for f in (Path(path) / TABLE_FILE, Path(path) / "checkpoint" / TABLE_FILE)
             if f.exists() or f.is_symlink()]
    if not found:
        return None
    what = f"rllib checkpoint {str(path)!r}: {found[0].name}"
    meta = json_loads_strict(read_capped(found[0], MAX_TABLE_FILE, what), what)

    def bad(key, allowed):
        raise ValueError(f"{what}: {key} must be {allowed}")

    keys = {"format", "version", "table", "rules"}
    if not isinstance(meta, dict) or set(meta) != keys:
        bad("the file", f"a JSON object of exactly {', '.join(sorted(keys))}")
    if meta["format"] != TABLE_FORMAT or type(meta["version"]) is not int \
            or meta["version"] != 1:
        bad("format/version", f"{TABLE_FORMAT!r} version 1")
    table = meta["table"]
    if not (isinstance(table, dict) and set(table) == {"teams", "team_size"}
            and all(type(v) is int for v in table.values())
            and 2 <= table["teams"] <= 8 and table["team_size"] in (1, 2)):
        bad("table", '{"teams": 2..8, "team_size": 1 or 2}')
    problem = meta["rules"] is not None and rules_problem(meta["rules"])
    if problem:
        bad(*problem)
    if meta["rules"] is not None and meta["rules"].get("num_teams", 2) != table["teams"]:
        bad("rules.num_teams", f"the table's teams, {table['teams']}")
    return table["teams"], table["team_size"]


class RLlibAgent(Agent):
    """`rllib:PATH[,policy=ID][,deterministic=false]`: a saved RLModule playing through
    forward_inference (greedy: argmax of the masked logits) or, deterministic=False,
    forward_exploration's masked distribution sampled with a seeded generator. The mask is
    applied again here, so even a module that does not mask never sends an illegal id."""

    def __init__(self, path, policy: str | None = None, deterministic: bool = True,
                 seed: int | None = None):
        if not isinstance(deterministic, bool):
            raise ValueError(f"deterministic={deterministic!r} must be True or False")
        self.trained, self._warned = read_table(path), set()     # before the module loads
        self.policy_id, self.module = load_module(path, policy)
        self.deterministic = deterministic
        self._rng = np.random.default_rng(seed)
        self.name = f"rllib:{path}"

    def for_table(self, config) -> "RLlibAgent":
        """Itself (its play does not depend on the table); a checkpoint whose TABLE_FILE
        records another table warns once (agents/learned/ppo.py warn_other_table)."""
        warn_other_table(self, self.trained, config, f"its {TABLE_FILE}")
        return self

    def logits(self, observations, action_masks) -> np.ndarray:
        """The module's action-distribution inputs, float32 [n, 322] (FLOAT_MIN where illegal
        for a MaskedPPOModule)."""
        torch = _clients("torch")
        Columns = _clients("ray.rllib.core.columns").Columns
        obs, masks = check_batch(observations, action_masks)
        batch = {Columns.OBS: {"observation": torch.as_tensor(np.asarray(obs, np.float32)),
                               "action_mask": torch.as_tensor(np.asarray(masks, np.int8))}}
        with torch.no_grad():
            out = (self.module.forward_inference(batch) if self.deterministic
                   else self.module.forward_exploration(batch))
        return out[Columns.ACTION_DIST_INPUTS].numpy()

    def act(self, observation, action_mask) -> int:
        return int(self.act_batch(np.asarray(observation)[None], np.asarray(action_mask)[None])[0])

    def act_batch(self, observations, action_masks) -> np.ndarray:
        logits = self.logits(observations, action_masks).astype(np.float64)
        legal = np.asarray(action_masks) > 0
        if not self.deterministic:                 # Gumbel-max: a draw from softmax(logits)
            logits = logits + self._rng.gumbel(size=logits.shape)
        return np.where(legal, logits, -np.inf).argmax(axis=1).astype(np.int64)


def from_spec(spec: str, rest: str, seed: int | None = None) -> RLlibAgent:
    """make_agent's `rllib:PATH[,policy=ID][,deterministic=true|false]`; rest is what
    follows 'rllib:'. Every bad part is a ValueError naming the spec."""
    path, opts, det = path_options(spec, rest, "rllib", RLLIB_OPTIONS,
                                   "path/to/checkpoint[,policy=ID][,deterministic=false]")
    policy = opts.get("policy")
    if policy is not None and not policy:
        raise ValueError(f"agent {spec!r}: policy= needs a policy id, e.g. policy=team0")
    try:
        agent = RLlibAgent(path, policy=policy, deterministic=det, seed=seed)
    except ValueError as err:
        raise ValueError(f"agent {spec!r}: {err}") from err.__cause__
    agent.name = spec
    return agent
