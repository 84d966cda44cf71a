"""The play loops: every table of a block of deals, played to its end, into raw columns.

- play_deals plays deals d_lo..d_hi-1 of every lineup at every seating of a MatchPlan, in
  batches of plan.batch_tables tables, and returns a Block (one row per table, in (lineup,
  deal, seating) order); deal d's numbers depend on (seed, d) only (agents/arena/deals.py).
- Hand numbers: in `hands` mode deal d plays hand number d % 2, so two-player teams meet
  both role assignments (R4); in `games` mode every deal is a whole game (R30) from hand 0.
- Agents that live in the core (random, greedy, heuristic styles) are played entirely
  inside numba (play_core: play_bots_batch); so are safe-format nets played
  deterministically (`learned`, ppo:NAME.npz; play_networks: agents/learned/core_play.py,
  the same moves as play_python's); any other agent (an SB3 zip, a draw, a `search:` agent)
  makes the batch go through play_python (seat_loop.py, re-exported here), which drives the
  ticks from Python and batches `act_batch` (or `act_view`) over every table where the agent
  sits. Both loops give the same numbers for the same bots (tests/arena/test_tournament.py).
  play_python checks every agent output once (agent_actions), and the Engine's `step`
  applies R31 to it (illegal_move: raise names the agent; penalize or ignore play on).

Owns no statistics, no files and no executor: records.py turns a Block into hand records,
distributed.py runs play_deals on Ray workers, seat_loop.py owns the Python loop.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from nertz_env.config import RulesConfig
from nertz_env.core.batch import play_bots_batch, play_bots_range
from nertz_env.core.policies import POLICY_EXTERNAL, new_policy_arrays
from nertz_env.core.rules import stream_seat
from nertz_env.engine import Engine
from nertz_env.table.games import decide_winner

from ..base import Agent, Pair, pair_at_solo_error
from .deals import DealKeys, policy_keys
from .progress import note_stalls, stall_watch
from .seat_loop import agent_actions, play_python  # noqa: F401 (re-exported: their old home)


@dataclass(frozen=True)
class MatchPlan:
    """What every block of deals of one run shares (picklable: Ray tasks get it whole)."""
    config: RulesConfig
    seats: list
    """per lineup: its seatings (agents/arena/seatings.py), each a tuple of agent indices"""
    seed: int
    mode: str
    """"hands" (one hand per deal) or "games" (a whole game per deal)"""
    max_hands: int
    """hands a table's record holds: 1 in hands mode, max_game_hands in games mode"""
    batch_tables: int = 2048
    """tables played by one call of a play loop"""

    @property
    def tables_per_deal(self) -> int:
        return sum(len(s) for s in self.seats)


class Roster(NamedTuple):
    """The agents of a run as the play loops use them, by agent index."""
    agents: list           # Agent objects
    names: list            # their names in messages and replays
    core: list             # per agent: core_policy() (kind, knobs), or None: driven from Python
    roles: tuple = ()      # (pair, its Nertz member, its Stream member) agent indices

    @classmethod
    def of(cls, agents, names=None) -> "Roster":
        """A roster of Agent objects; names default to their (made unique) names. A pair
        (agents/base.py Pair) adds its two members after the agents, named NAME.nertz and
        NAME.stream, for the seats `assign_roles` gives them."""
        agents = list(agents)
        if names is None:
            names = unique_names([getattr(a, "name", type(a).__name__) for a in agents])
        names, roles = list(names), []
        for i, a in enumerate(list(agents)):
            if isinstance(a, Pair):
                roles.append((i, len(agents), len(agents) + 1))
                agents += [a.nertz, a.stream]
                names += [f"{names[i]}.nertz", f"{names[i]}.stream"]
        core = [a.core_policy() if hasattr(a, "core_policy") else None for a in agents]
        return cls(agents, names, core, tuple(roles))

    @property
    def n_listed(self) -> int:
        """The agents the run was given (a pair's members come after them)."""
        return len(self.agents) - 2 * len(self.roles)

    def renamed(self, names) -> "Roster":
        """The roster with the listed agents named `names`, pairs' members after them."""
        names = list(names)
        for pair, _, _ in self.roles:
            names += [f"{names[pair]}.nertz", f"{names[pair]}.stream"]
        return self._replace(names=names)

    def for_table(self, config) -> "Roster":
        """The roster with every agent told the table (agents/base.py: Agent.for_table, the
        one way a table reaches an agent; another object plays as it is)."""
        return self._replace(agents=[a.for_table(config) if isinstance(a, Agent) else a
                                     for a in self.agents])


class Tables(NamedTuple):
    """One batch of tables for a play loop, one row per table (S seats)."""
    seat_agent: np.ndarray   # int64 [n, S] agent index at each seat
    kinds: np.ndarray        # core policy kind of each seat; POLICY_EXTERNAL: from Python
    knobs: np.ndarray        # core policy knobs of each seat
    policy_rng: np.ndarray   # uint64 [n] random bots' generators (advanced in place)
    deal_keys: np.ndarray    # uint64 [n] deck keys (core/batch.py shuffle_deal)
    hand_keys: np.ndarray    # uint64 [n, H] priority key of each hand
    first_hand: np.ndarray   # int64 [n] hand number of the table's first hand (R4 roles)


class HandResults(NamedTuple):
    """What a play loop writes per table (n tables, H hands, T teams)."""
    scores: np.ndarray       # int64 [n, H, T] score of each hand (R29)
    hands: np.ndarray        # int64 [n] hands played
    calls: np.ndarray        # int8  [n, H, T] 1 where the team called Nertz
    winner: np.ndarray       # int64 [n] the game's winner (games mode), -1 undecided
    ticks: np.ndarray        # int64 [n, H] ticks of each hand

    @classmethod
    def zeros(cls, n: int, H: int, T: int) -> "HandResults":
        return cls(np.zeros((n, H, T), np.int64), np.zeros(n, np.int64),
                   np.zeros((n, H, T), np.int8), np.full(n, -1, np.int64),
                   np.zeros((n, H), np.int64))

    def rows(self, lo: int, hi: int) -> "HandResults":
        """Views of tables lo..hi-1 (a loop writing them writes these arrays)."""
        return HandResults(*(a[lo:hi] for a in self))


class Block(NamedTuple):
    """The raw columns of the tables of a block of deals, one row per table."""
    lineup: np.ndarray       # int64 [M]
    deal: np.ndarray         # int64 [M]
    seating: np.ndarray      # int64 [M] index in seatings(lineup) (the records' rotation)
    agent_at: np.ndarray     # int64 [M, T] agent at each team position
    scores: np.ndarray       # HandResults' columns, per table
    hands: np.ndarray
    calls: np.ndarray
    winner: np.ndarray
    ticks: np.ndarray

    @classmethod
    def concat(cls, parts) -> "Block":
        return cls(*(np.concatenate(c) for c in zip(*parts)))

    def sorted(self) -> "Block":
        """The rows in (lineup, deal, seating) order."""
        order = np.lexsort((self.seating, self.deal, self.lineup))
        return Block(*(c[order] for c in self))


def unique_names(names) -> list:
    """names with repeats numbered: greedy, greedy#2, ..."""
    seen, out = {}, []
    for nm in names:
        k = seen.get(nm, 0)
        seen[nm] = k + 1
        out.append(nm if k == 0 else f"{nm}#{k + 1}")
    return out


def seat_policies(seat_agent, core, n_seats) -> tuple:
    """(kinds, knobs) of each seat of each table: the core policy of the agent there, or
    POLICY_EXTERNAL for an agent driven from Python."""
    kinds, knobs = new_policy_arrays(seat_agent.shape[0], n_seats)
    for i, c in enumerate(core):
        where = seat_agent == i
        if c is None:
            kinds[where] = POLICY_EXTERNAL
        else:
            kinds[where] = c[0]
            knobs[where] = c[1]
    return kinds, knobs


def assign_roles(config, seat_agent, first_hand, roles, fixed: bool, names) -> np.ndarray:
    """seat_agent with each pair's seats given to its members by the role they hold (R4):
    the Nertz member where the seat holds the Nertz pile in the table's first hand, the
    Stream member where it holds the Stream. fixed: each seat keeps its role for every hand
    the table plays (one hand, or alternate_roles off); else the pair stays (played from
    Python, agents/base.py Pair). A pair at a solo team is a ValueError naming it (names:
    the roster's)."""
    seat_team = np.array(config.seat_team)
    seat0 = np.array([config.seat_team.index(t) for t in range(config.num_teams)])
    sizes = np.array(config.sizes)
    out = seat_agent.copy()
    for pair, nertz, stream in roles:
        at = seat_agent == pair
        solo = at & (sizes[seat_team] == 1)[None, :]
        if solo.any():
            raise pair_at_solo_error(names[pair], int(seat_team[np.nonzero(solo)[1][0]]),
                                     config)
        if not fixed:
            continue
        for s in np.flatnonzero(at.any(axis=0)):
            t = seat_team[s]
            holder = [stream_seat(seat0, sizes, config.alternate_roles, h, t) for h in (0, 1)]
            holds = np.array(holder)[first_hand % 2] == s          # the Stream, per table
            out[at[:, s] & holds, s] = stream
            out[at[:, s] & ~holds, s] = nertz
    return out


def check_pair_seats(config, seats, roster: "Roster") -> None:
    """Refuse, before anything plays, a pair (agents/base.py Pair) that any seating of
    `seats` (per lineup, its seatings) puts at a solo team: pair_at_solo_error."""
    pairs = {p for p, _, _ in roster.roles}
    if not pairs:
        return
    sizes = config.sizes
    for lineup in seats:
        for seating in lineup:
            for team, a in enumerate(seating):
                if a in pairs and sizes[team] == 1:
                    raise pair_at_solo_error(roster.names[a], team, config)


def make_tables(plan: MatchPlan, core, keys: DealKeys, agent_at, deal, policy_rng,
                roles=(), names=()) -> Tables:
    """The Tables of rows (agent at each team position, deal number, random bots' key);
    roles: the roster's pairs (Roster.roles), their seats given to their members; names:
    the roster's, for messages."""
    seat_agent = agent_at[:, np.array(plan.config.seat_team)]                     # [n, S]
    first_hand = (deal % 2) if plan.mode == "hands" else np.zeros(len(deal), np.int64)
    if roles:
        fixed = plan.max_hands == 1 or not plan.config.alternate_roles
        seat_agent = assign_roles(plan.config, seat_agent, first_hand, roles, fixed, names)
    kinds, knobs = seat_policies(seat_agent, core, plan.config.num_seats)
    dk, hk = keys.rows(deal)
    return Tables(seat_agent, kinds, knobs, policy_rng, dk, hk, first_hand.astype(np.int64))


def play_tables(config, roster: Roster, tables: Tables, games: bool, out: HandResults,
                watch=None) -> None:
    """Play a batch of tables to their end into `out`: inside numba when every seat is a
    core bot, else driven from Python. watch: the batch's progress.StallWatch, or None."""
    if not (tables.kinds == POLICY_EXTERNAL).any():
        play_core(config, tables, games, out)
    elif not play_networks(config, roster, tables, games, out):
        play_python(config, roster, tables, games, out, watch=watch)


CORE_NETS = True
"""False: every net goes through play_python (benchmarks compare the two loops with it)."""


def play_networks(config, roster: Roster, tables: Tables, games: bool, out: HandResults) -> bool:
    """Play the batch inside numba when every outside agent is a net the core can play
    (agents/learned/core_play.py: the same moves as play_python's); False, and nothing
    played, otherwise."""
    if not CORE_NETS:
        return False
    from ..learned.core_play import Stack, networks, play_nets
    outside = tables.kinds == POLICY_EXTERNAL
    picks = {}
    for i in np.unique(tables.seat_agent[outside]).tolist():
        p = networks(roster.agents[i], config)
        if p is None:
            return False
        picks[i] = p
    stack = Stack([pk for p in picks.values() for pk in p])
    if not stack.ok:
        return False
    net_of_seat = np.full(tables.seat_agent.shape, -1, np.int64)
    for i, p in picks.items():
        rows, seats = np.nonzero(outside & (tables.seat_agent == i))
        net_of_seat[rows, seats] = np.array([stack.index(pk) for pk in p], np.int64)[seats]
    eng = Engine(config, n_tables=len(tables.deal_keys))
    play_nets(eng, stack, net_of_seat, tables.kinds, tables.knobs, tables.policy_rng,
              tables.deal_keys, tables.hand_keys, tables.first_hand, games, out)
    return True


def play_deals(plan: MatchPlan, roster: Roster, d_lo: int, d_hi: int, bar) -> Block:
    """Play deals d_lo..d_hi-1 of every lineup at every seating: a Block in (lineup, deal,
    seating) order; deal d's numbers depend on (seed, d) only."""
    T, H = plan.config.num_teams, plan.max_hands
    roster = roster.for_table(plan.config)
    deals = d_hi - d_lo
    keys = DealKeys.of(plan.seed, d_lo, d_hi, H)
    seats = plan.seats
    # one row per table: (lineup, deal, seating), lineup-major, then deal, then seating
    lu = np.concatenate([np.full(deals * len(s), l, np.int64) for l, s in enumerate(seats)])
    dd = np.concatenate([np.repeat(np.arange(d_lo, d_hi), len(s)) for s in seats])
    rr = np.concatenate([np.tile(np.arange(len(s)), deals) for s in seats])
    agent_at = np.concatenate([np.tile(np.array(s, np.int64), (deals, 1)) for s in seats])
    pol = np.concatenate([policy_keys(plan.seed, l, d_hi, len(s))[d_lo:].reshape(-1)
                          for l, s in enumerate(seats)])
    M = lu.shape[0]
    out = HandResults.zeros(M, H, T)
    for lo in range(0, M, plan.batch_tables):
        hi = min(M, lo + plan.batch_tables)
        tables = make_tables(plan, roster.core, keys, agent_at[lo:hi], dd[lo:hi],
                             pol[lo:hi].copy(), roster.roles, roster.names)
        watch = stall_watch(bar, hi - lo, plan.config.max_ticks)   # a stalling agent: said
        try:
            play_tables(plan.config, roster, tables, plan.mode == "games", out.rows(lo, hi),
                        watch)
        finally:
            if watch is not None:
                watch.cancel()
        note_stalls(bar, out.ticks[lo:hi], plan.config.max_ticks)
        bar.update(hi - lo)
    return Block(lu, dd, rr, agent_at, *out)


def play_core(config, tables: Tables, games: bool, out: HandResults) -> None:
    """Core bots only: play_bots_batch one hand at a time over the tables still in their
    game, each hand restarting the priority generator at its own key hand_keys[e, h]; random
    bots' generators (policy_rng) go on from hand to hand."""
    n, T = len(tables.deal_keys), config.num_teams
    H = out.scores.shape[1]
    kinds, knobs, policy_rng = tables.kinds, tables.knobs, tables.policy_rng
    dkeys, hkeys, first_hand = tables.deal_keys, tables.hand_keys, tables.first_hand
    live = np.arange(n)
    totals = np.zeros((n, T), np.int64)
    game_calls = np.zeros((n, T), np.int64)
    for h in range(H):
        m = live.size
        sc, ca = np.zeros((m, 1, T), np.int64), np.zeros((m, 1, T), np.int8)
        nh, w, tk = np.zeros(m, np.int64), np.full(m, -1, np.int64), np.zeros((m, 1), np.int64)
        rng = policy_rng[live]
        eng = Engine(config, n_tables=m)                      # its size picks the kernel
        eng.run_kernel(play_bots_batch, play_bots_range, eng.masks, eng.actions, eng.priority,
                       eng.applied, rng, kinds[live], knobs[live], dkeys[live],
                       hkeys[live, h].copy(), first_hand[live] + h, False, sc, nh, ca, w, tk)
        policy_rng[live] = rng
        out.scores[live, h] = sc[:, 0]
        out.calls[live, h] = ca[:, 0]
        out.ticks[live, h] = tk[:, 0]
        out.hands[live] = h + 1
        if not games:
            return
        totals[live] += sc[:, 0]
        game_calls[live] += ca[:, 0]
        going = np.ones(m, bool)
        for j, e in enumerate(live):
            won = decide_winner(totals[e], game_calls[e], config.target_score)
            if won is not None:
                out.winner[e] = won
                going[j] = False
        live = live[going]
        if not live.size:
            return
