"""Layouts (docs/api.md): reading and checking the plain dicts that describe a position,
and writing a checked one into an engine's table. Bad input is a ValueError naming the part
(a card, a column, a pile, a field); nothing is written until the whole layout is valid.

    config_of(layout) -> RulesConfig          the defaults, num_teams/river_size from the layout
    load_layout(engine, layout, hand)         validate, then write table 0 of `engine`
                                              (core/invariants.py checks the result first)
"""
from __future__ import annotations

import numpy as np

from ..config import RulesConfig
from ..core.invariants import check_state
from ..core.state import allocate_state, copy_table
from ..encoding import (COL_CAP, DECK, LAKE_PILES_PER_TEAM, N_RANKS, NERTZ_SIZE, OVER_NERTZ,
                     OVER_TRUNCATED, PLAYING, STREAM_CAP, is_red, parse_card, rank_of, suit_of)

INT32_MAX = 2**31 - 1      # tick, ready, hand, turnovers, burns, penalties are int32 (core/state.py)

LAYOUT_KEYS = {"lake", "teams", "tick", "hand", "ready", "turnovers", "burns", "penalties",
               "callers"}
TEAM_KEYS = {"nertz", "river", "stream", "waste"}


def check_top(layout) -> list:
    """The layout's outer shape: a dict of known keys with a non-empty 'teams' list."""
    if not isinstance(layout, dict):
        raise ValueError(f"layout must be a dict with 'lake' and 'teams', got {type(layout).__name__}")
    unknown = set(layout) - LAYOUT_KEYS
    if unknown:
        raise ValueError(f"layout has unknown key(s) {sorted(unknown, key=repr)}; allowed: "
                         f"{sorted(LAYOUT_KEYS)}")
    teams = layout.get("teams")
    if not isinstance(teams, list) or not teams:
        raise ValueError("layout['teams'] must be a non-empty list of team entries")
    return teams


def config_of(layout) -> RulesConfig:
    """The config `Table.from_layout(layout)` plays when none is given: the defaults with
    num_teams and river_size read from the layout."""
    teams = check_top(layout)
    first = teams[0] if isinstance(teams[0], dict) else {}
    river = first.get("river")
    return RulesConfig(num_teams=len(teams), river_size=len(river) if isinstance(river, list) else 4)


def _int_field(value, name, high=INT32_MAX, why=""):
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) \
            or not 0 <= value <= high:
        raise ValueError(f"layout[{name!r}] = {value!r} must be an int from 0 to {high}{why}")
    return int(value)


def _int_list(value, name, n, high=INT32_MAX, why=""):
    if not isinstance(value, list) or len(value) != n:
        raise ValueError(f"layout[{name!r}] must be a list of {n} ints, got {value!r}")
    return [_int_field(v, f"{name}[{i}]", high, why) for i, v in enumerate(value)]


def load_layout(eng, layout: dict, hand) -> None:
    """Validate the whole layout, then write it into table 0 of a fresh engine."""
    c = eng.config
    T, R = c.num_teams, c.river_size
    teams = check_top(layout)
    if len(teams) != T:
        raise ValueError(f"layout has {len(teams)} teams but the config has num_teams={T}")
    seen: dict = {}

    def card(text, deck_default, where):
        try:
            deck, cid = parse_card(text, deck_default)
        except ValueError as err:
            raise ValueError(f"{where}: {err}") from None
        if not 0 <= deck < T:
            raise ValueError(f"{where}: card {text!r} names deck {deck}; decks are 0..{T - 1}")
        if (deck, cid) in seen:
            raise ValueError(f"{where}: card {text!r} is named twice for deck {deck} "
                             f"(also at {seen[deck, cid]})")
        seen[deck, cid] = where
        return deck, cid

    def own(text, t, where):
        deck, cid = card(text, t, where)
        if deck != t:
            raise ValueError(f"{where}: card {text!r} belongs to deck {deck}; team {t}'s piles "
                             f"hold only its own deck's cards")
        return cid

    parsed = []
    for t, team in enumerate(teams):
        where = f"teams[{t}]"
        if not isinstance(team, dict):
            raise ValueError(f"{where} must be a dict with nertz, river, stream, waste")
        unknown = set(team) - TEAM_KEYS
        missing = {"nertz", "river", "stream"} - set(team)
        if unknown or missing:
            raise ValueError(f"{where}: unknown keys {sorted(unknown)} / missing keys {sorted(missing)}; "
                             f"a team entry has {sorted(TEAM_KEYS)}")
        for key in ("nertz", "river", "stream"):
            if not isinstance(team[key], list):
                raise ValueError(f"{where}.{key} must be a list")
        nertz = [own(x, t, f"{where}.nertz[{i}]") for i, x in enumerate(team["nertz"])]
        if len(nertz) > NERTZ_SIZE:
            raise ValueError(f"{where}.nertz holds {len(nertz)} cards; at most {NERTZ_SIZE} (R6)")
        if len(team["river"]) != R:
            raise ValueError(f"{where}.river has {len(team['river'])} columns; this table has "
                             f"river_size={R}")
        river = []
        for col, cards in enumerate(team["river"]):
            cw = f"{where}.river[{col}]"
            if not isinstance(cards, list):
                raise ValueError(f"{cw} must be a list of cards, bottom first")
            ids = [own(x, t, f"{cw}[{i}]") for i, x in enumerate(cards)]
            for i in range(1, len(ids)):
                lo, hi = ids[i], ids[i - 1]
                if rank_of(hi) != rank_of(lo) + 1 or is_red(hi) == is_red(lo):
                    raise ValueError(f"{cw}: {cards[i]!r} on {cards[i - 1]!r} breaks the column: "
                                     f"River columns run down one rank at a time in alternating "
                                     f"colours (R11)")
            if len(ids) > COL_CAP:
                raise ValueError(f"{cw} holds {len(ids)} cards; at most {COL_CAP}")
            river.append(ids)
        stream = [own(x, t, f"{where}.stream[{i}]") for i, x in enumerate(team["stream"])]
        if len(stream) > STREAM_CAP:
            raise ValueError(f"{where}.stream holds {len(stream)} cards; at most {STREAM_CAP}")
        waste = team.get("waste", 0)
        if isinstance(waste, bool) or not isinstance(waste, (int, np.integer)) \
                or not 0 <= waste <= len(stream):
            raise ValueError(f"{where}.waste = {waste!r} must be an int from 0 to the Stream's "
                             f"{len(stream)} cards")
        parsed.append((nertz, river, stream, int(waste)))

    lake_in = layout.get("lake", [])
    if not isinstance(lake_in, list):
        raise ValueError("layout['lake'] must be a list of piles, each bottom -> top")
    if len(lake_in) > LAKE_PILES_PER_TEAM * T:
        raise ValueError(f"layout['lake'] has {len(lake_in)} piles; at most {LAKE_PILES_PER_TEAM * T}")
    lake = []
    for p, pile in enumerate(lake_in):
        pw = f"lake[{p}]"
        if not isinstance(pile, list) or not pile:
            raise ValueError(f"{pw} must be a non-empty list of cards, bottom first")
        cards = [card(x, 0, f"{pw}[{i}]") for i, x in enumerate(pile)]
        for i, (deck, cid) in enumerate(cards):
            if rank_of(cid) != i or suit_of(cid) != suit_of(cards[0][1]):
                raise ValueError(f"{pw}: {pile[i]!r} at position {i} breaks the pile: a Lake pile "
                                 f"is A, 2, 3, ... of one suit (R10)")
        lake.append(cards)

    S = c.num_seats
    tick = _int_field(layout.get("tick", 0), "tick", c.max_ticks, " (the config's max_ticks, R26)")
    hand_no = _int_field(layout.get("hand", 0) if hand is None else hand, "hand")
    # a move costs at most the slowest period x the dearest move (R21)
    busy = tick + max(c.periods) * max(c.costs.values())
    ready = _int_list(layout.get("ready", [0] * S), "ready", S, busy,
                      " (tick + the slowest period x the dearest move, R21)")
    turnovers = _int_list(layout.get("turnovers", [0] * T), "turnovers", T)
    burns = _int_field(layout.get("burns", 0), "burns")
    penalties = _int_list(layout.get("penalties", [0] * T), "penalties", T)
    callers = layout.get("callers", [])
    if not isinstance(callers, list) or any(
            isinstance(x, bool) or not isinstance(x, int) or not 0 <= x < T for x in callers):
        raise ValueError(f"layout['callers'] = {callers!r} must be a list of team numbers 0..{T - 1}")

    # everything is valid: write it into a blank table, check it, then copy it into the engine
    s = allocate_state(c, 1)
    s.rng[0] = eng.state.rng[0]
    for t, (nertz, river, stream, waste) in enumerate(parsed):
        s.nertz[0, t, :len(nertz)] = nertz
        s.nertz_n[0, t] = len(nertz)
        for col, ids in enumerate(river):
            s.river[0, t, col, :len(ids)] = ids
            s.river_n[0, t, col] = len(ids)
        s.stream[0, t, :len(stream)] = stream
        s.stream_n[0, t] = len(stream)
        s.waste_n[0, t] = waste
    for p, cards in enumerate(lake):
        for j, (deck, cid) in enumerate(cards):
            s.lake[0, p, j] = deck * DECK + cid
            s.lake_own[0, deck] += 1
        s.lake_n[0, p] = len(cards)
        top = cards[-1][1]
        if rank_of(top) != N_RANKS - 1:
            s.lake_next[0, top + 1] += 1
    s.lake_piles[0] = len(lake)
    s.tick[0], s.hand[0], s.burns[0] = tick, hand_no, burns
    s.ready[0] = ready
    s.turnovers[0] = turnovers
    s.penalties[0] = penalties
    s.callers[0] = 0
    for t in callers:
        s.callers[0, t] = 1
    if callers:
        s.status[0] = OVER_NERTZ
    elif tick >= c.max_ticks:
        s.status[0] = OVER_TRUNCATED
    else:
        s.status[0] = PLAYING
    check_state(s, eng.params, complete_decks=False, what="layout")
    copy_table(s, 0, eng.state, 0)


