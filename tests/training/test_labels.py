"""Search labels for expert iteration (agents/training/labels.py): the labeller plays exactly the
net's moves, and the labels are the same bytes from one process, two processes and Ray."""
from __future__ import annotations

import numpy as np
import pytest

from agents.arena.tournament import run_tournament
from agents.training.labels import (LABELS_FILE, OBSERVATION, read_labels, targets_free_rows,
                                    write_labels)

from tiny_labels import NET, TINY
from tiny_labels import folder_bytes as _files


@pytest.fixture(scope="module")
def one_process(tmp_path_factory):
    out = tmp_path_factory.mktemp("labels") / "one"
    write_labels(out, NET, workers=1, **TINY)
    return out


def test_same_labels_from_one_and_two_processes(one_process, tmp_path):
    write_labels(tmp_path / "two", NET, workers=2, **TINY)
    one, two = _files(one_process), _files(tmp_path / "two")
    shards = [n for n in one if n.endswith(".npz")]
    assert len(shards) == 4                              # 2 formats x 2 blocks of 2 deals
    assert one == two
    write_labels(tmp_path / "other", NET, workers=1, **{**TINY, "seed": 4})
    assert _files(tmp_path / "other")[shards[0]] != one[shards[0]]     # the seed matters


def test_same_labels_on_a_local_ray_instance(one_process, tmp_path):
    ray = pytest.importorskip("ray")
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        write_labels(tmp_path / "ray", NET, executor="ray", **TINY)
    finally:
        ray.shutdown()
    assert _files(tmp_path / "ray") == _files(one_process)


def test_the_labeller_plays_the_nets_moves_and_labels_its_choices(one_process):
    info, lab = read_labels(one_process)
    assert info["observation"] == OBSERVATION and info["rows"] == len(lab["net_move"]) > 100
    # the net's points at every table equal `ppo:NET`'s in a tournament on the same deals
    res = run_tournament([f"ppo:{NET}", "learned"], teams=2, deals=4, seed=3,
                         format="round-robin", progress=False)
    r = res.records
    theirs = r.score[r.agent == 0]
    with np.load(one_process / "2teams_d0000000-0000002.npz") as a, \
            np.load(one_process / "2teams_d0000002-0000004.npz") as b:
        mine = np.concatenate([a["net_points"], b["net_points"]])
    assert mine.tolist() == theirs.astype(int).tolist()
    legal = np.unpackbits(lab["legal"], axis=1, count=322).astype(bool)
    assert (legal.sum(axis=1) >= 2).all()                   # only decisions with a choice
    assert legal[np.arange(len(legal)), lab["net_move"]].all()
    s = lab["searched"]
    assert s.any() and (~s).any()
    assert (lab["candidates"][s, 1] >= 0).all()             # searched: two or more candidates
    assert (lab["search_move"] != lab["net_move"]).any()    # search has opinions
    assert targets_free_rows(lab) == int((~s).sum())


def test_refusals_before_any_work(one_process, tmp_path):
    with pytest.raises(ValueError, match="not empty"):
        write_labels(one_process, NET, **TINY)
    with pytest.raises(ValueError, match="format 'fivet' is unknown"):
        write_labels(tmp_path / "x", NET, **{**TINY, "formats": ["fivet"]})
    with pytest.raises(ValueError, match="safe-format model"):
        write_labels(tmp_path / "x", "nope.npz", **TINY)
    assert not (tmp_path / "x").exists()
    assert (one_process / LABELS_FILE).is_file()
