"""The search's evaluation (SearchAgent.evaluate) and its deviation rule: margin and se=K
standard errors of the paired gain over the worlds."""
from __future__ import annotations

import numpy as np
import pytest

from agents.arena.tournament import run_tournament
from agents.base import SeatView
from agents.registry import make_agent
from nertz_env.envs.seats import SeatDriver
from tests.search.test_search_agent import FAST, _same_records, positions


def views(teams, n=24, ticks=(10, 30)):
    """Seat views of every live table's every seat, at a few points of the hands."""
    out = []
    for tk in ticks:
        eng, mem = positions(teams, n, tk, seed=tk)
        live = np.flatnonzero(eng.state.status == 0)
        rows_t = np.repeat(live, eng.config.num_seats)
        rows_s = np.tile(np.arange(eng.config.num_seats), live.size)
        obs, masks = SeatDriver(eng).gather(rows_t, rows_s)
        keys = np.arange(n, dtype=np.uint64) * 7919
        out.append(SeatView(eng.config, eng.state, mem, keys, rows_t, rows_s, obs, masks))
    return out


@pytest.mark.parametrize("teams", [2, 4])
def test_evaluate_reports_what_act_view_plays(teams):
    """Per row: the base move first with gain 0, every move among the candidates, the move
    the best gain over the margin, standard errors >= 0 (some > 0)."""
    a, b = make_agent(f"search:{FAST}", seed=3), make_agent(f"search:{FAST}", seed=3)
    searched = []
    for view in views(teams):
        res = a.evaluate(view)
        np.testing.assert_array_equal([r.move for r in res], b.act_view(view))
        searched += [r for r in res if r.searched]
        for r in res:
            assert r.gains[0] == 0 and r.se[0] == 0 and r.move in r.candidates
            assert len(r.gains) == len(r.se) == len(r.candidates)
            best = int(np.argmax(r.gains))
            assert r.move == (r.candidates[best] if r.gains[best] > 0 else r.candidates[0])
            assert r.searched == (len(r.candidates) > 1)
            assert np.all(r.se[1:] >= 0)
    assert len(searched) == a.decisions > 20
    assert sum(r.move != r.candidates[0] for r in searched) == a.deviations > 0
    # paired differences that are not constant have a positive standard error
    assert any((r.se[1:] > 0).any() for r in searched)


@pytest.mark.parametrize("teams", [2, 4])
def test_a_gain_below_k_standard_errors_is_not_played(teams):
    """Same seed, same rollouts, same gains: se=K only withholds the deviations whose best
    gain does not exceed K standard errors, and there are such deviations."""
    withheld = kept = 0
    for view in views(teams):
        plain = make_agent(f"search:{FAST}", seed=3).evaluate(view)
        rule = make_agent(f"search:{FAST},se=1", seed=3).evaluate(view)
        for p, r in zip(plain, rule):
            np.testing.assert_array_equal(p.gains, r.gains)
            np.testing.assert_array_equal(p.se, r.se)
            best = int(np.argmax(r.gains))
            g, s = r.gains[best], r.se[best]
            if g > 0 and g > 1 * s:
                assert r.move == p.move == r.candidates[best]
                kept += best != 0
            else:
                assert r.move == r.candidates[0]
                withheld += p.move != r.candidates[0]
    assert withheld > 0 and kept > 0


def test_se_zero_is_the_margin_alone():
    a, b = make_agent(f"search:{FAST},se=0"), make_agent(f"search:{FAST}")
    s = run_tournament([a, "learned"], teams=2, deals=3, seed=4, progress=False)
    t = run_tournament([b, "learned"], teams=2, deals=3, seed=4, progress=False)
    _same_records(s, t)
    assert a.deviations == b.deviations > 0


@pytest.mark.parametrize("spec, words", [
    ("search:se=-1", "se='-1' must be a finite number >= 0"),
    ("search:se=nan", "se='nan' must be"),
    ("search:se=inf", "se='inf' must be"),
    ("search:se=two", "se='two' must be"),
    ("search:worlds=1,se=1", "se='1' needs worlds >= 2"),
])
def test_bad_se_is_a_one_line_error(spec, words):
    with pytest.raises(ValueError) as err:
        make_agent(spec)
    msg = str(err.value)
    assert "\n" not in msg and words in msg and spec in msg


def test_one_world_has_no_standard_error_and_se_zero_still_plays():
    view = views(2, ticks=(20,))[0]
    res = make_agent("search:worlds=1,horizon=12", seed=3).evaluate(view)
    searched = [r for r in res if r.searched]
    assert searched and all(np.isnan(r.se[1:]).all() for r in searched)
    assert any(r.move != r.candidates[0] for r in searched)
