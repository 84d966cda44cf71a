"""partner='self' in the lean PPO's rollout: the teammates' moves are drawn in the learner's
own forward pass (one actor call per step, whatever the number of formats with a partner),
the rows the league asks for are exactly the rows gathered before the step, and every move
the partner plays is legal under the learner's constraint."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")
pytest.importorskip("stable_baselines3")

from agents.constraints import check_constraint, constrain  # noqa: E402
from agents.training import lean_ppo  # noqa: E402
from agents.training.lean_policy import SelfPartner  # noqa: E402
from agents.training.lean_ppo import lean_config, make_learner, rollout_storage  # noqa: E402

FORMATS = [{"num_teams": 2, "team_sizes": [2, 2], "seat": 1},
           {"num_teams": 3, "team_sizes": [2, 2, 2]}, {"num_teams": 4}]


def learner_of(tmp_path):
    cfg = lean_config(out=str(tmp_path / "run"), num_envs=12, n_steps=24, batch_size=96,
                      n_epochs=1, timesteps=288, net_arch=[32, 32], torch_threads=1,
                      max_ticks=150, formats=FORMATS, partner="self",
                      constraint="useful-shifts")
    return cfg, make_learner(cfg, True, None, lambda s: None)


def test_one_actor_pass_per_step_plays_the_learner_and_both_partners(tmp_path, monkeypatch):
    cfg, learner = learner_of(tmp_path)
    assert len(learner.partners) == 2                   # the two formats with two-player teams
    calls = []                                          # rows through the actor's 2nd layer
    learner.actor[2].register_forward_hook(lambda m, inp, out: calls.append(len(out)))
    answered = []
    act_batch = SelfPartner.act_batch

    def spy(self, obs, masks):
        ids = act_batch(self, obs, masks)
        answered.append((obs.copy(), np.asarray(masks).copy(), ids))
        return ids
    monkeypatch.setattr(SelfPartner, "act_batch", spy)
    buf = rollout_storage(cfg, learner)
    lean_ppo.collect_rollout(learner, buf, cfg)
    n_partner = sum(len(lg.partners) * lg.num_envs for lg, _ in learner.partners)
    assert calls == [cfg.tables.num_envs + n_partner] * cfg.ppo.n_steps   # one pass, all rows
    assert len(answered) == 2 * cfg.ppo.n_steps
    cid = check_constraint("useful-shifts")
    for obs, masks, ids in answered:
        allowed = constrain(obs, masks, cid)
        assert allowed[np.arange(len(ids)), ids].all()


def test_an_answer_is_only_for_the_rows_it_was_drawn_for(tmp_path):
    _, learner = learner_of(tmp_path)
    learner.env.reset()
    league, partner = learner.partners[0]
    obs, legal = partner.gather(league)
    partner.answer(obs, np.zeros(len(obs), np.int64))
    other = obs.copy()
    other[0, 0] += 1.0
    with pytest.raises(RuntimeError, match="not the rows gathered"):
        partner.act_batch(other, legal)
    ids = partner.act_batch(obs, legal)          # no answer left: drawn by the actor itself
    assert legal[np.arange(len(ids)), ids].all()
