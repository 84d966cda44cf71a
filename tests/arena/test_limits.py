"""One table of limits (agents/arena/limits.py) for the CLI and experiment specs: a spec
refuses what the CLI refuses, with the same words, before anything is allocated; grid axes
are typed per entry and free of duplicates; runs that would not fit in memory are refused
before they play; Ray's connection failure is one line (issue 20, parts 2 and 4)."""
from __future__ import annotations

import argparse
import logging
import sys
import time
import types
import warnings

import pytest

from agents.arena import limits
from agents.arena.experiment import cell_plan, load_spec, run_experiment, spec_from_dict
from agents.arena.seatings import make_lineups
from agents.arena.tournament import run_tournament
from agents.cli import main
from agents.cli.common import int_option
from nertz_env.table import games

BASE = {"baseline": "greedy", "treatments": {"h": "heuristic"}, "deals": 4}


def spec(**kw):
    return spec_from_dict({**BASE, **kw})


def refused(kw, *words):
    t = time.perf_counter()
    with pytest.raises(ValueError) as exc:
        spec(**kw)
    assert time.perf_counter() - t < 5
    msg = str(exc.value)
    assert "\n" not in msg
    for w in words:
        assert w in msg, msg
    return msg


# ------------------------------------------------------------------ the same limits
@pytest.mark.parametrize("key", sorted(k for k in limits.LIMITS if k not in (
    "block_deals", "games", "probe_deals", "budget", "responders")))   # the last 3: no spec field
def test_a_spec_refuses_what_the_cli_refuses_in_the_same_words(key):
    lim = limits.LIMITS[key]
    extra = {"precision": 0.1} if key == "max_deals" else {}
    extra.update({"modes": ["games"]} if key == "max_game_hands" else {})
    parse = int_option(key)
    for bad in (lim.lo - 1, lim.hi + 1, 10**30):
        msg = refused({key: bad, **extra}, limits.allowed(key))
        with pytest.raises(argparse.ArgumentTypeError) as exc:
            parse(str(bad))
        assert limits.allowed(key) in str(exc.value), (msg, exc.value)
    assert parse(str(lim.hi)) == lim.hi


def test_the_reported_values_are_refused_at_once():
    refused({"deals": 10**12}, "deals=1000000000000", "from 2 to 1000000")
    refused({"max_game_hands": 10**9, "modes": ["games"]}, "max_game_hands", "from 1 to 400")
    refused({"seed": 2**64}, "seed")
    refused({"deals": 4.0}, "deals=4.0")
    refused({"deals": True}, "deals=True")


def test_the_game_hands_limit_is_the_tables_own_cap():
    assert limits.MAX_GAME_HANDS == games.MAX_HANDS


# ------------------------------------------------------------------ grid entries
@pytest.mark.parametrize("kw, words", [
    ({"speeds": [1, 2, 3, 1]}, ("speeds=[1, 2, 3, 1]", "entry 0 (1)", "'1,2,1,3'")),
    ({"speeds": [None]}, ("speeds",)),
    ({"speeds": ["fast"]}, ("speeds", "'fast'")),
    ({"speeds": ["1,-2"]}, ("speeds",)),
    ({"speeds": "even"}, ("speeds", "must be a list")),
    ({"teams": [2, 2]}, ("teams=[2, 2]", "entries 0 and 1 are the same")),
    ({"teams": [2.0]}, ("teams",)),
    ({"teams": [True]}, ("teams",)),
    ({"teams": ["2"]}, ("teams",)),
    ({"teams": []}, ("teams", "1 to 64")),
    ({"opponents": ["greedy", "greedy"]}, ("opponents", "same")),
    ({"opponents": [["greedy", "random"], "greedy+random"]}, ("opponents", "same")),
    ({"opponents": [3]}, ("opponents", "entry 0 (3)")),
    ({"opponents": [{"a": 1}]}, ("opponents",)),
    ({"speeds": ["1,2", [1, 2]]}, ("speeds", "same (1,2)")),
    ({"speeds": ["even", "even"]}, ("speeds", "same")),
    ({"modes": ["hands", "hands"]}, ("modes",)),
    ({"modes": [["hands"]]}, ("modes",)),
    ({"outcomes": ["win", {"x": 1}]}, ("outcomes",)),
    ({"rules": {"a": {}, "b": {}}}, ("rules.b", "same variant as rules.a")),
    ({"rules": {"a": {"river_size": 5}, "b": {"river_size": 5}}}, ("rules.b",)),
    ({"treatments": {"a": "heuristic", "b": "heuristic"}}, ("treatments", "same agent spec")),
    ({"treatments": {"a": 3}}, ("treatments",)),
    ({"opponents": ["baseline", "greedy"]}, ("opponents", "'baseline' and 'greedy'", "same")),
    ({"name": "x" * 101}, ("name", "100 characters")),
    ({"name": 7}, ("name",)),
    ({"opponents": [f"heuristic:flip={k}" for k in range(65)]}, ("opponents", "1 to 64")),
    ({"rules": {"a": {"target_score": 50}}}, ("rules.a.target_score", "games mode")),
])
def test_grid_entries_are_typed_and_distinct(kw, words):
    refused(kw, *words)


def test_equal_entries_written_differently_are_one_entry_each_way():
    s = spec(speeds=[[1, 2], "mixed"], opponents=[["greedy", "random"]])
    assert [c.speeds for c in s.cells()] == ["1,2", "mixed"]
    assert {c.opponents for c in s.cells()} == {"greedy+random"}
    spec(rules={"a": {"target_score": 50}}, modes=["hands", "games"])


def test_too_many_cells_are_refused_before_anything_is_built():
    many = {f"v{k}": {"max_ticks": 100 + k} for k in range(60)}
    refused({"rules": many, "teams": [2, 3, 4], "speeds": ["even", "mixed"], "opponents":
             ["baseline", "half", "random"]}, "grid", f"at most {limits.MAX_CELLS}")


# ------------------------------------------------------------------ memory
def test_a_cell_that_would_not_fit_in_memory_is_refused_before_it_plays():
    refused({"teams": [8], "opponents": ["half"], "deals": 1_000_000},
            "cell half, 8 teams", "at most 142857 deals")
    refused({"modes": ["games"], "max_game_hands": 400, "deals": 100_000, "teams": [8]},
            "games", "hand scores")


def test_a_precision_runs_default_cap_is_clipped_to_what_fits():
    s = spec(teams=[8], deals=2000, precision=0.01)
    assert s.deal_cap() == limits.deals_that_fit(2 * 8, 1, 8) < 100 * 2000
    with pytest.raises(ValueError, match="at most"):
        spec(teams=[8], deals=1000, precision=0.01, max_deals=1_000_000)


def test_tables_per_deal_counts_what_cell_plan_plays():
    s = spec(teams=[2, 3, 5, 6, 8], opponents=["baseline", "half", "random"],
             treatments={"a": "heuristic", "b": "random"})
    for c in s.cells():
        assert s.tables_per_deal(c) == sum(len(x) for x in cell_plan(s, c).seats), c


def test_tournaments_that_would_not_fit_are_refused_fast():
    t = time.perf_counter()
    with pytest.raises(ValueError, match="lineups"):
        make_lineups(40, 8)
    with pytest.raises(ValueError, match="more than a run keeps in memory"):
        run_tournament(["random", "greedy", "heuristic", "heuristic:style=cautious"], teams=4,
                       deals=1_000_000, progress=False)
    with pytest.raises(ValueError, match="more than a run keeps in memory"):
        run_tournament(["random", "greedy"], teams=8, deals=100_000, mode="games",
                       max_game_hands=400, progress=False)
    assert time.perf_counter() - t < 10


def test_the_cli_refuses_them_in_one_line(capsys):
    assert main(["tournament", "--deals", "1000000", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("nertz: error: deals") and err.count("\n") == 1, err


def test_a_huge_spec_file_is_refused_unread(tmp_path):
    big = tmp_path / "big.toml"
    big.write_text('baseline = "greedy"\n' + "#" * limits.MAX_SPEC_BYTES)
    with pytest.raises(ValueError, match="larger than"):
        load_spec(big)


# ------------------------------------------------------------------ Ray
@pytest.fixture
def no_cluster(monkeypatch):
    """A stand-in ray whose init fails as ray's does with no cluster at the address."""
    fake = types.ModuleType("ray")
    calls = []

    def init(address=None, **kw):
        calls.append(address)
        # what ray's client prints while it tries: an INFO log line and a timeout warning
        log = logging.getLogger("ray.util.client.fake")
        log.setLevel(logging.INFO)
        log.addHandler(logging.StreamHandler(sys.stderr))
        log.info("Passing the following kwargs to ray.init() on the server")
        warnings.warn("Ray Client connection timed out.", UserWarning, stacklevel=1)
        raise ConnectionError(f"Could not find any running Ray instance. Please specify the "
                              f"one to connect to by setting `--address` flag.\n  {address}")

    fake.init = init
    fake.is_initialized = lambda: False
    fake.remote = lambda *a, **k: None
    monkeypatch.setitem(sys.modules, "ray", fake)
    return calls


def test_ray_without_a_cluster_is_one_line(no_cluster, tmp_path, capsys):
    out = tmp_path / "r"
    with warnings.catch_warnings(record=True) as shown:
        warnings.simplefilter("always")
        rc = main(["tournament", "--agents", "greedy,heuristic", "--teams", "2", "--deals", "2",
                   "--quiet", "--ray", "ray://127.0.0.1:1", "--out", str(out)])
    err = capsys.readouterr().err
    assert not [w for w in shown if "Ray Client" in str(w.message)]
    assert rc == 2 and err.count("\n") == 1 and err.startswith("nertz: error: Ray: "), err
    assert "ray://127.0.0.1:1" in err and "ray start --head" in err and "drop --ray" in err
    assert "ConnectionError: Could not find any running Ray instance" in err
    assert no_cluster == ["ray://127.0.0.1:1"] and not out.exists()
    with pytest.raises(ValueError, match="cannot start a local Ray instance"):
        run_experiment(spec(), progress=False, executor="ray")
