"""Shared test helpers: random configs, random decks, random legal play over the Table API."""
from __future__ import annotations

import numpy as np

from nertz_env import RulesConfig

CARD_TEXT = [r + s for s in "SHDC" for r in
             ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")]


def random_config(rng: np.random.Generator, **over) -> RulesConfig:
    """A config drawn across every variant the differential test must cover."""
    teams = int(rng.integers(2, 9))
    sizes = None
    if rng.random() < 0.4:
        sizes = tuple(int(x) for x in rng.integers(1, 3, size=teams))
    seats = sum(sizes) if sizes else teams
    speeds = tuple(int(x) for x in rng.integers(1, 4, size=seats)) if rng.random() < 0.3 else None
    move_ticks = None
    if rng.random() < 0.3:
        move_ticks = {k: int(rng.integers(1, 4)) for k in ("flip", "lake", "river", "shift")}
    kw = dict(
        num_teams=teams, team_sizes=sizes, river_size=int(rng.choice([4, 5])),
        stacking=bool(rng.random() < 0.7), flow_rules=bool(rng.random() < 0.7),
        auto_nertz=bool(rng.random() < 0.8), alternate_roles=bool(rng.random() < 0.8),
        illegal_move=str(rng.choice(["raise", "penalize", "ignore"])),
        speeds=speeds, move_ticks=move_ticks, max_ticks=int(rng.integers(40, 400)),
    )
    kw.update(over)
    return RulesConfig(**kw)


def random_decks(rng: np.random.Generator, teams: int) -> list[list[str]]:
    return [[CARD_TEXT[c] for c in rng.permutation(52)] for _ in range(teams)]


def pick_moves(rng, legal_by_seat: list[list[str]], flip_bias: float = 0.4) -> dict:
    """Random legal moves; flips are favoured so Streams turn over and idle burns happen."""
    moves = {}
    for seat, legal in enumerate(legal_by_seat):
        if "flip" in legal and rng.random() < flip_bias:
            moves[seat] = "flip"
        else:
            moves[seat] = legal[int(rng.integers(len(legal)))]
    return moves
