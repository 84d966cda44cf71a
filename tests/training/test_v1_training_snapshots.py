"""Snapshots on v1 (issue 42, "Left" item 5): a v1 learner's snapshots are v1 models that join
the league and play every other seat from their seat view (one act_view per snapshot over the
SeatView of its rows, as the envs' opponents are played): their rows are exactly what the env
would give a learner at that seat, and their moves the net's on those rows."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("torch")

from agents.learned.ppo import PPOAgent  # noqa: E402
from agents.learned.v1 import view_rows  # noqa: E402
from agents.learned.weights import load_weights  # noqa: E402
from agents.training.lean_policy import networks, save_actor  # noqa: E402
from agents.training.lean_ppo import lean_config, train  # noqa: E402
from agents.training.league import league_of, make_env  # noqa: E402
from nertz_env.actions import N_ACTIONS  # noqa: E402
from nertz_env.core.observe import OBS_DIM  # noqa: E402
from nertz_env.core.observe_memory import V1_OBS_DIM, observe_v1_rows  # noqa: E402


def _cfg(tmp_path, **kw):
    return lean_config(**{"out": str(tmp_path / "run"), "observation": "v1", "num_envs": 6,
                          "max_ticks": 150, "net_arch": [32, 32], "n_steps": 16,
                          "batch_size": 32, "n_epochs": 1, "timesteps": 96,
                          "torch_threads": 1, "opponents": ["greedy"], **kw})


class Spy:
    """A seat-view agent around a snapshot's agent: checks each view's rows against what the
    env gives a learner at those seats, and the moves against the net's on those rows."""
    seat_view = True

    def __init__(self, agent, league):
        self.agent, self.league, self.rows = agent, league, 0

    def act_view(self, view):
        lg = self.league
        eng = lg.batch.engine
        t, s = np.asarray(view.rows), np.asarray(view.seats)
        assert not (s == lg.learner_seat).any()
        v0 = np.stack([eng.observe(int(b))[int(a), 0].copy() for a, b in zip(t, s)])
        truth = observe_v1_rows(eng.state, eng.config, lg.batch.memory.memory, t, s, v0=v0)
        rows = view_rows(view)
        np.testing.assert_array_equal(rows, truth)
        ids = np.asarray(self.agent.act_view(view))
        np.testing.assert_array_equal(ids, self.agent.policy.act_batch(truth, view.masks))
        self.rows += len(t)
        return ids


@pytest.mark.parametrize("teams", [2, 4])
def test_a_v1_snapshot_plays_from_its_seats_v1_rows(tmp_path, teams):
    cfg = _cfg(tmp_path, teams=teams)
    actor, _ = networks(cfg, V1_OBS_DIM, N_ACTIONS)
    snap = save_actor(actor, cfg, tmp_path / "snapshots" / "step_1.npz", 1)
    assert load_weights(snap)[0]["observation"] == "v1"
    env = make_env(cfg, monitor=False, observation="v1")
    league = league_of(env)
    league.set_entries([f"snapshot:{snap}"])          # every table draws it
    spy = Spy(league._agents[0], league)
    assert isinstance(spy.agent, PPOAgent) and spy.agent.seat_view
    league._agents[0] = spy
    env.reset()
    rng = np.random.default_rng(0)
    for _ in range(40):
        masks = env.venv.action_masks()
        env.step(np.array([rng.choice(np.flatnonzero(m)) for m in masks]))
    assert spy.rows == 40 * cfg.num_envs * (teams - 1)


def test_a_v1_run_with_snapshots_plays_them_and_saves_v1_models(tmp_path, monkeypatch):
    """The whole run: snapshots/step_N.npz are v1 models that join the league and are played
    (PPOAgent.act_view called with the league's rows: hands cut at 20 ticks draw entries
    anew); the final model reads v1."""
    calls = []
    real = PPOAgent.act_view

    def counted(self, view):
        calls.append(len(view.rows))
        return real(self, view)
    monkeypatch.setattr(PPOAgent, "act_view", counted)
    lines = []
    cfg = _cfg(tmp_path, snapshot_every=96, max_snapshots=2, timesteps=288, max_ticks=20)
    meta = load_weights(train(cfg, log=lines.append))[0]
    assert meta["observation"] == "v1" and meta["provenance"]["snapshot_every"] == 96
    snaps = sorted((tmp_path / "run" / "snapshots").glob("step_*.npz"))
    assert [p.stem for p in snaps] == ["step_192", "step_288", "step_96"]
    assert all(load_weights(p)[0]["observation"] == "v1" for p in snaps)
    assert any("joins the league (2 live)" in x for x in lines)
    assert sum(calls) > 0                       # the snapshots played their seats


def test_a_v0_run_keeps_the_memory_a_v1_opponent_entry_reads(tmp_path):
    """A v1 model as a league entry of a v0 run (`ppo:V1.npz`): the league keeps the tables'
    public memory for it, the same memory a v1 env keeps over the same play, and plays it
    from its seat view; the learner's rows stay v0."""
    cfg = _cfg(tmp_path, teams=3)
    actor, _ = networks(cfg, V1_OBS_DIM, N_ACTIONS)
    model = save_actor(actor, cfg, tmp_path / "v1.npz", 1)
    cfg = _cfg(tmp_path, teams=3, observation=None, opponents=[f"ppo:{model}"])
    envs = [make_env(cfg, monitor=False, observation=o) for o in ("v0", "v1")]
    leagues = [league_of(e) for e in envs]
    spies = [Spy(lg._agents[0], lg) for lg in leagues]
    for lg, spy in zip(leagues, spies):
        lg._agents[0] = spy
    obs = [e.reset() for e in envs]
    rng = np.random.default_rng(2)
    for _ in range(40):
        masks = envs[0].venv.action_masks()
        act = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        obs = [e.step(act)[0] for e in envs]
        assert obs[0].shape[1] == OBS_DIM
        np.testing.assert_array_equal(obs[0], obs[1][:, :OBS_DIM])
        np.testing.assert_array_equal(leagues[0].batch.memory.memory,
                                      leagues[1].batch.memory.memory)
    assert spies[0].rows == spies[1].rows == 40 * cfg.num_envs * 2
