"""The numba core (through Table) agrees with the plain-Python oracle (tests/reference.py)
on the whole state, every seat's legal set and every TickResult, after every tick, over
2,000+ random hands spread across configs (2-8 teams, team sizes 1 and 2, River 4 and 5,
stacking and flow rules on/off, mixed speeds and move costs, manual Nertz calls, illegal
moves under penalize/ignore)."""
from __future__ import annotations

import numpy as np
import pytest
from helpers import pick_moves, random_config, random_decks
from reference import RefTable

from nertz_env import Table

HANDS_PER_CASE = 50
CASES = 42          # 42 x 50 = 2,100 hands


def play_both(seed: int, hands: int) -> int:
    rng = np.random.default_rng(seed)
    ticks = 0
    for h in range(hands):
        cfg = random_config(rng)
        decks = random_decks(rng, cfg.num_teams)
        hand = int(rng.integers(0, 3))
        core = Table.from_decks(decks, cfg, hand=hand)
        ref = RefTable.deal(cfg, decks, hand=hand)
        assert core.layout() == ref.layout(), f"deal differs (seed {seed}, hand {h})"
        while not core.hand_over:
            legal = []
            for seat in range(cfg.num_seats):
                mine = sorted(str(m) for m in core.legal_moves(seat))
                theirs = sorted(ref.legal_moves(seat))
                assert mine == theirs, (f"legal moves of seat {seat} differ at tick {core.tick} "
                                        f"(seed {seed}, hand {h}, {cfg})\n{core.render()}")
                legal.append(mine)
            moves = pick_moves(rng, legal)
            if cfg.illegal_move != "raise" and rng.random() < 0.05:
                seat = int(rng.integers(cfg.num_seats))
                moves[seat] = str(rng.choice(["flip", "nertz>lake", "waste>river0", "call"]))
            priority = [int(x) for x in rng.permutation(cfg.num_seats)]
            before = core.layout()
            r1 = core.step(moves, priority=priority)
            r2 = ref.step(moves, priority)
            ticks += 1
            assert r1.applied == r2["applied"], (moves, priority, before)
            assert r1.callers == r2["callers"]
            assert (r1.hand_over, r1.truncated) == (r2["hand_over"], r2["truncated"])
            assert core.layout() == ref.layout(), (f"state differs after tick {core.tick} "
                                                   f"(seed {seed}, hand {h}, {cfg})\n"
                                                   f"moves {moves} priority {priority}\n"
                                                   f"before {before}")
            assert core.hand_scores() == ref.hand_scores()
            for t in range(cfg.num_teams):
                assert core.available_cards(t) == ref.available_cards(t)
    return ticks


@pytest.mark.slow
@pytest.mark.parametrize("case", range(CASES))
def test_core_agrees_with_reference(case):
    assert play_both(1000 + case, HANDS_PER_CASE) > 0
