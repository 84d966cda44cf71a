"""Scores (R29, D20) and the end of a game (R30, D21), in numba so that whole games run
inside the batched loop; Python calls the same functions."""
from __future__ import annotations

from numba import njit


@njit(cache=True, error_model="numpy", inline="always")
def write_hand_scores(st, prm, e, out, row):
    """out[row, t] = team t's hand score at table e (R29): own Lake cards, minus Nertz cards
    left, plus the share of the bonus, minus penalties. Inlined into the per-table loops and
    given the whole output array and a row, not a slice: a call that is not inlined, or a
    slice, costs more than the arithmetic (benchmarks/README.md has the numbers)."""
    T = prm.n_teams
    k = 0
    for u in range(T):
        k += st.callers[e, u]
    for t in range(T):
        score = prm.lake_points * st.lake_own[e, t] - prm.nertz_penalty * st.nertz_n[e, t]
        score -= prm.penalty_points * st.penalties[e, t]
        if st.callers[e, t] != 0:
            score += prm.nertz_bonus // k
        out[row, t] = score


@njit(cache=True, error_model="numpy", _nrt=False)
def decide_winner(totals, calls, target_score):
    """R30/D21: the team ahead of every other by (total, Nertz calls) once some total reaches
    target_score; -1 while nobody has reached it or the leaders are tied on both."""
    best = 0
    for t in range(1, totals.shape[0]):
        if totals[t] > totals[best] or (totals[t] == totals[best] and calls[t] > calls[best]):
            best = t
    if totals[best] < target_score:
        return -1
    for t in range(totals.shape[0]):
        if t != best and totals[t] == totals[best] and calls[t] == calls[best]:
            return -1
    return best


def relative_points(own, total, n_teams):
    """Points relative to the table: a team's points minus the mean of the other teams'
    (the "relative" reward of the envs and training, the "relative" outcome of experiments).
    own: a team's points, total: the sum over all n_teams teams' points; scalars or arrays of
    one shape. The one definition: numba code calls `relative_points_jit`, the same formula."""
    return own - (total - own) / (n_teams - 1)


relative_points_jit = njit(cache=True, inline="always")(relative_points)
