"""The lean PPO (agents/training/lean_ppo.py): a tiny run completes and trains, never takes an
illegal move, is the same for the same seed, and saves a model make_agent plays. Speeds are
measured in benchmarks/train_throughput.py, never asserted here."""
import re

import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("stable_baselines3")

from agents.learned.weights import load_weights  # noqa: E402
from agents.registry import make_agent  # noqa: E402
from agents.training.lean_ppo import _mlp, lean_config, train  # noqa: E402

TINY = {"num_envs": 8, "max_ticks": 150, "net_arch": [32, 32], "n_steps": 16,
        "batch_size": 64, "n_epochs": 2, "timesteps": 256, "torch_threads": 1}


def tiny(tmp_path, name="run", **kw):
    return lean_config(**{"out": str(tmp_path / name), **TINY, **kw})


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """One tiny run: its saved npz, its log lines, and every rollout's (actions, masks)."""
    tmp = tmp_path_factory.mktemp("lean")
    old = torch.get_num_threads()
    lines, rollouts = [], []
    npz = train(tiny(tmp), log=lines.append,
                on_rollout=lambda step, a, m, r: rollouts.append((step, a, m)))
    torch.set_num_threads(old)
    return npz, lines, rollouts


def test_a_tiny_run_completes_and_saves_the_safe_format(run):
    npz, lines, rollouts = run
    assert npz.is_file() and npz.with_suffix(".json").is_file()
    assert [s for s, _, _ in rollouts] == [128, 256]     # 2 rollouts of 16 steps x 8 tables
    assert lines and lines[-1].startswith("step 256:")
    meta, _ = load_weights(npz)
    assert meta["architecture"] == {"type": "mlp", "hidden": [32, 32], "activation": "tanh",
                                    "action_net": "masked"}
    assert meta["provenance"]["algorithm"] == "lean_ppo"


def test_the_policy_changes(run):
    """The saved actor is not the one the seed initialised (the updates moved it)."""
    npz, _, _ = run
    meta, arrays = load_weights(npz)
    torch.manual_seed(0)                       # train's seed, then the actor is built first
    init = _mlp(torch.nn, [meta["observation_size"], 32, 32], meta["action_size"], 0.01)
    init_w = [m.weight.detach().numpy() for m in init if hasattr(m, "weight")]
    assert init_w[0].shape == arrays["hidden0_weight"].shape
    moved = [float(np.abs(w - arrays[n]).max())
             for w, n in zip(init_w, ("hidden0_weight", "hidden1_weight", "action_weight"))]
    assert min(moved) > 1e-4, moved


def test_each_update_logs_approx_kl_clip_fraction_and_explained_variance(run):
    """The log line carries CleanRL's update statistics, each in its range (a nan fails)."""
    _, lines, _ = run
    m = re.search(r"approx-KL (\S+), clip fraction (\S+), explained variance (\S+);", lines[-1])
    assert m, lines[-1]
    kl, clip, ev = (float(g) for g in m.groups())
    assert kl >= 0 and 0 <= clip <= 1 and ev <= 1, (kl, clip, ev)


def test_explained_variance_is_cleanrls():
    from agents.training.lean_ppo import explained_variance
    ret = torch.tensor([[1.0, 2.0], [3.0, 5.0]])
    assert explained_variance(ret.clone(), ret) == 1.0                 # values = returns
    assert explained_variance(torch.zeros(2, 2), ret) == 0.0          # values say nothing
    assert np.isnan(explained_variance(ret, torch.ones(2, 2)))       # returns do not vary


def test_every_action_taken_was_legal(run):
    _, _, rollouts = run
    for _, actions, masks in rollouts:
        assert masks.any(axis=2).all()
        taken = np.take_along_axis(masks, actions[..., None], axis=2)[..., 0]
        assert taken.all(), f"{(~taken).sum()} illegal actions taken"


def test_same_seed_same_weights(run, tmp_path):
    npz, _, _ = run
    _, a = load_weights(npz)
    _, b = load_weights(train(tiny(tmp_path, "again"), log=lambda s: None))
    _, c = load_weights(train(tiny(tmp_path, "other", seed=1), log=lambda s: None))
    assert all(np.array_equal(a[k], b[k]) for k in a)
    assert not all(np.array_equal(a[k], c[k]) for k in a)


def test_the_saved_model_loads_through_make_agent_and_plays(run):
    from nertz_env.envs.vector import NertzVecEnv
    npz, _, _ = run
    agent = make_agent(f"ppo:{npz}")
    env = NertzVecEnv(num_envs=4, seed=3, max_ticks=150)
    obs = env.reset()
    for _ in range(20):
        masks = env.action_masks()
        act = np.asarray(agent.act_batch(obs, masks))
        assert masks[np.arange(4), act].all()
        obs, _, _, _ = env.step(act)


def test_what_the_lean_ppo_does_not_do_is_refused(tmp_path):
    for field, value in (("resume", "runs/x/checkpoints/step_1.zip"),):
        with pytest.raises(ValueError, match=field):
            train(tiny(tmp_path, **{field: value}), log=lambda s: None)


def test_shift_cost_is_taken_from_the_learners_reward_per_river_shift(tmp_path):
    """Same seed, same first rollout (the actions do not depend on the rewards): the
    rewards differ by exactly shift_cost at every River shift the learner made."""
    from nertz_env.actions import KINDS
    from nertz_env.core.codec import decode as codec_decode
    got = {}
    for cost in (0.0, 0.5):
        rollouts = []
        train(tiny(tmp_path, f"c{cost}", shift_cost=cost, timesteps=128),
              log=lambda s: None, on_rollout=lambda st, a, m, r: rollouts.append((a, r)))
        got[cost] = rollouts[0]
    (a0, r0), (a1, r1) = got[0.0], got[0.5]
    assert np.array_equal(a0, a1)
    shift = np.vectorize(lambda x: KINDS[codec_decode(int(x))[0]] == "shift")(a0)
    assert shift.any()
    np.testing.assert_allclose(r0 - r1, 0.5 * shift, atol=1e-6)


def test_the_learner_trains_and_saves_under_its_constraint(tmp_path):
    """never-withhold: wherever waste>lake is legal the learner's masks hold only it (and
    Call); the free run's masks there hold other moves. The model file names the
    constraint, so ppo: plays under it."""
    from nertz_env.core.codec import CALL, lake_id
    from nertz_env.encoding import SRC_WASTE
    w = lake_id(SRC_WASTE)
    seen = {}
    for name in (None, "never-withhold"):
        masks = []
        npz = train(tiny(tmp_path, f"c{name}", constraint=name, timesteps=512),
                    log=lambda s: None, on_rollout=lambda st, a, m, r: masks.append((a, m)))
        m = np.concatenate([x.reshape(-1, x.shape[-1]) for _, x in masks])
        a = np.concatenate([x.reshape(-1) for x, _ in masks])
        assert m[np.arange(len(a)), a].all()
        rows = m[:, w]
        assert rows.sum() >= 5, "no position had waste>lake legal: the test is vacuous"
        seen[name] = (m[rows].sum(axis=1) - m[rows, CALL]).max()
        assert load_weights(npz)[0].get("constraint") == name
    assert seen["never-withhold"] == 1 and seen[None] > 1
    assert make_agent(f"ppo:{npz}").constraint != 0


def test_partner_self_plays_the_learners_teammate(tmp_path, monkeypatch):
    """partner='self' at two-player teams: every move of the learner's teammate comes from the
    learner's network (the agent the lean PPO hands the league), none from the entry."""
    from agents.training import league
    calls = []

    def spy(self, agent):
        def act_batch(obs, masks):
            calls.append(len(obs))
            return agent.act_batch(obs, masks)
        self.self_agent = type("Spy", (), {"act_batch": staticmethod(act_batch)})()
        assert self.partners == [1]
    monkeypatch.setattr(league.LeagueVecEnv, "set_self_agent", spy)
    fmt = [{"num_teams": 2, "team_sizes": [2, 2], "seat": 0}]
    train(tiny(tmp_path, "self", formats=fmt, partner="self"), log=lambda s: None)
    assert sum(calls) >= 256 // 2           # the partner is ready about every other tick at least
    with pytest.raises(ValueError, match="partner"):
        tiny(tmp_path, partner="me")


def test_snapshots_join_the_league_and_are_played(tmp_path, monkeypatch):
    """snapshot_every: the actor saved as snapshots/step_N.npz joins the league (at most
    max_snapshots, the oldest leaves) and tables draw it: it plays hands."""
    from agents.training import league
    seen, hands = [], {}
    real = league.LeagueVecEnv.add_snapshot

    def spy(self, path, keep):
        seen.append(self)
        for e in self.stats():                        # hands each entry played so far
            hands[e["name"]] = max(hands.get(e["name"], 0), e["hands"])
        real(self, path, keep)
    monkeypatch.setattr(league.LeagueVecEnv, "add_snapshot", spy)
    lines = []
    train(tiny(tmp_path, "snap", snapshot_every=512, max_snapshots=2, timesteps=2560,
               max_ticks=30), log=lines.append)
    snaps = sorted((tmp_path / "snap" / "snapshots").glob("step_*.npz"),
                   key=lambda p: int(p.stem.split("_")[1]))
    assert len(snaps) == 5 and sum("joins the league" in x for x in lines) == 5
    live = [e["name"] for e in seen[-1].stats() if e["name"].startswith("snapshot:")]
    assert live == [f"snapshot:{p.stem}" for p in snaps[-2:]]
    assert make_agent(f"ppo:{snaps[0]}").act_batch(np.zeros((1, 791), np.float32),
                                                  np.ones((1, 322), bool)).shape == (1,)
    assert sum(v for k, v in hands.items() if k.startswith("snapshot:")) > 0, hands


def test_a_run_continues_with_its_critic_and_a_warmup_keeps_the_actor(run, tmp_path):
    """final.npz's critic lies in critics/final.npz; init=final.npz reads both back; with
    critic_warmup covering the run only the critic moves (the saved actor is the init's)."""
    from agents.training.lean_ppo import critic_path
    npz, _, _ = run
    assert critic_path(npz).is_file() and load_weights(critic_path(npz))[0]["action_size"] == 1
    lines = []
    out = train(tiny(tmp_path, "warm", init=str(npz), critic_warmup=256), log=lines.append)
    assert any("the actor and the critic" in x for x in lines)
    a0, a1 = load_weights(npz)[1], load_weights(out)[1]
    assert all(np.array_equal(a0[k], a1[k]) for k in a0)
    c0, c1 = load_weights(critic_path(npz))[1], load_weights(critic_path(out))[1]
    assert not all(np.array_equal(c0[k], c1[k]) for k in c0)
    out2 = train(tiny(tmp_path, "cold", init=str(npz)), log=lines.append)
    assert not all(np.array_equal(a0[k], load_weights(out2)[1][k]) for k in a0)
    with pytest.raises(ValueError, match="sizes|322"):
        make_agent(f"ppo:{critic_path(npz)}")
