"""Training over table formats (agents/training/formats.py) and the lean PPO's run options
(learner='lean', formats, init, checkpoints): the rulebook preset covers the grid of
docs/models.md, every format's tables play its rules with the learner at its seat, one
vector env steps them all, and a run starts from a given model and saves a model for every
table."""
import json

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("stable_baselines3")

from agents.cli import main  # noqa: E402
from agents.learned.weights import load_weights  # noqa: E402
from agents.training.config import TrainConfig  # noqa: E402
from agents.training.formats import (  # noqa: E402
    describe,
    format_rules,
    make_formats_env,
    resolve,
    tables_per_format, table_shares,
)
from agents.training.lean_ppo import lean_config, networks, start_from, train  # noqa: E402
from nertz_env.actions import N_ACTIONS  # noqa: E402
from nertz_env.core.observe import OBS_DIM  # noqa: E402

MODELS = "agents/learned/models"
TINY = {"max_ticks": 150, "net_arch": [32, 32], "n_steps": 8, "batch_size": 64, "n_epochs": 1,
        "torch_threads": 1}


def test_the_rulebook_preset_covers_the_grid():
    fmts = resolve("rulebook")
    rules = [format_rules(f)[0] for f in fmts]
    assert len({describe(f) for f in fmts}) == len(fmts)            # no format twice
    solo = {r.num_teams for r in rules if r.team_sizes is None and r == type(r)(num_teams=r.num_teams)}
    assert solo == set(range(2, 9))
    pairs = {(r.num_teams, s) for f, r in zip(fmts, rules) if r.team_sizes
             for s in [f.get("seat", 0)]}
    assert pairs == {(2, 0), (2, 1), (3, 0), (3, 1)}                 # both seats of a team
    assert {r.num_teams for r in rules if r.river_size == 5} == {2, 4}
    assert {r.num_teams for r in rules if not r.stacking} == {2, 4}
    assert {r.num_teams for r in rules if not r.flow_rules} == {2, 4}
    speeds = {r.speeds for r in rules if r.speeds}
    assert {(1, 2), (2, 1), (1, 2, 1, 2), (2, 1, 2, 1), (1, 2, 2, 2), (2, 2, 2, 1)} == speeds


@pytest.mark.parametrize("fmt,words", [
    ({"num_teams": 3, "colour": 1}, "'colour' is not a RulesConfig field"),
    ({"num_teams": 9}, "num_teams"), ({"num_teams": 2, "seat": 2}, "seat=2"),
    ({"num_teams": 2, "team_sizes": [2, 3]}, "team_sizes"), ({}, "dict"),
    ({"num_teams": 2, "weight": 0}, "weight=0"), ({"num_teams": 2, "weight": 1.5}, "weight=1.5"),
    ({"num_teams": 2, "weight": True}, "weight=True"),
])
def test_a_bad_format_is_a_value_error_naming_it(fmt, words):
    with pytest.raises(ValueError, match="formats") as err:
        format_rules(fmt, where="formats[4]")
    assert words in str(err.value)


def test_weights_deal_the_tables_in_proportion():
    assert tables_per_format(184, 23) == [8] * 23                  # unweighted: as even as they go
    assert tables_per_format(10, 3, [1, 2, 5]) == [2, 3, 5]        # one each, 7 more as 1:2:5
    assert tables_per_format(3, 3, [1, 1000, 1]) == [1, 1, 1]      # every format keeps a table
    plain, weighted = resolve("rulebook"), resolve("rulebook-weighted")
    assert [{k: v for k, v in f.items() if k != "weight"} for f in weighted] == plain
    heavy = {describe(f): f["weight"] for f in weighted if f.get("weight", 1) != 1}
    assert heavy == {describe({"num_teams": 2}): 5, describe({"num_teams": 4}): 3}
    n = tables_per_format(184, len(weighted), [f.get("weight", 1) for f in weighted])
    assert sum(n) == 184 and n[weighted.index({"num_teams": 2, "weight": 5})] == 29
    nostack = resolve("rulebook-weighted-nostack")
    assert [{k: v for k, v in f.items() if k != "weight"} for f in nostack] == plain
    heavy = {describe(f): f["weight"] for f in nostack if f.get("weight", 1) != 1}
    assert heavy == {describe({"num_teams": 2}): 5, describe({"num_teams": 4}): 3,
                     describe({"num_teams": 2, "stacking": False}): 3,
                     describe({"num_teams": 4, "stacking": False}): 3}
    assert [n for _, n in table_shares(184, nostack)] == tables_per_format(
        184, len(nostack), [f.get("weight", 1) for f in nostack])
    off = resolve("rulebook-nostack")        # every stacking table of rulebook-weighted, made off
    assert all(f["stacking"] is False for f in off)
    assert [{k: v for k, v in f.items() if k != "stacking"} for f in off] == [
        f for f in weighted if "stacking" not in f]


def test_every_format_plays_its_rules_with_the_learner_at_its_seat():
    fmts = [{"num_teams": 2}, {"num_teams": 3, "team_sizes": [2, 2, 2], "seat": 1},
            {"num_teams": 4, "speeds": [1, 2, 2, 2], "river_size": 5}]
    cfg = lean_config(out="unused", formats=fmts, num_envs=7, max_ticks=60, seed=3,
                      batch_size=64)
    env = make_formats_env(cfg)
    assert tables_per_format(7, 3) == [3, 2, 2]
    assert [e.num_envs for e in env.envs] == [3, 2, 2] and env.num_envs == 7
    for e, f in zip(env.envs, fmts):
        rules, seat = format_rules(f, 60)
        assert e.venv.config == rules and e.venv.learner_seat == seat
    obs = env.reset()
    assert obs.shape == (7, OBS_DIM)
    hands = {}
    for _ in range(120):
        masks = env.action_masks()
        assert masks.shape == (7, N_ACTIONS)
        for i, e in enumerate(env.envs):          # the rows are the formats' tables in order
            assert np.array_equal(masks[env.bounds[i]:env.bounds[i + 1]],
                                  e.venv.action_masks())
        obs, rew, done, infos = env.step(np.array([np.flatnonzero(m)[0] for m in masks]))
        assert obs.shape == (7, OBS_DIM) and rew.shape == done.shape == (7,)
        for k in np.flatnonzero(done):
            hands[infos[k]["format"]] = hands.get(infos[k]["format"], 0) + 1
    assert set(hands) == {describe(f) for f in fmts}
    env.close()


def test_bad_combinations_are_refused():
    with pytest.raises(ValueError, match="lean PPO only"):
        TrainConfig(learner="sb3", formats="rulebook", bc_rows=0)
    with pytest.raises(ValueError, match="lean PPO only"):
        TrainConfig(learner="sb3", init=f"{MODELS}/learned_2teams.npz", bc_rows=0)
    with pytest.raises(ValueError, match="shift_cost: the lean PPO only"):
        TrainConfig(learner="sb3", shift_cost=0.1, bc_rows=0)
    with pytest.raises(ValueError, match="shift_cost"):
        lean_config(shift_cost=-1.0)
    assert TrainConfig(formats="rulebook").learner == "lean"     # the default learner
    with pytest.raises(ValueError, match="teams=3 and formats"):
        lean_config(formats="rulebook", teams=3)
    with pytest.raises(ValueError, match="num_envs=8 must be >= the number of formats"):
        lean_config(formats="rulebook", num_envs=8)
    with pytest.raises(ValueError, match="preset"):
        lean_config(formats="everything")
    with pytest.raises(ValueError, match=r"opponents\[0\].*2 seats joined"):
        lean_config(formats=[{"num_teams": 2}, {"num_teams": 3}], opponents=["greedy+greedy"])


def test_start_from_copies_a_saved_models_weights():
    import torch
    cfg = lean_config(out="unused")
    _, arrays = load_weights(f"{MODELS}/learned_2teams.npz")
    for source in ("npz", "zip"):               # the npz is the zip's actor, exported
        actor, critic = networks(cfg, OBS_DIM, N_ACTIONS)
        fresh = [p.detach().clone() for p in critic.parameters()]
        folder = "train/models" if source == "zip" else MODELS   # the SB3 original: train/
        start_from(actor, critic, f"{folder}/learned_2teams.{source}")
        lin = [m for m in actor if hasattr(m, "weight")]
        assert np.array_equal(lin[0].weight.detach().numpy(), arrays["hidden0_weight"])
        assert np.array_equal(lin[-1].bias.detach().numpy(), arrays["action_bias"])
        moved = any(not torch.equal(a, b) for a, b in zip(fresh, critic.parameters()))
        assert moved == (source == "zip")       # only an SB3 zip holds the critic
    actor, critic = networks(lean_config(out="u", net_arch=[64]), OBS_DIM, N_ACTIONS)
    with pytest.raises(ValueError, match="do not fit net_arch"):
        start_from(actor, critic, f"{MODELS}/learned_2teams.npz")


def test_a_formats_run_saves_a_model_for_every_table(tmp_path):
    fmts = [{"num_teams": 2}, {"num_teams": 4, "team_sizes": [2, 1, 1, 1]}]
    npz = train(lean_config(out=str(tmp_path / "r"), formats=fmts, num_envs=8, timesteps=128,
                            checkpoint_every=64, **TINY), log=lambda s: None)
    meta, _ = load_weights(npz)
    assert meta["table"] is None and meta["rules"] is None
    assert meta["provenance"]["formats"] == [describe(f) for f in fmts]
    ck = sorted(p.name for p in (tmp_path / "r" / "checkpoints").glob("*.npz"))
    assert ck == ["step_128.npz", "step_64.npz"]


def test_nertz_train_learner_lean(tmp_path, capsys):
    out = tmp_path / "g"
    assert main(["train", "--learner", "lean", "--bc-rows", "0", "--out", str(out),
                 "--timesteps", "64", "--num-envs", "8", "--n-steps", "8", "--batch-size",
                 "64", "--net-arch", "16", "--max-ticks", "100", "--no-progress"]) == 0
    text = capsys.readouterr().out
    assert "bc_rows=0" in text and "play it: nertz tournament --agents" in text
    assert (out / "final.npz").is_file() and not (out / "bc.json").exists()
    assert json.loads((out / "config.json").read_text())["config"]["learner"] == "lean"
    assert main(["train", "--learner", "lean", "--bc-rows", "10", "--num-envs", "8",
                 "--out", str(tmp_path / "h")]) == 2
    assert "--bc-rows" in capsys.readouterr().err and not (tmp_path / "h").exists()


def test_the_train_help_names_every_preset():
    """`nertz train --help` (TrainConfig's field text) lists every preset by name."""
    import subprocess
    import sys
    from agents.training.formats import PRESETS
    out = subprocess.run([sys.executable, "-m", "agents", "train", "--help"], capture_output=True,
                         text=True, check=True).stdout
    flat = " ".join(out.replace("-\n", "-").split()).replace("- ", "-")
    for name in PRESETS:
        assert name in flat, name
