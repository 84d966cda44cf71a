"""TrainConfig.observation (issue 42, "Left" item 5): 'v0' or 'v1', unset meaning init's (else
v0); config.json keeps its bytes for every run that does not train on v1 (the field is written
only as 'v1', after the fields config.json always had); `--observation` on `nertz train` and
in recipes; a fresh network trains on v1 and is saved as a v1 model that `ppo:` plays."""
from __future__ import annotations

import json

import numpy as np
import pytest

from agents.training.config import FLAT, TrainConfig
from agents.training.recipe import recipe_from_dict
from nertz_env.files import write_json

TINY = {"learner": "lean", "num_envs": 8, "max_ticks": 150, "net_arch": [32, 32], "bc_rows": 0,
        "n_steps": 16, "batch_size": 64, "n_epochs": 1, "timesteps": 128,
        "checkpoint_every": 0, "torch_threads": 1, "progress": False, "tensorboard": False}


def test_config_json_of_a_v0_run_keeps_its_bytes_and_v1_is_written_last(tmp_path):
    base = dict(out="runs/x", torch_threads=2)
    plain, v0 = TrainConfig(**base), TrainConfig(**base, observation="v0")
    write_json(tmp_path / "a.json", {"config": plain.to_flat()})
    write_json(tmp_path / "b.json", {"config": v0.to_flat()})
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()
    assert list(plain.to_flat()) == list(FLAT) and plain.ppo.observation is None
    v1 = TrainConfig(**base, observation="v1").to_flat()
    assert list(v1) == [*FLAT, "observation"] and v1["observation"] == "v1"
    assert TrainConfig.from_flat(**v1).ppo.observation == "v1"       # and back


@pytest.mark.parametrize("kw, words", [
    ({"observation": "v2"}, "observation='v2' must be one of v0, v1"),
    ({"observation": 1}, "observation=1 must be one of v0, v1"),
    ({"observation": "v1", "learner": "sb3"}, "observation: the lean PPO only"),
])
def test_a_bad_observation_is_one_line(kw, words):
    with pytest.raises(ValueError) as err:
        TrainConfig(out="x", **kw)
    assert words in str(err.value) and "\n" not in str(err.value), err.value


def test_recipes_and_the_command_line_take_observation(tmp_path):
    from agents.cli import build_parser
    from agents.cli.train import config_from_args
    assert recipe_from_dict({"observation": "v1"}) == {"observation": "v1"}
    with pytest.raises(ValueError, match="observation must be a string"):
        recipe_from_dict({"observation": 1})
    parser = build_parser()
    args = parser.parse_args(["train", "--out", str(tmp_path / "r"), "--observation", "v1"])
    assert config_from_args(args).ppo.observation == "v1"
    with pytest.raises(SystemExit):
        parser.parse_args(["train", "--observation", "v7"])


def test_a_fresh_v1_network_trains_and_plays_as_a_seat_view_agent(tmp_path, capsys):
    """`nertz train --observation v1` without init: a fresh net of 1019 inputs, trained on
    the env's v1 rows, saved as a v1 model ("observation": "v1") that ppo: plays from its
    seat view; config.json says observation v1, its first line names it."""
    pytest.importorskip("torch")
    from agents.arena.tournament import run_tournament
    from agents.cli import main
    from agents.learned.weights import load_weights
    from nertz_env.core.observe_memory import V1_OBS_DIM
    out = tmp_path / "run"
    argv = ["train", "--out", str(out), "--observation", "v1", "--no-progress"]
    for k, v in TINY.items():
        if k not in ("progress", "tensorboard"):
            argv += [f"--{k.replace('_', '-')}",
                     ",".join(map(str, v)) if isinstance(v, list) else str(v)]
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "observation=v1" in printed.splitlines()[0]
    meta, arrays = load_weights(out / "final.npz")
    assert meta["observation"] == "v1" and meta["observation_size"] == V1_OBS_DIM
    assert arrays["hidden0_weight"].shape == (32, V1_OBS_DIM)
    assert json.loads((out / "config.json").read_text())["config"]["observation"] == "v1"
    res = run_tournament([f"ppo:{out / 'final.npz'}", "greedy"], teams=2, deals=2, seed=3,
                         progress=False)
    assert np.isfinite(res.records.score).all()


def test_an_explicit_observation_contradicting_init_is_refused_on_the_command_line(tmp_path,
                                                                                  capsys):
    """observation v0 with a v1 init: one error line (exit 2), nothing written, nothing
    printed on stdout."""
    pytest.importorskip("torch")
    from agents.cli import main
    from agents.training.lean_ppo import lean_config, train
    v1 = train(lean_config(out=str(tmp_path / "v1"), observation="v1",
                           **{k: v for k, v in TINY.items() if k != "learner"}),
               log=lambda _: None)
    out = tmp_path / "run"
    rc = main(["train", "--out", str(out), "--init", str(v1), "--observation", "v0",
               "--net-arch", "32,32", "--num-envs", "8", "--n-steps", "16", "--batch-size",
               "64", "--timesteps", "128", "--no-progress"])
    cap = capsys.readouterr()
    assert rc == 2 and not out.exists() and cap.out == ""
    err = cap.err.strip()
    assert "\n" not in err and "observation='v0' contradicts init=" in err, err


def test_observation_v1_from_a_v0_init_widens_it(tmp_path):
    """--observation v1 with a v0 model as init: the net starts widened (the v0 weights, zero
    memory columns) and learns on v1 rows; the model it saves reads v1."""
    pytest.importorskip("torch")
    from agents.learned.weights import load_weights
    from agents.training.lean_ppo import lean_config, train
    from nertz_env.core.observe import OBS_DIM
    tiny = {k: v for k, v in TINY.items() if k != "learner"}
    v0 = train(lean_config(out=str(tmp_path / "v0"), **tiny), log=lambda _: None)
    assert "observation" not in load_weights(v0)[0]
    lines = []
    path = train(lean_config(out=str(tmp_path / "v1"), init=str(v0), observation="v1", **tiny),
                 log=lines.append)
    assert any("widened to v1 (zero memory weights)" in x for x in lines), lines
    meta, arrays = load_weights(path)
    assert meta["observation"] == "v1" and arrays["hidden0_weight"].shape[1] > OBS_DIM
    assert np.abs(arrays["hidden0_weight"][:, OBS_DIM:]).max() > 0      # the memory is learned
