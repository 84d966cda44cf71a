"""Distillation on the gains (#42, "a network that learns from search", mode="gains" of
agents/training/distill.py): the net's log-odds of each searched candidate against its own move
are regressed onto kappa x the candidate's measured gain, weighted by 1 / (se^2 + s0^2). It
moves toward the higher-gain candidate in proportion to the gain, not where the standard error
is huge, keeps the start's policy on rows without search and on the moves that are not
candidates, and is deterministic."""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from agents.training.distill import (DistillConfig, _gains_loss, distill, gains,  # noqa: E402
                                     load_actor)
from nertz_env.core.observe import OBS_DIM  # noqa: E402

NET = "agents/learned/models/learned_stacking.npz"
N = 96
CFG = DistillConfig(epochs=40, batch=32, lr=1e-3, kl=1.0, seed=4, mode="gains", kappa=0.5,
                    s0=0.25)


def _labels(gain=(2.0, 1.0), se=(0.1, 0.1), searched=True, n=N, seed=0):
    """n rows of sparse 0/1 observations; the net's move 3, candidates 3 (the base), 5 and 7
    of the given gains and errors; legal 3, 5, 7 and 11 (11 no candidate)."""
    rng = np.random.default_rng(seed)
    legal = np.zeros((n, 322), bool)
    legal[:, [3, 5, 7, 11]] = True
    cand = np.tile(np.array([[3, 5, 7, -1]], np.int16), (n, 1))
    return {"obs": (rng.random((n, OBS_DIM)) < 0.05).astype(np.float32),
            "legal": np.packbits(legal, axis=1), "net_move": np.full(n, 3, np.int16),
            "candidates": cand,
            "gains": np.tile(np.array([[0.0, *gain, 0.0]], np.float32), (n, 1)),
            "se": np.tile(np.array([[0.0, *se, 0.0]], np.float32), (n, 1)),
            "searched": np.full(n, searched), "deal": 1 + np.arange(n) % 9}  # none held out


def _logp(actor, lab):
    legal = torch.from_numpy(np.unpackbits(lab["legal"], axis=1, count=322).astype(bool))
    with torch.no_grad():
        return torch.log_softmax(actor(torch.from_numpy(lab["obs"])).masked_fill(~legal, -1e8),
                                 dim=1).numpy()


def _change(lab, cfg=CFG):
    """Mean change (trained minus start) of log p(5)/p(3), log p(7)/p(3), log p(11)."""
    actor, _, _ = distill(lab, NET, cfg)
    a, b = _logp(actor, lab), _logp(load_actor(NET)[0], lab)
    d = a - b
    return (d[:, 5] - d[:, 3]).mean(), (d[:, 7] - d[:, 3]).mean(), d[:, 11].mean()


def test_the_regression_rows_weigh_each_candidate_by_its_evidence():
    lab = _labels(se=(0.5, 2.0))
    moves, at, diff, w = gains(lab, s0=1.0)
    assert moves[0].tolist() == [3, 5, 7, 0] and at[0] == 0
    assert diff[0].tolist() == pytest.approx([0.0, 2.0, 1.0, 0.0])
    assert w[0].tolist() == pytest.approx([0.0, 1 / 1.25, 1 / 5.0, 0.0])   # none at its own
    lab["net_move"][:] = 5                           # neither the base: errors combined
    moves, at, diff, w = gains(lab, s0=1.0)
    assert at[0] == 1 and diff[0, :3].tolist() == pytest.approx([-2.0, 0.0, -1.0])
    assert w[0, :3].tolist() == pytest.approx([1 / 1.25, 0.0, 1 / (1 + 0.25 + 4.0)])
    assert not gains(_labels(searched=False))[3].any()
    lab = _labels()
    lab["net_move"][:] = 11                          # the net's move no candidate
    assert not gains(lab)[3].any()
    with pytest.raises(ValueError, match="distill s0=0 must be a finite number > 0"):
        DistillConfig(mode="gains", s0=0).check()
    with pytest.raises(ValueError, match="distill tau=0 must be a finite number > 0"):
        DistillConfig(mode="gains", tau=0).check()
    with pytest.raises(ValueError, match="distill kappa=-1 must be a finite number >= 0"):
        DistillConfig(mode="gains", kappa=-1).check()


SHRINK = CFG.tau ** 2 / (CFG.tau ** 2 + 0.1 ** 2 + CFG.s0 ** 2)     # 0.98 at se 0.1


def test_the_net_moves_toward_a_candidate_in_proportion_to_its_gain(one_torch_thread):
    d5, d7, d11 = _change(_labels(gain=(2.0, 1.0)))
    assert d5 == pytest.approx(CFG.kappa * 2.0 * SHRINK, abs=0.1)    # ~1 nat toward 5
    assert d7 == pytest.approx(CFG.kappa * 1.0 * SHRINK, abs=0.1)    # half as far toward 7
    assert abs(d11) < 0.1                                            # no candidate: kept
    w5, w7, _ = _change(_labels(gain=(-2.0, 0.0)))                   # a worse move pushed down
    assert w5 == pytest.approx(-1.0 * SHRINK, abs=0.1) and abs(w7) < 0.1
    h5, h7, _ = _change(_labels(gain=(2.0, 1.0), se=(1.5, 1.5)))     # shrunk by its error
    want = CFG.tau ** 2 / (CFG.tau ** 2 + 1.5 ** 2 + CFG.s0 ** 2)     # 0.63
    assert h5 == pytest.approx(CFG.kappa * 2.0 * want, abs=0.1) and h5 < d5 - 0.2


def test_not_where_the_standard_error_is_huge(one_torch_thread):
    d5, d7, d11 = _change(_labels(gain=(2.0, 1.0), se=(50.0, 50.0)))
    assert abs(d5) < 0.05 and abs(d7) < 0.05 and abs(d11) < 0.05


def test_rows_without_search_keep_the_start_policy(one_torch_thread):
    lab = _labels(searched=False)
    lab["obs"] = _labels(seed=1)["obs"]                  # other positions than the others
    both = {k: np.concatenate([_labels()[k], lab[k]]) for k in lab}
    actor, _, _ = distill(both, NET, CFG)
    start = _logp(load_actor(NET)[0], lab)
    p0 = np.exp(start)
    kl = lambda a: np.where(p0 > 0, p0 * (start - _logp(a, lab)), 0).sum(1).mean()  # noqa
    free, _, _ = distill(both, NET, CFG._replace(kl=0.0))
    assert kl(actor) < 0.01 and kl(free) > 3 * kl(actor)     # the KL holds them
    moved = _logp(actor, _labels())
    assert (moved[:, 5] - moved[:, 3]).mean() > (_logp(load_actor(NET)[0], _labels())[:, 5]
                                                 - _logp(load_actor(NET)[0], _labels())[:, 3]
                                                 ).mean() + 0.5


def test_the_loss_is_zero_at_the_fit_and_the_kl_only_off_the_candidates():
    lab = _labels(n=8)
    actor, _ = load_actor(NET)
    anchor, _ = load_actor(NET)
    obs = torch.from_numpy(lab["obs"])
    legal = torch.from_numpy(np.unpackbits(lab["legal"], axis=1, count=322).astype(bool))
    m, at, diff, w = (torch.from_numpy(a) for a in gains(lab, 1.0))
    loss, reg, kl = _gains_loss(actor, anchor, obs, legal, m, at, diff, w, 0.0, 1.0)
    assert float(loss.detach()) == 0.0 and reg == 0.0 and kl == 0.0     # kappa 0: the start fits
    loss, reg, kl = _gains_loss(actor, anchor, obs, legal, m, at, diff, w, 0.5, 1.0, tau=2.0)
    want = 8 * (w[0, 1] * 1.0 ** 2 + w[0, 2] * 0.5 ** 2)      # the ridge 0 at the start
    assert reg == pytest.approx(float(want), rel=1e-5) and kl == 0.0
    with torch.no_grad():        # every candidate alike: no regression, mass taken from 11
        actor[-1].bias[[3, 5, 7]] += 0.7
    _, reg, kl = _gains_loss(actor, anchor, obs, legal, m, at, diff, w, 0.0, 1.0)
    assert reg == pytest.approx(0.0, abs=1e-8) and kl > 1e-3
    with torch.no_grad():
        actor[-1].bias[[3, 5, 7]] -= 0.7
        actor[-1].bias[5] += 0.7          # within the candidates only: the regression sees it
    loss, reg, kl = _gains_loss(actor, anchor, obs, legal, m, at, diff, w, 0.0, 1.0, tau=2.0)
    assert reg == pytest.approx(8 * (float(w[0, 1]) + 0.25) * 0.49, rel=1e-3) and kl > 1e-3


def test_same_seed_same_weights(one_torch_thread):
    cfg = CFG._replace(epochs=3)
    lab = _labels()
    a, _, fig = distill(lab, NET, cfg)
    b, _, _ = distill(lab, NET, cfg)
    for x, y in zip(a.state_dict().values(), b.state_dict().values()):
        assert torch.equal(x, y)
    c, _, _ = distill(lab, NET, cfg._replace(seed=5))
    assert not torch.equal(a[0].weight, c[0].weight)
    assert fig["epochs"][-1]["ce_per_row"] < fig["epochs"][0]["ce_per_row"]


def test_a_run_recorded_before_the_gains_options_resumes_at_their_defaults(tmp_path):
    import json

    from train.expert_iteration import OPTIONS, check_record, parser
    args = parser().parse_args(["--out", str(tmp_path)])
    rec = {k: getattr(args, k) for k in OPTIONS}
    old = {k: v for k, v in rec.items() if k not in ("kappa", "s0", "tau")}
    (tmp_path / "expert_iteration.json").write_text(json.dumps(old))
    check_record(tmp_path, rec, resume=True)                    # the defaults: same run
    with pytest.raises(ValueError, match="--kappa was 0.5 in this run, now 2.0"):
        check_record(tmp_path, {**rec, "kappa": 2.0}, resume=True)
    with pytest.raises(ValueError, match="distill kappa=nan must be a finite number >= 0"):
        DistillConfig(mode="gains", kappa=float("nan")).check()
