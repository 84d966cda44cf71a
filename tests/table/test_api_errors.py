"""Bad input at the readable API (docs/api.md) and the round trips it promises.

Bad input is a ValueError whose message names the offending part, and a failed call leaves the
table exactly as it was. The round trips: layout -> Table -> layout, Move text -> Move -> text,
Move -> action id -> Move, and the action mask against the legal moves.
"""

import copy

import numpy as np
import pytest

from nertz_env import Move, RulesConfig, Table

from helpers import BLACKS, OTHER, REDS, layout_of, team  # noqa: F401

def raises_naming(part, func, *args, **kwargs):
    """Call func and check that it raises a ValueError whose message contains `part`."""
    with pytest.raises(ValueError) as info:
        func(*args, **kwargs)
    assert part.lower() in str(info.value).lower(), str(info.value)


# --------------------------------------------------------------------------------------------
# layouts
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("bad", ["1H", "ZZ", "11S"])
def test_malformed_card_names_the_card(bad):
    layout = layout_of([team(["KS", bad])])
    raises_naming(bad, Table.from_layout, layout, config=RulesConfig())


@pytest.mark.parametrize(
    "lake, teams, card",
    [
        ([], [team(["5H", "5H"])], "5H"),  # twice in one Nertz pile
        ([["AH"]], [team(["KS", "AH"])], "AH"),  # on the Lake (deck 0) and in team 0's pile
        ([["AH@1"]], [team(["KS"]), team(["KD", "AH"], BLACKS)], "AH"),  # the same for deck 1
        ([], [team(["KS"], REDS, ["KH"])], "KH"),  # River and Stream
    ],
)
def test_a_card_named_twice_for_the_same_deck_is_rejected(lake, teams, card):
    raises_naming(card, Table.from_layout, layout_of(teams, lake), config=RulesConfig())


def test_the_same_card_name_in_two_decks_is_fine():
    layout = layout_of([team(["KS"]), team(["KD", "AH"], BLACKS)], lake=[["AH"]])
    t = Table.from_layout(layout, config=RulesConfig())
    assert t.layout()["lake"] == [["AH"]]
    assert t.layout()["teams"][1]["nertz"] == ["KD", "AH"]


@pytest.mark.parametrize(
    "column",
    [
        ["9C", "8S"],  # same colour
        ["9C", "7H"],  # not one rank lower
        ["8H", "9C"],  # ascending
        ["9C", "9H"],
    ],
)
def test_river_column_must_descend_in_alternating_colours(column):
    layout = layout_of([team(["KS"], [column, ["KH"], ["KD"], ["QD"]])])
    raises_naming("river", Table.from_layout, layout, config=RulesConfig())


@pytest.mark.parametrize(
    "pile",
    [["2H"], ["AH", "3H"], ["AH", "2S"], ["AH", "2H", "2H@1"], ["KH"]],
)
def test_lake_pile_must_be_ace_two_three_of_one_suit(pile):
    layout = layout_of([team(["KD"], BLACKS)], lake=[pile])
    raises_naming("lake", Table.from_layout, layout, config=RulesConfig())


def test_a_card_of_a_deck_that_is_not_at_the_table_is_rejected():
    layout = layout_of([team(["KS"])], lake=[["AH@2"]])
    raises_naming("AH@2", Table.from_layout, layout, config=RulesConfig(num_teams=2))


def test_wrong_number_of_teams_for_the_config():
    layout = layout_of([team(["KS"]), copy.deepcopy(OTHER)])
    raises_naming("team", Table.from_layout, layout, config=RulesConfig(num_teams=3))


@pytest.mark.parametrize(
    "river, config",
    [
        ([["KH"], ["KD"], ["QH"]], RulesConfig()),  # 3 columns, the config says 4
        ([["KH"], ["KD"], ["QH"], ["QD"], []], RulesConfig()),  # 5 columns, the config says 4
        ([["KH"], ["KD"], ["QH"], ["QD"]], RulesConfig(river_size=5)),
        ([["KH"], ["KD"], ["QH"], ["QD"], []], None),  # team 1 has 4 columns
    ],
)
def test_wrong_number_of_river_columns(river, config):
    layout = layout_of([team(["KS"], river), copy.deepcopy(OTHER)])
    raises_naming("river", Table.from_layout, layout, config=config)


# --------------------------------------------------------------------------------------------
# moves and configs
# --------------------------------------------------------------------------------------------


def test_unknown_move_text_names_it():
    raises_naming("moon", Move.parse, "nertz>moon")


@pytest.mark.parametrize(
    "text",
    ["", "fly", "river>lake", "nertz>", ">lake", "river0:x>river1", "waste+>lake", "lake>nertz",
     "river0+waste>river1", "nertz>lake>river0"],
)
def test_move_text_outside_the_grammar_is_a_value_error(text):
    with pytest.raises(ValueError):
        Move.parse(text)


@pytest.mark.parametrize(
    "kwargs, field",
    [
        ({"river_size": 3}, "river_size"),
        ({"river_size": 6}, "river_size"),
        ({"num_teams": 9}, "num_teams"),
        ({"num_teams": 1}, "num_teams"),
        ({"speeds": [1, 0]}, "speeds"),
        ({"speeds": [1]}, "speeds"),
        ({"speeds": [1, 1, 1]}, "speeds"),
        ({"team_sizes": [2, 1], "speeds": [1, 1]}, "speeds"),  # 3 seats
        ({"team_sizes": [1, 3]}, "team_sizes"),
        ({"team_sizes": [1, 1, 1]}, "team_sizes"),  # one entry per team
        ({"illegal_move": "explode"}, "illegal_move"),
        ({"move_ticks": {"flip": 1, "lake": 1, "river": 1, "shift": 1, "teleport": 1}}, "move_ticks"),
    ],
)
def test_bad_config_values_name_the_field(kwargs, field):
    raises_naming(field, RulesConfig, **kwargs)


def test_good_config_values_are_accepted():
    config = RulesConfig(
        num_teams=3,
        team_sizes=[1, 2, 2],
        river_size=5,
        speeds=[1, 2, 3, 1, 1],
        move_ticks={"flip": 1, "lake": 2, "river": 2, "shift": 3},
        illegal_move="penalize",
    )
    assert config.num_teams == 3 and config.river_size == 5


# --------------------------------------------------------------------------------------------
# bad calls leave the table unchanged
# --------------------------------------------------------------------------------------------


def small_table(**config_kwargs):
    layout = layout_of([team(["5C", "KS"], REDS, ["3H", "9S"], 2)], lake=[["AC", "2C", "3C", "4C"]])
    return Table.from_layout(layout, config=RulesConfig(**config_kwargs))


@pytest.mark.parametrize("action", [10**6, -1])
def test_decode_out_of_range_is_a_value_error(action):
    t = small_table()
    before = t.layout()
    with pytest.raises(ValueError):
        t.decode(action)
    assert t.layout() == before


@pytest.mark.parametrize("seat", [7, 2, -1])
def test_step_with_an_unknown_seat(seat):
    t = small_table()
    before = t.layout()
    raises_naming(str(seat), t.step, {seat: "wait"})
    assert t.layout() == before and t.tick == 0


def test_step_with_unparseable_move_text():
    t = small_table()
    before = t.layout()
    raises_naming("moon", t.step, {0: "nertz>moon"})
    assert t.layout() == before and t.tick == 0


@pytest.mark.parametrize("mode", ["raise", "penalize", "ignore"])
def test_unparseable_move_text_is_an_error_whatever_illegal_move_says(mode):
    t = small_table(illegal_move=mode)
    before = t.layout()
    with pytest.raises(ValueError):
        t.step({0: "nertz>moon"})
    assert t.layout() == before


def test_stepping_a_finished_hand_is_a_value_error():
    lake = [["AH", "2H", "3H", "4H"]]
    t = Table.from_layout(layout_of([team(["5H"], BLACKS)], lake=lake), config=RulesConfig())
    assert t.step({0: "nertz>lake"}, priority=[0]).hand_over is True
    before = t.layout()
    with pytest.raises(ValueError):
        t.step({0: "wait"})
    with pytest.raises(ValueError):
        t.step({})
    assert t.layout() == before


def test_stepping_a_truncated_hand_is_a_value_error():
    t = small_table(max_ticks=1)
    assert t.step({}).truncated is True
    before = t.layout()
    with pytest.raises(ValueError):
        t.step({})
    assert t.layout() == before


# --------------------------------------------------------------------------------------------
# round trips
# --------------------------------------------------------------------------------------------


def play_random(t, rng, ticks, seats):
    """Play up to `ticks` ticks of uniformly random legal moves; yield the table after each."""
    for _ in range(ticks):
        if t.hand_over:
            return
        moves = {}
        for seat in range(seats):
            options = t.legal_moves(seat)
            moves[seat] = options[int(rng.integers(len(options)))]
        t.step(moves)
        yield t


DEAL_CASES = [
    (RulesConfig(), 2),
    (RulesConfig(num_teams=3, river_size=5), 3),
    (RulesConfig(num_teams=2, team_sizes=[2, 1]), 3),
]


@pytest.mark.parametrize("config, seats", DEAL_CASES)
@pytest.mark.parametrize("seed", [0, 1])
def test_layout_round_trip_after_random_ticks(config, seats, seed):
    t = Table.deal(config, seed=seed)
    rng = np.random.default_rng(seed)
    for t in play_random(t, rng, 40, seats):
        layout = t.layout()
        assert Table.from_layout(layout, config=config).layout() == layout
        if config.team_sizes is None:
            # config None: the defaults, with num_teams and river_size taken from the layout
            assert Table.from_layout(layout).layout() == layout
    assert t.tick > 0


def rich_tables():
    """Positions with every kind of move text: stacks, shifts with index, fills, flip, call."""
    yield Table.from_layout(
        layout_of(
            [team(["KS", "5H"], [["4S", "3H"], ["KH"], ["KD"], ["QD"]], ["9D", "4H"], 2)],
            lake=[["AH", "2H"]],
        ),
        config=RulesConfig(),
    )
    yield Table.from_layout(
        layout_of([team(["2D", "9C"], [["10H"], [], ["3C", "2H"], ["KD"]], ["5S", "AH"], 2)]),
        config=RulesConfig(flow_rules=False),
    )
    yield Table.from_layout(
        layout_of([team(["KC"], [["9C", "8H", "7S"], [], ["KH"], ["KD"]])]),
        config=RulesConfig(),
    )
    yield Table.from_layout(
        layout_of([team(["KD", "7S"], [["2S"], ["3S"], ["4S"], ["5S"]], ["6S"], 1)], lake=[["AS"]]),
        config=RulesConfig(),
    )
    yield Table.from_layout(
        layout_of([team([], BLACKS, ["2H"])]),
        config=RulesConfig(auto_nertz=False, team_sizes=[2, 1]),
    )
    for config, seats in DEAL_CASES:
        t = Table.deal(config, seed=3)
        yield t
        for t in play_random(t, np.random.default_rng(3), 25, seats):
            yield t


def seats_of(t):
    return len(t.layout()["ready"])


def kind_of(text):
    if text in ("wait", "flip", "call"):
        return text
    if "+" in text:
        return "stack"
    if ":" in text:
        return "shift"
    return "lake" if text.endswith(">lake") else "build or fill"


def test_move_text_round_trip_for_every_legal_move():
    seen = set()
    for t in rich_tables():
        for seat in range(seats_of(t)):
            for move in t.legal_moves(seat):
                text = str(move)
                assert Move.parse(text) == move
                assert str(Move.parse(text)) == text
                seen.add(kind_of(text))
    # the positions above really exercise every kind of move text
    assert seen == {"wait", "flip", "call", "stack", "shift", "lake", "build or fill"}


def test_rich_tables_list_the_expected_moves():
    first = next(rich_tables())
    assert sorted(str(m) for m in first.legal_moves(0)) == sorted(
        ["river0>lake", "river0+waste>lake", "river0+waste+nertz>lake", "flip", "wait"]
    )


def test_action_ids_round_trip_and_the_mask_marks_exactly_the_legal_moves():
    for t in rich_tables():
        for seat in range(seats_of(t)):
            moves = t.legal_moves(seat)
            ids = [t.encode(m) for m in moves]
            assert len(set(ids)) == len(ids)
            for move, action in zip(moves, ids):
                assert t.decode(action, seat) == move  # a stack reads the seat's team
            mask = t.action_mask(seat)
            assert isinstance(mask, np.ndarray) and mask.dtype == np.bool_
            assert set(np.flatnonzero(mask).tolist()) == set(ids)
            for action in np.flatnonzero(mask)[:3].tolist():
                assert t.decode(action, seat) in moves


def test_canonical_shift_text_always_names_the_index():
    move = Move.parse("river0:2>river3")
    assert str(move) == "river0:2>river3"
    assert str(Move.parse("river1+waste>lake")) == "river1+waste>lake"
    assert Move.parse("nertz>lake") != Move.parse("waste>lake")
