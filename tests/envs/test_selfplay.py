"""Self-play (nertz_env/envs/selfplay.py, selfplay_sb3.py): every seat of every table is a
row; the rows step exactly as a plain Engine given the same actions, masks are the engine's,
rewards per row sum to its team's hand score, auto-reset with terminal observations and
`info["episode"]`, determinism, bad actions change nothing, `gymnasium.make_vec` reaches the
batched envs, and MaskablePPO trains one policy on every seat."""
from __future__ import annotations

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import data_equivalence

import nertz_env
from nertz_env import Engine, RulesConfig
from nertz_env.actions import N_ACTIONS
from nertz_env.core.observe import OBS_DIM
from nertz_env.envs.episode import team_rewards
from nertz_env.envs.gym_vector import NertzGymVectorEnv
from nertz_env.envs.selfplay import NertzSelfPlayGymVectorEnv

pytest.importorskip("stable_baselines3")

from stable_baselines3.common.vec_env import VecEnv  # noqa: E402

from nertz_env.envs.selfplay_sb3 import NertzSelfPlayVecEnv  # noqa: E402

PAIRS = dict(num_teams=3, team_sizes=(2, 1, 1))       # 4 seats, seats 0 and 1 one team


def random_legal(rng, masks):
    """One uniformly random legal action per row (masks: bool [R, N_ACTIONS])."""
    keys = rng.random(masks.shape)
    keys[~masks] = -1.0
    return keys.argmax(axis=1)


def state_of(engine):
    return {k: v.copy() for k, v in engine.state._asdict().items()}


def assert_same_state(a, b):
    for k in a:
        np.testing.assert_array_equal(a[k], b[k], err_msg=k)


def test_rows_are_table_and_seat_and_spaces():
    env = NertzSelfPlayVecEnv(3, seed=0, **PAIRS)
    assert isinstance(env, VecEnv) and env.num_envs == 12 and env.n_tables == 3
    assert env.row_table.tolist() == [r // 4 for r in range(12)]
    assert env.row_seat.tolist() == [r % 4 for r in range(12)]
    assert env.observation_space.shape == (OBS_DIM,) and env.action_space.n == N_ACTIONS
    assert nertz_env.NertzSelfPlayVecEnv is NertzSelfPlayVecEnv
    assert nertz_env.NertzSelfPlayGymVectorEnv is NertzSelfPlayGymVectorEnv
    obs = env.reset()
    # row r sees what seat r % 4 of table r // 4 sees
    assert np.array_equal(obs, env.engine.observe()[env.row_table, env.row_seat])
    masks = env.env_method("action_masks")
    assert np.array_equal(np.stack(masks), env.action_masks())
    assert env.has_attr("action_masks") and len(env.env_method("action_masks", indices=[7])) == 1
    obs, rewards, dones, infos = env.step(np.zeros(12, np.int64))         # everyone waits
    assert obs.shape == (12, OBS_DIM) and obs.dtype == np.float32
    assert rewards.shape == (12,) and rewards.dtype == np.float32 and dones.dtype == bool
    assert (rewards == -26).all() and len(infos) == 12     # 13 Nertz cards left, counted from 0
    images = env.get_images()
    assert len(images) == 12 and images[0].shape == images[11].shape
    assert not np.array_equal(images[0], images[2])        # the row's team is framed
    for bad in (0, 2.0, True):
        with pytest.raises(ValueError, match="n_tables"):
            NertzSelfPlayVecEnv(bad)
    with pytest.raises(ValueError, match="reward"):
        NertzSelfPlayVecEnv(2, reward="win")
    with pytest.raises(ValueError, match="learner_seat"):
        NertzSelfPlayVecEnv(2, learner_seat=1)


def test_rows_step_as_a_plain_engine_and_finished_hands_are_redealt():
    """Given the same seed and actions, the env's engine is a plain Engine's, step for step;
    its masks are the engine's; at max_ticks every table is re-dealt in the same step: the
    terminal observations are the plain engine's last views, and the new hand is dealt."""
    B, S, ticks = 3, 4, 25
    env = NertzSelfPlayVecEnv(B, seed=11, max_ticks=ticks, **PAIRS)
    plain = Engine(env.config, B)
    obs = env.reset()
    plain.reset(seed=11)
    rng = np.random.default_rng(0)
    for step in range(1, ticks + 1):
        assert np.array_equal(obs, plain.observe().reshape(B * S, OBS_DIM))
        masks = env.action_masks()
        assert np.array_equal(masks, plain.masks.reshape(B * S, N_ACTIONS).astype(bool))
        actions = random_legal(rng, masks)
        obs, _, dones, infos = env.step(actions)
        plain.step(actions.reshape(B, S))
        if step < ticks:
            assert not dones.any()
            assert_same_state(state_of(env.engine), state_of(plain))
    assert dones.all() and plain.truncated.all()
    last = plain.observe().reshape(B * S, OBS_DIM)
    for r in range(B * S):
        assert infos[r]["TimeLimit.truncated"] is True
        assert np.array_equal(infos[r]["terminal_observation"], last[r])
        assert np.array_equal(infos[r]["final_scores"], plain.hand_scores()[r // S])
    eng = env.engine
    assert (eng.state.hand == 1).all() and (eng.state.tick == 0).all() and not eng.hand_over.any()
    eng.check_invariants()                            # a full, valid deal
    assert np.array_equal(obs, eng.observe().reshape(B * S, OBS_DIM))   # the new hand's views
    kept = eng.masks.copy()
    eng.refresh_masks()
    assert np.array_equal(kept, eng.masks)


@pytest.mark.parametrize("reward", ["score", "relative"])
@pytest.mark.parametrize("kw", [dict(num_teams=2, max_ticks=150), dict(PAIRS, max_ticks=300)],
                         ids=["2teams", "pairs"])
def test_rewards_per_row_sum_to_each_finished_hands_team_score(kw, reward):
    n = 8
    env = NertzSelfPlayVecEnv(n, seed=2, reward=reward, **kw)
    R, team = env.num_envs, np.asarray(env.config.seat_team)[env.row_seat]
    seat_team = list(env.config.seat_team)
    mate = [seat_team.index(t) for t in seat_team]            # each seat's first team mate
    rng = np.random.default_rng(1)
    env.reset()
    running, length = np.zeros(R), np.zeros(R, int)
    finished = truncated = called = 0
    for _ in range(400):
        _, rewards, dones, infos = env.step(random_legal(rng, env.action_masks()))
        running += rewards
        length += 1
        per_seat = rewards.reshape(n, -1)                     # team mates share a reward
        assert all((per_seat[:, s] == per_seat[:, mate[s]]).all() for s in range(len(mate)))
        for r in np.flatnonzero(dones):
            final = infos[r]["final_scores"]
            want = team_rewards(reward, np.array(final), None)[team[r]]   # the envs' formula
            assert running[r] == pytest.approx(want, abs=1e-4), (r, infos[r])
            assert infos[r]["episode"]["r"] == pytest.approx(want, abs=1e-9)
            assert infos[r]["episode"]["l"] == length[r]
            truncated += infos[r]["TimeLimit.truncated"]
            called += not infos[r]["TimeLimit.truncated"]
            finished += 1
            running[r], length[r] = 0, 0
        assert not any("episode" in infos[r] for r in np.flatnonzero(~dones))
        assert (dones.reshape(n, -1) == dones.reshape(n, -1)[:, :1]).all()   # whole tables
    assert finished >= R and truncated > 0
    assert called > 0 or kw["num_teams"] == 2     # random 2-team hands rarely end in a call


def run(env, n_steps, action_seed=0):
    rng = np.random.default_rng(action_seed)
    traj = [env.reset()]
    for _ in range(n_steps):
        traj.append(env.step(random_legal(rng, env.action_masks())))
    return traj


def same_traj(a, b) -> bool:
    if not np.array_equal(a[0], b[0]):
        return False
    for (o1, r1, d1, i1), (o2, r2, d2, i2) in zip(a[1:], b[1:]):
        if not (np.array_equal(o1, o2) and np.array_equal(r1, r2) and np.array_equal(d1, d2)):
            return False
        if not all(data_equivalence(x, y, exact=True) for x, y in zip(i1, i2)):
            return False
    return True


def test_same_seed_same_trajectories_serial_or_parallel():
    kw = dict(num_teams=3, max_ticks=60)
    a = run(NertzSelfPlayVecEnv(6, seed=5, **kw), 130)
    b = run(NertzSelfPlayVecEnv(6, seed=5, **kw), 130)
    c = run(NertzSelfPlayVecEnv(6, seed=6, **kw), 130)
    assert same_traj(a, b) and not same_traj(a, c)
    assert sum(d.sum() for _, _, d, _ in a[1:]) >= 2 * 18     # every table re-dealt twice
    par = NertzSelfPlayVecEnv(6, seed=5, **kw)
    par.engine.parallel = True                                # the prange kernels
    assert same_traj(run(par, 130), a)
    env = NertzSelfPlayVecEnv(6, seed=5, **kw)
    run(env, 20, action_seed=9)
    assert env.seed(5) == [5] * 18                            # SB3: the next reset only
    assert same_traj(run(env, 130), a)
    # the Gymnasium face plays the same game: same observations, rewards and ends
    gym_env, rng = NertzSelfPlayGymVectorEnv(6, seed=0, **kw), np.random.default_rng(0)
    obs, infos = gym_env.reset(seed=5)
    assert np.array_equal(obs, a[0])
    for o, rew, d, _ in a[1:]:
        obs, r2, term, trunc, infos = gym_env.step(random_legal(rng, infos["action_mask"]))
        assert np.array_equal(obs, o) and np.array_equal(r2.astype(np.float32), rew)
        assert np.array_equal(term | trunc, d)


def snapshot(env):
    b = env.batch
    return (state_of(env.engine), env.engine.masks.copy(),
            env.engine.np_random.bit_generator.state, b.actions.copy(), b.prev.copy())


def test_bad_actions_name_the_row_and_change_nothing():
    env, twin = (NertzSelfPlayVecEnv(3, config=RulesConfig(**PAIRS), seed=0) for _ in range(2))
    assert env.config.illegal_move == "raise"
    env.reset(), twin.reset()
    masks = env.action_masks()
    acts = random_legal(np.random.default_rng(0), masks)
    bad = acts.copy()
    bad[9] = int(np.flatnonzero(~masks[9])[0])
    before = snapshot(env)
    cases = [(bad, rf"actions\[9\] \(table 2, seat 1\): action id {bad[9]} .*R31"),
             (acts.astype(float), "dtype"), (acts[:11], "shape"), (acts.astype(bool), "dtype"),
             (np.append(acts[:11], N_ACTIONS), str(N_ACTIONS))]
    for actions, part in cases:
        with pytest.raises(ValueError, match=part):
            env.step_async(actions)
        np.testing.assert_equal(snapshot(env), before)
    o1, r1, d1, _ = env.step(acts)
    o2, r2, d2, _ = twin.step(acts)
    assert np.array_equal(o1, o2) and np.array_equal(r1, r2) and np.array_equal(d1, d2)
    gym_env = NertzSelfPlayGymVectorEnv(3, config=RulesConfig(**PAIRS), seed=0)
    gym_env.reset(seed=0)
    with pytest.raises(ValueError, match=r"table 2, seat 1\): action id"):    # the same check
        gym_env.step(bad)
    # penalize: the illegal row's team pays, team mates alike
    env = NertzSelfPlayVecEnv(3, seed=0, illegal_move="penalize", penalty_points=5, **PAIRS)
    ref = NertzSelfPlayVecEnv(3, seed=0, illegal_move="penalize", penalty_points=5, **PAIRS)
    env.reset(), ref.reset()
    waits = acts.copy()
    waits[9] = 0                                              # an illegal id is played as Wait
    _, rewards, _, _ = env.step(bad)
    _, ref_rewards, _, _ = ref.step(waits)
    assert (rewards[8:10] == ref_rewards[8:10] - 5).all()    # seats 0, 1 of table 2: one team
    assert np.array_equal(np.delete(rewards, [8, 9]), np.delete(ref_rewards, [8, 9]))


def test_make_vec_reaches_the_batched_envs():
    env = gymnasium.make_vec("nertz_env/Nertz-v0", num_envs=6,
                             vectorization_mode="vector_entry_point", num_teams=3, max_ticks=50)
    assert type(env) is NertzGymVectorEnv and env.num_envs == 6 and env.config.num_teams == 3
    assert type(gymnasium.make_vec("nertz_env/Nertz-v0", num_envs=2)) is NertzGymVectorEnv
    obs, infos = env.reset(seed=0)
    assert obs.shape == (6, OBS_DIM) and infos["action_mask"].shape == (6, N_ACTIONS)
    sync = gymnasium.make_vec("nertz_env/Nertz-v0", num_envs=2, vectorization_mode="sync")
    assert isinstance(sync, gymnasium.vector.SyncVectorEnv)     # still N NertzGymEnv
    sync.close()
    selfplay = gymnasium.make_vec("nertz_env/NertzSelfPlay-v0", num_envs=8, num_teams=2,
                                  reward="relative", seed=3)
    assert type(selfplay) is NertzSelfPlayGymVectorEnv
    assert selfplay.num_envs == 8 and selfplay.n_tables == 4 and selfplay.batch.relative
    obs, infos = selfplay.reset()
    assert obs.shape == (8, OBS_DIM) and infos["action_mask"].shape == (8, N_ACTIONS)
    assert np.array_equal(obs, NertzSelfPlayGymVectorEnv(4, num_teams=2, seed=3).reset()[0])
    for bad in (7, 0, 2.0):
        with pytest.raises(ValueError, match="multiple of the 2 seats"):
            gymnasium.make_vec("nertz_env/NertzSelfPlay-v0", num_envs=bad, num_teams=2)
    with pytest.raises(ValueError, match="unknown keyword"):
        gymnasium.make_vec("nertz_env/NertzSelfPlay-v0", num_envs=4, opponents="greedy")


def test_maskable_ppo_trains_one_policy_on_every_seat():
    sb3_contrib = pytest.importorskip("sb3_contrib")
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        env = NertzSelfPlayVecEnv(4, seed=0, num_teams=2, max_ticks=40)
        model = sb3_contrib.MaskablePPO("MlpPolicy", env, n_steps=32, batch_size=128,
                                        n_epochs=1, seed=0, verbose=0,
                                        policy_kwargs=dict(net_arch=[32]))
        model.learn(total_timesteps=512)
    finally:
        torch.set_num_threads(threads)
    assert model.num_timesteps == 512
    episodes = list(model.ep_info_buffer)       # SB3 read info["episode"] of every seat's row
    assert len(episodes) >= 8 and all(e["l"] == 40 for e in episodes)
