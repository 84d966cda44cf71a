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
    steps = np.zeros(n, np.int64)
    finished = truncated = 0
    for _ in range(400):
        _, rewards, dones, infos = env.step(random_legal(rng, env.action_masks()))
        running += rewards
        steps += 1
        for e in np.flatnonzero(dones):
            final = infos[e]["final_scores"]
            assert final.dtype == np.int64 and final.shape == (env.config.num_teams,)
            want = team_rewards(reward, np.array(final), None)[me]   # the envs' formula
            assert running[e] == pytest.approx(want, abs=1e-4), (e, infos[e])  # float32 rewards
            # SB3's episode record (what VecMonitor would write): the hand's return and steps
            assert infos[e]["episode"]["r"] == pytest.approx(want, abs=1e-9)
            assert infos[e]["episode"]["l"] == steps[e]
            steps[e] = 0
            assert infos[e]["terminal_observation"].shape == (OBS_DIM,)
            truncated += infos[e]["TimeLimit.truncated"]
            finished += 1
            running[e] = 0
        assert not any("final_scores" in infos[e] or "episode" in infos[e]
                       for e in np.flatnonzero(~dones))
    assert finished >= n
    if kw["num_teams"] == 2:
        assert truncated > 0                # random 2-team hands often reach max_ticks


def test_same_seed_same_trajectories():
    a = run(NertzVecEnv(num_envs=16, seed=5, num_teams=3, max_ticks=60), 150)
    b = run(NertzVecEnv(num_envs=16, seed=5, num_teams=3, max_ticks=60), 150)
    c = run(NertzVecEnv(num_envs=16, seed=6, num_teams=3, max_ticks=60), 150)
    assert same_traj(a, b) and not same_traj(a, c)
    assert sum(d.sum() for _, _, d, _ in a[1:]) > 16   # hands ended and were re-dealt
    # the same env object replays its seed after seed(5) (SB3: the next reset only)
    env = NertzVecEnv(num_envs=16, seed=5, num_teams=3, max_ticks=60)
    run(env, 20, action_seed=9)
    assert env.seed(5) == [5] * 16
    assert same_traj(run(env, 150), a)


def test_resets_continue_the_generator():
    """SB3's convention: the constructor's (or seed()'s) seed is for the next reset only;
    later resets deal new hands (evaluate_policy must not replay the same deals)."""
    env = NertzVecEnv(num_envs=4, seed=7, num_teams=2)
    first, second, third = env.reset(), env.reset(), env.reset()
    assert not np.array_equal(first, second) and not np.array_equal(second, third)
    env.seed(7)
    assert np.array_equal(env.reset(), first)
    assert np.array_equal(env.reset(), second)
    assert np.array_equal(NertzVecEnv(num_envs=4, seed=7, num_teams=2).reset(), first)
    drawn = env.seed()                                       # None: a fresh seed, returned
    fresh = env.reset()
    env.seed(drawn[0])
    assert np.array_equal(env.reset(), fresh)
    for bad in (-1, 1.5, "3", True, [1, 2]):
        with pytest.raises(ValueError, match="seed"):
            env.seed(bad)
        with pytest.raises(ValueError, match="seed"):
            NertzVecEnv(num_envs=2, seed=bad)
    env.set_options(None)
    env.set_options([{}] * 4)
    with pytest.raises(ValueError, match="layout"):
        env.set_options({"layout": {}})


def engine_snapshot(env):
    eng, b = env.engine, env.batch
    return ({k: v.copy() for k, v in eng.state._asdict().items()}, eng.masks.copy(),
            eng.np_random.bit_generator.state, b.actions.copy(), b.policy_rng.copy(),
            b.prev.copy())


def assert_same_snapshot(a, b):
    for x, y in zip(a, b):
        if isinstance(x, dict) and "bit_generator" not in x:
            for k in x:
                np.testing.assert_array_equal(x[k], y[k], err_msg=k)
        elif isinstance(x, dict):
            assert x == y
        else:
            np.testing.assert_array_equal(x, y)


def test_illegal_learner_moves_follow_illegal_move():
    """R31 in the vector env: "raise" (RulesConfig's default) is a ValueError naming the table
    and the id with nothing changed; "penalize" costs penalty_points; "ignore" is a free Wait."""
    from nertz_env import RulesConfig

    n = 6
    env = NertzVecEnv(num_envs=n, config=RulesConfig(num_teams=2), seed=0)
    assert env.config.illegal_move == "raise"
    env.reset()
    acts = np.zeros(n, np.int64)
    bad = int(np.flatnonzero(~env.action_masks()[3])[0])
    acts[3] = bad
    before = engine_snapshot(env)
    with pytest.raises(ValueError, match=f"table 3.*action id {bad} .*R31"):
        env.step_async(acts)
    assert_same_snapshot(engine_snapshot(env), before)
    env.step(np.zeros(n, np.int64))                                # legal: plays
    for mode, penalty in (("penalize", 5), ("ignore", 0)):
        env = NertzVecEnv(num_envs=n, seed=0, num_teams=2, illegal_move=mode, penalty_points=5)
        ref = NertzVecEnv(num_envs=n, seed=0, num_teams=2, illegal_move=mode, penalty_points=5)
        env.reset(), ref.reset()
        acts = np.zeros(n, np.int64)
        acts[3] = int(np.flatnonzero(~env.action_masks()[3])[0])
        _, rewards, _, _ = env.step(acts)
        _, ref_rewards, _, _ = ref.step(np.zeros(n, np.int64))          # everyone waits
        assert env.engine.state.penalties[3, 0] == (penalty > 0)
        assert rewards[3] == ref_rewards[3] - penalty
        np.testing.assert_array_equal(np.delete(rewards, 3), np.delete(ref_rewards, 3))


@pytest.mark.parametrize("actions, part", [
    (np.zeros(4, bool), "dtype bool"),
    (np.full(4, 1.0), "dtype float64"),
    (np.zeros(3, np.int64), "shape"),
    (np.zeros((4, 1), np.int64), "shape"),
    (np.array([0, 0, 322, 0]), "322 at index \\(2,\\)"),
    (np.array([0, -1, 0, 0]), "-1"),
    ([0, 0, "flip", 0], "dtype"),
    (None, "dtype"),
])
def test_bad_learner_actions_change_nothing(actions, part):
    env = NertzVecEnv(num_envs=4, seed=0, num_teams=2)
    with pytest.raises(ValueError, match="reset"):
        env.step_async(np.zeros(4, np.int64))                     # before reset
    env.reset()
    env.step(np.zeros(4, np.int64))
    before = engine_snapshot(env)
    with pytest.raises(ValueError, match=part):
        env.step_async(actions)
    assert_same_snapshot(engine_snapshot(env), before)


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
    """MaskablePPO learns from the vector env's rewards: after a short training run its greedy
    policy scores far more over fixed evaluation deals than the same network untrained and
    than uniformly random legal moves (a zero, sign-flipped or misplaced reward would not)."""
    sb3_contrib = pytest.importorskip("sb3_contrib")
    import torch

    def mean_score(policy, ticks=100, n_envs=32, seed=1234):
        """Mean R29 hand score of the learner's team after `ticks` ticks of fixed deals (or
        at the end of its hand, if a Nertz call ends it sooner), read from the engine, not
        from the rewards under test."""
        env = NertzVecEnv(num_envs=n_envs, seed=seed, max_ticks=200)
        obs, rng, score = env.reset(), np.random.default_rng(seed), np.full(n_envs, np.nan)
        for _ in range(ticks):
            masks = env.action_masks()
            actions = policy(obs, masks, rng)
            assert masks[np.arange(n_envs), actions].all()   # masked: only legal moves
            obs, _, dones, infos = env.step(actions)
            for e in np.flatnonzero(dones & np.isnan(score)):
                score[e] = infos[e]["final_scores"][0]
        live = np.isnan(score)
        score[live] = env.engine.hand_scores()[live, 0]
        return score.mean()

    threads = torch.get_num_threads()
    torch.set_num_threads(1)               # tiny networks: 1 thread is several times faster here
    try:
        env = NertzVecEnv(num_envs=16, seed=0, max_ticks=200)
        model = sb3_contrib.MaskablePPO("MlpPolicy", env, n_steps=64, batch_size=256,
                                        n_epochs=4, learning_rate=1e-3, seed=0, verbose=0)

        def greedy(obs, masks, rng):
            return model.predict(obs, action_masks=masks, deterministic=True)[0]

        untrained = mean_score(greedy)
        model.learn(16384)
        trained = mean_score(greedy)
    finally:
        torch.set_num_threads(threads)
    random = mean_score(lambda obs, masks, rng: random_legal(rng, masks))
    # calibration (seeds 0-4): trained -6.8 .. -4.2, untrained -24.9 .. -21.6, random -16.7
    assert trained > random + 5 and trained > untrained + 5, (trained, untrained, random)


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
