"""Batch Plackett-Luce ratings of tournament agents (pure numpy): one maximum-likelihood fit
over all hands at once, so the result does not depend on the order of the records, with
percentile-bootstrap intervals that resample deals.  Imports nothing from ``nertz_env``.

Model
=====
Agent ``i`` has a log-strength ``theta_i``.  A hand ranks its ``T`` team positions by score
(higher is better); under Plackett-Luce the best position is drawn with probability
proportional to ``exp(theta)`` among all positions, the next among those left, and so on.
Head to head, ``i`` finishes ahead of ``j`` with probability
``1 / (1 + exp(theta_j - theta_i))``: a rating gap of 1.0 means odds of e = 2.72 to 1.

Ties
    Positions with equal scores share a place.  The hand's log-likelihood is the *average*
    of the Plackett-Luce log-likelihood over every order of each tied group (each order
    weight ``1/d!`` for a group of ``d``); a tie of A and B counts as half a hand with A
    ahead and half with B ahead.  For a tied group ``G`` above the set ``L`` of worse
    positions this average is exactly
    ``sum_{p in G} theta_p - sum_{s=1..d} mean_{U subset G, |U|=s} log(W(L) + W(U))``
    with ``W(X) = sum_{p in X} exp(theta_p)``, which is how it is computed.

Several positions of one agent
    Each position is a separate entrant holding the same parameter ``theta_agent``: the
    likelihood is written per position and the positions of an agent share its strength.
    A hand in which one agent holds every position carries no information and changes
    nothing.

Prior
    A Gaussian prior ``theta ~ N(0, 1/ridge)`` per agent (default ``ridge = 0.01``: standard
    deviation 10, flat over any plausible range) keeps an agent that always wins or always
    loses finite.  The likelihood is unchanged by adding a constant to every ``theta``, so the
    ridge also puts the maximum at mean 0; ratings are re-centred to mean 0 over the agents
    that played.  With thousands of hands the prior moves a rating by far less than its
    interval.

Fit
    Newton's method with a backtracking (Armijo) line search on the concave penalized
    log-likelihood (strictly concave thanks to the ridge, so the maximum is unique).  Terms
    are first merged into distinct rows (which agents, how many positions each) with integer
    weights, so the same multiset of hands gives the same arrays bit for bit, whatever the
    order of the records or of the positions within a hand.

Intervals
    The deal is the independent unit: every row with the same ``deal`` index (all lineups,
    rotations and seatings of that deal) is one cluster.  Each bootstrap replicate draws the
    deals with replacement, refits (warm-started at the full fit), and re-centres to mean 0;
    ``ci_low``/``ci_high`` are the 2.5 and 97.5 percentiles over replicates.  They are
    intervals for each agent's rating relative to the mean of the agents, not for
    differences between two agents.  An agent absent from a replicate's deals falls back to
    its prior mean 0 in that replicate.

Public API: ``fit_ratings``, ``DEFAULT_RIDGE``.
"""

from __future__ import annotations

import math
import numbers
from typing import Any

import numpy as np

__all__ = ["DEFAULT_RIDGE", "fit_ratings"]

DEFAULT_RIDGE = 0.01
"""precision of the Gaussian prior on each log-strength (prior sd = 10)"""

_MAX_TEAMS = 12  # a tied group of d positions costs 2**d - 1 terms
_RECORD_FIELDS = ("deal", "agent", "score")
_BOOTSTRAP_BLOCK = 64  # replicates refitted together (bounds memory for many deals or rows)


def fit_ratings(records: Any, num_agents: int, *, bootstrap: int = 200, seed: int = 0,
                ridge: float = DEFAULT_RIDGE) -> dict[str, Any]:
    """Plackett-Luce maximum-likelihood ratings over all hands, with deal-bootstrap intervals.

    Arguments:
        records: ``agents.stats.records.HandRecords`` (uses ``deal``, ``agent`` [M, T] agent index
            per team position, ``score`` [M, T]); rows may come in any order.
        num_agents: A; agent indices must lie in ``[0, A)``.
        bootstrap: number of bootstrap replicates (0: no intervals, they are NaN).
        seed: seed of the bootstrap's ``np.random.default_rng``.
        ridge: precision of the N(0, 1/ridge) prior on each log-strength (> 0).

    Returns a dict:
        ``rating``  float64 [A]  log-strengths, mean 0 over the agents that played; NaN for an
                                 agent with no hand
        ``ci_low``, ``ci_high``  float64 [A]  95% percentile-bootstrap interval of ``rating``
        ``order``   int64 [A]    agent indices, best rating first, ties by index, NaN last
        ``units``   int          number of distinct deals (the bootstrap's clusters)

    Raises ``ValueError`` naming the field for bad input; ``records`` is never modified.
    """
    deal, agent, score = _check_records(records)
    num_agents = _check_int("num_agents", num_agents, 1)
    bootstrap = _check_int("bootstrap", bootstrap, 0)
    seed = _check_int("seed", seed, 0)
    if isinstance(ridge, bool) or not isinstance(ridge, numbers.Real) or not (
            math.isfinite(ridge) and ridge > 0):
        raise ValueError(f"ridge must be a finite number > 0, got {ridge!r}")
    if agent.size and (agent.min() < 0 or agent.max() >= num_agents):
        bad = agent[(agent < 0) | (agent >= num_agents)][0]
        raise ValueError(
            f"records.agent holds agent index {int(bad)}; allowed: 0..{num_agents - 1} "
            f"(num_agents={num_agents})")

    t = agent.shape[1]
    deals, deal_of_hand = np.unique(deal, return_inverse=True)
    n_deals = deals.shape[0]
    present = np.bincount(agent.reshape(-1), minlength=num_agents) > 0

    rows, term_row, term_hand, term_weight, scale = _plackett_luce_terms(agent, score, num_agents)
    # numerator: every position is chosen once in every order (weight `scale` each)
    per_deal_num = np.zeros((n_deals, num_agents))
    np.add.at(per_deal_num, (np.repeat(deal_of_hand, t), agent.reshape(-1)), float(scale))
    n_rows = rows.shape[0]
    # merge terms per (deal, row): integer weights, so every sum below is exact
    pair_key, pair_of_term = np.unique(
        deal_of_hand[term_hand] * n_rows + term_row, return_inverse=True)
    pair_weight = np.bincount(pair_of_term, weights=term_weight).astype(np.float64)
    pair_deal, pair_row = np.divmod(pair_key, n_rows)

    r = ridge * scale
    total_w = np.bincount(pair_row, weights=pair_weight, minlength=n_rows)[None, :]
    total_num = per_deal_num.sum(axis=0)[None, :]
    theta_hat = _newton(rows, total_w, total_num, r, np.zeros((1, num_agents)), present)[0]

    rating = _centre(theta_hat[None, :], present)[0]
    ci_low = np.full(num_agents, np.nan)
    ci_high = np.full(num_agents, np.nan)
    if bootstrap > 0:
        rng = np.random.default_rng(seed)
        boot = np.empty((bootstrap, num_agents))
        for lo in range(0, bootstrap, _BOOTSTRAP_BLOCK):
            size = min(_BOOTSTRAP_BLOCK, bootstrap - lo)
            draws = rng.integers(0, n_deals, size=(size, n_deals))
            counts = np.stack([np.bincount(d, minlength=n_deals) for d in draws]).astype(float)
            weights = np.stack([
                np.bincount(pair_row, weights=c[pair_deal] * pair_weight, minlength=n_rows)
                for c in counts])
            theta_b = _newton(rows, weights, counts @ per_deal_num, r,
                              np.repeat(theta_hat[None, :], size, axis=0), present)
            boot[lo:lo + size] = _centre(theta_b, present)
        ci_low = np.percentile(boot, 2.5, axis=0)
        ci_high = np.percentile(boot, 97.5, axis=0)

    key = np.where(np.isnan(rating), np.inf, -rating)
    order = np.lexsort((np.arange(num_agents), key)).astype(np.int64)
    return {"rating": rating, "ci_low": ci_low, "ci_high": ci_high, "order": order,
            "units": int(n_deals)}


# --------------------------------------------------------------------------
# input
# --------------------------------------------------------------------------


def _check_int(name: str, value: Any, low: int) -> int:
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < low:
        raise ValueError(f"{name} must be an integer >= {low}, got {value!r}")
    return int(value)


def _check_records(records: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    for name in _RECORD_FIELDS:
        if not hasattr(records, name):
            raise ValueError(
                f"records must be agents.stats.records.HandRecords; it has no field {name!r}")
    try:
        agent = np.asarray(records.agent)
        score = np.asarray(records.score, dtype=np.float64)
        deal = np.asarray(records.deal)
    except (TypeError, ValueError) as err:
        raise ValueError(f"records holds non-numeric data: {err}") from None
    if agent.ndim != 2:
        raise ValueError(f"records.agent must be [M, T], got shape {agent.shape}")
    m, t = agent.shape
    if m == 0:
        raise ValueError("records is empty: at least one hand is needed")
    if not 2 <= t <= _MAX_TEAMS:
        raise ValueError(f"records.agent has {t} team positions; allowed: 2..{_MAX_TEAMS}")
    if not np.issubdtype(agent.dtype, np.integer):
        raise ValueError(f"records.agent must hold integers, got dtype {agent.dtype}")
    if score.shape != (m, t):
        raise ValueError(f"records.score has shape {score.shape}, expected {(m, t)}")
    if not np.isfinite(score).all():
        raise ValueError("records.score holds NaN or infinite values; scores must be finite")
    if deal.shape != (m,) or not np.issubdtype(deal.dtype, np.integer):
        raise ValueError(
            f"records.deal must be {m} integers (one per hand), got {deal.dtype} {deal.shape}")
    return deal.astype(np.int64), agent.astype(np.int64), score


# --------------------------------------------------------------------------
# likelihood terms
# --------------------------------------------------------------------------


def _plackett_luce_terms(agent: np.ndarray, score: np.ndarray, num_agents: int):
    """The denominator terms of every hand, merged into distinct rows.

    A term is a set V of positions: the positions worse than some score level c plus a
    non-empty subset U of the d positions at level c; its weight is 1/C(d, |U|), stored as
    the integer scale/C(d, |U|).  Returns (rows [R, A] position count per agent,
    term_row, term_hand, term_weight (int), scale).
    """
    m, t = agent.shape
    scale = math.lcm(*(math.comb(d, s) for d in range(1, t + 1) for s in range(1, d + 1)))
    masks = ((np.arange(1, 2 ** t)[:, None] >> np.arange(t)[None, :]) & 1).astype(bool)  # [K, T]
    chunk = max(1, 2_000_000 // (masks.size))
    hands, kinds = [], []
    level_of = []
    for lo in range(0, m, chunk):
        s = score[lo:lo + chunk]                                   # [m', T]
        level = np.where(masks[None], s[:, None, :], -np.inf).max(axis=2)   # [m', K]
        below = s[:, None, :] < level[:, :, None]                  # [m', K, T]
        valid = ~(below & ~masks[None]).any(axis=2)
        h, k = np.nonzero(valid)
        hands.append(h + lo)
        kinds.append(k)
        level_of.append(level[h, k])
    term_hand = np.concatenate(hands)
    term_kind = np.concatenate(kinds)
    level = np.concatenate(level_of)
    at_level = score[term_hand] == level[:, None]                  # [n, T]
    d = at_level.sum(axis=1)
    u = (at_level & masks[term_kind]).sum(axis=1)
    comb = np.array([[math.comb(i, j) if j <= i else 1 for j in range(t + 1)]
                     for i in range(t + 1)], dtype=np.int64)
    term_weight = scale // comb[d, u]
    # position count per agent in V
    in_v = masks[term_kind]                                        # [n, T]
    n = term_hand.shape[0]
    flat = (np.arange(n)[:, None] * num_agents + agent[term_hand])[in_v]
    counts = np.bincount(flat, minlength=n * num_agents).reshape(n, num_agents)
    base = t + 1
    if num_agents * math.log2(base) < 62:
        # one int64 per row (digits base T+1, agent 0 most significant): sorts as the rows do
        key = counts @ (base ** np.arange(num_agents - 1, -1, -1, dtype=np.int64))
        keys, term_row = np.unique(key, return_inverse=True)
        rows = (keys[:, None] // base ** np.arange(num_agents - 1, -1, -1, dtype=np.int64)) % base
    else:  # slower: np.unique on rows sorts a structured view
        rows, term_row = np.unique(counts, axis=0, return_inverse=True)
    return rows.astype(np.float64), term_row.reshape(-1), term_hand, term_weight, scale


# --------------------------------------------------------------------------
# Newton
# --------------------------------------------------------------------------


def _objective(theta, rows, weights, num, r):
    top = theta.max(axis=1, keepdims=True)
    denom = np.exp(theta - top) @ rows.T                            # [B, R]
    return ((num * theta).sum(axis=1) - (weights * (np.log(denom) + top)).sum(axis=1)
            - 0.5 * r * (theta * theta).sum(axis=1))


def _newton(rows, weights, num, r, theta, present, max_iter: int = 100):
    """Maximize sum num*theta - sum_rows w log(rows @ exp(theta)) - r/2 |theta|^2, per batch row.

    The maximum has mean 0 over the present agents (the likelihood ignores a common shift, the
    ridge centres it), so steps are kept in that subspace: along the shift the curvature is
    only ``r`` and rounding noise would otherwise keep the iterates moving.
    """
    b, a = theta.shape
    eye = np.eye(a)
    shift = present / max(1, present.sum())
    f = _objective(theta, rows, weights, num, r)
    for _ in range(max_iter):
        top = theta.max(axis=1, keepdims=True)
        ex = np.exp(theta - top)                                   # [B, A]
        p = rows[None] * ex[:, None, :]                            # [B, R, A]
        p /= p.sum(axis=2, keepdims=True)
        wp = weights[:, :, None] * p
        grad = num - wp.sum(axis=1) - r * theta
        hess = (np.einsum("bra,brc->bac", wp, p) - wp.sum(axis=1)[:, :, None] * eye
                - r * eye)                                          # negative definite
        step = np.linalg.solve(-hess, grad[:, :, None])[:, :, 0]
        step -= (step @ shift)[:, None] * present
        if np.abs(step).max() < 1e-12:
            break
        decrement = (grad * step).sum(axis=1)
        t = np.ones(b)
        todo = np.ones(b, dtype=bool)
        for _ in range(60):
            cand = theta[todo] + t[todo, None] * step[todo]
            fc = _objective(cand, rows, weights[todo], num[todo], r)
            ok = fc >= f[todo] + 1e-4 * t[todo] * decrement[todo] - 1e-12 * np.abs(f[todo])
            idx = np.flatnonzero(todo)
            theta[idx[ok]] = cand[ok]
            f[idx[ok]] = fc[ok]
            todo[idx[ok]] = False
            if not todo.any():
                break
            t[todo] *= 0.5
        if todo.all():  # no replicate can improve: the rounding floor is reached
            break
    else:
        raise RuntimeError("Plackett-Luce Newton iterations did not converge")
    return theta


def _centre(theta: np.ndarray, present: np.ndarray) -> np.ndarray:
    out = np.full(theta.shape, np.nan)
    if present.any():
        sub = theta[:, present]
        out[:, present] = sub - sub.mean(axis=1, keepdims=True)
    return out
