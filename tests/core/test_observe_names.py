"""The observation's read side (nertz_env/core/observe.py): every named self-block entry
(SELF_*), read_self's fields and the card-slot readers (read_card, read_river, read_top) agree
with the engine's own state on positions from random play, so a name that pointed at the wrong
offset fails here; and no module outside observe.py spells an offset into the self block."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from nertz_env import RulesConfig
from nertz_env.core import observe as ob
from nertz_env.encoding import NO_CARD, SRC_NERTZ, SRC_RIVER0, SRC_WASTE
from nertz_env.engine import Engine

CONFIGS = {
    "pair+solo": RulesConfig(num_teams=2, team_sizes=(2, 1), speeds=(1, 3, 2), max_ticks=300),
    "pairs,fixed roles": RulesConfig(num_teams=3, team_sizes=(2, 2, 1), alternate_roles=False,
                                     speeds=(2, 1, 1, 3, 1), river_size=5, stacking=True),
    "8 solo": RulesConfig(num_teams=8, speeds=(1, 2, 3, 1, 2, 3, 1, 2)),
}


def positions(config, tables=12, ticks=60, seed=0):
    """(engine, every seat's observations [E, S, OBS_DIM]) every 3rd tick of random play over
    hands 0..3 (both R4 roles)."""
    eng = Engine(config, n_tables=tables, seed=seed, parallel=False)
    eng.reset(seed=seed, hands=np.arange(tables) % 4)
    rng = np.random.default_rng(seed)
    for tick in range(ticks):
        if tick % 3 == 0:
            yield eng, eng.observe().copy()
        acts = np.zeros((tables, config.num_seats), np.int64)
        for e in range(tables):
            for s in range(config.num_seats):
                legal = np.flatnonzero(eng.masks[e, s])
                card_moves = legal[legal >= 3]
                acts[e, s] = rng.choice(card_moves if card_moves.size and rng.random() < 0.8
                                        else legal)
        eng.step(acts)


def expected_self(config, st, e, s) -> dict:
    """The self block of seat s at table e, from the rules (R4) and the state arrays."""
    t = config.seat_team[s]
    size = config.sizes[t]
    first = s == config.seat_team.index(t)               # the team's first seat
    if size == 1:
        stream = True
    elif config.alternate_roles and st.hand[e] % 2 == 1:
        stream = first                                   # odd hands: the first seat
    else:
        stream = not first                               # even hands: the second seat
    wait = int(st.ready[e, s]) - int(st.tick[e])
    return {"ready": wait <= 0, "wait": min(max(wait, 0), 10) / 10,
            "tick": min(int(st.tick[e]) / config.max_ticks, 1.0),
            "holds_stream": stream, "holds_nertz": size == 1 or not stream,
            "two_player": size == 2, "odd_hand": st.hand[e] % 2 == 1,
            "teams": config.num_teams}


NAMES = {"ready": "SELF_READY", "wait": "SELF_WAIT", "tick": "SELF_TICK",
         "holds_stream": "SELF_HOLDS_STREAM", "holds_nertz": "SELF_HOLDS_NERTZ",
         "two_player": "SELF_TWO_PLAYER", "odd_hand": "SELF_ODD_HAND", "teams": "SELF_TEAMS"}


def raw(obs, field):
    """The entry the SELF_* name points at, decoded as write_self encodes it."""
    v = obs[..., getattr(ob, NAMES[field])]
    if field in ("wait", "tick"):
        return v
    return np.rint(v * 8).astype(np.int64) if field == "teams" else v > 0.5


@pytest.mark.parametrize("name", list(CONFIGS))
def test_self_entries_are_the_seats_state(name):
    config = CONFIGS[name]
    seen = {f: set() for f in NAMES}
    rows = 0
    for eng, obs in positions(config):
        view = ob.read_self(obs)                          # a batch [E, S, OBS_DIM]
        for e in range(eng.n_tables):
            for s in range(config.num_seats):
                want = expected_self(config, eng.state, e, s)
                one = ob.read_self(obs[e, s])              # one row
                for f, w in want.items():
                    for got in (getattr(view, f)[e, s], getattr(one, f), raw(obs[e, s], f)):
                        assert np.isclose(got, w, atol=1e-6), (name, f, e, s, got, w)
                    seen[f].add(round(float(w), 6))
                assert one.team_size == config.sizes[config.seat_team[s]]
                rows += 1
    assert rows >= 500
    # every entry varied where the table lets it (else a swapped name could pass unseen)
    varies = {"ready", "wait", "tick", "odd_hand"}
    if name != "8 solo":
        varies |= {"holds_stream", "holds_nertz", "two_player"}
    assert all(len(seen[f]) > 1 for f in varies), {f: sorted(seen[f])[:4] for f in varies}


def test_the_names_cover_the_self_block_once():
    """In the order observe.py's docstring tables them (the layout: the writer uses the names
    too, so two names swapped would still read back what was written, in a moved layout)."""
    offsets = [getattr(ob, n) for n in NAMES.values()]
    assert offsets == list(range(783, 791)) == list(range(ob.OFF_SELF, ob.OFF_SELF + ob.SELF_F))
    assert ob.OBS_DIM == ob.OFF_SELF + ob.SELF_F
    assert list(ob.SelfView._fields) == list(NAMES)


def test_read_self_refuses_another_width():
    with pytest.raises(ValueError, match=r"read_self: observations \[\.\.\., 791\]"):
        ob.read_self(np.zeros((3, 790), np.float32))


def test_card_readers_give_the_seats_own_cards():
    """read_card / read_river / read_top on every seat's row equal the engine's River and
    available cards of the seat's team (scratch.avail: what R9 lets the team play)."""
    config = CONFIGS["pairs,fixed roles"]
    cards = 0
    for eng, obs in positions(config, tables=8, ticks=45, seed=3):
        st, avail = eng.state, eng.scratch.avail
        for e in range(eng.n_tables):
            for s in range(config.num_seats):
                row, t = obs[e, s], config.seat_team[s]
                assert ob.read_card(row, ob.OFF_NERTZ) == avail[e, t, SRC_NERTZ]
                assert ob.read_top(row, SRC_NERTZ) == avail[e, t, SRC_NERTZ]
                assert ob.read_top(row, SRC_WASTE) == avail[e, t, SRC_WASTE]
                for c in range(config.river_size):
                    n = int(st.river_n[e, t, c])
                    for d in range(13):
                        want = st.river[e, t, c, d] if d < n else NO_CARD
                        assert ob.read_river(row, c, d) == want, (e, s, c, d)
                        cards += d < n
                    assert ob.read_top(row, SRC_RIVER0 + c) == avail[e, t, SRC_RIVER0 + c]
    assert cards >= 1000


def test_no_module_outside_observe_spells_a_self_offset():
    """The self block is read by name (SELF_*, read_self) everywhere but observe.py."""
    root = Path(__file__).resolve().parents[2]
    spelled = [str(p.relative_to(root)) for d in ("nertz_env", "agents", "benchmarks", "train")
               for p in (root / d).rglob("*.py")
               if "OFF_SELF" in p.read_text() and p.name != "observe.py"]
    assert spelled == []
