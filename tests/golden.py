"""Golden playthroughs (OpenSpiel's habit): a few seeded hands written out tick by tick.

Each config of CONFIGS is dealt with `Table.deal(config, seed)` and played for a fixed number
of ticks through the public readable API; moves and resolution orders come from one seeded
numpy generator. Per tick and seat the text lists the legal action ids with their move text
(`Table.decode`) and the nonzero entries of every observation segment (`Engine.observe`,
segments as tabled in nertz_env/core/observe.py; indices count from the segment's start,
values rounded to 6 decimals; all-zero segments are left out); then the chosen moves and the
resolution order, the applied flags, the Nertz callers and the R29 hand scores.

tests/table/test_golden.py regenerates the text in memory and compares it with tests/golden/*.txt.
After a deliberate change of rules or observations, regenerate the files (and bump nertz_v<N>)
from the repository root with:

    python tests/golden.py --write        # or: python -m tests.golden --write
"""
from __future__ import annotations

import argparse
import sys
from pathlib import Path

import numpy as np

from nertz_env import RulesConfig, Table
from nertz_env.actions import STACK0

GOLDEN_DIR = Path(__file__).resolve().parent / "golden"

# Observation segments of nertz_env/core/observe.py: (name, offset, size). Written out here,
# not imported, so a moved segment shows as a drift instead of being followed silently.
OBS_DIM = 791
SEGMENTS = ([("own_nertz", 0, 7), ("own_waste", 7, 8), ("own_river", 15, 390),
             ("lake_next", 405, 52), ("lake_suit", 457, 4)]
            + [(f"opp{k}", 461 + 46 * (k - 1), 46) for k in range(1, 8)]
            + [("self", 783, 8)])

# name -> (RulesConfig keyword arguments, deal seed, ticks, share of illegal picks per seat)
CONFIGS = {
    "2teams_default": (dict(), 18, 60, 0.0),
    "3teams_pairs_speeds": (dict(num_teams=3, team_sizes=(2, 1, 1), speeds=(1, 2, 1, 3)),
                            18, 50, 0.0),
    "4teams_river5_move_ticks": (dict(num_teams=4, river_size=5, stacking=True,
                                      move_ticks={"flip": 1, "lake": 2, "river": 3, "shift": 2},
                                      max_ticks=45), 20, 50, 0.0),
    "2teams_penalize": (dict(illegal_move="penalize", penalty_points=3), 15, 50, 0.15),
}

# Share of picks made among the scoring moves (Lake plays, stacks, Nertz card to the River)
# when there are any, so that the short playthroughs reach the Lake, stacks and conflicts
# (the seeds were picked for that: a Nertz call, stacks, lost races and truncation all occur).
PREFER_SCORING = 0.9


def _num(v: float) -> str:
    text = f"{v:.6f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def format_observation(row: np.ndarray) -> list[str]:
    """One line per segment with a nonzero entry: `name: idx=value ...`."""
    lines = []
    for name, off, size in SEGMENTS:
        seg = row[off:off + size]
        nz = np.flatnonzero(seg)
        if nz.size:
            lines.append(f"    {name}: " + " ".join(f"{i}={_num(float(seg[i]))}" for i in nz))
    return lines


def _scoring(move) -> bool:
    text = str(move)
    return text.endswith(">lake") or text.startswith("nertz>")


def _illegal_pick(rng, table: Table, seat: int, mask: np.ndarray):
    """A move that is not legal for `seat` now but is well formed for this table (simple
    action ids only: a stack id has no text without its run)."""
    candidates = []
    for a in np.flatnonzero(~mask[:STACK0]):
        move = table.decode(int(a), seat)
        try:
            table.encode(move)              # names a River column this table has
        except ValueError:
            continue
        candidates.append((int(a), move))
    return candidates[rng.integers(len(candidates))]


def play(name: str) -> str:
    """The golden text of CONFIGS[name]."""
    kwargs, seed, ticks, illegal_share = CONFIGS[name]
    config = RulesConfig(**kwargs)
    table = Table.deal(config, seed=seed)
    rng = np.random.default_rng(seed)
    out = [f"# golden playthrough {name}: regenerate with `python tests/golden.py --write`",
           (f"# RulesConfig(**{kwargs!r}); Table.deal(config, seed={seed}); "
            f"choices: numpy default_rng({seed})"),
           f"# seats {config.num_seats}, teams of seats {list(config.seat_team)}"]
    for _ in range(ticks):
        if table.hand_over:
            break
        out.append(f"== tick {table.tick}")
        obs = table.engine.observe()
        assert obs.shape[-1] == OBS_DIM, obs.shape
        moves = {}
        for seat in range(config.num_seats):
            mask = table.action_mask(seat)
            legal = [(int(a), table.decode(int(a), seat)) for a in np.flatnonzero(mask)]
            out.append(f"  seat {seat} legal: " + " | ".join(f"{a} {m}" for a, m in legal))
            out.extend(format_observation(obs[0, seat]))
            if illegal_share and rng.random() < illegal_share:
                a, move = _illegal_pick(rng, table, seat, mask)
                tag = " (illegal)"
            else:
                pool = [x for x in legal if _scoring(x[1])]
                if not pool or rng.random() >= PREFER_SCORING:
                    pool = legal
                a, move = pool[rng.integers(len(pool))]
                tag = ""
            if str(move) != "wait":
                moves[seat] = move
            out.append(f"  seat {seat} plays {a} {move}{tag}")
        priority = None if rng.random() < 0.5 else [int(x) for x in
                                                    rng.permutation(config.num_seats)]
        result = table.step(moves, priority=priority)
        applied = " ".join(f"{s}={int(result.applied[s])}" for s in sorted(result.applied))
        out.append(f"  priority {priority if priority is not None else 'table rng'}"
                   f" | applied {applied} | callers {result.callers}"
                   f" | hand_over {int(result.hand_over)} truncated {int(result.truncated)}"
                   f" | scores {table.hand_scores()}")
    out.append(f"== end at tick {table.tick}: hand_over {int(table.hand_over)} "
               f"truncated {int(table.truncated)} scores {table.hand_scores()}")
    return "\n".join(out) + "\n"


def path_of(name: str) -> Path:
    return GOLDEN_DIR / f"{name}.txt"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description="Regenerate or check the golden playthroughs "
                                             "of tests/golden/ (see this module's docstring).")
    ap.add_argument("--write", action="store_true", help="rewrite the files")
    args = ap.parse_args(argv)
    stale = 0
    for name in CONFIGS:
        text, path = play(name), path_of(name)
        if args.write:
            GOLDEN_DIR.mkdir(exist_ok=True)
            path.write_text(text)
            print(f"wrote {path} ({len(text):,} bytes)")
        elif not path.exists() or path.read_text() != text:
            stale += 1
            print(f"differs: {path} (run with --write to regenerate)")
    return 1 if stale else 0


if __name__ == "__main__":
    sys.exit(main())
