"""The search's base move from the core (nertz_env/core/policies.py scored_moves: the core
bot's rule on the engine state, all rows in one numba call) is the Python bot's move on the
seat's observation (agents/python_policies.py), move for move."""
from __future__ import annotations

import numpy as np
import pytest

from agents.bots import ScoredAgent
from nertz_env.bot_specs import STYLES
from nertz_env.core.policies import scored_moves
from nertz_env.envs.seats import SeatDriver
from tests.search.test_search_agent import positions


@pytest.mark.parametrize("teams", [2, 3, 4])
def test_core_base_move_equals_the_python_bot_on_many_positions(teams):
    n = done = 0
    for tk in (0, 4, 15, 35, 70):
        eng, _ = positions(teams, 48, tk, seed=100 * teams + tk)
        live = np.flatnonzero(eng.state.status == 0)
        rows = np.repeat(live, eng.config.num_seats)
        seats = np.tile(np.arange(eng.config.num_seats), live.size)
        obs, masks = SeatDriver(eng).gather(rows, seats)
        for style in STYLES:
            bot = ScoredAgent(style)
            py = bot.act_batch(obs, masks)
            core = scored_moves(eng.state, eng.config, rows, seats, masks, bot.knobs)
            np.testing.assert_array_equal(core, py, err_msg=f"{style} at tick {tk}")
            n += len(rows)
            done += int((py != 0).sum())
    assert n > 2000 and done > 500                  # many positions, most not a Wait


def test_a_mask_of_the_wrong_shape_is_one_line():
    eng, _ = positions(2, 2, 3, seed=1)
    with pytest.raises(ValueError, match=r"masks must be \[2, 322\]") as err:
        scored_moves(eng.state, eng.config, [0, 1], [0, 0], np.ones((2, 5), bool),
                     ScoredAgent("greedy").knobs)
    assert "\n" not in str(err.value)
