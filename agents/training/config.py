"""The arguments of a training run: `TrainConfig`, made of the parts in parts.py (run,
tables, league, warm start, PPO, evaluation), and the three steps that make a config whole:
`normalise` (a new config, its learner's defaults filled and its values in their plain
types), `check` (pure: a ValueError of one line naming the first bad field and what it
allows; changes nothing) and `load` (reads what the config names: the league's model
files and agents, the evaluation's opponent). `check_config` is the three in turn.

    cfg = TrainConfig(out="runs/t1", learner="sb3", timesteps=2_000_000)   # flat, checked
    cfg.ppo.n_epochs, cfg.tables.teams                                      # by part
    cfg.to_flat()             # config.json's "config", one key per field in FLAT order
    TrainConfig.from_flat(**json.load(f)["config"])                        # and back

The flat spelling (config.json, a checkpoint's stored config, a recipe, `nertz train`'s
options) names each field once; `TrainConfig(**flat)`, `from_flat` and the parts
(`TrainConfig(run=RunPart(...), ppo=PPOPart(...))`) make the same config, normalised,
checked and loaded, so a TrainConfig made by its constructor is a whole run's arguments.
`cfg.n_epochs` and the other flat names read and write the field in its part (the code
and the files written against the flat config).

Rewards: "relative" (the learner team's hand points minus the mean of the other teams',
what tournaments rank by in a multi-team table) or "score" (its own points); both are the
vector env's (core/batch.py vec_step_range). Win rewards are not offered by the env.

Rules: training plays RulesConfig(num_teams=teams, max_ticks=max_ticks), with the rules
default max_ticks (the one `nertz tournament` plays) unless `max_ticks` is given; the run
prints both and saves them in config.json ("rules", "tournament_rules"). The evaluation
plays the training rules, so that a run with a short max_ticks is evaluated as trained; the
final judgement belongs to `nertz tournament` at its default rules.

Imports nertz_env, parts.py, formats.py and entries.py (an opponent entry is loaded by
parsing it); never torch or stable-baselines3, so that `nertz --help` does not wait for
them.
"""
from __future__ import annotations

import copy
import math
import numbers
from collections.abc import Mapping
from dataclasses import dataclass

from nertz_env.bot_specs import core_bot
from nertz_env.config import RulesConfig
from nertz_env.core.policies import POLICY_SCORED
from nertz_env.optional import require

from .entries import parse_entry
from .parts import (  # re-exported: config.py is where they were
    BEST_HEURISTIC,
    BY_LEARNER,
    DEVICES,
    FIELDS,
    FIXED_ON_RESUME,
    FLAT,
    LEARNERS,
    MAX_SNAPSHOTS,
    OBSERVATIONS,
    OPTIONAL,
    PART_OF,
    PARTNERS,
    PARTS,
    REWARDS,
    TOURNAMENT_RULES,
    EvalPart,
    LeaguePart,
    PPOPart,
    RunPart,
    TablesPart,
    WarmStartPart,
    field_docs,
    flat_defaults,
    learner_default,
)


@dataclass(init=False)
class TrainConfig:
    """Every argument of a training run, in parts (saved flat as config.json and beside
    every checkpoint: `to_flat`)."""
    run: RunPart
    tables: TablesPart
    league: LeaguePart
    warm_start: WarmStartPart
    ppo: PPOPart
    evaluation: EvalPart

    def __init__(self, run: RunPart | None = None, tables: TablesPart | None = None,
                 league: LeaguePart | None = None, warm_start: WarmStartPart | None = None,
                 ppo: PPOPart | None = None, evaluation: EvalPart | None = None, **flat):
        """Parts (copied; None: the part's defaults) with flat fields over them; the config
        normalised, checked and its model files loaded (check_config)."""
        raw = TrainConfig.unchecked(run, tables, league, warm_start, ppo, evaluation, **flat)
        self.__dict__.update(check_config(raw).__dict__)

    @classmethod
    def unchecked(cls, run=None, tables=None, league=None, warm_start=None, ppo=None,
                  evaluation=None, **flat) -> TrainConfig:
        """A config exactly as given, neither normalised nor checked (what normalise, check
        and load take apart); an unknown flat name is a TypeError, as for any dataclass."""
        given = {"run": run, "tables": tables, "league": league, "warm_start": warm_start,
                 "ppo": ppo, "evaluation": evaluation}
        obj = cls.__new__(cls)
        for name, part in PARTS:
            p = given[name]
            if p is not None and not isinstance(p, part):
                raise TypeError(f"TrainConfig: {name} must be a {part.__name__}, not "
                                f"{type(p).__name__}")
            obj.__dict__[name] = part() if p is None else copy.deepcopy(p)
        for key, value in flat.items():
            if key not in PART_OF:
                raise TypeError(f"TrainConfig.__init__() got an unexpected keyword argument "
                                f"{key!r}")
            setattr(obj.__dict__[PART_OF[key]], key, value)
        return obj

    @classmethod
    def from_flat(cls, **fields) -> TrainConfig:
        """The config of flat fields (config.json's "config", a recipe's keys): the rest at
        their defaults; normalised, checked and loaded."""
        return cls(**fields)

    def to_flat(self) -> dict:
        """Every field, flat, in FLAT order, then each OPTIONAL one that holds a value a run
        before it could not (observation='v1'): config.json's "config" (the same bytes as
        ever for every other run)."""
        out = {n: copy.deepcopy(getattr(self.__dict__[PART_OF[n]], n)) for n in FLAT}
        for n, silent in OPTIONAL.items():
            v = getattr(self.__dict__[PART_OF[n]], n)
            if not any(v == s and type(v) is type(s) for s in silent):
                out[n] = copy.deepcopy(v)
        return out

    to_dict = to_flat

    def rules(self) -> RulesConfig:
        return self.tables.rules()

    def __copy__(self) -> TrainConfig:        # parts are copied: a copy's fields are its own
        return TrainConfig.unchecked(**{name: getattr(self, name) for name, _ in PARTS})


def _flat_view(name: str, part: str) -> property:
    def get(self):
        return getattr(self.__dict__[part], name)

    def put(self, value):
        setattr(self.__dict__[part], name, value)
    return property(get, put, doc=f"{part}.{name} (its flat name)")


for _name, _part in PART_OF.items():
    setattr(TrainConfig, _name, _flat_view(_name, _part))


TRAIN_MODULES = ("torch", "stable_baselines3", "sb3_contrib")    # the [train] extra's


def require_train(purpose: str = "nertz train") -> None:
    """Imports the `[train]` extra's modules (a run needs them all: the league env is SB3's,
    both learners torch's), or raises MissingDependency, one line naming the extra: what
    `nertz train` checks before a run starts, after its config is checked."""
    for module in TRAIN_MODULES:
        require(module, "train", purpose)


def normalise(c: TrainConfig) -> TrainConfig:
    """A new config: the fields whose default depends on the learner filled (BY_LEARNER),
    lists as lists (opponents, net_arch of ints, formats of dicts), constraint 'none' as
    None. Never raises; a value of a wrong kind stays for `check` to name."""
    n = copy.copy(c)
    for name in BY_LEARNER:
        if getattr(n, name) is None:
            setattr(n, name, learner_default(name, n.run.learner))
    t, lg, p = n.tables, n.league, n.ppo
    if t.constraint == "none":
        t.constraint = None
    if isinstance(t.formats, (list, tuple)) and all(isinstance(f, Mapping) for f in t.formats):
        t.formats = [dict(f) for f in t.formats]
    if isinstance(lg.opponents, tuple):
        lg.opponents = list(lg.opponents)
    if isinstance(p.net_arch, (list, tuple)) and all(_is_int(w) for w in p.net_arch):
        p.net_arch = [int(w) for w in p.net_arch]
    return n


def check(c: TrainConfig) -> None:
    """ValueError naming the first bad field of a normalised config and what it allows;
    reads no file and changes nothing."""
    _check_numbers(c)
    _check_choices(c)
    _check_tables(c)


def load(c: TrainConfig) -> dict:
    """What a checked config names, read now rather than at the first rollout or evaluation
    hours later: the league's entries parsed at every seat count of its tables ({seats:
    [LeagueEntry]}; a ppo:/snapshot: entry's model file read, any other agent made), a pair
    refused at a solo team, and the evaluation's opponent made. ValueError naming the field."""
    from ..registry import make_agent
    tables = [(c.rules(), 0)]
    if c.tables.formats:
        from .formats import format_rules, resolve
        tables = [format_rules(f, c.tables.max_ticks, where=f"formats[{i}]")
                  for i, f in enumerate(resolve(c.tables.formats))]
    parsed = {n: [parse_entry(entry, n - 1, where=f"opponents[{i}]")
                  for i, entry in enumerate(c.league.opponents)]
              for n in sorted({r.num_seats for r, _ in tables})}
    for r, seat in tables:
        check_pairs_seated(parsed[r.num_seats], r, seat)
    try:
        make_agent(c.evaluation.eval_against)
    except ValueError as err:
        raise ValueError(f"eval_against={c.evaluation.eval_against!r}: {err}") from None
    return parsed


def check_config(c: TrainConfig) -> TrainConfig:
    """normalise, check and load in turn: the config made whole (a new one; `c` unchanged),
    or a ValueError naming the first bad field and what it allows."""
    whole = normalise(c)
    check(whole)
    load(whole)
    return whole


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


def _check_numbers(c: TrainConfig) -> None:
    """check's integer and real fields: types and ranges."""
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
    """check's named choices, the learner's own fields, paths and the network."""
    if c.reward not in REWARDS:
        raise ValueError(f"reward={c.reward!r} must be one of {', '.join(REWARDS)}")
    if c.learner not in LEARNERS:
        raise ValueError(f"learner={c.learner!r} must be one of {', '.join(LEARNERS)}")
    if c.constraint is not None:
        from ..constraints import check_constraint
        check_constraint(c.constraint)
    if c.partner not in PARTNERS:
        raise ValueError(f"partner={c.partner!r} must be one of {', '.join(PARTNERS)}")
    if c.observation is not None and (not isinstance(c.observation, str)
                                      or c.observation not in OBSERVATIONS):
        raise ValueError(f"observation={c.observation!r} must be one of "
                         f"{', '.join(OBSERVATIONS)} (unset: init's, else v0)")
    lean_only = [n for n in ("formats", "init", "shift_cost", "constraint", "critic_warmup")
                 if getattr(c, n)]
    if c.observation == "v1":
        lean_only.append("observation")
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
    if c.learner == "lean":
        check_lean_net(c.net_arch)


def _check_tables(c: TrainConfig) -> None:
    """check's checks across fields: the rollout, the tables and formats, the league's list,
    the teacher and the evaluation's opponent (load makes the agents they name)."""
    if c.batch_size > c.n_steps * c.num_envs:
        raise ValueError(f"batch_size={c.batch_size} must be <= n_steps * num_envs "
                         f"({c.n_steps * c.num_envs}, the rollout size)")
    if c.bc_rows and c.bc_rows < 2 * c.num_envs:
        raise ValueError(f"bc_rows={c.bc_rows} must be 0 (no warm start) or >= 2 * num_envs "
                         f"({2 * c.num_envs})")
    try:
        c.rules()
    except ValueError as err:
        raise ValueError(f"teams / max_ticks: {err}") from None
    if not isinstance(c.opponents, (list, tuple)) or not c.opponents:
        raise ValueError(f"opponents={c.opponents!r} must be a non-empty list of agent specs")
    if c.formats:
        _check_formats(c)
    try:
        kind, _, _ = core_bot(c.teacher)
    except ValueError as err:
        raise ValueError(f"teacher={c.teacher!r}: {err}") from None
    if kind != POLICY_SCORED:
        raise ValueError(f"teacher={c.teacher!r} must be greedy or a heuristic spec (a scored bot)")
    if not isinstance(c.eval_against, str) or not c.eval_against.strip():
        raise ValueError(f"eval_against={c.eval_against!r} must be an agent spec")


__all__ = ["BEST_HEURISTIC", "BY_LEARNER", "DEVICES", "FIELDS", "FIXED_ON_RESUME", "FLAT",
           "LEARNERS", "MAX_SNAPSHOTS", "NEEDS", "OBSERVATIONS", "OPTIONAL", "PART_OF",
           "PARTNERS", "PARTS", "REWARDS",
           "TOURNAMENT_RULES", "EvalPart", "LeaguePart", "PPOPart", "RunPart", "TablesPart",
           "TRAIN_MODULES", "TrainConfig", "WarmStartPart", "check", "check_config",
           "check_given", "require_train",
           "check_lean_net", "check_pairs_seated", "field_docs", "flat_defaults",
           "learner_default", "load", "normalise"]
