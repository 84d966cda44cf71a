"""agents/python_policies.py: the plain-Python oracle of docs/heuristics.md, scenario by scenario.

Each test builds a small readable position (docs/api.md layouts, partial decks, flow rules off
unless said otherwise so that the legal set is exactly the moves under test), reads seat 0's
observation and mask, and checks the exact scores of the spec's table and the exact move chosen.
The legal set of every position is asserted first, so a test cannot pass on a position that
does not offer the moves it is about.

Observation: Table has no per-seat observation accessor, so the tests read it from the public
`table.engine` (Engine.observe(seat) -> float32 [1, 1, OBS_DIM]); the mask is
`table.action_mask(seat)`.
"""
from __future__ import annotations

import copy

import numpy as np
import pytest

from agents.python_policies import (KNOB_NAMES, NEVER_SCORE, action_scores, choose_action,
                                    decode_action)
from nertz_env import Move, RulesConfig, Table
from nertz_env import actions as act
from nertz_env.core.observe import OBS_DIM

STYLES = {   # the knob rows of docs/heuristics.md when this test was written (fixtures)
    #              ln   ls   lr  eb  nr  wr  wru  se  sx  fl ws wr
    "greedy":        (100, 100, 100, 0, 50, -1, -1, -1, -1, 10, 0, 0),
    "balanced":      (100, 70, 60, 30, 90, 5, 80, 85, 75, 10, 1, 1),
    "lake-rush":     (100, 95, 95, 0, 50, -1, 40, 30, 25, 10, 0, 0),
    "river-builder": (95, 50, 30, 40, 100, 20, 88, 90, 85, 10, 1, 1),
    "cautious":      (100, 70, 60, 30, 90, 5, 80, 85, 75, 10, 2, 1),
}
GREEDY, BALANCED = STYLES["greedy"], STYLES["balanced"]

REDS = [["KH"], ["KD"], ["QH"], ["QD"]]
OTHER = {"nertz": ["KD"], "river": [["KS"], ["KC"], ["QS"], ["QC"]], "stream": [], "waste": 0}
SPADES_TO_5 = ["AS@1", "2S@1", "3S@1", "4S@1", "5S@1"]


def knobs(style=BALANCED, **over):
    k = dict(zip(KNOB_NAMES, style))
    for name, value in over.items():
        assert name in k, name
        k[name] = value
    return [k[name] for name in KNOB_NAMES]


class Position:
    """Seat 0 of a two-team table built from team 0's piles (team 1 can only wait)."""

    def __init__(self, nertz, river=REDS, stream=(), waste=0, lake=(), **config):
        layout = {"lake": [list(p) for p in lake],
                  "teams": [{"nertz": list(nertz), "river": [list(c) for c in river],
                             "stream": list(stream), "waste": waste}, copy.deepcopy(OTHER)]}
        cfg = dict(num_teams=2, river_size=len(river), flow_rules=False)
        cfg.update(config)
        self.table = Table.from_layout(layout, config=RulesConfig(**cfg))
        self.obs = self.table.engine.observe(0)[0, 0].copy()
        self.mask = self.table.action_mask(0)

    def legal(self):
        return {str(m) for m in self.table.legal_moves(0)}

    def scores(self, k):
        return action_scores(self.obs, self.mask, k)

    def score(self, k, move):
        return int(self.scores(k)[self.table.encode(move)])

    def choice(self, k):
        a = choose_action(self.obs, self.mask, k)
        assert self.mask[a] or a == act.WAIT
        return str(self.table.decode(a, 0))


def aid(text):
    return act.encode_move(Move.parse(text))


# ------------------------------------------------------------------ numbering and validation
def test_action_numbering_matches_actions_py():
    for a in range(act.N_ACTIONS):
        mine = decode_action(a)
        ref = act.decode_simple(a)
        if isinstance(ref, tuple):
            assert mine == ref
        elif ref.kind in ("wait", "flip", "call"):
            assert mine == (ref.kind,)
        elif ref.kind == "lake":
            assert mine == ("lake", ref.sources[0])
        elif ref.kind == "build":
            assert mine == ("build", ref.sources[0], ref.dst)
        else:
            assert mine == ("shift", ref.sources[0] - 2, ref.index, ref.dst)
    assert aid("river2:0>river0") == 124 and decode_action(124) == ("shift", 2, 0, 0)
    assert aid("river0+nertz+waste>lake") == act.STACK0 + 6 * 2 + 1 == 293


def test_input_validation_names_the_argument():
    p = Position(["KC", "AS"], stream=["KS"])
    with pytest.raises(ValueError, match="observation"):
        choose_action(p.obs[:-1], p.mask, BALANCED)
    with pytest.raises(ValueError, match="observation"):
        action_scores(p.obs[None, :], p.mask, BALANCED)
    with pytest.raises(ValueError, match="action_mask"):
        choose_action(p.obs, p.mask[:-1], BALANCED)
    with pytest.raises(ValueError, match="action_mask"):
        action_scores(p.obs, np.ones((2, 322), bool), BALANCED)
    with pytest.raises(ValueError, match="knobs"):
        choose_action(p.obs, p.mask, BALANCED[:-1])
    with pytest.raises(ValueError, match="knobs"):
        choose_action(p.obs, p.mask, BALANCED + (0,))
    with pytest.raises(ValueError, match="knobs"):
        choose_action(p.obs, p.mask, [1.5] * 12)
    assert OBS_DIM == 791 and act.N_ACTIONS == 322


def test_illegal_actions_get_the_sentinel_and_wait_scores_zero():
    p = Position(["KC", "AS"], stream=["KS"])
    assert p.legal() == {"flip", "nertz>lake", "wait"}
    s = p.scores(BALANCED)
    assert s.dtype == np.int64 and s.shape == (322,)
    legal = np.flatnonzero(p.mask)
    assert sorted(legal) == [0, 1, 3]
    assert s[0] == 0 and s[1] == 10 and s[3] == 100
    assert (np.delete(s, legal) == NEVER_SCORE).all()
    # knobs may be any int sequence, numpy included
    assert choose_action(p.obs, p.mask.astype(np.int8), np.array(BALANCED)) == 3


# ------------------------------------------------------------------ one row of the table each
def test_call_scores_10000():
    p = Position([], stream=["2S"], waste=1, lake=[["AS@1"]], auto_nertz=False)
    assert p.legal() == {"call", "flip", "waste>lake", "wait"}
    assert p.score(BALANCED, "call") == 10000
    assert p.choice(knobs(lake_stream=9999, flip=9999)) == "call"


def test_flip_scores_k_flip():
    p = Position(["KC", "AS"], stream=["KS"])
    assert p.choice(knobs(lake_nertz=5)) == "flip"           # 10 > 5
    assert p.score(knobs(flip=37), "flip") == 37
    assert p.choice(knobs(lake_nertz=-1, flip=-1)) == "wait"  # nothing scores above Wait


def test_nertz_to_lake_scores_k_lake_nertz():
    p = Position(["KC", "AS"], stream=["KS"])
    assert p.score(BALANCED, "nertz>lake") == 100
    assert p.choice(BALANCED) == "nertz>lake"
    assert p.choice(knobs(lake_nertz=11)) == "nertz>lake"     # 11 > flip 10
    assert p.choice(knobs(lake_nertz=9)) == "flip"


@pytest.mark.parametrize("useful", [True, False])
@pytest.mark.parametrize("withhold", [0, 1, 2])
def test_waste_to_lake_and_withhold_stream(withhold, useful):
    # W = 6S goes on the spade pile; N = 5H fits on 6S (useful), N = 5C does not.
    p = Position(["KC", "5H" if useful else "5C"], stream=["6S"], waste=1, lake=[SPADES_TO_5])
    assert p.legal() == {"flip", "waste>lake", "wait"}
    k = knobs(withhold_stream=withhold)
    withheld = withhold == 2 or (withhold == 1 and useful)
    assert p.score(k, "waste>lake") == (1 if withheld else 70)
    assert p.choice(k) == ("flip" if withheld else "waste>lake")
    # with flip never, a withheld Stream card still beats Wait (score 1)
    assert p.choice(knobs(withhold_stream=withhold, flip=-1)) == "waste>lake"


@pytest.mark.parametrize("river_takes_w", [True, False])
@pytest.mark.parametrize("useful", [True, False])
def test_withhold_stream_keep_keeps_only_a_card_the_river_can_take(useful, river_takes_w):
    # W = 6S: Lake (spades to 5) and, when column 0 is 7H, River. N = 5H fits on 6S (useful).
    river = [["7H" if river_takes_w else "KH"], ["KD"], ["QH"], ["QD"]]
    p = Position(["KC", "5H" if useful else "5C"], river=river, stream=["6S"], waste=1,
                 lake=[SPADES_TO_5])
    assert p.legal() == {"flip", "waste>lake", "wait"} | ({"waste>river0"} if river_takes_w else set())
    keep = knobs(withhold_stream=3)
    kept = useful and river_takes_w
    assert p.score(keep, "waste>lake") == (1 if kept else 70)
    # kept: onto the River (N follows it); not placeable: to the Lake, never under a Flip
    assert p.choice(keep) == ("waste>river0" if kept else "waste>lake")
    # when-useful keeps a useful card even when the River cannot take it: the Flip buries it
    if useful and not river_takes_w:
        assert p.choice(knobs(withhold_stream=1)) == "flip"


def test_river_to_lake_empty_bonus():
    # column 0: 6C 5H (5H -> hearts pile), column 1: 7S alone (-> spades pile, empties it)
    lake = [SPADES_TO_5 + ["6S@1"], ["AH@1", "2H@1", "3H@1", "4H@1"]]
    p = Position(["KC", "10C"], river=[["6C", "5H"], ["7S"], ["KD"], ["QD"]], lake=lake)
    assert p.legal() == {"river0>lake", "river1>lake", "wait"}
    assert p.score(BALANCED, "river0>lake") == 60
    assert p.score(BALANCED, "river1>lake") == 90             # 60 + empty bonus 30
    assert p.choice(BALANCED) == "river1>lake"
    # no bonus: a tie at 60, the lowest id wins
    assert p.choice(knobs(empty_bonus=0)) == "river0>lake"
    # no Nertz card left: no bonus either
    obs = p.obs.copy()
    obs[0:6] = 0
    s = action_scores(obs, p.mask, BALANCED)
    assert s[aid("river1>lake")] == 60
    assert choose_action(obs, p.mask, BALANCED) == aid("river0>lake")


@pytest.mark.parametrize("withhold", [0, 1])
def test_river_to_lake_withhold_river(withhold):
    # N = 4C fits on the River top 5H: withheld (score 1) under withhold_river 1
    lake = [SPADES_TO_5 + ["6S@1"], ["AH@1", "2H@1", "3H@1", "4H@1"]]
    p = Position(["KC", "4C"], river=[["6C", "5H"], ["7S"], ["KD"], ["QD"]], lake=lake,
                 stream=["KS"])
    assert p.legal() == {"flip", "nertz>river0", "river0>lake", "river1>lake", "wait"}
    k = knobs(nertz_river=-1, empty_bonus=-100, withhold_river=withhold)
    assert p.score(k, "river0>lake") == (1 if withhold else 60)
    assert p.score(k, "river1>lake") == -40                   # 60 - 100, N does not fit 7S
    assert p.choice(k) == ("flip" if withhold else "river0>lake")
    # the bonus column 7S is never withheld: N does not fit on it
    assert p.score(knobs(withhold_river=withhold), "river1>lake") == 90


def test_stack_containing_nertz():
    # lake AH; River 3S 2H; N = 3H; W = 4H: stacks 2H+3H and 2H+3H+4H
    p = Position(["KC", "3H"], river=[["3S", "2H"], ["KD"], ["QH"], ["QD"]], stream=["4H"],
                 waste=1, lake=[["AH@1"]])
    assert p.legal() == {"flip", "river0+nertz+waste>lake", "river0+nertz>lake", "river0>lake",
                         "wait"}
    assert p.score(BALANCED, "river0+nertz>lake") == 102
    assert p.score(BALANCED, "river0+nertz+waste>lake") == 103
    assert p.score(BALANCED, "river0>lake") == 60
    assert p.choice(BALANCED) == "river0+nertz+waste>lake"
    assert choose_action(p.obs, p.mask, BALANCED) == 293
    # k_lake_nertz scores the stack, not k_lake_river: with lake_nertz low, the River card wins
    assert p.choice(knobs(lake_nertz=50)) == "river0>lake"    # 60 > 53
    # never: a stack with N is not played when k_lake_nertz is -1 (no +L on top of it)
    assert p.score(knobs(lake_nertz=-1), "river0+nertz>lake") == -1
    assert p.choice(knobs(lake_nertz=-1, lake_river=-1)) == "flip"


@pytest.mark.parametrize("withhold", [0, 1, 2])
def test_stack_containing_waste(withhold):
    # lake AH; River 3S 2H; W = 3H; N = 2C fits on 3H (useful); stack 2H+3H has no N
    p = Position(["KC", "2C"], river=[["3S", "2H"], ["KD"], ["QH"], ["QD"]], stream=["3H"],
                 waste=1, lake=[["AH@1"]])
    assert p.legal() == {"flip", "river0+waste>lake", "river0>lake", "wait"}
    k = knobs(withhold_stream=withhold)
    assert p.score(k, "river0>lake") == 60                     # N = 2C does not fit on 2H
    if withhold == 0:
        assert p.score(k, "river0+waste>lake") == 62
        assert p.choice(k) == "river0+waste>lake"
    else:
        assert p.score(k, "river0+waste>lake") == 1
        assert p.choice(k) == "river0>lake"


def test_stack_containing_waste_not_useful_is_not_withheld():
    # the same stack with N = 9S, which does not fit on W = 3H: useful(W) is false
    p = Position(["KC", "9S"], river=[["3S", "2H"], ["KD"], ["QH"], ["QD"]], stream=["3H"],
                 waste=1, lake=[["AH@1"]])
    assert p.legal() == {"flip", "river0+waste>lake", "river0>lake", "wait"}
    assert p.score(BALANCED, "river0+waste>lake") == 62
    assert p.choice(BALANCED) == "river0+waste>lake"
    assert p.choice(STYLES["cautious"]) == "river0>lake"      # never: the stack scores 1


def test_stack_run_ends_at_its_length():
    # N = 4H lies just above the 2-card stack 2H+3H: that stack does not contain N
    p = Position(["KC", "4H"], river=[["3S", "2H"], ["KD"], ["QH"], ["QD"]], stream=["3H"],
                 waste=1, lake=[["AH@1"]])
    assert p.legal() == {"flip", "river0+waste+nertz>lake", "river0+waste>lake", "river0>lake",
                         "wait"}
    assert p.score(BALANCED, "river0+waste>lake") == 62
    assert p.score(BALANCED, "river0+waste+nertz>lake") == 103
    assert p.choice(BALANCED) == "river0+waste+nertz>lake"


def test_nertz_to_river_build_beats_fill():
    p = Position(["KC", "9C"], river=[[], ["10H"], ["KD"], ["QD"]])
    assert p.legal() == {"nertz>river0", "nertz>river1", "wait"}
    assert p.score(BALANCED, "nertz>river0") == 90             # fill
    assert p.score(BALANCED, "nertz>river1") == 91             # build: + 1
    assert p.choice(BALANCED) == "nertz>river1"
    assert p.choice(GREEDY) == "nertz>river1"                  # 51 > 50
    assert p.choice(knobs(nertz_river=-1)) == "wait"           # never, not -1 + 1 = 0


def test_nertz_fills_the_lowest_empty_column_on_a_tie():
    p = Position(["KC", "9C"], river=[["KD"], [], ["QD"], []])
    assert p.legal() == {"nertz>river1", "nertz>river3", "wait"}
    assert p.choice(BALANCED) == "nertz>river1"


@pytest.mark.parametrize("useful", [True, False])
def test_waste_to_river_useful_or_not(useful):
    # W = 6S builds on 7H; N = 5H fits on 6S (useful), N = 5C does not
    p = Position(["KC", "5H" if useful else "5C"], river=[["7H"], ["KD"], ["QH"], ["QD"]],
                 stream=["6S"], waste=1)
    assert p.legal() == {"flip", "waste>river0", "wait"}
    assert p.score(BALANCED, "waste>river0") == (80 if useful else 5)
    assert p.choice(BALANCED) == ("waste>river0" if useful else "flip")
    assert p.choice(GREEDY) == "flip"                          # greedy: -1 either way


def test_shift_that_empties_a_column():
    p = Position(["KC", "5S"], river=[["10C"], ["KD"], ["9H"], ["QD"]], stream=["KS"])
    assert p.legal() == {"flip", "river2:0>river0", "wait"}
    assert p.score(BALANCED, "river2:0>river0") == 85
    assert p.choice(BALANCED) == "river2:0>river0"
    assert choose_action(p.obs, p.mask, BALANCED) == 124
    assert p.choice(knobs(shift_empty=9)) == "flip"
    assert p.choice(GREEDY) == "flip"
    obs = p.obs.copy()                                         # no Nertz card: -1
    obs[0:6] = 0
    assert action_scores(obs, p.mask, BALANCED)[124] == -1
    assert choose_action(obs, p.mask, BALANCED) == act.FLIP


def test_shift_of_a_whole_column_into_an_empty_column_scores_minus_one():
    # never legal by R14; on a forged mask the rule still says -1 (column B empty; I == 0,
    # so no card is exposed, even though N = 8S fits on the moved 9H)
    p = Position(["KC", "8S"], river=[["10C"], [], ["9H"], ["QD"]])
    mask = p.mask.copy()
    a = aid("river2:0>river1")
    assert not mask[a]
    mask[a] = 1
    assert action_scores(p.obs, mask, BALANCED)[a] == -1


def test_shift_that_exposes_a_card_for_the_nertz_top():
    # River 10S 9H and an empty column; N = 9D fits on 10S once 9H moves away
    p = Position(["KC", "9D"], river=[["10S", "9H"], [], ["KD"], ["QD"]])
    assert p.legal() == {"nertz>river1", "river0:1>river1", "wait"}
    assert p.score(BALANCED, "river0:1>river1") == 75
    assert p.score(BALANCED, "nertz>river1") == 90
    assert p.choice(BALANCED) == "nertz>river1"
    assert p.choice(knobs(nertz_river=50)) == "river0:1>river1"
    assert p.choice(STYLES["lake-rush"]) == "nertz>river1"     # 50 > 25


def test_shift_that_neither_empties_nor_exposes_scores_minus_one():
    # N = 5S does not fit on 10S: the shift is -1 whatever the shift knobs say
    p = Position(["KC", "5S"], river=[["10S", "9H"], ["10C"], ["KD"], ["QD"]])
    assert p.legal() == {"river0:1>river1", "wait"}
    k = knobs(shift_empty=500, shift_expose=500)
    assert p.score(k, "river0:1>river1") == -1
    assert p.choice(k) == "wait"


# ------------------------------------------------------------------ styles
def test_greedy_row_lake_first_then_nertz_to_river_then_flip():
    # W = 4S -> spade pile at 3S; N = 9C builds on 10H; flip
    lake = [["AS@1", "2S@1", "3S@1"]]
    p = Position(["KC", "9C"], river=[["10H"], ["KD"], ["QH"], ["QD"]], stream=["4S"], waste=1,
                 lake=lake)
    assert p.legal() == {"flip", "nertz>river0", "waste>lake", "wait"}
    s = p.scores(GREEDY)
    assert s[aid("waste>lake")] == 100 and s[aid("nertz>river0")] == 51 and s[aid("flip")] == 10
    assert p.choice(GREEDY) == "waste>lake"
    assert p.choice(BALANCED) == "nertz>river0"                # 91 > 70
    no_lake = Position(["KC", "9C"], river=[["10H"], ["KD"], ["QH"], ["QD"]], stream=["4S"],
                       waste=1)
    assert no_lake.choice(GREEDY) == "nertz>river0"
    no_build = Position(["KC", "9C"], stream=["4S"], waste=1)
    assert no_build.choice(GREEDY) == "flip"


def test_greedy_scores_stacks_100_plus_length():
    p = Position(["KC", "3H"], river=[["3S", "2H"], ["KD"], ["QH"], ["QD"]], stream=["4H"],
                 waste=1, lake=[["AH@1"]])
    s = p.scores(GREEDY)
    assert s[aid("river0>lake")] == 100
    assert s[aid("river0+nertz>lake")] == 102 and s[aid("river0+nertz+waste>lake")] == 103
    assert p.choice(GREEDY) == "river0+nertz+waste>lake"


@pytest.mark.parametrize("style", sorted(STYLES))
def test_every_style_picks_a_legal_move_on_dealt_positions(style):
    for seed in range(3):
        t = Table.deal(RulesConfig(num_teams=3, river_size=5), seed=seed)
        obs = t.engine.observe(1)[0, 0]
        mask = t.action_mask(1)
        a = choose_action(obs, mask, STYLES[style])
        s = action_scores(obs, mask, STYLES[style])
        assert mask[a] and s[a] == s[mask].max() and a == np.flatnonzero(s == s[a])[0]
