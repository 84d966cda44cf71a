"""The studies' learned arms (docs/experiments/withholding_learned/, docs/experiments/roles/):
the free agent and each constrained one were trained with every setting equal but the
constraint (their run configs and their model files' provenance), each plays under the
constraint its file names, and a constrained arm never makes a move its constraint forbids
over thousands of positions."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from agents.constraints import check_constraint, constrain
from agents.registry import make_agent

EXPERIMENTS = Path(__file__).resolve().parents[2] / "docs" / "experiments"
ARMS = {"free": "useful-shifts", "never-withhold": "useful-shifts+never-withhold",
        "keep-stream": "useful-shifts+keep-stream", "keep-river": "useful-shifts+keep-river",
        "split-roles": "useful-shifts+split-roles", "own-piles": "useful-shifts+own-piles"}
FOLDERS = {"split-roles": EXPERIMENTS / "roles", "own-piles": EXPERIMENTS / "roles"}
# the rest: withholding_learned/


def _path(name):
    return FOLDERS.get(name, EXPERIMENTS / "withholding_learned") / name


def _read(name):
    meta = json.loads(_path(name).with_suffix(".json").read_text())
    config = json.loads(Path(f"{_path(name)}.config.json").read_text())["config"]
    return meta, config


def test_the_arms_share_every_setting_but_the_constraint():
    metas = {n: _read(n) for n in ARMS}
    for name, (meta, config) in metas.items():
        assert meta["constraint"] == ARMS[name] == config["constraint"]
    free_meta, free_config = metas["free"]
    skip = {"constraint", "out"}
    for name, (meta, config) in metas.items():
        assert {k: v for k, v in config.items() if k not in skip} == \
            {k: v for k, v in free_config.items() if k not in skip}, name
        assert meta["provenance"] == free_meta["provenance"], name
        assert meta["architecture"] == free_meta["architecture"]


@pytest.mark.parametrize("name", [n for n in ARMS if n != "free"])
def test_a_constrained_arm_never_makes_a_forbidden_move(name):
    from nertz_env import NertzVecEnv
    agent = make_agent(f"ppo:{_path(name)}.npz")
    assert agent.constraint == check_constraint(ARMS[name])
    played = forced = 0
    tables = ([dict(num_teams=2, team_sizes=(2, 2)), dict(num_teams=3, team_sizes=(2, 2, 2))]
              if name in ("split-roles", "own-piles") else [dict(num_teams=2), dict(num_teams=4)])
    for i, rules in enumerate(tables):
        env = NertzVecEnv(num_envs=64, max_ticks=400, seed=i, **rules,
                          opponents="heuristic:style=river-builder")
        obs = env.reset()
        for _ in range(60):
            masks = env.action_masks()
            acts = agent.act_batch(obs, masks)
            allowed = constrain(obs, masks, ARMS[name])
            assert allowed[np.arange(len(acts)), acts].all()
            forced += int((allowed != masks.astype(bool)).any(axis=1).sum())
            played += len(acts)
            obs, *_ = env.step(acts)
    assert played >= 5000 and forced > 0


def test_the_run_to_run_control_differs_from_the_free_arm_only_in_its_seed():
    (meta, config), (free_meta, free_config) = _read("free-seed22"), _read("free")
    assert config["seed"] == 22 and free_config["seed"] == 21
    skip = {"seed", "out"}
    assert {k: v for k, v in config.items() if k not in skip} == \
        {k: v for k, v in free_config.items() if k not in skip}
    assert meta["constraint"] == free_meta["constraint"] == "useful-shifts"
    assert meta["architecture"] == free_meta["architecture"]
