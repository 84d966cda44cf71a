"""A tournament with a `search:` agent says, before the bar, that numba is compiling the
search kernels when they are not cached (its numba_kernels(): the rollout, the table copy, the
belief's re-deal), and not otherwise; agents without kernels of their own never trigger it.
numba's cache is probed through progress.kernel_cached, patched here (no timing)."""
from __future__ import annotations

import pytest

from agents.arena import progress
from agents.arena.tournament import run_tournament
from agents.registry import make_agent

SEARCH = "search:worlds=2,horizon=3"


def _probe(monkeypatch, uncached):
    """kernel_cached patched: False for the kernels in `uncached`, True for the others."""
    monkeypatch.setattr(progress, "kernel_cached", lambda k: k not in uncached)


def test_the_search_kernels_are_named_only_when_not_cached(monkeypatch, capsys):
    kernels = set(make_agent(SEARCH).numba_kernels())
    assert kernels                          # the rollout kernel, the copy, the re-deal
    _probe(monkeypatch, kernels)
    run_tournament(f"{SEARCH},greedy", teams=2, deals=2, seed=0, progress=True)
    err = capsys.readouterr().err
    assert progress.SEARCH_NOTICE in err and progress.COMPILE_NOTICE not in err
    _probe(monkeypatch, set())
    run_tournament(f"{SEARCH},greedy", teams=2, deals=2, seed=0, progress=True)
    assert progress.SEARCH_NOTICE not in capsys.readouterr().err


@pytest.mark.parametrize("belief, redeal", [("memory", "redeal_memory_slots"),
                                            ("uniform", "redeal_uniform_slots")])
def test_the_kernels_follow_the_options(belief, redeal):
    names = {k.__name__ for k in make_agent(f"{SEARCH},belief={belief}").numba_kernels()}
    assert redeal in names and "rollout_range" in names and "copy_tables" in names
    threaded = {k.__name__ for k in make_agent(f"{SEARCH},threads=2").numba_kernels()}
    assert "rollout_batch" in threaded and "rollout_range" not in threaded


def test_agents_without_kernels_of_their_own_never_say_it(monkeypatch, capsys):
    monkeypatch.setattr(progress, "kernel_cached", lambda k: False)   # nothing cached
    run_tournament("random,greedy", teams=2, deals=2, seed=0, progress=True)
    err = capsys.readouterr().err
    assert progress.COMPILE_NOTICE in err and progress.SEARCH_NOTICE not in err
