"""The arguments of a training run: `TrainConfig` (one field per argument, each with its
docstring, which `nertz train --help` prints: `field_docs`), the checks that reject a bad
value with a one-line ValueError naming the field (`check_config`), and the constants the
other training modules share.

Rewards: "relative" (the learner team's hand points minus the mean of the other teams',
what tournaments rank by in a multi-team table) or "score" (its own points); both are the
vector env's (core/batch.py vec_step_range). Win rewards are not offered by the env.

Rules: training plays RulesConfig(num_teams=teams, max_ticks=max_ticks), with the rules
default max_ticks (the one `nertz tournament` plays) unless `max_ticks` is given; the run
prints both and saves them in config.json ("rules", "tournament_rules"). The evaluation
plays the training rules, so that a run with a short max_ticks is evaluated as trained; the
final judgement belongs to `nertz tournament` at its default rules.

Imports only nertz_env and league.py (an opponent entry is checked by parsing it); never
torch or stable-baselines3, so that `nertz --help` does not wait for them.
"""
from __future__ import annotations

import dataclasses
import itertools
import math
import numbers
import os
from dataclasses import dataclass, field

from nertz_env.bot_specs import core_bot
from nertz_env.config import RulesConfig
from nertz_env.core.policies import POLICY_SCORED

from .league import parse_entry

BEST_HEURISTIC = "heuristic:style=river-builder"   # beats every other shipped style head to head
TOURNAMENT_RULES = RulesConfig()                  # what `nertz tournament` plays by default
REWARDS = ("relative", "score")
LEARNERS = ("sb3", "lean")
PARTNERS = ("league", "self")
DEVICES = ("cpu", "cuda", "auto")
MAX_SNAPSHOTS = 64                                # league snapshots kept (max_snapshots)
# fields a resumed run may not change: they shape the network, the rollout or the game
FIXED_ON_RESUME = ("teams", "max_ticks", "num_envs", "n_steps", "net_arch", "reward")


@dataclass
class TrainConfig:
    """Every argument of a training run (saved as config.json and beside every checkpoint)."""
    out: str = "runs/train"
    """run folder, new or empty (a folder holding anything is refused; a resume may name its
    checkpoint's own run folder, where it continues without --out): config.json, bc.json,
    eval.jsonl/csv, checkpoints/, tb/, final.zip"""
    seed: int = 0
    """seed of tables, league draws, network initialisation and minibatches"""
    timesteps: int = 1_000_000
    """PPO learner env-steps (one table tick each), rounded up to whole rollouts"""
    num_envs: int = 64
    """tables stepped together in one numba call"""
    teams: int = 2
    """teams at the table; the learner holds seat 0"""
    max_ticks: int | None = None
    """ticks after which a hand is cut (R26); unset: the rules default, which tournaments play"""
    reward: str = "relative"
    """'relative' (own hand points minus the others' mean) or 'score' (own points)"""
    learner: str = "lean"
    """'lean': the lean PPO in torch (lean_ppo.py; with the warm start, formats, init,
    snapshots; without evaluations; its hidden layers must fit the safe model format); 'sb3':
    SB3's MaskablePPO with everything below (warm start, evaluations, checkpoints, snapshots,
    resume), which made the per-table models"""
    formats: list = field(default_factory=list)
    """table formats to train over, the tables dealt out by weight (formats.py): a list of
    dicts of RulesConfig fields (and 'seat', the learner's; 'weight'), or a preset's name
    (rulebook, rulebook-weighted, rulebook-weighted-nostack, rulebook-nostack); empty: the one
    table of teams and max_ticks. The lean PPO only"""
    init: str | None = None
    """a model to start the policy from: an SB3 zip (actor and critic, read without
    unpickling) or a safe-format .npz (the actor); the lean PPO only"""
    shift_cost: float = 0.0
    """points taken from the learner's reward per River shift it makes (the lean PPO only): a
    shift counts as a card move for the idle rule (R27), so a learner that shifts back and
    forth keeps a stuck table from its burns until max_ticks; a small cost breaks the tie
    between such a shift and a flip or a wait"""
    critic_warmup: int = 0
    """env steps at the start in which only the critic learns, the actor kept as init gave
    it (a start from an actor whose critic is fresh); the lean PPO only"""
    constraint: str | None = None
    """a constraint the learner plays under (agents/constraints.py: useful-shifts,
    never-withhold, keep-stream): its masks pass through it in training, and the saved model
    names it, so `ppo:MODEL` plays under it too; the lean PPO only"""
    partner: str = "league"
    """who plays the learner's partner at a two-player team: 'league' (the league entry, as
    every other seat) or 'self' (the learner's current network, its moves sampled: the
    table an evaluation with the model at both seats of its team plays); the lean PPO only"""
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

    def __post_init__(self):
        for name in BY_LEARNER:
            if getattr(self, name) is None:
                setattr(self, name, learner_default(name, self.learner))
        check_config(self)

    def rules(self) -> RulesConfig:
        kw = {"num_teams": self.teams}
        if self.max_ticks is not None:
            kw["max_ticks"] = self.max_ticks
        return RulesConfig(**kw)

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


BY_LEARNER = ("n_epochs", "torch_threads")   # defaults that depend on the learner


def learner_default(name: str, learner) -> int:
    """The default of a field whose default depends on the learner (n_epochs, torch_threads:
    TrainConfig's docs say why)."""
    if name == "n_epochs":
        return 2 if learner == "lean" else 4
    if learner != "lean":
        return 1
    try:
        cores = len(os.sched_getaffinity(0))
    except AttributeError:                  # not on Linux
        cores = os.cpu_count() or 1
    return min(2, cores)


def _league_entries(c: TrainConfig) -> bool:
    """Whether the league can hold two entries (then evaluations may play each)."""
    return len(c.opponents) > 1 or c.snapshot_every > 0


WARM_START = ("teacher", "bc_epochs", "bc_batch_size", "bc_learning_rate", "bc_holdout",
              "bc_value")
LEAGUE_PLAY = "a league of two or more entries (--opponents A,B or --snapshot-every above 0)"
# options that mean something only with another: {field: (whether it does in a config, what
# it needs, in the words of `nertz train`'s options)}
NEEDS = {
    **dict.fromkeys(WARM_START, (
        lambda c: c.bc_rows > 0 and not c.resume and not c.init,
        "the warm start: --bc-rows above 0, on a fresh run without --init (a resumed run or "
        "one from a model does no warm start)")),
    "bc_rows": (lambda c: not c.resume and not c.init,
                "a fresh run without --init (a resumed run or one from a model does no warm "
                "start)"),
    "max_snapshots": (lambda c: c.snapshot_every > 0,
                      "league snapshots: --snapshot-every above 0"),
    **dict.fromkeys(("eval_deals", "eval_against", "eval_seed"),
                    (lambda c: c.eval_every > 0, "evaluations: --eval-every above 0")),
    "eval_league_deals": (lambda c: c.eval_every > 0 and _league_entries(c),
                          f"evaluations (--eval-every above 0) and {LEAGUE_PLAY}"),
    **dict.fromkeys(("priority_temperature", "priority_uniform"), (
        lambda c: bool(c.eval_every and c.eval_league_deals) and _league_entries(c),
        (f"the evaluations' league matches: --eval-every and --eval-league-deals above 0 "
         f"and {LEAGUE_PLAY}"))),
}
SWITCHES = ("bc_rows", "eval_league_deals")      # given as 0 they switch a part off: never refused


def check_given(c: TrainConfig, given, spell=str) -> None:
    """ValueError for the first of `given` (options set explicitly, field names) that means
    nothing in `c` (NEEDS), named as `spell` writes it (`nertz train`: its flag)."""
    for name in given:
        if name not in NEEDS or (name in SWITCHES and getattr(c, name) == 0):
            continue
        means, needs = NEEDS[name]
        if not means(c):
            raise ValueError(f"{spell(name)} means something only with {needs}; leave it out "
                             "or give what it needs")


def field_docs(cls=None) -> dict:
    """{field name: its docstring on one line}, read from the source of a dataclass whose
    fields each have a docstring under them (TrainConfig when None: the help of `nertz
    train`'s options; a recipe's Args too)."""
    import ast
    import inspect
    tree = ast.parse(inspect.getsource(TrainConfig if cls is None else cls))
    body = tree.body[0].body
    return {n.target.id: " ".join(str(x.value.value).split())
            for n, x in itertools.pairwise(body)
            if isinstance(n, ast.AnnAssign) and isinstance(x, ast.Expr)}


def _is_int(x) -> bool:
    return isinstance(x, numbers.Integral) and not isinstance(x, bool)


def _is_real(x) -> bool:
    return isinstance(x, numbers.Real) and not isinstance(x, bool) and math.isfinite(x)


def _check_formats(c: TrainConfig) -> set:
    """formats checked (each a table, at least one table each); the seat counts they have."""
    from .formats import format_rules, resolve
    if not isinstance(c.formats, (list, tuple, str)):
        raise ValueError(f"formats={c.formats!r} must be a list of formats or a preset's name")
    fmts = resolve(c.formats)
    if not fmts:
        raise ValueError("formats: an empty preset")
    if c.teams != 2:
        raise ValueError(f"teams={c.teams} and formats: the formats set the tables; leave "
                         "teams at its default (2) or give no formats")
    if c.num_envs < len(fmts):
        raise ValueError(f"num_envs={c.num_envs} must be >= the number of formats "
                         f"({len(fmts)}): every format needs a table")
    if not isinstance(c.formats, str):
        c.formats = [dict(f) for f in c.formats]
    return {format_rules(f, c.max_ticks, where=f"formats[{i}]")[0].num_seats
            for i, f in enumerate(fmts)}


def check_lean_net(net_arch) -> None:
    """ValueError unless the safe model format (agents/learned/weights.py), which the lean
    PPO saves its checkpoints and final model in, holds a network of these hidden layers:
    refused before training, not at the first save."""
    from ..learned import weights
    check = getattr(weights, "check_net_shape", None)
    if check is not None:
        try:
            check(list(net_arch))
        except ValueError as err:
            raise ValueError(f"net_arch={list(net_arch)!r}: {err} (the lean PPO saves its "
                             "model in it)") from None
        return
    layers = getattr(weights, "MAX_LAYERS", 8)
    width = getattr(weights, "MAX_WIDTH", 4096)
    if not 1 <= len(net_arch) <= layers or max(net_arch) > width:
        raise ValueError(f"net_arch={list(net_arch)!r}: the safe model format holds 1 to "
                         f"{layers} hidden layers of widths 1..{width} (the lean PPO saves its "
                         "model in it)")


def check_pairs_seated(entries, rules: RulesConfig, learner_seat: int = 0) -> None:
    """ValueError for a league entry (parse_entry's, one agent per other seat in order) that
    seats a pair (pair:NERTZ&STREAM) at a solo team of `rules`, the learner at learner_seat:
    a solo player holds both roles (R4). Refused with the config, not at the first rollout."""
    from ..base import Pair
    others = [s for s in range(rules.num_seats) if s != learner_seat]
    team_of, sizes = rules.seat_team, rules.sizes
    for i, e in enumerate(entries):
        for seat, spec, agent in zip(others, e.specs, e.agents or [None] * len(others)):
            if isinstance(agent, Pair) and sizes[team_of[seat]] == 1:
                raise ValueError(
                    f"opponents[{i}]={e.name!r}: {spec!r} is a pair and would sit at a solo "
                    f"team (team {team_of[seat]}, team_sizes={list(sizes)}): pairs play "
                    "two-player teams only (R4)")


def check_config(c: TrainConfig) -> None:
    """ValueError naming the first bad field and what it allows; nothing else is done."""
    _check_numbers(c)
    _check_choices(c)
    _check_tables(c)


def _check_numbers(c: TrainConfig) -> None:
    """check_config's integer and real fields: types and ranges."""
    ints = {"seed": 0, "timesteps": 1, "num_envs": 1, "teams": 2, "bc_rows": 0, "bc_epochs": 1,
            "bc_batch_size": 1, "n_steps": 2, "batch_size": 2, "n_epochs": 1,
            "checkpoint_every": 0, "eval_every": 0, "eval_deals": 2, "eval_league_deals": 0,
            "eval_seed": 0, "torch_threads": 1, "snapshot_every": 0, "max_snapshots": 1,
                "critic_warmup": 0}
    for name, lo in ints.items():
        v = getattr(c, name)
        if not _is_int(v) or v < lo:
            raise ValueError(f"{name}={v!r} must be an int >= {lo}")
    from nertz_env.engine import MAX_TABLES

    from ..arena.limits import LIMITS
    budget = LIMITS["budget"]           # the one limits table: exploit's responders' budget
    for name, hi, why in (
            ("timesteps", budget.hi, "env steps; a billion is days of training on a 2-core "
                                     "machine"),
            ("num_envs", MAX_TABLES, "tables stepped together"),
            ("max_snapshots", MAX_SNAPSHOTS, "each a model the league holds in memory")):
        v = getattr(c, name)
        if v > hi:
            raise ValueError(f"{name}={v!r} must be an int from 1 to {hi} ({why})")
    if c.eval_league_deals == 1:
        raise ValueError("eval_league_deals=1 must be 0 (off) or an int >= 2 (intervals need "
                         "2 deals)")
    if c.max_ticks is not None and (not _is_int(c.max_ticks) or c.max_ticks < 1):
        raise ValueError(f"max_ticks={c.max_ticks!r} must be None (the rules default) or an "
                         "int >= 1")
    reals = {"priority_temperature": (0.0, None), "priority_uniform": (0.0, 1.0),
             "bc_learning_rate": (0.0, None), "bc_holdout": (0.0, 1.0),
             "learning_rate": (0.0, None), "gamma": (0.0, 1.0), "gae_lambda": (0.0, 1.0),
             "clip_range": (0.0, None), "ent_coef": (0.0, None), "vf_coef": (0.0, None),
             "shift_cost": (0.0, None)}
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


def _check_choices(c: TrainConfig) -> None:
    """check_config's named choices, the learner's own fields, paths and the network."""
    if c.reward not in REWARDS:
        raise ValueError(f"reward={c.reward!r} must be one of {', '.join(REWARDS)}")
    if c.learner not in LEARNERS:
        raise ValueError(f"learner={c.learner!r} must be one of {', '.join(LEARNERS)}")
    if c.constraint is not None:
        from ..constraints import check_constraint
        check_constraint(c.constraint)
        if c.constraint == "none":
            c.constraint = None
    if c.partner not in PARTNERS:
        raise ValueError(f"partner={c.partner!r} must be one of {', '.join(PARTNERS)}")
    lean_only = [n for n in ("formats", "init", "shift_cost", "constraint", "critic_warmup")
                 if getattr(c, n)]
    if c.partner != "league":
        lean_only.append("partner")
    if c.learner == "sb3" and lean_only:
        raise ValueError(f"{lean_only[0]}: the lean PPO only (learner='lean', nertz train "
                         "--learner lean)")
    if c.learner == "lean":
        if c.resume:
            raise ValueError(f"resume={c.resume!r}: the lean PPO does not resume (leave resume "
                             "out and start from a model with init=PATH, or use "
                             "learner='sb3')")
    if c.device not in DEVICES:
        raise ValueError(f"device={c.device!r} must be one of {', '.join(DEVICES)}")
    if not isinstance(c.out, str) or not c.out.strip():
        raise ValueError(f"out={c.out!r} must be a non-empty path")
    if c.init is not None and (not isinstance(c.init, str) or not c.init.strip()):
        raise ValueError(f"init={c.init!r} must be None or the path of a saved model")
    if c.resume is not None and (not isinstance(c.resume, str) or not c.resume.strip()):
        raise ValueError(f"resume={c.resume!r} must be None or the path of a checkpoint zip")
    arch = c.net_arch
    if (not isinstance(arch, (list, tuple)) or not arch
            or not all(_is_int(w) and 1 <= w <= 65536 for w in arch)):
        raise ValueError(f"net_arch={arch!r} must be a non-empty list of layer widths "
                         "(ints 1..65536)")
    c.net_arch = [int(w) for w in arch]
    if c.learner == "lean":
        check_lean_net(c.net_arch)


def _check_tables(c: TrainConfig) -> None:
    """check_config's checks across fields: the rollout, the tables and formats, the league's
    entries at their seats, the teacher and the evaluation's opponent."""
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
        raise ValueError(f"opponents={c.opponents!r} must be a non-empty list of agent specs")
    c.opponents = list(c.opponents)
    seats = {rules.num_seats}
    if c.formats:
        seats = _check_formats(c)
    tables = [(rules, 0)]
    if c.formats:
        from .formats import format_rules, resolve
        tables = [format_rules(f, c.max_ticks, where=f"formats[{i}]")
                  for i, f in enumerate(resolve(c.formats))]
    parsed = {n: [parse_entry(entry, n - 1, where=f"opponents[{i}]")
                  for i, entry in enumerate(c.opponents)] for n in sorted(seats)}
    for r, seat in tables:
        check_pairs_seated(parsed[r.num_seats], r, seat)
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
