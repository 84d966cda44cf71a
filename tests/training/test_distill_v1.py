"""Expert iteration with the memory features (#42 item 4): distillation trains a v1 net on v1
rows and moves its memory-block weights off zero; train/expert_iteration.py --observation v1
widens a v0 --init and runs a tiny generation end to end on v1 labels; labels of one
observation and a net of another are refused in one line before any work."""
from __future__ import annotations

import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from agents.learned.ppo import PPOAgent  # noqa: E402
from agents.learned.v1 import widen_model  # noqa: E402
from agents.training.distill import DistillConfig, distill, save_distilled, targets  # noqa: E402
from agents.training.labels import read_labels, write_labels  # noqa: E402
from nertz_env.core.observe import OBS_DIM  # noqa: E402
from nertz_env.core.observe_memory import V1_OBS_DIM  # noqa: E402
from train.expert_iteration import main  # noqa: E402

NET = "agents/learned/models/learned_stacking.npz"
SEARCH = "search:worlds=4,horizon=10"


@pytest.fixture(scope="module")
def v1(tmp_path_factory):
    base = tmp_path_factory.mktemp("distill_v1")
    wide = str(widen_model(NET, base / "wide.npz")[0])
    write_labels(base / "v1", wide, formats=["2teams"], deals=6, block=3, seed=8,
                 search=SEARCH, stride=2)
    write_labels(base / "v0", NET, formats=["2teams"], deals=1, block=1, seed=8,
                 search=SEARCH, stride=2)
    return base, wide, read_labels(base / "v1")[1], read_labels(base / "v0")[1]


CFG = DistillConfig(epochs=2, batch=128, lr=1e-3, kl=1.0, z=1.0, seed=2)


def test_distillation_moves_the_memory_weights_off_zero(v1, tmp_path, one_torch_thread):
    _, wide, lab, _ = v1
    assert lab["obs"].shape[1] == V1_OBS_DIM and (targets(lab) >= 0).sum() >= 20
    actor, meta, fig = distill(lab, wide, CFG)
    w = actor[0].weight.detach().numpy()
    assert w.shape[1] == V1_OBS_DIM
    assert np.abs(w[:, OBS_DIM:]).max() > 1e-4                 # the memory block is learned
    again, _, _ = distill(lab, wide, CFG)
    assert torch.equal(again[0].weight, actor[0].weight)       # same labels, same weights
    path = save_distilled(actor, meta, tmp_path / "gen1.npz", {"algorithm": "expert_iteration"})
    saved = json.loads(path.with_suffix(".json").read_text())
    assert saved["observation"] == "v1" and saved["observation_size"] == V1_OBS_DIM
    assert saved["constraint"] == "useful-shifts"
    assert PPOAgent(str(path)).seat_view                       # ppo: plays it from a view


def test_labels_of_one_observation_and_a_net_of_another_are_refused(v1):
    _, wide, lab, lab0 = v1
    with pytest.raises(ValueError, match=f"observations of {V1_OBS_DIM} floats, init .* reads "
                                         f"{OBS_DIM}"):
        distill(lab, NET, CFG)
    with pytest.raises(ValueError, match=f"observations of {OBS_DIM} floats, init .* reads "
                                         f"{V1_OBS_DIM}"):
        distill(lab0, wide, CFG)


TINY = ["--generations", "1", "--formats", "2teams:4", "--search", "search:worlds=2,horizon=5",
        "--block", "2", "--epochs", "1", "--batch", "256", "--judge-deals", "4", "--seed", "1"]


def test_a_tiny_v1_generation_end_to_end(tmp_path, one_torch_thread, capsys):
    out = tmp_path / "ei"
    assert main(["--out", str(out), "--observation", "v1", "--ceiling-deals", "2"] + TINY) == 0
    g0 = json.loads((out / "gen0" / "model.json").read_text())
    assert g0["observation"] == "v1" and g0["provenance"]["widened_from"].endswith(NET)
    info = json.loads((out / "gen1" / "labels" / "2teams" / "labels.json").read_text())
    assert info["observation"] == "nertz_v1" and info["obs_dim"] == V1_OBS_DIM
    m = json.loads((out / "gen1" / "model.json").read_text())
    assert m["observation"] == "v1" and m["provenance"]["observation"] == "nertz_v1"
    assert m["provenance"]["init"].endswith("gen0/model.npz")
    for f in ("distill.json", "judge.json", "ceiling.json"):
        assert (out / "gen1" / f).is_file(), f
    judge = json.loads((out / "gen1" / "judge.json").read_text())
    assert judge["b"].endswith("gen0/model.npz")
    rec = json.loads((out / "expert_iteration.json").read_text())
    assert rec["observation"] == "v1"
    stamp = (out / "gen0" / "model.npz").stat().st_mtime_ns
    assert main(["--out", str(out), "--resume", "--observation", "v1", "--ceiling-deals", "2"]
                + TINY) == 0                                     # nothing redone
    assert (out / "gen0" / "model.npz").stat().st_mtime_ns == stamp
    capsys.readouterr()
    assert main(["--out", str(out), "--resume"] + TINY) == 2
    assert "--observation was 'v1' in this run, now None" in capsys.readouterr().err


def test_mismatched_options_refused_before_any_work(v1, tmp_path, capsys):
    _, wide, _, _ = v1
    out = tmp_path / "never"
    assert main(["--out", str(out), "--init", wide, "--observation", "v0"] + TINY) == 2
    err = capsys.readouterr().err
    assert "--observation v0: --init" in err and "reads nertz_v1" in err
    assert len(err.strip().splitlines()) == 1
    old = tmp_path / "old" / "gen1" / "labels" / "2teams"     # a v0 run's labels
    old.mkdir(parents=True)
    (old / "labels.json").write_text(json.dumps({"observation": "nertz_v0"}))
    assert main(["--out", str(out), "--observation", "v1", "--labels-from",
                 str(tmp_path / "old")] + TINY) == 2
    assert "holds 'nertz_v0' labels; this run's net reads 'nertz_v1'" in capsys.readouterr().err
    assert not out.exists()


def test_the_ceiling_of_a_v1_net_plays_it_from_its_v1_rows(v1, tmp_path, one_torch_thread):
    from agents.judging.head_to_head import head_to_head
    from agents.learned.weights import load_weights, save_weights
    from train.expert_iteration import ceiling
    _, wide, _, _ = v1
    meta, arrays = load_weights(wide)                 # a v1 net whose memory weights count
    w = arrays["hidden0_weight"].copy()
    w[:, OBS_DIM:] = np.random.default_rng(0).normal(0, 3.0, (w.shape[0], w.shape[1] - OBS_DIM))
    net = str(save_weights(tmp_path / "mem.npz", meta, dict(arrays, hidden0_weight=w))[0])
    assert head_to_head(f"ppo:{net}", f"ppo:{wide}", 3, 5)["diff"] != 0    # they count
    never = ceiling(net, net, "search:worlds=2,horizon=5", float("inf"), 3, 5)
    assert never["diff"] == 0.0 and never["ci_low"] == never["ci_high"] == 0.0   # the net itself


def test_a_generation_refuses_labels_of_another_observation(tmp_path, one_torch_thread, capsys):
    import shutil
    v0run, out = tmp_path / "v0run", tmp_path / "mixed"
    args = TINY
    assert main(["--out", str(v0run)] + args) == 0                # a v0 generation
    shutil.copytree(v0run, out)                      # its v0 labels, in a run of a v1 net
    for f in ("distill.json", "judge.json", "model.npz", "model.json"):
        (out / "gen1" / f).unlink()
    rec = json.loads((out / "expert_iteration.json").read_text())
    (out / "expert_iteration.json").write_text(json.dumps(dict(rec, observation="v1")))
    capsys.readouterr()
    assert main(["--out", str(out), "--resume", "--observation", "v1"] + args) == 2
    err = capsys.readouterr().err
    assert "gen1: labels of 'nertz_v0'" in err and "reads 'nertz_v1'" in err
    assert not (out / "gen1" / "model.npz").exists()
