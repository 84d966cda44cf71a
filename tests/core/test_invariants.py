"""core/invariants.py (check_invariants) and the counters' width: a corrupt state is a
ValueError naming the table, team and what is wrong, and nothing is written; every state that
random play reaches passes; layouts' counters past their range are ValueErrors naming the
field (never an OverflowError) and counters beyond int16 keep counting (R28, R29, R31)."""
from __future__ import annotations

import numpy as np
import pytest
from helpers import BLACKS, OTHER, REDS, layout_of, random_config, team

from nertz_env import Engine, RulesConfig, Table
from nertz_env.core import invariants as inv

E = 1           # the corrupted table (of 3): messages must name it


def random_play(eng: Engine, ticks: int, seed: int) -> None:
    rng = np.random.default_rng(seed)
    for _ in range(ticks):
        if eng.hand_over.all():
            return
        score = rng.random(eng.masks.shape) + 0.5 * (np.arange(eng.masks.shape[-1]) == 1)
        eng.step(np.where(eng.masks != 0, score, -1.0).argmax(-1))


@pytest.fixture(scope="module")
def played() -> Engine:
    eng = Engine(RulesConfig(num_teams=3, illegal_move="penalize", max_ticks=500), 3, seed=5)
    eng.reset()
    random_play(eng, 40, 5)
    s = eng.state                  # what the corruptions below take for granted
    assert not eng.hand_over[E] and (s.nertz_n[E] > 0).all() and (s.stream_n[E] > 0).all()
    assert s.river_n[E, 2, 1] >= 1 and 1 <= s.river_n[E, 0, 0] < 13 and s.stream_n[E, 0] < 52
    assert s.lake_n[E, 11] == 0 and s.river_n[E, 1, 3] < 13
    return eng


def arrays_of(eng: Engine) -> dict:
    return {k: v.copy() for k, v in eng.state._asdict().items()}


def assert_state(eng: Engine, arrays: dict) -> None:
    for k, v in eng.state._asdict().items():
        assert np.array_equal(v, arrays[k]), k


def _extend_column(s):
    """Column 0 of team 0 gets its own top card again on top: not one rank lower."""
    n = s["river_n"][E, 0, 0]
    s["river"][E, 0, 0, n] = s["river"][E, 0, 0, n - 1]
    s["river_n"][E, 0, 0] = n + 1


def _set(name, index, value):
    def mutate(s):
        s[name][index] = value
    return mutate


def _add(name, index, value):
    def mutate(s):
        s[name][index] += value
    return mutate


def _nertz_top_into_stream(s):
    """The Nertz top of team 1 also as the first Stream card: one card in two places."""
    s["stream"][E, 1, 0] = s["nertz"][E, 1, s["nertz_n"][E, 1] - 1]


def _river_card_over_nertz_top(s):
    """A River card copied over the Nertz top: in two places, and the old top gone."""
    s["nertz"][E, 2, s["nertz_n"][E, 2] - 1] = s["river"][E, 2, 1, 0]


def _stray_stream_slot(s):
    s["stream"][E, 0, s["stream_n"][E, 0]] = 7


def _waste_past_stream(s):
    s["waste_n"][E, 0] = s["stream_n"][E, 0] + 1


def _drop_last_stream_card(s):
    n = s["stream_n"][E, 0]
    s["stream"][E, 0, n - 1] = -1
    s["stream_n"][E, 0] = n - 1
    s["waste_n"][E, 0] = min(s["waste_n"][E, 0], n - 1)


def _called_but_playing(s):
    s["callers"][E, 2] = 1


def _over_without_callers(s):
    s["status"][E] = 1


def _truncated_early(s):
    s["status"][E] = 2


CORRUPTIONS = {
    "nertz_n=100": (_set("nertz_n", (E, 0), 100), r"team 0: nertz_n = 100 is outside 0\.\.13"),
    "nertz_n=-1": (_set("nertz_n", (E, 1), -1), r"team 1: nertz_n = -1"),
    "duplicate card": (_nertz_top_into_stream, r"team 1: \w+ \(card id \d+\) of its deck appears 2"),
    "card in two places": (_river_card_over_nertz_top, r"team 2: \w+ \(card id \d+\) .*appears 2"),
    "card missing": (_drop_last_stream_card, r"team 0: \w+ \(card id \d+\) of its deck is nowhere"),
    "river out of order": (_extend_column, r"team 0: river\[0\]\[\d+\] breaks the column"),
    "river slot": (_set("river", (E, 1, 3, 12), 5), r"team 1: river\[3\]\[12\] lies above"),
    "river_n=14": (_set("river_n", (E, 0, 2), 14), r"team 0: river_n\[2\] = 14"),
    "stream_n=60": (_set("stream_n", (E, 2), 60), r"team 2: stream_n = 60 is outside 0\.\.52"),
    "waste_n past stream": (_waste_past_stream, r"team 0: waste_n = \d+ is outside 0\.\.stream_n"),
    "stream card 60": (_set("stream", (E, 1, 0), 60), r"team 1: stream\[0\] = 60 is not a card"),
    "stream slot": (_stray_stream_slot, r"team 0: stream\[\d+\] = 7 lies above"),
    "negative penalties": (_set("penalties", (E, 2), -1), r"team 2: penalties = -1"),
    "negative turnovers": (_set("turnovers", (E, 0), -3), r"team 0: turnovers = -3"),
    "negative burns": (_set("burns", E, -1), r": burns = -1"),
    "negative tick": (_set("tick", E, -1), r": tick = -1 is outside 0\.\.max_ticks"),
    "tick past max_ticks": (_set("tick", E, 501), r": tick = 501 is outside 0\.\.max_ticks \(500\)"),
    "negative hand": (_set("hand", E, -2), r": hand = -2"),
    "negative ready": (_set("ready", (E, 1), -1), r"seat 1: ready = -1"),
    "ready far ahead": (_set("ready", (E, 2), 10**6), r"seat 2: ready = 1000000 is outside"),
    "status 3": (_set("status", E, 3), r": status = 3 is not"),
    "callers 2": (_set("callers", (E, 0), 2), r"team 0: callers = 2"),
    "caller while playing": (_called_but_playing, r": status = 0 with 1 caller"),
    "over without callers": (_over_without_callers, r": status = 1 with 0 caller"),
    "truncated early": (_truncated_early, r": status = 2 at tick \d+"),
    "lake_piles=100": (_set("lake_piles", E, 100), r": lake_piles = 100 is outside 0\.\.12"),
    "lake_own": (_set("lake_own", (E, 1), 40), r"team 1: lake_own = 40 but the Lake holds"),
    "lake_next": (_add("lake_next", (E, 30), 1), r": lake_next\[30\] disagrees"),
    "lake slot": (_set("lake", (E, 11, 0), 3), r"Lake pile 11: lake\[0\] = 3 lies above"),
}


@pytest.mark.parametrize("name", list(CORRUPTIONS))
def test_a_corrupt_state_is_refused_and_nothing_is_written(played, name):
    mutate, match = CORRUPTIONS[name]
    before = arrays_of(played)
    masks = played.masks.copy()
    bad = arrays_of(played)
    mutate(bad)
    assert any(not np.array_equal(bad[k], before[k]) for k in before), "the mutation did nothing"
    with pytest.raises(ValueError, match=r"state is invalid at table 1(, )?" + match):
        played.write_state(bad)
    assert_state(played, before)
    assert np.array_equal(played.masks, masks)
    # the kernel itself: an error code and the table (no exception inside numba)
    code, e = inv.check_invariants(played.checked_state(before), played.params, True)[:2]
    assert code == inv.OK
    from nertz_env.core.state import NertzState
    result = inv.check_invariants(NertzState(**bad), played.params, True)
    assert result[0] != inv.OK and result[1] == E


def test_the_card_missing_case_passes_with_partial_decks(played):
    bad = arrays_of(played)
    _drop_last_stream_card(bad)
    played.checked_state(bad, complete_decks=False)           # a layout may leave cards out


def test_states_of_random_play_pass():
    """Every state reached by random legal and illegal play, over random configs, passes
    (and write_state accepts it back unchanged)."""
    rng = np.random.default_rng(11)
    for k in range(6):
        cfg = random_config(rng, max_ticks=int(rng.integers(30, 120)),
                            illegal_move=("penalize", "ignore")[k % 2])
        eng = Engine(cfg, 4, seed=k)
        eng.reset(hands=[0, 1, 2, 3])
        for _ in range(cfg.max_ticks):
            a = np.where(eng.masks != 0, rng.random(eng.masks.shape), -1.0).argmax(-1)
            if rng.random() < 0.2:                           # now and then an illegal id
                a = rng.integers(0, eng.masks.shape[-1], size=a.shape)
            eng.step(a)
            eng.check_invariants()
        assert eng.hand_over.all()
        state = arrays_of(eng)
        eng.write_state(state)
        assert_state(eng, state)


def test_dtype_and_wrap_are_refused(played):
    before = arrays_of(played)
    for name, value, match in [
        ("nertz_n", before["nertz_n"].astype(np.float64), r"'nertz_n' is a float64 array"),
        ("nertz_n", before["nertz_n"].astype(np.int64) + 256, r"'nertz_n' holds \d+, outside its dtype int8"),
        ("rng", np.full(before["rng"].shape, -1), r"'rng' holds -1, outside its dtype uint64"),
        ("penalties", before["penalties"].astype(np.int64) + 2**31, r"'penalties' holds \d+, outside"),
        ("tick", before["tick"][:2], r"'tick' has shape \(2,\)"),
        ("callers", before["callers"].astype(bool), r"'callers' is a bool array"),
        ("lake", [["x"]], r"'lake' is a <U1 array"),
    ]:
        bad = arrays_of(played)
        bad[name] = value
        with pytest.raises(ValueError, match=match):
            played.write_state(bad)
    with pytest.raises(ValueError, match=r"miss \['burns'\] / have unknown \['extra'\]"):
        played.write_state({**{k: v for k, v in before.items() if k != "burns"}, "extra": 1})
    assert_state(played, before)


# ----------------------------------------------------------------------------- layouts
def test_layouts_may_hold_partial_decks_but_deals_may_not():
    t = Table.from_layout(layout_of([team(["KS"])], lake=[["AH", "2H"]]), RulesConfig())
    t.engine.check_invariants(complete_decks=False)
    with pytest.raises(ValueError, match="is nowhere"):
        t.engine.check_invariants()
    Table.deal(RulesConfig(num_teams=4), seed=3).engine.check_invariants()


def test_a_layout_lake_is_checked_cell_by_cell():
    t = Table.from_layout(layout_of([team(["KS"])], lake=[["AH", "2H", "3H"], ["AS@1"]]),
                          RulesConfig())
    eng = t.engine
    ok = arrays_of(eng)
    for mutate, match in [
        (_lake(0, 1, 1 * 13 + 5), r"Lake pile 0: lake\[1\] = 18 breaks the pile"),
        (_lake(0, 1, 2 * 13 + 1), r"Lake pile 0: lake\[1\] = 27 breaks the pile"),
        (_lake(1, 0, 2 * 52), r"Lake pile 1: lake\[0\] = 104 is not a lake card"),
        (_set_at("lake_n", (0, 1), 0), r"Lake pile 1: lake_n = 0 with lake_piles = 2"),
        (_set_at("lake_n", (0, 0), 2), r"Lake pile 0: lake\[2\] = 15 lies above"),
    ]:
        bad = arrays_of(eng)
        mutate(bad)
        with pytest.raises(ValueError, match=match):
            eng.write_state(bad, complete_decks=False)
        assert_state(eng, ok)


def _lake(p, d, v):
    def mutate(s):
        s["lake"][0, p, d] = v
    return mutate


def _set_at(name, index, value):
    def mutate(s):
        s[name][index] = value
    return mutate


BIG = 2**31


@pytest.mark.parametrize("key, value, match", [
    ("tick", 3001, r"layout\['tick'\] = 3001 must be an int from 0 to 3000 \(the config's max_ticks"),
    ("tick", BIG, r"layout\['tick'\] = 2147483648 must be an int from 0 to 3000"),
    ("hand", BIG, r"layout\['hand'\] = 2147483648 must be an int from 0 to 2147483647"),
    ("ready", [2, 0], r"layout\['ready\[0\]'\] = 2 must be an int from 0 to 1 \(tick \+"),
    ("ready", [0, BIG], r"layout\['ready\[1\]'\] = 2147483648 must be an int from 0 to 1"),
    ("burns", BIG, r"layout\['burns'\] = 2147483648 must be an int from 0 to 2147483647"),
    ("turnovers", [0, 2**40], r"layout\['turnovers\[1\]'\] = 1099511627776 must be an int from 0"),
    ("penalties", [BIG, 0], r"layout\['penalties\[0\]'\] = 2147483648 must be an int from 0"),
    ("penalties", [-1, 0], r"layout\['penalties\[0\]'\] = -1 must be an int from 0"),
])
def test_layout_counters_out_of_range_name_the_field(key, value, match):
    layout = layout_of([team(["KS"])], **{key: value})
    with pytest.raises(ValueError, match=match):
        Table.from_layout(layout, RulesConfig())


def test_layout_ready_bound_follows_speeds_and_move_ticks():
    config = RulesConfig(speeds=[3, 1], move_ticks={"shift": 4})
    layout = layout_of([team(["KS"])], tick=5, ready=[5 + 12, 6])
    assert Table.from_layout(layout, config).layout()["ready"] == [17, 6]
    layout["ready"] = [18, 6]
    with pytest.raises(ValueError, match=r"'ready\[0\]'\] = 18 must be an int from 0 to 17"):
        Table.from_layout(layout, config)


# ----------------------------------------------------------------------------- wide counters
@pytest.mark.parametrize("start", [32_767, 40_000])
def test_penalties_past_int16_keep_scoring(start):
    """R29, R31: one more penalized move costs penalty_points, whatever the count (an int16
    counter wrapped at 32,768 and the score jumped by ~+327,000)."""
    config = RulesConfig(illegal_move="penalize", penalty_points=5)
    t = Table.from_layout(layout_of([team(["KS"]), OTHER], penalties=[start, 0]), config)
    lake_0, nertz_0 = 0, 1
    assert t.hand_scores()[0] == lake_0 - 2 * nertz_0 - 5 * start
    t.step({0: "nertz>lake"})                               # KS cannot go to the Lake
    assert t.layout()["penalties"] == [start + 1, 0]
    assert t.hand_scores()[0] == -2 - 5 * (start + 1)
    assert Table.from_layout(t.layout(), config).layout() == t.layout()


def test_burns_past_int16_keep_rotating_the_nertz_piles():
    """R28: from the fourth burn in a row the Nertz tops go to the bottom, however many burns
    came before (an int16 counter wrapped to -32,768 and the rotation stopped)."""
    t = Table.from_layout(layout_of(
        [team(["2S", "3S", "KS"], REDS, ["2H", "3H", "4H"], 3), team(["5D", "KD"], BLACKS, ["2C", "3C"], 2)],
        turnovers=[1, 1], burns=32_767), RulesConfig())
    t.step({0: "flip", 1: "flip"}, priority=[0, 1])
    layout = t.layout()
    assert layout["burns"] == 32_768
    assert layout["teams"][0]["nertz"] == ["KS", "2S", "3S"]
    assert layout["teams"][1]["nertz"] == ["KD", "5D"]
    t.engine.check_invariants(complete_decks=False)


def test_counter_dtypes_hold_every_valid_config():
    """A hand of max_ticks (<= 1,000,000) ticks adds at most one burn per tick and one
    penalty per seat per tick: int32 holds them."""
    eng = Engine(RulesConfig(num_teams=8, team_sizes=(2,) * 8), 1)
    for name in ("penalties", "burns", "turnovers", "tick", "ready", "hand"):
        assert np.iinfo(getattr(eng.state, name).dtype).max >= 2 * 1_000_000, name
