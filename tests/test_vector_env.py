"""NertzVecEnv (nertz_env/envs/vector.py): SB3's VecEnv API, masks, rewards that sum to each
finished hand's score, determinism, serial == parallel kernels, and a short MaskablePPO run."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("stable_baselines3")

from stable_baselines3.common.vec_env import VecEnv  # noqa: E402

from nertz_env.actions import N_ACTIONS  # noqa: E402
from nertz_env.envs.episode import team_rewards  # noqa: E402
from nertz_env.core.observe import OBS_DIM  # noqa: E402
from nertz_env.envs.vector import NertzVecEnv  # noqa: E402


def random_legal(rng, masks):
    """One uniformly random legal action per env (masks: bool [E, N_ACTIONS])."""
    keys = rng.random(masks.shape)
    keys[~masks] = -1.0
    return keys.argmax(axis=1)


def run(env, n_steps, action_seed=0):
    """Step with random legal learner actions; returns obs, rewards, dones, infos per step."""
    rng = np.random.default_rng(action_seed)
    obs = env.reset()
    traj = [obs]
    for _ in range(n_steps):
        env.step_async(random_legal(rng, env.action_masks()))
        traj.append(env.step_wait())
    return traj


def same_traj(a, b) -> bool:
    if len(a) != len(b) or not np.array_equal(a[0], b[0]):
        return False
    for (o1, r1, d1, i1), (o2, r2, d2, i2) in zip(a[1:], b[1:]):
        if not (np.array_equal(o1, o2) and np.array_equal(r1, r2) and np.array_equal(d1, d2)):
            return False
        for x, y in zip(i1, i2):
            if x.keys() != y.keys() or any(not np.array_equal(x[k], y[k]) for k in x):
                return False
    return True


def test_sb3_vecenv_api():
    env = NertzVecEnv(num_envs=8, seed=0, num_teams=3, max_ticks=60)
    assert isinstance(env, VecEnv) and env.num_envs == 8
    assert env.observation_space.shape == (OBS_DIM,) and env.action_space.n == N_ACTIONS
    obs = env.reset()
    assert obs.shape == (8, OBS_DIM) and obs.dtype == np.float32
    assert env.has_attr("action_masks")
    masks = env.env_method("action_masks")
    assert len(masks) == 8 and all(m.dtype == bool and m.shape == (N_ACTIONS,) for m in masks)
    assert np.array_equal(np.stack(masks), env.action_masks())
    assert len(env.env_method("action_masks", indices=[2, 5])) == 2
    obs, rewards, dones, infos = env.step(np.zeros(8, np.int64))      # everyone waits
    assert obs.shape == (8, OBS_DIM) and rewards.shape == (8,) and dones.shape == (8,)
    assert rewards.dtype == np.float32 and dones.dtype == bool
    assert len(infos) == 8 and all(isinstance(i, dict) for i in infos)
    assert (rewards == -26).all()          # first step counted from 0: 13 Nertz cards left
    assert env.get_attr("learner_seat") == [0] * 8
    with pytest.raises(ValueError):
        env.step(np.zeros(3, np.int64))
    with pytest.raises(ValueError):
        env.step(np.full(8, N_ACTIONS))
    env.close()


@pytest.mark.parametrize("kw", [dict(num_teams=2), dict(num_teams=3, team_sizes=(2, 1, 1),
                                                        learner_seat=1)],
                         ids=["2teams", "pair_second_seat"])
def test_masks_are_the_engines_and_correct(kw):
    env = NertzVecEnv(num_envs=32, seed=1, max_ticks=80, **kw)
    rng = np.random.default_rng(0)
    env.reset()
    seat = env.learner_seat
    for _ in range(120):                    # crosses re-deals (max_ticks 80)
        m = env.action_masks()
        assert np.array_equal(m, env.engine.masks[:, seat].astype(bool))
        assert m[:, 0].all()                # wait is always legal
        kept = env.engine.masks.copy()
        env.engine.refresh_masks()          # recomputed from the state: the same masks
        assert np.array_equal(kept, env.engine.masks)
        env.step(random_legal(rng, m))


@pytest.mark.parametrize("reward", ["score", "relative"])
@pytest.mark.parametrize("kw", [dict(num_teams=2), dict(num_teams=4)], ids=["2teams", "4teams"])
def test_rewards_sum_to_each_finished_hands_score(kw, reward):
    n = 32
    env = NertzVecEnv(num_envs=n, seed=2, reward=reward, max_ticks=150, **kw)
    rng = np.random.default_rng(1)
    env.reset()
    me = env.config.seat_team[env.learner_seat]
    running = np.zeros(n)
    finished = truncated = 0
    for _ in range(400):
        _, rewards, dones, infos = env.step(random_legal(rng, env.action_masks()))
        running += rewards
        for e in np.flatnonzero(dones):
            final = infos[e]["final_scores"]
            want = team_rewards(reward, np.array(final), None)[me]   # the envs' formula
            assert running[e] == pytest.approx(want, abs=1e-4), (e, infos[e])  # float32 rewards
            assert infos[e]["terminal_observation"].shape == (OBS_DIM,)
            truncated += infos[e]["TimeLimit.truncated"]
            finished += 1
            running[e] = 0
        assert not any("final_scores" in infos[e] for e in np.flatnonzero(~dones))
    assert finished >= n
    if kw["num_teams"] == 2:
        assert truncated > 0                # random 2-team hands often reach max_ticks


def test_same_seed_same_trajectories():
    a = run(NertzVecEnv(num_envs=16, seed=5, num_teams=3, max_ticks=60), 150)
    b = run(NertzVecEnv(num_envs=16, seed=5, num_teams=3, max_ticks=60), 150)
    c = run(NertzVecEnv(num_envs=16, seed=6, num_teams=3, max_ticks=60), 150)
    assert same_traj(a, b) and not same_traj(a, c)
    assert sum(d.sum() for _, _, d, _ in a[1:]) > 16   # hands ended and were re-dealt
    # the same env object reset again replays its seed
    env = NertzVecEnv(num_envs=16, seed=5, num_teams=3, max_ticks=60)
    run(env, 20, action_seed=9)
    assert same_traj(run(env, 150), a)


def test_serial_and_parallel_kernels_agree():
    serial = NertzVecEnv(num_envs=64, seed=3, num_teams=4, max_ticks=80)
    parallel = NertzVecEnv(num_envs=64, seed=3, num_teams=4, max_ticks=80)
    assert not serial.engine.parallel
    parallel.engine.parallel = True
    a, b = run(serial, 100), run(parallel, 100)
    assert same_traj(a, b)
    big = NertzVecEnv(num_envs=300, seed=3, num_teams=2, max_ticks=50)
    assert big.engine.parallel               # >= 256 envs take the prange kernels by default
    small = NertzVecEnv(num_envs=300, seed=3, num_teams=2, max_ticks=50)
    small.engine.parallel = False
    assert same_traj(run(big, 60), run(small, 60))


def test_maskable_ppo_trains_on_the_vector_env():
    sb3_contrib = pytest.importorskip("sb3_contrib")
    import torch
    threads = torch.get_num_threads()
    torch.set_num_threads(1)               # tiny networks: 1 thread is several times faster here
    try:
        env = NertzVecEnv(num_envs=16, seed=0, max_ticks=200)
        model = sb3_contrib.MaskablePPO("MlpPolicy", env, n_steps=64, batch_size=256,
                                        n_epochs=1, seed=0, verbose=0)
        model.learn(2048)
    finally:
        torch.set_num_threads(threads)
    assert model.num_timesteps >= 2048
    obs = env.reset()
    actions, _ = model.predict(obs, action_masks=env.action_masks(), deterministic=True)
    assert env.action_masks()[np.arange(16), actions].all()   # masked: only legal moves


def test_jitted_bot_opponents_play_their_rule():
    """opponents= greedy / heuristic: inside vec_step the other seats play exactly what the
    plain-Python bots (agents/python_policies.py) choose on their observations."""
    from agents.bots import STYLES
    from agents.python_policies import choose_action
    from nertz_env.envs.episode import env_config as make_config
    from nertz_env.envs.learner_batch import LearnerBatch

    cfg = make_config(None, dict(num_teams=3))
    specs = ["greedy", "heuristic:style=river-builder"]
    batch = LearnerBatch(8, cfg, seed=2, learner_seat=0, reward="score", opponents=specs)
    batch.reset(2)
    knobs = {1: STYLES["greedy"], 2: STYLES["river-builder"]}
    rng = np.random.default_rng(0)
    checked = 0
    for _ in range(40):
        obs = batch.engine.observe().copy()
        masks = batch.engine.masks.copy()
        status = batch.engine.state.status.copy()
        acts = np.array([rng.choice(np.flatnonzero(m)) for m in batch.action_masks()])
        batch.set_actions(acts)
        batch.step()
        for e in range(8):
            assert batch.engine.actions[e, 0] == acts[e]
            for s in (1, 2):
                assert batch.engine.actions[e, s] == choose_action(obs[e, s], masks[e, s], knobs[s])
                checked += 1
        assert (status == 0).all()
    assert checked == 640


def test_opponents_argument_errors():
    from nertz_env.envs.episode import env_config as make_config
    from nertz_env.envs.learner_batch import core_bots

    cfg = make_config(None, dict(num_teams=3))
    with pytest.raises(ValueError, match="2 opponent seats"):
        NertzVecEnv(2, num_teams=3, opponents=["greedy"])
    with pytest.raises(ValueError, match="not opponent seats"):
        NertzVecEnv(2, num_teams=3, opponents={0: "greedy"})
    with pytest.raises(ValueError, match="unknown kind"):
        NertzVecEnv(2, num_teams=3, opponents="chess")

    class Outside:
        name = "outside"

        def act(self, observation, action_mask):
            return 0
    with pytest.raises(ValueError, match="does not run inside the core"):
        core_bots(Outside(), cfg, 0, 2)
    kinds, knobs, names = core_bots({2: "greedy"}, cfg, 1, 2)
    assert names == {0: "random", 2: "greedy"} and kinds[:, 1].tolist() == [2, 2]


def test_heuristic_opponents_are_stronger_than_random():
    """Against the same random learner, heuristic opponents score far more than random ones
    (and end hands sooner by calling Nertz)."""
    means = {}
    for opp in ("random", "heuristic"):
        env = NertzVecEnv(64, num_teams=2, seed=5, opponents=opp)
        env.reset()
        rng = np.random.default_rng(1)
        finals = []
        while len(finals) < 128:
            acts = np.array([rng.choice(np.flatnonzero(m)) for m in env.action_masks()])
            _, _, dones, infos = env.step(acts)
            finals += [i["final_scores"][1] for i, d in zip(infos, dones) if d]
        means[opp] = np.mean(finals)
    assert means["heuristic"] > means["random"] + 10, means
