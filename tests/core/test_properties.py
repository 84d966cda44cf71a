"""Property tests: random play driven by hypothesis-drawn integers, with invariants checked after
EVERY tick, through the readable Table API (layouts parsed here, independently of the package)
and directly on the arrays of a batched Engine.

Properties (rule ids of docs/rules.md, decisions D.. of docs/engine_contract.md):
- card conservation (R1, R5-R7, R10): each team's 52 cards are, each exactly once, in its Nertz
  pile, River, Stream or the Lake (Lake cards carry their deck);
- piles stay valid (R6, R10, R11, R14, R15, R27, R28, D4, D6, D17): Lake piles A,2,3.. of one
  suit that only grow, River columns down by one in alternating colours with no ace placed on
  them, 0 <= waste <= Stream, Nertz <= 13, Streams and Nertz piles never gain or reorder cards
  except by an exact burn rotation;
- the mask is the legal set (R9, R17-R19, R21, R24, D9, D11, D12, docs/api.md): action_mask ==
  encoded legal_moves, wait always legal, flow rules and roles respected;
- same seed, same game (R8, R22): identical layouts / arrays / TickResults every tick;
- scores (R25, R29, R31, D20) recomputed from the layout;
- a legal move that is applied changes the state, and a tick with no applied move changes no
  card except by a burn (R15, R22, R24, R27, D14, D18).

Hands are kept short (max_ticks drawn small, and optionally most Nertz cards moved to the
Stream so that Nertz calls happen) so the file runs in well under a minute; a "lazy" style of
play (flip whenever possible, otherwise only forced Lake plays) makes idle burns (R27) and
Nertz-pile rotations (R28) happen.
"""
from __future__ import annotations

from collections import Counter

import numpy as np
from helpers import random_config
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nertz_env import Engine, Move, RulesConfig, Table

SETTINGS = dict(deadline=None, database=None, suppress_health_check=[HealthCheck.too_slow])

SEEDS = st.integers(0, 2**32 - 1)
PICKS = st.lists(st.integers(0, 10**6), max_size=300)
MAX_TICKS = st.integers(20, 140)

RANK_TEXT = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
RANK_OF = {r: i for i, r in enumerate(RANK_TEXT)}
WAIT, FLIP = 0, 1            # action ids of actions.py (wait, flip)
N_ACTIONS = 322
CARD_KINDS = ("lake", "stack", "build", "shift")
# a few moves that are often illegal, for illegal_move = penalize / ignore (R31)
ODD_MOVES = ("flip", "call", "nertz>lake", "waste>river0", "river0:0>river1", "river1>lake")


# ------------------------------------------------------------------------------ drawing
class Draws:
    """Integers for choices: first the hypothesis-drawn picks, then a seeded generator."""

    def __init__(self, seed: int, picks):
        self.picks = list(picks)
        self.i = 0
        self.rng = np.random.default_rng([seed, 7])

    def __call__(self, n: int) -> int:
        if self.i < len(self.picks):
            self.i += 1
            return self.picks[self.i - 1] % n
        return int(self.rng.integers(n))


def make_config(seed: int, max_ticks: int, **over) -> RulesConfig:
    return random_config(np.random.default_rng(seed), max_ticks=max_ticks, **over)


def choose_moves(draw, legal_by_seat, cfg, lazy=False) -> dict:
    """One move per seat: flips favoured; now and then an illegal one when the config allows.
    lazy: flip whenever possible and otherwise mostly wait, so Streams turn over and the idle
    table burns (R27, R28)."""
    moves = {}
    for seat, legal in enumerate(legal_by_seat):
        x = draw(10**6)
        if cfg.illegal_move != "raise" and x % 41 == 40:
            moves[seat] = ODD_MOVES[(x // 41) % len(ODD_MOVES)]
        elif "flip" in legal and (lazy or x % 10 < 3):
            moves[seat] = "flip"
        elif lazy and x % 20:
            # forced plays only: a seat whose every move but wait goes to the Lake (R18, R19)
            lake = [m for m in legal if m.endswith(">lake")]
            moves[seat] = lake[x % len(lake)] if lake and len(lake) == len(legal) - 1 else "wait"
        else:
            moves[seat] = legal[(x // 10) % len(legal)]
    return moves


def shorten_nertz(layout: dict, draw) -> dict:
    """Move the bottom cards of every Nertz pile to the end of the team's Stream, keeping 1-3
    (cards are conserved), so that Nertz calls happen within a short hand."""
    for team in layout["teams"]:
        keep = 1 + draw(3)
        cut = len(team["nertz"]) - keep
        if cut > 0:
            team["stream"] = team["stream"] + team["nertz"][:cut]
            team["nertz"] = team["nertz"][cut:]
    return layout


def new_table(cfg, seed, hand, short, draw) -> Table:
    t = Table.deal(cfg, seed=seed, hand=hand)
    if short:
        t = Table.from_layout(shorten_nertz(t.layout(), draw), cfg, seed=seed)
    return t


def play(t: Table, cfg, draw, lazy=False):
    """Random play to the end of the hand; yields (before, legal, moves, result, after) per tick,
    layouts as dicts, legal as lists of move text per seat."""
    after = t.layout()
    while not t.hand_over:
        before = after
        legal = [[str(m) for m in t.legal_moves(s)] for s in range(cfg.num_seats)]
        moves = choose_moves(draw, legal, cfg, lazy)
        result = t.step(moves)
        t.engine.check_invariants()                  # core/invariants.py, every tick
        after = t.layout()
        yield before, legal, moves, result, after


# ------------------------------------------------------------------------------ layouts
def card(text: str, default_deck: int) -> tuple[int, int]:
    """(deck, card id = suit*13 + rank) from R2 text; independent of nertz_env's parser."""
    body, at, deck = text.partition("@")
    assert body[-1] in "SHDC" and body[:-1] in RANK_OF, text
    return (int(deck) if at else default_deck), "SHDC".index(body[-1]) * 13 + RANK_OF[body[:-1]]


def rank(c: int) -> int:
    return c % 13


def red(c: int) -> bool:
    return c // 13 in (1, 2)


def parse(layout: dict) -> dict:
    lake = [[card(x, 0) for x in pile] for pile in layout["lake"]]
    teams = []
    for t, team in enumerate(layout["teams"]):
        teams.append({
            "nertz": [card(x, t) for x in team["nertz"]],
            "river": [[card(x, t) for x in col] for col in team["river"]],
            "stream": [card(x, t) for x in team["stream"]],
            "waste": team["waste"],
        })
    return {"lake": lake, "teams": teams}


def stream_seat(cfg, team: int, hand: int) -> int:
    """R4: solo -> the seat; pair -> second seat in even hands (first in odd, alternating)."""
    seat0 = sum(cfg.sizes[:team])
    if cfg.sizes[team] == 1:
        return seat0
    return seat0 if (cfg.alternate_roles and hand % 2 == 1) else seat0 + 1


def is_subsequence(small, big) -> bool:
    it = iter(big)
    return all(x in it for x in small)


def check_conservation(p: dict, cfg) -> None:
    """R1, R5-R7, R10: every deck's 52 cards exactly once, team piles hold only their own deck."""
    seen = Counter(c for pile in p["lake"] for c in pile)
    for t, team in enumerate(p["teams"]):
        own = team["nertz"] + [c for col in team["river"] for c in col] + team["stream"]
        assert all(d == t for d, _ in own), f"team {t} holds a foreign card: {own}"
        seen.update(own)
    expected = Counter((d, c) for d in range(cfg.num_teams) for c in range(52))
    assert seen == expected, (f"cards lost {sorted(expected - seen)}, "
                              f"duplicated/foreign {sorted(seen - expected)}")


def check_piles(p: dict, cfg) -> None:
    """R6, R10, R11, R14, R15, D6: the shape of every pile."""
    assert len(p["lake"]) <= 4 * cfg.num_teams
    for pile in p["lake"]:
        assert 1 <= len(pile) <= 13
        for i, (_, c) in enumerate(pile):
            assert rank(c) == i and c // 13 == pile[0][1] // 13, f"bad Lake pile {pile}"
    for t, team in enumerate(p["teams"]):
        assert len(team["nertz"]) <= 13
        assert 0 <= team["waste"] <= len(team["stream"])
        assert len(team["river"]) == cfg.river_size
        for col in team["river"]:
            assert len(col) <= 13
            for (_, hi), (_, lo) in zip(col, col[1:]):
                assert rank(hi) == rank(lo) + 1 and red(hi) != red(lo), f"team {t} River {col}"
            # no move places an ace on the River: only a dealt ace, alone, can be there
            aces = [i for i, (_, c) in enumerate(col) if rank(c) == 0]
            assert not aces or len(col) == 1, f"team {t}: ace inside River column {col}"


def check_transition(pb: dict, pa: dict, lb: dict, la: dict, cfg) -> None:
    """One tick, layouts before (lb, parsed pb) and after (la, pa). R10, D4: Lake piles only
    grow, new piles at the end. R15: without a burn, Streams and Nertz piles only lose cards,
    in order. R27, R28, D16, D17: a burn happens only in a tick without card moves, so it is
    exactly a rotation of every Stream (waste back to stock) and, from the 4th burn in a row,
    of every Nertz pile of 2+ cards; a card move resets the count; an idle table must have
    burnt. R31: penalties never go down. tick + 1."""
    assert la["tick"] == lb["tick"] + 1
    assert len(pa["lake"]) >= len(pb["lake"])
    for old, new in zip(pb["lake"], pa["lake"]):
        assert new[:len(old)] == old, f"Lake pile {old} became {new}"
    assert all(a >= b for a, b in zip(la["penalties"], lb["penalties"]))
    if la["burns"] == lb["burns"] + 1:
        assert all(x == 0 for x in la["turnovers"])
        for tb, ta in zip(lb["teams"], la["teams"]):
            s, n = tb["stream"], tb["nertz"]
            assert ta["stream"] == s[1:] + s[:1] and ta["waste"] == 0
            assert ta["nertz"] == (n[-1:] + n[:-1] if la["burns"] >= 4 and len(n) >= 2 else n)
    else:
        assert la["burns"] in (0, lb["burns"])
        for t, (tb, ta) in enumerate(zip(pb["teams"], pa["teams"])):
            for key in ("stream", "nertz"):
                assert len(ta[key]) <= len(tb[key]) and is_subsequence(ta[key], tb[key]), \
                    f"team {t} {key} reordered or grew: {tb[key]} -> {ta[key]}"
    if not la["callers"]:
        busy = [t for t, team in enumerate(la["teams"]) if team["stream"]]
        assert not busy or any(la["turnovers"][t] < 2 for t in busy), "idle table did not burn"


def available(team: dict) -> dict:
    """R9: source code (0 nertz, 1 waste, 2+c River column c) -> card id."""
    out = {}
    if team["nertz"]:
        out[0] = team["nertz"][-1][1]
    if team["waste"]:
        out[1] = team["stream"][team["waste"] - 1][1]
    for c, col in enumerate(team["river"]):
        if col:
            out[2 + c] = col[-1][1]
    return out


def fits_lake(c: int, lake) -> bool:
    return rank(c) == 0 or any(pile[-1][1] == c - 1 for pile in lake)


def source_name(src: int) -> str:
    return "nertz" if src == 0 else "waste" if src == 1 else f"river{src - 2}"


def check_masks(t: Table, layout: dict, p: dict, cfg) -> None:
    """The mask is exactly the legal set, wait is always in it, and the legal set respects
    R4/D9 (only the Stream seat flips), R15, R21 (busy seats wait), D11 (call), D12 (finished
    hand: wait only), R18/R19 (flow rules) and R10 (single Lake plays)."""
    over = t.hand_over
    assert over == (bool(layout["callers"]) or layout["tick"] >= cfg.max_ticks)
    for team_no in range(cfg.num_teams):
        team = layout["teams"][team_no]
        expect = ([team["nertz"][-1]] if team["nertz"] else []) \
            + ([team["stream"][team["waste"] - 1]] if team["waste"] else []) \
            + [col[-1] for col in team["river"] if col]
        assert t.available_cards(team_no) == expect
    for seat in range(cfg.num_seats):
        moves = t.legal_moves(seat)
        texts = [str(m) for m in moves]
        mask = t.action_mask(seat)
        assert mask.dtype == bool and mask.shape == (N_ACTIONS,)
        assert set(np.flatnonzero(mask).tolist()) == {t.encode(m) for m in moves}
        assert len(set(texts)) == len(texts)
        assert "wait" in texts and mask[WAIT]
        for m in moves:
            assert Move.parse(str(m)) == m
            if seat == layout["tick"] % cfg.num_seats:     # the slower round trips: one seat
                assert t.decode(t.encode(m), seat) == m
                assert t.is_legal(seat, m)
        ready = layout["tick"] >= layout["ready"][seat]
        if over or not ready:
            assert texts == ["wait"], f"seat {seat} (over={over}, ready={ready}): {texts}"
            continue
        team_no = cfg.seat_team[seat]
        team = p["teams"][team_no]
        av = available(team)
        lake = p["lake"]
        ace_srcs = [s for s, c in av.items() if rank(c) == 0]
        empty_col = any(not col for col in team["river"])
        r18 = cfg.flow_rules and bool(ace_srcs)
        r19 = (cfg.flow_rules and not r18 and 0 in av and fits_lake(av[0], lake)
               and not empty_col)
        others = [m for m in moves if m.kind != "wait"]
        if r18:
            for m in others:
                assert m.kind in ("lake", "stack") and rank(av[m.sources[0]]) == 0, \
                    f"R18: seat {seat} may play {m} while an ace is available: {texts}"
            for s in ace_srcs:
                assert f"{source_name(s)}>lake" in texts
        elif r19:
            for m in others:
                assert m.kind in ("lake", "stack") and 0 in m.sources, \
                    f"R19: seat {seat} may play {m} while the Nertz card fits the Lake: {texts}"
            assert "nertz>lake" in texts
        else:
            is_stream = seat == stream_seat(cfg, team_no, layout["hand"])
            assert ("flip" in texts) == (is_stream and bool(team["stream"])), \
                f"flip for seat {seat} (stream seat: {is_stream}): {texts}"
            nertz_empty = not team["nertz"]
            assert ("call" in texts) == (not cfg.auto_nertz and nertz_empty), texts
            for s, c in av.items():
                assert (f"{source_name(s)}>lake" in texts) == fits_lake(c, lake), \
                    f"R10: {source_name(s)} card {c} vs Lake {lake}: {texts}"
        if "flip" in texts:
            assert seat == stream_seat(cfg, team_no, layout["hand"]) and team["stream"]
        if "call" in texts:
            assert not cfg.auto_nertz and not team["nertz"]


def expected_scores(layout: dict, p: dict, cfg) -> list[int]:
    """R25, R29, R31, D20 from the layout alone."""
    own = Counter(d for pile in p["lake"] for d, _ in pile)
    callers = layout["callers"]
    out = []
    for t in range(cfg.num_teams):
        score = cfg.lake_points * own[t] - cfg.nertz_penalty * len(layout["teams"][t]["nertz"])
        if t in callers:
            score += cfg.nertz_bonus // len(callers)
        score -= cfg.penalty_points * layout["penalties"][t]
        out.append(score)
    return out


def cards_only(p: dict):
    return (p["lake"], [(x["nertz"], x["river"], x["stream"]) for x in p["teams"]])


# ------------------------------------------------------------------------------ Table tests
@settings(max_examples=25, **SETTINGS)
@given(seed=SEEDS, picks=PICKS, max_ticks=MAX_TICKS, hand=st.integers(0, 3),
       short=st.booleans(), lazy=st.booleans())
def test_card_conservation_and_valid_piles_table(seed, picks, max_ticks, hand, short, lazy):
    """R1, R5-R7 (deal), R10, R11, R14, R15, R27, R28, D4, D6, D17: after every tick of random
    play the layout holds each deck's 52 cards exactly once, every pile has a legal shape, Lake
    piles only grow, Streams / Nertz piles never gain or reorder cards and burns are exact."""
    cfg = make_config(seed, max_ticks * (3 if lazy else 1))
    draw = Draws(seed, picks)
    t = new_table(cfg, seed, hand, short, draw)
    p0 = parse(t.layout())
    check_conservation(p0, cfg)
    check_piles(p0, cfg)
    if not short:   # a fresh deal (R5-R7): one card per column, 13 Nertz cards, no waste
        for team in p0["teams"]:
            assert [len(c) for c in team["river"]] == [1] * cfg.river_size
            assert len(team["nertz"]) == 13 and team["waste"] == 0
            assert len(team["stream"]) == 52 - 13 - cfg.river_size
        assert p0["lake"] == []
    for before, _, _, _, after in play(t, cfg, draw, lazy):
        pb, pa = parse(before), parse(after)
        check_conservation(pa, cfg)
        check_piles(pa, cfg)
        check_transition(pb, pa, before, after, cfg)


@settings(max_examples=20, **SETTINGS)
@given(seed=SEEDS, picks=PICKS, max_ticks=MAX_TICKS, hand=st.integers(0, 3),
       short=st.booleans(), lazy=st.booleans())
def test_mask_equals_legal_moves(seed, picks, max_ticks, hand, short, lazy):
    """R9, R10, R15, R17, R18, R19, R21, R24, D9, D11, D12 (docs/api.md action_mask/encode): at
    every position of random play, before and after the hand ends, the mask of every seat is
    exactly the encoded legal_moves, wait is always legal, and the legal set obeys roles,
    readiness, Call and the flow rules."""
    cfg = make_config(seed, max_ticks * (3 if lazy else 1))
    draw = Draws(seed, picks)
    t = new_table(cfg, seed, hand, short, draw)
    lay = t.layout()
    check_masks(t, lay, parse(lay), cfg)
    for _, _, _, _, after in play(t, cfg, draw, lazy):
        check_masks(t, after, parse(after), cfg)
    assert t.hand_over
    for seat in range(cfg.num_seats):
        assert [str(m) for m in t.legal_moves(seat)] == ["wait"]


@settings(max_examples=15, **SETTINGS)
@given(seed=SEEDS, picks=PICKS, max_ticks=MAX_TICKS, hand=st.integers(0, 3),
       short=st.booleans())
def test_same_seed_same_game_table(seed, picks, max_ticks, hand, short):
    """R8, R22: two Tables dealt with the same seed and given the same moves (priority drawn
    from the table's RNG) have identical layouts, TickResults and scores every tick, and
    from_layout(layout()) is the same position with the same masks; another seed deals
    another hand."""
    cfg = make_config(seed, max_ticks)
    d1, d2 = Draws(seed, picks), Draws(seed, picks)
    t1 = new_table(cfg, seed, hand, short, d1)
    t2 = new_table(cfg, seed, hand, short, d2)
    other = Table.deal(cfg, seed=(seed + 1) % 2**32, hand=hand)
    assert other.layout()["teams"] != Table.deal(cfg, seed=seed, hand=hand).layout()["teams"]
    assert t1.layout() == t2.layout()
    while not t1.hand_over:
        assert not t2.hand_over
        legal = [[str(m) for m in t1.legal_moves(s)] for s in range(cfg.num_seats)]
        moves = choose_moves(d1, legal, cfg)
        assert choose_moves(d2, legal, cfg) == moves
        r1, r2 = t1.step(moves), t2.step(moves)
        assert r1 == r2
        lay = t1.layout()
        assert lay == t2.layout()
        assert t1.hand_scores() == t2.hand_scores()
        copy = Table.from_layout(lay, cfg, seed=seed + 1)
        assert copy.layout() == lay
        for s in range(cfg.num_seats):
            assert np.array_equal(copy.action_mask(s), t1.action_mask(s))
    assert t2.hand_over


@settings(max_examples=20, **SETTINGS)
@given(seed=SEEDS, picks=PICKS, max_ticks=MAX_TICKS, hand=st.integers(0, 3),
       short=st.booleans(), lazy=st.booleans(), auto=st.booleans(), penalize=st.booleans())
def test_hand_scores_match_layout(seed, picks, max_ticks, hand, short, lazy, auto, penalize):
    """R25, R29, R31, D20: hand_scores() is lake_points x own Lake cards - nertz_penalty x Nertz
    cards + bonus share - penalty_points x penalties, recomputed from layout() every tick;
    penalties grow by exactly the illegal moves under "penalize", never otherwise, and an
    illegal move is never applied."""
    cfg = make_config(seed, max_ticks * (3 if lazy else 1), auto_nertz=auto,
                      illegal_move="penalize" if penalize else "ignore")
    draw = Draws(seed, picks)
    t = new_table(cfg, seed, hand, short, draw)
    lay = t.layout()
    assert t.hand_scores() == expected_scores(lay, parse(lay), cfg)
    for before, legal, moves, result, after in play(t, cfg, draw, lazy):
        assert t.hand_scores() == expected_scores(after, parse(after), cfg)
        bad = Counter()
        for seat, m in moves.items():
            if str(Move.parse(m)) not in legal[seat]:
                bad[cfg.seat_team[seat]] += 1
                assert result.applied[seat] is False
        for team in range(cfg.num_teams):
            grew = after["penalties"][team] - before["penalties"][team]
            assert grew == (bad[team] if penalize else 0)
        if result.hand_over and not result.truncated:
            assert result.callers and after["callers"] == sorted(result.callers)


@settings(max_examples=25, **SETTINGS)
@given(seed=SEEDS, picks=PICKS, max_ticks=MAX_TICKS, hand=st.integers(0, 3),
       short=st.booleans(), lazy=st.booleans())
def test_applied_move_changes_state(seed, picks, max_ticks, hand, short, lazy):
    """R15, R17, R22, R24, R27, D14, D18: a tick in which a card move (Lake play, stack, build,
    fill, shift) was applied changes the cards; an applied Flip changes its team's Stream,
    waste or turn-over count (or burns); an applied Call ends the hand with the team calling;
    Wait is always applied; and a tick with no applied move other than Wait leaves the Lake
    and the River as they were and touches Streams / Nertz piles only by a burn."""
    cfg = make_config(seed, max_ticks * (3 if lazy else 1))
    draw = Draws(seed, picks)
    t = new_table(cfg, seed, hand, short, draw)
    for before, legal, moves, result, after in play(t, cfg, draw, lazy):
        pb, pa = parse(before), parse(after)
        applied = {s: Move.parse(m).kind for s, m in moves.items() if result.applied[s]}
        for seat, m in moves.items():
            if m == "wait":
                assert result.applied[seat] is True
        kinds = set(applied.values()) - {"wait"}
        if kinds & set(CARD_KINDS):
            assert cards_only(pa) != cards_only(pb), f"applied {moves} changed no card"
            assert after["burns"] == 0
        for seat, kind in applied.items():
            team = cfg.seat_team[seat]
            if kind == "flip":
                tb, ta = before["teams"][team], after["teams"][team]
                assert ((tb["stream"], tb["waste"]) != (ta["stream"], ta["waste"])
                        or before["turnovers"][team] != after["turnovers"][team]
                        or before["burns"] != after["burns"]), \
                    f"flip of seat {seat} changed nothing"
            elif kind == "call":
                assert result.hand_over and team in result.callers and team in after["callers"]
        if not kinds:
            assert pa["lake"] == pb["lake"]
            for tb, ta in zip(pb["teams"], pa["teams"]):
                assert ta["river"] == tb["river"]
            if after["burns"] == before["burns"]:
                for tb, ta in zip(pb["teams"], pa["teams"]):
                    assert (ta["nertz"], ta["stream"], ta["waste"]) == \
                        (tb["nertz"], tb["stream"], tb["waste"])
            else:
                assert after["burns"] == before["burns"] + 1


# ------------------------------------------------------------------------------ Engine tests
def check_state_arrays(eng: Engine) -> None:
    """R1, R6, R10, R11, R15, R29 on the raw arrays of every table (layout.py meanings):
    conservation, pile shapes, lake_own / lake_next bookkeeping, scores."""
    eng.check_invariants()                           # core/invariants.py agrees
    s, cfg = eng.state, eng.config
    B, T = eng.n_tables, cfg.num_teams
    P = 4 * T
    nn, rn, sn, wn = (s.nertz_n.astype(int), s.river_n.astype(int), s.stream_n.astype(int),
                      s.waste_n.astype(int))
    ln, piles = s.lake_n.astype(int), s.lake_piles.astype(int)
    assert ((0 <= nn) & (nn <= 13)).all() and ((0 <= rn) & (rn <= 13)).all()
    assert ((0 <= wn) & (wn <= sn) & (sn <= 52)).all(), "waste outside 0..Stream"
    assert ((0 <= piles) & (piles <= P)).all() and ((0 <= ln) & (ln <= 13)).all()
    started = np.arange(P)[None, :] < piles[:, None]                       # [B, P]
    assert (ln[started] >= 1).all() and (ln[~started] == 0).all()

    counts = np.zeros((B, T, 52), np.int64)
    for arr, n, depth in ((s.nertz, nn, 13), (s.river, rn, 13), (s.stream, sn, 52)):
        idx = np.nonzero(np.arange(depth) < n[..., None])
        cards = arr[idx].astype(int)
        assert ((0 <= cards) & (cards < 52)).all()
        np.add.at(counts, (idx[0], idx[1], cards), 1)
    e, p, i = np.nonzero((np.arange(13) < ln[..., None]) & started[..., None])
    v = s.lake[e, p, i].astype(int)
    assert ((0 <= v) & (v < 52 * T)).all()
    np.add.at(counts, (e, v // 52, v % 52), 1)
    bad = np.argwhere(counts != 1)
    assert bad.size == 0, f"card count != 1 at (table, deck, card) {bad[:5].tolist()}"

    # Lake piles: A, 2, 3 ... of one suit (R10); lake_own / lake_next bookkeeping
    c = s.lake.astype(int) % 52
    depth = np.arange(13)[None, None, :]
    inside = (depth < ln[..., None]) & started[..., None]
    assert ((c % 13 == depth) | ~inside).all(), "Lake pile out of rank order"
    assert ((c // 13 == (c[..., :1] // 13)) | ~inside).all(), "Lake pile mixes suits"
    own = np.zeros((B, T), np.int64)
    np.add.at(own, (e, v // 52), 1)
    assert np.array_equal(own, s.lake_own)
    nxt = np.zeros((B, 52), np.int64)
    for b in range(B):
        for q in range(piles[b]):
            top = int(s.lake[b, q, ln[b, q] - 1]) % 52
            if top % 13 != 12:
                nxt[b, top + 1] += 1
    assert np.array_equal(nxt, s.lake_next)

    # River columns: down by one, alternating colours; an ace only alone (R11, R14, D6)
    rc = s.river.astype(int)
    hi, lo = rc[..., :-1], rc[..., 1:]
    both = np.arange(1, 13)[None, None, None, :] < rn[..., None]
    ok = (hi % 13 == lo % 13 + 1) & (np.isin(hi // 13, (1, 2)) != np.isin(lo // 13, (1, 2)))
    assert (ok | ~both).all(), "River column broken"
    ace = (rc % 13 == 0) & (np.arange(13) < rn[..., None])
    assert (~ace.any(-1) | (rn == 1)).all(), "ace inside a River column"

    # scores (R29, D20)
    ncall = s.callers.astype(int).sum(1, keepdims=True)
    bonus = np.where(s.callers != 0, cfg.nertz_bonus // np.maximum(ncall, 1), 0)
    want = cfg.lake_points * own - cfg.nertz_penalty * nn + bonus \
        - cfg.penalty_points * s.penalties.astype(int)
    assert np.array_equal(eng.hand_scores(), want)


def engine_actions(eng: Engine, draw, illegal_ok: bool) -> np.ndarray:
    """Uniform legal actions from the masks, flips favoured; some random (maybe illegal) ids
    when the config does not raise."""
    rng = np.random.default_rng(draw(2**32))
    m = eng.masks
    score = rng.random(m.shape) + 0.6 * (np.arange(N_ACTIONS) == FLIP)
    a = np.where(m != 0, score, -1.0).argmax(-1).astype(np.int16)
    if illegal_ok:
        odd = rng.random(a.shape) < 0.04
        a[odd] = rng.integers(0, N_ACTIONS, size=int(odd.sum()))
    return a


@settings(max_examples=15, **SETTINGS)
@given(seed=SEEDS, picks=PICKS, max_ticks=MAX_TICKS, n_tables=st.integers(1, 8))
def test_card_conservation_and_valid_piles_engine(seed, picks, max_ticks, n_tables):
    """R1, R6, R10, R11, R14, R15, R21, R29, R31, D12, D18 on a batched Engine: after every
    tick every table's arrays conserve each deck's 52 cards, piles keep their shapes, scores
    match the arrays, masks always allow wait (only wait for busy seats and finished tables),
    illegal actions are not applied and are penalized only under "penalize", and finished
    tables are left as they are."""
    cfg = make_config(seed, max_ticks)
    draw = Draws(seed, picks)
    eng = Engine(cfg, n_tables=n_tables, seed=seed)
    eng.reset(hands=[draw(4) for _ in range(n_tables)])
    check_state_arrays(eng)
    team_of = np.array(cfg.seat_team)
    while not eng.hand_over.all():
        masks = eng.masks.copy()
        assert (masks[:, :, WAIT] == 1).all()
        busy = eng.state.ready > eng.state.tick[:, None]
        live = ~eng.hand_over
        assert (masks.sum(-1)[busy | ~live[:, None]] == 1).all()
        prev = {k: v.copy() for k, v in eng.state._asdict().items()}
        pen0 = eng.state.penalties.astype(int).copy()
        a = engine_actions(eng, draw, cfg.illegal_move != "raise")
        illegal = np.take_along_axis(masks, a[..., None].astype(np.intp), 2)[..., 0] == 0
        applied = eng.step(a).copy()
        assert (applied[~live] == 0).all()
        assert (applied[illegal & live[:, None]] == 0).all()
        assert (applied[(a == WAIT) & live[:, None]] == 1).all()
        for k, v in eng.state._asdict().items():     # finished tables stay as they were
            assert np.array_equal(v[~live], prev[k][~live]), k
        grew = eng.state.penalties.astype(int) - pen0
        want = np.zeros_like(grew)
        if cfg.illegal_move == "penalize":
            for s in range(cfg.num_seats):
                want[:, team_of[s]] += (illegal[:, s] & live)
        assert np.array_equal(grew, want)
        assert (eng.state.tick[live] == prev["tick"][live] + 1).all()
        check_state_arrays(eng)
    assert (eng.masks.sum(-1) == 1).all() and (eng.masks[:, :, WAIT] == 1).all()


@settings(max_examples=10, **SETTINGS)
@given(seed=SEEDS, picks=PICKS, max_ticks=MAX_TICKS, n_tables=st.integers(2, 8))
def test_same_seed_same_game_engine(seed, picks, max_ticks, n_tables):
    """R8, R22: two batched Engines with the same seed and the same actions hold identical state
    arrays, masks and applied flags every tick (priority orders drawn from the tables' RNGs),
    one stepped by the prange kernels on all threads and one by the serial kernels; the tables of one Engine, and
    an Engine with another seed, get other deals; reset(seed=...) repeats the deals."""
    cfg = make_config(seed, max_ticks)
    d1, d2 = Draws(seed, picks), Draws(seed, picks)
    e1 = Engine(cfg, n_tables=n_tables, seed=seed, parallel=True)
    e2 = Engine(cfg, n_tables=n_tables, seed=seed, parallel=False)
    e3 = Engine(cfg, n_tables=n_tables, seed=(seed + 1) % 2**32)
    for e in (e1, e2, e3):
        e.reset()
    deal = lambda e: np.concatenate([e.state.nertz.reshape(n_tables, -1),       # noqa: E731
                                     e.state.river.reshape(n_tables, -1),
                                     e.state.stream.reshape(n_tables, -1)], 1)
    assert not np.array_equal(deal(e1), deal(e3))
    rows = deal(e1)
    assert len({r.tobytes() for r in rows}) == n_tables, "two tables got the same deal"
    illegal_ok = cfg.illegal_move != "raise"
    while not e1.hand_over.all():
        a1, a2 = engine_actions(e1, d1, illegal_ok), engine_actions(e2, d2, illegal_ok)
        assert np.array_equal(a1, a2)
        applied1 = e1.step(a1).copy()
        assert np.array_equal(applied1, e2.step(a2))
        for (k, v1), v2 in zip(e1.state._asdict().items(), e2.state):
            assert np.array_equal(v1, v2), k
        assert np.array_equal(e1.masks, e2.masks)
        assert np.array_equal(e1.hand_scores(), e2.hand_scores())
    assert e2.hand_over.all()
    # reset(seed=...) restarts the generators: the same deals whatever came before
    e2.reset(seed=seed)
    e4 = Engine(cfg, n_tables=n_tables, seed=(seed + 7) % 2**32)
    e4.reset(seed=seed)
    assert np.array_equal(deal(e2), deal(e4))
