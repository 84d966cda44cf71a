"""The parts of a training run's arguments (`TrainConfig`, config.py, is made of them): one
dataclass per part, one field per argument, each with its docstring under it, which `nertz
train --help` prints (`field_docs`).

    RunPart        out, seed, timesteps, learner, checkpoints, logs, threads, device, resume
    TablesPart     num_envs, teams, max_ticks, reward, formats, shift_cost, constraint, partner
    LeaguePart     opponents, snapshot_every, max_snapshots, priority_*
    WarmStartPart  teacher, bc_*
    PPOPart        init, observation, critic_warmup, n_steps, batch_size, ..., net_arch
    EvalPart       eval_*

Every field's name is unique across the parts: the flat spelling of a config (config.json,
a checkpoint's stored config, a recipe's keys, `nertz train`'s options) names each field
once, in the order `FLAT` keeps (the order config.json has always had), then the fields
added since (`OPTIONAL`: observation), which config.json holds only where they say something
a run before them could not (`to_flat`), so every other run writes the bytes it always did.

Imports only nertz_env; never torch."""
from __future__ import annotations

import dataclasses
import itertools
import os
from dataclasses import dataclass, field

from nertz_env.config import RulesConfig

BEST_HEURISTIC = "heuristic:style=river-builder"   # beats every other shipped style head to head
TOURNAMENT_RULES = RulesConfig()                  # what `nertz tournament` plays by default
REWARDS = ("relative", "score")
LEARNERS = ("sb3", "lean")
PARTNERS = ("league", "self")
OBSERVATIONS = ("v0", "v1")                       # TrainConfig.observation's values
DEVICES = ("cpu", "cuda", "auto")
MAX_SNAPSHOTS = 64                                # league snapshots kept (max_snapshots)
# fields a resumed run may not change: they shape the network, the rollout or the game
FIXED_ON_RESUME = ("teams", "max_ticks", "num_envs", "n_steps", "net_arch", "reward")


@dataclass
class RunPart:
    """Where a run goes and how it runs: its folder, seed, budget, learner, checkpoints,
    logs, threads, device and the checkpoint it resumes."""
    out: str = "runs/train"
    """run folder, new or empty (a folder holding anything is refused; a resume may name its
    checkpoint's own run folder, where it continues without --out). The lean learner writes
    config.json, final.npz + final.json, critics/ (the value net) and, where asked, bc.json,
    checkpoints/, snapshots/; sb3 writes config.json, final.zip and, where asked, bc.json,
    eval.jsonl/csv, checkpoints/, snapshots/, tb/"""
    seed: int = 0
    """seed of tables, league draws, network initialisation and minibatches"""
    timesteps: int = 1_000_000
    """PPO learner env-steps (one table tick each), rounded up to whole rollouts"""
    learner: str = "lean"
    """'lean': the lean PPO in torch (lean_ppo.py; with the warm start, formats, init,
    snapshots; without evaluations; its hidden layers must fit the safe model format); 'sb3':
    SB3's MaskablePPO with everything below (warm start, evaluations, checkpoints, snapshots,
    resume), which made the per-table models"""
    checkpoint_every: int = 250_000
    """steps between checkpoints (taken between updates; 0: only the final model)"""
    tensorboard: bool = True
    """TensorBoard logs in OUT/tb (needs the tensorboard package)"""
    progress: bool = True
    """a progress bar (tqdm) while training"""
    torch_threads: int | None = None
    """torch CPU threads (the lean learner's default is 1 where this process may use one core
    only). Threads change speed only (the same weights bit for bit where
    measured); 2 make the lean learner 1.3x faster on an idle 2-core machine but several
    times slower when another run shares the cores: give 1 to runs side by side
    (benchmarks/HISTORY.md, 2026-12-04)"""
    device: str = "cpu"
    """torch device: cpu, cuda or auto"""
    resume: str | None = None
    """a checkpoint zip to continue from (RUN/checkpoints/step_N.zip); its saved config is
    used, and it continues in RUN unless --out names a new or empty folder"""



@dataclass
class TablesPart:
    """The tables the learner plays: how many, their rules or formats, its reward, the
    constraint it plays under and its partner."""
    num_envs: int = 64
    """tables stepped together in one numba call"""
    teams: int = 2
    """teams at the table; the learner holds seat 0"""
    max_ticks: int | None = None
    """ticks after which a hand is cut (R26); unset: the rules default, which tournaments play"""
    reward: str = "relative"
    """'relative' (own hand points minus the others' mean) or 'score' (own points)"""
    formats: list = field(default_factory=list)
    """table formats to train over, the tables dealt out by weight (formats.py): a list of
    dicts of RulesConfig fields (and 'seat', the learner's; 'weight'), or a preset's name
    (rulebook, rulebook-weighted, rulebook-weighted-nostack, rulebook-nostack); empty: the one
    table of teams and max_ticks. The lean PPO only"""
    shift_cost: float = 0.0
    """points taken from the learner's reward per River shift it makes (the lean PPO only): a
    shift counts as a card move for the idle rule (R27), so a learner that shifts back and
    forth keeps a stuck table from its burns until max_ticks; a small cost breaks the tie
    between such a shift and a flip or a wait"""
    constraint: str | None = None
    """a constraint the learner plays under (agents/constraints.py: useful-shifts,
    never-withhold, keep-stream): its masks pass through it in training, and the saved model
    names it, so `ppo:MODEL` plays under it too; the lean PPO only"""
    partner: str = "league"
    """who plays the learner's partner at a two-player team: 'league' (the league entry, as
    every other seat) or 'self' (the learner's current network, its moves sampled: the
    table an evaluation with the model at both seats of its team plays); the lean PPO only"""

    def rules(self) -> RulesConfig:
        """The rules of the tables (without formats): teams, and max_ticks when given."""
        kw = {"num_teams": self.teams}
        if self.max_ticks is not None:
            kw["max_ticks"] = self.max_ticks
        return RulesConfig(**kw)


@dataclass
class LeaguePart:
    """The league of opponents at every other seat: its entries, snapshots of the learner
    and the weights of its draws."""
    opponents: list = field(default_factory=lambda: [BEST_HEURISTIC])
    """league entries: agent specs (every other seat: random, greedy, heuristic:..., learned,
    ppo:PATH, ...), or per-seat specs joined by '+'"""
    snapshot_every: int = 0
    """steps between frozen snapshots of the learner joining the league (0: none)"""
    max_snapshots: int = 4
    """snapshots kept in the league (the oldest leaves when a new one joins)"""
    priority_temperature: float = 2.0
    """league weights: softmax(-paired difference / this), points per hand"""
    priority_uniform: float = 0.2
    """share of the league weights spread uniformly (every entry keeps being played)"""


@dataclass
class WarmStartPart:
    """The imitation warm start: the teacher and the behaviour cloning before the first PPO
    rollout."""
    teacher: str = BEST_HEURISTIC
    """the bot imitated by the warm start (greedy or a heuristic spec)"""
    bc_rows: int = 200_000
    """teacher positions collected for the warm start, then cloned before the first PPO
    rollout (0: no warm start); a run from init or resume does none"""
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


@dataclass
class PPOPart:
    """PPO: the network (its start, its layers) and the update's hyperparameters."""
    init: str | None = None
    """a model to start the policy from: an SB3 zip (actor and critic, read without
    unpickling) or a safe-format .npz (the actor); the lean PPO only"""
    observation: str | None = None
    """the observation the network reads: 'v0' (791 floats) or 'v1' (v0's, then the 228-float
    block of what the seat remembers, nertz_v1: docs/api.md); unset: init's (a v1 model: v1),
    else v0. 'v1' from a v0 init widens it (zero memory weights: the same moves); 'v0' from a
    v1 init is refused. The saved model says which it reads; the lean PPO only"""
    critic_warmup: int = 0
    """env steps at the start in which only the critic learns, the actor kept as init gave
    it (a start from an actor whose critic is fresh); the lean PPO only"""
    n_steps: int = 128
    """rollout length per table between PPO updates"""
    batch_size: int = 1024
    """PPO minibatch size"""
    n_epochs: int | None = None
    """PPO epochs per update; with the lean learner 2 learn as much per step as 4 did on the
    generalist recipe (three seeds at 12M steps, benchmarks/HISTORY.md, 2026-12-04)"""
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


@dataclass
class EvalPart:
    """The duplicate-deal evaluations of an SB3 run (evaluation.py)."""
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


# (attribute of TrainConfig, the part's class), in the order TrainConfig holds them
PARTS = (("run", RunPart), ("tables", TablesPart), ("league", LeaguePart),
         ("warm_start", WarmStartPart), ("ppo", PPOPart), ("evaluation", EvalPart))
# every field, flat, in config.json's order (and `nertz train --help`'s, a recipe's)
FLAT = ("out", "seed", "timesteps", "num_envs", "teams", "max_ticks", "reward", "learner",
        "formats", "init", "shift_cost", "critic_warmup", "constraint", "partner", "opponents",
        "snapshot_every", "max_snapshots", "priority_temperature", "priority_uniform",
        "teacher", "bc_rows", "bc_epochs", "bc_batch_size", "bc_learning_rate", "bc_holdout",
        "bc_value", "n_steps", "batch_size", "n_epochs", "learning_rate", "gamma",
        "gae_lambda", "clip_range", "ent_coef", "vf_coef", "net_arch", "checkpoint_every",
        "eval_every", "eval_deals", "eval_against", "eval_league_deals", "eval_seed",
        "tensorboard", "progress", "torch_threads", "device", "resume")
# fields added after config.json's order was fixed, with the values that mean what a run
# before them did: written (after FLAT's) only where they hold another, so such a run writes
# the same bytes as before them
OPTIONAL = {"observation": (None, "v0")}
FIELDS = FLAT + tuple(OPTIONAL)                         # every field: `nertz train`'s, a recipe's
PART_OF = {f.name: name for name, cls in PARTS for f in dataclasses.fields(cls)}  # field: part
assert sorted(PART_OF) == sorted(FIELDS) and len(FIELDS) == len(set(FIELDS)), \
    "a field in two parts"


def flat_defaults() -> dict:
    """{field: its default} of every field in FIELDS order (fresh lists each call)."""
    out = {}
    for name, cls in PARTS:
        for f in dataclasses.fields(cls):
            out[f.name] = f.default if f.default is not dataclasses.MISSING \
                else f.default_factory()
    return {n: out[n] for n in FIELDS}


def field_docs(cls=None) -> dict:
    """{field name: its docstring on one line}, read from the source of a dataclass whose
    fields each have a docstring under them (None: every part's, in FIELDS order: the help of
    `nertz train`'s options; a recipe's Args too)."""
    import ast
    import inspect
    if cls is None:
        docs = {}
        for _, part in PARTS:
            docs.update(field_docs(part))
        return {n: docs[n] for n in FIELDS if n in docs}
    body = ast.parse(inspect.getsource(cls)).body[0].body
    return {n.target.id: " ".join(str(x.value.value).split())
            for n, x in itertools.pairwise(body)
            if isinstance(n, ast.AnnAssign) and isinstance(x, ast.Expr)}


BY_LEARNER = ("n_epochs", "torch_threads")   # defaults that depend on the learner


def learner_default(name: str, learner) -> int:
    """The default of a field whose default depends on the learner (n_epochs, torch_threads:
    their docs say why)."""
    if name == "n_epochs":
        return 2 if learner == "lean" else 4
    if learner != "lean":
        return 1
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:                  # not on Linux
        cores = os.cpu_count() or 1
    return min(2, cores)
