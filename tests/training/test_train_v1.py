"""The lean learner's pieces for a network that reads the v1 observation (issue 42 items 1
and 4): a v0 model warm-starts a v1 network widened (zero memory weights: the same moves), and
a v1 network is saved as a v1 model, a v0 one as before. Formats, partner='self' and
snapshots on v1: tests/training/test_v1_training_*.py."""
from __future__ import annotations

import json

import numpy as np
import pytest

pytest.importorskip("torch")

from agents.arena.tournament import run_tournament  # noqa: E402
from agents.learned.v1 import widen_model  # noqa: E402
from agents.learned.weights import load_weights  # noqa: E402
from agents.registry import MODELS_DIR  # noqa: E402
from agents.training.lean_policy import networks, save_actor, start_from  # noqa: E402
from agents.training.lean_ppo import lean_config, train  # noqa: E402
from nertz_env.actions import N_ACTIONS  # noqa: E402
from nertz_env.core.observe import OBS_DIM  # noqa: E402
from nertz_env.core.observe_memory import V1_OBS_DIM  # noqa: E402

V0 = MODELS_DIR / "learned.npz"


def _cfg(tmp_path):
    meta = load_weights(V0)[0]
    return lean_config(learner="lean", out=str(tmp_path / "run"),
                       net_arch=meta["architecture"]["hidden"],
                       constraint=meta.get("constraint"), torch_threads=1)


def test_a_v0_model_warm_starts_a_v1_network_widened(tmp_path):
    cfg = _cfg(tmp_path)
    actor, critic = networks(cfg, V1_OBS_DIM, N_ACTIONS)
    line = start_from(actor, critic, V0)
    assert "widened to v1 (zero memory weights)" in line
    path = save_actor(actor, cfg, tmp_path / "v1", 0, critic)
    meta, arrays = load_weights(path)
    assert meta["observation"] == "v1" and meta["observation_size"] == V1_OBS_DIM
    widen_model(V0, tmp_path / "wide")
    _, want = load_weights(tmp_path / "wide.npz")
    for k in want:                                   # the widened model, array for array
        np.testing.assert_array_equal(arrays[k], want[k], err_msg=k)
    a = run_tournament([f"ppo:{path}", "learned"], teams=2, deals=3, seed=4, progress=False)
    b = run_tournament([f"ppo:{V0}", "learned"], teams=2, deals=3, seed=4, progress=False)
    np.testing.assert_array_equal(a.records.score, b.records.score)
    cmeta, _ = load_weights(tmp_path / "critics" / "v1.npz")
    assert cmeta["observation_size"] == V1_OBS_DIM


def test_a_v0_network_is_saved_as_before(tmp_path):
    cfg = _cfg(tmp_path)
    actor, critic = networks(cfg, OBS_DIM, N_ACTIONS)
    assert "widened" not in start_from(actor, critic, V0)
    path = save_actor(actor, cfg, tmp_path / "v0", 0)
    meta = json.loads(path.with_suffix(".json").read_text())
    assert "observation" not in meta and meta["observation_size"] == OBS_DIM


def _tiny(tmp_path, name, init, **kw):
    meta = load_weights(V0)[0]
    return lean_config(**{"learner": "lean", "out": str(tmp_path / name), "init": str(init),
                          "net_arch": meta["architecture"]["hidden"],
                          "constraint": "useful-shifts", "num_envs": 8, "max_ticks": 150,
                          "n_steps": 16, "batch_size": 64, "n_epochs": 2, "timesteps": 256,
                          "torch_threads": 1, **kw})


def test_a_lean_run_from_a_v1_model_trains_on_v1_observations(tmp_path):
    """init=a v1 model (learned.npz widened): the run's env gives v1 observations, the net
    learns memory weights under learned's constraint (read off the v0 prefix), and the same
    seed gives the same weights; from the v0 model the same run stays v0."""
    widen_model(V0, tmp_path / "wide")
    got = []
    for name in ("a", "b"):
        lines = []
        got.append(load_weights(train(_tiny(tmp_path, name, tmp_path / "wide.npz"),
                                      log=lines.append)))
    (m, a), (_, b) = got
    assert m["observation"] == "v1" and m["observation_size"] == V1_OBS_DIM
    assert np.abs(a["hidden0_weight"][:, OBS_DIM:]).max() > 0      # the memory is learned
    for k in a:
        np.testing.assert_array_equal(a[k], b[k], err_msg=k)
    m0, _ = load_weights(train(_tiny(tmp_path, "c", V0), log=lambda _: None))
    assert "observation" not in m0 and m0["observation_size"] == OBS_DIM


def test_observation_v0_from_a_v1_model_is_refused_before_any_work(tmp_path):
    """observation='v0' contradicts a v1 init (a v1 net cannot be narrowed): one line naming
    both, before any work, nothing written; left out, the v1 init means v1 (the test above)."""
    from agents.training.lean_ppo import train_run
    widen_model(V0, tmp_path / "wide")
    cfg = _tiny(tmp_path, "run", tmp_path / "wide.npz", observation="v0")
    lines = []
    with pytest.raises(ValueError) as err:
        train_run(cfg, log=lines.append)
    text = str(err.value)
    assert "\n" not in text and "observation='v0'" in text and "wide.npz" in text, text
    assert "v1" in text and not lines and not (tmp_path / "run").exists()
