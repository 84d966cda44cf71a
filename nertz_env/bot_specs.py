"""The bots that live inside the jitted core, named by plain strings: `random`, `greedy` and
the `heuristic` styles (docs/heuristics.md). THE one parser of those spec strings: a spec
becomes the two numbers and the knob row that core/policies.py plays. `agents` builds its
Agent objects on it (agents/registry.py adds the model kinds: ppo:, learned, rllib:), and the
vector envs' `opponents=` and `nertz game --agents` read it directly.

    parse_bot("heuristic:style=cautious,flip=20")  -> BotSpec(kind="heuristic",
                                  style="cautious", knobs={"flip": "20"}, name=the spec)
    core_bot("heuristic:style=cautious,flip=20")   -> (POLICY_SCORED, knobs int64 [12], name)
    split_specs("random,heuristic:flip=20,greedy") -> ["random", "heuristic:flip=20", "greedy"]
    seat_bots("greedy,random", n_seats=2)          -> (kinds [S], knobs [S, 12], names)

Builds on core/policies.py only; never imports agents.
"""
from __future__ import annotations

import difflib
import re
from typing import NamedTuple

import numpy as np

from .core.policies import (N_KNOBS, POLICY_RANDOM, POLICY_SCORED, WITHHOLD_ALWAYS,
                            WITHHOLD_KEEP, WITHHOLD_NEVER, WITHHOLD_WHEN_USEFUL)

KNOB_NAMES = ("lake_nertz", "lake_stream", "lake_river", "empty_bonus", "nertz_river",
              "waste_river", "waste_river_useful", "shift_empty", "shift_expose", "flip",
              "withhold_stream", "withhold_river")
assert len(KNOB_NAMES) == N_KNOBS

#         lake_nertz stream river empty nertz_river waste useful s_empty s_expose flip ws wr
STYLES = {
    "greedy":        (100, 100, 100, 0, 50, -1, -1, -1, -1, 10, WITHHOLD_ALWAYS, 0),
    "balanced":      (100, 98, 97, 2, 90, 5, 80, 85, 75, 10, WITHHOLD_WHEN_USEFUL, 1),
    "lake-rush":     (100, 95, 95, 0, 50, -1, 40, 30, 25, 10, WITHHOLD_ALWAYS, 0),
    "river-builder": (95, 50, 30, 40, 100, 20, 88, 90, 85, 10, WITHHOLD_WHEN_USEFUL, 1),
    "cautious":      (100, 98, 97, 2, 90, 5, 80, 85, 75, 10, WITHHOLD_NEVER, 1),
}
HEURISTIC_STYLES = tuple(s for s in STYLES if s != "greedy")
WITHHOLD_STREAM = {"always": WITHHOLD_ALWAYS, "when-useful": WITHHOLD_WHEN_USEFUL,
                   "never": WITHHOLD_NEVER, "keep": WITHHOLD_KEEP}
CORE_KINDS = ("random", "greedy", "heuristic")
KNOB_LIMIT = 1_000_000          # knob values are scores; far beyond any sensible weight
INTEGER = re.compile(r"([+-]?)0*([0-9]+)")   # ASCII digits only: int() reads '٣', '５', '1_0'
HUGE_DIGITS = 30                 # more digits: read as 10**30 (int() refuses 4301 raw)


def ascii_int(text: str) -> int | None:
    """The int written in `text` with ASCII digits (an optional sign), else None: spec
    integers are never read from other scripts' digits ('٣', '５'), superscripts ('²') or
    with underscores ('1_0'), all of which int() takes or half-takes; one of more than
    HUGE_DIGITS digits is +-10**HUGE_DIGITS, beyond every cap (so its check says the range)."""
    m = INTEGER.fullmatch(text) if isinstance(text, str) else None
    if m is None:
        return None
    sign, digits = m.groups()
    value = 10**HUGE_DIGITS if len(digits) > HUGE_DIGITS else int(digits)
    return -value if sign == "-" else value


def nearest(word: str, choices) -> str:
    """' (did you mean 'x'?)' for the choice nearest `word` (a misspelling, another case, a
    '_' for a '-'), or '' when none is near."""
    w = str(word).strip().lower()
    near = difflib.get_close_matches(w, list(choices), 1, 0.7) or \
        difflib.get_close_matches(w.replace("_", "-"), list(choices), 1, 0.7)
    return f" (did you mean {near[0]!r}?)" if near and near[0] != word else ""


def knob_vector(style: str = "balanced", **overrides) -> np.ndarray:
    """A style's knobs (docs/heuristics.md) with named knobs replaced; ValueError otherwise.
    A knob's text is an integer in ASCII digits (withhold_stream also a name)."""
    if style not in STYLES:
        raise ValueError(f"style {style!r} is unknown{nearest(style, STYLES)}; styles are "
                         f"{', '.join(STYLES)}")
    knobs = np.array(STYLES[style], np.int64)
    for name, value in overrides.items():
        key = name[2:] if name.startswith("k_") else name
        if key not in KNOB_NAMES:
            raise ValueError(f"knob {name!r} is unknown{nearest(name, ('style', *KNOB_NAMES))}"
                             f"; knobs are {', '.join(KNOB_NAMES)} (and style=STYLE)")
        if key == "withhold_stream" and isinstance(value, str) and value in WITHHOLD_STREAM:
            value = WITHHOLD_STREAM[value]
        if isinstance(value, str):
            v = ascii_int(value)
        elif isinstance(value, (bool, float)):
            v = None
        else:
            try:
                v = int(value)
            except (TypeError, ValueError):
                v = None
        if key == "withhold_stream" and v not in (0, 1, 2, 3):
            hint = nearest(value, WITHHOLD_STREAM) if isinstance(value, str) else ""
            raise ValueError(f"knob withhold_stream={value!r} must be always, when-useful, "
                             f"never, keep or 0/1/2/3{hint}")
        if key == "withhold_river" and v not in (0, 1):
            raise ValueError(f"knob withhold_river={value!r} must be 0 or 1")
        if v is None:
            raise ValueError(f"knob {key}={value!r} must be an integer (ASCII digits, e.g. 20 "
                             "or -1)")
        if not -KNOB_LIMIT <= v <= KNOB_LIMIT:
            raise ValueError(f"knob {key}={value!r} must be an integer from {-KNOB_LIMIT} to "
                             f"{KNOB_LIMIT}")
        knobs[KNOB_NAMES.index(key)] = v
    return knobs


def check_heuristic_style(style: str) -> str:
    """`style` when it is a heuristic style (greedy is not one), else a ValueError listing them."""
    if style not in HEURISTIC_STYLES:
        hint = " (greedy is a kind of its own: write greedy)" if style == "greedy" else \
            nearest(style, HEURISTIC_STYLES)
        raise ValueError(f"style {style!r} is unknown{hint}; heuristic styles are "
                         + ", ".join(HEURISTIC_STYLES))
    return style


def spec_options(spec: str, text: str) -> dict:
    """'style=cautious,flip=20' -> {'style': 'cautious', 'flip': '20'}; ValueError naming spec."""
    out = {}
    for part in filter(None, text.split(",")):
        key, eq, value = part.partition("=")
        if not eq or not key.strip():
            raise ValueError(f"agent {spec!r}: option {part!r} must be written key=value")
        if key.strip() in out:
            raise ValueError(f"agent {spec!r}: option {key.strip()!r} is given twice")
        out[key.strip()] = value.strip()
    return out


def _is_option(part: str) -> bool:
    """'flip=20' or 'device=cuda:0' (KEY a plain name), not 'heuristic:style=cautious'."""
    key, eq, _ = part.partition("=")
    return bool(eq) and key.strip().isidentifier()


def split_specs(text) -> list:
    """'random,heuristic:style=cautious,flip=20,greedy' -> ['random',
    'heuristic:style=cautious,flip=20', 'greedy']: a KEY=VALUE part (KEY a plain name)
    belongs to the agent before it. Any agent spec (ppo:PATH,... too), not only core bots."""
    if not isinstance(text, str):
        raise ValueError(f"agents {text!r} must be a string of comma-separated agent specs, "
                         "e.g. 'random,greedy,heuristic'")
    out = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        if _is_option(part):
            if not out:
                raise ValueError(f"agents {text!r}: option {part!r} follows no agent")
            out[-1] += "," + part
        else:
            out.append(part)
    if not out:
        raise ValueError(f"agents {text!r}: name at least one agent, e.g. random,greedy,heuristic")
    return out


class CoreBot(NamedTuple):
    """What the core plays at one seat (core/policies.py)."""
    kind: int
    """POLICY_RANDOM or POLICY_SCORED"""
    knobs: np.ndarray
    """int64 [N_KNOBS], the scored rule's knob vector (zeros for random)"""
    name: str
    """the bot's label in reports: 'random', 'greedy', 'heuristic' or the spec itself"""


class BotSpec(NamedTuple):
    """A parsed, validated core bot spec."""
    kind: str
    """random, greedy or heuristic (CORE_KINDS)"""
    style: str | None
    """the knob table's row (STYLES): 'greedy', a heuristic style, None for random"""
    knobs: dict
    """knob overrides as written, {name: text}: KNOB=V options of a heuristic"""
    name: str
    """'random', 'greedy', 'heuristic' (no options) or the whole spec"""

    def core(self) -> CoreBot:
        if self.kind == "random":
            return CoreBot(POLICY_RANDOM, np.zeros(N_KNOBS, np.int64), self.name)
        return CoreBot(POLICY_SCORED, knob_vector(self.style, **self.knobs), self.name)


def parse_bot(spec: str) -> BotSpec:
    """A core bot spec: random, greedy or heuristic[:style=S,KNOB=V,...]. Anything else
    (a bad style, knob or value, options on random or greedy, another kind) is a ValueError
    naming the spec."""
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"bot spec {spec!r} must be a non-empty string such as 'random', "
                         "'greedy', 'heuristic:style=balanced'")
    spec = spec.strip()
    kind, _, rest = spec.partition(":")
    if kind == "random":
        if rest:
            raise ValueError(f"agent {spec!r}: random takes no options")
        return BotSpec("random", None, {}, "random")
    if kind == "greedy":
        if rest:
            raise ValueError(f"agent {spec!r}: greedy takes no options (use heuristic:... knobs)")
        return BotSpec("greedy", "greedy", {}, "greedy")
    if kind == "heuristic":
        opts = spec_options(spec, rest)
        style = opts.pop("style", "balanced")
        same = [k for k in opts if k.startswith("k_") and k[2:] in opts]
        if same:                        # flip=3,k_flip=4: one knob twice, the last would win
            raise ValueError(f"agent {spec!r}: option {same[0][2:]!r} is given twice "
                             f"({same[0]!r} names the same knob)")
        try:
            knob_vector(check_heuristic_style(style), **opts)      # every knob checked here
        except ValueError as err:
            raise ValueError(f"agent {spec!r}: {err}") from None
        return BotSpec("heuristic", style, opts, spec if rest else "heuristic")
    raise ValueError(f"bot {spec!r}: unknown kind {kind!r}; the core plays {', '.join(CORE_KINDS)}")


def core_bot(spec: str) -> CoreBot:
    """(kind, knobs int64 [12], name) of a core bot spec (parse_bot)."""
    return parse_bot(spec).core()


def seat_bots(specs, n_seats: int, where: str = "agents"):
    """(kinds int8 [S], knobs int64 [S, N_KNOBS], names) of core bots for n_seats seats:
    `specs` is one spec for every seat or one per seat in seat order, as a comma-separated
    string (split_specs) or a list. A bad spec or count is a ValueError starting with `where`."""
    if isinstance(specs, str):
        try:
            items = split_specs(specs)
        except ValueError as err:
            raise ValueError(f"{where}: {err}") from None
    elif isinstance(specs, (list, tuple)) and specs:
        items = list(specs)
    else:
        raise ValueError(f"{where} {specs!r} must be a string of comma-separated bot specs "
                         "or a non-empty list of them, e.g. 'random,greedy,heuristic'")
    bots = []
    for spec in items:                   # every spec checked before the count is
        try:
            bots.append(core_bot(spec))
        except ValueError as err:
            raise ValueError(f"{where}: {err}") from None
    if len(bots) == 1:
        bots = bots * n_seats
    if len(bots) != n_seats:
        raise ValueError(f"{where} {specs!r}: give one bot for every seat or one per seat "
                         f"({n_seats} seats), not {len(bots)}")
    kinds = np.array([b.kind for b in bots], np.int8)
    knobs = np.array([b.knobs for b in bots], np.int64).reshape(n_seats, N_KNOBS)
    return kinds, knobs, [b.name for b in bots]
