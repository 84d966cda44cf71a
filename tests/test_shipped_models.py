"""make_agent("learned[:teams=T]"): the models shipped in agents/models/ (docs/models.md)."""
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
