"""The one table of limits: every count, size and grid length a run may ask for. The CLI's
argparse types (agents/cli/common.py) and the checks of run_tournament and of experiment
specs (experiment_spec.py) read them from here, so a value the CLI refuses is refused in a
spec file too, with the same words.

- Counts (LIMITS): each an int in lo..hi; `allowed(key)` is the phrase every refusal uses.
- Memory: a run keeps one row per table it plays (every lineup x deal x seating) and one
  score per team and hand of each (games mode: up to max game hands): at most MAX_TABLES
  tables and MAX_HAND_SCORES scores per run (an experiment: per cell), counted at the run's
  deal cap. A precision
  run's default cap (100 x deals) is clipped to what fits; a cap given explicitly that does
  not fit is refused before anything plays.
- Grids: each axis of an experiment spec holds at most MAX_GRID distinct entries, a spec at
  most MAX_CELLS cells, a spec file at most MAX_SPEC_BYTES bytes.
- `nertz probe` keeps every deal's table of the agent it probes in memory at once (a vector
  env of --deals tables, their observations, masks and counts): PROBE_DEAL_BYTES each, at
  most MAX_PROBE_BYTES per run, so "probe_deals" stops at MAX_PROBE_BYTES // PROBE_DEAL_BYTES.
- `nertz exploit`: "budget" (env steps per responder) and "responders" (--seeds).
"""
from __future__ import annotations

import numbers
from typing import NamedTuple


class Limit(NamedTuple):
    lo: int
    hi: int
    why: str = ""


MAX_DEALS = 1_000_000
MAX_GAMES = 10_000
MAX_GAME_HANDS = 400            # = nertz_env.table.games.MAX_HANDS (a test keeps them equal)
MAX_SEED = 2**63 - 1
MAX_TABLES = 2_000_000
MAX_HAND_SCORES = 100_000_000
MAX_GRID = 64
MAX_CELLS = 1_000
MAX_LABEL = 100                 # characters of a name or label (experiment name, treatments)
MAX_SPEC_BYTES = 1 << 20
# measured: tracemalloc's peak of one probed deal at 2 teams is 63 KB (about 40 KB at 8);
# 64 KiB a deal, at most 2 GiB a run
PROBE_DEAL_BYTES = 64 << 10
MAX_PROBE_BYTES = 2 << 30
MAX_BUDGET = 1_000_000_000      # env steps per responder: days of training on a 2-core machine
MAX_RESPONDERS = 32

LIMITS = {
    "deals": Limit(2, MAX_DEALS, "intervals need 2 deals"),
    "max_deals": Limit(2, MAX_DEALS),
    "block_deals": Limit(1, MAX_DEALS),
    "max_game_hands": Limit(1, MAX_GAME_HANDS),
    "games": Limit(1, MAX_GAMES),
    "seed": Limit(0, MAX_SEED),
    "probe_deals": Limit(2, MAX_PROBE_BYTES // PROBE_DEAL_BYTES,
                         f"intervals need 2 deals; a probe keeps every deal's table in memory, "
                         f"{PROBE_DEAL_BYTES >> 10} KiB each, at most {MAX_PROBE_BYTES >> 30} GiB"),
    "budget": Limit(1, MAX_BUDGET, "env steps per responder; a billion is days of training "
                                   "on a 2-core machine"),
    "responders": Limit(1, MAX_RESPONDERS, "responders, each trained for the whole budget"),
}


def allowed(key: str) -> str:
    """'an int from LO to HI (why)': the words of every refusal of `key`."""
    lim = LIMITS[key]
    return f"an int from {lim.lo} to {lim.hi}" + (f" ({lim.why})" if lim.why else "")


MAX_SHOWN = 200                 # characters of a value a message echoes (brief)


def brief(value, most: int = MAX_SHOWN) -> str:
    """repr(value) for a message, at most about `most` characters: a longer one is cut, with
    its count of entries (a dict or list) or characters, so a refusal stays one short line
    whatever a file holds."""
    if isinstance(value, numbers.Integral) and not isinstance(value, bool) \
            and abs(value) >= 10 ** 30:
        digits = len(str(abs(value))) if abs(value) < 10 ** 4000 else "over 4000"
        return f"an int of {digits} digits"
    text = repr(value)
    if len(text) <= most:
        return text
    count = (f"{len(value)} entries" if isinstance(value, (dict, list, tuple, set))
             else f"{len(text)} characters")
    return f"{text[:most - 40]}... ({count})"


def check_int(key: str, value, where: str = "") -> int:
    """value when it is an int within LIMITS[key], else a ValueError naming `where` (or the
    key) and the allowed range."""
    lim = LIMITS[key]
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) \
            or not lim.lo <= value <= lim.hi:
        raise ValueError(f"{where or key}={brief(value)} must be {allowed(key)}")
    return int(value)


def deals_that_fit(tables_per_deal: int, max_hands: int, teams: int) -> int:
    """The most deals a run (or cell) of that many tables per deal, hands per table and teams
    can keep in memory (module docstring)."""
    return max(0, min(MAX_TABLES // max(tables_per_deal, 1),
                      MAX_HAND_SCORES // max(tables_per_deal * max_hands * teams, 1)))


def check_size(deals: int, tables_per_deal: int, max_hands: int, teams: int,
               where: str, fewer=("deals", "agents", "teams")) -> None:
    """ValueError when `deals` deals of that size do not fit (module docstring); its hint
    names `fewer`, the counts the caller has (and max game hands when a table plays more
    than one hand)."""
    fit = deals_that_fit(tables_per_deal, max_hands, teams)
    if deals > fit:
        hands = f" x {max_hands} hands" if max_hands > 1 else ""
        counts = [*fewer, *(["max game hands"] if max_hands > 1 else [])]
        raise ValueError(
            f"{where}: {deals} deals x {tables_per_deal} tables per deal{hands} x {teams} teams "
            f"is more than a run keeps in memory (at most {MAX_TABLES:,} tables and "
            f"{MAX_HAND_SCORES:,} hand scores): at most {fit} deals here; use fewer "
            + (" or ".join(counts) if len(counts) < 3 else
               ", ".join(counts[:-1]) + " or " + counts[-1]))


def default_cap(deals: int, tables_per_deal: int, max_hands: int, teams: int) -> int:
    """A precision run's default cap: 100 x deals, clipped to what fits (at least deals)."""
    return max(deals, min(100 * deals, MAX_DEALS,
                          deals_that_fit(tables_per_deal, max_hands, teams)))
