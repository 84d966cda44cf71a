"""Whole games (R30, D21) on the batched core.

`play_games(config, n_games, seed, policy)` plays n_games complete games at once, one per
table, inside numba, with the core bots `policy` names (nertz_env/bot_specs.py: random,
greedy, heuristic:...; one spec for every seat or one per seat); `play_game` is the one-game
view. Hands are numbered 0, 1, ... so two-player teams swap roles every hand (R4), hand
scores add up to totals, and `decide_winner` applies the NNA tie-breaks: more Nertz calls,
then another hand for the whole table.

All-random tables play core/batch.py's play_random_games_batch (cards, priorities and moves
from the engine's generators); any other bot plays play_bots_batch, the tournaments' kernel,
whose cards and priority orders come from keys drawn once per game from the engine's seed.
"""
from __future__ import annotations

import numpy as np

from ..bot_specs import seat_bots
from ..config import RulesConfig
from ..core.batch import play_bots_batch, play_bots_range, play_random_games_batch
from ..core.policies import POLICY_RANDOM
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


def _random_games(eng: Engine, max_hands: int):
    """(hand scores [G, H, T], hands [G], calls [G, T], winners [G]) of all-random play."""
    n, T = eng.n_tables, eng.config.num_teams
    scores = np.zeros((n, max_hands, T), np.int64)
    n_hands = np.zeros(n, np.int64)
    calls = np.zeros((n, T), np.int64)
    winners = np.zeros(n, np.int64)
    policy_rng = eng.np_random.integers(0, 2**63, size=n, dtype=np.uint64)
    eng.run_kernel(play_random_games_batch, None, eng.masks, eng.actions, eng.priority,
                   eng.applied, policy_rng, scores, n_hands, calls, winners)
    return scores, n_hands, calls, winners


def _bot_games(eng: Engine, kinds, knobs, max_hands: int):
    """As _random_games, every table seating the bots kinds [S] / knobs [S, K]."""
    n, S, T = eng.n_tables, eng.config.num_seats, eng.config.num_teams
    deal_keys, prio_keys, policy_rng = eng.np_random.integers(
        0, 2**63, size=(3, n), dtype=np.uint64)
    scores = np.zeros((n, max_hands, T), np.int64)
    n_hands = np.zeros(n, np.int64)
    hand_calls = np.zeros((n, max_hands, T), np.int8)
    winners = np.zeros(n, np.int64)
    ticks = np.zeros((n, max_hands), np.int64)
    eng.run_kernel(play_bots_batch, play_bots_range, eng.masks, eng.actions, eng.priority,
                   eng.applied, policy_rng, np.broadcast_to(kinds, (n, S)).copy(),
                   np.broadcast_to(knobs, (n, *knobs.shape)).copy(), deal_keys.copy(),
                   prio_keys.copy(), np.zeros(n, np.int64), True, scores, n_hands, hand_calls,
                   winners, ticks)
    return scores, n_hands, hand_calls.sum(axis=1, dtype=np.int64), winners


def play_games(config: RulesConfig | None = None, n_games: int = 1, seed=0,
               policy="random", max_hands: int = MAX_HANDS) -> list[dict]:
    """Play n_games whole games in parallel; one dict per game (see play_game).
    policy: the core bots (nertz_env/bot_specs.py), one spec for every seat or one per seat
    in seat order, as a comma-separated string or a list; a bad spec is a ValueError naming
    it. All random (the default) plays exactly as before bots could be seated."""
    eng = Engine(config, n_games, seed)                # checks config, n_games and seed
    kinds, knobs, _ = seat_bots(policy, eng.config.num_seats, where="policy")
    if (kinds == POLICY_RANDOM).all():
        scores, n_hands, calls, winners = _random_games(eng, max_hands)
    else:
        scores, n_hands, calls, winners = _bot_games(eng, kinds, knobs, max_hands)
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


def play_game(config: RulesConfig | None = None, seed=0, policy="random") -> dict:
    """One whole game: {"hand_scores": per-hand lists, "totals", "calls", "winner", "hands"}."""
    return play_games(config, 1, seed, policy)[0]
