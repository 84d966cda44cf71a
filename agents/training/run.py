"""Training learned agents: the library behind `nertz train` (needs the `[train]` extra).

    cfg = TrainConfig(out="runs/t1", timesteps=2_000_000, teams=2)
    model = train(cfg)                       # imitation warm start, then MaskablePPO

What a run does, in order:
1. Environment: `NertzVecEnv` (num_envs tables in one numba call, the learner at seat 0) with
   the league's opponents written per table (`LeagueVecEnv`), wrapped in SB3's `VecMonitor`
   (info["episode"] and rollout/ep_rew_mean: NertzVecEnv fills neither itself).
2. Warm start (`bc_rows` > 0): behaviour cloning of `teacher` (a core bot; the default is
   the strongest shipped heuristic, river-builder). The teacher's move for the learner seat
   is computed by the jitted bots (core/policies.py `policy_actions_range`) on the env's own
   state, and the env is stepped with it, so the data set is produced at the vector env's
   speed. The policy is trained by cross-entropy on its masked logits (and, `bc_value`,
   its value head on the teacher's discounted returns); the held-out accuracy (tables never
   trained on) is printed and saved in bc.json.
3. MaskablePPO on the same env, with TensorBoard logs (`tensorboard`), a tqdm progress bar,
   a checkpoint every `checkpoint_every` steps and an evaluation every `eval_every` steps.

League: `opponents` is a list of entries, each a core bot spec for every other seat or
per-seat specs joined by '+' ("greedy+heuristic+heuristic" at 4 teams). Every table draws
an entry when it is dealt a hand, with weights that favour the entries the learner beats
least: softmax(-paired difference / priority_temperature), mixed with `priority_uniform`
of uniform, where the paired differences come from the evaluation callback's matches
against every entry (`eval_league_deals`; uniform until the first evaluation).
Snapshots (`snapshot_every`): every that many steps the learner is saved as
snapshots/step_N.zip and joins the league as an entry "snapshot:step_N" (at most
`max_snapshots`, the oldest leaves), played at every other seat of the tables that draw it by
FrozenPolicy exactly as make_agent("ppo:PATH") plays (deterministic). Those seats are
POLICY_EXTERNAL in the env's bot arrays: per step one numba call gathers all their rows
(nertz_env/envs/learner_batch.py `external`) and each live snapshot runs one forward pass
over all of its rows. Evaluations play the learner against each snapshot like any entry.

Rewards: "relative" (the learner team's hand points minus the mean of the other teams',
what tournaments rank by in a multi-team table) or "score" (its own points); both are the
vector env's (core/batch.py vec_step_range). Win rewards are not offered by the env.

Rules: training plays RulesConfig(num_teams=teams, max_ticks=max_ticks), with the rules
default max_ticks (the one `nertz tournament` plays) unless `max_ticks` is given; the run
prints both and saves them in config.json ("rules", "tournament_rules"). The evaluation
plays the training rules, so that a run with a short max_ticks is evaluated as trained; the
final judgement belongs to `nertz tournament` at its default rules.

Evaluation (`eval_every`): the current policy is saved to a temporary zip and loaded with
make_agent("ppo:PATH"), exactly as tournaments play it (deterministic, masked argmax), and
plays run_tournament duplicate deals (`eval_deals`, fixed seed `eval_seed`, so every
evaluation plays the same deals) against `eval_against`: head to head at 2 teams, one seat
among teams-1 copies at more teams. The paired difference per deal (policy minus the mean
of the others) with its 95% t-interval goes to TensorBoard (eval/diff, eval/ci_low,
eval/ci_high) and to eval.jsonl / eval.csv in the run folder. With `eval_league_deals` > 0
every league entry is played too (same way) and its difference sets the league weights.

Checkpoints (`checkpoint_every`): taken between updates (at the start of a rollout), so a
resumed run collects its next rollout and makes the same next update. Each is
checkpoints/step_N.zip (SB3: policy, value net, optimizer state, num_timesteps, update
count, learning-rate progress), step_N.json (the full config, the league state and its
snapshots' paths relative to the run folder, timings) and step_N.rng.pt (torch's and numpy's generator states). `resume` loads all three: the
next update starts from the same parameters and optimizer state with the same schedule;
the tables are dealt afresh (the env's cards and positions are not saved), so the resumed
rollout is not the one the uninterrupted run would have collected.
"""
from __future__ import annotations

import csv
import dataclasses
import itertools
import json
import math
import numbers
import os
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from nertz_env.bot_specs import core_bot
from nertz_env.config import RulesConfig
from nertz_env.core.policies import POLICY_EXTERNAL, POLICY_SCORED, policy_actions_range

BEST_HEURISTIC = "heuristic:style=river-builder"   # beats every other shipped style head to head
TOURNAMENT_RULES = RulesConfig()                  # what `nertz tournament` plays by default
REWARDS = ("relative", "score")
DEVICES = ("cpu", "cuda", "auto")
# fields a resumed run may not change: they shape the network, the rollout or the game
FIXED_ON_RESUME = ("teams", "max_ticks", "num_envs", "n_steps", "net_arch", "reward")


# ---------------------------------------------------------------------------- config
@dataclass
class TrainConfig:
    """Every argument of a training run (saved as config.json and beside every checkpoint)."""
    out: str = "runs/train"
    """run folder: config.json, bc.json, eval.jsonl/csv, checkpoints/, tb/, final.zip"""
    seed: int = 0
    """seed of tables, league draws, network initialisation and minibatches"""
    timesteps: int = 1_000_000
    """PPO learner env-steps (one table tick each), rounded up to whole rollouts"""
    num_envs: int = 64
    """tables stepped together in one numba call"""
    teams: int = 2
    """teams at the table; the learner holds seat 0"""
    max_ticks: int | None = None
    """R26 truncation of a hand; None: the rules default, the one tournaments play"""
    reward: str = "relative"
    """'relative' (own hand points minus the others' mean) or 'score' (own points)"""
    opponents: list = field(default_factory=lambda: [BEST_HEURISTIC])
    """league entries: core bot specs (every other seat), or per-seat specs joined by '+'"""
    snapshot_every: int = 0
    """steps between frozen snapshots of the learner joining the league (0: none)"""
    max_snapshots: int = 4
    """snapshots kept in the league (the oldest leaves when a new one joins)"""
    priority_temperature: float = 2.0
    """league weights: softmax(-paired difference / this), points per hand"""
    priority_uniform: float = 0.2
    """share of the league weights spread uniformly (every entry keeps being played)"""
    teacher: str = BEST_HEURISTIC
    """the bot imitated by the warm start (greedy or a heuristic spec)"""
    bc_rows: int = 200_000
    """teacher positions collected for the warm start (0: no warm start)"""
    bc_epochs: int = 4
    """passes over the warm-start data"""
    bc_batch_size: int = 512
    """minibatch of the warm start"""
    bc_learning_rate: float = 1e-3
    """Adam learning rate of the warm start (its own optimizer, not PPO's)"""
    bc_holdout: float = 0.1
    """share of the tables held out to measure the imitation accuracy"""
    bc_value: bool = True
    """also fit the value head to the teacher's discounted returns"""
    n_steps: int = 128
    """rollout length per table between PPO updates"""
    batch_size: int = 1024
    """PPO minibatch size"""
    n_epochs: int = 4
    """PPO epochs per update"""
    learning_rate: float = 3e-4
    """PPO Adam learning rate"""
    gamma: float = 0.99
    """discount factor (PPO and the warm start's returns)"""
    gae_lambda: float = 0.95
    """GAE lambda"""
    clip_range: float = 0.2
    """PPO clip range"""
    ent_coef: float = 0.01
    """entropy bonus"""
    vf_coef: float = 0.5
    """value loss weight"""
    net_arch: list = field(default_factory=lambda: [128, 128])
    """hidden layers of the policy and value networks"""
    checkpoint_every: int = 250_000
    """steps between checkpoints (taken between updates; 0: only the final model)"""
    eval_every: int = 250_000
    """steps between evaluations (0: none)"""
    eval_deals: int = 50
    """duplicate deals per evaluation against eval_against"""
    eval_against: str = BEST_HEURISTIC
    """the agent each evaluation plays (any make_agent spec)"""
    eval_league_deals: int = 20
    """duplicate deals against every league entry per evaluation, which set the league
    weights (0: none, uniform weights; skipped with a one-entry league)"""
    eval_seed: int = 1_000_003
    """tournament seed of every evaluation (the same deals each time)"""
    tensorboard: bool = True
    """TensorBoard logs in OUT/tb (needs the tensorboard package)"""
    progress: bool = True
    """a progress bar (tqdm) while training"""
    torch_threads: int = 1
    """torch CPU threads (1 is fastest with the small networks and numba sharing the cores)"""
    device: str = "cpu"
    """torch device: cpu, cuda or auto"""
    resume: str | None = None
    """a checkpoint zip to continue from (its config is used; see FIXED_ON_RESUME)"""

    def __post_init__(self):
        check_config(self)

    def rules(self) -> RulesConfig:
        kw = {"num_teams": self.teams}
        if self.max_ticks is not None:
            kw["max_ticks"] = self.max_ticks
        return RulesConfig(**kw)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


def _is_int(x) -> bool:
    return isinstance(x, numbers.Integral) and not isinstance(x, bool)


def _is_real(x) -> bool:
    return isinstance(x, numbers.Real) and not isinstance(x, bool) and math.isfinite(x)


def check_config(c: TrainConfig) -> None:
    """ValueError naming the first bad field and what it allows; nothing else is done."""
    ints = {"seed": 0, "timesteps": 1, "num_envs": 1, "teams": 2, "bc_rows": 0, "bc_epochs": 1,
            "bc_batch_size": 1, "n_steps": 2, "batch_size": 2, "n_epochs": 1,
            "checkpoint_every": 0, "eval_every": 0, "eval_deals": 2, "eval_league_deals": 0,
            "eval_seed": 0, "torch_threads": 1, "snapshot_every": 0, "max_snapshots": 1}
    for name, lo in ints.items():
        v = getattr(c, name)
        if not _is_int(v) or v < lo:
            raise ValueError(f"{name}={v!r} must be an int >= {lo}")
    if c.eval_league_deals == 1:
        raise ValueError("eval_league_deals=1 must be 0 (off) or an int >= 2 (intervals need "
                         "2 deals)")
    if c.max_ticks is not None and (not _is_int(c.max_ticks) or c.max_ticks < 1):
        raise ValueError(f"max_ticks={c.max_ticks!r} must be None (the rules default) or an "
                         "int >= 1")
    reals = {"priority_temperature": (0.0, None), "priority_uniform": (0.0, 1.0),
             "bc_learning_rate": (0.0, None), "bc_holdout": (0.0, 1.0),
             "learning_rate": (0.0, None), "gamma": (0.0, 1.0), "gae_lambda": (0.0, 1.0),
             "clip_range": (0.0, None), "ent_coef": (0.0, None), "vf_coef": (0.0, None)}
    for name, (lo, hi) in reals.items():
        v = getattr(c, name)
        strict_lo = name in ("priority_temperature", "bc_learning_rate", "learning_rate",
                             "clip_range", "bc_holdout")
        ok = _is_real(v) and (v > lo if strict_lo else v >= lo) and (hi is None or v <= hi)
        if name == "bc_holdout":
            ok = ok and v < 1.0
        if not ok:
            rng = f"> {lo}" if strict_lo else f">= {lo}"
            if hi is not None:
                rng += f" and < {hi}" if name == "bc_holdout" else f" and <= {hi}"
            raise ValueError(f"{name}={v!r} must be a finite number {rng}")
    if c.reward not in REWARDS:
        raise ValueError(f"reward={c.reward!r} must be one of {', '.join(REWARDS)}")
    if c.device not in DEVICES:
        raise ValueError(f"device={c.device!r} must be one of {', '.join(DEVICES)}")
    for name in ("out",):
        if not isinstance(getattr(c, name), str) or not getattr(c, name).strip():
            raise ValueError(f"{name}={getattr(c, name)!r} must be a non-empty path")
    if c.resume is not None and (not isinstance(c.resume, str) or not c.resume.strip()):
        raise ValueError(f"resume={c.resume!r} must be None or the path of a checkpoint zip")
    arch = c.net_arch
    if (not isinstance(arch, (list, tuple)) or not arch
            or not all(_is_int(w) and 1 <= w <= 65536 for w in arch)):
        raise ValueError(f"net_arch={arch!r} must be a non-empty list of layer widths "
                         "(ints 1..65536)")
    c.net_arch = [int(w) for w in arch]
    if c.batch_size > c.n_steps * c.num_envs:
        raise ValueError(f"batch_size={c.batch_size} must be <= n_steps * num_envs "
                         f"({c.n_steps * c.num_envs}, the rollout size)")
    if c.bc_rows and c.bc_rows < 2 * c.num_envs:
        raise ValueError(f"bc_rows={c.bc_rows} must be 0 (no warm start) or >= 2 * num_envs "
                         f"({2 * c.num_envs})")
    try:
        rules = c.rules()
    except ValueError as err:
        raise ValueError(f"teams / max_ticks: {err}") from None
    if not isinstance(c.opponents, (list, tuple)) or not c.opponents:
        raise ValueError(f"opponents={c.opponents!r} must be a non-empty list of bot specs")
    c.opponents = list(c.opponents)
    for i, entry in enumerate(c.opponents):
        parse_entry(entry, rules.num_seats - 1, where=f"opponents[{i}]")
    try:
        kind, _, _ = core_bot(c.teacher)
    except ValueError as err:
        raise ValueError(f"teacher={c.teacher!r}: {err}") from None
    if kind != POLICY_SCORED:
        raise ValueError(f"teacher={c.teacher!r} must be greedy or a heuristic spec (a scored bot)")
    if not isinstance(c.eval_against, str) or not c.eval_against.strip():
        raise ValueError(f"eval_against={c.eval_against!r} must be an agent spec")
    from ..registry import make_agent
    try:                                  # now, not at the first evaluation hours later
        make_agent(c.eval_against)
    except ValueError as err:
        raise ValueError(f"eval_against={c.eval_against!r}: {err}") from None


# ---------------------------------------------------------------------------- league
SNAPSHOT = "snapshot:"


@dataclass
class LeagueEntry:
    """One opponent of the league: a name and, per other seat, the core bot (kind, knobs);
    a snapshot (`path` set) holds every other seat with POLICY_EXTERNAL, its moves coming
    from `policy` (a FrozenPolicy of the saved model, loaded by the league on first use)."""
    name: str
    specs: list       # per other seat: a make_agent spec (a snapshot's: "ppo:PATH")
    seats: list       # [(kind, knobs int64 [K])] one per other seat, in seat order
    path: str | None = None
    policy: object = None


def parse_entry(entry, n_others: int, where: str = "opponent") -> LeagueEntry:
    """A league entry from a core bot spec (all other seats), specs joined by '+' (one
    per other seat), or "snapshot:PATH" (a saved model of the learner at every other seat,
    played deterministically as make_agent("ppo:PATH")); ValueError naming `where`
    otherwise."""
    if isinstance(entry, LeagueEntry):
        return entry
    if not isinstance(entry, str) or not entry.strip():
        raise ValueError(f"{where}={entry!r} must be a core bot spec such as 'greedy' or "
                         "'heuristic:style=river-builder', or 'snapshot:PATH' (learner "
                         "snapshots: a saved model zip)")
    if entry.strip().startswith(SNAPSHOT):
        path = entry.strip()[len(SNAPSHOT):].strip()
        if not path or not Path(path).is_file() or "," in path:
            raise ValueError(f"{where}={entry!r}: a snapshot is 'snapshot:PATH' with PATH an "
                             "existing model zip (no commas in the path)")
        knobs = core_bot("random")[1] * 0
        return LeagueEntry(f"snapshot:{Path(path).stem}", [f"ppo:{path}"] * n_others,
                           [(POLICY_EXTERNAL, knobs)] * n_others, path=path)
    specs = [s.strip() for s in entry.split("+")]
    if len(specs) == 1:
        specs = specs * n_others
    if len(specs) != n_others:
        raise ValueError(f"{where}={entry!r} names {len(specs)} seats joined by '+'; the table "
                         f"has {n_others} other seats (or give one spec for all)")
    seats = []
    for s in specs:
        try:
            kind, knobs, _ = core_bot(s)
        except ValueError as err:
            raise ValueError(f"{where}: {err}") from None
        seats.append((kind, knobs))
    return LeagueEntry(entry.strip(), specs, seats)


def league_weights(diffs, temperature: float, uniform: float) -> np.ndarray:
    """Sampling weights of the entries: softmax(-diff / temperature) mixed with `uniform` of
    the uniform weights; entries with no number yet (NaN) get the mean of those that have
    one (all NaN: uniform)."""
    d = np.asarray(diffs, np.float64)
    n = d.size
    if n == 0:
        return d
    known = np.isfinite(d)
    if not known.any():
        return np.full(n, 1.0 / n)
    d = np.where(known, d, d[known].mean())
    z = -(d - d.min()) / temperature
    p = np.exp(z - z.max())
    p /= p.sum()
    return (1.0 - uniform) * p + uniform / n


class _League:
    """LeagueVecEnv's methods (the class itself is made on first use, over SB3's
    VecEnvWrapper: importing SB3 imports torch, which `nertz --help` should not wait for).

    A NertzVecEnv whose tables each play one league entry at a time: every table draws an
    entry (league weights) when it is dealt a hand (at reset and when a hand ends), and the
    entry's bots are written into that table's rows of the env's per-table bot arrays
    (kinds / knobs [tables, seats]), which the core plays inside numba. A snapshot entry
    marks those seats POLICY_EXTERNAL instead: per step the env gathers every such seat of
    every table in one numba call and calls `_external` once, which runs one act_batch per
    snapshot over all the rows of the tables that drew it (at most K forward passes for K
    live snapshots). Per entry it counts the finished hands and the learner's mean relative
    points (`stats()`)."""

    def __init__(self, venv, entries, seed: int = 0, temperature: float = 2.0,
                 uniform: float = 0.2):
        super().__init__(venv)                       # VecEnvWrapper's
        self.batch = venv.batch
        self.learner_seat = venv.learner_seat
        self.others = [s for s in range(venv.config.num_seats) if s != self.learner_seat]
        self.team = venv.config.seat_team[self.learner_seat]
        self.rng = np.random.default_rng(np.random.SeedSequence([int(seed), 7]))
        self.temperature, self.uniform = float(temperature), float(uniform)
        self.table_entry = np.zeros(self.num_envs, np.int64)
        self.set_entries(entries)

    def set_entries(self, entries, diffs=None) -> None:
        """The hook for the league's opponents: a list of entries (core bot specs, '+'-joined
        per-seat specs, or LeagueEntry), optionally with each one's paired difference (the
        learner minus the entry, points per hand; NaN: unknown). Every table draws anew."""
        parsed = [parse_entry(e, len(self.others), where=f"entries[{i}]")
                  for i, e in enumerate(entries)]
        if not parsed:
            raise ValueError("entries must name at least one opponent")
        d = np.full(len(parsed), np.nan) if diffs is None else np.asarray(diffs, float)
        if d.shape != (len(parsed),):
            raise ValueError(f"diffs: one number per entry ({len(parsed)}), got {d.shape}")
        for en in parsed:
            _load_snapshot(en)
        self.entries, self.diffs = parsed, d
        self.weights = league_weights(d, self.temperature, self.uniform)
        self.hands = np.zeros(len(parsed), np.int64)
        self.rel_sum = np.zeros(len(parsed), np.float64)
        self._hook()
        self._draw(np.arange(self.num_envs))

    def add_snapshot(self, path, keep: int) -> None:
        """A frozen copy of the learner (a saved model zip) joins the league with no
        evaluation yet (NaN: the mean weight); beyond `keep` snapshots the oldest leaves.
        Tables keep their entries; only those that held a dropped one draw anew."""
        new = parse_entry(f"{SNAPSHOT}{path}", len(self.others), where="snapshot")
        _load_snapshot(new)
        snaps = [i for i, en in enumerate(self.entries) if en.path is not None]
        drop = set(snaps[:max(0, len(snaps) + 1 - int(keep))])
        kept = [i for i in range(len(self.entries)) if i not in drop]
        remap = np.full(len(self.entries), -1, np.int64)
        remap[kept] = np.arange(len(kept))
        self.entries = [self.entries[i] for i in kept] + [new]
        self.diffs = np.append(self.diffs[kept], np.nan)
        self.hands = np.append(self.hands[kept], 0)
        self.rel_sum = np.append(self.rel_sum[kept], 0.0)
        self.weights = league_weights(self.diffs, self.temperature, self.uniform)
        self.table_entry = remap[self.table_entry]
        self._hook()
        self._draw(np.flatnonzero(self.table_entry < 0))

    def snapshot_paths(self) -> list:
        """The live snapshots' model zips, oldest first."""
        return [en.path for en in self.entries if en.path is not None]

    def _hook(self) -> None:
        """The env calls _external per step only while the league holds a snapshot."""
        self.batch.external = self._external if self.snapshot_paths() else None

    def _external(self, obs, masks, tables, seats) -> np.ndarray:
        """The snapshots' moves at all their rows: one act_batch per snapshot over every
        row of the tables that drew it."""
        ids = np.zeros(len(tables), np.int64)
        entry = self.table_entry[tables]
        for i in np.unique(entry):
            rows = np.flatnonzero(entry == i)
            ids[rows] = self.entries[i].policy.act_batch(obs[rows], masks[rows])
        return ids

    def set_diffs(self, diffs) -> None:
        """New paired differences (from an evaluation): new weights for the next draws."""
        d = np.asarray(diffs, float)
        if d.shape != (len(self.entries),):
            raise ValueError(f"diffs: one number per entry ({len(self.entries)}), got {d.shape}")
        self.diffs = d
        self.weights = league_weights(d, self.temperature, self.uniform)

    def _draw(self, tables) -> None:
        if len(tables) == 0:
            return
        pick = self.rng.choice(len(self.entries), size=len(tables), p=self.weights)
        self.table_entry[tables] = pick
        for e, i in zip(tables, pick):
            for s, (kind, knobs) in zip(self.others, self.entries[i].seats):
                self.batch.kinds[e, s] = kind
                self.batch.knobs[e, s] = knobs

    def reset(self):
        obs = self.venv.reset()
        self._draw(np.arange(self.num_envs))
        return obs

    def step_wait(self):
        obs, rewards, dones, infos = self.venv.step_wait()
        done = np.flatnonzero(dones)
        if done.size:
            T = self.venv.config.num_teams
            for e in done:
                sc = np.asarray(infos[e]["final_scores"], np.float64)
                rel = sc[self.team] - (sc.sum() - sc[self.team]) / max(T - 1, 1)
                i = self.table_entry[e]
                self.hands[i] += 1
                self.rel_sum[i] += rel
                infos[e]["opponent"] = self.entries[i].name
            self._draw(done)
        return obs, rewards, dones, infos

    def stats(self) -> list:
        """Per entry: name, weight, last evaluated difference, training hands and the
        learner's mean relative points in them."""
        return [{"name": en.name, "weight": float(w),
                 "eval_diff": float(d) if np.isfinite(d) else None,       # None: not yet
                 "hands": int(h), "mean_relative": float(r / h) if h else None}
                for en, w, d, h, r in zip(self.entries, self.weights, self.diffs, self.hands,
                                          self.rel_sum)]


def _load_snapshot(entry: LeagueEntry) -> None:
    """A snapshot entry's FrozenPolicy, as make_agent("ppo:PATH") plays it (deterministic)."""
    if entry.path is not None and entry.policy is None:
        from ..registry import make_agent
        entry.policy = make_agent(f"ppo:{entry.path}").policy


_LEAGUE_CLASS = []


def league_class():
    """LeagueVecEnv: _League over stable-baselines3's VecEnvWrapper, made once."""
    if not _LEAGUE_CLASS:
        from stable_baselines3.common.vec_env import VecEnvWrapper
        _LEAGUE_CLASS.append(type("LeagueVecEnv", (_League, VecEnvWrapper),
                                  {"__doc__": _League.__doc__.split("\n\n", 1)[1],
                                   "__module__": __name__}))
    return _LEAGUE_CLASS[0]


def __getattr__(name):
    if name == "LeagueVecEnv":
        return league_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def make_env(cfg: TrainConfig, seed: int | None = None, monitor: bool = True):
    """The training env: NertzVecEnv + LeagueVecEnv (+ VecMonitor)."""
    from stable_baselines3.common.vec_env import VecMonitor

    from nertz_env.envs.vector import NertzVecEnv
    seed = cfg.seed if seed is None else seed
    rules = cfg.rules()
    base = NertzVecEnv(num_envs=cfg.num_envs, config=rules, seed=seed, reward=cfg.reward)
    env = league_class()(base, cfg.opponents, seed=seed, temperature=cfg.priority_temperature,
                       uniform=cfg.priority_uniform)
    return VecMonitor(env) if monitor else env


def league_of(env):
    """The LeagueVecEnv inside wrappers (VecMonitor)."""
    while not isinstance(env, _League):
        env = getattr(env, "venv", None)
        if env is None:
            raise ValueError("no LeagueVecEnv in this env")
    return env


# ---------------------------------------------------------------------------- teacher
class Teacher:
    """The move of a core bot at the learner seat of every table of a NertzVecEnv (or a
    wrapper of one), computed by the jitted bots (core/policies.py) on the env's state."""

    def __init__(self, env, spec: str):
        base = env
        while hasattr(base, "venv"):                 # VecMonitor, LeagueVecEnv: the NertzVecEnv
            base = base.venv
        self.env = base
        self.engine = base.engine
        self.seat = base.learner_seat
        kind, knobs, self.name = core_bot(spec)
        if kind != POLICY_SCORED:
            raise ValueError(f"teacher {spec!r} must be greedy or a heuristic spec")
        self.knobs_row = knobs
        E, S = self.engine.actions.shape
        self.kinds = np.full((E, S), POLICY_EXTERNAL, np.int8)   # only the learner seat is written
        self.kinds[:, self.seat] = kind
        self.knobs = np.zeros((E, S, knobs.shape[0]), np.int64)
        self.knobs[:, self.seat] = knobs
        self.rng = np.zeros(E, np.uint64)
        self.actions = np.zeros((E, S), np.int16)

    def __call__(self) -> np.ndarray:
        """int64 [tables]: the teacher's choice in every table's current position."""
        eng = self.engine
        policy_actions_range(eng.state, eng.params, eng.scratch, eng.masks, self.kinds,
                             self.knobs, self.rng, self.actions, 0, self.actions.shape[0])
        return self.actions[:, self.seat].astype(np.int64)


# ---------------------------------------------------------------------------- imitation
def collect_teacher_data(env, teacher: Teacher, rows: int, gamma: float = 0.99) -> dict:
    """Play the teacher at the learner seat of every table for ceil(rows / tables) steps and
    keep every position: obs float32 [n, OBS], masks bool [n, A], actions int64 [n] (the
    teacher's), returns float32 [n] (discounted rewards to the end of the hand; NaN where
    the hand did not end inside the data), table int64 [n]. Rows are table-major."""
    E = env.num_envs
    steps = -(-rows // E)
    obs = env.reset()
    O, A = obs.shape[1], env.action_space.n
    X = np.empty((E, steps, O), np.float32)          # table-major: the rows need no copy
    M = np.empty((E, steps, A), bool)
    Y = np.empty((E, steps), np.int64)
    R = np.empty((E, steps), np.float32)
    D = np.empty((E, steps), bool)
    for t in range(steps):
        X[:, t] = obs
        M[:, t] = teacher.env.batch.action_masks()
        Y[:, t] = teacher()
        obs, R[:, t], D[:, t], _ = env.step(Y[:, t])
    G = np.full((E, steps), np.nan, np.float32)
    run = np.full(E, np.nan, np.float32)              # NaN until a hand end is seen
    for t in range(steps - 1, -1, -1):
        run = np.where(D[:, t], R[:, t], R[:, t] + gamma * run)
        G[:, t] = run
    n = E * steps
    return {"obs": X.reshape(n, O), "masks": M.reshape(n, A), "actions": Y.reshape(n),
            "returns": G.reshape(n), "table": np.repeat(np.arange(E), steps)}


def split_holdout(data: dict, holdout: float):
    """(train, held-out): the last `holdout` share of the tables (whole tables, so held-out
    positions come from deals never trained on). Rows must be table-major (as
    collect_teacher_data gives them): both parts are views."""
    table = data["table"]
    if np.any(np.diff(table) < 0):
        raise ValueError("split_holdout: rows must be table-major (tables in ascending order)")
    E = int(table.max()) + 1
    n_hold = max(1, round(E * holdout)) if holdout > 0 else 0
    cut = int(np.searchsorted(table, E - n_hold))
    return ({k: v[:cut] for k, v in data.items()}, {k: v[cut:] for k, v in data.items()})


def policy_choices(policy, obs, masks, batch: int = 4096) -> np.ndarray:
    """The masked argmax of the policy's logits (deterministic play) for every row."""
    import torch
    out = []
    with torch.no_grad():
        for i in range(0, len(obs), batch):
            o = torch.as_tensor(obs[i:i + batch], device=policy.device)
            dist = policy.get_distribution(o, action_masks=masks[i:i + batch])
            out.append(dist.distribution.logits.argmax(dim=1).cpu().numpy())
    return np.concatenate(out) if out else np.zeros(0, np.int64)


def imitation_accuracy(policy, data: dict) -> float:
    """Share of rows where the policy's deterministic move is the teacher's."""
    if len(data["actions"]) == 0:
        return float("nan")
    return float((policy_choices(policy, data["obs"], data["masks"]) == data["actions"]).mean())


def behaviour_clone(policy, data: dict, epochs: int, batch_size: int, lr: float,
                    value: bool = True, vf_coef: float = 0.5, seed: int = 0, log=None) -> list:
    """Cross-entropy of the policy's masked logits on the teacher's moves (plus, `value`,
    vf_coef * squared error of the value head on the returns), with an Adam of its own.
    Returns the mean cross-entropy per epoch."""
    import torch
    g = np.random.default_rng(np.random.SeedSequence([int(seed), 11]))
    opt = torch.optim.Adam(policy.parameters(), lr=lr)
    n = len(data["actions"])
    dev = policy.device
    has_ret = np.isfinite(data["returns"])
    policy.set_training_mode(True)
    losses = []
    for ep in range(epochs):
        order = g.permutation(n)
        ce_sum, v_sum, k = 0.0, 0.0, 0
        for i in range(0, n, batch_size):
            idx = order[i:i + batch_size]
            obs = torch.as_tensor(data["obs"][idx], device=dev)
            act = torch.as_tensor(data["actions"][idx], device=dev)
            values, logp, _ = policy.evaluate_actions(obs, act,
                                                      action_masks=data["masks"][idx])
            ce = -logp.mean()
            loss = ce
            if value:
                ok = torch.as_tensor(has_ret[idx], device=dev)
                if ok.any():
                    ret = torch.as_tensor(data["returns"][idx], device=dev)
                    v_err = ((values.flatten() - ret)[ok] ** 2).mean()
                    loss = loss + vf_coef * v_err
                    v_sum += v_err.item() * len(idx)
            opt.zero_grad()
            loss.backward()        # no norm clipping: the value error would starve the policy
            opt.step()
            ce_sum += ce.item() * len(idx)
            k += len(idx)
        losses.append(ce_sum / max(k, 1))
        if log:
            log(f"imitation epoch {ep + 1}/{epochs}: cross-entropy {losses[-1]:.4f}"
                + (f", value error {v_sum / max(k, 1):.2f}" if value else ""))
    policy.set_training_mode(False)
    return losses


# ---------------------------------------------------------------------------- evaluation
def evaluate_policy_zip(path, against: str, rules: RulesConfig, deals: int, seed: int) -> dict:
    """The model at `path` played as make_agent("ppo:PATH") against `against` on duplicate
    deals (head to head at 2 teams; one seat among teams-1 copies otherwise): the per-deal
    difference of its mean points from the others' mean, with its 95% t-interval."""
    from ..stats import estimators as stats
    from ..registry import make_agent
    from ..arena.tournament import run_tournament
    agent = make_agent(f"ppo:{path}")
    T = rules.num_teams
    agents = [agent] + [against] * (T - 1)
    res = run_tournament(agents, config=rules, deals=deals, seed=seed, progress=False,
                         format="round-robin" if T == 2 else "all-play-all")
    dm = stats.deal_means(res.records, len(agents))
    per_deal = dm[:, 0] - np.nanmean(dm[:, 1:], axis=1)
    diff, half = stats.mean_ci(per_deal)
    return {"against": against, "deals": len(per_deal), "hands": res.hands_played,
            "diff": diff, "ci_low": diff - half, "ci_high": diff + half,
            "points": float(np.mean(dm[:, 0])), "opponent_points": float(np.nanmean(dm[:, 1:])),
            "deterministic": bool(agent.policy.deterministic)}


def _callbacks_base():
    from stable_baselines3.common.callbacks import BaseCallback
    return BaseCallback


def make_callbacks(cfg: TrainConfig, run: Path, log=print):
    """[ProgressBar, Checkpoint, Evaluation] callbacks of a run (those switched on)."""
    BaseCallback = _callbacks_base()

    class RolloutEvery(BaseCallback):
        """Runs `fire` at the start of the first rollout after every `every` steps (between
        updates: the model then is exactly what the next update starts from)."""

        def __init__(self, every: int):
            super().__init__()
            self.every = every
            self.next_at = None

        def _on_training_start(self) -> None:
            self.next_at = (self.num_timesteps // self.every + 1) * self.every

        def _on_rollout_start(self) -> None:
            if self.num_timesteps >= self.next_at:
                self.fire()
                self.next_at = (self.num_timesteps // self.every + 1) * self.every

        def _on_step(self) -> bool:
            return True

        def _on_training_end(self) -> None:
            if self.num_timesteps >= self.next_at:
                self.fire()

    class Checkpoint(RolloutEvery):
        def fire(self) -> None:
            path = save_checkpoint(self.model, cfg, run)
            log(f"checkpoint {path}")

    class Evaluation(RolloutEvery):
        def fire(self) -> None:
            evaluate_run(self.model, cfg, run, self.logger, log)

    class Snapshot(RolloutEvery):
        def fire(self) -> None:
            path = save_snapshot(self.model, cfg, run)
            log(f"snapshot {path} joins the league")

    class Progress(BaseCallback):
        """A tqdm bar over the run's steps (SB3's own bar needs rich as well)."""

        def _on_training_start(self) -> None:
            try:
                from tqdm.auto import tqdm
            except ImportError:
                log("tqdm is not installed: no progress bar (pip install tqdm)")
                self.bar = None
                return
            self.bar = tqdm(total=self.locals["total_timesteps"], initial=self.num_timesteps,
                            unit="step", unit_scale=True, dynamic_ncols=True, file=sys.stderr)
            self.last = self.num_timesteps

        def _on_step(self) -> bool:
            if self.bar is not None:
                self.bar.update(self.num_timesteps - self.last)
                self.last = self.num_timesteps
            return True

        def _on_training_end(self) -> None:
            if self.bar is not None:
                self.bar.close()

    class LeagueLog(BaseCallback):
        """league/* scalars after every rollout: each entry's weight and the learner's mean
        relative points in its training hands."""

        def _on_step(self) -> bool:
            return True

        def _on_rollout_end(self) -> None:
            for s in league_of(self.model.get_env()).stats():
                self.logger.record(f"league/weight/{s['name']}", s["weight"])
                if s["hands"]:
                    self.logger.record(f"league/train_relative/{s['name']}", s["mean_relative"])

    out = [LeagueLog()]
    if cfg.progress:
        out.append(Progress())
    if cfg.snapshot_every:                  # before the checkpoint: it lists the snapshots
        out.append(Snapshot(cfg.snapshot_every))
    if cfg.checkpoint_every:
        out.append(Checkpoint(cfg.checkpoint_every))
    if cfg.eval_every:
        out.append(Evaluation(cfg.eval_every))
    return out


EVAL_FIELDS = ("timesteps", "against", "deals", "hands", "diff", "ci_low", "ci_high", "points",
               "opponent_points", "deterministic", "seconds")


def evaluate_run(model, cfg: TrainConfig, run: Path, logger=None, log=print) -> dict:
    """One evaluation (module docstring): the headline match, then (eval_league_deals) the
    league entries, whose differences become the league weights. Appends a row per match to
    eval.jsonl and eval.csv and records eval/* scalars."""
    rules = cfg.rules()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "policy.zip"
        model.save(path)
        t0 = time.perf_counter()
        head = evaluate_policy_zip(path, cfg.eval_against, rules, cfg.eval_deals, cfg.eval_seed)
        head.update(timesteps=int(model.num_timesteps), seconds=time.perf_counter() - t0)
        rows.append(head)
        league = league_of(model.get_env())
        if cfg.eval_league_deals and len(league.entries) > 1:
            diffs = []
            for en in league.entries:
                t0 = time.perf_counter()
                if len(set(en.specs)) == 1:
                    r = evaluate_policy_zip(path, en.specs[0], rules, cfg.eval_league_deals,
                                            cfg.eval_seed)
                else:
                    r = _mixed_eval(path, en, rules, cfg)
                r.update(timesteps=int(model.num_timesteps), seconds=time.perf_counter() - t0,
                         against=f"league:{en.name}")
                rows.append(r)
                diffs.append(r["diff"])
            league.set_diffs(diffs)
    write_eval_rows(run, rows)
    if logger is not None:
        logger.record("eval/diff", head["diff"])
        logger.record("eval/ci_low", head["ci_low"])
        logger.record("eval/ci_high", head["ci_high"])
        logger.record("eval/points", head["points"])
        for r in rows[1:]:
            logger.record(f"league/diff/{r['against'][7:]}", r["diff"])
        if len(league.entries) > 1:
            for s in league.stats():
                logger.record(f"league/weight/{s['name']}", s["weight"])
        logger.dump(int(model.num_timesteps))
    log(f"eval at {model.num_timesteps:,} steps: {head['diff']:+.2f} "
        f"[{head['ci_low']:+.2f}, {head['ci_high']:+.2f}] points per hand against "
        f"{cfg.eval_against} ({head['deals']} deals, {head['seconds']:.1f} s)")
    return head


def _mixed_eval(path, entry: LeagueEntry, rules: RulesConfig, cfg: TrainConfig) -> dict:
    """An entry with different bots per seat: the policy at one seat, the entry's specs at
    the others, all-play-all (every agent at every position), difference from their mean."""
    from ..stats import estimators as stats
    from ..registry import make_agent
    from ..arena.tournament import run_tournament
    agents = [make_agent(f"ppo:{path}")] + list(entry.specs)
    res = run_tournament(agents, config=rules, deals=cfg.eval_league_deals, seed=cfg.eval_seed,
                         progress=False, format="all-play-all")
    dm = stats.deal_means(res.records, len(agents))
    per_deal = dm[:, 0] - np.nanmean(dm[:, 1:], axis=1)
    diff, half = stats.mean_ci(per_deal)
    return {"against": entry.name, "deals": len(per_deal), "hands": res.hands_played,
            "diff": diff, "ci_low": diff - half, "ci_high": diff + half,
            "points": float(np.mean(dm[:, 0])), "opponent_points": float(np.nanmean(dm[:, 1:])),
            "deterministic": bool(agents[0].policy.deterministic)}


def write_eval_rows(run: Path, rows) -> None:
    with open(run / "eval.jsonl", "a") as f:
        f.writelines(json.dumps({k: r[k] for k in EVAL_FIELDS}) + "\n" for r in rows)
    path = run / "eval.csv"
    new = not path.exists()
    with open(path, "a", newline="") as f:
        w = csv.DictWriter(f, fieldnames=EVAL_FIELDS)
        if new:
            w.writeheader()
        for r in rows:
            w.writerow({k: r[k] for k in EVAL_FIELDS})


# ---------------------------------------------------------------------------- checkpoints
def save_snapshot(model, cfg: TrainConfig, run: Path) -> Path:
    """snapshots/step_N.zip: the learner now, added to the league (at most max_snapshots)."""
    d = run / "snapshots"
    d.mkdir(parents=True, exist_ok=True)
    path = d / f"step_{int(model.num_timesteps)}.zip"
    model.save(path)
    league_of(model.get_env()).add_snapshot(str(path), cfg.max_snapshots)
    return path


def run_info(cfg: TrainConfig) -> dict:
    """config.json's content: every argument, the rules trained on and the rules tournaments
    play by default."""
    return {"config": cfg.to_dict(), "rules": dataclasses.asdict(cfg.rules()),
            "tournament_rules": dataclasses.asdict(TOURNAMENT_RULES),
            "same_rules_as_tournaments": cfg.rules() == RulesConfig(num_teams=cfg.teams)}


def save_checkpoint(model, cfg: TrainConfig, run: Path) -> Path:
    """checkpoints/step_N.zip + step_N.json + step_N.rng.pt (module docstring)."""
    import torch
    d = run / "checkpoints"
    d.mkdir(parents=True, exist_ok=True)
    n = int(model.num_timesteps)
    path = d / f"step_{n}.zip"
    model.save(path)
    info = run_info(cfg)
    league = league_of(model.get_env())
    info.update(num_timesteps=n, n_updates=int(model._n_updates), league=league.stats(),
                snapshots=[os.path.relpath(p, run) for p in league.snapshot_paths()])
    (d / f"step_{n}.json").write_text(json.dumps(info, indent=2) + "\n")
    torch.save({"torch": torch.get_rng_state(), "numpy": np.random.get_state(),
                "league_rng": league.rng.bit_generator.state}, d / f"step_{n}.rng.pt")
    return path


def export_for_play(src, dst) -> Path:
    """A model to play, not to train on: the checkpoint's policy with a fresh optimizer (its
    Adam moments are two thirds of a checkpoint's bytes and play never reads them), saved as
    dst. Loads with MaskablePPO.load and make_agent("ppo:dst") like any saved model."""
    from sb3_contrib import MaskablePPO

    model = MaskablePPO.load(str(src), device="cpu")
    pol = model.policy
    pol.optimizer = pol.optimizer_class(pol.parameters(), lr=model.lr_schedule(1),
                                        **pol.optimizer_kwargs)
    model.save(dst)
    return Path(dst)


def checkpoint_files(path) -> tuple:
    """(zip, json, rng) paths of a checkpoint given as its zip (with or without .zip)."""
    p = Path(path)
    if p.suffix != ".zip":
        p = p.with_name(p.name + ".zip")
    stem = p.with_suffix("")
    return p, Path(f"{stem}.json"), Path(f"{stem}.rng.pt")


def resume_config(path, **overrides) -> TrainConfig:
    """The config saved beside a checkpoint with `overrides` applied (not those of
    FIXED_ON_RESUME: changing them is a ValueError), and resume set to the checkpoint."""
    zp, jp, _ = checkpoint_files(path)
    if not zp.is_file() or not jp.is_file():
        raise ValueError(f"resume={str(path)!r}: a checkpoint is a step_N.zip with its "
                         f"step_N.json beside it ({zp} / {jp} not found)")
    info = json.loads(jp.read_text())
    saved = info["config"]
    for p in info.get("snapshots", []):
        if not (zp.parent.parent / p).is_file():
            raise ValueError(f"resume={str(path)!r}: its league snapshot {p} is missing from "
                             f"the run folder {zp.parent.parent}")
    for k in FIXED_ON_RESUME:
        if k in overrides and overrides[k] != saved[k]:
            raise ValueError(f"{k}={overrides[k]!r} differs from the checkpoint's {saved[k]!r}; "
                             f"a resumed run keeps {', '.join(FIXED_ON_RESUME)}")
    unknown = sorted(set(overrides) - {f.name for f in dataclasses.fields(TrainConfig)})
    if unknown:
        raise ValueError(f"{unknown[0]}: not a training argument")
    saved.update(overrides)
    saved["resume"] = str(zp)
    return TrainConfig(**saved)


# ---------------------------------------------------------------------------- a run
def build_model(cfg: TrainConfig, env, tensorboard_log=None):
    from sb3_contrib import MaskablePPO
    return MaskablePPO(
        "MlpPolicy", env, n_steps=cfg.n_steps, batch_size=cfg.batch_size, n_epochs=cfg.n_epochs,
        learning_rate=cfg.learning_rate, gamma=cfg.gamma, gae_lambda=cfg.gae_lambda,
        clip_range=cfg.clip_range, ent_coef=cfg.ent_coef, vf_coef=cfg.vf_coef, seed=cfg.seed,
        device=cfg.device, verbose=0, tensorboard_log=tensorboard_log,
        policy_kwargs={"net_arch": list(cfg.net_arch)})


def tensorboard_available() -> bool:
    try:
        import tensorboard  # noqa: F401
    except ImportError:
        return False
    return True


def rules_line(cfg: TrainConfig) -> str:
    r, t = cfg.rules(), RulesConfig(num_teams=cfg.teams)
    same = "the same as" if r == t else "NOT the same as"
    return (f"rules: training plays {cfg.teams} teams, max_ticks={r.max_ticks}; `nertz "
            f"tournament` plays max_ticks={t.max_ticks} by default ({same} training); "
            f"evaluations play the training rules")


def train(cfg: TrainConfig, log=print, callbacks=()):
    """A whole run (module docstring); returns the trained model (also saved as final.zip).
    callbacks: more SB3 callbacks, run after the run's own."""
    import torch
    from sb3_contrib import MaskablePPO
    from stable_baselines3.common.callbacks import CallbackList

    os.environ.setdefault("OMP_NUM_THREADS", str(cfg.torch_threads))
    torch.set_num_threads(cfg.torch_threads)
    run = Path(cfg.out)
    if not cfg.resume and (run / "config.json").exists():
        raise ValueError(f"out={cfg.out!r} already holds a run (config.json): give another "
                         "folder, or resume one of its checkpoints")
    try:
        run.mkdir(parents=True, exist_ok=True)
    except OSError as err:
        raise ValueError(f"out={cfg.out!r}: cannot create that folder ({err.strerror or err})") \
            from None
    tb = None
    if cfg.tensorboard:
        if tensorboard_available():
            tb = str(run / "tb")
        else:
            log("tensorboard is not installed: no TensorBoard logs (pip install tensorboard)")
    log(rules_line(cfg))
    (run / "config.json").write_text(json.dumps(run_info(cfg), indent=2) + "\n")

    if cfg.resume:
        zp, jp, rp = checkpoint_files(cfg.resume)
        env = make_env(cfg, seed=cfg.seed + 1 + int(json.loads(jp.read_text())["num_timesteps"]))
        model = MaskablePPO.load(str(zp), env=env, device=cfg.device, tensorboard_log=tb)
        saved = json.loads(jp.read_text())
        league = league_of(env)
        snaps = [str(zp.parent.parent / p) for p in saved.get("snapshots", [])]
        missing = [p for p in snaps if not Path(p).is_file()]
        if missing:
            raise ValueError(f"resume={cfg.resume!r}: its league snapshot {missing[0]} is "
                             "missing (snapshots live in the run folder's snapshots/)")
        if snaps:
            league.set_entries(list(cfg.opponents) + [SNAPSHOT + p for p in snaps])
        if saved.get("league") and [s["name"] for s in saved["league"]] == \
                [e.name for e in league.entries]:
            league.set_diffs([np.nan if s["eval_diff"] is None else s["eval_diff"]
                              for s in saved["league"]])
        if rp.is_file():
            st = torch.load(rp, weights_only=False)
            torch.set_rng_state(st["torch"])
            np.random.set_state(st["numpy"])
            if st.get("league_rng"):
                league.rng.bit_generator.state = st["league_rng"]
        log(f"resumed {zp} at {model.num_timesteps:,} steps ({model._n_updates} updates)")
    else:
        env = make_env(cfg)
        model = build_model(cfg, env, tb)
        if cfg.bc_rows:
            warm_start(model, cfg, run, log)
    remaining = cfg.timesteps - model.num_timesteps
    rollout = cfg.n_steps * cfg.num_envs
    if remaining > 0:
        log(f"PPO: {remaining:,} steps to go, {-(-remaining // rollout)} rollouts of {rollout:,} "
            f"(n_steps x num_envs): {-(-remaining // rollout) * rollout:,} steps")
        t0, n0 = time.perf_counter(), model.num_timesteps
        cbs = CallbackList(make_callbacks(cfg, run, log) + list(callbacks))
        model.learn(remaining, callback=cbs,
                    reset_num_timesteps=False, tb_log_name="ppo")
        dt = time.perf_counter() - t0
        log(f"trained {model.num_timesteps - n0:,} steps in {dt:.1f} s "
            f"({(model.num_timesteps - n0) / max(dt, 1e-9):,.0f} env-steps/s, evaluations "
            f"and checkpoints included)")
    save_checkpoint(model, cfg, run)             # the end too can be resumed (a longer run)
    model.save(run / "final.zip")
    log(f"saved {run / 'final.zip'} (play it: nertz tournament --agents "
        f"ppo:{run / 'final.zip'},{cfg.eval_against} --teams {cfg.teams})")
    return model


def warm_start(model, cfg: TrainConfig, run: Path, log=print) -> dict:
    """Collect teacher data on a fresh env of the run's kind (other seed), clone it into
    model.policy, measure the held-out accuracy; writes bc.json."""
    env = make_env(cfg, seed=cfg.seed + 500_009, monitor=False)
    teacher = Teacher(env, cfg.teacher)
    t0 = time.perf_counter()
    data = collect_teacher_data(env, teacher, cfg.bc_rows, cfg.gamma)
    t_collect = time.perf_counter() - t0
    fit, held = split_holdout(data, cfg.bc_holdout)
    log(f"imitation: {len(data['actions']):,} positions of {cfg.teacher} in {t_collect:.1f} s "
        f"({len(data['actions']) / max(t_collect, 1e-9):,.0f} env-steps/s); "
        f"{len(held['actions']):,} held out")
    t0 = time.perf_counter()
    losses = behaviour_clone(model.policy, fit, cfg.bc_epochs, cfg.bc_batch_size,
                             cfg.bc_learning_rate, cfg.bc_value, cfg.vf_coef, cfg.seed, log)
    t_fit = time.perf_counter() - t0
    acc = imitation_accuracy(model.policy, held)
    info = {"teacher": cfg.teacher, "rows": len(data["actions"]),
            "train_rows": len(fit["actions"]), "heldout_rows": len(held["actions"]),
            "heldout_accuracy": acc, "train_accuracy": imitation_accuracy(model.policy, fit),
            "losses": losses, "collect_seconds": t_collect, "fit_seconds": t_fit}
    (run / "bc.json").write_text(json.dumps(info, indent=2) + "\n")
    log(f"imitation: held-out accuracy {acc:.3f} (train {info['train_accuracy']:.3f}), "
        f"fit in {t_fit:.1f} s")
    return info


# ---------------------------------------------------------------------------- CLI
def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def _field_docs() -> dict:
    import ast
    import inspect
    tree = ast.parse(inspect.getsource(TrainConfig))
    body = tree.body[0].body
    return {n.target.id: " ".join(str(x.value.value).split())
            for n, x in itertools.pairwise(body)
            if isinstance(n, ast.AnnAssign) and isinstance(x, ast.Expr)}


def add_train_parser(subparsers):
    """The `nertz train` sub-command on an argparse subparsers object."""
    import argparse
    docs = _field_docs()
    p = subparsers.add_parser(
        "train", help="train a MaskablePPO agent: imitation warm start, league, evaluations",
        description="Train a MaskablePPO agent on the batched vector env: imitation of a "
        "heuristic, then PPO against a league of shipped bots, with duplicate-deal evaluations, "
        "checkpoints and TensorBoard logs (agents/training/run.py). With --resume the checkpoint's "
        "config is used and only the options given change it.",
        epilog="examples:\n  nertz train --out runs/t2 --timesteps 2000000 --teams 2\n"
               "  nertz train --out runs/t2 --resume runs/t2/checkpoints/step_500000.zip "
               "--timesteps 4000000\n  tensorboard --logdir runs/t2/tb",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    for f in dataclasses.fields(TrainConfig):
        d = f.default if f.default is not dataclasses.MISSING else f.default_factory()
        help_ = f"{docs.get(f.name, '')} (default: {d})"
        if f.name in ("tensorboard", "progress", "bc_value"):
            p.add_argument(_flag(f.name), action=argparse.BooleanOptionalAction, default=None,
                           help=help_)
        elif f.name in ("opponents", "net_arch"):
            p.add_argument(_flag(f.name), default=None, help=help_ + (
                "; comma-separated" if f.name == "opponents" else "; e.g. 128,128"))
        else:
            kind = {int: int, float: float}.get(type(d), str)
            if f.name == "max_ticks":
                kind = int
            p.add_argument(_flag(f.name), type=kind, default=None, help=help_)
    p.set_defaults(func=cmd_train)
    return p


def config_from_args(args) -> TrainConfig:
    """A TrainConfig from parsed `nertz train` arguments (None: not given)."""
    given = {f.name: getattr(args, f.name) for f in dataclasses.fields(TrainConfig)
             if getattr(args, f.name, None) is not None}
    if "opponents" in given:
        from ..registry import split_specs
        given["opponents"] = split_specs(given["opponents"])
    if "net_arch" in given:
        try:
            given["net_arch"] = [int(x) for x in given["net_arch"].split(",") if x.strip()]
        except ValueError:
            raise ValueError(f"net_arch={given['net_arch']!r} must be comma-separated layer "
                             "widths, e.g. 128,128") from None
    if given.get("resume"):
        resume = given.pop("resume")
        return resume_config(resume, **given)
    return TrainConfig(**given)


def cmd_train(args) -> int:
    cfg = config_from_args(args)
    print("config: " + json.dumps(cfg.to_dict()), flush=True)
    train(cfg, log=lambda s: print(s, flush=True))
    return 0


__all__ = [
    "BEST_HEURISTIC",
    "LeagueEntry",
    "LeagueVecEnv",  # noqa: F822 (made on first use: module __getattr__)
    "Teacher",
    "TrainConfig",
    "add_train_parser",
    "behaviour_clone",
    "cmd_train",
    "collect_teacher_data",
    "evaluate_policy_zip",
    "evaluate_run",
    "imitation_accuracy",
    "league_weights",
    "make_env",
    "parse_entry",
    "resume_config",
    "save_checkpoint",
    "train",
]
