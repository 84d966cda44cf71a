"""Before a `nertz play --human` hand starts: numba's kernels compiled while nobody waits for
a move, with a one-line notice when they are not in numba's cache yet (a fresh install).

On a fresh install the first search decision of a `search:` agent compiles the rollout,
world and net kernels (nertz_env/core/fork.py, worlds.py, memory.py, net_policy.py), and the
first tick compiles the engine's step kernels. Measured with NUMBA_CACHE_DIR set to an empty
folder (the shared 2-core machine at load 7-8, 2026-12-07): the first tick against `search`
took 111 s (0.1 s once cached); `nertz play --human --terminal --teams 2 --against search`
printed the notice and "done in 145 s", `search:opp=learned` "done in 215 s" (load 5-8),
after which its slowest tick of 3,000 took 0.05 s; the first ticks against greedy took 16 s
(the step kernels alone).
`warm_up` does that work before the clock starts (before the page's address or the
terminal's first position is shown), on a throwaway table of the session's rules and seed
(`rehearse`): it plays ticks (the step kernels) where every agent that sees its seat
(agents/base.py SeatView: a `search:` agent, or a pair's searching member) decides at its
seats until each has searched once (a position with two or more candidates: the dealt one
may have only one) or REHEARSAL_TICKS ticks have passed, and every other agent (a core bot,
a learned net: the observation and its own kernels) plays its seats through a copy of
itself (copy.deepcopy), so that a seeded agent's generator is not drawn from. The real table,
its memory and the agents' counts and generators are untouched, and a search's move depends
only on the position and its seed, so the hand plays as it would have without.
Without the other agents' part a fresh install's first tick against a core bot compiled
the observation and bot kernels on the person's clock (tests/human/test_play_browser.py
timed out so in CI, 2026-12-07: the move queued at tick 0 not played within 10 s).
The notice (stderr, as agents/arena/progress.py's COMPILE_NOTICE) is printed only when a
kernel that work calls has no cache file (progress.py kernel_cached), so an agent that needs
no compile (a core bot, a cached search) starts with no notice.
"""
from __future__ import annotations

import copy
import sys
import time

import numpy as np

from nertz_env.core.batch import step_range_tuples
from nertz_env.engine import Engine
from nertz_env.envs.memory_keeper import TableMemory
from nertz_env.envs.seats import SeatDriver
from nertz_env.table.table import Table

from ..arena.progress import kernel_cached
from ..arena.seat_loop import sees_seat

SEARCH_GUESS = "2 to 4 minutes on a busy 2-core machine"   # measured 145 s, 215 s
GAME_GUESS = "about 20 s on a busy 2-core machine"            # measured 16 s, load 7
GAME_KERNELS = (step_range_tuples,)                # the engine's tick (Engine.step, 1 table)
REHEARSAL_TICKS = 200                              # a hand lasts about a hundred ticks
COUNTS = ("decisions", "deviations")               # a search agent's counts, put back


def search_kernels(agent) -> tuple:
    """The numba kernels a `search:` agent's first decision compiles (its numba_kernels,
    agents/search/agent.py); empty for an agent that has none."""
    kernels = getattr(agent, "numba_kernels", None)
    return tuple(kernels()) if callable(kernels) else ()


def warmup_notice(session) -> str | None:
    """The line warm_up prints first, or None when every kernel it will call is cached."""
    searching = [k for agent, _ in session.viewers() for k in search_kernels(agent)]
    if not all(kernel_cached(k) for k in searching):
        return ("compiling the search kernels (first use after install, "
                f"{SEARCH_GUESS}; cached for later games)...")
    if not all(kernel_cached(k) for k in GAME_KERNELS):
        return f"compiling the game kernels (first use after install, {GAME_GUESS})..."
    return None


def stand_ins(others) -> list:
    """(copy of the player, seats) for each of `others`: copies act on the throwaway table,
    so the real players' generators and any state they keep are not touched. A player that
    cannot be copied is left out (its kernels then compile on its first real move)."""
    out = []
    for bot, seats in others:
        try:
            out.append((copy.deepcopy(bot), seats))
        except Exception:                      # (a player holding an uncopyable handle)
            continue
    return out


def rehearse(config, viewers, seed: int = 0, others=()) -> int:
    """A throwaway table of `config` dealt from `seed` (its scores read) plays up to
    REHEARSAL_TICKS ticks: each of `viewers` ((player, seats), PlaySession.viewers) decides
    at its seats by act_view on the table's memory and its moves are played, and each of
    `others` ((player, seats): the agents that do not see their seat) plays its seats by
    act_batch (or act) through a copy of itself (stand_ins; a copy that fails is dropped:
    the real agent's failure stops the real clock with its reason); the person's seat waits. It
    stops when every viewer has searched once (its `decisions` count grew; one decision for
    a viewer without one); no viewers: one tick, no memory kept. The viewers' `decisions`
    and `deviations` are put back. Returns the ticks played (>= 1: the step kernels ran)."""
    engine = Engine(config, 1, seed)
    engine.reset(hands=[0])
    table, driver = Table(engine), SeatDriver(engine)
    table.hand_scores()                        # (the page's every poll and the hand's end)
    memory = TableMemory(engine) if viewers else None
    if memory is not None:
        memory.dealt()
    counts = [{k: getattr(bot, k) for k in COUNTS if hasattr(bot, k)} for bot, _ in viewers]
    todo = [True] * len(viewers)
    copies = stand_ins(others)
    ticks = 0
    try:
        while ticks < REHEARSAL_TICKS and not table.hand_over:
            moves = {}
            for i, (bot, seats) in enumerate(viewers):
                rows_s = np.array(seats, np.int64)
                rows_t = np.zeros_like(rows_s)
                obs, legal = driver.gather(rows_t, rows_s)
                before = getattr(bot, "decisions", -1)
                ids = bot.act_view(memory.view(rows_t, rows_s, obs, legal))
                todo[i] = todo[i] and getattr(bot, "decisions", 0) == before
                moves.update({s: table.decode(int(a), s) for s, a in zip(seats, ids)})
            for bot, seats in list(copies):
                rows_s = np.array(seats, np.int64)
                obs, legal = driver.gather(np.zeros_like(rows_s), rows_s)
                try:
                    if callable(getattr(bot, "act_batch", None)):
                        ids = bot.act_batch(obs, legal)
                    else:
                        ids = [bot.act(o, m) for o, m in zip(obs, legal)]
                    moves.update({s: table.decode(int(a), s) for s, a in zip(seats, ids)})
                except Exception:              # its failure is told on the real clock
                    copies.remove((bot, seats))  # (the page: "the clock stopped at ...")
            table.step(moves)
            if memory is not None:
                memory.ticked()
            ticks += 1
            if not any(todo):
                break
    finally:
        for (bot, _), kept in zip(viewers, counts):
            for k, v in kept.items():
                setattr(bot, k, v)
    return ticks


def warm_up(session, out=None) -> str | None:
    """Compile (or load) every kernel the hand's first ticks call before the clock starts:
    the notice on `out` (stderr) when some are not cached, then `rehearse` on a throwaway
    table of the session's rules and seed. Returns the notice printed (None: none)."""
    out = sys.stderr if out is None else out
    note = warmup_notice(session)
    start = time.monotonic()
    if note:
        print(note, end="", file=out, flush=True)
    others = [(bot, seats) for bot, seats in session.players() if not sees_seat(bot)]
    rehearse(session.config, session.viewers(), session.seed, others)
    if note:
        print(f" done in {time.monotonic() - start:.0f} s", file=out, flush=True)
    return note
