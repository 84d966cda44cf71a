"""partner='self' on v1 (issue 42, "Left" item 5): the learner's teammate plays the current
actor from its own seat's v1 rows, which are exactly what the env would give a learner at that
seat (its v0 observation, then its memory block from the tables' public memory), never v0
rows and never the learner's."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")

from agents.training.lean_ppo import (collect_rollout, lean_config, make_learner,  # noqa: E402
                                      rollout_storage, train)
from agents.learned.weights import load_weights  # noqa: E402
from nertz_env.core.observe import OBS_DIM  # noqa: E402
from nertz_env.core.observe_memory import V1_OBS_DIM, observe_v1_rows  # noqa: E402

PAIRS = [{"num_teams": 2, "team_sizes": [2, 2], "seat": 1},
         {"num_teams": 3, "team_sizes": [2, 2, 2], "seat": 2}]


def _cfg(tmp_path, **kw):
    return lean_config(**{"out": str(tmp_path / "run"), "observation": "v1", "formats": PAIRS,
                          "partner": "self", "num_envs": 8, "max_ticks": 150,
                          "net_arch": [32, 32], "n_steps": 16, "batch_size": 64,
                          "n_epochs": 1, "timesteps": 128, "torch_threads": 1, **kw})


def seat_truth(league, rows_t, rows_s) -> np.ndarray:
    """What the env gives a learner at these seats: its v0 observation (Engine.observe of
    that seat) and the v1 block written from the tables' memory by observe_v1_rows (the
    seat-view path, not the kernel the league's rows come from)."""
    eng = league.batch.engine
    v0 = np.stack([eng.observe(int(s))[int(t), 0].copy() for t, s in zip(rows_t, rows_s)])
    return observe_v1_rows(eng.state, eng.config, league.batch.memory.memory, rows_t, rows_s,
                           v0=v0)


def test_the_partner_reads_its_own_seats_v1_rows(tmp_path):
    learner = make_learner(_cfg(tmp_path), True, None, lambda _: None)
    assert len(learner.partners) == 2 and learner.obs_size == V1_OBS_DIM
    checked = []
    for league, partner in learner.partners:
        gather = partner.gather

        def spy(lg, gather=gather):
            obs, legal = gather(lg)
            E = lg.num_envs
            seats = np.array(lg.partners * E).reshape(E, -1)      # table-major
            rows_t = np.repeat(np.arange(E), seats.shape[1])
            rows_s = seats.reshape(-1)
            assert obs.shape == (len(rows_t), V1_OBS_DIM)
            np.testing.assert_array_equal(obs, seat_truth(lg, rows_t, rows_s))
            mine = seat_truth(lg, np.arange(E), np.full(E, lg.learner_seat))
            np.testing.assert_array_equal(lg.batch.observe(), mine)   # the learner's: the same
            checked.append((obs[:, OBS_DIM:].any(), np.array_equal(obs, mine)))
            return obs, legal
        partner.gather = spy
    buf = rollout_storage(_cfg(tmp_path), learner)
    for _ in range(3):
        collect_rollout(learner, buf, _cfg(tmp_path))
    assert len(checked) == 3 * 16 * 2
    assert any(block for block, _ in checked)           # memory blocks were in play
    assert not any(same for _, same in checked)         # never the learner's rows


def test_a_v1_run_with_partner_self_trains_and_is_a_v1_model(tmp_path):
    """The whole run: the partner's rows reach act_batch as gathered (SelfPartner refuses
    other rows), the saved model reads v1 and the same seed gives the same weights."""
    got = [load_weights(train(_cfg(tmp_path / n), log=lambda _: None)) for n in "ab"]
    (meta, a), (_, b) = got
    assert meta["observation"] == "v1" and meta["provenance"]["partner"] == "self"
    for k in a:
        np.testing.assert_array_equal(a[k], b[k], err_msg=k)


def test_the_warm_start_on_v1_with_partner_self(tmp_path):
    """A fresh v1 net's imitation warm start: the teacher's positions are v1 rows, the
    partner played by the actor from its seat's v1 rows (SelfPartner without an answer)."""
    lines = []
    meta = load_weights(train(_cfg(tmp_path, bc_rows=64), log=lines.append))[0]
    assert meta["observation"] == "v1" and (tmp_path / "run" / "bc.json").is_file()
    assert any("held-out accuracy" in x for x in lines)
