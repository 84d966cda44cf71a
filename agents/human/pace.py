"""The bots' pace in human terms for `nertz play --human`: named levels (a reaction time in ms
and the agent that plays at it) and `--bot-ms`, turned into seat periods (R21) on the wall
clock's tick.

The clock ticks every `tick_ms` (default 200 ms: the person's move resolves at the end of the
tick it is sent in). A bot with reaction time `bot_ms` has period `bot_ms / tick_ms`, so it
moves at most once per `bot_ms`, like a person who needs that long to see and make a move
(pounce's bots likewise pay a thinking time after each move). The levels are measured
against a scripted person making one greedy move per second: benchmarks/human_pace.py,
figures in benchmarks/README.md.
"""
from __future__ import annotations

from dataclasses import dataclass

DEFAULT_TICK_MS = 200
MAX_PERIOD = 100                       # RulesConfig.speeds' upper bound (R21)


@dataclass(frozen=True)
class Level:
    name: str
    bot_ms: int                        # the bots' reaction time: at most one move per bot_ms
    agent: str                         # the agent spec at this level (unless --against)
    about: str


LEVELS = {lv.name: lv for lv in (              # easiest first
    Level("beginner", 3000, "greedy", "the greedy bot, one move per 3 s"),
    Level("easy", 2000, "greedy", "the greedy bot, one move per 2 s"),
    Level("medium", 2000, "heuristic", "the heuristic bot, one move per 2 s"),
    Level("hard", 800, "heuristic", "the heuristic bot, one move per 0.8 s"),
    Level("expert", 200, "heuristic:style=river-builder",
          "the strongest heuristic (river-builder), one move per 0.2 s (every tick)"),
)}
DEFAULT_LEVEL = "medium"


def level_help() -> str:
    return "; ".join(f"{lv.name}: {lv.about}" for lv in LEVELS.values())


def get_level(name: str) -> Level:
    if name not in LEVELS:
        raise ValueError(f"--level {name!r}: choose one of {', '.join(LEVELS)} "
                         f"(default {DEFAULT_LEVEL})")
    return LEVELS[name]


def bot_period(bot_ms: int, tick_ms: int, what: str = "") -> int:
    """The bots' period in ticks (R21) for a reaction time of bot_ms on a tick of tick_ms: a
    whole number of ticks from 1 to MAX_PERIOD, else a ValueError naming the options."""
    what = what or f"--bot-ms {bot_ms}"
    for name, value in (("--bot-ms", bot_ms), ("--tick-ms", tick_ms)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f"{name} {value!r} must be a whole number of ms >= 1")
    if bot_ms % tick_ms:
        raise ValueError(f"{what} is not a whole number of ticks of --tick-ms {tick_ms}: give "
                         f"a --tick-ms that divides {bot_ms} (e.g. 100 or 200)"
                         + ("" if what.startswith("--level") else
                            f", or a multiple of {tick_ms} ms"))
    period = bot_ms // tick_ms
    if period > MAX_PERIOD:
        raise ValueError(f"{what} is {period} ticks of --tick-ms {tick_ms}; at most "
                         f"{MAX_PERIOD} ticks (R21): raise --tick-ms")
    return period


NO_CLOCK = ("level", "bot_ms", "tick_ms", "port", "no_browser")


def given(value) -> bool:
    """An option the user gave (not its default None/False/''; 0 is a value)."""
    return value is not None and value is not False and value != ""


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def pace_from_args(args) -> dict:
    """`nertz play --human`'s pace options as tick_ms, the bots' period (None: --speeds
    holds every seat's), the agents (--against, else the level's) and the level's name.
    Combinations that contradict each other are refused, naming both options."""
    if args.terminal:
        extra = [_flag(n) for n in NO_CLOCK if given(getattr(args, n, None))]
        if extra:
            raise ValueError(f"{extra[0]} has no meaning with --terminal: the terminal plays "
                             "tick by tick, without a wall clock or a page")
        return {"tick_ms": None, "bot_period": None, "level": None,
                "against": args.against or "heuristic"}
    speeds = bool(args.speeds) or any(r.partition("=")[0].strip() == "speeds"
                                      for r in getattr(args, "rule", []))
    pace = "--level" if args.level else "--bot-ms" if args.bot_ms is not None else None
    if speeds and pace:
        raise ValueError(f"--speeds and {pace} both set the bots' pace (--speeds in ticks for "
                         f"every seat, {pace} in ms): give one; your own pace is "
                         "--human-period")
    if args.level and args.bot_ms is not None:
        raise ValueError("--level and --bot-ms both set the bots' reaction time: give one "
                         "(--bot-ms with --against names any agent at any pace)")
    tick_ms = args.tick_ms or DEFAULT_TICK_MS
    if speeds:
        return {"tick_ms": tick_ms, "bot_period": None, "level": None,
                "against": args.against or "heuristic"}
    if args.bot_ms is not None:
        return {"tick_ms": tick_ms, "bot_period": bot_period(args.bot_ms, tick_ms),
                "level": None, "against": args.against or LEVELS[DEFAULT_LEVEL].agent}
    lv = get_level(args.level or DEFAULT_LEVEL)
    period = bot_period(lv.bot_ms, tick_ms, f"--level {lv.name}'s reaction time, {lv.bot_ms} ms,")
    return {"tick_ms": tick_ms, "bot_period": period, "level": lv.name,
            "against": args.against or lv.agent}
