"""Rule scenario tests: every rule R1-R31 of docs/rules.md, read with docs/engine_contract.md.

Each test builds a small position from a readable layout (docs/api.md), lists the exact legal
moves of a seat, plays a tick with an explicit priority and compares the resulting layout with
literal expected values. The positions use partial decks so that every legal set is short and
can be checked by hand; the comments next to each expected set say why each move is (not) there.

Helpers used throughout:
- REDS / BLACKS: four River columns of one colour (K, K, Q, Q). Nothing builds on a K from the
  other piles here and a card never builds on one of its own colour, so these columns add no
  moves of their own (no shift between them, no fill, no Lake play without a pile at J or Q).
- OTHER: a second team with no move but Wait (Nertz KD, black River, empty Stream).
"""

import copy

import pytest

from nertz_env import RulesConfig, Table

from helpers import BLACKS, OTHER, REDS, layout_of, team  # noqa: F401

RANKS = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"]
FULL_DECK = [rank + suit for suit in "SHDC" for rank in RANKS]

ALL_MOVE_COSTS = {"flip": 1, "lake": 1, "river": 1, "shift": 1}


def make(teams, lake=(), config=None, hand=None, seed=0, **keys):
    """Table.from_layout over the given team entries (OTHER is appended when only one is given)."""
    layout = layout_of(teams, lake, **keys)
    teams = layout["teams"]
    if config is None:
        config = RulesConfig(num_teams=len(teams), river_size=len(teams[0]["river"]))
    if hand is None:
        return Table.from_layout(layout, config=config, seed=seed)
    return Table.from_layout(layout, config=config, seed=seed, hand=hand)


def legal(t, seat=0):
    return sorted(str(m) for m in t.legal_moves(seat))


# --------------------------------------------------------------------------------------------
# R1 cards and decks
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "card, top, ok",
    [
        ("9H", "10S", True),
        ("9D", "10C", True),
        ("9S", "10H", True),
        ("9C", "10D", True),
        ("9H", "10D", False),  # red on red
        ("9D", "10H", False),
        ("9S", "10C", False),  # black on black
        ("9C", "10S", False),
    ],
)
def test_r1_hearts_and_diamonds_are_red_spades_and_clubs_black(card, top, ok):
    t = make([team(["2D", card], river=[[top], ["KH"], ["KD"], ["KS"]])])
    # 2D lies under the Nertz top; the K columns take nothing and move nowhere.
    assert legal(t) == sorted(["wait"] + (["nertz>river0"] if ok else []))
    if ok:
        assert t.step({0: "nertz>river0"}, priority=[0]).applied == {0: True, 1: True}
        assert t.layout()["teams"][0] == team(["2D"], [[top, card], ["KH"], ["KD"], ["KS"]])


def test_r1_each_team_owns_a_deck_so_two_teams_may_hold_the_same_card_name():
    # Deck 0's AH is on the Lake, deck 1's AH is team 1's Nertz top: two different cards.
    other = team(["KD", "AH"], BLACKS)
    t = make([team(["KS"]), other], lake=[["AH"]])
    assert legal(t, 1) == sorted(["nertz>lake", "wait"])  # R18: an available ace must go to the Lake
    t.step({1: "nertz>lake"}, priority=[1])
    # A second hearts pile is started at the end of the Lake (D4) and the card keeps its deck.
    assert t.layout()["lake"] == [["AH"], ["AH@1"]]
    assert t.layout()["teams"][1] == team(["KD"], BLACKS)


# --------------------------------------------------------------------------------------------
# R2 card text
# --------------------------------------------------------------------------------------------


def test_r2_card_text_is_case_insensitive_accepts_t_and_deck_suffix_and_prints_canonically():
    layout = {
        "lake": [["ah", "2H", "3h@1"], ["As@1"]],
        "teams": [
            {
                "nertz": ["th", "Qs@0"],
                "river": [["kd"], ["Kh"], ["Tc", "9d"], ["qH"]],
                "stream": ["5c", "jD"],
                "waste": 1,
            },
            {"nertz": ["KD@1"], "river": [["ks"], ["kc"], ["qs"], ["qc"]], "stream": [], "waste": 0},
        ],
    }
    t = Table.from_layout(layout, config=RulesConfig())
    out = t.layout()
    # D1: 10 is written "10", suits upper case, "@N" only for a deck other than the default one.
    assert out["lake"] == [["AH", "2H", "3H@1"], ["AS@1"]]
    assert out["teams"][0] == team(["10H", "QS"], [["KD"], ["KH"], ["10C", "9D"], ["QH"]], ["5C", "JD"], 1)
    assert out["teams"][1] == team(["KD"], BLACKS)


@pytest.mark.parametrize("bad", ["1H", "ZZ", "11S", "10X", "H10", "AH@", "AH@X", "1O"])
@pytest.mark.parametrize("where", ["nertz", "stream"])
def test_r2_malformed_card_is_a_value_error_naming_it(bad, where):
    entry = team(["KS"])
    entry[where] = entry[where] + [bad]
    layout = {"lake": [], "teams": [entry, copy.deepcopy(OTHER)]}
    with pytest.raises(ValueError) as info:
        Table.from_layout(layout, config=RulesConfig())
    assert bad in str(info.value)


# --------------------------------------------------------------------------------------------
# R3 teams and seats
# --------------------------------------------------------------------------------------------


def test_r3_mixed_team_sizes_number_seats_team_by_team():
    config = RulesConfig(num_teams=3, team_sizes=[1, 2, 1])
    flipper = team(["KD"], BLACKS, stream=["2H"])
    t = make([copy.deepcopy(OTHER), flipper, flipper], config=config)
    # seat 0: team 0 (solo, no Stream); seats 1, 2: team 1 (Nertz seat, Stream seat); seat 3: team 2.
    assert legal(t, 0) == ["wait"]
    assert legal(t, 1) == ["wait"]
    assert legal(t, 2) == sorted(["flip", "wait"])
    assert legal(t, 3) == sorted(["flip", "wait"])
    result = t.step({2: "flip", 3: "flip"}, priority=[2, 3])
    assert result.applied == {0: True, 1: True, 2: True, 3: True}
    assert [entry["waste"] for entry in t.layout()["teams"]] == [0, 1, 1]
    assert len(t.layout()["ready"]) == 4


@pytest.mark.parametrize("num_teams", [2, 5, 8])
def test_r3_two_to_eight_teams_can_be_dealt(num_teams):
    t = Table.deal(RulesConfig(num_teams=num_teams), seed=1)
    assert len(t.layout()["teams"]) == num_teams


@pytest.mark.parametrize(
    "kwargs, field",
    [
        ({"num_teams": 1}, "num_teams"),
        ({"num_teams": 9}, "num_teams"),
        ({"num_teams": 2, "team_sizes": [1, 3]}, "team_sizes"),
        ({"num_teams": 2, "team_sizes": [0, 1]}, "team_sizes"),
    ],
)
def test_r3_team_counts_and_sizes_out_of_range_are_rejected(kwargs, field):
    with pytest.raises(ValueError) as info:
        RulesConfig(**kwargs)
    assert field in str(info.value)


# --------------------------------------------------------------------------------------------
# R4 roles in a two-player team
# --------------------------------------------------------------------------------------------

# Team 0 (seats 0 and 1): the waste card 4S fits the spades pile; KS and the red River are inert.
R4_TEAM = team(["KS"], REDS, stream=["9C", "4S"], waste=2)
R4_OTHER = team(["KD"], BLACKS, stream=["5H"])  # solo seat 2: may flip, nothing else
R4_LAKE = [["AS", "2S", "3S"]]
NERTZ_SEAT_MOVES = ["waste>lake", "wait"]
STREAM_SEAT_MOVES = ["flip", "waste>lake", "wait"]


@pytest.mark.parametrize(
    "hand, alternate, seat0, seat1",
    [
        (0, True, NERTZ_SEAT_MOVES, STREAM_SEAT_MOVES),  # even hand: first seat holds the Nertz
        (1, True, STREAM_SEAT_MOVES, NERTZ_SEAT_MOVES),  # odd hand: roles swapped
        (2, True, NERTZ_SEAT_MOVES, STREAM_SEAT_MOVES),
        (1, False, NERTZ_SEAT_MOVES, STREAM_SEAT_MOVES),  # alternate_roles=False: never swapped
    ],
)
def test_r4_only_the_stream_seat_flips_and_roles_swap_every_hand(hand, alternate, seat0, seat1):
    config = RulesConfig(team_sizes=[2, 1], alternate_roles=alternate)
    t = make([R4_TEAM, R4_OTHER], lake=R4_LAKE, config=config, hand=hand)
    assert t.layout()["hand"] == hand
    assert legal(t, 0) == sorted(seat0)
    assert legal(t, 1) == sorted(seat1)
    assert legal(t, 2) == sorted(["flip", "wait"])  # a solo player holds both roles


def test_r4_the_nertz_seat_may_play_the_teams_waste_card():
    t = make([R4_TEAM, R4_OTHER], lake=R4_LAKE, config=RulesConfig(team_sizes=[2, 1]))
    result = t.step({0: "waste>lake"}, priority=[0])
    assert result.applied == {0: True, 1: True, 2: True}
    assert t.layout()["lake"] == [["AS", "2S", "3S", "4S"]]
    assert t.layout()["teams"][0] == team(["KS"], REDS, ["9C"], 1)


def test_r4_a_non_stream_seat_that_flips_makes_an_illegal_move():
    t = make([R4_TEAM, R4_OTHER], lake=R4_LAKE, config=RulesConfig(team_sizes=[2, 1]))
    before = t.layout()
    with pytest.raises(ValueError):
        t.step({0: "flip"}, priority=[0])
    assert t.layout() == before


# --------------------------------------------------------------------------------------------
# R5-R8 the deal
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("river_size, stream_size", [(4, 35), (5, 34)])
def test_r5_r6_r7_deal_counts(river_size, stream_size):
    t = Table.deal(RulesConfig(num_teams=3, river_size=river_size), seed=7)
    layout = t.layout()
    assert layout["lake"] == []
    assert layout["tick"] == 0
    assert len(layout["teams"]) == 3
    for entry in layout["teams"]:
        assert [len(column) for column in entry["river"]] == [1] * river_size  # R5
        assert len(entry["nertz"]) == 13  # R6
        assert len(entry["stream"]) == stream_size  # R7
        assert entry["waste"] == 0  # R7: the Stream is face down
        cards = entry["nertz"] + entry["stream"] + [c for column in entry["river"] for c in column]
        assert sorted(cards) == sorted(FULL_DECK)  # one whole 52-card deck per team (R1)


def test_r6_r7_only_the_nertz_top_and_the_river_are_face_up_after_the_deal():
    t = Table.deal(RulesConfig(), seed=11)
    entry = t.layout()["teams"][0]
    assert t.available_cards(0) == [entry["nertz"][-1]] + [column[-1] for column in entry["river"]]


def test_r8_same_seed_same_deal_other_seed_other_deal():
    config = RulesConfig(num_teams=3)
    first = Table.deal(config, seed=3).layout()
    assert Table.deal(config, seed=3).layout() == first
    other = Table.deal(config, seed=4).layout()
    assert other["teams"] != first["teams"]
    # each team shuffles its own deck: two teams do not get the same order
    assert first["teams"][0] != first["teams"][1]


# --------------------------------------------------------------------------------------------
# R9 available cards
# --------------------------------------------------------------------------------------------


def test_r9_available_cards_are_nertz_top_waste_top_then_river_tops():
    river = [["KS", "QH"], ["7D"], [], ["3C"]]
    t = make([team(["9D", "4C", "KH"], river, ["4H", "JD", "2S", "8C"], 2)])
    assert t.available_cards(0) == ["KH", "JD", "QH", "7D", "3C"]


def test_r9_no_waste_card_before_the_first_flip_and_empty_columns_give_none():
    t = make([team(["9D", "4C", "KH"], [["KS", "QH"], [], [], ["3C"]], ["4H", "JD"], 0)])
    assert t.available_cards(0) == ["KH", "QH", "3C"]


def test_r9_blocked_cards_may_never_be_played():
    # 5C (under KS) would fit the clubs pile and 3H (under the waste 9S) the hearts pile,
    # but both are blocked: the seat can only flip or wait.
    lake = [["AC", "2C", "3C", "4C"], ["AH", "2H"]]
    t = make([team(["5C", "KS"], REDS, ["3H", "9S"], 2)], lake=lake)
    assert t.available_cards(0) == ["KS", "9S", "KH", "KD", "QH", "QD"]
    assert legal(t) == sorted(["flip", "wait"])


# --------------------------------------------------------------------------------------------
# R10 Lake play
# --------------------------------------------------------------------------------------------

HEARTS_A_TO_K_AT_1 = [r + "H@1" for r in RANKS]  # a whole hearts pile of deck 1, A..K


@pytest.mark.parametrize(
    "lake, card, after",
    [
        ([], "AS", [["AS"]]),  # an ace starts a new pile
        ([["AS"]], "2S", [["AS", "2S"]]),
        ([["AS"]], "3S", None),  # not one rank higher
        ([["AC"]], "2S", None),  # other suit
        ([["AD", "2D", "3D"]], "4D", [["AD", "2D", "3D", "4D"]]),
        ([["AD", "2D", "3D"]], "5D", None),
        ([["AD", "2D", "3D"]], "4H", None),
        ([["AH@1"]], "2H", [["AH@1", "2H"]]),  # any team plays on any pile
        ([["AS@1"]], "AS", [["AS@1"], ["AS"]]),  # a second ace of a suit starts a second pile
        ([["AS"], ["AS@1"]], "2S", [["AS", "2S"], ["AS@1"]]),  # D5: first pile that fits
        ([["AS@1", "2S@1"], ["AS"]], "2S", [["AS@1", "2S@1"], ["AS", "2S"]]),
        ([["AC", "2C", "3C", "4C", "5C", "6C", "7C", "8C", "9C", "10C", "JC", "QC"]], "KC",
         [["AC", "2C", "3C", "4C", "5C", "6C", "7C", "8C", "9C", "10C", "JC", "QC", "KC"]]),
        ([HEARTS_A_TO_K_AT_1], "AH", [HEARTS_A_TO_K_AT_1, ["AH"]]),  # a dead pile takes nothing
        ([HEARTS_A_TO_K_AT_1], "2H", None),
    ],
)
def test_r10_lake_play_of_the_waste_card(lake, card, after):
    # Nertz KS and the red River (K, K, Q, Q) can do nothing; the waste card is the only actor.
    t = make([team(["KS"], REDS, [card], 1)], lake=lake)
    if card.startswith("A"):
        expected = ["waste>lake", "wait"]  # R18: an available ace allows only its Lake play
    elif after is not None:
        expected = ["flip", "waste>lake", "wait"]
    else:
        expected = ["flip", "wait"]
    assert legal(t) == sorted(expected)
    if after is not None:
        result = t.step({0: "waste>lake"}, priority=[0])
        assert result.applied[0] is True
        assert t.layout()["lake"] == after
        assert t.layout()["teams"][0] == team(["KS"], REDS, [], 0)


# --------------------------------------------------------------------------------------------
# R11 River build
# --------------------------------------------------------------------------------------------

R11_RIVER_FILLERS = [["KH"], ["KD"], ["KS"]]


@pytest.mark.parametrize(
    "card, top, ok",
    [
        ("9H", "10S", True),
        ("10H", "JC", True),
        ("4C", "5D", True),
        ("2H", "3S", True),
        ("8H", "10S", False),  # two ranks apart
        ("JH", "10S", False),  # one rank higher, not lower
        ("9H", "10H", False),  # same colour
    ],
)
@pytest.mark.parametrize("source", ["nertz", "waste"])
def test_r11_nertz_or_waste_card_builds_down_in_alternating_colours(card, top, ok, source):
    river = [[top]] + R11_RIVER_FILLERS
    # KC (alone or under the Nertz top) never builds; the K fillers take nothing.
    if source == "nertz":
        t = make([team(["KC", card], river)])
        base = ["wait"]
    else:
        t = make([team(["KC"], river, [card], 1)])
        base = ["flip", "wait"]
    move = source + ">river0"
    assert legal(t) == sorted(base + ([move] if ok else []))
    if ok:
        assert t.step({0: move}, priority=[0]).applied[0] is True
        river_after = [[top, card]] + R11_RIVER_FILLERS
        if source == "nertz":
            assert t.layout()["teams"][0] == team(["KC"], river_after)
        else:
            assert t.layout()["teams"][0] == team(["KC"], river_after, [], 0)


@pytest.mark.parametrize("flow_rules", [True, False])
def test_r11_no_ace_is_ever_placed_on_the_river(flow_rules):
    # AH (Nertz) could "build" on 2S or fill column 1, AC (waste) likewise: neither is a move.
    t = make(
        [team(["2D", "AH"], [["2S"], [], ["KH"], ["KD"]], ["AC"], 1)],
        config=RulesConfig(flow_rules=flow_rules),
    )
    if flow_rules:
        expected = ["nertz>lake", "waste>lake", "wait"]  # R18: only the aces' Lake plays
    else:
        expected = ["flip", "nertz>lake", "waste>lake", "wait"]
    assert legal(t) == sorted(expected)


def test_r11_a_river_card_does_not_build_on_the_river_by_r11_only_by_a_shift():
    # The River top 9H on 10S is a shift (R14), written with the index of the moved card.
    t = make([team(["KS"], [["10S"], ["KH", "QC", "JD", "10C", "9H"], ["QH"], ["QD"]])])
    assert legal(t) == sorted(["river1:4>river0", "wait"])


# --------------------------------------------------------------------------------------------
# R12 River fill
# --------------------------------------------------------------------------------------------


def test_r12_nertz_or_waste_card_fills_an_empty_column():
    t = make([team(["2D", "9C"], [[], ["KH"], ["KD"], ["KS"]], ["5H"], 1)])
    # The K columns are whole columns: moving one into the empty column is no move (R14).
    assert legal(t) == sorted(["nertz>river0", "waste>river0", "flip", "wait"])
    t.step({0: "nertz>river0"}, priority=[0])
    assert t.layout()["teams"][0] == team(["2D"], [["9C"], ["KH"], ["KD"], ["KS"]], ["5H"], 1)


def test_r12_waste_fill_then_the_next_waste_card_is_available():
    t = make([team(["2D", "9C"], [[], ["KH"], ["KD"], ["KS"]], ["4D", "5H"], 2)])
    t.step({0: "waste>river0"}, priority=[0])
    assert t.layout()["teams"][0] == team(["2D", "9C"], [["5H"], ["KH"], ["KD"], ["KS"]], ["4D"], 1)
    assert t.available_cards(0) == ["9C", "4D", "5H", "KH", "KD", "KS"]


# --------------------------------------------------------------------------------------------
# R13 River to Lake
# --------------------------------------------------------------------------------------------


def test_r13_river_top_plays_to_the_lake_and_uncovers_the_card_below():
    t = make([team(["KC"], [["4D", "3S"], ["KH"], ["KD"], ["QD"]])], lake=[["AS", "2S"]])
    assert legal(t) == sorted(["river0>lake", "wait"])
    t.step({0: "river0>lake"}, priority=[0])
    assert t.layout()["lake"] == [["AS", "2S", "3S"]]
    assert t.layout()["teams"][0] == team(["KC"], [["4D"], ["KH"], ["KD"], ["QD"]])
    assert t.available_cards(0) == ["KC", "4D", "KH", "KD", "QD"]


# --------------------------------------------------------------------------------------------
# R14 River shift
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "top, expected",
    [
        ("9C", ["river0:0>river1"]),  # the whole column 8H 7S onto 9C
        ("9S", ["river0:0>river1"]),
        ("9D", []),  # 8H on a red 9: same colour
        ("10C", []),  # 8H on 10C: two ranks apart
        ("8D", ["river0:1>river1"]),  # only the part from 7S fits on 8D
        ("6D", ["river1:0>river0"]),  # the other way: 6D onto 7S
        ("6H", ["river1:0>river0"]),
        ("6C", []),
    ],
)
def test_r14_shift_onto_a_column_one_rank_higher_of_opposite_colour(top, expected):
    t = make([team(["KC"], [["8H", "7S"], [top], ["KH"], ["KD"]])])
    assert legal(t) == sorted(expected + ["wait"])


def test_r14_shift_part_of_a_column_with_an_index():
    t = make([team(["KC"], [["9C", "8H", "7S"], ["9S"], ["KH"], ["KD"]])])
    assert legal(t) == sorted(["river0:1>river1", "wait"])
    t.step({0: "river0:1>river1"}, priority=[0])
    assert t.layout()["teams"][0] == team(["KC"], [["9C"], ["9S", "8H", "7S"], ["KH"], ["KD"]])


def test_r14_shift_into_an_empty_column_needs_an_index_above_zero():
    t = make([team(["KC"], [["9C", "8H", "7S"], [], ["KH"], ["KD"]])])
    # Parts from 8H and from 7S may move into the empty column; the whole column 9C.. may not,
    # nor may the single-card columns KH, KD. KC may fill it (R12).
    assert legal(t) == sorted(["river0:1>river1", "river0:2>river1", "nertz>river1", "wait"])
    t.step({0: "river0:2>river1"}, priority=[0])
    assert t.layout()["teams"][0] == team(["KC"], [["9C", "8H"], ["7S"], ["KH"], ["KD"]])


def test_r14_whole_column_into_an_empty_column_is_not_a_move():
    t = make([team(["KC"], [["8H", "7S"], [], ["KH"], ["KD"]])])
    assert legal(t) == sorted(["river0:1>river1", "nertz>river1", "wait"])
    before = t.layout()
    with pytest.raises(ValueError):
        t.step({0: "river0:0>river1"}, priority=[0])
    assert t.layout() == before


def test_r14_whole_column_onto_another_column_leaves_an_empty_column():
    t = make([team(["KC"], [["8H", "7S"], ["9C"], ["KH"], ["KD"]])])
    assert legal(t) == sorted(["river0:0>river1", "wait"])
    t.step({0: "river0:0>river1"}, priority=[0])
    assert t.layout()["teams"][0] == team(["KC"], [[], ["9C", "8H", "7S"], ["KH"], ["KD"]])


def test_r14_shift_without_an_index_means_the_top_card_alone():
    t = make([team(["KC"], [["10D", "9C", "8H"], ["9S"], ["KH"], ["KD"]])])
    assert legal(t) == sorted(["river0:2>river1", "wait"])  # canonical text always names the index
    assert t.step({0: "river0>river1"}, priority=[0]).applied[0] is True
    assert t.layout()["teams"][0] == team(["KC"], [["10D", "9C"], ["9S", "8H"], ["KH"], ["KD"]])


def test_r14_a_part_holding_an_ace_never_moves():
    # A dealt ace may lie in the River; with flow rules off it could only go to the Lake (D6, D7).
    config = RulesConfig(flow_rules=False)
    t = make([team(["KC"], [["AH"], ["2S"], ["KH"], ["KD"]])], config=config)
    assert legal(t) == sorted(["river0>lake", "wait"])


# --------------------------------------------------------------------------------------------
# R15 Flip
# --------------------------------------------------------------------------------------------

RED_STREAM = ["2H", "3H", "4H", "5H", "6H", "7H", "8H"]


@pytest.mark.parametrize(
    "size, wastes",
    [
        (7, [3, 6, 7, 0, 3]),  # the third flip turns a single card
        (5, [3, 5, 0, 3]),  # the second flip turns two cards
        (3, [3, 0, 3]),
        (2, [2, 0, 2]),
        (1, [1, 0, 1]),
    ],
)
def test_r15_flip_turns_up_to_three_cards_then_turns_the_stream_over(size, wastes):
    stream = RED_STREAM[:size]
    t = make([team(["KS"], REDS, stream)])
    turned = 0
    for waste in wastes:
        assert legal(t) == sorted(["flip", "wait"])
        assert t.step({0: "flip"}, priority=[0]).applied[0] is True
        turned += waste == 0
        assert t.layout()["teams"][0] == team(["KS"], REDS, stream, waste)
        assert t.layout()["turnovers"] == [turned, 0]
        waste_card = [stream[waste - 1]] if waste else []
        assert t.available_cards(0) == ["KS"] + waste_card + ["KH", "KD", "QH", "QD"]


def test_r15_playing_the_waste_card_uncovers_the_one_flipped_before_and_order_is_kept():
    lake = [["AD", "2D", "3D", "4D"]]
    t = make([team(["KS"], REDS, ["2H", "5D", "3H", "6H", "7H"], 2)], lake=lake)
    assert legal(t) == sorted(["flip", "waste>lake", "wait"])
    t.step({0: "waste>lake"}, priority=[0])
    assert t.layout()["teams"][0] == team(["KS"], REDS, ["2H", "3H", "6H", "7H"], 1)
    assert t.available_cards(0) == ["KS", "2H", "KH", "KD", "QH", "QD"]
    t.step({0: "flip"}, priority=[0])  # k = 1 -> 4
    assert t.layout()["teams"][0] == team(["KS"], REDS, ["2H", "3H", "6H", "7H"], 4)
    assert t.available_cards(0)[1] == "7H"
    t.step({0: "flip"}, priority=[0])  # stock empty: turn over, nothing available
    assert t.layout()["teams"][0] == team(["KS"], REDS, ["2H", "3H", "6H", "7H"], 0)
    assert t.layout()["turnovers"] == [1, 0]
    t.step({0: "flip"}, priority=[0])  # the original order, minus the played 5D
    assert t.layout()["teams"][0] == team(["KS"], REDS, ["2H", "3H", "6H", "7H"], 3)
    assert t.available_cards(0)[1] == "6H"


def test_r15_flip_is_not_a_move_with_an_empty_stream():
    t = make([team(["KS"], REDS, [], 0)])
    assert legal(t) == ["wait"]
    with pytest.raises(ValueError):
        t.step({0: "flip"}, priority=[0])


# --------------------------------------------------------------------------------------------
# R16 Stacking
# --------------------------------------------------------------------------------------------

R16_LAKE = [["AH", "2H"]]
R16_TEAM = team(["KS", "5H"], [["4S", "3H"], ["KH"], ["KD"], ["QD"]], ["9D", "4H"], 2)


def test_r16_stack_of_available_cards_runs_up_in_suit():
    t = make([R16_TEAM], lake=R16_LAKE)
    # 3H (River), 4H (waste), 5H (Nertz): every run from 3H of length 1, 2, 3 is one move.
    assert legal(t) == sorted(
        ["river0>lake", "river0+waste>lake", "river0+waste+nertz>lake", "flip", "wait"]
    )
    assert t.step({0: "river0+waste+nertz>lake"}, priority=[0]).applied[0] is True
    assert t.layout()["lake"] == [["AH", "2H", "3H", "4H", "5H"]]
    assert t.layout()["teams"][0] == team(["KS"], [["4S"], ["KH"], ["KD"], ["QD"]], ["9D"], 1)


def test_r16_no_stacks_without_the_stacking_variant():
    t = make([R16_TEAM], lake=R16_LAKE, config=RulesConfig(stacking=False))
    assert legal(t) == sorted(["flip", "river0>lake", "wait"])
    before = t.layout()
    with pytest.raises(ValueError):
        t.step({0: "river0+waste>lake"}, priority=[0])
    assert t.layout() == before


def test_r16_a_card_uncovered_by_the_stack_cannot_join_it():
    # 3H (River) + 4H (Nertz top) is a stack; 5H lies under 4H and is not available.
    t = make([team(["5H", "4H"], [["4S", "3H"], ["KS"], ["KC"], ["QS"]])], lake=R16_LAKE)
    assert legal(t) == sorted(["river0+nertz>lake", "river0>lake", "wait"])


def test_r16_longest_stack_uses_all_river_size_plus_two_available_cards():
    river = [["2S"], ["3S"], ["4S"], ["5S"]]
    t = make([team(["KD", "7S"], river, ["6S"], 1)], lake=[["AS"]])
    runs = ["river0", "river1", "river2", "river3", "waste", "nertz"]
    stacks = ["+".join(runs[:n]) + ">lake" for n in range(2, 7)]
    assert legal(t) == sorted(["river0>lake"] + stacks + ["flip", "wait"])
    t.step({0: stacks[-1]}, priority=[0])
    assert t.layout()["lake"] == [["AS", "2S", "3S", "4S", "5S", "6S", "7S"]]
    assert t.layout()["teams"][0] == team(["KD"], [[], [], [], []], [], 0)


# --------------------------------------------------------------------------------------------
# R17 Wait
# --------------------------------------------------------------------------------------------


def test_r17_wait_changes_nothing_but_the_tick():
    lake = [["AC", "2C", "3C", "4C"], ["AH", "2H"]]
    t = make([team(["5C", "KS"], REDS, ["3H", "9S"], 2)], lake=lake)
    before = t.layout()
    result = t.step({0: "wait", 1: "wait"}, priority=[0, 1])
    assert result.applied == {0: True, 1: True}
    assert result.callers == [] and result.hand_over is False and result.truncated is False
    after = t.layout()
    assert after["lake"] == before["lake"] and after["teams"] == before["teams"]
    assert after["tick"] == 1 and t.tick == 1


# --------------------------------------------------------------------------------------------
# R18, R19 flow rules
# --------------------------------------------------------------------------------------------

# Waste AH with 2H on River column 2; 9C (Nertz) could build on 10H or fill column 1.
R18_TEAM = team(["2D", "9C"], [["10H"], [], ["3C", "2H"], ["KD"]], ["5S", "AH"], 2)


@pytest.mark.parametrize(
    "flow_rules, expected",
    [
        (True, ["waste>lake", "waste+river2>lake", "wait"]),
        (
            False,
            [
                "nertz>river0",
                "nertz>river1",
                "waste>lake",
                "waste+river2>lake",
                "river2:1>river1",
                "flip",
                "wait",
            ],
        ),
    ],
)
def test_r18_an_available_ace_must_go_to_the_lake(flow_rules, expected):
    t = make([R18_TEAM], config=RulesConfig(flow_rules=flow_rules))
    assert legal(t) == sorted(expected)


def test_r18_ace_stack_plays_and_restriction_ends_with_the_ace():
    t = make([R18_TEAM])
    t.step({0: "waste+river2>lake"}, priority=[0])
    assert t.layout()["lake"] == [["AH", "2H"]]
    assert t.layout()["teams"][0] == team(["2D", "9C"], [["10H"], [], ["3C"], ["KD"]], ["5S"], 1)
    # No ace available any more: 9C builds on 10H or fills column 1, 5S fills it, flip is back.
    assert legal(t) == sorted(["nertz>river0", "nertz>river1", "waste>river1", "flip", "wait"])


def test_r18_applies_to_both_seats_of_a_team():
    t = make([R18_TEAM, copy.deepcopy(OTHER)], config=RulesConfig(team_sizes=[2, 1]))
    assert legal(t, 0) == sorted(["waste>lake", "waste+river2>lake", "wait"])
    assert legal(t, 1) == sorted(["waste>lake", "waste+river2>lake", "wait"])


# Nertz 3S fits the spades pile and the waste 4S stacks on it; River 2D fits the diamonds pile;
# 9S lies under the waste card (blocked).
R19_LAKE = [["AS", "2S"], ["AD"]]


def r19_team(river):
    return team(["KC", "3S"], river, ["9S", "4S"], 2)


@pytest.mark.parametrize(
    "flow_rules, expected",
    [
        (True, ["nertz>lake", "nertz+waste>lake", "wait"]),
        (False, ["nertz>lake", "nertz+waste>lake", "river0>lake", "flip", "wait"]),
    ],
)
def test_r19_a_nertz_card_that_fits_the_lake_must_go_there(flow_rules, expected):
    t = make(
        [r19_team([["2D"], ["10H"], ["KH"], ["QH"]])],
        lake=R19_LAKE,
        config=RulesConfig(flow_rules=flow_rules),
    )
    assert legal(t) == sorted(expected)


@pytest.mark.parametrize(
    "flow_rules, expected",
    [
        (
            True,
            ["nertz>lake", "nertz+waste>lake", "river0+nertz>lake", "river0+nertz+waste>lake", "wait"],
        ),
        (
            False,
            [
                "nertz>lake",
                "nertz+waste>lake",
                "river0>lake",
                "river0+nertz>lake",
                "river0+nertz+waste>lake",
                "flip",
                "wait",
            ],
        ),
    ],
)
def test_r19_stacks_that_include_the_nertz_card_above_their_bottom_are_allowed(flow_rules, expected):
    # Two spades piles: 3S (River) fits the one at 2S, the Nertz 4S the one at 3S@1, 5S is waste.
    lake = [["AS", "2S"], ["AS@1", "2S@1", "3S@1"]]
    river = [["3S"], ["10H"], ["KH"], ["QH"]]
    t = make(
        [team(["KC", "4S"], river, ["9D", "5S"], 2)],
        lake=lake,
        config=RulesConfig(flow_rules=flow_rules),
    )
    assert legal(t) == sorted(expected)
    t.step({0: "river0+nertz+waste>lake"}, priority=[0])
    assert t.layout()["lake"] == [["AS", "2S", "3S", "4S", "5S"], ["AS@1", "2S@1", "3S@1"]]
    assert t.layout()["teams"][0] == team(["KC"], [[], ["10H"], ["KH"], ["QH"]], ["9D"], 1)


def test_r19_is_lifted_while_the_team_has_an_empty_river_column():
    t = make([r19_team([["2D"], ["10H"], [], ["QH"]])], lake=R19_LAKE)
    assert legal(t) == sorted(
        [
            "nertz>lake",
            "nertz+waste>lake",
            "river0>lake",
            "nertz>river2",
            "waste>river2",
            "flip",
            "wait",
        ]
    )


def test_r19_does_not_apply_when_the_nertz_card_does_not_fit():
    # Same position, but the spades pile is only at A: 3S cannot go, everything else may.
    t = make([r19_team([["2D"], ["10H"], ["KH"], ["QH"]])], lake=[["AS"], ["AD"]])
    assert legal(t) == sorted(["river0>lake", "flip", "wait"])


def test_r18_takes_precedence_over_r19():
    t = make([team(["KC", "3S"], [["2D"], ["10H"], ["KH"], ["QH"]], ["9S", "AH"], 2)], lake=R19_LAKE)
    assert legal(t) == sorted(["waste>lake", "wait"])


# --------------------------------------------------------------------------------------------
# R20 ticks
# --------------------------------------------------------------------------------------------

# team 0: Nertz AS; team 1: Nertz AH (deck 1). Both must play their ace (R18).
ACE_TEAM_0 = team(["KS", "AS"], REDS)
ACE_TEAM_1 = team(["KD", "AH"], BLACKS)


@pytest.mark.parametrize(
    "priority, lake",
    [([0, 1], [["AS"], ["AH@1"]]), ([1, 0], [["AH@1"], ["AS"]]), ([1], [["AH@1"], ["AS"]])],
)
def test_r20_all_seats_move_in_the_same_tick_in_priority_order(priority, lake):
    t = make([ACE_TEAM_0, ACE_TEAM_1])
    assert legal(t, 0) == sorted(["nertz>lake", "wait"])
    assert legal(t, 1) == sorted(["nertz>lake", "wait"])
    result = t.step({0: "nertz>lake", 1: "nertz>lake"}, priority=priority)
    assert result.applied == {0: True, 1: True}
    assert t.tick == 1
    assert t.layout()["lake"] == lake  # D4: piles in the order they were started
    assert t.layout()["teams"] == [team(["KS"], REDS), team(["KD"], BLACKS)]


def test_r20_moves_are_chosen_against_the_position_at_the_start_of_the_tick():
    # 2H only fits after team 1's AH lands: in the same tick it is not yet a legal choice.
    t = make([team(["KS", "2H"], REDS), ACE_TEAM_1])
    assert legal(t, 0) == ["wait"]
    before = t.layout()
    with pytest.raises(ValueError):
        t.step({0: "nertz>lake", 1: "nertz>lake"}, priority=[1, 0])
    assert t.layout() == before and t.tick == 0
    t.step({1: "nertz>lake"}, priority=[1])
    assert legal(t, 0) == sorted(["nertz>lake", "wait"])  # R19: 2H fits now, no empty column
    t.step({0: "nertz>lake"}, priority=[0])
    assert t.layout()["lake"] == [["AH@1", "2H"]]


# --------------------------------------------------------------------------------------------
# R21 speeds and move costs
# --------------------------------------------------------------------------------------------


def test_r21_a_slow_seat_may_only_wait_until_it_is_ready_again():
    config = RulesConfig(speeds=[2, 1], move_ticks={"flip": 1, "lake": 2, "river": 2, "shift": 3})
    t = make(
        [team(["KS"], REDS, ["9H", "9D", "2D"]), team(["KD", "AC", "AH"], BLACKS)],
        lake=[["AD"]],
        config=config,
    )
    assert t.layout()["ready"] == [0, 0]
    assert legal(t, 0) == sorted(["flip", "wait"])
    assert legal(t, 1) == sorted(["nertz>lake", "wait"])
    # tick 0: Wait costs one tick whatever the period
    t.step({0: "wait", 1: "wait"}, priority=[0, 1])
    assert t.layout()["ready"] == [1, 1]
    # tick 1: flip (1 tick at period 2), Lake play (2 ticks at period 1)
    t.step({0: "flip", 1: "nertz>lake"}, priority=[0, 1])
    assert t.layout()["ready"] == [3, 3]
    assert t.layout()["lake"] == [["AD"], ["AH@1"]]
    # tick 2: nobody is ready, so nobody may do anything but wait
    assert legal(t, 0) == ["wait"]
    assert legal(t, 1) == ["wait"]
    before = t.layout()
    with pytest.raises(ValueError):
        t.step({0: "waste>lake"}, priority=[0])
    assert t.layout() == before
    t.step({0: "wait", 1: "wait"}, priority=[0, 1])
    assert t.layout()["ready"] == [3, 3]  # a seat that is not ready stays not ready
    # tick 3: both ready again
    assert legal(t, 0) == sorted(["flip", "waste>lake", "wait"])
    assert legal(t, 1) == sorted(["nertz>lake", "wait"])
    t.step({0: "waste>lake", 1: "nertz>lake"}, priority=[0, 1])
    assert t.layout()["ready"] == [3 + 2 * 2, 3 + 1 * 2]
    assert t.layout()["lake"] == [["AD", "2D"], ["AH@1"], ["AC@1"]]
    for tick in (4, 5, 6):
        assert t.tick == tick
        assert legal(t, 0) == ["wait"]
        t.step({0: "wait", 1: "wait"}, priority=[0, 1])
    assert t.tick == 7
    assert legal(t, 0) == sorted(["flip", "wait"])


R21_COSTS = {"flip": 1, "lake": 2, "river": 3, "shift": 4}


@pytest.mark.parametrize(
    "move, ready",
    [
        ("flip", 2 * 1),
        ("river3>lake", 2 * 2),
        ("river3+waste>lake", 2 * 2),  # a stack costs what a Lake play costs
        ("nertz>river0", 2 * 3),  # build
        ("nertz>river1", 2 * 3),  # fill
        ("waste>river1", 2 * 3),
        ("river3:1>river1", 2 * 4),
        ("wait", 1),
    ],
)
def test_r21_each_kind_of_move_costs_period_times_its_ticks(move, ready):
    t = make(
        [team(["KD", "9C"], [["10H"], [], ["KH"], ["3D", "2S"]], ["5H", "3S"], 2)],
        lake=[["AS"]],
        config=RulesConfig(speeds=[2, 1], move_ticks=R21_COSTS),
    )
    assert legal(t) == sorted(
        [
            "nertz>river0",
            "nertz>river1",
            "waste>river1",
            "river3>lake",
            "river3+waste>lake",
            "river3:1>river1",
            "flip",
            "wait",
        ]
    )
    assert t.step({0: move, 1: "wait"}, priority=[0, 1]).applied == {0: True, 1: True}
    assert t.layout()["ready"] == [ready, 1]
    if ready > 1:
        assert legal(t) == ["wait"]


# --------------------------------------------------------------------------------------------
# R22 conflicts
# --------------------------------------------------------------------------------------------

RACE_TEAM_0 = team(["KS", "2H"], REDS)
RACE_TEAM_1 = team(["KD", "2H"], BLACKS)


@pytest.mark.parametrize(
    "priority, applied, lake, nertz",
    [
        ([0, 1], {0: True, 1: False}, [["AH", "2H"]], (["KS"], ["KD", "2H"])),
        ([1, 0], {0: False, 1: True}, [["AH", "2H@1"]], (["KS", "2H"], ["KD"])),
    ],
)
def test_r22_two_teams_race_for_one_lake_pile_first_in_priority_wins(priority, applied, lake, nertz):
    config = RulesConfig(move_ticks={"flip": 1, "lake": 2, "river": 1, "shift": 1})
    t = make([RACE_TEAM_0, RACE_TEAM_1], lake=[["AH"]], config=config)
    assert legal(t, 0) == sorted(["nertz>lake", "wait"])
    assert legal(t, 1) == sorted(["nertz>lake", "wait"])
    result = t.step({0: "nertz>lake", 1: "nertz>lake"}, priority=priority)
    assert result.applied == applied
    layout = t.layout()
    assert layout["lake"] == lake
    assert [entry["nertz"] for entry in layout["teams"]] == list(nertz)
    assert layout["ready"] == [2, 2]  # a failed move costs what a successful one costs
    assert layout["tick"] == 1


@pytest.mark.parametrize(
    "priority, lake",
    [([0, 1], [["AH", "2H"], ["AH@1", "2H@1"]]), ([1, 0], [["AH", "2H@1"], ["AH@1", "2H"]])],
)
def test_r22_two_piles_of_the_same_suit_let_both_cards_in(priority, lake):
    t = make([RACE_TEAM_0, RACE_TEAM_1], lake=[["AH"], ["AH@1"]])
    result = t.step({0: "nertz>lake", 1: "nertz>lake"}, priority=priority)
    assert result.applied == {0: True, 1: True}
    assert t.layout()["lake"] == lake


def test_r22_priority_is_drawn_from_the_seeded_rng_and_either_team_can_win():
    winners = []
    for seed in range(40):
        runs = []
        for _ in range(2):
            t = make([RACE_TEAM_0, RACE_TEAM_1], lake=[["AH"]], seed=seed)
            result = t.step({0: "nertz>lake", 1: "nertz>lake"})
            assert sorted(result.applied.values()) == [False, True]
            runs.append((result.applied, t.layout()))
        assert runs[0] == runs[1]  # the same seed draws the same order
        winners.append(runs[0][0][1])
    assert set(winners) == {False, True}  # the order is drawn, not fixed


@pytest.mark.parametrize(
    "priority, applied, river",
    [
        # the shift empties column 0 first; the build onto 8H becomes a fill (D14)
        ([0, 1], {0: True, 1: True, 2: True}, [["7S"], ["9C", "8H"], ["KH"], ["QH"]]),
        # the build lands on 8H first; column 0 no longer holds just [8H]: the shift fails
        ([1, 0], {0: False, 1: True, 2: True}, [["8H", "7S"], ["9C"], ["KH"], ["QH"]]),
    ],
)
def test_r22_destination_is_checked_when_the_move_resolves(priority, applied, river):
    t = make(
        [team(["KD", "7S"], [["8H"], ["9C"], ["KH"], ["QH"]]), copy.deepcopy(OTHER)],
        config=RulesConfig(team_sizes=[2, 1]),
    )
    expected = ["nertz>river0", "river0:0>river1", "wait"]
    assert legal(t, 0) == sorted(expected)
    assert legal(t, 1) == sorted(expected)
    result = t.step({0: "river0:0>river1", 1: "nertz>river0"}, priority=priority)
    assert result.applied == applied
    assert t.layout()["teams"][0] == team(["KD"], river)


@pytest.mark.parametrize(
    "priority, applied, river",
    [
        # 9C leaves for 10D; 8H as a whole column may not move into the emptied column (R14)
        ([0, 1], {0: True, 1: False, 2: True}, [["8H"], [], ["10D", "9C"], ["KH"]]),
        # 8H lands on 9C; column 1 no longer holds just [9C]: the other shift fails
        ([1, 0], {0: False, 1: True, 2: True}, [[], ["9C", "8H"], ["10D"], ["KH"]]),
    ],
)
def test_r22_whole_column_shift_fails_when_its_target_was_emptied(priority, applied, river):
    t = make(
        [team(["KS"], [["8H"], ["9C"], ["10D"], ["KH"]]), copy.deepcopy(OTHER)],
        config=RulesConfig(team_sizes=[2, 1]),
    )
    expected = ["river0:0>river1", "river1:0>river2", "wait"]
    assert legal(t, 0) == sorted(expected)
    assert legal(t, 1) == sorted(expected)
    result = t.step({0: "river1:0>river2", 1: "river0:0>river1"}, priority=priority)
    assert result.applied == applied
    assert t.layout()["teams"][0] == team(["KS"], river)


@pytest.mark.parametrize(
    "priority, applied, stream, waste, lake, turnovers",
    [
        # the waste card goes first: the Stream is empty, so the flip fails
        ([0, 1], {0: True, 1: False, 2: True}, [], 0, [["AH", "2H", "3H", "4H", "5H"]], [0, 0]),
        # the flip turns the Stream over first: 5H is no longer the waste card
        ([1, 0], {0: False, 1: True, 2: True}, ["5H"], 0, [["AH", "2H", "3H", "4H"]], [1, 0]),
    ],
)
def test_r22_flip_fails_only_on_an_empty_stream(priority, applied, stream, waste, lake, turnovers):
    t = make(
        [team(["KS"], REDS, ["5H"], 1), copy.deepcopy(OTHER)],
        lake=[["AH", "2H", "3H", "4H"]],
        config=RulesConfig(team_sizes=[2, 1]),
    )
    assert legal(t, 0) == sorted(["waste>lake", "wait"])
    assert legal(t, 1) == sorted(["flip", "waste>lake", "wait"])
    result = t.step({0: "waste>lake", 1: "flip"}, priority=priority)
    assert result.applied == applied
    assert t.layout()["teams"][0] == team(["KS"], REDS, stream, waste)
    assert t.layout()["lake"] == lake
    assert t.layout()["turnovers"] == turnovers


def test_r22_r18_r19_are_not_checked_again_when_a_move_resolves():
    # Seat 0 plays the waste 3D, which uncovers AC; seat 1's fill, chosen before, still resolves
    # although R18 would forbid it now.
    t = make(
        [team(["KS", "9H"], [["KH"], [], ["KD"], ["QD"]], ["AC", "3D"], 2), copy.deepcopy(OTHER)],
        lake=[["AD", "2D"]],
        config=RulesConfig(team_sizes=[2, 1]),
    )
    assert legal(t, 0) == sorted(["waste>lake", "waste>river1", "nertz>river1", "wait"])
    result = t.step({0: "waste>lake", 1: "nertz>river1"}, priority=[0, 1])
    assert result.applied == {0: True, 1: True, 2: True}
    assert t.layout()["lake"] == [["AD", "2D", "3D"]]
    assert t.layout()["teams"][0] == team(["KS"], [["KH"], ["9H"], ["KD"], ["QD"]], ["AC"], 1)
    assert legal(t, 0) == sorted(["waste>lake", "wait"])  # and now R18 holds


# --------------------------------------------------------------------------------------------
# R23 teammates
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "priority, applied, lake, river0",
    [
        # seat 0 plays 6H to the Lake; 6D is the new waste card and would fit on 7C, but
        # seat 1 named 6H: its build fails.
        ([0, 1], {0: True, 1: False, 2: True}, [["AH", "2H", "3H", "4H", "5H", "6H"]], ["7C"]),
        ([1, 0], {0: False, 1: True, 2: True}, [["AH", "2H", "3H", "4H", "5H"]], ["7C", "6H"]),
    ],
)
def test_r23_a_move_is_tied_to_the_card_it_named_not_to_the_source(priority, applied, lake, river0):
    river = [["7C"], ["KH"], ["KD"], ["QD"]]
    t = make(
        [team(["KS"], river, ["6D", "6H"], 2), copy.deepcopy(OTHER)],
        lake=[["AH", "2H", "3H", "4H", "5H"]],
        config=RulesConfig(team_sizes=[2, 1]),
    )
    assert legal(t, 0) == sorted(["waste>lake", "waste>river0", "wait"])
    assert legal(t, 1) == sorted(["waste>lake", "waste>river0", "flip", "wait"])
    result = t.step({0: "waste>lake", 1: "waste>river0"}, priority=priority)
    assert result.applied == applied
    assert t.layout()["lake"] == lake
    assert t.layout()["teams"][0] == team(["KS"], [river0] + river[1:], ["6D"], 1)


# --------------------------------------------------------------------------------------------
# R24, R25, R26 end of a hand
# --------------------------------------------------------------------------------------------

R24_LAKE = [["AH", "2H", "3H", "4H"]]
R24_TEAM_0 = team(["5H"], BLACKS)
R24_TEAM_1 = team(["KD", "AS"], BLACKS)


def test_r24_the_hand_ends_when_a_nertz_pile_empties_and_the_whole_tick_counts():
    t = make([R24_TEAM_0, R24_TEAM_1], lake=R24_LAKE)
    assert legal(t, 0) == sorted(["nertz>lake", "wait"])
    assert legal(t, 1) == sorted(["nertz>lake", "wait"])
    result = t.step({0: "nertz>lake", 1: "nertz>lake"}, priority=[0, 1])
    assert result.applied == {0: True, 1: True}  # team 1's later move still counts
    assert result.callers == [0]
    assert result.hand_over is True and result.truncated is False
    assert t.hand_over is True
    layout = t.layout()
    assert layout["callers"] == [0]
    assert layout["lake"] == [["AH", "2H", "3H", "4H", "5H"], ["AS@1"]]
    assert t.hand_scores() == [5 + 10, 1 - 2 * 1]
    assert legal(t, 0) == ["wait"] and legal(t, 1) == ["wait"]


def test_r24_an_empty_nertz_pile_at_the_end_of_any_tick_is_a_call():
    t = make([team([], BLACKS), copy.deepcopy(OTHER)])
    assert t.hand_over is False
    assert legal(t, 0) == ["wait"]  # no call move with auto_nertz
    result = t.step({}, priority=[0, 1])
    assert result.callers == [0] and result.hand_over is True
    assert t.hand_scores() == [10, -2]


def test_r24_without_auto_nertz_the_team_calls_with_a_call_move():
    t = make([R24_TEAM_0, R24_TEAM_1], lake=R24_LAKE, config=RulesConfig(auto_nertz=False))
    assert legal(t, 0) == sorted(["nertz>lake", "wait"])
    result = t.step({0: "nertz>lake"}, priority=[0])
    assert result.callers == [] and result.hand_over is False
    assert t.layout()["teams"][0]["nertz"] == []
    assert legal(t, 0) == sorted(["call", "wait"])
    assert legal(t, 1) == sorted(["nertz>lake", "wait"])  # a team with Nertz cards cannot call
    result = t.step({0: "call"}, priority=[0])
    assert result.applied == {0: True, 1: True}
    assert result.callers == [0] and result.hand_over is True
    assert t.layout()["callers"] == [0]
    assert t.hand_scores() == [5 + 10, 0 - 2 * 2]


@pytest.mark.parametrize("bonus, share", [(10, 5), (7, 3), (0, 0)])
def test_r25_teams_that_empty_their_piles_in_the_same_tick_split_the_bonus(bonus, share):
    t = make(
        [team(["5H"], BLACKS), team(["3S"], REDS)],
        lake=[["AH", "2H", "3H", "4H"], ["AS@1", "2S@1"]],
        config=RulesConfig(nertz_bonus=bonus),
    )
    result = t.step({0: "nertz>lake", 1: "nertz>lake"}, priority=[1, 0])
    assert sorted(result.callers) == [0, 1]
    assert t.layout()["callers"] == [0, 1]
    assert t.hand_scores() == [5 + share, 3 + share]


def test_r26_the_hand_is_truncated_after_max_ticks():
    t = make([team(["KS"]), copy.deepcopy(OTHER)], config=RulesConfig(max_ticks=3))
    for _ in range(2):
        result = t.step({}, priority=[0, 1])
        assert result.hand_over is False and result.truncated is False
    result = t.step({}, priority=[0, 1])
    assert result.hand_over is True and result.truncated is True
    assert result.callers == []
    assert t.tick == 3 and t.hand_over is True
    assert t.layout()["callers"] == []
    assert t.hand_scores() == [-2, -2]  # no bonus without a caller
    assert legal(t) == ["wait"]


def test_r26_starting_near_max_ticks_from_the_layout_tick():
    t = make([team(["KS"]), copy.deepcopy(OTHER)], config=RulesConfig(max_ticks=10), tick=9)
    result = t.step({}, priority=[0, 1])
    assert result.truncated is True and t.tick == 10


def test_r26_a_call_in_the_last_tick_is_termination_not_truncation():
    t = make([R24_TEAM_0, copy.deepcopy(OTHER)], lake=R24_LAKE, config=RulesConfig(max_ticks=1))
    result = t.step({0: "nertz>lake"}, priority=[0])
    assert result.callers == [0] and result.hand_over is True and result.truncated is False


# --------------------------------------------------------------------------------------------
# R27, R28 idle table
# --------------------------------------------------------------------------------------------

# No card move exists for either team: red Stream over a red River, black over black.
IDLE_0 = team(["KS"], REDS, ["2H", "3H", "4H"])
IDLE_1 = team(["KD"], BLACKS, ["2C", "3C"])


def test_r27_both_teams_turn_over_twice_then_every_stream_is_burned():
    t = make([IDLE_0, IDLE_1])
    assert legal(t, 0) == sorted(["flip", "wait"]) and legal(t, 1) == sorted(["flip", "wait"])
    expected = [((3, 2), [0, 0]), ((0, 0), [1, 1]), ((3, 2), [1, 1])]
    for wastes, turnovers in expected:
        t.step({0: "flip", 1: "flip"}, priority=[0, 1])
        layout = t.layout()
        assert (layout["teams"][0]["waste"], layout["teams"][1]["waste"]) == wastes
        assert layout["turnovers"] == turnovers
        assert layout["burns"] == 0
    t.step({0: "flip", 1: "flip"}, priority=[0, 1])  # second turn-over each: idle, burn
    layout = t.layout()
    assert layout["teams"][0] == team(["KS"], REDS, ["3H", "4H", "2H"], 0)
    assert layout["teams"][1] == team(["KD"], BLACKS, ["3C", "2C"], 0)
    assert layout["turnovers"] == [0, 0]
    assert layout["burns"] == 1
    assert t.hand_over is False  # play goes on
    t.step({0: "flip", 1: "flip"}, priority=[0, 1])
    assert t.available_cards(0) == ["KS", "2H", "KH", "KD", "QH", "QD"]


def test_r27_burn_from_a_layout_near_the_threshold():
    t = make([team(["KS"], REDS, ["2H", "3H", "4H"], 3), team(["KD"], BLACKS, ["2C", "3C"], 2)],
             turnovers=[1, 1])
    t.step({0: "flip", 1: "flip"}, priority=[0, 1])
    layout = t.layout()
    assert layout["teams"][0] == team(["KS"], REDS, ["3H", "4H", "2H"], 0)
    assert layout["teams"][1] == team(["KD"], BLACKS, ["3C", "2C"], 0)
    assert layout["turnovers"] == [0, 0] and layout["burns"] == 1


def test_r27_no_burn_until_every_team_with_a_stream_has_turned_over_twice():
    t = make([team(["KS"], REDS, ["2H", "3H", "4H"], 3), team(["KD"], BLACKS, ["2C", "3C"], 2)],
             turnovers=[1, 1])
    t.step({0: "flip", 1: "wait"}, priority=[0, 1])
    layout = t.layout()
    assert layout["teams"][0] == team(["KS"], REDS, ["2H", "3H", "4H"], 0)
    assert layout["teams"][1] == team(["KD"], BLACKS, ["2C", "3C"], 2)
    assert layout["turnovers"] == [2, 1] and layout["burns"] == 0
    t.step({0: "wait", 1: "flip"}, priority=[0, 1])
    layout = t.layout()
    assert layout["teams"][0] == team(["KS"], REDS, ["3H", "4H", "2H"], 0)
    assert layout["teams"][1] == team(["KD"], BLACKS, ["3C", "2C"], 0)
    assert layout["turnovers"] == [0, 0] and layout["burns"] == 1


def test_r27_a_team_with_an_empty_stream_does_not_hold_up_the_burn():
    t = make([team(["KS"], REDS, ["2H", "3H", "4H"], 3), copy.deepcopy(OTHER)], turnovers=[1, 0])
    t.step({0: "flip"}, priority=[0])
    assert t.layout()["teams"][0] == team(["KS"], REDS, ["3H", "4H", "2H"], 0)
    assert t.layout()["burns"] == 1


@pytest.mark.parametrize(
    "priority, turnovers",
    [
        ([0, 1], [0, 1]),  # the card move resets first, the turn-over after it counts
        ([1, 0], [0, 0]),  # the turn-over (the 2nd) is wiped by the card move after it
    ],
)
def test_r27_a_card_move_resets_the_idle_count_when_it_resolves(priority, turnovers):
    t = make(
        [team(["KS"], REDS, ["2H", "3H", "2D"], 3), team(["KD"], BLACKS, ["2C", "3C"], 2)],
        lake=[["AD"]],
        turnovers=[1, 1],
        burns=2,
    )
    assert legal(t, 0) == sorted(["flip", "waste>lake", "wait"])
    t.step({0: "waste>lake", 1: "flip"}, priority=priority)
    layout = t.layout()
    assert layout["turnovers"] == turnovers
    assert layout["burns"] == 0
    assert layout["teams"][0] == team(["KS"], REDS, ["2H", "3H"], 2)  # no burn
    assert layout["teams"][1] == team(["KD"], BLACKS, ["2C", "3C"], 0)


@pytest.mark.parametrize(
    "burns, nertz_0, nertz_1",
    [
        (0, ["2S", "3S", "KS"], ["5D", "KD"]),  # first burn: Nertz piles stay
        (2, ["2S", "3S", "KS"], ["5D", "KD"]),  # third burn: still stay
        (3, ["KS", "2S", "3S"], ["KD", "5D"]),  # fourth burn in a row: top card to the bottom
        (4, ["KS", "2S", "3S"], ["KD", "5D"]),  # fifth: again
    ],
)
def test_r28_from_the_fourth_burn_in_a_row_the_nertz_top_goes_to_the_bottom(burns, nertz_0, nertz_1):
    t = make(
        [team(["2S", "3S", "KS"], REDS, ["2H", "3H", "4H"], 3), team(["5D", "KD"], BLACKS, ["2C", "3C"], 2)],
        turnovers=[1, 1],
        burns=burns,
    )
    t.step({0: "flip", 1: "flip"}, priority=[0, 1])
    layout = t.layout()
    assert layout["burns"] == burns + 1
    assert layout["teams"][0] == team(nertz_0, REDS, ["3H", "4H", "2H"], 0)
    assert layout["teams"][1] == team(nertz_1, BLACKS, ["3C", "2C"], 0)
    assert t.available_cards(0)[0] == nertz_0[-1]


# --------------------------------------------------------------------------------------------
# R29 scoring
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "config_kwargs, keys, scores",
    [
        ({}, {}, [2 - 2 * 3, 2 - 2 * 2]),
        ({"lake_points": 2, "nertz_penalty": 1}, {}, [4 - 3, 4 - 2]),
        ({}, {"penalties": [1, 0]}, [2 - 6 - 5, 2 - 4]),
        ({"penalty_points": 3}, {"penalties": [2, 1]}, [2 - 6 - 6, 2 - 4 - 3]),
    ],
)
def test_r29_hand_score_counts_own_lake_cards_nertz_cards_and_penalties(config_kwargs, keys, scores):
    # The Lake holds AH, 3H of deck 0 and 2H, AS of deck 1: each card scores for its owner.
    t = make(
        [team(["KS", "QS", "JS"], REDS), team(["KD", "QD"], BLACKS)],
        lake=[["AH", "2H@1", "3H"], ["AS@1"]],
        config=RulesConfig(**config_kwargs),
        **keys,
    )
    assert t.hand_scores() == scores


def test_r29_a_card_played_on_another_teams_pile_scores_for_its_owner():
    t = make([team(["KS"], REDS), team(["KD", "2H"], BLACKS)], lake=[["AH"]])
    assert t.hand_scores() == [1 - 2, 0 - 4]
    t.step({1: "nertz>lake"}, priority=[1])
    assert t.hand_scores() == [1 - 2, 1 - 2]


# --------------------------------------------------------------------------------------------
# R30 the game
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "totals, calls, target, winner",
    [
        ([100, 120], [0, 0], 150, None),  # nobody at the target yet
        ([149, 149], [3, 0], 150, None),
        ([150, 120], [1, 0], 150, 0),  # at least the target is enough
        ([120, 151], [3, 0], 150, 1),
        ([160, 170], [2, 1], 150, 1),  # a team over the target, another higher
        ([160, 160], [1, 2], 150, 1),  # tie on total broken by calls
        ([160, 160], [2, 1], 150, 0),
        ([160, 160], [2, 2], 150, None),  # full tie: tie-break hands
        ([160, 150], [0, 5], 150, 0),  # the total counts before the calls
        ([140, 160, 160], [5, 1, 1], 150, None),  # leaders tied; a trailing team does not matter
        ([140, 160, 170], [5, 1, 0], 150, 2),
        ([100, 90, 100], [0, 0, 0], 100, None),
        ([20, -5], [0, 0], 20, 0),
        ([-5, 10], [1, 0], 20, None),
    ],
)
def test_r30_decide_winner(totals, calls, target, winner):
    from nertz_env.table.games import decide_winner

    assert decide_winner(totals, calls, target) == winner


def test_r30_play_game_adds_hand_scores_until_someone_wins():
    from nertz_env.table.games import decide_winner, play_game

    target = 20
    config = RulesConfig(num_teams=2, target_score=target, nertz_penalty=0, max_ticks=500)
    game = play_game(config, 5, policy="random")
    assert {"hand_scores", "totals", "calls", "winner", "hands"} <= set(game)
    hand_scores = game["hand_scores"]
    assert game["hands"] == len(hand_scores) >= 1
    assert all(len(scores) == 2 for scores in hand_scores)
    assert game["totals"] == [sum(scores[i] for scores in hand_scores) for i in range(2)]
    assert len(game["calls"]) == 2
    assert all(0 <= c <= game["hands"] for c in game["calls"])
    assert game["winner"] is not None
    assert game["totals"][game["winner"]] >= target
    assert game["winner"] == decide_winner(game["totals"], game["calls"], target)
    # the game did not go on past a hand after which somebody was the sole leader at the target
    for n in range(1, game["hands"]):
        totals = [sum(scores[i] for scores in hand_scores[:n]) for i in range(2)]
        assert max(totals) < target or totals[0] == totals[1]
    assert play_game(config, 5, policy="random") == game


# --------------------------------------------------------------------------------------------
# R31 illegal moves
# --------------------------------------------------------------------------------------------

R31_LAKE = [["AC", "2C", "3C", "4C"], ["AH", "2H"]]
R31_TEAM = team(["5C", "KS"], REDS, ["3H", "9S"], 2)  # legal: flip, wait (see R9)


@pytest.mark.parametrize("move", ["nertz>lake", "waste>lake", "river0>lake", "nertz>river0"])
def test_r31_raise_names_seat_and_move_and_changes_nothing(move):
    t = make([R31_TEAM], lake=R31_LAKE, config=RulesConfig(illegal_move="raise"))
    assert legal(t) == sorted(["flip", "wait"])
    before = t.layout()
    with pytest.raises(ValueError) as info:
        t.step({0: move, 1: "wait"}, priority=[0, 1])
    assert move in str(info.value)
    assert "0" in str(info.value)
    assert t.layout() == before
    assert t.tick == 0


def test_r31_raise_is_the_default():
    t = make([R31_TEAM], lake=R31_LAKE, config=RulesConfig())
    before = t.layout()
    with pytest.raises(ValueError):
        t.step({1: "flip"}, priority=[1])  # team 1 has an empty Stream
    assert t.layout() == before


@pytest.mark.parametrize(
    "mode, penalties, scores",
    [("penalize", [1, 0], [6 - 4 - 5, -2]), ("ignore", [0, 0], [6 - 4, -2])],
)
def test_r31_penalize_and_ignore_turn_the_move_into_a_wait(mode, penalties, scores):
    config = RulesConfig(illegal_move=mode, speeds=[3, 1])
    t = make([R31_TEAM], lake=R31_LAKE, config=config)
    before = t.layout()
    result = t.step({0: "nertz>lake", 1: "wait"}, priority=[0, 1])
    assert result.applied == {0: False, 1: True}
    layout = t.layout()
    assert layout["lake"] == before["lake"] and layout["teams"] == before["teams"]
    assert layout["tick"] == 1
    assert layout["penalties"] == penalties
    assert layout["ready"] == [1, 1]  # one tick, whatever the period
    assert t.hand_scores() == scores
    assert legal(t) == sorted(["flip", "wait"])
