"""explain_illegal names the rule that forbids a move: one test per reason, from layouts, and
a check over random play that it calls a move legal exactly when the Table does."""
from __future__ import annotations

import numpy as np
import pytest

from nertz_env import RulesConfig, Table
from nertz_env.actions import STACK0, decode_simple
from nertz_env.table.explain import explain_illegal

OTHER = {"nertz": ["QD"], "river": [["KD"], [], [], []], "stream": ["3D"], "waste": 0}
MINE = {"nertz": ["KH", "9H"], "river": [["KS"], ["9D"], ["QC", "JH", "10S"], ["6S"]],
        "stream": ["4C", "8C", "7H"], "waste": 2}
LAKE = [["AC@1", "2C@1", "3C@1", "4C@1", "5C@1"], ["AH", "2H", "3H", "4H"]]


def table(mine=MINE, lake=LAKE, config=None, other=OTHER, **keys):
    return Table.from_layout({"lake": lake, "teams": [mine, other], **keys}, config=config)


def with_(**changes):
    return {**MINE, **changes}


@pytest.mark.parametrize("move, expected", [
    ("waste>lake", "R10: the Lake pile of clubs needs 6C next, not 8C"),
    ("nertz>lake", "R10: the Lake pile of hearts needs 5H next, not 9H"),
    ("river3>lake", "R10: 6S needs 5S on top of a spades Lake pile, and no spades pile is open"),
    ("waste>river0", "R11: 8C goes on a red 9 (9H or 9D); River column 0's top is KS"),
    ("river2:1>river0", "R14: JH goes on a black Q (QS or QC); River column 0's top is KS"),
    ("river2:5>river1", "R14: River column 2 holds 3 cards (index 0..2), not index 5"),
    ("river2:1>lake", "R9: JH is not an available card: 1 card covers it in River column 2"),
    ("waste>river4", "R5: this table's River has columns 0..3, not 4"),
    ("call", "R24: call is a move only with auto_nertz=False"),
    ("nertz+waste>lake", ("R16: a stack is an ascending run of one suit, bottom card first; "
                          "8C does not follow 9H")),
    ("jump", "docs/api.md: move 'jump' does not parse"),
])
def test_each_reason_on_one_position(move, expected):
    assert explain_illegal(table(), 0, move).startswith(expected)


def test_legal_moves_get_an_empty_reason():
    t = table()
    for move in t.legal_moves(0):
        assert explain_illegal(t, 0, move) == ""
        assert explain_illegal(t, 0, str(move)) == ""


def test_r10_names_what_each_pile_of_the_suit_needs_once():
    lake = LAKE + [["AH@1", "2H@1"], ["AH@2", "2H@2"]]
    other = {**OTHER, "nertz": ["QD"]}
    t = Table.from_layout({"lake": lake, "teams": [MINE, other, {**OTHER, "nertz": ["JD"]}]})
    assert explain_illegal(t, 0, "nertz>lake") == ("R10: the Lake piles of hearts need 5H or 3H "
                                                    "next, not 9H")


def test_r9_empty_sources():
    t = table(with_(waste=0, river=[["KS"], ["9D"], [], ["6S"]]))
    assert explain_illegal(t, 0, "waste>lake").startswith("R9: no Stream card is available")
    assert explain_illegal(t, 0, "river2>lake").startswith("R9: River column 2 is empty")
    t = table(with_(nertz=[]), config=RulesConfig(auto_nertz=False))
    assert explain_illegal(t, 0, "nertz>river2").startswith("R9: the Nertz pile is empty")


def test_r11_no_ace_on_the_river_and_kings_only_in_empty_columns():
    t = table(with_(stream=["4C", "AS", "7H"]), config=RulesConfig(flow_rules=False))
    assert explain_illegal(t, 0, "waste>river1").startswith("R11: AS is an ace")
    t = table(with_(nertz=["9H", "KH"]))
    assert explain_illegal(t, 0, "nertz>river0").startswith("R11: nothing ranks above a king")


def test_r14_whole_column_into_an_empty_one():
    t = table(with_(river=[["KS"], ["9D"], [], ["6S"]]))
    assert explain_illegal(t, 0, "river1:0>river2").startswith(
        "R14: moving the whole of River column 1 into an empty column")


def test_r4_only_the_stream_seat_flips():
    cfg = RulesConfig(team_sizes=(2, 1))
    t = table(config=cfg)
    assert explain_illegal(t, 1, "flip") == ""             # hand 0: the second seat streams
    assert explain_illegal(t, 0, "flip").startswith("R4: only the Stream seat flips; this hand "
                                                    "seat 1 holds team 0's Stream")
    t = table(config=cfg, hand=1)                          # roles swap every hand
    assert explain_illegal(t, 0, "flip") == ""
    assert explain_illegal(t, 1, "flip").startswith("R4:")


def test_r15_flip_needs_a_stream():
    t = table(with_(stream=[], waste=0))
    assert explain_illegal(t, 0, "flip").startswith("R15: the Stream is empty")


def test_r16_stacking_off():
    mine = with_(nertz=["KH", "6H"], stream=["4C", "5H"], waste=2)
    assert explain_illegal(table(mine), 0, "waste+nertz>lake") == ""
    t = table(mine, config=RulesConfig(stacking=False))
    assert explain_illegal(t, 0, "waste+nertz>lake").startswith("R16: stacking is off")


def test_r18_an_available_ace_goes_first():
    t = table(with_(stream=["4C", "AS", "7H"]))
    assert explain_illegal(t, 0, "waste>lake") == ""
    assert explain_illegal(t, 0, "nertz>river2").startswith("R18: the available ace AS must go "
                                                            "to the Lake first")


def test_r19_a_playable_nertz_card_goes_first():
    t = table(with_(nertz=["KH", "5H"]))
    assert explain_illegal(t, 0, "nertz>lake") == ""
    assert explain_illegal(t, 0, "waste>river1").startswith("R19: the top Nertz card 5H can go "
                                                            "to the Lake")


def test_r21_a_busy_seat_waits():
    t = table(ready=[12, 0], tick=3, config=RulesConfig(speeds=(3, 1), move_ticks={"shift": 3}))
    assert explain_illegal(t, 0, "waste>river1") == "R21: seat 0 is busy until tick 12 (now " \
                                                    "tick 3); until then its only move is wait"
    assert explain_illegal(t, 0, "wait") == ""


def test_r24_r26_the_hand_is_over():
    t = table(with_(nertz=["AS"]))
    t.step({0: "nertz>lake"})
    assert explain_illegal(t, 0, "flip") == "R24: the hand is over: team 0 called Nertz"
    t = table(config=RulesConfig(max_ticks=1))
    t.step({})
    assert explain_illegal(t, 0, "flip").startswith("R26: the hand is over: max_ticks=1")


def test_r24_call_needs_an_empty_nertz_pile():
    t = table(config=RulesConfig(auto_nertz=False))
    assert explain_illegal(t, 0, "call").startswith("R24: call needs an empty Nertz pile; "
                                                    "team 0 still has 2 cards")


def test_a_seat_that_does_not_exist_is_a_value_error():
    with pytest.raises(ValueError, match="seat 5"):
        explain_illegal(table(), 5, "flip")


@pytest.mark.parametrize("cfg", [
    RulesConfig(num_teams=2, max_ticks=25),
    RulesConfig(num_teams=3, team_sizes=(2, 1, 1), speeds=(1, 2, 1, 3), max_ticks=25),
    RulesConfig(num_teams=2, auto_nertz=False, stacking=False, max_ticks=25),
], ids=["2teams", "pairs-speeds", "call-nostack"])
def test_agrees_with_the_table_over_random_play(cfg):
    """Every non-stack action's move and some stacks: '' exactly when the Table says legal,
    and never the catch-all R31 (each refusal has a specific rule)."""
    cands = [str(decode_simple(a)) for a in range(STACK0)]
    cands = [c for c in cands if "river4" not in c]
    cands += ["nertz+waste>lake", "waste+river0>lake", "river0+river1+nertz>lake",
              "river1:2>lake"]
    t = Table.deal(cfg, seed=3)
    rng = np.random.default_rng(3)
    while not t.hand_over:
        for seat in range(cfg.num_seats):
            for c in cands:
                why = explain_illegal(t, seat, c)
                try:
                    ok = t.is_legal(seat, c)
                except ValueError:
                    ok = False
                assert (why == "") == ok, (seat, c, why)
                assert not why.startswith("R31"), (seat, c, why)
        t.step({s: (lm := t.legal_moves(s))[rng.integers(len(lm))] for s in range(cfg.num_seats)})
