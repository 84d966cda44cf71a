"""The ecosystem's own clients drive `nertz_v0` unmodified: TorchRL's `PettingZooWrapper`,
Tianshou's `PettingZooEnv` and `Collector`, SuperSuit's `pettingzoo_env_to_vec_env_v1` and
`concat_vec_envs_v1`, RLlib's `ParallelPettingZooEnv` (its multi-agent checker, whole
episodes, and one `train()` iteration of the README's PPO example).

Each client's output is compared step by step with a reference `nertz_v0.parallel_env` given
the same seed and actions, and every action the clients pick is checked against the
reference's own mask.

The clients come from the `clients` extra (`pip install -e ".[clients]"` after the CPU torch;
.ci/run installs it and sets NERTZ_REQUIRE_CLIENTS=1: there a missing client fails its tests.
Elsewhere (the README's test command on a machine without the extra) they are skipped with
the install command as the reason.
"""
from __future__ import annotations

import importlib
import math
import os
import sys

import numpy as np
import pytest

from nertz_env import nertz_v0

REQUIRED = os.environ.get("NERTZ_REQUIRE_CLIENTS") == "1"     # .ci/run: never skipped

TABLES = {
    "2teams": {"num_teams": 2, "max_ticks": 30},
    "pair": {"num_teams": 2, "team_sizes": (2, 1), "max_ticks": 30},   # a two-player team: roles
}
PAIR = TABLES["pair"]
# the clients extra installs Tianshou 2 only where it exists: Python 3.11+
needs_tianshou = pytest.mark.skipif(sys.version_info < (3, 11), reason="Tianshou 2 needs Python 3.11+")


def client(module: str):
    """Import a client module: a missing one skips the test, or fails it under
    NERTZ_REQUIRE_CLIENTS=1 (CI)."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        why = (f"{module} is not installed ({e}): pip install -e '.[clients]' after the CPU "
               f"torch (README)")
        if REQUIRED:
            pytest.fail(why)
        pytest.skip(why)


def legal_random(rng, mask) -> int:
    return int(rng.choice(np.flatnonzero(mask)))


def stacked(obs: dict, agents, key: str) -> np.ndarray:
    return np.stack([obs[a][key] for a in agents])


# --------------------------------------------------------------------------- TorchRL
@pytest.mark.parametrize("kw", list(TABLES.values()), ids=list(TABLES))
def test_torchrl_wrapper_specs_and_masked_rollout(kw):
    """check_env_specs passes; a rollout whose policy samples from the mask TorchRL hands it
    takes only legal actions and matches a reference env step for step, across two
    auto-resets."""
    torch = client("torch")
    pz = client("torchrl.envs.libs.pettingzoo")
    utils = client("torchrl.envs.utils")
    MaskedCategorical = client("torchrl.modules").MaskedCategorical

    env = pz.PettingZooWrapper(nertz_v0.parallel_env(**kw), seed=0)
    ref = nertz_v0.parallel_env(**kw)
    agents = ref.possible_agents
    assert env.group_map == {"player": agents}
    assert env.full_action_spec["player", "action"].shape == (len(agents),)
    assert set(env.observation_spec["player", "info"].keys()) == {"team", "role", "applied",
                                                                 "tick", "hand"}
    utils.check_env_specs(env, seed=0)          # random actions drawn from the masked spec

    torch.manual_seed(0)

    def policy(td):
        mask = td["player", "action_mask"]
        td["player", "action"] = MaskedCategorical(logits=torch.zeros(mask.shape), mask=mask).sample()
        return td

    td = env.reset(seed=5)
    steps = 70                                  # max_ticks=30: two hands end, two auto-resets
    rollout = env.rollout(steps, policy=policy, auto_reset=False, tensordict=td,
                          break_when_any_done=False)
    assert rollout.batch_size == (steps,)

    ref_obs, _ = ref.reset(seed=5)
    ends = 0
    for t in range(steps):
        step = rollout[t]
        mask = stacked(ref_obs, agents, "action_mask")
        assert np.array_equal(step["player", "observation", "observation"].numpy(),
                              stacked(ref_obs, agents, "observation")), t
        assert np.array_equal(step["player", "action_mask"].numpy(), mask.astype(bool)), t
        acts = step["player", "action"].tolist()
        assert all(mask[i, a] == 1 for i, a in enumerate(acts)), (t, acts)
        ref_obs, rew, term, trunc, infos = ref.step(dict(zip(agents, acts)))
        nxt = step["next", "player"]
        assert np.array_equal(nxt["observation", "observation"].numpy(),
                              stacked(ref_obs, agents, "observation")), t
        assert nxt["reward"].squeeze(-1).tolist() == [rew[a] for a in agents], t
        assert nxt["terminated"].squeeze(-1).tolist() == [term[a] for a in agents], t
        assert nxt["truncated"].squeeze(-1).tolist() == [trunc[a] for a in agents], t
        for key in ("team", "role", "tick", "hand"):
            assert nxt["info", key].tolist() == [infos[a][key] for a in agents], (t, key)
        if any(term.values()) or any(trunc.values()):
            ends += 1
            ref_obs, _ = ref.reset()            # unseeded, like TorchRL's: the same next deal
    assert ends >= 2


def test_torchrl_wrapper_on_the_aec_env():
    """The AEC form under PettingZooWrapper(use_mask=True): check_env_specs passes, and a random
    rollout acts in seat order, sees the reference env's observations and masks, and takes
    only legal actions; every 10-tick hand (20 AEC steps) ends and is reset."""
    client("torch")
    pz = client("torchrl.envs.libs.pettingzoo")
    utils = client("torchrl.envs.utils")
    kw = {"num_teams": 2, "max_ticks": 10}      # no Nertz call fits in 10 ticks: 20 steps a hand

    env = pz.PettingZooWrapper(nertz_v0.env(**kw), use_mask=True, seed=0)
    ref = nertz_v0.parallel_env(**kw)
    agents = ref.possible_agents
    assert env.group_map == {a: [a] for a in agents}
    utils.check_env_specs(env, seed=0)

    steps = 50
    rollout = env.rollout(steps, auto_reset=False, tensordict=env.reset(seed=5),
                          break_when_any_done=False)
    ref_obs, _ = ref.reset(seed=5)
    actions = {}
    for t in range(steps):
        step = rollout[t]
        agent = agents[t % 2]
        assert [step[a, "mask"].item() for a in agents] == [a == agent for a in agents], t
        mask = ref_obs[agent]["action_mask"]
        assert np.array_equal(step[agent, "observation", "observation"][0].numpy(),
                              ref_obs[agent]["observation"]), t
        assert np.array_equal(step[agent, "action_mask"][0].numpy(), mask.astype(bool)), t
        actions[agent] = step[agent, "action"].item()
        assert mask[actions[agent]] == 1, (t, actions[agent])
        if t % 2 == 1:
            ref_obs, *_ = ref.step(actions)
        assert step["next", "done"].item() == (t % 20 == 19), t
        if t % 20 == 19:
            ref_obs, _ = ref.reset()


# --------------------------------------------------------------------------- Tianshou
@needs_tianshou
def test_tianshou_pettingzoo_env_plays_a_hand():
    """Tianshou's PettingZooEnv over the AEC env: agent ids in seat order, obs and mask equal
    to the reference env's, rewards after every tick, the hand truncated at max_ticks."""
    ts_env = client("tianshou.env")
    env = ts_env.PettingZooEnv(nertz_v0.env(**PAIR))
    ref = nertz_v0.parallel_env(**PAIR)
    agents = ref.possible_agents
    assert env.agents == agents

    obs, info = env.reset(seed=3)
    ref_obs, ref_infos = ref.reset(seed=3)
    assert info == ref_infos[agents[0]]
    rng = np.random.default_rng(0)
    done, ticks = False, 0
    while not done:
        actions = {}
        for a in agents:                        # one AEC cycle = one tick of the table
            assert obs["agent_id"] == a
            assert np.array_equal(obs["obs"], ref_obs[a]["observation"])
            assert np.array_equal(obs["mask"], ref_obs[a]["action_mask"] == 1)
            actions[a] = legal_random(rng, obs["mask"])
            obs, rew, term, trunc, info = env.step(actions[a])
        ref_obs, ref_rew, ref_term, ref_trunc, _ = ref.step(actions)
        ticks += 1
        assert rew == [ref_rew[a] for a in agents]
        assert (term, trunc) == (ref_term[obs["agent_id"]], ref_trunc[obs["agent_id"]])
        done = term or trunc
    assert ticks == PAIR["max_ticks"] or term   # a hand ends by its Nertz call or max_ticks


@needs_tianshou
def test_tianshou_collector_random_masked_policies():
    """Tianshou's Collector with one MARL random policy per agent on two vectorized AEC envs:
    whole episodes are collected, and every stored action is legal under its stored mask."""
    ts_env = client("tianshou.env")
    ts_data = client("tianshou.data")
    marl = client("tianshou.algorithm.multiagent.marl")
    rand = client("tianshou.algorithm.random")

    def make():
        return ts_env.PettingZooEnv(nertz_v0.env(num_teams=2, max_ticks=30))

    proto = make()
    policy = marl.MultiAgentPolicy({
        a: rand.MARLRandomDiscreteMaskedOffPolicyAlgorithm(proto.action_space).policy
        for a in proto.agents})
    venv = ts_env.DummyVectorEnv([make, make])
    buffer = ts_data.VectorReplayBuffer(total_size=400, buffer_num=2)
    collector = ts_data.Collector(policy, venv, buffer)
    stats = collector.collect(n_step=200, reset_before_collect=True)
    assert stats.n_collected_steps == 200
    assert stats.n_collected_episodes >= 2      # 60 AEC steps a hand: 100 steps per env
    batch, _ = buffer.sample(0)                 # everything stored
    assert len(batch) == 200
    mask, act = np.asarray(batch.obs.mask), np.asarray(batch.act)
    assert mask.shape == (200, 322) and not mask.all()
    assert mask[np.arange(len(act)), act].all()
    assert set(batch.obs.agent_id) == set(proto.agents)


# --------------------------------------------------------------------------- SuperSuit
def test_supersuit_markov_vector_env_matches_the_parallel_env():
    """pettingzoo_env_to_vec_env_v1: one vector slot per agent, observations stacked in agent
    order, rewards/terminations/truncations per slot, automatic reset with the terminal
    observation in infos; step for step equal to the reference env."""
    ss = client("supersuit")
    venv = ss.pettingzoo_env_to_vec_env_v1(nertz_v0.parallel_env(**PAIR))
    ref = nertz_v0.parallel_env(**PAIR)
    agents = ref.possible_agents
    assert venv.num_envs == len(agents) == 3
    assert venv.observation_space == ref.observation_space(agents[0])

    obs, infos = venv.reset(seed=0)
    ref_obs, ref_infos = ref.reset(seed=0)
    assert infos == [ref_infos[a] for a in agents]
    assert [i["team"] for i in infos] == [0, 0, 1]
    rng = np.random.default_rng(1)
    ends = 0
    for t in range(70):
        for key in ("observation", "action_mask"):
            assert np.array_equal(obs[key], stacked(ref_obs, agents, key)), (t, key)
        acts = np.array([legal_random(rng, m) for m in obs["action_mask"]])
        obs, rew, term, trunc, infos = venv.step(acts)
        ref_obs, ref_rew, ref_term, ref_trunc, ref_infos = ref.step(dict(zip(agents, acts.tolist())))
        assert rew.dtype == np.float32 and rew.tolist() == [ref_rew[a] for a in agents]
        assert term.tolist() == [ref_term[a] for a in agents]
        assert trunc.tolist() == [ref_trunc[a] for a in agents]
        if (term | trunc).any():
            ends += 1
            for i, a in enumerate(agents):
                assert np.array_equal(infos[i]["terminal_observation"]["observation"],
                                      ref_obs[a]["observation"])
            ref_obs, ref_infos = ref.reset()    # SuperSuit resets without a seed
            assert [i["tick"] for i in infos] == [0, 0, 0]
        else:
            assert [i["tick"] for i in infos] == [ref_infos[a]["tick"] for a in agents]
    assert ends == 2                            # max_ticks=30 over 70 steps


def test_supersuit_concat_vec_envs_copies_are_independent():
    """concat_vec_envs_v1 of two copies (gymnasium and stable_baselines3 base classes): copy i
    is seeded seed + i, so the copies deal different hands, each equal to a reference env's;
    legal actions step both."""
    ss = client("supersuit")
    venv = ss.pettingzoo_env_to_vec_env_v1(nertz_v0.parallel_env(**PAIR))
    cat = ss.concat_vec_envs_v1(venv, 2, num_cpus=0, base_class="gymnasium")
    assert cat.num_envs == 6
    obs, infos = cat.reset(seed=10)
    assert len(infos) == 6
    for copy, seed in enumerate((10, 11)):
        ref_obs, _ = nertz_v0.parallel_env(**PAIR).reset(seed=seed)
        assert np.array_equal(obs["observation"][3 * copy:3 * copy + 3],
                              stacked(ref_obs, sorted(ref_obs), "observation"))
    assert not np.array_equal(obs["observation"][:3], obs["observation"][3:])
    rng = np.random.default_rng(2)
    for _ in range(31):                         # through one automatic reset
        acts = np.array([legal_random(rng, m) for m in obs["action_mask"]])
        obs, rew, term, trunc, infos = cat.step(acts)
        assert rew.shape == term.shape == trunc.shape == (6,)
    assert obs["observation"].shape == (6, 791)

    vec_env = client("stable_baselines3.common.vec_env")
    sb3 = ss.concat_vec_envs_v1(venv, 2, num_cpus=0, base_class="stable_baselines3")
    assert isinstance(sb3, vec_env.VecEnv) and sb3.num_envs == 6
    obs = sb3.reset()
    for _ in range(31):
        obs, rew, dones, infos = sb3.step(np.array([legal_random(rng, m) for m in obs["action_mask"]]))
    assert dones.shape == (6,) and len(infos) == 6


# --------------------------------------------------------------------------- RLlib
RLLIB_TABLES = {
    "2teams": {"num_teams": 2},
    "4teams": {"num_teams": 4},
    "8teams": {"num_teams": 8},
    "pair": {"num_teams": 2, "team_sizes": (2, 1)},
}


@pytest.fixture(scope="module")
def ray_local():
    """One small local Ray instance for this module's RLlib training test."""
    ray = client("ray")
    ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False, ignore_reinit_error=True)
    yield ray
    ray.shutdown()


@pytest.mark.parametrize("kw", list(RLLIB_TABLES.values()), ids=list(RLLIB_TABLES))
def test_rllib_multiagent_checker(kw):
    """RLlib's own check_multiagent_environments on ParallelPettingZooEnv (no Ray instance)."""
    ParallelPettingZooEnv = client("ray.rllib.env.wrappers.pettingzoo_env").ParallelPettingZooEnv
    check = client("ray.rllib.utils.pre_checks.env").check_multiagent_environments

    env = ParallelPettingZooEnv(nertz_v0.parallel_env(max_ticks=60, **kw))
    seats = env.par_env.config.num_seats
    assert sorted(env.possible_agents) == [f"player_{i}" for i in range(seats)]
    check(env)                                  # raises ValueError on any problem


@pytest.mark.parametrize("kw", [RLLIB_TABLES["4teams"], RLLIB_TABLES["pair"]], ids=["4teams", "pair"])
def test_rllib_wrapper_plays_whole_episodes(kw):
    """Random legal actions through the wrapper until "__all__" ends the episode, twice; every
    observation lies in the wrapper's space."""
    ParallelPettingZooEnv = client("ray.rllib.env.wrappers.pettingzoo_env").ParallelPettingZooEnv
    env = ParallelPettingZooEnv(nertz_v0.parallel_env(max_ticks=60, **kw))
    rng = np.random.default_rng(0)
    for episode in range(2):
        obs, infos = env.reset(seed=episode)
        assert set(obs) == set(infos) == set(env.possible_agents)
        for _ in range(61):
            for a, o in obs.items():
                assert env.observation_space[a].contains(o), a
            actions = {a: legal_random(rng, o["action_mask"]) for a, o in obs.items()}
            obs, rewards, terms, truncs, infos = env.step(actions)
            assert set(rewards) == set(env.possible_agents)
            assert all(isinstance(r, float) for r in rewards.values())
            if terms["__all__"] or truncs["__all__"]:
                break
        assert terms["__all__"] or truncs["__all__"]     # max_ticks=60 ends every hand


def readme_ppo_config():
    """The README's RLlib example, up to the config (keep the two in step)."""
    PPOConfig = client("ray.rllib.algorithms.ppo").PPOConfig
    FlattenObservations = client("ray.rllib.connectors.env_to_module").FlattenObservations
    ParallelPettingZooEnv = client("ray.rllib.env.wrappers.pettingzoo_env").ParallelPettingZooEnv
    register_env = client("ray.tune.registry").register_env

    register_env("nertz", lambda cfg: ParallelPettingZooEnv(nertz_v0.parallel_env(**cfg)))
    flat = lambda env, spaces=None, device=None: FlattenObservations(multi_agent=True)
    return (PPOConfig().environment("nertz", env_config={"num_teams": 2, "max_ticks": 200})
            .env_runners(num_env_runners=0, env_to_module_connector=flat)
            .multi_agent(policies={"shared"}, policy_mapping_fn=lambda aid, ep, **kw: "shared")
            .training(train_batch_size_per_learner=400, minibatch_size=200, num_epochs=1))


def test_rllib_readme_ppo_example_trains_one_iteration(ray_local):
    """The README's example builds the algorithm and runs one train() iteration: 400 env steps
    of two whole 200-tick hands are sampled through the wrapper, and the shared module's
    weights change."""
    config = readme_ppo_config()
    assert config.policy_mapping_fn("player_1", None) == "shared"
    algo = config.build_algo()
    try:
        before = {k: v.detach().clone() for k, v in algo.get_module("shared").state_dict().items()}
        result = algo.train()
        after = algo.get_module("shared").state_dict()
    finally:
        algo.stop()
    runners = result["env_runners"]
    assert runners["num_env_steps_sampled"] == 400
    assert runners["num_episodes"] == 2 and runners["episode_len_mean"] == 200
    assert math.isfinite(runners["episode_return_mean"])
    assert set(before) == set(after)
    assert any(not np.array_equal(before[k].numpy(), after[k].detach().numpy()) for k in before)
