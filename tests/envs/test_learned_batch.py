"""Learned agents in tournaments: one act_batch call per agent and tick over every table and
seat it holds, the same moves as SB3's predict row by row, and FrozenPolicy's direct forward
(the network without predict's overhead) giving predict's ids and draws."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

from agents import make_agent
from agents.base import Agent
from agents.arena.tournament import run_tournament
from nertz_env import RulesConfig
from nertz_env.envs.opponents import FrozenPolicy
from nertz_env.envs.spaces import SpacesOnlyEnv

sb3c = pytest.importorskip("sb3_contrib")
th = pytest.importorskip("torch")

OBS, N = 791, 322


def _model(cls=None, seed=0):
    cls = cls or sb3c.MaskablePPO
    return cls("MlpPolicy", SpacesOnlyEnv(), policy_kwargs={"net_arch": [32, 32]}, n_steps=8,
               batch_size=8, seed=seed, device="cpu")


@pytest.fixture(scope="module")
def model_path(tmp_path_factory):
    path = tmp_path_factory.mktemp("learned") / "tiny.zip"
    _model().save(path)
    return path


class PredictRows(Agent):
    """The reference: SB3's own predict, one row at a time (Agent.act_batch loops `act`)."""

    def __init__(self, path, name):
        self.model = sb3c.MaskablePPO.load(str(path), device="cpu")
        self.name = name

    def act(self, observation, action_mask):
        act, _ = self.model.predict(observation, action_masks=np.asarray(action_mask, bool),
                                    deterministic=True)
        return int(act)


class Recorder(Agent):
    """An agent's act_batch calls as the runner makes them: inputs, outputs, torch threads."""

    def __init__(self, inner):
        self.inner, self.name = inner, inner.name
        self.calls = []

    def act_batch(self, observations, action_masks):
        out = self.inner.act_batch(observations, action_masks)
        self.calls.append((observations, np.array(action_masks), out.copy(),
                           th.get_num_threads()))
        return out


def _random_batch(n, seed):
    rng = np.random.default_rng(seed)
    obs = (rng.random((n, OBS), dtype=np.float32) * (rng.random((n, OBS)) < 0.1))
    masks = (rng.random((n, N)) < 0.05).astype(np.int8)
    masks[:, 0] = 1                                   # Wait is always legal
    masks[:3] = 0
    masks[:3, 7] = 1                                  # one legal move
    obs[3:6] = obs[3]                                 # repeated rows
    return obs.astype(np.float32), masks


@pytest.mark.parametrize("masked", [True, False])
def test_direct_forward_gives_predicts_ids_and_draws(masked):
    """FrozenPolicy runs a stock PPO / MaskablePPO policy itself: deterministic ids equal
    model.predict's on every row, and draws equal predict's under the same torch seed."""
    from stable_baselines3 import PPO

    model = _model(None if masked else PPO)
    policy = FrozenPolicy(model, on_illegal="pass")
    assert policy.direct is not None and policy.masked == masked
    obs, masks = _random_batch(300, seed=1)
    kw = {"action_masks": masks.astype(bool)} if masked else {}
    want, _ = model.predict(obs, deterministic=True, **kw)
    np.testing.assert_array_equal(policy.act_batch(obs, masks), want)
    policy.deterministic = False
    th.manual_seed(11)
    drawn = policy.act_batch(obs, masks)
    th.manual_seed(11)
    want, _ = model.predict(obs, deterministic=False, **kw)
    np.testing.assert_array_equal(drawn, want)
    assert len(set(drawn.tolist())) > 10                      # it did draw


def test_near_ties_are_settled_as_predict_does():
    """Logits 1 ulp apart are equal after predict's float32 normalisations, so its argmax is
    the first of them, not the larger logit: the direct path must not shortcut those rows."""
    model = _model()
    net = model.policy.action_net
    with th.no_grad():
        net.weight.zero_()
        net.bias.zero_()
        net.bias[5] = 0.3
        net.bias[7] = float(np.nextafter(np.float32(0.3), np.float32(1)))     # 1 ulp more
        net.bias[9] = 0.2999
    obs, masks = _random_batch(6, seed=2)
    masks[:] = 0
    masks[:, [0, 5, 7, 9]] = 1
    masks[3, 5] = 0                                   # row 3: 7 alone on top
    want, _ = model.predict(obs, action_masks=masks.astype(bool), deterministic=True)
    assert want.tolist() == [5, 5, 5, 7, 5, 5]
    np.testing.assert_array_equal(FrozenPolicy(model).act_batch(obs, masks), want)


def test_read_only_observations_need_no_copy_warning():
    """An observation array that is not writable (a gym buffer) is copied, not warned about."""
    policy = FrozenPolicy(_model())
    obs, masks = _random_batch(4, seed=3)
    obs.setflags(write=False)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert policy.act_batch(obs, masks).shape == (4,)


def test_tournament_equals_predict_row_by_row(model_path):
    """Whole tournaments, the learned agent batched over every table and seat it holds, equal
    byte for byte those of the same model played through SB3's predict one row at a time:
    4 teams with three bots, and 4 teams where it holds two seats of every table."""
    spec = f"ppo:{model_path}"
    config = RulesConfig(num_teams=4, max_ticks=120)
    for bots in (["heuristic", "greedy", "random"], ["heuristic"]):
        fast = run_tournament([spec, *bots], config=config, deals=2, seed=4, progress=False)
        ref = run_tournament([PredictRows(model_path, spec), *bots], config=config, deals=2,
                             seed=4, progress=False)
        assert fast.names == ref.names
        for col in ("agent", "score", "called", "win"):
            np.testing.assert_array_equal(getattr(fast.records, col),
                                          getattr(ref.records, col))
        np.testing.assert_array_equal(fast.ticks, ref.ticks)


def test_one_call_per_tick_with_every_seat_the_agent_holds(model_path):
    """The runner calls a learned agent once per tick with the rows of every table and seat
    it holds (two per table here), hands it fresh arrays it may keep, and the ids it chose
    are PPOAgent.act's row by row; torch ran on one thread and is restored afterwards."""
    agent = Recorder(make_agent(f"ppo:{model_path}"))
    config = RulesConfig(num_teams=4, max_ticks=60)
    before = th.get_num_threads()
    th.set_num_threads(2)
    try:
        r = run_tournament([agent, "greedy"], config=config, deals=2, seed=6, progress=False)
        assert th.get_num_threads() == 2
    finally:
        th.set_num_threads(before)
    seats = (r.records.agent == 0).sum(axis=1)                # the agent's seats per table
    assert seats.min() == 2 and len(r.records) > 1            # every table, several seats
    assert len(agent.calls) == r.ticks.max()                  # one batch: one call a tick
    assert sum(len(c[0]) for c in agent.calls) == int((r.ticks * seats).sum())
    assert {c[3] for c in agent.calls} == {1}
    first = agent.calls[0][0]
    assert not any(np.shares_memory(first, c[0]) for c in agent.calls[1:])
    single = make_agent(f"ppo:{model_path}")
    for obs, masks, out, _ in agent.calls[::7]:
        assert [single.act(o, m) for o, m in zip(obs, masks)] == out.tolist()


def test_sampling_agents_repeat_their_draws(model_path):
    """deterministic=false draws from torch's global generator, as SB3 does: loading the
    model (a spec) seeds it with the model's own seed, so a spec's tournament repeats; an
    agent object repeats under the same torch seed, and plays otherwise under another."""
    spec = f"ppo:{model_path},deterministic=false"
    config = RulesConfig(max_ticks=80)

    def play(agent, torch_seed=None):
        if torch_seed is not None:
            th.manual_seed(torch_seed)
        r = run_tournament([agent, "greedy"], config=config, deals=3, seed=2, progress=False)
        return np.concatenate([r.records.score.ravel(), r.ticks])

    np.testing.assert_array_equal(play(spec, 5), play(spec, 6))
    agent = make_agent(spec)
    a, b, c = play(agent, 0), play(agent, 0), play(agent, 1)
    np.testing.assert_array_equal(a, b)
    assert not np.array_equal(a, c)


def test_learned_tournament_benchmark_runs(capsys):
    """benchmarks/learned_tournament.py end to end on a tiny net and two deals (no speed is
    judged here): one table row and a JSON line with the hands played."""
    import json

    from benchmarks import learned_tournament

    assert learned_tournament.main(["--deals", "2", "--net", "8,8", "--instead", "greedy"]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert out[2].startswith("| ppo [8, 8] | heuristic") and out[3].startswith("| greedy | ")
    last = json.loads(out[-1])
    assert "--deals 2 --net 8,8" in last["command"] and out[4].startswith("ratio of medians")
    assert [r["hands"] for r in last["runs"]] == [24, 24]
    speed = {r["lineup"]: r["hands_per_s"] for r in last["runs"]}
    assert last["ratio"] == speed["learned"] / speed["instead"]


def test_learned_tournament_benchmark_at_another_table_size(capsys):
    """--teams N seats the learned agent among the first N - 1 bots: the row names them, the
    JSON line says the table size and every hand was played at it."""
    import json

    from benchmarks import learned_tournament

    assert learned_tournament.main(["--deals", "2", "--net", "8,8", "--teams", "3"]) == 0
    out = capsys.readouterr().out.strip().splitlines()
    assert out[2].startswith("| ppo [8, 8] | heuristic, greedy | ")
    last = json.loads(out[-1])
    assert last["teams"] == 3 and last["runs"][0]["teams"] == 3 and last["runs"][0]["hands"] > 0
