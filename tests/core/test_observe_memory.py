"""The v1 observation (nertz_env/core/observe_memory.py): v0's vector plus what a seat remembers.

- NO PEEKING: a twin table whose never-seen cards are permuted (the same public history, tick
  for tick) gives byte-identical v1 observations for every seat at every tick (2 and 4 teams,
  two-player teams, burns); the same check fails for a writer fed the true cards (an oracle
  memory) and for one fed a memory that also reads the next stock card (negative controls);
- the prefix is v0's vector byte for byte, and observe_v1_rows writes the same rows from the
  engine's scratch as from given v0 rows;
- RIGHT on a hand-built play: seats that only flip (nothing moves, the Streams pass and burn):
  before the first turn-over nothing is remembered but the tops; after it the seat knows its
  next flips (s2, s5, s8 of its Stream: the cards a pass showed), exactly the cards of
  positions 2, 5, 8, ... and the last in its stock, and nothing under the waste top it has not
  seen; the opponent part shows the opponent's next flip; after the R28 Nertz burns the card
  under the Nertz top;
- RIGHT against a second writer: a plain-Python reading of the module docstring, at every tick
  of bot play, every seat (read_memory reads the block back by name);
- bad memory / rows are one-line ValueErrors.
"""
from __future__ import annotations

import numpy as np
import pytest
from test_memory import CASES, Remembered, flip_only, peeking, twin_tables
from test_worlds import views

from nertz_env.core.memory import MEM_NERTZ, MEM_STREAM, MEM_W
from nertz_env.core.observe import OBS_DIM, observe_range
from nertz_env.core.observe_memory import (MEM_F, NEXT_FLIPS, V1_OBS_DIM, memory_block_all_range,
                                           observe_v1_rows, read_memory)
from nertz_env.core.state import make_params


def v1_all(st, config, scratch, mem) -> np.ndarray:
    """Every seat's v1 observation at every table: float32 [B, S, V1_OBS_DIM]."""
    B, S = st.tick.shape[0], config.num_seats
    out = np.zeros((B, S, V1_OBS_DIM), np.float32)
    v0 = np.zeros((B, S, OBS_DIM), np.float32)
    observe_range(st, make_params(config), scratch, v0, 0, B)
    out[..., :OBS_DIM] = v0
    memory_block_all_range(st, mem, np.asarray(config.seat_team, np.int64), out, 0, B)
    return out


def oracle(st, mem):
    """A 'memory' that knows every face-down card: the leaking writer's input."""
    out = mem.copy()
    for e, t in np.ndindex(*st.waste_n.shape):
        n, q = int(st.stream_n[e, t]), int(st.nertz_n[e, t])
        out[e, t, MEM_STREAM:MEM_STREAM + n] = st.stream[e, t, :n]
        out[e, t, MEM_NERTZ:MEM_NERTZ + q] = st.nertz[e, t, :q]
    return out


@pytest.mark.parametrize("case", ["two", "four", "pairs", "burns"])
def test_v1_shows_only_what_the_seat_may_know(case):
    real, twin, moves = twin_tables(case)
    assert not (np.array_equal(real.engine.state.stream, twin.engine.state.stream)
                and np.array_equal(real.engine.state.nertz, twin.engine.state.nertz))
    config = real.config
    leaks = {"oracle": 0, "peeking": 0}
    known = 0
    for a in moves:
        real.tick(a)
        twin.tick(a)
        r, w = real.engine, twin.engine
        ro = v1_all(r.state, config, r.scratch, real.memory)
        to = v1_all(w.state, config, w.scratch, twin.memory)
        np.testing.assert_array_equal(ro, to)                   # every seat, byte for byte
        np.testing.assert_array_equal(ro[..., :OBS_DIM], views(r.state, r.params, r.scratch)[0])
        known += int(read_memory(ro).known_stock.sum())
        for name, leak in (("oracle", oracle), ("peeking", peeking)):
            leaks[name] += not np.array_equal(
                v1_all(r.state, config, r.scratch, leak(r.state, real.memory)),
                v1_all(w.state, config, w.scratch, leak(w.state, twin.memory)))
    assert known > 0                                            # the block is not empty
    assert leaks["oracle"] > 0 and leaks["peeking"] > 0         # negative controls fail it


def test_observe_v1_rows_from_scratch_or_given_v0():
    play = Remembered("four", 3, seed=2)
    for _ in range(40):
        play.tick()
    eng, cfg = play.engine, play.config
    full = v1_all(eng.state, cfg, eng.scratch, play.memory)
    rows_t = np.array([2, 0, 1, 1]), np.array([3, 0, 1, 2])
    a = observe_v1_rows(eng.state, cfg, play.memory, *rows_t, scratch=eng.scratch)
    b = observe_v1_rows(eng.state, cfg, play.memory, *rows_t,
                        v0=full[rows_t[0], rows_t[1], :OBS_DIM])
    np.testing.assert_array_equal(a, full[rows_t])
    np.testing.assert_array_equal(b, full[rows_t])
    assert a.shape == (4, V1_OBS_DIM) and a.dtype == np.float32
    assert V1_OBS_DIM == OBS_DIM + MEM_F and 150 <= MEM_F <= 250
    assert a.min() >= 0.0 and a[:, OBS_DIM:].max() <= 1.0


def seat_block(eng, mem, seat):
    return read_memory(v1_all(eng.state, eng.config, eng.scratch, mem)[:, seat])


def test_a_pass_through_the_stream_is_remembered_right():
    eng, mem, tick = flip_only(n_tables=2, seed=4)
    st = eng.state
    before = seat_block(eng, mem, 0)
    assert (before.next_flips == -1).all() and not before.in_stock.any()
    assert (before.known_stock == 0).all() and (before.under_waste == -1).all()
    checked = 0
    while checked < 2:
        tick()
        for e in range(2):
            if not (st.turnovers[e, 0] == 1 and st.burns[e] == 0 and st.waste_n[e, 0] == 0):
                continue
            if st.turnovers[e, 1] != 1 or st.waste_n[e, 1] != 0:
                continue
            n = int(st.stream_n[e, 0])
            s0 = st.stream[e, 0, :n]
            seen = sorted(set(range(2, n, 3)) | {n - 1})
            b = seat_block(eng, mem, 0)
            # the next showing flips turn up s2, s5, s8: seen on the pass, so known
            np.testing.assert_array_equal(b.next_flips[e], s0[[2, 5, 8]])
            assert set(np.flatnonzero(b.in_stock[e])) == {int(s0[d]) for d in seen}
            assert b.known_stock[e] == len(seen) and b.known_waste[e] == 0
            assert not b.in_waste[e].any() and b.under_waste[e] == -1    # the waste is empty
            # seat 1 (the opponent's own view) and seat 0's opponent part agree
            s1 = st.stream[e, 1, :int(st.stream_n[e, 1])]
            assert b.opp_next_flip[e, 0] == s1[2]
            assert b.opp_known[e, 0] == len(set(range(2, len(s1), 3)) | {len(s1) - 1})
            assert (b.opp_next_flip[e, 1:] == -1).all()                  # absent opponents
            b1 = seat_block(eng, mem, 1)
            np.testing.assert_array_equal(b1.next_flips[e], s1[[2, 5, 8]])
            checked += 1
        if checked >= 2:
            break
    # one flip on: the top is s2, under it s1, never shown on the pass: not known
    tick()
    b = seat_block(eng, mem, 0)
    for e in range(2):
        if st.waste_n[e, 0] == 3:
            assert b.under_waste[e] == -1
            assert b.next_flips[e, 0] == st.stream[e, 0, 5]
            assert b.in_waste[e].sum() == 0


def test_burns_show_everything_and_the_card_under_the_nertz_top():
    eng, mem, tick = flip_only(n_tables=1, seed=7)
    st = eng.state
    while st.burns[0] < 15:
        tick()
    b = seat_block(eng, mem, 0)
    n, k, q = int(st.stream_n[0, 0]), int(st.waste_n[0, 0]), int(st.nertz_n[0, 0])
    s0 = st.stream[0, 0]
    assert b.known_stock[0] == n - k and b.known_waste[0] == max(k - 1, 0)
    assert set(np.flatnonzero(b.in_stock[0])) == {int(c) for c in s0[k:n]}
    assert b.under_nertz[0] == st.nertz[0, 0, q - 2] and b.known_nertz[0] == q - 1
    kk, expect = k, []
    for _ in range(NEXT_FLIPS):                     # R15 / D8 arithmetic, turn-overs skipped
        kk = 0 if kk >= n else kk
        kk = min(kk + 3, n)
        expect.append(int(s0[kk - 1]))
    assert b.next_flips[0].tolist() == expect


def reference_block(st, mem, seat_team, e, s) -> dict:
    """The module docstring's block in plain Python (a second writer)."""
    T = mem.shape[1]
    t = seat_team[s]

    def at(u, d):
        return int(mem[e, u, MEM_STREAM + d])

    def shown(k, n):
        if n == 0:
            return k, -1
        k = 0 if k >= n else k
        k = min(k + 3, n)
        return k, k - 1

    n, k, q = int(st.stream_n[e, t]), int(st.waste_n[e, t]), int(st.nertz_n[e, t])
    stock = {at(t, d) for d in range(k, n) if at(t, d) >= 0}
    waste = {at(t, d) for d in range(0, max(k - 1, 0)) if at(t, d) >= 0}
    nxt, kk = [], k
    for _ in range(NEXT_FLIPS):
        kk, d = shown(kk, n)
        nxt.append(at(t, d) if d >= 0 else -1)
    opp_u, opp_n, opp_k = [], [], []
    for j in range(1, 8):
        if j >= T:
            opp_u.append(-1), opp_n.append(-1), opp_k.append(0)
            continue
        u = (t + j) % T
        nu, ku = int(st.stream_n[e, u]), int(st.waste_n[e, u])
        opp_u.append(at(u, ku - 2) if ku >= 2 else -1)
        opp_n.append(at(u, shown(ku, nu)[1]) if nu else -1)
        opp_k.append(sum(at(u, d) >= 0 for d in range(nu) if d != ku - 1))
    return dict(in_stock=stock, in_waste=waste, under_waste=at(t, k - 2) if k >= 2 else -1,
                next_flips=nxt,
                under_nertz=int(mem[e, t, MEM_NERTZ + q - 2]) if q >= 2 else -1,
                known_nertz=sum(mem[e, t, MEM_NERTZ + d] >= 0 for d in range(q - 1)),
                opp_under_waste=opp_u, opp_next_flip=opp_n, opp_known=opp_k)


@pytest.mark.parametrize("case", ["four", "pairs", "burns"])
def test_the_block_matches_a_second_writer(case):
    play = Remembered(case, 3, seed=9)
    cfg = play.config
    seat_team = list(cfg.seat_team)
    compared = 0
    for i in range(120):
        play.tick()
        if i % 7:
            continue
        st, mem = play.engine.state, play.memory
        got = read_memory(v1_all(st, cfg, play.engine.scratch, mem))
        for e in range(3):
            for s in range(cfg.num_seats):
                ref = reference_block(st, mem, seat_team, e, s)
                assert set(np.flatnonzero(got.in_stock[e, s])) == ref["in_stock"]
                assert set(np.flatnonzero(got.in_waste[e, s])) == ref["in_waste"]
                assert got.known_stock[e, s] == len(ref["in_stock"])
                assert got.known_waste[e, s] == len(ref["in_waste"])
                for f in ("under_waste", "next_flips", "under_nertz", "known_nertz",
                          "opp_under_waste", "opp_next_flip", "opp_known"):
                    assert np.asarray(getattr(got, f)[e, s]).tolist() == ref[f], f
                compared += 1
    assert compared > 50


def test_bad_memory_and_rows_are_one_line_errors():
    play = Remembered("two", 2, seed=1)
    st, cfg = play.engine.state, play.config
    with pytest.raises(ValueError, match=r"memory must be the int32 array \[2, 2, 71\]"):
        observe_v1_rows(st, cfg, play.memory.astype(np.int64), [0], [0],
                        scratch=play.engine.scratch)
    with pytest.raises(ValueError, match="rows: tables are 0..1 and seats 0..1"):
        observe_v1_rows(st, cfg, play.memory, [2], [0], scratch=play.engine.scratch)
    with pytest.raises(ValueError, match="v0 must be float32"):
        observe_v1_rows(st, cfg, play.memory, [0], [0], v0=np.zeros((2, OBS_DIM), np.float32))
    with pytest.raises(ValueError, match="needs the rows' v0 observations"):
        observe_v1_rows(st, cfg, play.memory, [0], [0])
    with pytest.raises(ValueError, match="read_memory"):
        read_memory(np.zeros(OBS_DIM, np.float32))
    assert MEM_W == 71 and CASES
