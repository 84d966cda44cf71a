"""RLlib compatibility of the PettingZoo ParallelEnv: RLlib's own multi-agent env checker
(ray.rllib.utils.pre_checks.env.check_multiagent_environments) on ParallelPettingZooEnv for 2,
4 and 8 teams and a table with a two-player team, whole episodes through the wrapper, and the
README's PPO config. Skipped where Ray is not installed (CI does not install it); no Ray
cluster is started.
"""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("ray.rllib")

from ray.rllib.env.multi_agent_env import MultiAgentEnv  # noqa: E402
from ray.rllib.env.wrappers.pettingzoo_env import ParallelPettingZooEnv  # noqa: E402
from ray.rllib.utils.pre_checks.env import check_multiagent_environments  # noqa: E402

from nertz_env import nertz_v0  # noqa: E402

TABLES = {
    "2teams": dict(num_teams=2),
    "4teams": dict(num_teams=4),
    "8teams": dict(num_teams=8),
    "pair": dict(num_teams=2, team_sizes=(2, 1)),
}


@pytest.mark.parametrize("kw", list(TABLES.values()), ids=list(TABLES))
def test_rllib_multiagent_checker(kw):
    env = ParallelPettingZooEnv(nertz_v0.parallel_env(max_ticks=60, **kw))
    assert isinstance(env, MultiAgentEnv)
    seats = env.par_env.config.num_seats
    assert sorted(env.possible_agents) == [f"player_{i}" for i in range(seats)]
    check_multiagent_environments(env)          # raises ValueError on any problem


@pytest.mark.parametrize("kw", [TABLES["4teams"], TABLES["pair"]], ids=["4teams", "pair"])
def test_rllib_wrapper_plays_whole_episodes(kw):
    """Random legal actions through the wrapper until "__all__" ends the episode, twice; every
    observation lies in the wrapper's space."""
    env = ParallelPettingZooEnv(nertz_v0.parallel_env(max_ticks=60, **kw))
    rng = np.random.default_rng(0)
    for episode in range(2):
        obs, infos = env.reset(seed=episode)
        assert set(obs) == set(infos) == set(env.possible_agents)
        for _ in range(61):
            for a, o in obs.items():
                assert env.observation_space[a].contains(o), a
            actions = {a: int(rng.choice(np.flatnonzero(o["action_mask"]))) for a, o in obs.items()}
            obs, rewards, terms, truncs, infos = env.step(actions)
            assert set(rewards) == set(env.possible_agents)
            assert all(isinstance(r, float) for r in rewards.values())
            if terms["__all__"] or truncs["__all__"]:
                break
        assert terms["__all__"] or truncs["__all__"]     # max_ticks=60 ends every hand


def test_readme_ppo_config_builds():
    """The README's RLlib example up to the algorithm config (building the algorithm would
    start a local Ray instance; that was verified by hand, see the README)."""
    from ray.rllib.algorithms.ppo import PPOConfig
    from ray.rllib.connectors.env_to_module import FlattenObservations
    from ray.tune.registry import register_env

    register_env("nertz", lambda cfg: ParallelPettingZooEnv(nertz_v0.parallel_env(**cfg)))
    flat = lambda env, spaces=None, device=None: FlattenObservations(multi_agent=True)  # noqa: E731
    config = (PPOConfig().environment("nertz", env_config={"num_teams": 2, "max_ticks": 200})
              .env_runners(num_env_runners=0, env_to_module_connector=flat)
              .multi_agent(policies={"shared"}, policy_mapping_fn=lambda aid, ep, **kw: "shared")
              .training(train_batch_size_per_learner=400, minibatch_size=200, num_epochs=1))
    assert config.env == "nertz" and set(config.policies) == {"shared"}
    assert config.policy_mapping_fn("player_1", None) == "shared"
