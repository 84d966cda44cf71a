"""agents/training/distill.py `distill_targets`: the one training loop of distill() and of
train/override_table.py's distillation. Both give, bit for bit, the weights of the loop as it
stood in each before they shared it (frozen below as `reference`: same seeded order, batches,
Adam, cross-entropy toward the target and kl x KL to the start on the rows without one); it
moves the net toward its targets and the KL holds the other rows; bad rows are one line."""
from __future__ import annotations

import argparse

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from agents.training.distill import (DistillConfig, distill, distill_targets,  # noqa: E402
                                     load_actor, targets)
from nertz_env.actions import N_ACTIONS  # noqa: E402
from nertz_env.core.observe import OBS_DIM  # noqa: E402

NET = "agents/learned/models/learned_stacking.npz"
N = 120
CFG = DistillConfig(epochs=3, batch=32, lr=1e-3, kl=4.0, seed=2)


def _rows(n=N, seed=0):
    """(obs, legal, target, held): sparse 0/1 observations; legal 3, 5, 7 and 11; target 5
    on two rows of three, -1 (KL only) on the third; every tenth row held out."""
    rng = np.random.default_rng(seed)
    obs = (rng.random((n, OBS_DIM)) < 0.05).astype(np.float32)
    legal = np.zeros((n, N_ACTIONS), bool)
    legal[:, [3, 5, 7, 11]] = True
    target = np.where(np.arange(n) % 3 == 2, -1, 5)
    return obs, legal, target, np.arange(n) % 10 == 0


def reference(obs, legal, target, held, cfg):
    """The loop distill() and distill_override each held before distill_targets (frozen)."""
    actor, _ = load_actor(NET)
    anchor, _ = load_actor(NET)
    for p in anchor.parameters():
        p.requires_grad_(False)
    obs, legal = torch.from_numpy(obs), torch.from_numpy(legal)
    target = torch.from_numpy(np.asarray(target, np.int64))
    train_rows = np.flatnonzero(~held)
    opt = torch.optim.Adam(actor.parameters(), lr=cfg.lr)
    rng = np.random.default_rng(cfg.seed)
    for _ in range(cfg.epochs):
        order = train_rows[rng.permutation(train_rows.size)]
        for lo in range(0, order.size, cfg.batch):
            idx = torch.from_numpy(order[lo:lo + cfg.batch])
            o, m, t = obs[idx], legal[idx], target[idx]
            logp = torch.log_softmax(actor(o).masked_fill(~m, -1e8), dim=1)
            with torch.no_grad():
                logp0 = torch.log_softmax(anchor(o).masked_fill(~m, -1e8), dim=1)
            p0 = logp0.exp()
            kls = torch.where(m, p0 * (logp0 - logp), torch.zeros_like(logp)).sum(dim=1)
            has = t >= 0
            ce = -logp[has, t[has]].sum() if bool(has.any()) else logp.sum() * 0.0
            loss = (ce + cfg.kl * kls[~has].sum()) / len(o)
            opt.zero_grad()
            loss.backward()
            opt.step()
    return [p.detach().numpy() for p in actor.parameters()]


def _same(actor, want):
    got = [p.detach().numpy() for p in actor.parameters()]
    return len(got) == len(want) and all(np.array_equal(a, b) for a, b in zip(got, want))


def test_distill_targets_is_the_frozen_loop_bit_for_bit(one_torch_thread):
    obs, legal, target, held = _rows()
    actor, meta, fig = distill_targets(obs, legal, target, NET, CFG, held)
    assert _same(actor, reference(obs, legal, target, held, CFG))
    assert fig["train_rows"] == N - 12 and fig["train_targets"] == int((target[~held] >= 0).sum())
    assert len(fig["epochs"]) == 3 and fig["after"] == fig["epochs"][-1]["holdout"]
    assert meta["constraint"] == "useful-shifts"


def _labels(n=N, seed=0):
    """search's labels of _rows' positions: the net's move 3, candidates 3, 5 (+2.0) and 7
    (+1.0), se 0.1: target 5 where searched (two rows of three), none elsewhere."""
    obs, legal, target, _ = _rows(n, seed)
    return {"obs": obs, "legal": np.packbits(legal, axis=1), "net_move": np.full(n, 3, np.int16),
            "candidates": np.tile(np.array([[3, 5, 7, -1]], np.int16), (n, 1)),
            "gains": np.tile(np.array([[0.0, 2.0, 1.0, 0.0]], np.float32), (n, 1)),
            "se": np.tile(np.array([[0.0, 0.1, 0.1, 0.0]], np.float32), (n, 1)),
            "searched": target >= 0, "deal": np.arange(n)}


def test_distill_hard_mode_is_the_frozen_loop_bit_for_bit(one_torch_thread):
    lab = _labels()
    assert targets(lab).tolist() == _rows()[2].tolist()
    actor, _, fig = distill(lab, NET, CFG)
    obs, legal, target, held = _rows()
    assert _same(actor, reference(obs, legal, target, held, CFG))
    assert "gain_rows" in fig["before"]                       # distill's own held-out figures


def test_the_override_distillation_is_the_frozen_loop_bit_for_bit(tmp_path, monkeypatch,
                                                                  one_torch_thread):
    import train.override_table as ot
    obs, legal, target, _ = _rows(2 * N)
    packed = np.packbits(legal, axis=1)
    cut = 200                                                 # the fit's rows, then held out
    parts = iter([{"obs": obs[:cut], "legal": packed[:cut], "net_move": np.full(cut, 3),
                   "target": target[:cut]},
                  {"obs": obs[cut:], "legal": packed[cut:], "net_move": np.full(2 * N - cut, 3),
                   "target": target[cut:]}])
    monkeypatch.setattr(ot, "record", lambda *a: next(parts))
    a = argparse.Namespace(net=NET, record_deals=2, record_seed=3, stride=4, epochs=2, lr=1e-2,
                           kl=1.0, seed=0, weighting="plain", z=1.0, threshold=0.0)
    figs = ot.distill_override(a, {"4teams": {}}, tmp_path)
    held = np.arange(2 * N) >= cut
    want = reference(obs, legal, target, held,
                     DistillConfig(epochs=2, batch=1024, lr=1e-2, kl=1.0, seed=0))
    got = np.load(tmp_path / "model.npz")
    names = ["hidden0_weight", "hidden0_bias", "hidden1_weight", "hidden1_bias",
             "action_weight", "action_bias"]
    assert all(np.array_equal(got[k], w) for k, w in zip(names, want))
    assert (figs["rows"], figs["held_rows"]) == (2 * N, 2 * N - cut)
    assert list(figs["epochs"][0]) == ["epoch", "holdout"]    # distill.json as it was


def _probe(actor, obs, legal, target):
    """(mean probability of the target on its rows, mean KL(start || net) on the others)."""
    start, _ = load_actor(NET)
    o, m = torch.from_numpy(obs), torch.from_numpy(legal)
    with torch.no_grad():
        lp = torch.log_softmax(actor(o).masked_fill(~m, -1e8), dim=1)
        lp0 = torch.log_softmax(start(o).masked_fill(~m, -1e8), dim=1)
    kl = torch.where(m, lp0.exp() * (lp0 - lp), torch.zeros_like(lp)).sum(dim=1).numpy()
    has = target >= 0
    return float(lp.numpy()[has, target[has]].mean()), float(kl[~has].mean()), lp0


def test_the_targets_pull_and_the_kl_holds_the_other_rows(one_torch_thread):
    obs, legal, target, held = _rows()
    cfg = CFG._replace(epochs=6, lr=3e-3)
    actor, _, fig = distill_targets(obs, legal, target, NET, cfg, held)
    p, kl, lp0 = _probe(actor, obs, legal, target)
    p0 = float(lp0.numpy()[target >= 0, 5].mean())
    assert p > p0 + 3                                         # log p(target) rose: the CE
    assert fig["after"]["target_prob"] > 2 * fig["before"]["target_prob"]
    free, _, _ = distill_targets(obs, legal, target, NET, cfg._replace(kl=0.0), held)
    _, kl_free, _ = _probe(free, obs, legal, target)
    assert kl < 0.5 and kl_free > 5 * kl                      # the KL holds the anchor rows


def test_bad_rows_are_refused_in_one_line():
    obs, legal, target, held = _rows(12)
    bad = target.copy()
    bad[0] = 9                                                # not legal on its row
    with pytest.raises(ValueError, match="distill target: every row's a legal move"):
        distill_targets(obs, legal, bad, NET, CFG, held)
    with pytest.raises(ValueError, match=r"distill rows: obs \(12, \d+\), legal \(12, 322\), "
                                         r"target \(11,\)"):
        distill_targets(obs, legal, target[:11], NET, CFG, held)
    with pytest.raises(ValueError, match="distill epochs=0 must be an int >= 1"):
        distill_targets(obs, legal, target, NET, CFG._replace(epochs=0), held)


def test_the_override_refuses_bad_settings_before_any_work(tmp_path, monkeypatch, capsys):
    import train.override_table as ot
    monkeypatch.setattr(ot, "table_of", lambda *a: pytest.fail("work began"))
    assert ot.main(["--distill", str(tmp_path / "out"), "--epochs", "0"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "epochs=0" in err
    assert not (tmp_path / "out").exists()
