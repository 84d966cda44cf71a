"""The `search:` agent (agents/search): it never peeks, an infinite margin is its base bot,
same seed same files, the oracle belief refused without cheat=yes, bad options one line."""
from __future__ import annotations

import numpy as np
import pytest

from agents.arena.tournament import run_tournament
from agents.base import SeatView
from agents.cli import main
from agents.registry import make_agent
from nertz_env import Engine, RulesConfig
from nertz_env.bot_specs import seat_bots
from nertz_env.core.memory import (MEM_NERTZ, MEM_STREAM, UNKNOWN, allocate_memory,
                                   init_memory, update_memory)
from nertz_env.core.policies import policy_actions_range
from nertz_env.core.state import NertzState
from nertz_env.envs.seats import SeatDriver

RB = "heuristic:style=river-builder"
FAST = "worlds=6,horizon=12"


def positions(teams, n, ticks, seed):
    """n river-builder tables after `ticks` ticks, with their public memory kept every tick."""
    config = RulesConfig(num_teams=teams)
    eng = Engine(config, n_tables=n, seed=seed)
    eng.reset()
    mem = allocate_memory(config, n)
    init_memory(eng.state, mem)
    kinds, knobs, _ = seat_bots(RB, config.num_seats)
    kinds, knobs = np.repeat(kinds[None], n, 0), np.repeat(knobs[None], n, 0)
    acts = np.zeros((n, config.num_seats), np.int16)
    for _ in range(ticks):
        policy_actions_range(eng.state, eng.params, eng.scratch, eng.masks, kinds, knobs,
                             np.zeros(n, np.uint64), acts, 0, n)
        eng.step(acts)
        update_memory(eng.state, mem)
    return eng, mem


def permute_never_seen(st, mem, seed) -> NertzState:
    """A copy of st with, at every table and team, the face-down cards the memory does not
    know (never seen, R6/R7/R15) shuffled among their positions: a truth no seat can tell
    from the real one."""
    out = NertzState(*(a.copy() for a in st))
    g = np.random.default_rng(seed)
    for e, t in np.ndindex(*st.waste_n.shape):
        n, k = int(st.nertz_n[e, t]), int(st.waste_n[e, t])
        places = [("nertz", d) for d in range(n - 1) if mem[e, t, MEM_NERTZ + d] == UNKNOWN]
        places += [("stream", d) for d in range(int(st.stream_n[e, t]))
                   if d != k - 1 and mem[e, t, MEM_STREAM + d] == UNKNOWN]
        values = [int(getattr(st, f)[e, t, d]) for f, d in places]
        for (f, d), c in zip(places, g.permutation(values)):
            getattr(out, f)[e, t, d] = c
    return out


def moves_on_twins(spec, teams, n=24, ticks=(10, 25, 40), seed=0):
    """(moves on the real tables, moves on their never-seen-permuted twins, decisions
    searched): every live table's every seat, at several points of the hands."""
    real, twin, searched = [], [], 0
    for tk in ticks:
        eng, mem = positions(teams, n, tk, seed=seed + tk)
        other = permute_never_seen(eng.state, mem, seed=tk)
        assert any((a != b).any() for a, b in zip(eng.state, other))   # the truth changed
        live = np.flatnonzero(eng.state.status == 0)
        rows_t = np.repeat(live, eng.config.num_seats)
        rows_s = np.tile(np.arange(eng.config.num_seats), live.size)
        obs, masks = SeatDriver(eng).gather(rows_t, rows_s)
        keys = np.arange(n, dtype=np.uint64) * 7919
        for st, out in ((eng.state, real), (other, twin)):
            agent = make_agent(spec, seed=3)            # a fresh agent per truth
            out.append(agent.act_view(SeatView(eng.config, st, mem, keys, rows_t, rows_s,
                                               obs, masks)))
            searched += agent.decisions if out is real else 0
    return np.concatenate(real), np.concatenate(twin), searched


@pytest.mark.parametrize("teams", [2, 4])
@pytest.mark.parametrize("belief", ["memory", "uniform"])
def test_no_peeking_permuting_never_seen_cards_never_changes_a_move(teams, belief):
    real, twin, searched = moves_on_twins(f"search:{FAST},belief={belief}", teams)
    assert searched > 30                          # the search did run on many decisions
    np.testing.assert_array_equal(real, twin)


@pytest.mark.parametrize("teams", [2, 4])
def test_the_oracle_fails_the_no_peeking_test(teams):
    """Negative control: the oracle belief reads the true hidden cards, and it shows."""
    real, twin, _ = moves_on_twins(f"search:{FAST},belief=oracle,cheat=yes", teams)
    assert (real != twin).any()


def _same_records(a, b):
    for f in ("score", "called", "win"):
        np.testing.assert_array_equal(getattr(a.records, f), getattr(b.records, f))
    np.testing.assert_array_equal(a.ticks, b.ticks)


@pytest.mark.parametrize("teams", [2, 4])
def test_an_infinite_margin_plays_exactly_the_base_bot(teams):
    """Every decision is searched (rollouts and all) and then the base move is played: the
    whole tournament equals river-builder's in that place, record for record."""
    agent = make_agent(f"search:{FAST},margin=inf")
    s = run_tournament([agent, "learned"], teams=teams, deals=3, seed=4, progress=False)
    b = run_tournament([RB, "learned"], teams=teams, deals=3, seed=4, progress=False)
    assert agent.decisions > 50
    _same_records(s, b)


def test_the_search_deviates_and_same_seed_gives_the_same_files(tmp_path):
    spec = f"search:{FAST}"
    runs = []
    for name in ("a", "b"):
        agent = make_agent(spec, seed=9)
        res = run_tournament([agent, "learned"], teams=2, deals=3, seed=9, progress=False)
        runs.append((agent, res, res.write(tmp_path / name)))
    (agent, res, pa), (_, _, pb) = runs
    assert agent.deviations > 0                    # it does leave the base move
    for x, y in zip(pa, pb):
        assert x.read_bytes() == y.read_bytes(), x.name
    base = run_tournament([RB, "learned"], teams=2, deals=3, seed=9, progress=False)
    assert not np.array_equal(base.records.score, res.records.score)


def test_the_oracle_is_refused_in_a_tournament_without_cheat_yes(tmp_path, capsys):
    out = tmp_path / "run"
    code = main(["tournament", "--agents", "search:belief=oracle,learned", "--deals", "2",
                 "--out", str(out), "--quiet"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and not out.exists()
    assert len(err.splitlines()) == 1 and "belief=oracle" in err and "cheat=yes" in err
    code = main(["experiment", "--treatment", "search:belief=oracle", "--baseline", "learned",
                 "--opponents", "baseline", "--teams", "2", "--deals", "2"])
    err = capsys.readouterr().err.strip()
    assert code == 2 and len(err.splitlines()) == 1 and "cheat=yes" in err


@pytest.mark.parametrize("spec, words", [
    ("search:worlds=0", "worlds='0' must be an int from 1"),
    ("search:worlds=many", "worlds='many'"),
    ("search:horizon=-3", "horizon='-3' must be an int >= 1 (ticks) or end"),
    ("search:belief=psychic", "belief='psychic' must be memory, uniform or oracle"),
    ("search:margin=-1", "margin='-1' must be a number >= 0"),
    ("search:margin=nan", "margin='nan'"),
    ("search:base=random", "base='random' must be a core bot"),
    ("search:opp=learned:model=x", "opp='learned:model=x' must be a core bot"),
    ("search:seed=-1", "seed='-1' must be an int >= 0"),
    ("search:cheat=maybe", "cheat='maybe' must be yes or no"),
    ("search:depth=3", "unknown option 'depth'; search options are base, opp"),
    ("search:belief=oracle", "write cheat=yes"),
])
def test_bad_options_are_one_line_errors(spec, words):
    with pytest.raises(ValueError) as err:
        make_agent(spec)
    msg = str(err.value)
    assert "\n" not in msg and words in msg and spec in msg


def test_options_and_their_defaults():
    a = make_agent("search")
    o = a.options
    assert (o.base, o.opp, o.worlds, o.horizon, o.belief, o.margin) == (RB, RB, None, 40,
                                                                        "memory", 0.0)
    assert a.worlds_at(RulesConfig(num_teams=2)) == 32       # the table's default worlds:
    assert a.worlds_at(RulesConfig(num_teams=4)) == 64       # test_search_worlds_default.py
    b = make_agent("search:base=cautious,opp=greedy,horizon=end,belief=oracle,cheat=yes,seed=4")
    assert (b.options.base, b.options.opp, b.options.horizon, b.seed) == (
        "heuristic:style=cautious", "greedy", 0, 4)
    with pytest.raises(ValueError, match="seat view"):      # only where the arena shows it
        a.act_batch(np.zeros((1, 791), np.float32), np.ones((1, 322), bool))
