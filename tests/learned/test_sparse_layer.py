"""The sparse first layer (agents/learned/sparse.py): padded rows hold exactly the non-zero
entries, and the product and its weight gradient equal the dense ones up to float32
rounding, in numpy, in torch (the lean PPO's layer) and over a whole lean PPO update."""
import numpy as np
import pytest

from agents.learned.sparse import sparse_forward, sparse_rows, sparse_weight_grad
from nertz_env.envs.vector import NertzVecEnv


@pytest.fixture(scope="module")
def observations():
    env = NertzVecEnv(num_envs=16, seed=4, max_ticks=200)
    rng = np.random.default_rng(0)
    obs, rows = env.reset(), []
    for _ in range(40):
        masks = env.action_masks()
        obs, _, _, _ = env.step(np.array([rng.choice(np.flatnonzero(m)) for m in masks]))
        rows.append(obs.copy())
    return np.concatenate(rows).astype(np.float32)


def test_rows_hold_exactly_the_non_zero_entries(observations):
    idx, val = sparse_rows(observations)
    assert idx.shape[1] == (observations != 0).sum(axis=1).max()
    back = np.zeros_like(observations)
    np.add.at(back, (np.repeat(np.arange(len(idx)), idx.shape[1]), idx.ravel()), val.ravel())
    assert np.array_equal(back, observations)
    assert sparse_rows(np.zeros((3, 5), np.float32))[0].shape == (3, 1)     # no entries at all


def test_product_and_weight_gradient_equal_the_dense_ones(observations):
    rng = np.random.default_rng(1)
    w = rng.standard_normal((observations.shape[1], 64)).astype(np.float32)
    b = rng.standard_normal(64).astype(np.float32)
    idx, val = sparse_rows(observations)
    np.testing.assert_allclose(sparse_forward(idx, val, w, b), observations @ w + b,
                               rtol=1e-5, atol=1e-4)
    g = rng.standard_normal((len(observations), 64)).astype(np.float32)
    np.testing.assert_allclose(sparse_weight_grad(idx, val, g, w.shape[0]), observations.T @ g,
                               rtol=1e-5, atol=1e-3)


def test_the_torch_layer_matches_nn_linear(observations):
    torch = pytest.importorskip("torch")
    from agents.training.lean_policy import SparseFirstLayer, _mlp
    torch.manual_seed(0)
    a = _mlp(torch.nn, [observations.shape[1], 32, 32], 8, 0.01, SparseFirstLayer)
    torch.manual_seed(0)
    b = _mlp(torch.nn, [observations.shape[1], 32, 32], 8, 0.01)
    assert all(torch.equal(p, q) for p, q in zip(a.parameters(), b.parameters()))
    ya, yb = a(sparse_rows(observations)), b(torch.from_numpy(observations))
    torch.testing.assert_close(ya, yb, rtol=1e-5, atol=1e-5)
    torch.testing.assert_close(a(torch.from_numpy(observations)), yb)       # dense input too
    ya.square().sum().backward()
    yb.square().sum().backward()
    for p, q in zip(a.parameters(), b.parameters()):
        torch.testing.assert_close(p.grad, q.grad, rtol=1e-4, atol=1e-4)


def test_a_sparse_lean_update_lands_where_the_dense_one_does(tmp_path):
    pytest.importorskip("torch")
    pytest.importorskip("stable_baselines3")
    from agents.learned.weights import load_weights
    from agents.training.lean_ppo import lean_config, train
    cfg = {"num_envs": 8, "max_ticks": 150, "net_arch": [32, 32], "n_steps": 16,
           "batch_size": 64, "n_epochs": 1, "timesteps": 128, "torch_threads": 1}
    _, s = load_weights(train(lean_config(out=str(tmp_path / "s"), **cfg), log=lambda x: None))
    _, d = load_weights(train(lean_config(out=str(tmp_path / "d"), **cfg), log=lambda x: None,
                              sparse=False))
    for k in s:
        np.testing.assert_allclose(s[k], d[k], rtol=1e-3, atol=1e-5, err_msg=k)


@pytest.mark.parametrize("teams", [2, 4])
def test_the_fast_deterministic_path_plays_predicts_moves(teams, observations):
    """NumpyPolicy's fast path (sparse first layer, legal logits only) against its own op-for-op
    path on real positions, and on a model whose every legal pair ties (the dense ops decide
    each of those rows)."""
    from agents.learned.weights import NumpyPolicy, load_weights
    from nertz_env.envs.vector import NertzVecEnv
    env = NertzVecEnv(num_envs=32, seed=teams, num_teams=teams, max_ticks=300)
    rng = np.random.default_rng(teams)
    obs, rows, masks = env.reset(), [], []
    for _ in range(60):
        m = env.action_masks()
        rows.append(obs.copy())
        masks.append(m.copy())
        obs, _, _, _ = env.step(np.array([rng.choice(np.flatnonzero(x)) for x in m]))
    obs, masks = np.concatenate(rows), np.concatenate(masks)
    meta, arrays = load_weights(f"agents/learned/models/learned_{teams}teams.npz")
    # every logit the same bias: a zero action net ties exactly under any BLAS (identical
    # weight rows do not: a matmul may sum its columns in different orders)
    tied = dict(arrays, action_weight=np.zeros_like(arrays["action_weight"]),
                action_bias=np.full(322, arrays["action_bias"][0], np.float32))
    for arr in (arrays, tied):
        fast, slow = NumpyPolicy(meta, arr), NumpyPolicy(meta, arr)
        slow.sparse = False
        assert np.array_equal(fast.act_batch(obs, masks), slow.act_batch(obs, masks))
    assert (NumpyPolicy(meta, tied).act_batch(obs, masks)
            == np.argmax(masks.astype(bool), axis=1)).all()          # ties: the first legal
