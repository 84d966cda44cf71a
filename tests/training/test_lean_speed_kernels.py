"""The lean PPO's fast paths compute what the plain torch formulation computes: the policy
head of its update over the legal logits only (agents/learned/sparse.py masked_head, the
autograd function lean_policy.py MaskedHead) against the whole head, masked_fill,
log_softmax, gather and the entropy of the masked probabilities (computed in float64: the
truth the float32 kernel is held to), values and gradients to the hidden rows, the head's
weight and its bias, up to float32 rounding."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

from agents.training.lean_policy import MaskedHead  # noqa: E402


def reference(h, w, b, mask, act):
    """The update's former formulation (lean_ppo.py before the legal-only head)."""
    logits = torch.nn.functional.linear(h, w, b)
    logp_all = torch.log_softmax(logits.masked_fill(~mask, -1e8), dim=1)
    new_logp = logp_all.gather(1, act[:, None]).squeeze(1)
    probs = logp_all.clamp(min=-80.0).exp().masked_fill(~mask, 0.0)
    return new_logp, -(probs * logp_all).sum(dim=1)


def case(seed, n=300, actions=322, width=32):
    rng = np.random.default_rng(seed)
    masks = rng.random((n + 50, actions)) < rng.uniform(0.005, 0.3, size=(n + 50, 1))
    masks[np.arange(n + 50), rng.integers(0, actions, n + 50)] = True   # one legal move at least
    masks[0] = False
    masks[0, 5] = True                                                  # one legal move only
    rows = rng.permutation(n + 50)[:n]
    rows[0] = 0                                                         # the minibatch's first
    act = np.array([rng.choice(np.flatnonzero(masks[r])) for r in rows])
    h = np.tanh(rng.standard_normal((n, width))).astype(np.float32)
    h[:10] *= 1                                                         # (tanh: |h| <= 1)
    w = (rng.standard_normal((actions, width)) * 0.7).astype(np.float32)
    w[:, :3] *= 30                                                      # peaked rows
    b = (rng.standard_normal(actions) * 0.1).astype(np.float32)
    return h, w, b, masks, rows, act


def grads(fn, arrays, masks, rows, act, g1, g2, dtype):
    h, w, b = (torch.tensor(x, dtype=dtype, requires_grad=True) for x in arrays)
    logp, ent = fn(h, w, b)
    loss = 0
    if g1 is not None:
        loss = loss + (logp * g1.to(dtype)).sum()
    if g2 is not None:
        loss = loss + (ent * g2.to(dtype)).sum()
    loss.backward()
    return logp.detach().double().numpy(), ent.detach().double().numpy(), \
        [t.grad.double().numpy() for t in (h, w, b)]


@pytest.mark.parametrize("seed", [0, 1, 2])
@pytest.mark.parametrize("used", ["both", "logp", "entropy"])
def test_the_legal_head_matches_the_torch_formulation_values_and_gradients(seed, used):
    h, w, b, masks, rows, act = case(seed)
    rng = np.random.default_rng(seed + 9)
    g1 = None if used == "entropy" else torch.from_numpy(rng.standard_normal(len(rows)))
    g2 = None if used == "logp" else torch.from_numpy(rng.standard_normal(len(rows)))
    ref = grads(lambda *t: reference(*t, torch.from_numpy(masks[rows]), torch.from_numpy(act)),
                (h, w, b), masks, rows, act, g1, g2, torch.float64)
    got = grads(lambda *t: MaskedHead.apply(*t, masks, rows, act), (h, w, b), masks,
                rows, act, g1, g2, torch.float32)
    np.testing.assert_allclose(got[0], ref[0], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(got[1], ref[1], rtol=1e-5, atol=1e-5)
    for g, r in zip(got[2], ref[2]):
        np.testing.assert_allclose(g, r, rtol=1e-4, atol=1e-5 * np.abs(r).max())
    assert got[1][0] == 0.0 and got[0][0] == 0.0              # one legal move: certain
    never = ~masks[rows].any(axis=0)                           # moves legal in no row
    assert (got[2][1][never] == 0).all() and (got[2][2][never] == 0).all()


def test_the_rollouts_legal_draw_samples_the_masked_softmax():
    """legal_draw (the rollout's move, agents/learned/sparse.py): a legal move always, drawn
    as often as the masked softmax says, and its log-probability the softmax's."""
    from agents.learned.sparse import legal_draw
    h, w, b, masks, rows, act = case(5, n=40)
    m = masks[rows]
    rng = np.random.default_rng(3)
    action, logp = legal_draw(h, w, b, m, rng.random)
    assert m[np.arange(len(action)), action].all()
    ref = torch.log_softmax(torch.nn.functional.linear(
        torch.tensor(h, dtype=torch.float64), torch.tensor(w, dtype=torch.float64),
        torch.tensor(b, dtype=torch.float64)).masked_fill(~torch.from_numpy(m), -1e8), dim=1)
    np.testing.assert_allclose(logp, ref[np.arange(len(action)), action].numpy(), atol=1e-5)
    k = 20_000                                      # one row with several legal moves, k times
    r = int(np.argmax(m.sum(axis=1) * (m.sum(axis=1) < 40)))
    many, _ = legal_draw(np.repeat(h[r:r + 1], k, 0), w, b, np.repeat(m[r:r + 1], k, 0),
                         rng.random)
    freq = np.bincount(many, minlength=m.shape[1]) / k
    np.testing.assert_allclose(freq, ref[r].exp().numpy(), atol=0.015)


def test_the_sparse_layer_keeps_its_weight_copy_only_while_the_weight_is_unchanged():
    """SparseFirstLayer reuses its input-major copy of the weight across a rollout's steps; an
    optimiser step or any in-place change of the weight makes a new one."""
    from agents.learned.sparse import sparse_rows
    from agents.training.lean_policy import SparseFirstLayer
    rng = np.random.default_rng(7)
    x = (rng.random((64, 40)) < 0.1).astype(np.float32) * rng.standard_normal((64, 40)) \
        .astype(np.float32)
    rows = sparse_rows(x)
    layer = SparseFirstLayer(40, 16)
    opt = torch.optim.SGD(layer.parameters(), lr=0.5)
    for change in range(3):
        out = layer(rows)
        np.testing.assert_allclose(out.detach().numpy(), layer(torch.from_numpy(x)).detach()
                                   .numpy(), rtol=1e-5, atol=1e-5)
        if change == 0:
            out.square().sum().backward()
            opt.step()
        else:
            with torch.no_grad():
                layer.weight.mul_(-2.0)
