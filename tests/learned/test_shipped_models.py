"""make_agent("learned[:teams=T]"): the models shipped in agents/learned/models/ (docs/models.md),
in the safe format (NAME.npz + NAME.json), played in numpy, each table by its own model."""
from __future__ import annotations

import json
import subprocess
import sys
import warnings

import numpy as np
import pytest

from agents import registry
from agents.learned.weights import FORMAT, VERSION, array_shapes, save_weights
from agents.registry import make_agent, shipped_models
from nertz_env import NertzVecEnv


def tiny_meta(teams=2, hidden=(8,), team_size=1, obs=791, actions=322):
    meta = {"format": FORMAT, "version": VERSION,
            "architecture": {"type": "mlp", "hidden": list(hidden), "activation": "tanh",
                             "action_net": "masked"},
            "observation_size": obs, "action_size": actions, "arrays": {},
            "table": {"teams": teams, "team_size": team_size}, "rules": None,
            "provenance": {"source": "test"}}
    meta["arrays"] = {k: list(v) for k, v in array_shapes(meta).items()}
    return meta


def tiny_model(path, seed=0, **kw):
    meta = tiny_meta(**kw)
    rng = np.random.default_rng(seed)
    arrays = {k: rng.normal(size=v).astype(np.float32) for k, v in array_shapes(meta).items()}
    return save_weights(path, meta, arrays)


@pytest.fixture()
def tiny_models(tmp_path, monkeypatch):
    tiny_model(tmp_path / "learned_2teams", seed=2, teams=2)
    tiny_model(tmp_path / "learned_4teams", seed=4, teams=4)
    monkeypatch.setattr(registry, "MODELS_DIR", tmp_path)
    return tmp_path


def positions(teams, n=16, steps=8, seed=1, **kw):
    env = NertzVecEnv(num_envs=n, num_teams=teams, max_ticks=80, seed=seed,
                      opponents="heuristic", **kw)
    obs = env.reset()
    rows = []
    for _ in range(steps):
        masks = env.action_masks()
        rows.append((obs.copy(), masks.copy()))
        obs, *_ = env.step(np.array([np.flatnonzero(m)[-1] for m in masks]))
    return np.concatenate([r[0] for r in rows]), np.concatenate([r[1] for r in rows])


def test_learned_plays_the_model_of_its_table(tiny_models):
    """Plain `learned` at a 4-team table plays the 4-team model, at 2 teams the 2-team one
    (it used to play the 2-team model everywhere); teams=N picks one by hand."""
    assert list(shipped_models()) == [2, 4]
    bot = make_agent("learned")
    assert bot.name == "learned"
    for teams in (2, 4):
        obs, masks = positions(teams)
        by_hand = make_agent(f"learned:teams={teams}")
        other = make_agent(f"learned:teams={6 - teams}")
        with warnings.catch_warnings():
            warnings.simplefilter("error")              # its own table: no warning
            acts = bot.act_batch(obs, masks)
            assert (acts == by_hand.act_batch(obs, masks)).all()
            assert (acts != other.act_batch(obs, masks)).any()
        assert masks[np.arange(len(obs)), acts].all()
    mixed_obs = np.concatenate([positions(2)[0][:5], positions(4)[0][:5]])
    mixed_masks = np.concatenate([positions(2)[1][:5], positions(4)[1][:5]])
    want = np.concatenate([make_agent("learned:teams=2").act_batch(mixed_obs[:5], mixed_masks[:5]),
                           make_agent("learned:teams=4").act_batch(mixed_obs[5:], mixed_masks[5:])])
    assert (bot.act_batch(mixed_obs, mixed_masks) == want).all()


@pytest.mark.parametrize("teams, kw, words", [
    (3, {}, r"\(3 teams, solo seats\); playing the one trained for (2|4) teams, solo seats"),
    (2, {"team_sizes": (2, 2)}, r"\(2 teams, a 2-player team\); playing the one trained for "
                                r"2 teams, solo seats"),
])
def test_learned_at_a_table_without_a_model_warns_once_naming_both(tiny_models, teams, kw,
                                                                    words):
    bot = make_agent("learned")
    obs, masks = positions(teams, **kw)
    with pytest.warns(RuntimeWarning, match=words) as caught:
        bot.act_batch(obs, masks)
        bot.act_batch(obs, masks)
    assert len([w for w in caught if "no shipped model" in str(w.message)]) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error")                  # by hand: the user chose
        make_agent("learned:teams=4").act_batch(obs, masks)


@pytest.mark.parametrize("spec, words", [
    ("learned:teams=3", "shipped models are for teams 2, 4"),
    ("learned:teams=x", "teams='x'"),
    ("learned:size=2", "unknown option 'size'"),
    ("learned:device=tpu", "device='tpu'"),
    ("learned:deterministic=maybe", "must be true or false"),
])
def test_learned_errors_name_the_spec(tiny_models, spec, words):
    with pytest.raises(ValueError, match=words.replace("(", r"\(")) as err:
        make_agent(spec)
    assert spec in str(err.value)


def test_no_models_says_so(tmp_path, monkeypatch):
    monkeypatch.setattr(registry, "MODELS_DIR", tmp_path)
    with pytest.raises(ValueError, match="shipped models are for teams none"):
        make_agent("learned")


def test_a_shipped_model_of_the_wrong_size_is_refused_at_make_agent(tmp_path, monkeypatch):
    tiny_model(tmp_path / "learned_2teams", obs=100)
    monkeypatch.setattr(registry, "MODELS_DIR", tmp_path)
    with pytest.raises(ValueError, match=r"agent 'learned'.*100 values.*322 actions.*791"):
        make_agent("learned")


def test_sampling_is_seeded(tiny_models):
    obs, masks = positions(2)
    a = make_agent("learned:deterministic=false", seed=3).act_batch(obs, masks)
    b = make_agent("learned:deterministic=false", seed=3).act_batch(obs, masks)
    c = make_agent("learned:deterministic=false", seed=4).act_batch(obs, masks)
    assert (a == b).all() and (a != c).any() and masks[np.arange(len(obs)), a].all()


def test_the_shipped_models_are_the_safe_format_and_play_legal_moves():
    """The package's own models: small .npz + .json files, loadable by exactly these specs,
    legal moves at their table sizes."""
    models = shipped_models()
    assert sorted(models) == [2, 4]
    for spec, teams in (("learned:teams=2", 2), ("learned:teams=4", 4)):
        meta = json.loads(models[teams].with_suffix(".json").read_text())
        assert meta["table"] == {"teams": teams, "team_size": 1}
        assert meta["rules"]["num_teams"] == teams and meta["rules"]["max_ticks"] == 3000
        assert models[teams].stat().st_size < 1_000_000
        bot = make_agent(spec)
        assert bot.name == spec
        env = NertzVecEnv(num_envs=16, num_teams=teams, seed=teams, max_ticks=100,
                          opponents="heuristic")
        obs = env.reset()
        for _ in range(20):
            masks = env.action_masks()
            acts = bot.act_batch(obs, masks)
            assert masks[np.arange(16), acts].all()
            obs, *_ = env.step(acts)


NO_PICKLE = r"""
import pickle, sys
import numpy as np
from agents.arena.tournament import run_tournament
from agents.base import Agent
from nertz_env import RulesConfig


class FirstLegal(Agent):
    name = "first"

    def act_batch(self, observations, action_masks):
        return np.asarray(action_masks).argmax(axis=1).astype(np.int64)


def play(spec, teams):
    return run_tournament([spec, "heuristic"], config=RulesConfig(num_teams=teams), deals=2,
                          seed=5, progress=False)


for teams in (2, 4):              # numba's cache is pickles: load the kernels first
    play(FirstLegal(), teams)
from agents.learned import sparse  # the forward pass's kernels too (no model file read)
z = np.zeros((1, 4), np.float32)
sparse.first_layer(z, np.zeros((4, 2), np.float32), np.zeros(2, np.float32))
sparse.legal_argmax(np.zeros((1, 2), np.float32), np.zeros((3, 2), np.float32),
                    np.zeros(3, np.float32), np.ones((1, 3), bool))
from agents.constraints import constrain  # the generalist's constraint kernel too
constrain(np.zeros((1, 791), np.float32), np.ones((1, 322), np.int8), "useful-shifts")
play("learned", 2)    # the kernels that play nets inside numba (each model is read again below)


def refuse(*a, **k):
    raise AssertionError("pickle used")


pickle.load = pickle.loads = pickle.Unpickler = refuse
import cloudpickle
cloudpickle.loads = cloudpickle.load = refuse
try:
    import torch
    torch.load = refuse
except ImportError:
    pass
for teams, spec in ((2, "learned"), (4, "learned:teams=4"), (4, "learned"), (3, "learned"),
                    (2, "learned:model=per-table")):
    r = play(spec, teams)
    assert r.ticks.min() > 0 and r.ticks.max() < 3000, r.ticks      # every hand ended
    print(spec, teams, "hands", len(r.ticks), "ticks", int(r.ticks.max()))
for mod in ("stable_baselines3", "sb3_contrib"):
    assert mod not in sys.modules, mod
print("ok")
"""


def test_learned_plays_whole_hands_without_pickle_torch_or_sb3():
    """Loading and playing the shipped models runs no pickle: pickle, cloudpickle and
    torch.load all raise, yet whole hands play at 2 and 4 teams, and SB3 is never imported."""
    out = subprocess.run([sys.executable, "-c", NO_PICKLE], capture_output=True, text=True,
                         timeout=600)
    assert out.returncode == 0, out.stderr[-3000:]
    assert out.stdout.strip().endswith("ok")


def test_nertz_tournament_plays_learned_against_the_heuristic(capsys):
    from agents.cli import main

    assert main(["tournament", "--agents", "learned,heuristic", "--teams", "2", "--deals", "2",
                 "--quiet"]) == 0
    assert "learned" in capsys.readouterr().out


def test_the_shipped_files_play_as_the_models_they_were_converted_from():
    """learned_<T>teams.npz is its SB3 zip's policy: the zip's sha256 is in the JSON and, where
    the zip and the train extra are at hand, predict's moves equal the npz's on real positions
    (so the README's figures, measured with the zips, hold for the npz)."""
    import hashlib
    from pathlib import Path

    sb3c = pytest.importorskip("sb3_contrib")
    for teams, path in shipped_models().items():
        zp = Path(path).with_suffix(".zip")
        if not zp.is_file():
            pytest.skip(f"{zp} is not in this checkout")
        meta = json.loads(Path(path).with_suffix(".json").read_text())
        assert meta["provenance"]["source_sha256"] == hashlib.sha256(zp.read_bytes()).hexdigest()
        model = sb3c.MaskablePPO.load(zp, device="cpu")        # the project's own file
        obs, masks = positions(teams, n=32, steps=20, seed=teams)
        want, _ = model.predict(obs, deterministic=True, action_masks=masks.astype(bool))
        got = make_agent(f"learned:teams={teams}").act_batch(obs, masks)
        np.testing.assert_array_equal(got, want)


def test_the_package_ships_the_safe_files_and_no_pickles():
    """pyproject's package-data installs every file `learned` reads (NAME.npz + NAME.json) and
    no model zip (pickles: docs/models.md)."""
    import fnmatch
    from pathlib import Path
    try:
        import tomllib
    except ModuleNotFoundError:                     # Python 3.10: the tomli dependency
        import tomli as tomllib

    root = Path(registry.__file__).resolve().parents[1]
    data = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"][
        "package-data"]["agents"]
    shipped = [p for npz in shipped_models().values()
               for p in (npz, npz.with_suffix(".json"))]
    assert len(shipped) == 4
    for p in shipped:
        rel = p.relative_to(root / "agents").as_posix()
        assert any(fnmatch.fnmatch(rel, pat) for pat in data), rel
    assert not any(fnmatch.fnmatch("learned/models/learned_2teams.zip", pat) for pat in data)


def test_a_shipped_generalist_plays_every_table_under_its_constraint(tiny_models):
    """learned.npz beside the per-table models: plain `learned` plays it at every table (no
    warning), under the constraint its file names, exactly as ppo:learned.npz plays it;
    learned:teams=N still picks that table's model by hand."""
    meta = {**tiny_meta(hidden=(16,)), "table": None, "constraint": "useful-shifts"}
    rng = np.random.default_rng(7)
    arrays = {k: rng.normal(size=v).astype(np.float32) for k, v in array_shapes(meta).items()}
    save_weights(tiny_models / "learned", meta, arrays)
    bot = make_agent("learned")
    free = make_agent(f"ppo:{tiny_models / 'learned.npz'},constraint=none")
    differs = 0
    for teams, kw in ((2, {}), (3, {}), (4, {}), (2, {"team_sizes": (2, 2)})):
        obs, masks = positions(teams, n=24, steps=30, **kw)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            got = bot.act_batch(obs, masks)
        want = make_agent(f"ppo:{tiny_models / 'learned.npz'}").act_batch(obs, masks)
        np.testing.assert_array_equal(got, want)
        differs += int((free.act_batch(obs, masks) != got).sum())
    assert differs > 0                        # the constraint changed some moves
    obs, masks = positions(2)
    np.testing.assert_array_equal(make_agent("learned:teams=2").act_batch(obs, masks),
                                  make_agent(f"ppo:{tiny_models / 'learned_2teams.npz'}")
                                  .act_batch(obs, masks))
    np.testing.assert_array_equal(make_agent("learned:model=per-table").act_batch(obs, masks),
                                  make_agent("learned:teams=2").act_batch(obs, masks))
    with pytest.raises(ValueError, match="model='best' must be one of per-table, generalist"):
        make_agent("learned:model=best")


def test_the_package_ships_the_generalist():
    """agents/learned/models/learned.npz: the safe format, a model for every table (table
    null), its training formats and its constraint in the JSON; learned:model=generalist
    plays it (plain `learned` where stacking is off: test_family.py)."""
    from agents.learned.shipped import GENERALIST, generalist_model
    path = generalist_model(registry.MODELS_DIR)
    meta = json.loads(path.with_suffix(".json").read_text())
    assert meta["table"] is None and meta["constraint"] == "useful-shifts"
    assert len(meta["provenance"]["formats"]) == 23 and path.stat().st_size < 1_000_000
    bot = make_agent("learned:model=generalist")
    assert list(bot.policies) == [GENERALIST]
