"""`search:leaf=...` (issue 42): a value net at the rollouts' horizon.

- the kernel's value forward (nertz_env/core/leaf_value.py, net_policy.py's hidden layers)
  equals a numpy forward of the saved arrays;
- a rollout's value with the leaf on is its relative points at the stop plus the projection
  (T - 1) / T * (V_me - mean of the other teams' V) of the seats' estimates on their own
  observations, where the hand goes on; off (or where the hand ended) the stop's points;
- leaf=none plays today's search record for record (and a leaf does change play);
- the no-peeking test with a leaf; bad leaf values and files refused in one line.
"""
from __future__ import annotations

import numpy as np
import pytest

from agents.arena.tournament import run_tournament
from agents.learned.weights import save_weights
from agents.registry import make_agent
from agents.search.leaf import load_leaf
from nertz_env.core.fork import allocate_rollouts, fork_rows, rollout
from nertz_env.core.leaf_value import allocate_leaf, rows_values
from nertz_env.core.observe import OBS_DIM, observe_range
from nertz_env.core.scoring import relative_points
from nertz_env.encoding import PLAYING
from tests.search.test_search_agent import _same_records, moves_on_twins, positions

FAST = "worlds=6,horizon=12"


def leaf_arrays(seed=0, hidden=(16, 16), scale=(0.3, 0.3, 20.0)):
    g = np.random.default_rng(seed)
    arrays, width = {}, OBS_DIM
    for i, h in enumerate(hidden):
        arrays[f"hidden{i}_weight"] = (g.standard_normal((h, width)) * scale[i]).astype("f4")
        arrays[f"hidden{i}_bias"] = (g.standard_normal(h) * 0.1).astype("f4")
        width = h
    arrays["action_weight"] = (g.standard_normal((1, width)) * scale[-1]).astype("f4")
    arrays["action_bias"] = np.array([0.5], "f4")
    return arrays


def write_leaf(path, arrays, role="leaf-value"):
    shapes = {k: list(v.shape) for k, v in arrays.items()}
    hidden = [shapes[f"hidden{i}_bias"][0] for i in range(len(arrays) // 2 - 1)]
    meta = {"format": "nertz-policy", "version": 1,
            "architecture": {"type": "mlp", "hidden": hidden, "activation": "tanh",
                             "action_net": "unmasked"},
            "observation_size": OBS_DIM, "action_size": 1, "arrays": shapes, "table": None,
            "rules": None, "provenance": {"role": role}}
    save_weights(path, meta, arrays)
    return str(path) + ".npz"


def numpy_value(arrays, x):
    h = x.astype(np.float64)
    for i in range(len(arrays) // 2 - 1):
        h = np.tanh(h @ arrays[f"hidden{i}_weight"].T + arrays[f"hidden{i}_bias"])
    return (h @ arrays["action_weight"].T + arrays["action_bias"])[:, 0]


@pytest.fixture(scope="module")
def leaf_file(tmp_path_factory):
    return write_leaf(tmp_path_factory.mktemp("leaf") / "leaf", leaf_arrays())


def observations(teams, n=16, ticks=30):
    eng, _ = positions(teams, n, ticks, seed=5)
    obs = np.zeros((n, eng.config.num_seats, OBS_DIM), np.float32)
    observe_range(eng.state, eng.params, eng.scratch, obs, 0, n)
    return eng, obs


def test_the_kernel_forward_equals_numpy_on_the_saved_arrays(leaf_file):
    arrays = leaf_arrays()
    net = load_leaf(leaf_file, "t")
    _, obs = observations(2)
    x = obs.reshape(-1, OBS_DIM)
    got, want = rows_values(net, x), numpy_value(arrays, x)
    assert np.abs(want).max() > 5                      # a net that says something
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("teams", [2, 4])
def test_the_leaf_is_the_projected_estimate_of_the_points_to_come(leaf_file, teams):
    eng, _ = observations(teams, ticks=5)
    n, S = eng.n_tables, eng.config.num_seats
    net = load_leaf(leaf_file, "t")
    runs = {}
    for on in (0, 1, None):
        ro = allocate_rollouts(eng.config, n)
        fork_rows(eng.state, ro.state, np.arange(n), np.arange(n), eng.state.rng)
        ro.kinds[:], ro.knobs[:] = make_agent("greedy").core_policy()
        ro.seats[:] = np.arange(n) % S
        leaf = None if on is None else allocate_leaf(net, n)._replace(on=on)
        rollout(ro, eng.params, 25, leaf=leaf)
        runs[on] = ro
    ro = runs[1]
    sc = ro.scores.astype(np.float64)
    rel = relative_points(sc, sc.sum(1, keepdims=True), teams)
    me = ro.seats
    now = rel[np.arange(n), me]
    np.testing.assert_array_equal(runs[0].values, now)        # off: the stop's points
    np.testing.assert_array_equal(runs[None].values, now)
    obs = np.zeros((n, S, OBS_DIM), np.float32)
    observe_range(ro.state, eng.params, ro.scratch, obs, 0, n)
    v = numpy_value(leaf_arrays(), obs.reshape(-1, OBS_DIM)).reshape(n, S)  # solo teams
    others = (v.sum(1) - v[np.arange(n), me]) / (teams - 1)
    want = now + (teams - 1) / teams * (v[np.arange(n), me] - others)
    playing = ro.state.status == PLAYING
    assert playing.sum() >= n // 2 and (~playing).sum() + playing.sum() == n
    np.testing.assert_allclose(ro.values[playing], want[playing], rtol=1e-4, atol=2e-3)
    np.testing.assert_array_equal(ro.values[~playing], now[~playing])   # the hand ended


def test_leaf_none_plays_todays_search_and_a_leaf_changes_play(leaf_file):
    spec = f"search:{FAST}"
    runs = {}
    for name, s in (("today", spec), ("none", spec + ",leaf=none"),
                    ("leaf", spec + f",leaf={leaf_file}")):
        agent = make_agent(s, seed=9)
        runs[name] = (agent, run_tournament([agent, "learned"], teams=2, deals=3, seed=9,
                                            progress=False))
    _same_records(runs["today"][1], runs["none"][1])
    assert runs["today"][0].decisions == runs["none"][0].decisions > 50
    assert runs["today"][0].deviations == runs["none"][0].deviations
    assert runs["leaf"][0].deviations != runs["today"][0].deviations


@pytest.mark.parametrize("teams", [2, 4])
def test_no_peeking_with_a_leaf(leaf_file, teams):
    real, twin, searched = moves_on_twins(f"search:{FAST},leaf={leaf_file}", teams)
    assert searched > 30
    np.testing.assert_array_equal(real, twin)


def test_the_oracle_with_a_leaf_fails_the_no_peeking_test(leaf_file):
    real, twin, _ = moves_on_twins(f"search:{FAST},belief=oracle,cheat=yes,leaf={leaf_file}",
                                   2)
    assert (real != twin).any()


@pytest.mark.parametrize("value, words", [
    ("deep", "leaf='deep' must be none (the horizon's relative points), value (the shipped "
             "leaf value net) or a leaf net's PATH.npz"),
    ("", "leaf='' must be none"),
    (".npz", "leaf='.npz' must be none"),
])
def test_bad_leaf_values_are_one_line_errors(value, words):
    spec = f"search:leaf={value}"
    with pytest.raises(ValueError) as err:
        make_agent(spec)
    assert "\n" not in str(err.value) and words in str(err.value) and spec in str(err.value)


def test_bad_leaf_files_are_refused_in_one_line(tmp_path):
    policy = write_leaf(tmp_path / "policy", leaf_arrays(), role="policy")
    for path, words in ((policy, "is not a leaf value net"),
                        (str(tmp_path / "missing.npz"), "missing")):
        with pytest.raises(ValueError) as err:
            make_agent(f"search:leaf={path}")
        assert "\n" not in str(err.value) and words in str(err.value)


def test_a_leaf_on_two_threads_plays_the_same_moves(leaf_file):
    real1, _, n1 = moves_on_twins(f"search:{FAST},leaf={leaf_file}", 2, ticks=(20,))
    real2, _, n2 = moves_on_twins(f"search:{FAST},leaf={leaf_file},threads=2", 2, ticks=(20,))
    assert n1 == n2 > 10
    np.testing.assert_array_equal(real1, real2)


def test_leaf_value_without_a_shipped_net_is_refused_in_one_line(monkeypatch, tmp_path):
    import agents.search.leaf as leaf_module
    monkeypatch.setattr(leaf_module, "LEAF_FILE", tmp_path / "leaf_value.npz")
    with pytest.raises(ValueError) as err:
        make_agent("search:leaf=value")
    msg = str(err.value)
    assert "\n" not in msg and "leaf=value: no leaf value net is shipped" in msg
    write_leaf(tmp_path / "leaf_value", leaf_arrays())          # shipped: it is read
    assert make_agent("search:leaf=value").leaf_net.wa.shape == (1, 1, 16)
