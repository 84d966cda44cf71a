"""Table formats to train over: one learner for every table of the rulebook.

A format is a dict of RulesConfig fields (docs/rules.md) plus an optional "seat" (the
learner's seat, default 0) and "weight" (an int >= 1, default 1), e.g. {"num_teams": 3,
"team_sizes": [2, 2, 2], "seat": 1}. A training run with `formats` (TrainConfig.formats: a
list of such dicts, or the name of a preset in PRESETS) deals its num_envs tables out over
the formats, one each and the rest in proportion to their weights, each format
its own NertzVecEnv + league (league.py make_env, the run's opponents at every other seat)
seeded by SeedSequence([seed, format index]); `FormatsVecEnv` steps them all as one
vector env. The observation is fixed-size for 2-8 teams and says the table's format
(nertz_env/core/observe.py), so one network reads them all; a run on v1 (TrainConfig.
observation, or a v1 init) gets every format's env with observation="v1", its memory block
(nertz_env/core/observe_memory.py) sized for 8 teams too.

PRESETS["rulebook"] covers the rulebook's tables: 2 to 8 solo teams; two-player teams at 2
and 3 teams, the learner in either seat of its team (R4's roles alternate by hand); River 5
at 2 and 4 teams; mixed speeds (seats alternate periods 1 and 2) and uneven ones (one seat at
period 1 among period-2 seats, the learner in it or not) at 2 and 4 teams (R21); stacking
(R16) and the flow rules (R18, R19) off at 2 and 4 teams. PRESETS["rulebook-weighted"] is
the same formats with 2 solo teams at weight 5 and 4 solo teams at weight 3 (the tables the
per-table models and most tournaments play: 17% and 10% of the tables instead of 4% each).
PRESETS["rulebook-weighted-nostack"] is rulebook-weighted with the two stacking-off formats
(R16) at weight 3 too: the cells a generalist trained on rulebook-weighted wins by least.
PRESETS["rulebook-nostack"] is rulebook-weighted with stacking off (R16) at every table: the
training of the stacking-off member of `learned`'s family (agents/learned/family.py).

Imports nertz_env (no torch: the config's checks read the formats); the env that steps them,
FormatsVecEnv (an SB3 VecEnv), is league.py's, which make_formats_env imports when called.
"""
from __future__ import annotations

import numpy as np

from nertz_env.config import RULE_FIELDS, RulesConfig



def _rulebook() -> list:
    out = [{"num_teams": t} for t in range(2, 9)]
    out += [{"num_teams": 2, "team_sizes": [2, 2], "seat": s} for s in (0, 1)]
    out += [{"num_teams": 3, "team_sizes": [2, 2, 2], "seat": s} for s in (0, 1)]
    out += [{"num_teams": t, "river_size": 5} for t in (2, 4)]
    for t in (2, 4):
        out.append({"num_teams": t, "speeds": [1 + s % 2 for s in range(t)]})    # mixed
        out.append({"num_teams": t, "speeds": [2 - s % 2 for s in range(t)]})    # mixed, 2 first
        if t > 2:                          # at 2 teams uneven is mixed: one fast, one slow
            out.append({"num_teams": t, "speeds": [1] + [2] * (t - 1)})           # uneven, fast
            out.append({"num_teams": t, "speeds": [2] * (t - 1) + [1]})           # uneven, slow
    out += [{"num_teams": t, "stacking": False} for t in (2, 4)]
    out += [{"num_teams": t, "flow_rules": False} for t in (2, 4)]
    return out


def _weighted() -> list:
    out = _rulebook()
    for f in out:
        if f == {"num_teams": 2}:
            f["weight"] = 5
        elif f == {"num_teams": 4}:
            f["weight"] = 3
    return out


def _weighted_nostack() -> list:
    out = _weighted()
    for f in out:
        if f.get("stacking") is False:
            f["weight"] = 3
    return out


def _nostack() -> list:
    out = []
    for f in _weighted():
        if "stacking" not in f:              # the stacking-off formats are these, made so
            out.append({**f, "stacking": False})
    return out


PRESETS = {"rulebook": _rulebook(), "rulebook-weighted": _weighted(),
           "rulebook-weighted-nostack": _weighted_nostack(), "rulebook-nostack": _nostack()}
KEYS = ("seat", "weight")          # a format's keys that are not RulesConfig fields


def resolve(formats) -> list:
    """The list of format dicts of TrainConfig.formats (a preset's name, or the list)."""
    if isinstance(formats, str):
        if formats not in PRESETS:
            raise ValueError(f"formats={formats!r} must be a list of formats or a preset: "
                             f"{', '.join(PRESETS)}")
        return [dict(f) for f in PRESETS[formats]]
    return [dict(f) for f in formats]


def format_rules(fmt: dict, max_ticks=None, where: str = "formats") -> tuple:
    """(RulesConfig, learner seat) of one format; ValueError naming `where` and the key."""
    if not isinstance(fmt, dict) or not fmt:
        raise ValueError(f"{where}={fmt!r} must be a dict of RulesConfig fields (and 'seat', "
                         "'weight')")
    kw = {k: v for k, v in fmt.items() if k not in KEYS}
    for k in kw:
        if k not in RULE_FIELDS:
            raise ValueError(f"{where}: {k!r} is not a RulesConfig field; fields: "
                             f"{', '.join(RULE_FIELDS)} (and 'seat', the learner's; 'weight')")
    for k in ("team_sizes", "speeds"):
        if isinstance(kw.get(k), list):
            kw[k] = tuple(kw[k])
    if max_ticks is not None and "max_ticks" not in kw:
        kw["max_ticks"] = max_ticks
    try:
        rules = RulesConfig(**kw)
    except (TypeError, ValueError) as err:
        raise ValueError(f"{where}: {err}") from None
    seat = fmt.get("seat", 0)
    if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < rules.num_seats:
        raise ValueError(f"{where}: seat={seat!r} must be a seat of that table, 0.."
                         f"{rules.num_seats - 1}")
    weight = fmt.get("weight", 1)
    if isinstance(weight, bool) or not isinstance(weight, int) or not 1 <= weight <= 1000:
        raise ValueError(f"{where}: weight={weight!r} must be an int from 1 to 1000 (its share "
                         "of the tables)")
    return rules, seat


def describe(fmt: dict) -> str:
    """A format in a few words (logs, model cards, the per-format stats' names); its weight
    is a share of the run's tables, not part of the table, so it is left out."""
    parts = [f"{fmt.get('num_teams', 2)} teams"]
    parts += [f"{k}={'+'.join(map(str, v)) if isinstance(v, (list, tuple)) else v}"
              for k, v in fmt.items() if k not in ("num_teams", "weight")]
    return ", ".join(parts)


def tables_per_format(num_envs: int, n, weights=None) -> list:
    """Tables per format: one each, the other num_envs - n dealt in proportion to the weights
    (default all 1; the remainder by largest fractional part, ties to the earlier format)."""
    weights = [1] * n if weights is None else list(weights)
    total, spare = sum(weights), num_envs - n
    out = [1 + spare * w // total for w in weights]
    order = sorted(range(n), key=lambda i: (-(spare * weights[i] % total), i))
    for i in order[:num_envs - sum(out)]:
        out[i] += 1
    return out


def weights(fmts) -> list:
    return [f.get("weight", 1) for f in fmts]


def table_shares(num_envs: int, fmts) -> list:
    """(format, tables) pairs of a run's resolved formats: its num_envs dealt by weight."""
    return list(zip(fmts, tables_per_format(num_envs, len(fmts), weights(fmts))))


def make_formats_env(cfg, observation: str | None = None):
    """The training env of a TrainConfig with formats: one league env per format (league.py
    make_env, learner at the format's seat), stepped as one FormatsVecEnv; observation: the
    learner's at every format, "v0" or "v1" (None: league.py make_env's default)."""
    from .league import FormatsVecEnv, make_env
    fmts = resolve(cfg.tables.formats)
    envs = []
    for i, (fmt, n) in enumerate(table_shares(cfg.tables.num_envs, fmts)):
        rules, seat = format_rules(fmt, cfg.tables.max_ticks, where=f"formats[{i}]")
        seed = int(np.random.SeedSequence([cfg.run.seed, i]).generate_state(1)[0])
        envs.append(make_env(cfg, seed=seed, monitor=False, rules=rules, num_envs=n,
                             learner_seat=seat, observation=observation))
    return FormatsVecEnv(envs, [describe(f) for f in fmts])
