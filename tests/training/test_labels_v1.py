"""Search labels of a v1 net (agents/training/labels.py, #42 item 4): a widened or v1 model's
labels hold its v1 rows (the memory block after v0's floats) and name nertz_v1; they are the same
bytes from one and two processes, and a widened net labels exactly the v0 net's positions and
moves with the v0 rows as the prefix. read_labels refuses a folder whose shards disagree."""
from __future__ import annotations

import json

import numpy as np
import pytest

from agents.learned.v1 import widen_model
from agents.training.labels import (OBSERVATION, OBSERVATION_V1, read_labels, read_shard,
                                    write_labels)
from nertz_env.core.observe import OBS_DIM
from nertz_env.core.observe_memory import V1_OBS_DIM

from tiny_labels import NET, TINY
from tiny_labels import folder_bytes as _files


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    base = tmp_path_factory.mktemp("labels_v1")
    wide = widen_model(NET, base / "wide.npz")[0]
    write_labels(base / "v1", wide, workers=1, **TINY)
    write_labels(base / "v0", NET, workers=1, **TINY)
    return base, wide


def test_v1_labels_hold_v1_rows_and_are_the_same_from_one_and_two_processes(runs, tmp_path):
    base, wide = runs
    info, lab = read_labels(base / "v1")
    assert info["observation"] == OBSERVATION_V1 and info["obs_dim"] == V1_OBS_DIM
    assert lab["obs"].shape == (info["rows"], V1_OBS_DIM) and info["rows"] > 100
    with np.load(base / "v1" / "2teams_d0000000-0000002.npz") as z:
        assert str(z["observation"]) == OBSERVATION_V1
    assert (lab["obs"][:, OBS_DIM:] != 0).any()              # the memory block is written
    write_labels(tmp_path / "two", wide, workers=2, **TINY)
    one, two = _files(base / "v1"), _files(tmp_path / "two")
    assert len([n for n in one if n.endswith(".npz")]) == 4 and one == two


def test_a_widened_net_labels_the_v0_nets_positions_and_moves(runs):
    base, _ = runs
    (i1, v1), (i0, v0) = read_labels(base / "v1"), read_labels(base / "v0")
    assert i0["observation"] == OBSERVATION and i0["obs_dim"] == OBS_DIM
    assert "observation" not in np.load(base / "v0" / "4teams_d0000002-0000004.npz").files
    assert sorted(v1) == sorted(v0)
    for k in v0:                      # same positions, moves and search's evaluations
        if k != "obs":
            assert np.array_equal(v1[k], v0[k]), k
    assert np.array_equal(v1["obs"][:, :OBS_DIM], v0["obs"])   # v0's rows are the prefix
    assert [i1["shards"][n]["net_points"] for n in sorted(i1["shards"])] == \
        [i0["shards"][n]["net_points"] for n in sorted(i0["shards"])]


def test_read_labels_refuses_shards_of_another_observation(runs, tmp_path):
    base, _ = runs
    bad = tmp_path / "bad"
    bad.mkdir()
    for name, data in _files(base / "v0").items():         # v0 shards, labels.json says v1
        (bad / name).write_bytes(data)
    info = json.loads((bad / "labels.json").read_text())
    info.update(observation=OBSERVATION_V1, obs_dim=V1_OBS_DIM)
    (bad / "labels.json").write_text(json.dumps(info))
    with pytest.raises(ValueError, match="holds 'nertz_v0' rows .* says 'nertz_v1'"):
        read_labels(bad)
    info.update(obs_dim=OBS_DIM)                            # v1 by name, v0's width
    (bad / "labels.json").write_text(json.dumps(info))
    with pytest.raises(ValueError, match="observation/obs_dim must be"):
        read_labels(bad)
    shard = read_shard(base / "v1" / "4teams_d0000000-0000002.npz", "x")
    assert shard["obs"].shape[1] == V1_OBS_DIM
