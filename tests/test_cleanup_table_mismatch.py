"""A model that records the table it was trained for, played at another table: one warning per
agent naming the spec, the recorded table and the table it plays (a fresh user's walk,
2026-12-07): `ppo:learned_2teams.npz` and `learned:teams=2` at 4 teams used to play silently.
They still play (training plays learned:teams=2 and =4 as league opponents at every format).
The RLlib recipe writes the table beside its checkpoint (nertz_table.json) and `rllib:` reads
it; tested here with a fake checkpoint folder (no ray: load_module is stubbed)."""
from __future__ import annotations

import json
import warnings
from pathlib import Path

import pytest

from agents.arena.tournament import run_tournament
from agents.learned import ppo, rllib
from agents.registry import MODELS_DIR, make_agent
from nertz_env.config import RulesConfig
from train import rllib_ppo

TWO = f"ppo:{MODELS_DIR / 'learned_2teams.npz'}"
FOUR = RulesConfig(num_teams=4)


@pytest.fixture(autouse=True)
def fresh_process(monkeypatch):
    monkeypatch.setattr(ppo, "_SHOWN", set())     # the lines said so far in this process


def mismatch(caught) -> list:
    return [str(w.message) for w in caught if "its model was trained for" in str(w.message)]


@pytest.mark.parametrize("spec, source", [
    (TWO, "the table its JSON records"), ("learned:teams=2", "learned_2teams")])
def test_another_table_warns_once_per_agent_naming_both(spec, source):
    agent = make_agent(spec)
    with pytest.warns(RuntimeWarning) as caught:
        bound = agent.for_table(FOUR)
        bound.for_table(FOUR)                   # a told copy: the same agent, no second line
        agent.for_table(RulesConfig(num_teams=3))
    got = mismatch(caught)
    assert got == [f"agent {spec!r}: its model was trained for 2 teams, solo seats ({source}); "
                   "playing it at this table (4 teams, solo seats) as asked (docs/models.md)."]
    with pytest.warns(RuntimeWarning, match=r"2 teams, solo seats .*\(2 teams, a 2-player"):
        make_agent(spec).for_table(RulesConfig(num_teams=2, team_sizes=(2, 2)))


@pytest.mark.parametrize("spec, config", [
    (TWO, RulesConfig(num_teams=2)), ("learned:teams=2", RulesConfig(num_teams=2)),
    ("learned:teams=4", FOUR), ("learned", FOUR), ("learned:model=generalist", FOUR),
    ("learned:model=per-table", FOUR)])
def test_its_own_table_or_a_model_for_any_table_is_silent(spec, config):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        make_agent(spec).for_table(config)


def test_a_tournament_warns_once_and_plays_on():
    """The walkthrough's command (run_tournament, 2 deals at 4 teams): one line, then the
    hands are played; a second run with fresh agents (training's evaluations make new ones)
    adds no line, whatever Python's filter lets through."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for _ in range(2):
            r = run_tournament([TWO, "heuristic"], teams=4, deals=2, seed=0, progress=False)
            assert len(r.hand_scores) == 12
    got = mismatch(caught)
    assert len(got) == 1 and f"agent {TWO!r}" in got[0] and "(4 teams, solo seats)" in got[0]


# ---------------------------------------------------------------- rllib: nertz_table.json
@pytest.fixture
def fake_rllib(monkeypatch):
    """load_module stubbed: the agent is built without ray (what it loads is never played)."""
    calls = []
    monkeypatch.setattr(rllib, "load_module", lambda path, policy: calls.append(path) or
                        ("shared", object()))
    return calls


def checkpoint(tmp_path, teams=2):
    ckpt = tmp_path / "run" / "checkpoint"
    ckpt.mkdir(parents=True)
    rllib_ppo.write_table(ckpt, rllib_ppo.env_config(teams, 300))
    return ckpt


def test_the_recipe_writes_a_readable_table_file(tmp_path):
    ckpt = checkpoint(tmp_path, teams=3)
    meta = json.loads((ckpt / "nertz_table.json").read_text())
    assert meta["table"] == {"teams": 3, "team_size": 1}
    assert meta["rules"]["num_teams"] == 3 and meta["rules"]["illegal_move"] == "penalize"
    assert rllib.read_table(ckpt) == (3, 1) == rllib.read_table(ckpt.parent)   # --out too
    assert rllib.read_table(tmp_path) is None                                  # none: None


def test_rllib_warns_at_a_table_of_another_size(tmp_path, fake_rllib):
    ckpt = checkpoint(tmp_path)
    agent = make_agent(f"rllib:{ckpt}")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        agent.for_table(RulesConfig(num_teams=2))
    with pytest.warns(RuntimeWarning) as caught:
        agent.for_table(FOUR)
        agent.for_table(FOUR)
    assert mismatch(caught) == [
        f"agent 'rllib:{ckpt}': its model was trained for 2 teams, solo seats (its "
        "nertz_table.json); playing it at this table (4 teams, solo seats) as asked "
        "(docs/models.md)."]


@pytest.mark.parametrize("text, words", [
    ("{", "nertz_table.json"),
    ('{"format": "nertz-rllib-table", "version": 1, "table": {"teams": 9, "team_size": 1}, '
     '"rules": null}', "table must be"),
    ('{"format": "nertz-rllib-table", "version": 1, "table": {"teams": 2, "team_size": 1}}',
     "the file must be a JSON object of exactly"),
    ('{"format": "x", "version": 1, "table": {"teams": 2, "team_size": 1}, "rules": null}',
     "format/version must be"),
    ('{"format": "nertz-rllib-table", "version": 1, "table": {"teams": 2, "team_size": 1}, '
     '"rules": {"num_teams": 4}}', "rules.num_teams must be the table's teams, 2"),
    ('{"format": "nertz-rllib-table", "version": 1, "table": {"teams": 2, "team_size": 1}, '
     '"rules": {"speed": 1}}', "rules.speed must be a RulesConfig field"),
    (" " * (rllib.MAX_TABLE_FILE + 1), "larger than"),
])
def test_a_bad_table_file_is_one_line_before_the_module_loads(tmp_path, fake_rllib, text,
                                                             words):
    ckpt = checkpoint(tmp_path)
    (ckpt / "nertz_table.json").write_text(text)
    with pytest.raises(ValueError) as err:
        make_agent(f"rllib:{ckpt}")
    msg = str(err.value)
    assert words in msg and "\n" not in msg and f"'rllib:{ckpt}'" in msg, msg
    assert fake_rllib == []                     # refused before any module was loaded


def test_the_recipe_train_writes_it_beside_the_checkpoint(tmp_path):
    """train() with a stand-in for RLlib's Algorithm (no ray): checkpoint/nertz_table.json
    holds the table of its env_config, and the rllib agent reads it from --out."""
    class Algo:
        def train(self):
            return {"training_iteration": 1}

        def save_to_path(self, path):
            Path(path).mkdir(parents=True)

        def stop(self):
            pass

    class Config:
        env_config = rllib_ppo.env_config(4, 300)

        def build_algo(self):
            return Algo()

    rows, ckpt = rllib_ppo.train(Config(), 1, tmp_path / "out", log=None)
    assert ckpt == tmp_path / "out" / "checkpoint" and rows[0]["iteration"] == 1
    assert rllib.read_table(tmp_path / "out") == (4, 1)
    assert json.loads((tmp_path / "out" / "results.json").read_text()) == rows


def test_a_training_league_plays_its_opponents_at_every_format_without_a_line(tmp_path):
    """The league plays learned:teams=2/=4 at all the rulebook's formats on purpose (the
    stacking member's recipe): none of its 16 (spec, table) pairs prints the line."""
    import sys
    pytest.importorskip("torch")
    pytest.importorskip("stable_baselines3")
    sys.path.insert(0, str(Path(__file__).parent / "training"))
    from tiny_runs import tiny

    from agents.training.formats import make_formats_env
    opp = ["heuristic:style=river-builder", "learned:teams=2", "learned:teams=4"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        cfg = tiny(tmp_path, learner="lean", opponents=opp, formats="rulebook-weighted",
                   num_envs=64)
        make_formats_env(cfg).close()
    assert mismatch(caught) == []
    with pytest.warns(RuntimeWarning):             # the same agents outside a league still say it
        make_agent("learned:teams=2").for_table(FOUR)


def test_a_training_evaluation_of_its_league_says_nothing(tmp_path):
    """evaluate_run plays the policy against each league entry at the run's table: the
    entries are there by design (learned:teams=2 at 4 teams here), no line for them."""
    import sys
    pytest.importorskip("torch")
    pytest.importorskip("stable_baselines3")
    sys.path.insert(0, str(Path(__file__).parent / "training"))
    from tiny_runs import tiny

    from agents.training import evaluation
    from agents.training.league import make_env
    from agents.training.run import build_model
    cfg = tiny(tmp_path, learner="sb3", teams=4, eval_deals=2, eval_league_deals=2,
               opponents=["greedy", "learned:teams=2"])
    (tmp_path / "run").mkdir()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        model = build_model(cfg, make_env(cfg))
        evaluation.evaluate_run(model, cfg, tmp_path / "run", None, log=lambda s: None)
    assert mismatch(caught) == []
