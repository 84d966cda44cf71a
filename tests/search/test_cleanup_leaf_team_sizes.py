"""nertz_env/core/leaf_value.py leaf_value at tables with two-seat teams: V_t is the mean of
team t's seats' estimates (its size, Params.team_size), and the leaf is
(T - 1) / T * (V_me - mean of the other teams' V_t), added to the stop's relative points.
The reference below does the kernel's float64 arithmetic in its order on the kernel's own
float32 row values (rows_values), so the rollout's values must equal it bit for bit."""
from __future__ import annotations

import numpy as np
import pytest

from nertz_env.config import RulesConfig
from nertz_env.core.fork import allocate_rollouts, fork_rows, rollout
from nertz_env.core.leaf_value import allocate_leaf, rows_values, value_arrays
from nertz_env.core.observe import OBS_DIM, observe_range
from nertz_env.core.policies import POLICY_SCORED
from nertz_env.core.scoring import relative_points
from nertz_env.encoding import PLAYING
from nertz_env.engine import Engine


def small_net(seed=1, width=8):
    g = np.random.default_rng(seed)
    hidden = [((g.standard_normal((OBS_DIM, width)) * 0.3).astype("f4"),
               (g.standard_normal(width) * 0.1).astype("f4")),
              ((g.standard_normal((width, width)) * 0.3).astype("f4"),
               (g.standard_normal(width) * 0.1).astype("f4"))]
    return value_arrays(hidden, (g.standard_normal((1, width)) * 20).astype("f4"),
                        np.array([0.5], "f4"))


def reference(v, seat_team, me, T):
    """D_me per slot: v [n, S] float32 row values, the kernel's loop in float64."""
    size = np.bincount(seat_team)
    out = np.zeros(len(v))
    for e in range(len(v)):
        d = 0.0
        for s, t in enumerate(seat_team):
            if t == me[e]:
                d += float(v[e, s]) / int(size[t])
            else:
                d -= float(v[e, s]) / (int(size[t]) * (T - 1))
        out[e] = d * (T - 1) / T
    return out


@pytest.mark.parametrize("sizes", [(2, 2), (2, 1, 1), (1, 2, 2)])
def test_the_leaf_averages_each_team_over_its_seats(sizes):
    config = RulesConfig(num_teams=len(sizes), team_sizes=sizes)
    n, S, T = 12, config.num_seats, config.num_teams
    eng = Engine(config, n_tables=n, seed=7)
    eng.reset()
    net = small_net()
    runs = {}
    for on in (0, 1):
        ro = allocate_rollouts(config, n)
        fork_rows(eng.state, ro.state, np.arange(n), np.arange(n), eng.state.rng)
        ro.kinds[:] = POLICY_SCORED                     # greedy core bots at every seat
        ro.seats[:] = np.arange(n) % S
        rollout(ro, eng.params, 20, leaf=allocate_leaf(net, n)._replace(on=on))
        runs[on] = ro
    ro = runs[1]
    seat_team = np.array(config.seat_team)
    me = seat_team[ro.seats]
    sc = ro.scores.astype(np.float64)
    now = relative_points(sc[np.arange(n), me], sc.sum(1), T)
    np.testing.assert_array_equal(runs[0].values, now)
    obs = np.zeros((n, S, OBS_DIM), np.float32)
    observe_range(ro.state, eng.params, ro.scratch, obs, 0, n)
    v = rows_values(net, obs.reshape(-1, OBS_DIM)).reshape(n, S)
    playing = ro.state.status == PLAYING
    assert playing.all()
    want = now + reference(v, seat_team, me, T)
    assert np.abs(want - now).max() > 1                  # the leaf says something
    np.testing.assert_array_equal(ro.values, want)       # bit for bit
