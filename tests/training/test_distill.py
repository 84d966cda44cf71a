"""Distillation on search labels (agents/training/distill.py): the evidence rule, a tiny run that
is deterministic, moves the net toward search's move on labelled positions and stays put
elsewhere (the KL term), and a model written in the safe format that `ppo:` plays."""
from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from agents.learned.ppo import PPOAgent  # noqa: E402
from agents.training.distill import (DistillConfig, distill, load_actor, measure,  # noqa: E402
                                     save_distilled, targets, tilts)
from agents.training.labels import read_labels, write_labels  # noqa: E402

NET = "agents/learned/models/learned_stacking.npz"


@pytest.fixture(scope="module")
def labels(tmp_path_factory):
    out = tmp_path_factory.mktemp("distill") / "labels"
    write_labels(out, NET, formats=["2teams"], deals=6, block=3, seed=8,
                 search="search:worlds=4,horizon=10", stride=2)
    return read_labels(out)[1]


def _row(cands, gains, se, net, legal=None, searched=True):
    K = 4
    c = np.full((1, K), -1, np.int16)
    c[0, :len(cands)] = cands
    g, s = np.zeros((1, K), np.float32), np.zeros((1, K), np.float32)
    g[0, :len(gains)], s[0, :len(se)] = gains, se
    m = np.zeros((1, 322), bool)
    m[0, legal if legal is not None else cands] = True
    return {"candidates": c, "gains": g, "se": s, "net_move": np.array([net], np.int16),
            "legal": np.packbits(m, axis=1), "searched": np.array([searched])}


def test_targets_need_evidence_and_a_move_the_net_may_play():
    base_net = _row([3, 5, 7], [0, 2.0, 0.5], [0, 0.5, 0.5], net=3)
    assert targets(base_net).tolist() == [5]
    assert targets(base_net, z=5).tolist() == [-1]            # 2.0 < 5 x 0.5
    assert targets(base_net, margin=2.5).tolist() == [-1]
    assert targets(_row([3, 5, 7], [0, 2.0, 0.5], [0, .5, .5], net=5)).tolist() == [-1]
    # the best candidate is not the net's to play: the best it may play, 7, lacks evidence
    assert targets(_row([3, 5, 7], [0, 2.0, 0.5], [0, .5, .5], net=3,
                        legal=[3, 7])).tolist() == [-1]
    # neither move the base: their errors combined, sqrt(0.3^2 + 0.4^2) = 0.5
    assert targets(_row([3, 5, 7], [0, 1.0, 0.4], [0, .3, .4], net=7)).tolist() == [5]
    assert targets(_row([3, 5, 7], [0, 1.0, 0.4], [0, .3, .4], net=7), z=1.3).tolist() == [-1]
    # the base better than the net's move: the net's own error only
    assert targets(_row([3, 5], [0, -1.0], [0, .9], net=5)).tolist() == [3]
    assert targets(_row([3, 5], [0, 2.0], [0, .5], net=3, searched=False)).tolist() == [-1]
    assert targets(_row([3, 5], [0, 2.0], [0, .5], net=9, legal=[3, 5, 9])).tolist() == [-1]


def _probe(actor, labels, z=1.0):
    obs = torch.from_numpy(labels["obs"])
    legal = torch.from_numpy(np.unpackbits(labels["legal"], axis=1, count=322).astype(bool))
    anchor, _ = load_actor(NET)
    return measure(actor, anchor, obs, legal, torch.from_numpy(targets(labels, z)))


CFG = DistillConfig(epochs=3, batch=128, lr=1e-3, kl=4.0, z=1.0, seed=2)


def test_tiny_distill_is_deterministic_moves_toward_search_and_stays_put_elsewhere(
        labels, one_torch_thread):
    actor, _, fig = distill(labels, NET, CFG)
    again, _, _ = distill(labels, NET, CFG)
    for a, b in zip(actor.state_dict().values(), again.state_dict().values()):
        assert torch.equal(a, b)
    before, _ = load_actor(NET)
    b, a = _probe(before, labels), _probe(actor, labels)
    assert a["targets"] >= 20
    assert a["target_prob"] > 3 * b["target_prob"] + 0.05     # toward search's move
    assert a["kl_elsewhere"] < 0.02 and a["changed_elsewhere"] < 0.02   # put elsewhere
    free, _, _ = distill(labels, NET, CFG._replace(kl=0.0))
    assert _probe(free, labels)["kl_elsewhere"] > 2 * a["kl_elsewhere"]   # the KL holds it
    other, _, _ = distill(labels, NET, CFG._replace(seed=3))
    assert not torch.equal(other[0].weight, actor[0].weight)


def test_the_distilled_net_is_written_in_the_safe_format_and_plays(labels, tmp_path,
                                                                  one_torch_thread):
    actor, meta, _ = distill(labels, NET, CFG._replace(epochs=1))
    path = save_distilled(actor, meta, tmp_path / "gen1.npz", {"algorithm": "expert_iteration"})
    agent = PPOAgent(str(path))
    assert agent.policy.meta["constraint"] == meta["constraint"] == "useful-shifts"
    legal = np.unpackbits(labels["legal"], axis=1, count=322).astype(bool)
    with torch.no_grad():
        logits = actor(torch.from_numpy(labels["obs"])).numpy()
    want = np.where(legal, logits, -np.inf).argmax(axis=1)
    assert (agent.policy.act_batch(labels["obs"], legal) == want).mean() > 0.99


def test_bad_settings_are_one_line():
    with pytest.raises(ValueError, match="distill lr=0 must be"):
        DistillConfig(lr=0).check()
    with pytest.raises(ValueError, match="distill epochs=0 must be an int >= 1"):
        DistillConfig(epochs=0).check()


def test_the_kl_keeps_only_rows_without_a_target(labels):
    from agents.training.distill import _loss
    actor, _ = load_actor(NET)
    anchor, _ = load_actor(NET)
    with torch.no_grad():
        actor[-1].bias.add_(torch.linspace(-1, 1, 322))          # away from the anchor
    obs = torch.from_numpy(labels["obs"][:64])
    legal = torch.from_numpy(np.unpackbits(labels["legal"][:64], axis=1, count=322)
                             .astype(bool))
    first = legal.float().argmax(dim=1)
    every = first.clone()                                        # a target on every row
    loss, ce, kl = _loss(actor, anchor, obs, legal, every, kl=5.0)
    assert kl == 0.0 and float(loss.detach()) == pytest.approx(ce / 64, rel=1e-6)
    none = torch.full_like(first, -1)                            # no target anywhere
    loss, ce, kl = _loss(actor, anchor, obs, legal, none, kl=5.0)
    assert ce == 0.0 and kl > 0.01 and float(loss.detach()) == pytest.approx(5.0 * kl / 64, rel=1e-5)


def test_soft_tilts_move_only_as_far_as_the_evidence():
    moves, tilt = tilts(_row([3, 5, 7], [0, 2.0, 0.5], [0, .5, .5], net=3), beta=2.0, z=1.0)
    assert moves[0, :3].tolist() == [3, 5, 7]
    assert tilt[0, :3] == pytest.approx([0.0, 3.0, 0.0])      # 2 (2.0 - 0.5), 0.5 - 0.5 = 0
    _, tilt = tilts(_row([3, 5, 7], [0, 1.0, 0.4], [0, .3, .4], net=7), beta=2.0, z=1.0)
    assert tilt[0, :3] == pytest.approx([0.0, 0.2, 0.0], abs=1e-6)   # 0.6 - 0.5; -0.4 + 0.4
    _, tilt = tilts(_row([3, 5], [0, -2.0], [0, .5], net=3), beta=1.0, z=1.0)
    assert tilt[0, :2] == pytest.approx([0.0, -1.5])          # a worse move pushed down
    _, tilt = tilts(_row([3, 5], [0, 2.0], [0, .5], net=3, legal=[3]), beta=1.0)
    assert not tilt.any()                                     # not the net's to play
    _, tilt = tilts(_row([3, 5], [0, 2.0], [0, .5], net=3, searched=False), beta=1.0)
    assert not tilt.any()


def test_soft_distill_moves_toward_search_and_stays_put_elsewhere(labels, one_torch_thread):
    soft = CFG._replace(mode="soft", beta=4.0)
    actor, _, _ = distill(labels, NET, soft)
    again, _, _ = distill(labels, NET, soft)
    assert torch.equal(actor[0].weight, again[0].weight)
    b, a = _probe(load_actor(NET)[0], labels), _probe(actor, labels)
    assert a["target_prob"] > 4 * b["target_prob"] and a["target_prob"] > b["target_prob"] + .03
    assert a["kl_elsewhere"] < 0.05
    with pytest.raises(ValueError, match="distill mode='warm' must be hard, soft or gains"):
        DistillConfig(mode="warm").check()


def _stack(*rows):
    out = {k: np.concatenate([r[k] for r in rows]) for k in rows[0]}
    n = len(out["net_move"])
    out.update(deal=np.arange(n), seating=np.zeros(n, np.int16), seat=np.zeros(n, np.int8),
               tick=np.arange(n))
    return out


def test_confirmed_targets_need_a_second_search_to_agree():
    a = _stack(_row([3, 5, 7], [0, 2.0, 0.5], [0, .5, .5], net=3),
               _row([3, 5, 7], [0, 2.0, 0.5], [0, .5, .5], net=3),
               _row([3, 5], [0, 2.0], [0, .5], net=3))
    b = _stack(_row([3, 5, 7], [0, 1.5, 0.1], [0, .5, .5], net=3),       # agrees: 5
               _row([3, 5, 7], [0, 0.2, 1.9], [0, .5, .5], net=3),       # another move: 7
               _row([3, 5], [0, 0.3], [0, .5], net=3))                   # no evidence
    assert targets(a).tolist() == [5, 5, 5]
    assert targets(a, confirm=b).tolist() == [5, -1, -1]
    b["tick"] = b["tick"] + 1
    with pytest.raises(ValueError, match="same positions"):
        targets(a, confirm=b)
