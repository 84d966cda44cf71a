"""NertzGymVectorEnv (nertz_env/envs/gym_vector.py): Gymnasium's vector API (spaces, reset/step
shapes and dtypes, dict-of-arrays infos, SAME_STEP autoreset with final_obs / final_info),
masks, rewards that sum to each finished hand's score, determinism, and Gymnasium's own vector
wrappers on top of it. Gymnasium (1.x) ships no checker for VectorEnv subclasses, so its
RecordEpisodeStatistics and DictInfoToList wrappers stand in for one.
"""
from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from gymnasium import spaces
from gymnasium.vector import VectorEnv
from gymnasium.utils.env_checker import data_equivalence

import nertz_env
from nertz_env.actions import N_ACTIONS
from nertz_env.core.observe import OBS_DIM
from nertz_env.envs.episode import team_rewards
from nertz_env.envs.gym_vector import NertzGymVectorEnv

try:
    from gymnasium.vector import AutoresetMode
except ImportError:                    # pragma: no cover - gymnasium < 1.1
    AutoresetMode = None


def random_legal(rng, masks):
    """One uniformly random legal action per env (masks: bool [E, N_ACTIONS])."""
    keys = rng.random(masks.shape)
    keys[~masks] = -1.0
    return keys.argmax(axis=1)


def run(env, n_steps, seed, action_seed=0):
    """reset(seed) then random legal learner actions; returns the (obs, infos) of the reset
    and the step tuples."""
    rng = np.random.default_rng(action_seed)
    traj = [env.reset(seed=seed)]
    for _ in range(n_steps):
        traj.append(env.step(random_legal(rng, traj[-1][-1]["action_mask"])))
    return traj


def test_spaces_and_lazy_export():
    env = NertzGymVectorEnv(num_envs=8, seed=0, num_teams=3)
    assert nertz_env.NertzGymVectorEnv is NertzGymVectorEnv
    assert isinstance(env, VectorEnv) and env.num_envs == 8
    assert env.single_observation_space == spaces.Box(-1.0, 1.0, (OBS_DIM,), np.float32)
    assert env.single_action_space == spaces.Discrete(N_ACTIONS)
    assert isinstance(env.observation_space, spaces.Box)
    assert env.observation_space.shape == (8, OBS_DIM)
    assert env.observation_space.dtype == np.float32
    assert isinstance(env.action_space, spaces.MultiDiscrete)
    assert env.action_space.shape == (8,) and (env.action_space.nvec == N_ACTIONS).all()
    if AutoresetMode is not None:
        assert env.metadata["autoreset_mode"] == AutoresetMode.SAME_STEP
    with pytest.raises(ValueError):
        NertzGymVectorEnv(num_envs=4, reward="win")
    with pytest.raises(ValueError):
        NertzGymVectorEnv(num_envs=4, num_teams=2, learner_seat=2)


def test_reset_step_shapes_dtypes_and_masks():
    n = 8
    env = NertzGymVectorEnv(num_envs=n, seed=0, num_teams=3, team_sizes=(2, 1, 1),
                            learner_seat=1, max_ticks=60)
    with pytest.raises(ValueError):
        env.step(np.zeros(n, np.int64))          # before reset
    obs, infos = env.reset(seed=0)
    assert obs.shape == (n, OBS_DIM) and obs.dtype == np.float32
    assert env.observation_space.contains(obs)
    assert infos["action_mask"].shape == (n, N_ACTIONS) and infos["action_mask"].dtype == bool
    assert infos["_action_mask"].all()
    assert np.array_equal(infos["action_mask"], env.action_masks())
    assert np.array_equal(env.action_masks(), env.engine.masks[:, 1].astype(bool))
    obs, rewards, terms, truncs, infos = env.step(np.zeros(n, np.int64))   # everyone waits
    assert obs.shape == (n, OBS_DIM) and obs.dtype == np.float32
    assert rewards.shape == (n,) and rewards.dtype == np.float64
    assert terms.shape == truncs.shape == (n,) and terms.dtype == truncs.dtype == bool
    # the first step is counted from 0: its reward is the learner team's whole hand score
    assert np.array_equal(rewards, env.engine.hand_scores()[:, env.config.seat_team[1]])
    assert (rewards < 0).all()                 # about -26: 13 Nertz cards left
    assert "final_obs" not in infos            # no hand ended
    rng = np.random.default_rng(0)
    for _ in range(80):                        # crosses re-deals (max_ticks 60)
        m = env.action_masks()
        assert m[:, 0].all()                   # wait is always legal
        obs, rewards, terms, truncs, infos = env.step(random_legal(rng, m))
        assert env.observation_space.contains(obs)
        assert np.array_equal(infos["action_mask"], env.action_masks())
    with pytest.raises(ValueError):
        env.step(np.zeros(3, np.int64))
    with pytest.raises(ValueError):
        env.step(np.full(n, N_ACTIONS))
    with pytest.raises(ValueError):
        env.step(np.zeros(n, np.float32))
    with pytest.raises(ValueError):
        env.reset(seed=[1, 2])
    env.close()
    assert env.closed


@pytest.mark.parametrize("reward", ["score", "relative"])
@pytest.mark.parametrize("kw", [dict(num_teams=2), dict(num_teams=4)], ids=["2teams", "4teams"])
def test_rewards_sum_to_each_finished_hands_score_and_autoreset(kw, reward):
    n = 32
    env = NertzGymVectorEnv(num_envs=n, seed=2, reward=reward, max_ticks=150, **kw)
    rng = np.random.default_rng(1)
    _, infos = env.reset(seed=2)
    me = env.config.seat_team[env.learner_seat]
    running = np.zeros(n)
    finished = truncated = 0
    for _ in range(400):
        obs, rewards, terms, truncs, infos = env.step(random_legal(rng, infos["action_mask"]))
        running += rewards
        done = terms | truncs
        assert not (terms & truncs).any()
        if not done.any():
            assert not {"final_obs", "_final_obs", "final_info", "_final_info"} & set(infos)
            continue
        assert np.array_equal(infos["_final_obs"], done)
        assert np.array_equal(infos["_final_info"], done)
        assert np.array_equal(infos["final_info"]["_final_scores"], done)
        scores = infos["final_info"]["final_scores"]
        assert scores.shape == (n, env.config.num_teams) and scores.dtype == np.int64
        for e in range(n):
            if not done[e]:
                assert infos["final_obs"][e] is None and (scores[e] == 0).all()
                continue
            final_obs = infos["final_obs"][e]
            assert final_obs.shape == (OBS_DIM,) and final_obs.dtype == np.float32
            assert env.single_observation_space.contains(final_obs)
            assert not np.array_equal(final_obs, obs[e])   # obs[e] is the new hand's
            want = team_rewards(reward, scores[e], None)[me]          # the envs' formula
            assert running[e] == pytest.approx(want, abs=1e-9), (e, scores[e])
            running[e] = 0
        # SAME_STEP: the re-dealt table is at tick 0 of its next hand already
        assert (env.engine.state.tick[done] == 0).all()
        assert (env.engine.state.status[done] == 0).all()
        finished += done.sum()
        truncated += truncs.sum()
    assert finished >= n
    if kw["num_teams"] == 2:
        assert truncated > 0                    # random 2-team hands often reach max_ticks


def test_same_seed_same_trajectories():
    env = NertzGymVectorEnv(num_envs=16, seed=5, num_teams=3, max_ticks=60)
    a = run(env, 150, seed=5)
    b = run(NertzGymVectorEnv(num_envs=16, seed=0, num_teams=3, max_ticks=60), 150, seed=5)
    c = run(NertzGymVectorEnv(num_envs=16, seed=0, num_teams=3, max_ticks=60), 150, seed=6)
    assert data_equivalence(a, b, exact=True)
    assert not data_equivalence(a, c)
    assert sum(t[2].sum() + t[3].sum() for t in a[1:]) > 16   # hands ended and re-dealt
    run(env, 20, seed=None, action_seed=9)                     # the same object, reset again
    assert data_equivalence(run(env, 150, seed=5), a, exact=True)
    # returned arrays are not reused buffers
    obs1, *_ = env.step(np.zeros(16, np.int64))
    kept = obs1.copy()
    env.step(np.zeros(16, np.int64))
    assert np.array_equal(obs1, kept)


def test_matches_the_sb3_vector_env():
    """The same kernels as NertzVecEnv: the same seed and actions give the same game."""
    pytest.importorskip("stable_baselines3")
    from nertz_env.envs.vector import NertzVecEnv

    kw = dict(num_envs=300, seed=3, num_teams=4, max_ticks=50)     # 300: the prange kernels
    gym_env, sb3_env = NertzGymVectorEnv(**kw), NertzVecEnv(**kw)
    assert gym_env.engine.parallel and sb3_env.engine.parallel
    rng = np.random.default_rng(0)
    obs, _ = gym_env.reset(seed=3)
    assert np.array_equal(obs, sb3_env.reset())
    for _ in range(60):
        act = random_legal(rng, gym_env.action_masks())
        obs, rew, term, trunc, infos = gym_env.step(act)
        obs2, rew2, done2, infos2 = sb3_env.step(act)
        assert np.array_equal(obs, obs2) and np.array_equal(rew.astype(np.float32), rew2)
        assert np.array_equal(term | trunc, done2)
        for e in np.flatnonzero(done2):
            assert np.array_equal(infos["final_obs"][e], infos2[e]["terminal_observation"])
            assert infos2[e]["TimeLimit.truncated"] == trunc[e]


def test_gymnasium_vector_wrappers():
    from gymnasium.wrappers.vector import DictInfoToList, RecordEpisodeStatistics

    n = 16
    env = RecordEpisodeStatistics(NertzGymVectorEnv(num_envs=n, seed=1, num_teams=2,
                                                    max_ticks=40))
    rng = np.random.default_rng(0)
    _, infos = env.reset(seed=1)
    episodes = 0
    # gymnasium < 1.4's RecordEpisodeStatistics ignores SAME_STEP autoreset: it leaves out
    # the first step of every hand after an env's first (that step carries the deal's score)
    skips_first = tuple(int(x) for x in gymnasium.__version__.split(".")[:2]) < (1, 4)
    left_out = np.zeros(n)                      # per env: the reward gymnasium leaves out
    after_done = np.zeros(n, bool)
    for _ in range(100):
        _, rew, terms, truncs, infos = env.step(random_legal(rng, infos["action_mask"]))
        if skips_first:
            left_out[after_done] = rew[after_done]
        done = terms | truncs
        if done.any():
            # SAME_STEP: every step counts, so the episode return is the finished hand's score
            ep, scores = infos["episode"], infos["final_info"]["final_scores"]
            assert np.array_equal(ep["r"][done], scores[done, 0] - left_out[done])
            assert (ep["l"][done] > 0).all()
            episodes += done.sum()
        after_done = done
    assert episodes >= n

    listed = DictInfoToList(NertzGymVectorEnv(num_envs=4, seed=0, num_teams=2, max_ticks=10))
    _, infos = listed.reset(seed=0)
    assert len(infos) == 4 and infos[2]["action_mask"].shape == (N_ACTIONS,)
    for _ in range(11):                         # max_ticks=10: every hand ends
        _, _, terms, truncs, infos = listed.step(np.zeros(4, np.int64))
        if truncs.any():
            break
    assert truncs.all()
    assert all(i["final_obs"].shape == (OBS_DIM,) and len(i["final_info"]["final_scores"]) == 2
               for i in infos)


def test_illegal_move_raise_and_bad_input_change_nothing():
    """illegal_move="raise" (RulesConfig's default) is a ValueError naming the table and the
    id; malformed actions, seeds and options are ValueErrors; the env is unchanged after each
    (the next step gives exactly what an untouched twin gives)."""
    from nertz_env import RulesConfig

    n = 5
    env, twin = (NertzGymVectorEnv(num_envs=n, config=RulesConfig(num_teams=3), seed=0)
                 for _ in range(2))
    env.reset(seed=4)
    twin.reset(seed=4)
    masks = env.action_masks()
    acts = random_legal(np.random.default_rng(0), masks)
    bad = acts.copy()
    bad[2] = int(np.flatnonzero(~masks[2])[0])
    cases = [(bad, f"table 2.*action id {bad[2]} .*R31"), (acts.astype(float), "dtype"),
             (acts[:4], "shape"), (acts.astype(bool), "dtype"), (np.append(acts[:4], 400), "400")]
    for actions, part in cases:
        with pytest.raises(ValueError, match=part):
            env.step(actions)
    for kwargs, part in [(dict(seed=-2), "seed"), (dict(seed=2.0), "seed"),
                         (dict(seed=[1, 2]), "seed"), (dict(options={"layout": {}}), "layout"),
                         (dict(options=3), "dict")]:
        with pytest.raises(ValueError, match=part):
            env.reset(**kwargs)
    assert data_equivalence(env.step(acts), twin.step(acts), exact=True)
    env.reset(seed=None, options={})
