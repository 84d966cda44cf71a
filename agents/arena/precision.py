"""The one precision loop of tournaments and experiments: play blocks of deals until the
widest 95% half-width reaches a target, or a cap.

Deals are played in blocks, deals 0..n-1 first (n = the run's `deals`), then n..n'-1 and so
on, until the widest half-width w (ci_high - ci_low) / 2 of what the run measures (a
tournament: every paired difference; an experiment: every treatment's headline outcome)
is <= the target h, or the cap of deals is played. The next count n' is the need projected
from w (half-widths shrink as 1/sqrt(deals)): ceil(1.1 n (w/h)^2), at least n + n/4, at
most 4n, at most the cap. Since deal d's keys depend only on (seed, d) and the rows are put
in (lineup, deal, seating) order, the result equals a plain run with the final deal count.

Plays nothing itself: the caller's `play` callback does.
"""
from __future__ import annotations

import math
from typing import Callable, NamedTuple

from .play import Block


class Played(NamedTuple):
    block: Block             # every table played, in (lineup, deal, seating) order
    deal_blocks: list        # deals per lineup played after each block (the last: the total)


def half_width(pair) -> float:
    """The 95% half-width of a row with ci_low and ci_high (NaN stays NaN: never within a
    target)."""
    return (pair["ci_high"] - pair["ci_low"]) / 2.0


def next_deals(n: int, widest: float, target: float, cap: int) -> int:
    """The deal count of the next block (module docstring: projected need, clipped)."""
    want = math.ceil(1.1 * n * (widest / target) ** 2) if math.isfinite(widest) else 2 * n
    return min(cap, max(n + max(1, n // 4), min(4 * n, want)))


def play_to_precision(play: Callable[[int, int], Block], deals: int,
                      precision: float | None = None, cap: int | None = None,
                      widest: Callable[[Block], float] | None = None,
                      grow: Callable[[int], None] | None = None) -> Played:
    """play(lo, hi) plays deals lo..hi-1 and returns their Block. Without a precision: one
    block of `deals` deals. With one: blocks until widest(all rows so far) <= precision or
    `cap` deals are played; grow(k) is told of each new block's k deals (a progress bar)."""
    parts, blocks, lo, hi = [], [], 0, deals
    while True:
        parts.append(play(lo, hi))
        blocks.append(hi)
        block = Block.concat(parts).sorted()
        if precision is None:
            return Played(block, blocks)
        w = widest(block)
        if w <= precision or hi >= cap:
            return Played(block, blocks)
        lo, hi = hi, next_deals(hi, w, precision, cap)
        if grow is not None:
            grow(hi - lo)
