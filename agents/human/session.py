"""One hand of a person against agents: `PlaySession`, the game half of `nertz play --human`
(server.py puts it on a wall clock and a web page, terminal.py in a terminal).

- A session is one hand at one table (an Engine behind the readable Table API) with the
  person at one seat and agents (agents.registry.make_agent specs: bots or learned models)
  at the others. `session.tick()` plays one tick (R20): the person's queued move (or wait),
  every agent's move (`bot_moves`), then `table.step`. A `Recorder` (nertz_env/replay) is
  attached to the engine before the deal, so the hand ends with a replay file that plays
  back exactly.
- An agent that sees its seat's information of the engine state (agents/base.py SeatView,
  `seat_view`: a `search:` agent) plays here as in the arena's Python loop (agents/arena/
  seat_loop.py): the session keeps the table's public memory as the envs do (nertz_env/envs/
  memory_keeper.py TableMemory: remembered afresh at the deal, updated after every tick) and
  calls act_view with a view of its seats; the deal key (the seeds of the agent's draws) is
  a one-way hash of the table's generator key after the deal: it follows the seed of a
  seeded deal (a start layout's table is seeded 0) and says nothing of the cards.
- A move the person asks for is checked at once against the current position: a legal one
  is queued for the next tick, anything else is refused with the rule that forbids it
  (nertz_env/table/explain.py). Positions change only at ticks, under one lock, so a queued
  move is still legal when its tick comes.

Knows nothing of HTTP or terminals.
"""
from __future__ import annotations

import os
import tempfile
import threading
from datetime import datetime, timezone
from pathlib import Path

import numpy as np

from nertz_env.actions import Move
from nertz_env.config import RulesConfig
from nertz_env.core.rules import stream_seat
from nertz_env.envs.memory_keeper import TableMemory
from nertz_env.envs.opponents import for_table
from nertz_env.engine import Engine
from nertz_env.envs.seats import SeatDriver
from nertz_env.replay import SUFFIX, Recorder
from nertz_env.table.explain import explain_illegal, hand_over_reason
from nertz_env.table.table import Table

from ..arena.seat_loop import sees_seat
from ..base import Pair, pair_at_solo_error

PERSON = "person"
LOG_LINES = 60


def default_replay_path(seed: int) -> Path:
    stamp = datetime.now(timezone.utc).strftime("%Y%m%d-%H%M%S")
    return Path("runs") / "play" / f"{stamp}-seed{seed}{SUFFIX}"


def check_out_path(path: Path, option: str, create_folder: bool = False) -> None:
    """Refuse (a one-line ValueError naming `option`) an output file that could not be
    written, or that would write over something: a folder, anything already at the path (a
    file, a FIFO, a link: a replay never replaces another file), a folder that does not exist
    (only the default path's folder, create_folder, is made), a folder that refuses a probe
    file written and removed there (in its nearest existing folder where create_folder: the
    folder is made only when the replay is written, so a hand quit leaves nothing). All before
    anything is played."""
    where = f"{option} {str(path)!r}"
    if path.is_dir():
        raise ValueError(f"{where} is a folder; name a file, e.g. "
                         f"{str(path / ('hand' + SUFFIX))!r}")
    if os.path.lexists(path):
        kind = ("a link" if path.is_symlink() else "a file" if path.is_file()
                else "a FIFO or other special file")
        raise ValueError(f"{where} already exists ({kind}); a replay never writes over "
                         "anything: name a new file")
    folder = path.parent
    if not create_folder and not folder.is_dir():
        if os.path.lexists(folder):
            raise ValueError(f"{where}: cannot write in its folder {str(folder)!r} (not a "
                             "folder)")
        raise ValueError(f"{where}: its folder {str(folder)!r} does not exist; create it "
                         "first or name a file in an existing folder")
    probe_in = folder
    while create_folder and not os.path.lexists(probe_in) and probe_in != probe_in.parent:
        probe_in = probe_in.parent
    if not probe_in.is_dir():
        raise ValueError(f"{where}: cannot write in its folder {str(folder)!r} "
                         f"({str(probe_in)!r} is not a folder)")
    try:
        fd, probe = tempfile.mkstemp(prefix=".nertz-probe-", dir=probe_in)
        os.close(fd)
        os.unlink(probe)
    except OSError as err:
        raise ValueError(f"{where}: cannot write in its folder {str(folder)!r} "
                         f"({err.strerror or err})") from None


def seat_player(agent, config, seat: int, hand: int):
    """Who plays `seat` for `agent` in hand number `hand`: a pair (agents/base.py Pair) with a
    member that sees its seat gives the seat the member of its role (R4: a session is one
    hand, so the roles are known), as the arena does when roles are fixed; Pair.act_batch
    has no view to pass. Any other agent plays itself."""
    if not isinstance(agent, Pair) or not any(sees_seat(m) for m in agent.members):
        return agent
    team = config.seat_team[seat]
    seat0 = np.array([config.seat_team.index(t) for t in range(config.num_teams)])
    holder = stream_seat(seat0, np.array(config.sizes), config.alternate_roles, hand, team)
    return agent.stream if holder == seat else agent.nertz


class PlaySession:
    """One hand: the person at `seat`, agents at the other seats (module docstring).

    against: agent specs (or Agent objects) for the other seats in seat order, or one spec
    for all of them. human_period: the person's seat period (R21), None keeps the config's.
    bot_period: every agent seat's period (R21), None keeps the config's (pace.py turns a
    reaction time in ms into one). start_layout: a docs/api.md layout to start from instead of a
    seeded deal. The replay's path is checked here, before the hand, not after it."""

    def __init__(self, config: RulesConfig | None = None, against=("heuristic",), seat: int = 0,
                 seed: int = 0, human_period: int | None = None, replay_out=None,
                 start_layout: dict | None = None, bot_period: int | None = None):
        from ..registry import make_agent, split_specs
        config = RulesConfig() if config is None else config
        if not isinstance(config, RulesConfig):
            raise ValueError(f"config must be a RulesConfig, got {type(config).__name__}")
        S = config.num_seats
        if isinstance(seat, bool) or not isinstance(seat, int) or not 0 <= seat < S:
            raise ValueError(f"seat={seat!r}: the person's seat must be one of 0..{S - 1}")
        periods = list(config.periods)
        for name, value in (("human_period", human_period), ("bot_period", bot_period)):
            if value is not None and (isinstance(value, bool) or not isinstance(value, int)
                                      or not 1 <= value <= 100):
                raise ValueError(f"{name}={value!r} must be an int from 1 to 100 (R21)")
        if bot_period is not None:
            periods = [p if s == seat else bot_period for s, p in enumerate(periods)]
        if human_period is not None:
            periods[seat] = human_period
        if bot_period is not None or human_period is not None:
            config = config.replace(speeds=tuple(periods))
        specs = split_specs(against) if isinstance(against, str) else list(against)
        if len(specs) == 1:
            specs = specs * (S - 1)
        if len(specs) != S - 1:
            raise ValueError(f"against: name one agent for the other seat, got {len(specs)}"
                             if S == 2 else
                             f"against: name one agent for all {S - 1} other seats or one per "
                             f"seat ({S - 1}), got {len(specs)}")
        out = Path(replay_out) if replay_out else default_replay_path(seed)
        check_out_path(out, "--replay-out", create_folder=not replay_out)
        self.config, self.seat, self.seed = config, seat, seed
        self.bot_seats = [s for s in range(S) if s != seat]
        made: dict = {}                       # one object per distinct spec (a learned
        self.bots = []                        # model is loaded once); random ones apart
        for i, spec in enumerate(specs):
            key = spec if isinstance(spec, str) and not spec.strip().startswith("random") else i
            if key not in made:
                made[key] = for_table(make_agent(spec, seed=seed + i), config)
            self.bots.append(made[key])
        for s, bot in zip(self.bot_seats, self.bots):  # refused before any page is served
            team = config.seat_team[s]
            if isinstance(bot, Pair) and config.sizes[team] == 1:
                raise pair_at_solo_error(bot.name, team, config)
        self.agents = [PERSON if s == seat else None for s in range(S)]
        for s, bot in zip(self.bot_seats, self.bots):
            self.agents[s] = str(getattr(bot, "name", type(bot).__name__))
        meta = {"source": "nertz play --human", "seed": seed, "person_seat": seat}
        if start_layout is None:
            engine = Engine(config, 1, seed)
            self.recorder = Recorder(engine, agents=self.agents, meta=meta)
            engine.reset(hands=[0])
            self.table = Table(engine)
        else:
            self.table = Table.from_layout(start_layout, config)
            self.recorder = Recorder(self.table.engine, agents=self.agents, meta=meta)
        self.engine = self.table.engine
        self._driver = SeatDriver(self.engine)
        hand = int(self.engine.state.hand[0])
        self._bot_at = {s: seat_player(bot, config, s, hand)
                        for s, bot in zip(self.bot_seats, self.bots)}
        self.memory = None                    # kept only for an agent with a seat view
        if any(sees_seat(bot) for bot in self._bot_at.values()):
            self.memory = TableMemory(self.engine)
            self.memory.dealt()
        self.team = config.seat_team[seat]
        self.queued = None                    # the person's move for the next tick (a Move)
        self.queued_tick = None               # the tick whose position it was checked on
        self.last_moves: dict = {}            # seat -> move text chosen in the last tick
        self.log: list = []
        self.replay_out = out
        self.replay_path: Path | None = None
        self.lock = threading.RLock()

    # ------------------------------------------------------------------ the person
    def legal(self) -> list:
        return [str(m) for m in self.table.legal_moves(self.seat)]

    def observation(self):
        """The person's seat observation and legal-move mask, as an agent at that seat gets
        them (for a scripted person: benchmarks/human_pace.py)."""
        with self.lock:
            obs, legal = self._driver.gather(np.zeros(1, np.int64), np.array([self.seat]))
            return obs[0], legal[0]

    def request(self, move) -> str:
        """Check the person's move now: '' and queued for the next tick when legal, else
        the refusal (the rule that forbids it). Nothing is queued on a refusal."""
        with self.lock:
            why = hand_over_reason(self.table) or explain_illegal(self.table, self.seat, move)
            if why:
                return why
            self.queued = Move.parse(move)    # (a shift without index: completed by step)
            self.queued_tick = self.table.tick
            return ""

    # ------------------------------------------------------------------ before the hand
    def players(self) -> list:
        """(player, seats) of every distinct agent player at the table, in seat order (one
        object may hold several seats)."""
        out: dict = {}
        for s, bot in self._bot_at.items():
            out.setdefault(id(bot), (bot, []))[1].append(s)
        return list(out.values())

    def viewers(self) -> list:
        """(player, seats) of every distinct player that sees its seat (a `search:` agent,
        or the searching member of a pair), in seat order."""
        return [(bot, seats) for bot, seats in self.players() if sees_seat(bot)]

    # ------------------------------------------------------------------ a tick
    def bot_moves(self) -> dict:
        """seat -> Move of every agent seat that has a choice (a busy seat only waits), through
        the one seat driver (nertz_env/envs/seats.py): one gather of those seats' observations
        and legal moves, one act_batch (or `act` per seat; act_view with a SeatView for an
        agent that sees its seat's information) per agent over the seats it holds, the ids
        checked once (legality is the engine's rule, R31)."""
        masks = self.engine.masks[0]
        need = [s for s in self.bot_seats if masks[s].sum() > 1]
        if not need:
            return {}
        rows_s = np.array(need, np.int64)
        rows_t = np.zeros_like(rows_s)
        obs, legal = self._driver.gather(rows_t, rows_s)
        held: dict = {}                        # agent object -> its rows, in seat order
        for k, s in enumerate(need):
            held.setdefault(id(self._bot_at[s]), []).append(k)
        moves = {}
        for rows in held.values():
            bot, k = self._bot_at[need[rows[0]]], np.array(rows)
            name = self.agents[need[rows[0]]]
            if sees_seat(bot):
                ids = bot.act_view(self.memory.view(rows_t[k], rows_s[k], obs[k], legal[k]))
            elif callable(getattr(bot, "act_batch", None)):
                ids = bot.act_batch(obs[k], legal[k])
            else:
                ids = [bot.act(o, m) for o, m in zip(obs[k], legal[k])]
            ids = SeatDriver.check(ids, legal[k], rows_t[k], rows_s[k],
                                   where=f"agent {name!r}", illegal="engine")
            for j, a in zip(rows, ids):
                moves[need[j]] = self.table.decode(int(a), need[j])
        return dict(sorted(moves.items()))

    def tick(self):
        """Play one tick; returns the TickResult (None when the hand is already over)."""
        with self.lock:
            if self.table.hand_over:
                return None
            t = self.table.tick
            burns = self.table.layout()["burns"]
            moves = self.bot_moves()
            mine = self.queued
            self.queued = self.queued_tick = None
            if mine is not None and self.table.is_legal(self.seat, mine):
                moves[self.seat] = mine
            res = self.table.step(moves)
            if self.memory is not None:
                self.memory.ticked()              # the tick's public events
            self.last_moves = {s: str(m) for s, m in moves.items()}
            for s in sorted(moves):
                m = moves[s]
                if str(m) == "wait":
                    continue
                who = "you" if s == self.seat else self.agents[s]
                ok = "" if res.applied[s] else "  failed: another move got there first (R22)"
                self._say(f"tick {t}: seat {s} ({who}) {m}{ok}")
            lay = self.table.layout()
            if lay["burns"] > burns:
                self._say(f"tick {t}: the Streams were burned (R27)")
            for team in res.callers:
                self._say(f"tick {t}: team {team} called Nertz!")
            if res.hand_over:
                self.finish()
            return res

    def _say(self, line: str) -> None:
        self.log.append(line)
        del self.log[:-LOG_LINES]

    def finish(self) -> Path:
        """Write the replay (once) and log the end of the hand."""
        if self.replay_path is None:
            how = "max_ticks reached, R26" if self.table.truncated else "Nertz called, R24"
            self._say(f"hand over at tick {self.table.tick} ({how}): scores "
                      f"{self.table.hand_scores()}")
            self.replay_path = self.recorder.replay().save(self.replay_out)
            self._say(f"replay written to {self.replay_path}")
        return self.replay_path

    def state(self) -> dict:
        with self.lock:
            lay = self.table.layout()
            return {
                "tick": lay["tick"], "layout": lay, "scores": self.table.hand_scores(),
                "hand_over": self.table.hand_over, "truncated": self.table.truncated,
                "seat": self.seat, "team": self.team, "agents": self.agents,
                "seat_team": list(self.config.seat_team), "legal": self.legal(),
                "queued": None if self.queued is None else str(self.queued),
                "queued_tick": self.queued_tick,
                "ready": lay["ready"][self.seat] <= lay["tick"],
                "log": list(self.log),
                "replay": None if self.replay_path is None else str(self.replay_path),
            }
