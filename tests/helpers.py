"""Shared test helpers: readable layout pieces, random configs, random decks, random legal
play over the Table API."""
from __future__ import annotations

import copy

import numpy as np

from nertz_env import RulesConfig

# Four River columns of one colour (K, K, Q, Q): nothing builds on them from the other piles
# in the scenario tests and a card never builds on its own colour, so they add no moves.
REDS = [["KH"], ["KD"], ["QH"], ["QD"]]
BLACKS = [["KS"], ["KC"], ["QS"], ["QC"]]
# A second team with no move but Wait (Nertz KD, black River, empty Stream).
OTHER = {"nertz": ["KD"], "river": BLACKS, "stream": [], "waste": 0}


def team(nertz, river=REDS, stream=(), waste=0):
    """One team entry of a layout (fresh lists, so tests never share mutable state)."""
    return {
        "nertz": list(nertz),
        "river": [list(column) for column in river],
        "stream": list(stream),
        "waste": waste,
    }


def layout_of(teams, lake=(), **keys):
    """A layout dict over the given team entries (OTHER appended when only one is given)."""
    teams = [copy.deepcopy(entry) for entry in teams]
    if len(teams) == 1:
        teams.append(copy.deepcopy(OTHER))
    return {"lake": [list(pile) for pile in lake], "teams": teams, **keys}


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


# The replay viewer and the play page draw one table (nertz_env/web/table.js): what a page shows.
def pictured(pg, team: int) -> dict:
    """The cards a team's panel shows: River columns (every card) and the Nertz top."""
    box = pg.locator(f'.team[data-team="{team}"]')
    cols = [[c.get_attribute("data-card") for c in col.locator(".card[data-card]").all()]
            for col in box.locator(".column").all()]
    nertz = box.locator(".nertz .card[data-card]")
    return {"river": cols, "nertz": nertz.get_attribute("data-card") if nertz.count() else None}


def lake_tops(pg) -> list:
    """The top card of every started Lake pile a page shows."""
    return [c.get_attribute("data-card") for c in pg.locator(".lake-pile[data-pile] .card").all()]


def play_server(session, **kw):
    """A started PlayServer (agents/human/server.py) on `session`, its kernels compiled
    first by warm_up as `nertz play --human` does before serving (run_web): a test that
    waits seconds for a tick must not wait for a cold numba compile (CI's fresh cache)."""
    import io

    from agents.human.server import PlayServer
    from agents.human.warmup import warm_up

    warm_up(session, io.StringIO())
    return PlayServer(session, **kw).start()
