"""The options of a `search:` agent spec, parsed and checked (one line per bad option).

    search:base=river-builder,opp=base,worlds=W,horizon=40,belief=memory,margin=0,se=0,seed=S

base, rollout and opp name core bots (nertz_env/core/policies.py): greedy, a heuristic style
(balanced, lake-rush, river-builder, cautious) or heuristic:style=STYLE, or `learned`, the
shipped net (the family member for the table's rules, agents/learned/family.py): as base, its
move on the seat's observation; as rollout or opp, played inside the numba rollouts
(nertz_env/core/net_policy.py: its argmax under its constraint, in float32; near ties, top two
logits within 1e-3, may go the other way than `learned` itself plays them). rollout plays the
seat's team in the rollouts (default: the base, river-builder when the base is learned);
opp models the other teams (default `base`: the rollout policy). A net in the rollouts costs
4 to 8 times the core bots' CPU per decision (docs/search.md, nets in the rollouts).
worlds: W, or left out (None) the table's default, 32 at 2 teams and 64 at 3 or more (by
num_teams, whatever the team sizes; docs/search.md: 64 pays at 4 teams), resolved at every
decision from the rules of the table its seat view shows (table_worlds; a search plays only
through a view, so never before it knows its table). worlds=N always wins. Result files name
the spec as written (`search`) beside the table's teams, which fix the worlds: the same spec,
table and seed give the same files.
belief=oracle reads the true hidden cards (a ceiling, never an agent): refused unless
cheat=yes is written too.
The deviation rule: the best candidate is played only when its mean paired gain over the base
move exceeds margin points AND se standard errors of that gain (over the worlds; se > 0 needs
worlds >= 2); se=0 is the margin alone. threads=N plays the rollouts on N numba threads
(at most NUMBA_NUM_THREADS; the same moves as one thread).
leaf=value adds, where a rollout stops at its horizon before the hand's end, a value net's
estimate of the relative points still to come (nertz_env/core/leaf_value.py, on every seat's
observation in the sampled world; agents/search/leaf.py reads the net); leaf=PATH.npz a leaf
net of one's own (train/leaf_value.py writes them); none (default): the horizon's points.
Every bad option is ONE line naming it and what is allowed: ints in ASCII digits, margin and
se plain decimals (0.5, 1e-3; margin inf), an unknown option with the nearest name (checked).
"""
from __future__ import annotations

import difflib
import re
from pathlib import PurePath
from typing import NamedTuple

import numba

from nertz_env.bot_specs import KNOB_NAMES, STYLES, parse_bot
from nertz_env.core.worlds import BELIEFS

from ..specs import ascii_int, spec_options

SEARCH_OPTIONS = ("base", "opp", "rollout", "worlds", "horizon", "belief", "margin", "se",
                  "seed", "cheat", "threads", "leaf")
NET_BASES = ("learned",)     # the shipped family: a base move, or a net in the rollouts
MAX_WORLDS = 1024
MAX_HORIZON = 10**6          # ticks (end: to the hand's end)
MAX_SEED = 2**63 - 1
NUMBER = re.compile(r"(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?|inf", re.ASCII)    # margin, se
TABLE_WORLDS = {2: 32}       # worlds left out: by the table's teams (table_worlds)
MANY_TEAMS_WORLDS = 64       # ... at 3 or more teams
LEAVES = ("none", "value")   # leaf=: none, the shipped value net, or a net's PATH.npz
BOT_WORDS = ", ".join(STYLES) + " or heuristic:style=STYLE"


class SearchOptions(NamedTuple):
    base: str                # the base bot's spec (heuristic:style=... or greedy) or learned
    opp: str                 # the other teams' model (a core bot spec or learned)
    worlds: int | None       # W >= 1; None: the table's default (table_worlds)
    horizon: int             # ticks >= 1; 0: to the end of the hand
    belief: str              # uniform | memory | oracle
    margin: float            # deviate only when best minus base > margin (inf: never)
    seed: int | None         # None: the run's seed (make_agent's), else this
    cheat: bool              # oracle allowed
    se: float = 0.0          # ... and best minus base > se x its standard error (0: off)
    threads: int = 1         # numba threads for the rollouts (1: serial; same moves)
    rollout: str = ""        # the core bot (or learned) playing the seat's team in rollouts
    leaf: str = "none"       # none | value (the shipped leaf net) | PATH.npz (a leaf net file)


def table_worlds(worlds: int | None, config) -> int:
    """The worlds a search plays at a table of `config` (a RulesConfig): `worlds` when the
    spec names it, else 32 at 2 teams and 64 at 3 or more (module docstring)."""
    if worlds is not None:
        return worlds
    return TABLE_WORLDS.get(config.num_teams, MANY_TEAMS_WORLDS)


def bot_spec(spec: str, key: str, value: str) -> str:
    """A core bot spec from an option's value: a style name or a greedy/heuristic spec; or
    learned (the shipped net, NET_BASES) as it is."""
    if value in NET_BASES:
        return value
    text = f"heuristic:style={value}" if value in STYLES and value != "greedy" else value
    try:
        bot = parse_bot(text)
    except ValueError as err:
        if text.startswith("heuristic:"):        # parse_bot's words: the style or knob at fault
            why = str(err).removeprefix(f"agent {text!r}: ")
            raise ValueError(f"agent {spec!r}: {key}={value!r}: {why}") from None
        bot = None
    if bot is None or bot.kind == "random":
        hint = "; left out, rollout plays the base" if (key, value) == ("rollout", "base") else ""
        raise ValueError(f"agent {spec!r}: {key}={value!r} must be a core bot the rollouts "
                         f"play: {BOT_WORDS}, or learned (the shipped net){hint}")
    return text


def _int(spec, key, value, lo, hi, what):
    """ASCII digits only (no sign), lo..hi; a value of thousands of digits is out of range
    (ascii_int caps it), never Python's int-conversion error."""
    v = ascii_int(value) if value.isascii() and value.isdigit() else None
    if v is None or not lo <= v <= hi:
        raise ValueError(f"agent {spec!r}: {key}={value!r} must be {what}")
    return v


def _number(spec, key, value, what, finite=False) -> float:
    """A plain decimal number >= 0 (0.5, 1e-3; inf unless `finite`), else one line."""
    x = float(value) if NUMBER.fullmatch(value) else -1.0
    if x < 0 or (finite and x == float("inf")):
        raise ValueError(f"agent {spec!r}: {key}={value!r} must be {what}")
    return x


def checked(spec: str, rest: str) -> dict:
    """{key: value} of the options, each one of SEARCH_OPTIONS: an unknown one is one line
    with the nearest name (a misspelling, another case) or, for a heuristic knob, why it
    cannot follow base=."""
    opts = spec_options(spec, rest)
    unknown = sorted(set(opts) - set(SEARCH_OPTIONS))
    if unknown:
        key = unknown[0]
        near = difflib.get_close_matches(key.lower(), SEARCH_OPTIONS, 1, 0.7) or sorted(
            (o for o in SEARCH_OPTIONS if key.lower().startswith(o)), key=len)[-1:]
        hint = f" (did you mean {near[0]!r}?)" if near else ""
        if key in KNOB_NAMES or key == "style":
            hint = (" (a heuristic bot's knob: a comma ends base's spec, so base holds one "
                    f"knob or style, e.g. base=heuristic:{key}=V)")
        raise ValueError(f"agent {spec!r}: unknown option {key!r}{hint}; search options are "
                         + ", ".join(SEARCH_OPTIONS))
    return opts


def parse_options(spec: str, rest: str) -> SearchOptions:
    """SearchOptions of `search[:OPTIONS]` (rest: the text after 'search:')."""
    opts = checked(spec, rest)
    base = bot_spec(spec, "base", opts.get("base", "river-builder"))
    rollout = opts.get("rollout")
    if rollout is None:
        rollout = "heuristic:style=river-builder" if base in NET_BASES else base
    else:
        rollout = bot_spec(spec, "rollout", rollout)
    opp = opts.get("opp", "base")
    opp = rollout if opp == "base" else bot_spec(spec, "opp", opp)
    worlds = opts.get("worlds")
    worlds = None if worlds is None else _int(spec, "worlds", worlds, 1, MAX_WORLDS,
                                              f"an int from 1 to {MAX_WORLDS}")
    h = opts.get("horizon", "40")
    horizon = 0 if h == "end" else _int(spec, "horizon", h, 1, MAX_HORIZON,
                                        f"an int >= 1 (ticks) or end, at most {MAX_HORIZON}")
    belief = opts.get("belief", "memory")
    if belief not in BELIEFS:
        raise ValueError(f"agent {spec!r}: belief={belief!r} must be memory, uniform or "
                         "oracle (oracle with cheat=yes)")
    margin = _number(spec, "margin", opts.get("margin", "0"), "a number >= 0 such as 0.5 "
                     "or 1e-3 (points; inf: always the base move)")
    se = _number(spec, "se", opts.get("se", "0"), "a finite number >= 0 such as 1 or 0.5 "
                 "(standard errors; 0: the margin alone)", finite=True)
    if se > 0 and worlds is not None and worlds < 2:
        raise ValueError(f"agent {spec!r}: se={opts['se']!r} needs worlds >= 2 (a standard "
                         "error over one world is not defined)")
    most = numba.config.NUMBA_NUM_THREADS
    threads = _int(spec, "threads", opts.get("threads", "1"), 1, most,
                   f"an int from 1 to {most} (this machine's NUMBA_NUM_THREADS)")
    seed = opts.get("seed")
    seed = None if seed is None else _int(spec, "seed", seed, 0, MAX_SEED,
                                          f"an int >= 0, at most {MAX_SEED} (2**63 - 1)")
    cheat = opts.get("cheat", "no")
    if cheat not in ("yes", "no"):
        raise ValueError(f"agent {spec!r}: cheat={cheat!r} must be yes or no")
    if belief == "oracle" and cheat != "yes":
        raise ValueError(f"agent {spec!r}: belief=oracle reads the true hidden cards (a "
                         "ceiling, not a player); write cheat=yes to allow it")
    leaf = opts.get("leaf", "none")
    if leaf not in LEAVES and not (PurePath(leaf).suffix == ".npz" and leaf.isprintable()):
        raise ValueError(f"agent {spec!r}: leaf={leaf!r} must be none (the horizon's relative "
                         "points), value (the shipped leaf value net) or a leaf net's PATH.npz "
                         "(printable, NAME.npz with NAME.json beside it)")
    return SearchOptions(base, opp, worlds, horizon, belief, margin, seed, cheat == "yes", se,
                         threads, rollout, leaf)
