"""Scores (R29, D20) and the end of a game (R30, D21), in numba so that whole games run
inside the batched loop; Python calls the same functions."""
from __future__ import annotations

from numba import njit


@njit(cache=True, error_model="numpy")
def hand_score(st, prm, e, t):
    """R29: own Lake cards, minus Nertz cards left, plus the share of the bonus, minus
    penalties."""
    k = 0
    for u in range(prm.n_teams):
        k += st.callers[e, u]
    score = prm.lake_points * st.lake_own[e, t] - prm.nertz_penalty * st.nertz_n[e, t]
    score -= prm.penalty_points * st.penalties[e, t]
    if st.callers[e, t] != 0:
        score += prm.nertz_bonus // k
    return score


@njit(cache=True, error_model="numpy")
def write_hand_scores(st, prm, e, out):
    for t in range(prm.n_teams):
        out[t] = hand_score(st, prm, e, t)


@njit(cache=True, error_model="numpy")
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
