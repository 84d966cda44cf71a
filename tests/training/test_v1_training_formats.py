"""Formats on v1 (issue 42, "Left" item 5): a v1 run builds every format's env with
observation="v1" (2 to 8 teams, two-player teams with the learner in either seat, River 5,
mixed and uneven speeds, stacking and the flow rules off: the rulebook preset), the learner's
rows at each the v1 rows of its seat, and trains one v1 net over them all."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")

from agents.learned.weights import load_weights  # noqa: E402
from agents.training.formats import PRESETS, make_formats_env  # noqa: E402
from agents.training.lean_policy import networks, save_actor  # noqa: E402
from agents.training.lean_ppo import lean_config, train  # noqa: E402
from agents.training.league import league_of  # noqa: E402
from nertz_env.actions import N_ACTIONS  # noqa: E402
from nertz_env.core.observe import OBS_DIM  # noqa: E402
from nertz_env.core.observe_memory import V1_OBS_DIM, observe_v1_rows  # noqa: E402

N = len(PRESETS["rulebook"])


def _cfg(tmp_path, **kw):
    return lean_config(**{"out": str(tmp_path / "run"), "formats": "rulebook", "num_envs": N,
                          "max_ticks": 60, "net_arch": [32, 32], "n_steps": 8, "batch_size": 8 * N,
                          "n_epochs": 1, "timesteps": 8 * N, "torch_threads": 1, **kw})


def test_every_formats_env_gives_the_learners_v1_rows(tmp_path):
    env = make_formats_env(_cfg(tmp_path), "v1")        # the config says nothing: v1 as asked
    obs = env.reset()
    assert obs.shape == (N, V1_OBS_DIM) and len(env.envs) == N
    rng = np.random.default_rng(1)
    memory_seen = np.zeros(N, bool)
    for _ in range(30):
        masks = env.action_masks()
        obs, _, _, _ = env.step(np.array([rng.choice(np.flatnonzero(m)) for m in masks]))
        for i, sub in enumerate(env.envs):
            lg = league_of(sub)
            assert lg.batch.observation == "v1"
            eng, seat = lg.batch.engine, lg.learner_seat
            t = np.arange(lg.num_envs)
            truth = observe_v1_rows(eng.state, eng.config, lg.batch.memory.memory, t,
                                    np.full_like(t, seat), v0=eng.observe(seat)[:, 0].copy())
            np.testing.assert_array_equal(obs[env.bounds[i]:env.bounds[i + 1]], truth,
                                          err_msg=env.names[i])
            memory_seen[i] |= bool(truth[:, OBS_DIM:].any())
    assert memory_seen.all()


def test_a_v1_run_over_the_rulebook_formats_with_partner_self(tmp_path):
    """One rollout over every rulebook format from a v1 init (observation unset: init's), the
    teammates at the two-player tables played by the learner from their seats' v1 rows: a v1
    model that lists the formats."""
    cfg = _cfg(tmp_path, partner="self")
    actor, critic = networks(cfg, V1_OBS_DIM, N_ACTIONS)
    init = save_actor(actor, cfg, tmp_path / "init" / "v1.npz", 0, critic)
    lines = []
    meta = load_weights(train(_cfg(tmp_path, partner="self", init=str(init)),
                              log=lines.append))[0]
    assert any("init: the actor and the critic" in x for x in lines)
    assert meta["observation"] == "v1" and meta["observation_size"] == V1_OBS_DIM
    assert len(meta["provenance"]["formats"]) == N and meta["table"] is None
