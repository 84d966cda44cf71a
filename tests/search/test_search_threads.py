"""threads=N: the search's rollouts on N numba threads play the same moves as on one."""
from __future__ import annotations

import numba
import pytest

from agents.arena.tournament import run_tournament
from agents.registry import make_agent
from tests.search.test_search_agent import FAST, _same_records


@pytest.mark.parametrize("teams", [2, 4])
def test_two_threads_play_the_same_records_as_one(teams):
    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("numba has one thread here (NUMBA_NUM_THREADS=1)")
    one, two = make_agent(f"search:{FAST}"), make_agent(f"search:{FAST},threads=2")
    assert two.options.threads == 2
    a = run_tournament([one, "learned"], teams=teams, deals=3, seed=6, progress=False)
    b = run_tournament([two, "learned"], teams=teams, deals=3, seed=6, progress=False)
    _same_records(a, b)
    assert one.decisions == two.decisions > 50 and one.deviations == two.deviations > 0


@pytest.mark.parametrize("value", ["0", "x", "9999"])
def test_bad_threads_is_a_one_line_error(value):
    spec = f"search:threads={value}"
    with pytest.raises(ValueError) as err:
        make_agent(spec)
    msg = str(err.value)
    assert "\n" not in msg and spec in msg and f"threads={value!r} must be an int from 1 to" \
        in msg and "NUMBA_NUM_THREADS" in msg
