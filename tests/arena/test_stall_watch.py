"""'hands are running long' (agents/arena/progress.py StallWatch) is said when a batch's hands
run long, not when its agents think long: the arena's Python loop sees its ticks, so a slow
agent (a `search:` agent, seconds per tick over a big batch) playing hands of normal length is
never said to stall, while agents that stall hands still are."""
from __future__ import annotations

import time

import numpy as np
import pytest

from agents.arena import progress
from agents.arena import tournament as tournament_mod
from agents.base import Agent
from nertz_env.config import RulesConfig
from nertz_env.core.codec import WAIT


class _Bar:
    """A progress bar that keeps its postfixes (say_once writes the line through tqdm)."""

    def __init__(self, total, *a):
        self.total, self.postfix = total, []

    def update(self, k):
        pass

    def refresh(self):
        pass

    def close(self):
        pass

    def set_postfix_str(self, text, refresh=True):
        self.postfix.append(text)


class Waits(Agent):
    """Never moves, and takes 2 ms a tick: with every seat waiting, the idle burns (R27) go
    round until max_ticks, for about a second."""
    name = "waits"

    def act_batch(self, observations, action_masks):
        time.sleep(0.002)
        return np.full(len(observations), WAIT, np.int64)


SEARCH = ["search:worlds=2,horizon=5", "heuristic:style=river-builder"]


@pytest.fixture
def bars(monkeypatch):
    """Batches said long after 0.25 s (the runs below take longer), the bars kept."""
    tournament_mod.run_tournament(SEARCH, teams=2, deals=2, progress=False)  # compiled, imported
    monkeypatch.setattr(progress, "STALL_S", 0.25)
    out = []
    monkeypatch.setattr(tournament_mod, "progress_bar",
                        lambda total, on, desc: out.append(_Bar(total)) or out[-1])
    return out


def test_a_slow_agent_playing_normal_hands_is_not_said_to_stall(bars, capsys):
    start = time.monotonic()
    res = tournament_mod.run_tournament(SEARCH, teams=2, deals=80, seed=1)
    assert time.monotonic() - start > 2 * progress.STALL_S     # it did play long
    assert res.ticks.max() < RulesConfig().max_ticks // 2       # hands of normal length
    assert "running long" not in capsys.readouterr().err
    assert bars[0].postfix == []


def test_hands_that_run_long_in_the_python_loop_are_still_said(bars, capsys):
    config = RulesConfig(num_teams=2, max_ticks=400)
    res = tournament_mod.run_tournament([Waits(), Waits()], config=config, deals=3, seed=1)
    assert (res.ticks == 400).all()
    err = capsys.readouterr().err
    assert err.count("hands are running long") == 1
    assert "still playing past tick 200 of max_ticks=400" in err
    assert bars[0].postfix == ["hands running long"]
