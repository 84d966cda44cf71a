"""Whole games (R30, D21) on the batched core.

`play_games(config, n_games, seed)` plays n_games complete games at once, one per table,
inside numba (uniformly random legal moves until the agents issue brings jitted bots);
`play_game` is the one-game view. Hands are numbered 0, 1, ... so two-player teams swap
roles every hand (R4), hand scores add up to totals, and `decide_winner` applies the NNA
tie-breaks: more Nertz calls, then another hand for the whole table.
"""
from __future__ import annotations

import numpy as np

from ..config import RulesConfig
from ..core.batch import play_random_games_batch
from ..core.scoring import decide_winner as _decide_winner
from ..engine import Engine

MAX_HANDS = 400   # a safety cap; random play at target 150 needs far fewer (winner -1 if hit)


def decide_winner(totals, calls, target_score: int) -> int | None:
    """R30: the winning team once a total reaches target_score and one team leads on
    (total, Nertz calls); None while the game goes on."""
    totals = np.asarray(totals, dtype=np.int64)
    calls = np.asarray(calls, dtype=np.int64)
    if totals.shape != calls.shape or totals.ndim != 1 or len(totals) < 2:
        raise ValueError("totals and calls must be equal-length lists, one entry per team")
    w = int(_decide_winner(totals, calls, int(target_score)))
    return None if w < 0 else w


def play_games(config: RulesConfig | None = None, n_games: int = 1, seed=0,
               policy: str = "random", max_hands: int = MAX_HANDS) -> list[dict]:
    """Play n_games whole games in parallel; one dict per game (see play_game)."""
    if policy != "random":
        raise ValueError(f"policy={policy!r}: only 'random' exists until the agents issue lands")
    eng = Engine(config, n_games, seed)
    T = eng.config.num_teams
    scores = np.zeros((n_games, max_hands, T), np.int64)
    n_hands = np.zeros(n_games, np.int64)
    calls = np.zeros((n_games, T), np.int64)
    winners = np.zeros(n_games, np.int64)
    policy_rng = eng.np_random.integers(0, 2**63, size=n_games, dtype=np.uint64)
    eng.run_kernel(play_random_games_batch, None, eng.masks, eng.actions, eng.priority,
                   eng.applied, policy_rng, scores, n_hands, calls, winners)
    out = []
    for g in range(n_games):
        hs = scores[g, :n_hands[g]].tolist()
        out.append({
            "hand_scores": hs,
            "totals": scores[g, :n_hands[g]].sum(axis=0).tolist(),
            "calls": calls[g].tolist(),
            "winner": None if winners[g] < 0 else int(winners[g]),
            "hands": int(n_hands[g]),
        })
    return out


def play_game(config: RulesConfig | None = None, seed=0, policy: str = "random") -> dict:
    """One whole game: {"hand_scores": per-hand lists, "totals", "calls", "winner", "hands"}."""
    return play_games(config, 1, seed, policy)[0]
