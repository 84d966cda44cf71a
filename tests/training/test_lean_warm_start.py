"""The lean PPO's imitation warm start (#41 item 1): `nertz train` with no --learner trains the
lean PPO after cloning the teacher (agents/training/lean_ppo.py lean_warm_start, through
imitation.py's warm_start and LeanPolicy), bc.json written; the same seed gives the same
weights; the cloned actor plays the teacher's moves on positions of deals it never saw."""
import copy
import json

import numpy as np
import pytest

pytest.importorskip("torch")

from agents.cli import main as nertz_main  # noqa: E402
from agents.learned.weights import load_weights  # noqa: E402
from agents.training.imitation import (  # noqa: E402
    LeanPolicy,
    Teacher,
    collect_teacher_data,
    imitation_accuracy,
)
from agents.training.league import make_env  # noqa: E402
from agents.training.lean_ppo import lean_config, lean_warm_start, make_learner, train  # noqa: E402

SMALL = ["--num-envs", "8", "--n-steps", "16", "--batch-size", "64", "--max-ticks", "150",
         "--net-arch", "32,32", "--no-progress", "--torch-threads", "1"]
LEAN_TINY = {"num_envs": 8, "n_steps": 16, "batch_size": 64, "max_ticks": 150,
             "net_arch": [32, 32], "torch_threads": 1, "timesteps": 128}


def quiet(*_):
    pass


def test_nertz_train_without_a_learner_is_the_lean_ppo_with_a_warm_start(tmp_path, capsys):
    out = tmp_path / "run"
    assert nertz_main(["train", "--bc-rows", "2000", "--timesteps", "2048", *SMALL,
                       "--out", str(out)]) == 0, capsys.readouterr().err
    text = capsys.readouterr().out
    assert "imitation warm start: collecting 2,000 positions" in text
    assert json.loads((out / "config.json").read_text())["config"]["learner"] == "lean"
    assert (out / "final.npz").is_file() and not (out / "final.zip").exists()
    bc = json.loads((out / "bc.json").read_text())
    assert bc["rows"] == 2000 and bc["heldout_rows"] > 0
    # far above chance (an untrained network agrees on well under half of the positions)
    assert bc["heldout_accuracy"] >= 0.7, bc


def _actor(folder) -> dict:
    return dict(load_weights(folder / "final.npz")[1])


def test_the_lean_warm_start_is_deterministic(tmp_path):
    runs = {}
    for name, seed in (("a", 3), ("b", 3), ("c", 4)):
        train(lean_config(out=str(tmp_path / name), seed=seed, bc_rows=512, **LEAN_TINY),
              log=quiet)
        runs[name] = _actor(tmp_path / name)
        assert (tmp_path / name / "bc.json").is_file()
    a, b, c = runs["a"], runs["b"], runs["c"]
    assert a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)
    assert any(not np.array_equal(a[k], c[k]) for k in a)
    # the warm start changes what PPO starts from: the same run without it differs
    train(lean_config(out=str(tmp_path / "cold"), seed=3, bc_rows=0, **LEAN_TINY), log=quiet)
    cold = _actor(tmp_path / "cold")
    assert any(not np.array_equal(a[k], cold[k]) for k in a)
    assert not (tmp_path / "cold" / "bc.json").exists()


def test_the_cloned_actor_plays_the_teachers_moves_on_unseen_deals(tmp_path):
    cfg = lean_config(out=str(tmp_path / "r"), num_envs=32, max_ticks=300, net_arch=[32, 32],
                      bc_rows=20_000, bc_epochs=5, bc_batch_size=256, bc_learning_rate=3e-3,
                      torch_threads=1)
    learner = make_learner(cfg, True, None, quiet)
    policy = LeanPolicy(learner.actor, learner.critic)
    other = copy.copy(cfg)
    other.seed = 777                           # deals neither the run nor its warm start saw
    env = make_env(other, monitor=False)
    held = collect_teacher_data(env, Teacher(env, cfg.teacher), 4000)
    before = imitation_accuracy(policy, held)
    info = lean_warm_start(learner, cfg, quiet)
    acc = imitation_accuracy(policy, held)
    print(f"lean held-out imitation accuracy {acc:.4f} on {len(held['actions'])} positions "
          f"(untrained {before:.4f}; bc.json {info['heldout_accuracy']:.4f})")
    assert acc >= 0.95 > before
    assert json.loads((tmp_path / "r" / "bc.json").read_text())["rows"] == 20_000
