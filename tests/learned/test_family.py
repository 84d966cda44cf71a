"""`learned`'s family (agents/learned/family.py): the model a table's rules pick, told to the
agent by for_table(config) wherever a table is known (tournaments and the core's net kernel,
recordings, the gym env's opponents, the training league, probes, the human player's table),
a warning where it is not, and a family file checked field by field before a model is read."""
from __future__ import annotations

import json
import re
import warnings

import numpy as np
import pytest

from agents import registry
from agents.arena import play as play_mod
from agents.arena.tournament import run_tournament
from agents.learned.family import FILE, read_family
from agents.registry import make_agent
from nertz_env import RulesConfig
from tests.learned.test_shipped_models import positions, tiny_model

NOSTACK = RulesConfig(num_teams=2, stacking=False)


def family_file(folder, members, **top):
    obj = {"format": "nertz-family", "version": 1, "members": members, **top}
    (folder / FILE).write_text(json.dumps(obj))


@pytest.fixture()
def family(tmp_path, monkeypatch):
    """Per-table tiny models, two tiny generalists `off` (stacking off) and `on` (the rest)."""
    tiny_model(tmp_path / "learned_2teams", seed=2, teams=2)
    tiny_model(tmp_path / "learned_4teams", seed=4, teams=4)
    tiny_model(tmp_path / "off", seed=11, hidden=(16,))
    tiny_model(tmp_path / "on", seed=12, hidden=(16,))
    family_file(tmp_path, [{"name": "off", "model": "off", "rules": {"stacking": False}},
                           {"name": "on", "model": "on", "rules": {}}])
    monkeypatch.setattr(registry, "MODELS_DIR", tmp_path)
    return tmp_path


def test_the_table_rules_pick_the_member_and_unbound_play_warns_once(family):
    bot = make_agent("learned")
    off, on = make_agent(f"ppo:{family / 'off.npz'}"), make_agent(f"ppo:{family / 'on.npz'}")
    obs, masks = positions(2, n=24, steps=10)
    assert (off.act_batch(obs, masks) != on.act_batch(obs, masks)).any()   # they differ
    with warnings.catch_warnings():
        warnings.simplefilter("error")                    # told its table: no warning
        for config, want in ((NOSTACK, off), (RulesConfig(num_teams=2), on),
                             (RulesConfig(num_teams=4, stacking=False), off)):
            bound = bot.for_table(config)
            np.testing.assert_array_equal(bound.act_batch(obs, masks), want.act_batch(obs, masks))
        for name, want in (("off", off), ("on", on)):     # by hand, at any table
            np.testing.assert_array_equal(make_agent(f"learned:model={name}").act_batch(obs, masks),
                                          want.act_batch(obs, masks))
    assert bot.for_table(NOSTACK).member() == "off" and bot.member() is None
    assert bot.tables == {} and set(bot.policies) == {0, 1}   # members pick by rules only
    with pytest.warns(RuntimeWarning, match=r"not told its table's rules .* 'on' member") as w:
        got = bot.act_batch(obs, masks)
        bot.act_batch(obs, masks)
    assert len([x for x in w if "not told" in str(x.message)]) == 1
    np.testing.assert_array_equal(got, on.act_batch(obs, masks))


def test_a_family_file_of_your_own(family, tmp_path_factory):
    """learned:family=PATH: members in that file's folder, picked the same way; it takes no
    teams= or model=; a missing file is refused naming it."""
    mine = tmp_path_factory.mktemp("mine")
    tiny_model(mine / "x", seed=21, hidden=(16,))
    tiny_model(mine / "y", seed=22, hidden=(16,))
    family_file(mine, [{"name": "x", "model": "x", "rules": {"river_size": 5}},
                       {"name": "y", "model": "y", "rules": {}}])
    bot = make_agent(f"learned:family={mine / FILE}")
    obs, masks = positions(2, n=24, steps=10)
    for config, stem in ((RulesConfig(num_teams=2, river_size=5), "x"), (NOSTACK, "y")):
        np.testing.assert_array_equal(bot.for_table(config).act_batch(obs, masks),
                                      make_agent(f"ppo:{mine / stem}.npz").act_batch(obs, masks))
    with pytest.raises(ValueError, match="takes no teams= or model="):
        make_agent(f"learned:family={mine / FILE},model=x")
    with pytest.raises(ValueError, match="gone.json' is not a file"):
        make_agent(f"learned:family={mine / 'gone.json'}")


def test_a_member_plays_where_all_its_rules_hold_the_first_that_matches():
    from agents.learned.family import Member, member_for
    fam = [Member("a", {"stacking": False, "num_teams": 4}, None),
           Member("b", {"river_size": 5}, None), Member("c", {}, None)]
    for config, want in ((RulesConfig(num_teams=4, stacking=False), 0),
                         (RulesConfig(num_teams=2, stacking=False), 2),
                         (RulesConfig(num_teams=4, stacking=False, river_size=5), 0),
                         (RulesConfig(num_teams=2, river_size=5), 1),
                         (RulesConfig(num_teams=4), 2)):
        assert member_for(fam, config) == want, config


@pytest.mark.parametrize("core_nets", [True, False])
def test_a_tournament_tells_learned_its_table(family, monkeypatch, core_nets):
    """The same numbers as the member played by hand, in the core's net kernel and in the
    Python loop, with stacking off (`off`) and on (`on`), and no warning."""
    monkeypatch.setattr(play_mod, "CORE_NETS", core_nets)
    runs = {}
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        for config in (NOSTACK, RulesConfig(num_teams=2)):
            for key, spec in (("learned", "learned"), ("off", f"ppo:{family / 'off.npz'}"),
                              ("on", f"ppo:{family / 'on.npz'}")):
                r = run_tournament([spec, "heuristic"], config=config, deals=6, seed=3,
                                   progress=False)
                runs[config.stacking, key] = r.hand_scores
    assert np.array_equal(runs[False, "learned"], runs[False, "off"])
    assert np.array_equal(runs[True, "learned"], runs[True, "on"])
    assert not np.array_equal(runs[False, "off"], runs[False, "on"])


def test_a_recorded_tournament_tells_learned_its_table(family, tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        r = run_tournament(["learned", "heuristic"], config=NOSTACK, deals=2, seed=3,
                           progress=False, record="all")
    assert r.replays


def test_the_envs_league_probe_and_human_table_tell_it(family, tmp_path):
    from agents.judging.probe import probe_counts
    from agents.human.session import PlaySession
    from nertz_env.envs.gym import NertzGymEnv

    bot = make_agent("learned")
    env = NertzGymEnv(config=NOSTACK, opponents=bot)
    assert env.opponents[1].__self__.member() == "off"
    env = NertzGymEnv(config=RulesConfig(num_teams=2), opponents={1: bot})
    assert env.opponents[1].__self__.member() == "on"
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        n1, k1 = probe_counts(bot, NOSTACK, 8, 5, "heuristic")
    n2, k2 = probe_counts(make_agent(f"ppo:{family / 'off.npz'}"), NOSTACK, 8, 5, "heuristic")
    assert np.array_equal(n1, n2) and np.array_equal(k1, k2)
    sess = PlaySession(NOSTACK, against="learned", seed=1,
                       replay_out=tmp_path / "hand.nertz.json.gz")
    assert sess.bots[0].member() == "off"


def test_the_training_league_tells_it_each_format(family, tmp_path):
    pytest.importorskip("stable_baselines3")
    from agents.training.league import league_of, make_env
    from tests.training.tiny_runs import tiny

    cfg = tiny(tmp_path, teams=2, num_envs=4, max_ticks=30, opponents=["learned"])
    for rules, want in ((NOSTACK, "off"), (RulesConfig(num_teams=2), "on")):
        league = league_of(make_env(cfg, monitor=False, rules=rules))
        (agent,) = league._agents
        assert agent.member() == want


@pytest.mark.parametrize("change, words", [
    (lambda m: {"format": "x"}, "format/version must be"),
    (lambda m: {"members": []}, "members must be a list of 1 to 8"),
    (lambda m: {"extra": 1}, "key 'extra' must be absent"),
    (lambda m: {"members": [m[0], {"name": "on", "model": "on"}]}, r"members\[1\] must be an "
                                                                   "object with name, model"),
    (lambda m: {"members": [m[0], {**m[1], "name": "off"}]}, r"members\[1\].name must be a new"),
    (lambda m: {"members": [m[0], {**m[1], "model": "../on"}]}, r"members\[1\].model must be "
                                                                "the stem"),
    (lambda m: {"members": [m[0], {**m[1], "model": "gone"}]}, r"gone.npz and gone.json "
                                                               r"\(missing\)"),
    (lambda m: {"members": [{**m[0], "rules": {"stack": False}}, m[1]]},
     r"members\[0\].rules key 'stack' must be a RulesConfig field"),
    (lambda m: {"members": [{**m[0], "rules": {"num_teams": 99}}, m[1]]},
     r"members\[0\].rules must be values a table can have"),
    (lambda m: {"members": [m[0]]}, r"members\[0\].rules must be \{\}"),
])
def test_a_bad_family_file_is_refused_naming_the_field(family, change, words):
    members = [{"name": "off", "model": "off", "rules": {"stacking": False}},
               {"name": "on", "model": "on", "rules": {}}]
    obj = {"format": "nertz-family", "version": 1, "members": members, **change(members)}
    (family / FILE).write_text(json.dumps(obj))
    with pytest.raises(ValueError, match=words) as err:
        make_agent("learned")
    assert "agent 'learned'" in str(err.value) and FILE in str(err.value)


def test_a_huge_family_file_is_refused_unread(family):
    (family / FILE).write_bytes(b" " * (1 << 20))
    with pytest.raises(ValueError, match="larger than"):
        read_family(family)


def test_the_package_ships_the_family():
    """learned_family.json: stacking off plays the 2026-12-01 generalist (learned.npz), 4 to 8
    teams the lake-race net (lake_race.npz, one file; try 10, 2026-12-07), every other table
    learned_stacking.npz; all under the useful-shifts constraint, installed (package data),
    small."""
    fam = read_family(registry.MODELS_DIR)
    assert [(m.name, m.rules, m.path.name) for m in fam] == [
        ("generalist", {"stacking": False}, "learned.npz")] + [
        (f"lake-race-{n}", {"num_teams": n}, "lake_race.npz") for n in range(4, 9)] + [
        ("stacking", {}, "learned_stacking.npz")]
    bot = make_agent("learned")
    for m in fam:
        meta = json.loads(m.path.with_suffix(".json").read_text())
        assert meta["constraint"] == "useful-shifts" and m.path.stat().st_size < 1_000_000
    import fnmatch
    import tomllib
    root = registry.MODELS_DIR.parents[2]
    data = tomllib.loads((root / "pyproject.toml").read_text())["tool"]["setuptools"][
        "package-data"]["agents"]
    for p in [registry.MODELS_DIR / FILE] + [f for m in fam
                                              for f in (m.path, m.path.with_suffix(".json"))]:
        rel = p.relative_to(root / "agents").as_posix()
        assert any(fnmatch.fnmatch(rel, pat) for pat in data), rel   # installed with the package
    assert bot.for_table(NOSTACK).member() == "generalist"
    assert bot.for_table(RulesConfig(num_teams=5, river_size=5)).member() == "lake-race-5"
    assert bot.for_table(RulesConfig(num_teams=3, river_size=5)).member() == "stacking"
    assert bot.for_table(RulesConfig(num_teams=4, stacking=False)).member() == "generalist"


def test_a_family_folder_made_from_model_files(family, tmp_path_factory, capsys):
    """python -m agents.learned.family OUT NAME=MODEL[:RULES]: the models copied under the
    members' names and a family file that plays as learned:family= exactly as its models do;
    a bad member (no such model, a bad name, a rule no table has, rules on the last member)
    is refused naming it, and nothing is written."""
    from agents.learned.family import main, read_family_file
    src = tmp_path_factory.mktemp("src")
    tiny_model(src / "a", seed=31, hidden=(16,))
    tiny_model(src / "b", seed=32, hidden=(16,))
    out = tmp_path_factory.mktemp("made") / "fam"
    assert main([str(out), f"five={src / 'a.npz'}:river_size=5,stacking=false",
                 f"rest={src / 'b.npz'}", "--note", "two tiny models"]) == 0
    assert "learned:family=" in capsys.readouterr().out
    members = read_family_file(out / FILE)
    assert [(m.name, m.rules) for m in members] == [
        ("five", {"river_size": 5, "stacking": False}), ("rest", {})]
    assert json.loads((out / FILE).read_text())["note"] == "two tiny models"
    bot = make_agent(f"learned:family={out / FILE}")
    obs, masks = positions(2, n=24, steps=10)
    for config, stem in ((RulesConfig(num_teams=2, river_size=5, stacking=False), "a"),
                         (RulesConfig(num_teams=2, river_size=5), "b"), (NOSTACK, "b")):
        np.testing.assert_array_equal(bot.for_table(config).act_batch(obs, masks),
                                      make_agent(f"ppo:{src / stem}.npz").act_batch(obs, masks))
    for members, words in (([f"x={src / 'gone.npz'}"], "gone"),
                           ([f"Bad={src / 'a.npz'}"], r"members\[0\].name"),
                           ([f"x={src / 'a.npz'}:river_size=9", f"y={src / 'b.npz'}"],
                            r"members\[0\].rules"),
                           ([f"x={src / 'a.npz'}:stacking=false"], r"members\[0\].rules"),
                           ([f"x={src / 'a.npz'}:stacking"], "not FIELD=VALUE")):
        bad = out.parent / "bad"
        with pytest.raises(SystemExit):
            main([str(bad), *members])
        assert re.search(words, capsys.readouterr().err), words
        assert not bad.exists()
