"""The Python-driven play loop: a batch of tables played tick by tick from Python, so that
agents outside the core (an SB3 zip, a draw, a `search:` agent) act.

- play_python plays every table of a batch (agents/arena/play.py Tables) to its end into the
  play loops' HandResults, in lock step, through the one seat driver (nertz_env/envs/seats.py
  SeatDriver): the same moves as play_bots_range for the same bots (tests/arena/
  test_tournament.py). An agent with `seat_view` (agents/base.py SeatView) gets act_view with
  the batch's state and the tables' public memory (nertz_env/core/memory.py, kept from the
  deal and after every tick); any other outside agent act_batch (or act per row). A pair
  (agents/base.py Pair) with such a member (whole games, roles swapping: play.py
  assign_roles leaves the pair) is played by pair_actions, each row by its role's member.
- agent_actions: one agent's moves on its rows, checked once (SeatDriver.check, R31).

play.py picks the loop (play_tables) and re-exports these names; records.py replays chosen
tables through play.play_python with a Recorder.
"""
from __future__ import annotations

import sys

import numpy as np

from nertz_env.core.batch import deal_bots_range
from nertz_env.core.memory import allocate_memory, init_memory, update_memory
from nertz_env.core.policies import POLICY_EXTERNAL
from nertz_env.engine import Engine
from nertz_env.envs.seats import SeatDriver
from nertz_env.replay import Recorder
from nertz_env.table.games import decide_winner

from nertz_env.core.observe import read_self

from ..base import Agent, Pair, SeatView


def play_python(config, roster, tables, games: bool, out, labels=None, watch=None):
    """The same play as play_bots_range, driven tick by tick from Python so that agents
    outside the core (torch policies, seat-view agents) can act; every table of the batch
    (tables: play.py Tables, roster: its Roster, out: its HandResults) moves in lock step.
    Per tick, through the one seat driver (nertz_env/envs/seats.py SeatDriver): one gather
    (one numba call) writes the core bots' moves at the tables still playing and the
    observation and mask of every seat an outside agent holds there; each such agent then
    gets one act_batch call with all its rows (every table and seat it holds, table-major),
    its ids are checked once (agent_actions: R31 included under illegal_move="raise"), and
    Engine.step takes them as checked. Finished
    tables cost nothing but the engine's status check, so a batch's long last hands run on
    few rows. torch runs on one thread meanwhile (restored after): its second thread only
    waits for the serial numba calls (benchmarks/README.md).
    labels: a list of one dict per table to record every hand played (a Recorder on the
    engine, labelled so); returns the Recorder, else None. watch: the batch's
    progress.StallWatch, told the live tables' ticks (hands running long, not agents
    thinking long), or None."""
    if watch is not None:
        watch.by_ticks()                         # first: its timer judges by the clock only
    seat_agent, kinds, knobs, policy_rng = (tables.seat_agent, tables.kinds, tables.knobs,
                                            tables.policy_rng)
    dkeys, hkeys = tables.deal_keys, tables.hand_keys
    n, S = seat_agent.shape
    T = config.num_teams
    H = out.scores.shape[1]
    eng = Engine(config, n_tables=n, parallel=False)
    rec = None
    if labels is not None:
        rec = Recorder(eng)
        rec.labels = dict(enumerate(labels))
    st = eng.state                               # read only: statuses, callers, ticks
    eng.seed_tables(hkeys[:, 0].copy())

    def serial(kernel, *args):                   # a serial engine: only the range kernel runs
        eng.run_kernel(None, kernel, *args)

    acts = np.zeros((n, S), np.int16)            # the core bots' choices, then the agents'
    hand_no = tables.first_hand.copy()
    h_idx = np.zeros(n, np.int64)
    totals = np.zeros((n, T), np.int64)
    game_calls = np.zeros((n, T), np.int64)
    live = np.ones(n, bool)
    serial(deal_bots_range, eng.masks, dkeys, hand_no, np.ones(n, np.int8))
    if rec is not None:
        rec.on_deal(eng)
    external = sorted({int(i) for i in np.unique(seat_agent[kinds == POLICY_EXTERNAL])})
    viewer = [sees_seat(roster.agents[i]) for i in external]  # SeatView: they get the state
    pairs = [viewing_pair(roster.agents[i]) for i in external]
    memory = allocate_memory(config, n) if any(viewer) or any(pairs) else None
    if memory is not None:
        init_memory(st, memory)
    held = [np.nonzero(seat_agent == i) for i in external]     # (tables, seats), table-major
    driver = SeatDriver(eng)
    illegal = SeatDriver.policy(eng.config)
    threads = _torch_threads(1)
    try:
        rows = None
        while live.any():
            if rows is None:                     # the live tables and their outside seats
                live_tables = np.flatnonzero(live)
                rows = [(t[live[t]], s[live[t]]) for t, s in held]
                bounds = np.cumsum([0] + [t.size for t, _ in rows])
                row_t = np.concatenate([t for t, _ in rows] + [_NO_ROWS])
                row_s = np.concatenate([s for _, s in rows] + [_NO_ROWS])
            obs, masks = driver.gather(row_t, row_s,        # fresh: the agents' to keep
                                       core=(kinds, knobs, policy_rng, acts, live_tables))
            for j, i in enumerate(external):
                a, b = bounds[j], bounds[j + 1]
                if b > a and pairs[j]:
                    acts[row_t[a:b], row_s[a:b]] = pair_actions(
                        roster.agents[i], roster.names[i], (config, st, memory, dkeys),
                        obs[a:b], masks[a:b], row_t[a:b], row_s[a:b], illegal)
                elif b > a:
                    view = SeatView(config, st, memory, dkeys, row_t[a:b], row_s[a:b],
                                    obs[a:b], masks[a:b]) if viewer[j] else None
                    acts[row_t[a:b], row_s[a:b]] = agent_actions(
                        roster.agents[i], roster.names[i], obs[a:b], masks[a:b],
                        row_t[a:b], row_s[a:b], illegal, view)
            eng.step(acts, checked=True)          # every id checked once, just above
            if watch is not None and watch.due():
                watch.check(st.tick[live_tables])
            if memory is not None:
                update_memory(st, memory)         # public events of the tick (R15)
            done = np.flatnonzero(live & eng.hand_over)
            if not done.size:
                continue
            scores = eng.hand_scores()
            redeal = np.zeros(n, np.int8)
            for e in done:
                h = h_idx[e]
                out.scores[e, h] = scores[e]
                out.calls[e, h] = st.callers[e]
                out.ticks[e, h] = st.tick[e]
                totals[e] += scores[e]
                game_calls[e] += st.callers[e]
                out.hands[e] = h + 1
                if games:
                    w = decide_winner(totals[e].tolist(), game_calls[e].tolist(),
                                      config.target_score)
                    if w is not None and w >= 0:
                        out.winner[e] = w
                        live[e] = False
                    elif h + 1 >= H:
                        live[e] = False
                    else:
                        h_idx[e] += 1
                        hand_no[e] += 1
                        redeal[e] = 1
                else:
                    live[e] = False
            if not live[done].all():
                rows = None
            if redeal.any():
                st.rng[redeal != 0] = hkeys[redeal != 0, h_idx[redeal != 0]]  # the hand's key
                serial(deal_bots_range, eng.masks, dkeys, hand_no, redeal)
                if memory is not None:
                    update_memory(st, memory)     # a new deal is remembered afresh
                if rec is not None:
                    rec.on_deal(eng, redeal)
    finally:
        _torch_threads(threads)
        if rec is not None:
            rec.detach()
    return rec


_NO_ROWS = np.zeros(0, np.int64)


def _torch_threads(k):
    """torch's intra-op thread count before setting it to k (None, and nothing done, when
    torch is not imported: no agent of this run uses it)."""
    torch = sys.modules.get("torch")
    if k is None or torch is None:
        return None
    old = torch.get_num_threads()
    torch.set_num_threads(k)
    return old


def agent_actions(agent, name, observations, action_masks, rows_t, rows_s,
                  illegal: str = "engine", view=None) -> np.ndarray:
    """agent.act_batch(observations, action_masks) (or `act` per row for an agent with only
    `act`; agent.act_view(view) when a SeatView is given) on the rows (rows_t, rows_s),
    checked once by SeatDriver.check: int64 [n] action
    ids 0..N_ACTIONS-1 of an integer dtype; anything else (floats, bools, wrong length, ids
    out of range) is a ValueError naming the agent; so is an illegal id under illegal="raise"
    (SeatDriver.policy of the table's rules, R31)."""
    where = f"agent {name!r} act_batch"
    batch = getattr(agent, "act_batch", None)
    if view is not None:
        where = f"agent {name!r} act_view"
        out = agent.act_view(view)
    elif callable(batch):
        out = batch(observations, action_masks)
    else:
        where = f"agent {name!r} act"
        out = [agent.act(o, m) for o, m in zip(observations, action_masks)]
    return SeatDriver.check(out, action_masks, rows_t, rows_s, where, illegal=illegal)


def sees_seat(agent) -> bool:
    """Whether the agent is played with act_view (agents/base.py SeatView)."""
    return isinstance(agent, Agent) and bool(agent.seat_view)


def viewing_pair(agent) -> bool:
    """A pair (agents/base.py Pair) with a member that sees its seat: played by pair_actions
    (Pair.act_batch has no view to pass)."""
    return isinstance(agent, Pair) and any(sees_seat(m) for m in agent.members)


def pair_actions(pair, name, table, observations, action_masks, rows_t, rows_s,
                 illegal: str = "engine") -> np.ndarray:
    """A viewing pair's moves on its rows (table: config, state, memory, deal keys): each row
    played by the member of the role its seat holds (the observation's, as Pair.act_batch
    reads it, R4), a member that sees its seat with a SeatView of its rows; each member's ids
    checked once (agent_actions, named NAME.nertz / NAME.stream)."""
    config, st, memory, dkeys = table
    stream = read_self(observations).holds_stream
    out = np.empty(len(rows_t), np.int64)
    for member, role, sel in ((pair.nertz, "nertz", ~stream), (pair.stream, "stream", stream)):
        if sel.any():
            view = SeatView(config, st, memory, dkeys, rows_t[sel], rows_s[sel],
                            observations[sel], action_masks[sel]) if sees_seat(member) else None
            out[sel] = agent_actions(member, f"{name}.{role}", observations[sel],
                                     action_masks[sel], rows_t[sel], rows_s[sel], illegal, view)
    return out
