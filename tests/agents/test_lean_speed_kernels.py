"""The lean PPO's fast paths compute what the plain torch formulation computes: the masked
policy statistics of its update (agents/learned/sparse.py masked_stats, the autograd function
lean_policy.py masked_stats_fn) against masked_fill + log_softmax + gather + the entropy of the
masked probabilities (computed in float64: the truth the float32 kernel is held to), values
and gradients, up to float32 rounding."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

from agents.training.lean_policy import masked_stats_fn  # noqa: E402


def reference(logits, mask, act):
    """The update's former formulation (lean_ppo.py before the fused kernel)."""
    logp_all = torch.log_softmax(logits.masked_fill(~mask, -1e8), dim=1)
    new_logp = logp_all.gather(1, act[:, None]).squeeze(1)
    probs = logp_all.clamp(min=-80.0).exp().masked_fill(~mask, 0.0)
    return new_logp, -(probs * logp_all).sum(dim=1)


def case(seed, n=300, actions=322, scale=3.0):
    rng = np.random.default_rng(seed)
    masks = rng.random((n + 50, actions)) < rng.uniform(0.01, 0.3, size=(n + 50, 1))
    masks[np.arange(n + 50), rng.integers(0, actions, n + 50)] = True   # one legal move at least
    masks[0] = False
    masks[0, 5] = True                                                  # one legal move only
    rows = rng.permutation(n + 50)[:n]
    rows[0] = 0                                                         # the minibatch's first
    act = np.array([rng.choice(np.flatnonzero(masks[r])) for r in rows])
    logits = (rng.standard_normal((n, actions)) * scale).astype(np.float32)
    logits[:10] *= 40                                                   # peaked rows
    return logits, masks, rows, act


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_masked_stats_match_the_torch_formulation_values_and_gradients(seed):
    logits, masks, rows, act = case(seed)
    g1 = torch.from_numpy(np.random.default_rng(seed + 9).standard_normal(len(rows))
                          .astype(np.float32))
    g2 = torch.from_numpy(np.random.default_rng(seed + 10).standard_normal(len(rows))
                          .astype(np.float32))
    z_ref = torch.tensor(logits, dtype=torch.float64, requires_grad=True)
    logp_ref, ent_ref = reference(z_ref, torch.from_numpy(masks[rows]), torch.from_numpy(act))
    ((logp_ref * g1.double()).sum() + (ent_ref * g2.double()).sum()).backward()
    z = torch.tensor(logits, requires_grad=True)
    logp, ent = masked_stats_fn().apply(z, masks, rows, act)
    ((logp * g1).sum() + (ent * g2).sum()).backward()
    np.testing.assert_allclose(logp.detach().numpy(), logp_ref.detach().numpy(), rtol=1e-5,
                               atol=1e-4)
    np.testing.assert_allclose(ent.detach().numpy(), ent_ref.detach().numpy(), rtol=1e-5,
                               atol=1e-5)
    np.testing.assert_allclose(z.grad.numpy(), z_ref.grad.numpy(), rtol=1e-4, atol=1e-6)
    assert (z.grad.numpy()[~masks[rows]] == 0).all()          # illegal logits get no gradient
    assert ent[0].item() == 0.0 and logp[0].item() == 0.0      # one legal move: certain


def test_masked_stats_with_one_output_used():
    """Only the log-probability (or only the entropy) in the loss: the other's gradient is
    absent (None) and counts as zero."""
    logits, masks, rows, act = case(4, n=40)
    for pick in (0, 1):
        z_ref = torch.tensor(logits, dtype=torch.float64, requires_grad=True)
        reference(z_ref, torch.from_numpy(masks[rows]), torch.from_numpy(act))[pick].sum() \
            .backward()
        z = torch.tensor(logits, requires_grad=True)
        masked_stats_fn().apply(z, masks, rows, act)[pick].sum().backward()
        np.testing.assert_allclose(z.grad.numpy(), z_ref.grad.numpy(), rtol=1e-4, atol=1e-6)
