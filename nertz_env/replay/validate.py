"""Reading a replay file as untrusted input: caps on what it may hold, and every key of it
checked, with strict types, before anything is built from it.

- Caps (the most a file may be; far above what the project writes, docs/replays.md): the
  file's bytes on disk, what its gzip inflates to (a bomb is refused after inflating the
  cap, in well under a second), JSON nesting (nertz_env.files.MAX_JSON_DEPTH: no
  RecursionError), hands per file, ticks per hand (the config's max_ticks) and action ids
  per file, name and string lengths, the size and depth of the free `meta` and `label`.
- Keys: each object's keys are a known set (the top level, a hand, its `end`); an unknown
  or missing key is a ReplayError naming it and listing the allowed ones. Values have exact
  types (an int is not a bool or a float, a list is a list) and ranges; a layout is checked
  by the Table's own layout reader. `meta` and `label` are free, but only JSON scalars,
  lists and objects within the caps.

Every refusal is a ReplayError (a ValueError) of one line naming the file, the field and
what is allowed; values from the file appear only as repr, cut short.
"""
from __future__ import annotations

import numpy as np

from ..actions import N_ACTIONS
from ..config import RulesConfig
from ..encoding import DECK, parse_card
from .notation import shown
from .playback import ReplayError

MAX_FILE_BYTES = 32 << 20          # on disk, gzip or not
MAX_JSON_BYTES = 32 << 20          # the JSON text, after gzip
MAX_HANDS = 10_000
MAX_ACTIONS = 6_000_000            # ticks x seats, summed over the file's hands
MAX_NAME = 200                     # an agent name, in characters
MAX_STRING = 2_000                 # a string of meta or a label
MAX_FREE_ITEMS = 5_000             # values in meta, or in one label
MAX_FREE_DEPTH = 6                 # nesting inside meta or a label
MAX_SCORE = 10_000_000
MAX_HAND_NUMBER = 2**31 - 1          # Engine.reset's range
HEX = "0123456789abcdef"           # a seat per hex digit: at most 16 seats

TOP_KEYS = {"format": True, "version": True, "config": True, "agents": True,
            "hands": True, "sha256": True, "meta": False}      # key: required
HAND_KEYS = {"hand": True, "ticks": True, "actions": True, "priority": True, "end": True,
             "decks": False, "layout": False, "label": False}
END_KEYS = {"status": True, "tick": True, "scores": False, "callers": False, "digest": False}
STATUSES = ("nertz", "truncated", "open")


def cut(text, limit: int = 300) -> str:
    text = str(text)
    return text if len(text) <= limit else text[:limit - 3] + "..."


def fail(where: str, text: str):
    raise ReplayError(f"{where}: {text}")


def check_keys(obj, allowed: dict, where: str) -> None:
    """obj is a dict whose keys are among `allowed` (key: required) and hold every
    required one."""
    if not isinstance(obj, dict):
        fail(where, f"must be an object with keys {', '.join(allowed)}; got "
                    f"{type(obj).__name__}")
    for key in obj:
        if key not in allowed:
            fail(where, f"unknown key {shown(key)}; allowed: {', '.join(allowed)}")
    for key, required in allowed.items():
        if required and key not in obj:
            fail(where, f"missing key {key!r} (keys: {', '.join(allowed)})")


def is_int(x) -> bool:
    return type(x) is int


def int_in(value, lo: int, hi: int, where: str) -> int:
    if not is_int(value) or not lo <= value <= hi:
        fail(where, f"must be an int from {lo} to {hi}; got {shown(value)}")
    return value


def free_value(value, where: str, depth: int = 0, budget=None) -> None:
    """A value of meta or a label: JSON scalars, lists and string-keyed objects within the
    caps (module docstring)."""
    budget = [MAX_FREE_ITEMS] if budget is None else budget
    budget[0] -= 1
    if budget[0] < 0:
        fail(where, f"holds more than {MAX_FREE_ITEMS} values, the most read")
    if depth > MAX_FREE_DEPTH:
        fail(where, f"is nested deeper than {MAX_FREE_DEPTH} levels, the most read")
    if value is None or isinstance(value, (bool, int)):
        return
    if isinstance(value, float):
        return                                  # the bounded JSON reader refuses NaN
    if isinstance(value, str):
        if len(value) > MAX_STRING:
            fail(where, f"holds a string of {len(value)} characters; at most {MAX_STRING}")
        return
    if isinstance(value, list):
        for i, v in enumerate(value):
            free_value(v, f"{where}[{i}]", depth + 1, budget)
        return
    if isinstance(value, dict):
        for k, v in value.items():
            if len(k) > MAX_STRING:
                fail(where, f"has a key of {len(k)} characters; at most {MAX_STRING}")
            free_value(v, f"{where}.{shown(k, 30)}", depth + 1, budget)
        return
    fail(where, f"must hold JSON values only; got {type(value).__name__}")


def free_dict(value, where: str) -> dict:
    if not isinstance(value, dict):
        fail(where, f"must be an object (JSON values under string keys); got "
                    f"{type(value).__name__}")
    free_value(value, where)
    return value


def top_level(body, where: str, fmt: str, version: int) -> None:
    """The outer object: a nertz replay of this version with only known keys."""
    if not isinstance(body, dict) or body.get("format") != fmt:
        raise ReplayError(f"{where}: not a nertz replay (its 'format' must be {fmt!r})")
    if not is_int(body.get("version")) or body["version"] != version:
        raise ReplayError(f"{where}: replay version {shown(body.get('version'))} is not "
                          f"supported (this nertz-env reads version {version})")
    check_keys(body, TOP_KEYS, where)
    sha = body["sha256"]
    if not isinstance(sha, str) or len(sha) != 64 or any(c not in HEX for c in sha):
        fail(f"{where}: sha256", "must be 64 lowercase hex digits")


def config_of(value, where: str) -> RulesConfig:
    if not isinstance(value, dict):
        fail(f"{where}: config", "must be an object of RulesConfig fields")
    for key in value:
        if key not in RulesConfig.__dataclass_fields__ or key == "num_seats":
            fail(f"{where}: config", f"unknown key {shown(key)}; allowed: "
                 + ", ".join(f for f in RulesConfig.__dataclass_fields__ if f != "num_seats"))
    try:
        config = RulesConfig(**value)
    except (TypeError, ValueError) as err:
        fail(f"{where}: field 'config' is not a valid RulesConfig", cut(err))
    if config.num_seats > len(HEX):
        fail(f"{where}: config", f"{config.num_seats} seats; replays hold at most {len(HEX)}")
    return config


def agents_of(value, config: RulesConfig, where: str) -> list:
    S = config.num_seats
    if not isinstance(value, list) or len(value) != S or \
            not all(isinstance(a, str) and len(a) <= MAX_NAME for a in value):
        fail(where, f"field 'agents' must list {S} names, one per seat, each a string of at "
                    f"most {MAX_NAME} characters")
    return value


def end_of_hand(end, config: RulesConfig, where: str) -> dict:
    where = f"{where}.end"
    check_keys(end, END_KEYS, where)
    T = config.num_teams
    if end["status"] not in STATUSES:
        fail(f"{where}.status", f"must be one of {', '.join(STATUSES)}; got {shown(end['status'])}")
    int_in(end["tick"], 0, config.max_ticks, f"{where}.tick")
    if "scores" in end:
        s = end["scores"]
        if not isinstance(s, list) or len(s) != T or \
                not all(is_int(x) and abs(x) <= MAX_SCORE for x in s):
            fail(f"{where}.scores", f"must list {T} ints, one per team (R29)")
    if "callers" in end:
        c = end["callers"]
        if not isinstance(c, list) or not all(is_int(x) and 0 <= x < T for x in c) \
                or c != sorted(set(c)):
            fail(f"{where}.callers", f"must list distinct teams 0..{T - 1} in order")
    if "digest" in end:
        d = end["digest"]
        if not isinstance(d, str) or len(d) != 16 or any(ch not in HEX for ch in d):
            fail(f"{where}.digest", "must be 16 lowercase hex digits")
    return end


def decks_of(value, config: RulesConfig, where: str) -> np.ndarray:
    T = config.num_teams
    if not isinstance(value, list) or len(value) != T:
        fail(where, f"'decks' must hold {T} decks, one per team")
    decks = np.zeros((T, DECK), np.int8)
    for t, deck in enumerate(value):
        if not isinstance(deck, str) or len(deck) > 4 * DECK:
            fail(f"{where}: decks[{t}]", "must be a string of the team's 52 cards")
        try:
            ids = [parse_card(c, t)[1] for c in deck.split()]
        except ValueError as err:
            fail(f"{where}: decks[{t}]", cut(err))
        if sorted(ids) != list(range(DECK)):
            fail(f"{where}: decks[{t}]", "must list the team's 52 cards once each")
        decks[t] = ids
    return decks


def layout_of(value, config: RulesConfig, where: str) -> dict:
    from ..table.table import Table
    if not isinstance(value, dict):
        fail(f"{where}.layout", "must be a docs/api.md layout object")
    try:
        Table.from_layout(value, config)
    except (TypeError, ValueError, KeyError, IndexError) as err:
        fail(f"{where}.layout", cut(err))
    return value


def moves_of(d, config: RulesConfig, where: str, budget: list):
    """(actions int16 [ticks, S], priority int8 [ticks, S]) of a hand object."""
    S = config.num_seats
    ticks = int_in(d["ticks"], 0, config.max_ticks, f"{where}.ticks")
    budget[0] -= ticks * S
    if budget[0] < 0:
        fail(where, f"the file holds more than {MAX_ACTIONS} action ids, the most read")
    acts = d["actions"]
    if not isinstance(acts, list) or len(acts) != ticks * S or \
            not set(map(type, acts)) <= {int}:
        fail(where, f"'actions' must hold ticks x seats = {ticks * S} action ids "
                    f"0..{N_ACTIONS - 1}")
    a = np.array(acts, np.int64).reshape(ticks, S)
    if a.size and (a.min() < 0 or a.max() >= N_ACTIONS):
        fail(where, f"'actions' must hold ticks x seats = {ticks * S} action ids "
                    f"0..{N_ACTIONS - 1}")
    prio = d["priority"]
    if not isinstance(prio, str) or len(prio) != ticks * S or \
            not set(prio) <= set(HEX[:S]):
        fail(where, f"'priority' must hold ticks x seats = {ticks * S} hex seat digits "
                    f"0..{HEX[S - 1]}")
    order = (np.frombuffer(prio.encode(), np.uint8).reshape(ticks, S).astype(np.int16)
             - ord("0"))
    order[order > 9] -= ord("a") - ord("0") - 10
    if ticks and not (np.sort(order, axis=1) == np.arange(S)).all():
        fail(where, "every tick's 'priority' must be a permutation of the seats")
    return a.astype(np.int16), order.astype(np.int8)


def hand_of(d, config: RulesConfig, where: str, budget: list) -> dict:
    """The checked fields of one hand object (format.HandReplay's arguments)."""
    check_keys(d, HAND_KEYS, where)
    if ("decks" in d) == ("layout" in d):
        fail(where, "needs exactly one of 'decks' (a dealt hand) or 'layout' (a hand from "
                    "a written position)")
    hand = int_in(d["hand"], 0, MAX_HAND_NUMBER, f"{where}.hand")
    actions, priority = moves_of(d, config, where, budget)
    decks = decks_of(d["decks"], config, where) if "decks" in d else None
    layout = layout_of(d["layout"], config, where) if "layout" in d else None
    return {"hand": hand, "decks": decks, "layout": layout, "actions": actions,
            "priority": priority, "end": end_of_hand(d["end"], config, where),
            "label": free_dict(d.get("label", {}), f"{where}.label")}


def hands_of(value, config: RulesConfig, where: str) -> list:
    if not isinstance(value, list):
        fail(where, "field 'hands' must be a list")
    if len(value) > MAX_HANDS:
        fail(where, f"field 'hands' holds {len(value)} hands; at most {MAX_HANDS} are read")
    budget = [MAX_ACTIONS]
    return [hand_of(h, config, f"{where}: hands[{i}]", budget) for i, h in enumerate(value)]
