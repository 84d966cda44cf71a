"""make_agent("learned[:teams=T]"): the models shipped in agents/learned/models/ (docs/models.md)."""
from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")

from agents import registry  # noqa: E402
from agents.registry import make_agent, shipped_models  # noqa: E402
from nertz_env import NertzVecEnv  # noqa: E402


@pytest.fixture()
def tiny_models(tmp_path, monkeypatch):
    import torch
    from sb3_contrib import MaskablePPO

    torch.manual_seed(0)
    env = NertzVecEnv(num_envs=2, num_teams=2, max_ticks=50)
    MaskablePPO("MlpPolicy", env, n_steps=8, batch_size=16,
                policy_kwargs={"net_arch": [8]}).save(tmp_path / "learned_2teams.zip")
    monkeypatch.setattr(registry, "MODELS_DIR", tmp_path)
    return tmp_path


def test_learned_loads_the_shipped_model_by_table_size(tiny_models):
    assert list(shipped_models()) == [2]
    bot = make_agent("learned")
    assert bot.name == "learned"
    env = NertzVecEnv(num_envs=4, num_teams=2, max_ticks=50, seed=1)
    obs = env.reset()
    masks = env.action_masks()
    acts = bot.act_batch(obs, masks)
    assert masks[np.arange(4), acts].all()
    same = make_agent("learned:teams=2,deterministic=true")
    assert same.name == "learned:teams=2,deterministic=true"
    assert (same.act_batch(obs, masks) == acts).all()


@pytest.mark.parametrize("spec, words", [
    ("learned:teams=3", "shipped models are for teams 2"),
    ("learned:teams=x", "teams='x'"),
    ("learned:size=2", "unknown option 'size'"),
    ("learned:device=tpu", "device='tpu'"),
])
def test_learned_errors_name_the_spec(tiny_models, spec, words):
    with pytest.raises(ValueError, match=words.replace("(", r"\(")) as err:
        make_agent(spec)
    assert spec in str(err.value)


def test_no_models_says_so(tmp_path, monkeypatch):
    monkeypatch.setattr(registry, "MODELS_DIR", tmp_path)
    with pytest.raises(ValueError, match="shipped models are for teams none"):
        make_agent("learned")


def test_the_shipped_models_load_by_their_specs_and_play_legal_moves():
    """The package's own models (agents/learned/models/, docs/models.md): small files, loadable by
    exactly these specs, legal moves at their table sizes."""
    models = shipped_models()
    assert sorted(models) == [2, 4]
    for spec, teams in (("learned", 2), ("learned:teams=4", 4)):
        assert models[teams].stat().st_size < 2_000_000
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


def test_nertz_tournament_plays_learned_against_the_heuristic(capsys):
    from agents.cli import main

    assert main(["tournament", "--agents", "learned,heuristic", "--teams", "2", "--deals", "2",
                 "--quiet"]) == 0
    assert "learned" in capsys.readouterr().out
