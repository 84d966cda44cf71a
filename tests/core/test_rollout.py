"""Rollouts (nertz_env/core/fork.py rollout_range / rollout_batch / rollout).

- FIDELITY: with the true cards, the table's own generator key and the bots' moves, a rollout
  from a mid-hand position IS the table's real continuation (played by the engine's own tick
  from Python): after every horizon 1..30 and at the end of the hand, the whole state of the
  slot equals the real table's, array for array, at 2 and 4 teams, serial and parallel; the
  value is the "relative" points of the real scores. A fork with any other key diverges.
  Parallel on a slice of the slots, on 1 or 2 threads: the serial results, the rest untouched.
- the forced first move is played: forcing another legal move changes the continuation; an
  illegal forced move refuses the batch before any tick (one-line ValueError).
- common random numbers and determinism (worlds from core/worlds.py): a candidate equal to the
  base move gives a zero paired difference in every world; the same seed gives the same values.
"""
from __future__ import annotations

import numpy as np
import pytest
from test_fork import mid_hand, same_table

from nertz_env.core.fork import (HORIZON_END, allocate_rollouts, fork_rows, rollout,
                                 rollout_args, rollout_range)
from nertz_env.core.scoring import relative_points

HORIZONS = list(range(1, 31)) + [HORIZON_END]
T0 = 20                                    # ticks played before the fork


def real_continuation(play, horizons):
    """{h: the state of every table after h more ticks (or at its hand's end)}, and the final
    hand scores, by stepping the engine itself."""
    out = {}
    h = 0
    while not play.engine.hand_over.all():
        play.tick()
        h += 1
        if h in horizons:
            out[h] = play.snapshot()
    for k in horizons:                       # hands over before tick h: the final state
        if k not in out:
            out[k] = play.snapshot()
    return out, play.engine.hand_scores().copy()


def fork_for_rollouts(play, n_groups, deciding_seat, first_all=False):
    """Rollout buffers with n_groups copies of every table at its true key; the deciding seat's
    first move (all seats' with first_all) forced to what its bot plays."""
    eng = play.engine
    n, S = eng.n_tables, play.config.num_seats
    rng0 = play.policy_rng.copy()
    moves = play.bot_moves()                # the bots' moves now (policy_rng advanced)
    play.policy_rng[:] = rng0               # ...and back: the real game draws them again
    ro = allocate_rollouts(play.config, n * n_groups)
    rows = np.tile(np.arange(n), n_groups)
    fork_rows(eng.state, ro.state, rows, np.arange(n * n_groups), eng.state.rng[rows])
    ro.kinds[:] = play.kinds[rows]
    ro.knobs[:] = play.knobs[rows]
    ro.policy_rng[:] = rng0[rows]
    ro.seats[:] = deciding_seat
    if first_all:
        ro.first[:] = moves[rows]
    else:
        ro.first[:, deciding_seat] = moves[rows, deciding_seat]
    return ro


@pytest.mark.parametrize("teams,n,first_all", [(2, 24, False), (4, 16, True)])
def test_rollout_is_the_real_continuation_tick_for_tick(teams, n, first_all):
    play = mid_hand(teams, n, seed=100 + teams, ticks=T0)
    ro = fork_for_rollouts(play, len(HORIZONS), deciding_seat=teams - 1, first_all=first_all)
    for g, h in enumerate(HORIZONS):
        rollout(ro, play.engine.params, h, lo=g * n, hi=(g + 1) * n)
    real, final_scores = real_continuation(play, set(HORIZONS))
    assert (play.engine.state.status != 0).all()
    for g, h in enumerate(HORIZONS):
        for e in range(n):
            assert same_table(real[h], e, ro.state, g * n + e) == [], (h, e)
    end = HORIZONS.index(HORIZON_END) * n
    me = play.config.seat_team[teams - 1]
    want = relative_points(final_scores[:, me], final_scores.sum(axis=1), teams)
    np.testing.assert_array_equal(ro.values[end:end + n], want)
    np.testing.assert_array_equal(ro.scores[end:end + n], final_scores)
    assert len(set(real[HORIZON_END].tick.tolist())) > 3      # hands of many lengths


def test_parallel_rollouts_equal_the_serial_ones_and_the_real_game():
    play = mid_hand(4, 12, seed=7, ticks=T0)
    a = fork_for_rollouts(play, 2, deciding_seat=0)
    b = fork_for_rollouts(play, 2, deciding_seat=0)
    rollout(a, play.engine.params, 15)
    rollout(b, play.engine.params, 15, parallel=True)
    real, _ = real_continuation(play, {15})
    for k in range(24):
        assert same_table(a.state, k, b.state, k) == []
        assert same_table(real[15], k % 12, a.state, k) == []
    np.testing.assert_array_equal(a.values, b.values)


@pytest.mark.parametrize("threads", [1, 2])
def test_parallel_rollouts_of_a_slice_equal_the_serial_ones_and_leave_the_rest(threads):
    """parallel=True on slots lo..hi (the search agent's call: its buffer is larger than a
    tick's slots), on 1 and 2 numba threads: the serial run's states and values there, every
    other slot untouched; numba's thread count is restored after."""
    import numba
    play = mid_hand(4, 12, seed=11, ticks=T0)
    a = fork_for_rollouts(play, 3, deciding_seat=1)
    b = fork_for_rollouts(play, 3, deciding_seat=1)
    before = [x.copy() for x in b.state]
    n0 = numba.get_num_threads()
    rollout(a, play.engine.params, 12, lo=5, hi=29)
    rollout(b, play.engine.params, 12, lo=5, hi=29, parallel=True, threads=threads)
    assert numba.get_num_threads() == n0
    for k in range(36):
        assert same_table(a.state, k, b.state, k) == []
        if not 5 <= k < 29:
            assert all(np.array_equal(x[k], y[k]) for x, y in zip(before, b.state)), k
    np.testing.assert_array_equal(a.values[5:29], b.values[5:29])
    assert (b.values[:5] == 0).all() and (b.values[29:] == 0).all()
    assert len(set(a.values[5:29].tolist())) > 3


def test_another_key_is_another_continuation():
    """The fidelity above rests on the key: forked with other keys, most tables diverge."""
    play = mid_hand(2, 16, seed=3, ticks=T0)
    ro = fork_for_rollouts(play, 1, deciding_seat=0)
    ro.state.rng[:] += np.uint64(1)
    rollout(ro, play.engine.params, HORIZON_END)
    real, _ = real_continuation(play, {HORIZON_END})
    differ = sum(same_table(real[HORIZON_END], e, ro.state, e) != [] for e in range(16))
    assert differ >= 12


def test_the_forced_first_move_is_played():
    play = mid_hand(2, 16, seed=21, ticks=T0)
    eng = play.engine
    ro = fork_for_rollouts(play, 1, deciding_seat=0)
    forced = 0
    for e in range(16):                      # another legal move than the bot's, if any
        legal = np.flatnonzero(eng.masks[e, 0])
        other = legal[legal != ro.first[e, 0]]
        if other.size:
            ro.first[e, 0] = other[-1]
            forced += 1
    assert forced >= 8
    rollout(ro, eng.params, 1)
    real, _ = real_continuation(play, {1})
    differ = sum(same_table(real[1], e, ro.state, e) != [] for e in range(16))
    assert differ == forced


def test_an_illegal_forced_move_refuses_the_batch_before_any_tick():
    play = mid_hand(2, 4, seed=2, ticks=T0)
    ro = fork_for_rollouts(play, 1, deciding_seat=0)
    illegal = int(np.flatnonzero(play.engine.masks[2, 1] == 0)[0])
    ro.first[2, 1] = illegal
    before = [a.copy() for a in ro.state]
    with pytest.raises(ValueError, match=rf"^slot 2, seat 1: forced first move {illegal} is "
                                         r"not legal"):
        rollout(ro, play.engine.params, 5)
    assert all(np.array_equal(x, y) for x, y in zip(before, ro.state))
    assert rollout_range(*rollout_args(ro, play.engine.params, 5), 0, 2) == -1  # slots 0, 1


@pytest.mark.parametrize("bad,match", [
    (dict(horizon=-1), r"^horizon=-1 must be an int >= 0"),
    (dict(lo=3, hi=2), r"^slots lo=3, hi=2 must satisfy"),
    (dict(seat=5), r"^seats must be seat numbers 0\.\.1$"),
    (dict(external=True), r"^slot 1, seat 0: rollouts play core bots only"),
    (dict(threads=0), r"^threads=0 must be from 1 to \d+ \(NUMBA_NUM_THREADS\)$"),
    (dict(threads=99), r"^threads=99 must be from 1 to"),
])
def test_bad_arguments_are_one_line_errors(bad, match):
    play = mid_hand(2, 2, seed=1, ticks=5)
    ro = fork_for_rollouts(play, 1, deciding_seat=0)
    if "seat" in bad:
        ro.seats[0] = bad["seat"]
    if "external" in bad:
        ro.kinds[1, 0] = 2
    with pytest.raises(ValueError, match=match):
        rollout(ro, play.engine.params, bad.get("horizon", 3), lo=bad.get("lo", 0),
                hi=bad.get("hi"), parallel="threads" in bad, threads=bad.get("threads"))


# ------------------------------------------------------------- worlds: pairing and seeds
def decision_batch(play, i, seat, cands, W, seed, keys_per_candidate=False, horizon=10):
    """W uniform worlds of table i (core/worlds.py) x the candidates `cands` for `seat` (the
    other seats: their bots), rolled out `horizon` ticks; values [W, C]."""
    from nertz_env.core.worlds import fork_worlds, world_seeds
    C = len(cands)
    ro = allocate_rollouts(play.config, W * C)
    keys, deals = world_seeds(seed, W)
    slots = fork_worlds(play.engine.state, i, ro.state, ro.scratch, 0, C, keys, deals)
    if keys_per_candidate:                   # the negative control: no common random numbers
        ro.state.rng[:] = world_seeds([seed, 1], W * C)[0]
    ro.kinds[:] = play.kinds[i]
    ro.knobs[:] = play.knobs[i]
    ro.policy_rng[:] = np.uint64(5)
    ro.seats[:] = seat
    for c, a in enumerate(cands):
        ro.first[slots[:, c], seat] = a
    rollout(ro, play.engine.params, horizon)
    return ro.values[slots]


def base_and_other(play, seat):
    """(table, the base move, another legal move) at a table where the seat has a choice."""
    moves = play.bot_moves()
    for i in range(play.engine.n_tables):
        legal = np.flatnonzero(play.engine.masks[i, seat])
        other = legal[legal != moves[i, seat]]
        if other.size:
            return i, int(moves[i, seat]), int(other[0])
    raise AssertionError("no table with a choice")


@pytest.mark.parametrize("teams", [2, 4])
def test_a_candidate_equal_to_the_base_move_has_zero_paired_difference(teams):
    play = mid_hand(teams, 8, seed=40 + teams, ticks=T0)
    i, base, other = base_and_other(play, seat=0)
    v = decision_batch(play, i, 0, [base, other, base], W=16, seed=9)
    np.testing.assert_array_equal(v[:, 2] - v[:, 0], 0)     # in every world
    assert (v[:, 1] != v[:, 0]).any()                          # the move matters somewhere
    # to the end of the hand: zero again; without common random numbers (a key per slot) the
    # same move scores differently somewhere (the priority orders decide the Lake races, R22)
    v = decision_batch(play, i, 0, [base, base], W=16, seed=9, horizon=HORIZON_END)
    np.testing.assert_array_equal(v[:, 1] - v[:, 0], 0)
    u = decision_batch(play, i, 0, [base, base], W=16, seed=9, keys_per_candidate=True,
                       horizon=HORIZON_END)
    assert (u[:, 1] != u[:, 0]).any()


def test_same_seed_same_values_other_seed_other_values():
    play = mid_hand(2, 8, seed=77, ticks=T0)
    i, base, other = base_and_other(play, seat=1)
    a = decision_batch(play, i, 1, [base, other], W=16, seed=3)
    b = decision_batch(play, i, 1, [base, other], W=16, seed=3)
    c = decision_batch(play, i, 1, [base, other], W=16, seed=4)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


def test_the_benchmark_measures_a_few_decisions():
    """benchmarks/rollout.py's measurement on a tiny budget (no speed judged: finite figures)."""
    from benchmarks.rollout import bench
    row = bench(2, 2, 2, 3, 6)
    assert row["decisions"] >= 1 and row["ms_per_decision"] > 0 < row["rollouts_per_s"]
