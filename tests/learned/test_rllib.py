"""The RLlib recipe (train/rllib_ppo.py) and the `rllib:` agent (agents/learned/rllib.py): one
PPO iteration on a local Ray instance for --policy shared and per-team with the masking
RLModule, zero illegal picks and penalties over every sampled agent step, the saved module
masking all three forward passes, and the checkpoint entered in a tournament.

ray[rllib] and torch come from the `clients` extra; under NERTZ_REQUIRE_CLIENTS=1 (.ci/run)
a missing one fails these tests instead of skipping them.
"""
from __future__ import annotations

import importlib
import json
import math
import os
import subprocess
import sys

import numpy as np
import pytest

from agents.registry import make_agent
from nertz_env import nertz_v0
from train import rllib_ppo

REQUIRED = os.environ.get("NERTZ_REQUIRE_CLIENTS") == "1"     # .ci/run: never skipped
pytestmark = pytest.mark.filterwarnings(   # RLlib re-registers its env wrapper per build
    "ignore:.*Overriding environment rllib-multi-agent-env-v0")
TICKS = 40                                     # short hands: 200 env steps hold 5 of them
BATCH = 200


def client(module: str):
    """Import a client module: a missing one skips the test, or fails it under
    NERTZ_REQUIRE_CLIENTS=1 (CI)."""
    try:
        return importlib.import_module(module)
    except ImportError as e:
        why = f"{module} is not installed ({e}): pip install -e '.[clients]' (README)"
        if REQUIRED:
            pytest.fail(why)
        pytest.skip(why)


@pytest.fixture(scope="module")
def ray_local():
    ray = client("ray")
    client("ray.rllib")
    client("torch").set_num_threads(1)
    ray.init(num_cpus=1, include_dashboard=False, log_to_driver=False, ignore_reinit_error=True)
    yield ray
    ray.shutdown()


@pytest.fixture(scope="module", params=rllib_ppo.POLICIES)
def trained(request, ray_local, tmp_path_factory):
    """(policy, the iteration's summary, checkpoint dir) of one train() iteration."""
    policy = request.param
    config = rllib_ppo.build_config(policy, 2, seed=0, max_ticks=TICKS, train_batch=BATCH,
                                    minibatch=100, epochs=1)
    rows, ckpt = rllib_ppo.train(config, 1, tmp_path_factory.mktemp(policy), log=None)
    return policy, rows[0], ckpt


def spec_of(policy, ckpt, pid="team1") -> str:
    return f"rllib:{ckpt}" + (f",policy={pid}" if policy == "per-team" else "")


def positions(n_steps=30, seed=0):
    """Observations and masks (few legal moves each) of real positions: random legal play."""
    env = nertz_v0.parallel_env(num_teams=2)
    obs, _ = env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    rows = []
    for _ in range(n_steps):
        rows += [(o["observation"], o["action_mask"]) for o in obs.values()]
        acts = {a: int(rng.choice(np.flatnonzero(o["action_mask"]))) for a, o in obs.items()}
        obs, *_ = env.step(acts)
    o, m = map(np.stack, zip(*rows))
    return o, m


def test_one_iteration_never_picks_an_illegal_move(trained):
    """Every agent step of the iteration's 200 env steps is checked: no id off the mask, no
    R31 penalty on the engine."""
    policy, row, ckpt = trained
    assert set(row["module_return_mean"]) == ({"shared"} if policy == "shared" else
                                              {"team0", "team1"})
    assert row["env_steps"] == BATCH and row["episodes"] >= BATCH // TICKS - 1
    assert row["agent_steps_checked"] == 2 * BATCH           # two seats, every tick
    assert row["illegal_picks"] == 0
    assert row["penalties"] == 0
    assert math.isfinite(row["episode_return_mean"])
    saved = json.loads((ckpt.parent / "results.json").read_text())
    assert saved == [row]


def test_saved_module_masks_every_forward_pass(trained):
    """The checkpoint's module gives FLOAT_MIN to every illegal id in forward_inference,
    forward_exploration and forward_train; sampling its distribution stays legal, also with
    masks that allow Wait and one other move only."""
    torch = client("torch")
    FLOAT_MIN = client("ray.rllib.utils.torch_utils").FLOAT_MIN
    Columns = client("ray.rllib.core.columns").Columns
    policy, _, ckpt = trained
    agent = make_agent(spec_of(policy, ckpt))
    obs, masks = positions()
    rng = np.random.default_rng(1)
    narrow = np.zeros_like(masks)
    narrow[:, 0] = 1
    for i, m in enumerate(masks):               # Wait plus one of the position's other moves
        others = np.flatnonzero(m[1:]) + 1
        if len(others):
            narrow[i, rng.choice(others)] = 1
    for mask in (masks, narrow):
        assert (mask.sum(1) < 12).all()
        batch = {Columns.OBS: {"observation": torch.from_numpy(obs),
                               "action_mask": torch.from_numpy(mask)}}
        illegal = torch.from_numpy(mask == 0)
        with torch.no_grad():
            for forward in (agent.module.forward_inference, agent.module.forward_exploration,
                            agent.module.forward_train):
                logits = forward(dict(batch))[Columns.ACTION_DIST_INPUTS]
                assert (logits[illegal] <= FLOAT_MIN / 2).all(), forward.__name__
                assert (logits[~illegal] > FLOAT_MIN / 2).all(), forward.__name__
            dist = agent.module.get_exploration_action_dist_cls().from_logits(logits)
            draws = torch.stack([dist.sample() for _ in range(200)]).numpy()
        assert mask[np.arange(len(mask)), draws].all()
        assert mask[np.arange(len(mask)), agent.act_batch(obs, mask)].all()


def test_checkpoint_loads_without_ray_and_plays_a_tournament(trained):
    """make_agent('rllib:...') in a fresh process: no Ray instance is started; greedy ids are
    legal int64; a short tournament against random gives finite results."""
    policy, _, ckpt = trained
    spec = spec_of(policy, ckpt)
    code = f"""
import json, numpy as np, ray
from agents.registry import make_agent
from agents.arena.tournament import run_tournament
from nertz_env.config import RulesConfig
from tests.learned.test_rllib import positions
agent = make_agent({spec!r})
obs, masks = positions(10)
ids = agent.act_batch(obs, masks)
assert ids.dtype == np.int64 and masks[np.arange(len(ids)), ids].all()
assert agent.act(obs[0], masks[0]) == ids[0]
res = run_tournament([{spec!r}, "random"], deals=2, seed=0, progress=False,
                     config=RulesConfig(num_teams=2, max_ticks=150))
assert not ray.is_initialized()
print(json.dumps([(r["agent"], r["points"], r["hands"]) for r in res.leaderboard]))
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False,
                         timeout=120, cwd=os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
    assert out.returncode == 0, out.stderr[-3000:]
    board = json.loads(out.stdout.strip().splitlines()[-1])
    assert {a for a, _, _ in board} == {spec, "random"}
    assert all(math.isfinite(p) and h == 4 for _, p, h in board)


def test_sampling_agent_is_seeded_and_legal(trained):
    policy, _, ckpt = trained
    obs, masks = positions(10)
    spec = spec_of(policy, ckpt) + ",deterministic=false"
    a, b = make_agent(spec, seed=3), make_agent(spec, seed=3)
    ids = a.act_batch(obs, masks)
    assert np.array_equal(ids, b.act_batch(obs, masks))
    assert masks[np.arange(len(ids)), ids].all()


def test_per_team_checkpoint_needs_a_policy_id(trained):
    policy, _, ckpt = trained
    if policy != "per-team":
        assert make_agent(f"rllib:{ckpt},policy=shared").policy_id == "shared"
        return
    with pytest.raises(ValueError, match="holds policies team0, team1: pick one with ,policy=ID"):
        make_agent(f"rllib:{ckpt}")
    with pytest.raises(ValueError, match="policy='team7' is not saved there"):
        make_agent(f"rllib:{ckpt},policy=team7")
    assert make_agent(f"rllib:{ckpt.parent},policy=team0").policy_id == "team0"   # --out dir


def test_bad_rllib_specs_are_value_errors(tmp_path):
    (tmp_path / "empty").mkdir()
    (tmp_path / "file").write_text("x")
    cases = {"rllib:": "write rllib:path",
             f"rllib:{tmp_path / 'missing'}": "is not a directory",
             f"rllib:{tmp_path / 'file'}": "is not a directory",
             f"rllib:{tmp_path / 'empty'}": "is not an RLlib module checkpoint",
             f"rllib:{tmp_path / 'empty'},device=cpu": "unknown option 'device'",
             f"rllib:{tmp_path / 'empty'},deterministic=maybe": "must be true or false",
             f"rllib:{tmp_path / 'empty'},policy=": "policy= needs a policy id"}
    for spec, why in cases.items():
        with pytest.raises(ValueError, match=why) as err:
            make_agent(spec)
        assert repr(spec) in str(err.value)
    with pytest.raises(ValueError, match=str(tmp_path / "empty")):
        make_agent(f"rllib:{tmp_path / 'empty'}")


def test_wrapper_counts_an_illegal_pick_as_a_penalty():
    """The counters the recipe's zero-check reads do count: an id off the mask shows as
    illegal=1 for its agent and one new penalty for its team."""
    env = rllib_ppo.IllegalMoveCount(nertz_v0.parallel_env(**rllib_ppo.env_config(2, 40)))
    obs, _ = env.reset(seed=0)
    bad = int(np.flatnonzero(obs["player_1"]["action_mask"] == 0)[0])
    _, _, _, _, infos = env.step({"player_0": 0, "player_1": bad})
    assert (infos["player_0"]["illegal"], infos["player_0"]["penalties"]) == (0, 0)
    assert (infos["player_1"]["illegal"], infos["player_1"]["penalties"]) == (1, 1)
    _, _, _, _, infos = env.step({"player_0": 0, "player_1": 0})
    assert infos["player_1"]["illegal"] == infos["player_1"]["penalties"] == 0


def test_policy_mapping_per_team_covers_two_player_teams():
    cfg = rllib_ppo.env_config(3, 40, team_sizes=(2, 1, 1))
    ids, mapping = rllib_ppo.policy_mapping("per-team", cfg)
    assert ids == ["team0", "team1", "team2"]
    assert mapping == {"player_0": "team0", "player_1": "team0", "player_2": "team1",
                       "player_3": "team2"}
    assert rllib_ppo.policy_mapping("shared", cfg)[0] == ["shared"]
    with pytest.raises(ValueError, match="policy='solo'"):
        rllib_ppo.policy_mapping("solo", cfg)
    with pytest.raises(ValueError, match="episode='game'"):
        rllib_ppo.env_config(2, episode="game")


def test_recipe_arguments(capsys):
    with pytest.raises(SystemExit) as ex:
        rllib_ppo.main(["--help"])
    assert ex.value.code == 0 and "--policy" in capsys.readouterr().out
    for bad in (["--teams", "9"], ["--policy", "solo"], ["--hidden", "64,x"],
                ["--iterations", "0"]):
        with pytest.raises(SystemExit) as ex:
            rllib_ppo.parse_args(bad)
        assert ex.value.code == 2, bad
