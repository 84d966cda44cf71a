"""Self-checks of the reference oracle (tests/reference.py) alone, from docs/rules.md and the contract."""
import random
import time
from types import SimpleNamespace

import pytest

from reference import RefTable

RANKS = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"]
FULL_DECK = [r + s for s in "SHDC" for r in RANKS]


def cfg(**overrides):
    base = dict(num_teams=2, team_sizes=None, river_size=4, stacking=True, flow_rules=True,
                nertz_bonus=10, lake_points=1, nertz_penalty=2, target_score=150,
                max_ticks=2000, speeds=None, move_ticks=None, alternate_roles=True,
                auto_nertz=True, illegal_move="raise", penalty_points=5)
    base.update(overrides)
    return SimpleNamespace(**base)


def filler():
    """A team that cannot interfere: no ace, nothing for the Lake, empty Stream."""
    return {"nertz": ["9C", "KH"], "river": [["KC"], ["KD"], ["QS"], ["10H"]],
            "stream": [], "waste": 0}


def table(teams, lake=(), config=None, **extra):
    layout = {"lake": [list(p) for p in lake], "teams": teams, **extra}
    return RefTable.from_layout(layout, config or cfg(num_teams=len(teams)))


# ---------------------------------------------------------------------------------- deal


def test_d2_deal_positions():
    deck0 = list(FULL_DECK)
    deck1 = list(reversed(FULL_DECK))
    t = RefTable.deal(cfg(), [deck0, deck1], hand=3)
    lay = t.layout()
    team = lay["teams"][0]
    assert team["river"] == [[deck0[0]], [deck0[1]], [deck0[2]], [deck0[3]]]
    assert team["nertz"] == deck0[4:17]            # deck[r] bottom, deck[r+12] top
    assert team["stream"] == deck0[17:]
    assert team["waste"] == 0 and len(team["stream"]) == 35
    assert lay["teams"][1]["nertz"][-1] == deck1[16]
    assert lay["tick"] == 0 and lay["hand"] == 3 and lay["lake"] == []
    assert lay["ready"] == [0, 0] and lay["turnovers"] == [0, 0] and lay["burns"] == 0
    assert lay["penalties"] == [0, 0] and lay["callers"] == []
    # R9 order: Nertz top, waste top (none yet), River tops 0..r-1
    assert t.available_cards(0) == [deck0[16]] + deck0[0:4]
    # river_size 5: 5 columns, 34-card Stream
    t5 = RefTable.deal(cfg(river_size=5), [deck0, deck1])
    assert len(t5.layout()["teams"][0]["river"]) == 5
    assert len(t5.layout()["teams"][0]["stream"]) == 34
    # layout round-trips, with T accepted and lower case parsed (R2)
    assert RefTable.from_layout(lay, cfg()).layout() == lay
    t2 = table([{"nertz": ["th", "qs@1"], "river": [[], [], [], []], "stream": [], "waste": 0},
                filler()])
    assert t2.layout()["teams"][0]["nertz"] == ["10H", "QS@1"]
    with pytest.raises(ValueError):
        table([{"nertz": ["1H"], "river": [[], [], [], []], "stream": [], "waste": 0}, filler()])


# ---------------------------------------------------------------------------------- flip


def test_d8_flip_turnover_and_waste_play():
    team = {"nertz": ["9C", "KH"], "river": [["KC"], ["KD"], ["QS"], ["10H"]],
            "stream": ["2C", "5S", "4D", "6C", "7C"], "waste": 0}
    t = table([team, filler()], lake=[["AD@1", "2D@1", "3D@1"]])
    t.step({0: "flip"})
    assert t.layout()["teams"][0]["waste"] == 3 and t.available_cards(0)[1] == "4D"
    t.step({0: "flip"})
    assert t.layout()["teams"][0]["waste"] == 5 and t.available_cards(0)[1] == "7C"
    t.step({0: "flip"})                             # stock empty: turn over, nothing available
    assert t.layout()["teams"][0]["waste"] == 0 and t.layout()["turnovers"] == [1, 0]
    assert t.available_cards(0) == ["KH", "KC", "KD", "QS", "10H"]
    t.step({0: "flip"})
    assert "waste>lake" in t.legal_moves(0)
    assert t.step({0: "waste>lake"})["applied"][0]
    lay = t.layout()
    assert lay["teams"][0]["stream"] == ["2C", "5S", "6C", "7C"]
    assert lay["teams"][0]["waste"] == 2 and t.available_cards(0)[1] == "5S"
    assert lay["turnovers"] == [0, 0]               # D16: a card move resets the counts
    assert lay["lake"] == [["AD@1", "2D@1", "3D@1", "4D"]]
    # Flip is not a move with an empty Stream (team 1)
    assert "flip" not in t.legal_moves(1)


def test_d9_roles_only_stream_seat_flips():
    team = {"nertz": ["9C", "KH"], "river": [["KC"], ["KD"], ["QS"], ["10H"]],
            "stream": ["2C", "5S"], "waste": 0}
    c = cfg(team_sizes=[2, 1])
    even = RefTable.from_layout({"lake": [], "teams": [team, filler()]}, c)
    assert "flip" not in even.legal_moves(0) and "flip" in even.legal_moves(1)
    odd = RefTable.from_layout({"lake": [], "teams": [team, filler()], "hand": 1}, c)
    assert "flip" in odd.legal_moves(0) and "flip" not in odd.legal_moves(1)
    fixed = RefTable.from_layout({"lake": [], "teams": [team, filler()]},
                                 cfg(team_sizes=[2, 1], alternate_roles=False), hand=1)
    assert "flip" not in fixed.legal_moves(0) and "flip" in fixed.legal_moves(1)
    with pytest.raises(ValueError):
        even.step({0: "flip"})


# ---------------------------------------------------------------------------------- conflicts


def test_r22_conflict_on_one_lake_pile():
    a = {"nertz": ["9C", "2H"], "river": [["KC"], ["KD"], ["QS"], ["10H"]], "stream": [], "waste": 0}
    t = table([a, dict(a)], lake=[["AH"]])
    assert t.legal_moves(0) == ["wait", "nertz>lake"]       # R19 (no empty column)
    res = t.step({0: "nertz>lake", 1: "nertz>lake"}, priority=[1])
    assert res["applied"] == {0: False, 1: True}
    lay = t.layout()
    assert lay["lake"] == [["AH", "2H@1"]]
    assert lay["teams"][0]["nertz"] == ["9C", "2H"]
    assert lay["ready"] == [1, 1]                   # the failed seat still spent its action
    # two piles that fit: both succeed, each on the first pile that fits when it resolves
    t = table([a, dict(a)], lake=[["AH"], ["AH@1"]])
    res = t.step({0: "nertz>lake", 1: "nertz>lake"}, priority=[0, 1])
    assert res["applied"] == {0: True, 1: True}
    assert t.layout()["lake"] == [["AH", "2H"], ["AH@1", "2H@1"]]


def test_r23_teammates_tied_to_named_waste_card():
    team = {"nertz": ["9C", "KH"], "river": [["9H"], ["9D"], ["8C"], ["KS"]],
            "stream": ["5C", "7D", "8S"], "waste": 3}
    t = RefTable.from_layout({"lake": [], "teams": [team, filler()]}, cfg(team_sizes=[2, 1]))
    assert "waste>river0" in t.legal_moves(0) and "waste>river1" in t.legal_moves(1)
    res = t.step({0: "waste>river0", 1: "waste>river1"}, priority=[0, 1])
    assert res["applied"] == {0: True, 1: False, 2: True}
    lay = t.layout()["teams"][0]
    assert lay["river"] == [["9H", "8S"], ["9D"], ["8C"], ["KS"]]
    assert lay["stream"] == ["5C", "7D"] and lay["waste"] == 2


def test_d14_build_becomes_fill_and_whole_column_shift_fails():
    team = {"nertz": ["9C", "4S"], "river": [["5H"], ["KC", "QD"], ["6C"], ["JS"]],
            "stream": [], "waste": 0}
    t = RefTable.from_layout({"lake": [], "teams": [team, filler()]}, cfg(team_sizes=[2, 1]))
    # seat 0 moves 5H onto 6C, emptying river0; seat 1's build onto 5H becomes a fill
    assert "river0:0>river2" in t.legal_moves(0) and "nertz>river0" in t.legal_moves(1)
    res = t.step({0: "river0:0>river2", 1: "nertz>river0"}, priority=[0, 1])
    assert res["applied"] == {0: True, 1: True, 2: True}
    assert t.layout()["teams"][0]["river"] == [["4S"], ["KC", "QD"], ["6C", "5H"], ["JS"]]
    # a whole-column shift whose target column was emptied fails
    team = {"nertz": ["9C", "KH"], "river": [["QD"], ["JS"], ["10H"], ["KC"]],
            "stream": [], "waste": 0}
    t = RefTable.from_layout({"lake": [], "teams": [team, filler()]}, cfg(team_sizes=[2, 1]))
    assert "river2:0>river1" in t.legal_moves(1)
    res = t.step({0: "river1:0>river0", 1: "river2:0>river1"}, priority=[0, 1])
    assert res["applied"] == {0: True, 1: False, 2: True}
    assert t.layout()["teams"][0]["river"] == [["QD", "JS"], [], ["10H"], ["KC"]]
    assert t.layout()["ready"] == [1, 1, 1]


def test_d7_shift_moves():
    team = {"nertz": ["9C", "KH"], "river": [["KS", "QH", "JS"], [], ["QD"], ["5C"]],
            "stream": [], "waste": 0}
    t = table([team, filler()])
    shifts = sorted(m for m in t.legal_moves(0) if m.startswith("river") and ">river" in m)
    # KS (whole column) into the empty column is not a move (R14), nor 5C or QD
    assert shifts == ["river0:1>river1", "river0:2>river1", "river0:2>river2"]
    # a shift without an index means the top card alone
    assert t.step({0: "river0>river2"})["applied"][0]
    assert t.layout()["teams"][0]["river"] == [["KS", "QH"], [], ["QD", "JS"], ["5C"]]
    # no part holding an ace is shifted, and no ace goes onto the River (D6)
    team = {"nertz": ["9C", "AC"], "river": [["2S", "AH"], [], ["3D"], ["5C"]],
            "stream": [], "waste": 0}
    t = table([team, filler()], config=cfg(flow_rules=False))
    assert not [m for m in t.legal_moves(0) if ">river" in m]


# ---------------------------------------------------------------------------------- flow rules


def test_r18_available_ace_forces_lake():
    team = {"nertz": ["9C", "KH"], "river": [["KC"], ["2S"], ["QD"], []],
            "stream": ["5C", "AS"], "waste": 2}
    t = table([team, filler()])
    assert sorted(t.legal_moves(0)) == sorted(["wait", "waste>lake", "waste+river1>lake"])
    t_off = table([team, filler()], config=cfg(flow_rules=False))
    assert {"flip", "nertz>river3", "river2:0>river0"} <= set(t_off.legal_moves(0))
    assert "waste>river3" not in t_off.legal_moves(0)   # no ace fills a column (D6)
    assert t.step({0: "waste+river1>lake"})["applied"][0]
    assert t.layout()["lake"] == [["AS", "2S"]]


def test_r19_nertz_card_must_go_unless_empty_column():
    team = {"nertz": ["9C", "5H"], "river": [["KC"], ["6H"], ["QD"], ["JS"]],
            "stream": ["8C", "2C"], "waste": 1}
    lake = [["AH", "2H", "3H", "4H"]]
    t = table([team, filler()], lake=lake)
    assert sorted(t.legal_moves(0)) == sorted(["wait", "nertz>lake", "nertz+river1>lake"])
    assert t.step({0: "nertz+river1>lake"})["applied"][0]
    assert t.layout()["lake"] == [["AH", "2H", "3H", "4H", "5H", "6H"]]
    # with an empty River column the Nertz card may be withheld
    with_empty = dict(team, river=[["KC"], ["6H"], ["QD"], []])
    t = table([with_empty, filler()], lake=lake)
    legal = set(t.legal_moves(0))
    assert {"nertz>lake", "nertz+river1>lake", "flip", "nertz>river3", "waste>river3"} <= legal
    assert "river2:0>river3" not in legal           # whole column into an empty one (R14)


def test_stacking_runs_and_variant_off():
    team = {"nertz": ["9C", "5S"], "river": [["4S"], ["KD"], ["QH"], ["JC"]],
            "stream": ["2C", "3S"], "waste": 2}
    lake = [["AS", "2S"]]
    t = table([team, filler()], lake=lake)
    lakes = sorted(m for m in t.legal_moves(0) if m.endswith(">lake"))
    assert lakes == sorted(["waste>lake", "waste+river0>lake", "waste+river0+nertz>lake"])
    res = t.step({0: "waste+river0+nertz>lake"})
    assert res["applied"][0]
    lay = t.layout()
    assert lay["lake"] == [["AS", "2S", "3S", "4S", "5S"]]
    assert lay["teams"][0]["nertz"] == ["9C"] and lay["teams"][0]["river"][0] == []
    assert lay["teams"][0]["waste"] == 1
    t_off = table([team, filler()], lake=lake, config=cfg(stacking=False))
    assert [m for m in t_off.legal_moves(0) if "+" in m] == []


# ---------------------------------------------------------------------------------- idle table


def test_r27_idle_burn_and_d16_reset_order():
    a = {"nertz": ["9C", "KH"], "river": [["KC"], ["KD"], ["QS"], ["10H"]],
         "stream": ["2C", "5S", "6D"], "waste": 3}
    b = {"nertz": ["9C", "KH"], "river": [["KC"], ["KD"], ["QS"], ["JH"]],
         "stream": ["3C", "4S"], "waste": 1}
    t = table([a, b], turnovers=[1, 2])
    res = t.step({0: "flip"})                       # team 0 turns over: both >= 2 -> burn
    assert res["applied"][0]
    lay = t.layout()
    assert lay["teams"][0]["stream"] == ["5S", "6D", "2C"] and lay["teams"][0]["waste"] == 0
    assert lay["teams"][1]["stream"] == ["4S", "3C"] and lay["teams"][1]["waste"] == 0
    assert lay["turnovers"] == [0, 0] and lay["burns"] == 1 and lay["tick"] == 1
    # a card move resolving first in the same tick resets the counts: no burn
    t = table([a, b], turnovers=[1, 2])
    t.step({0: "flip", 1: "river3:0>river2"}, priority=[1, 0])
    assert t.layout()["turnovers"] == [1, 0] and t.layout()["burns"] == 0
    # resolving after the turn-over, it still resets everything
    t = table([a, b], turnovers=[1, 2])
    t.step({0: "flip", 1: "river3:0>river2"}, priority=[0, 1])
    assert t.layout()["turnovers"] == [0, 0] and t.layout()["burns"] == 0


def test_r28_fourth_burn_moves_nertz_tops():
    a = {"nertz": ["9C", "8D", "KH"], "river": [["KC"], ["KD"], ["QS"], ["10H"]],
         "stream": ["2C", "5S"], "waste": 2}
    b = {"nertz": ["KH"], "river": [["KC"], ["KD"], ["QS"], ["10H"]],
         "stream": [], "waste": 0}
    t = table([a, b], turnovers=[1, 0], burns=3)
    t.step({0: "flip"})
    lay = t.layout()
    assert lay["burns"] == 4
    assert lay["teams"][0]["nertz"] == ["KH", "9C", "8D"]
    assert lay["teams"][1]["nertz"] == ["KH"]
    assert lay["teams"][0]["stream"] == ["5S", "2C"]
    # third burn: Nertz piles untouched
    t = table([a, b], turnovers=[1, 0], burns=2)
    t.step({0: "flip"})
    assert t.layout()["burns"] == 3 and t.layout()["teams"][0]["nertz"] == a["nertz"]


# ---------------------------------------------------------------------------------- speed


def test_r21_speeds_and_move_ticks():
    a = {"nertz": ["9C", "2H"], "river": [["KC"], ["KD"], ["QS"], ["10H"]], "stream": [], "waste": 0}
    b = {"nertz": ["9C", "KH"], "river": [["KC"], ["KD"], ["QS"], ["10H"]],
         "stream": ["2C", "5S"], "waste": 0}
    c = cfg(speeds=[2, 1], move_ticks={"lake": 2})
    t = RefTable.from_layout({"lake": [["AH"]], "teams": [a, b]}, c)
    t.step({0: "nertz>lake", 1: "flip"})
    assert t.layout()["ready"] == [4, 1]           # 0 + 2*2 ; 0 + 1*1 (flip costs 1)
    for _ in range(3):
        assert t.legal_moves(0) == ["wait"]
        t.step({})
    assert t.layout()["ready"] == [4, 4] and t.tick == 4   # waits: max(ready, t+1)
    assert t.legal_moves(0) != ["wait"]
    t2 = RefTable.from_layout({"lake": [["AH"]], "teams": [a, b], "ready": [3, 0]}, c)
    with pytest.raises(ValueError):
        t2.step({0: "nertz>lake"})


# ---------------------------------------------------------------------------------- end, score


def test_r24_r25_split_bonus_and_scores():
    a = {"nertz": ["2H"], "river": [["KC"], ["KD"], ["QS"], ["10H"]], "stream": ["3C"], "waste": 0}
    b = {"nertz": ["2D"], "river": [["KC"], ["KD"], ["QS"], ["10H"]], "stream": [], "waste": 0}
    c = {"nertz": ["7D", "6D"], "river": [["KC"], ["KD"], ["QS"], ["10H"]], "stream": [], "waste": 0}
    lake = [["AH"], ["AD@1"], ["AS@2"]]
    t = table([a, b, c], lake=lake)
    assert t.hand_scores() == [1 - 2, 1 - 2, 1 - 4]
    res = t.step({0: "nertz>lake", 1: "nertz>lake"})
    assert res["callers"] == [0, 1] and res["hand_over"] and not res["truncated"]
    assert t.hand_over and t.layout()["callers"] == [0, 1]
    assert t.hand_scores() == [2 + 5, 2 + 5, 1 - 4]
    assert t.legal_moves(0) == ["wait"]
    with pytest.raises(ValueError):
        t.step({})                                  # D19
    # one caller takes the whole bonus; penalties count (D20)
    t = table([a, b, c], lake=lake, penalties=[0, 0, 1])
    t.step({0: "nertz>lake"})
    assert t.hand_scores() == [2 + 10, 1 - 2, 1 - 4 - 5]


def test_r24_call_variant_and_r26_truncation():
    a = {"nertz": [], "river": [["KC"], ["KD"], ["QS"], ["10H"]], "stream": ["3C"], "waste": 0}
    t = table([a, filler()], config=cfg(auto_nertz=False, max_ticks=3))
    assert "call" in t.legal_moves(0) and "call" not in t.legal_moves(1)
    res = t.step({0: "flip"})
    assert not res["hand_over"] and res["callers"] == []
    res = t.step({0: "call"})
    assert res["callers"] == [0] and res["hand_over"] and t.hand_scores()[0] == 1 * 0 + 10
    t = table([a, filler()], config=cfg(auto_nertz=False, max_ticks=3))
    for i in range(3):
        res = t.step({})
    assert res["hand_over"] and res["truncated"] and t.tick == 3 and t.hand_over
    # with auto_nertz an empty Nertz pile ends the hand at the end of the tick
    t = table([a, filler()])
    assert t.step({})["callers"] == [0]


# ---------------------------------------------------------------------------------- illegal


def test_r31_illegal_raise_changes_nothing_penalize_and_ignore():
    a = {"nertz": ["9C", "2H"], "river": [["KC"], ["KD"], ["QS"], ["10H"]],
         "stream": ["2C", "5S"], "waste": 0}
    t = table([a, filler()], lake=[["AH"]])
    before = t.layout()
    with pytest.raises(ValueError, match="seat 0.*flip"):
        t.step({1: "wait", 0: "flip"})              # R19 forbids flip here
    assert t.layout() == before and t.tick == 0
    with pytest.raises(ValueError):
        t.step({0: "nertz>lake", 1: "nertz>lake"})  # seat 1's KH cannot go: nothing changes
    assert t.layout() == before
    with pytest.raises(ValueError):
        t.step({0: "not a move"})
    t = table([a, filler()], lake=[["AH"]], config=cfg(illegal_move="penalize"))
    res = t.step({0: "flip", 1: "nertz>lake"})
    assert res["applied"] == {0: False, 1: False}
    assert t.layout()["penalties"] == [1, 1] and t.layout()["ready"] == [1, 1]
    assert t.hand_scores() == [1 - 4 - 5, 0 - 4 - 5]    # AH in the Lake is deck 0's
    t = table([a, filler()], lake=[["AH"]], config=cfg(illegal_move="ignore"))
    res = t.step({0: "flip", 1: "nertz>lake"})
    assert res["applied"] == {0: False, 1: False} and t.layout()["penalties"] == [0, 0]


# ---------------------------------------------------------------------------------- smoke


def check_invariants(t: RefTable, num_teams: int) -> None:
    lay = t.layout()
    seen = {d: [] for d in range(num_teams)}

    def add(text, default):
        deck = int(text.split("@")[1]) if "@" in text else default
        seen[deck].append(text.split("@")[0])

    for pile in lay["lake"]:
        for c in pile:
            add(c, 0)
        ranks = [RANKS.index(c.split("@")[0][:-1]) for c in pile]
        assert ranks == list(range(len(pile))), pile          # A, 2, 3 ... of one suit
        assert len({c.split("@")[0][-1] for c in pile}) == 1, pile
    for ti, team in enumerate(lay["teams"]):
        for c in team["nertz"] + team["stream"]:
            add(c, ti)
        for col in team["river"]:
            for c in col:
                add(c, ti)
            for lo, hi in zip(col[1:], col):
                assert RANKS.index(hi[:-1]) == RANKS.index(lo[:-1]) + 1, col
                assert (hi[-1] in "HD") != (lo[-1] in "HD"), col
        assert 0 <= team["waste"] <= len(team["stream"])
    for d in range(num_teams):
        assert sorted(seen[d]) == sorted(FULL_DECK), f"deck {d} not conserved"


def test_smoke_random_play_conserves_cards():
    rng = random.Random(1234)
    start = time.time()
    ends = {"called": 0, "truncated": 0}
    for hand in range(200):
        num_teams = rng.randint(2, 4)
        sizes = [rng.choice([1, 2]) for _ in range(num_teams)] if rng.random() < 0.5 else None
        seats = sum(sizes) if sizes else num_teams
        c = cfg(num_teams=num_teams, team_sizes=sizes, river_size=rng.choice([4, 5]),
                stacking=rng.random() < 0.8, flow_rules=rng.random() < 0.8,
                auto_nertz=rng.random() < 0.8, max_ticks=70,
                speeds=[rng.randint(1, 2) for _ in range(seats)] if rng.random() < 0.3 else None,
                move_ticks={"lake": 2, "shift": 3} if rng.random() < 0.3 else None)
        decks = [rng.sample(FULL_DECK, 52) for _ in range(num_teams)]
        t = RefTable.deal(c, decks, hand=hand)
        while not t.hand_over:
            moves = {s: rng.choice(t.legal_moves(s)) for s in range(seats)}
            prio = rng.sample(range(seats), rng.randint(0, seats))
            res = t.step(moves, prio)
            assert set(res["applied"]) == set(range(seats))
            check_invariants(t, num_teams)
            if rng.random() < 0.05:
                assert RefTable.from_layout(t.layout(), c).layout() == t.layout()
        ends["called" if t.layout()["callers"] else "truncated"] += 1
        assert all(isinstance(s, int) for s in t.hand_scores())
    assert time.time() - start < 60
    assert ends["truncated"] > 0
