"""Tournaments with duplicate deals: the Python API behind `nertz tournament`.

Design
- A *lineup* is the tuple of agents at the team positions 0..T-1 of a table. `round-robin`
  plays every combination of T distinct agents (needs at least T agents); `all-play-all`
  seats all agents at every table, cycling through the list to fill T teams (needs at most
  T agents). `auto` picks round-robin when there are at least T agents.
- A *deal* fixes the luck of a table: the deck orders of every hand (one generator of its
  own, core/batch.py shuffle_deal) and the priority orders of conflicting moves (the table's
  generator restarted per hand from the deal's hand keys). Every lineup plays the same deals.
- *Duplicate deals*: each deal is replayed at several *seatings* of a lineup (an assignment
  of its agents to the team positions); the records' field `rotation` is the index of the
  seating in seatings(lineup) (seating 0 is the lineup itself). Paired differences over
  deals then cancel the deal's luck (agents/stats/estimators.py). Random agents draw from a generator
  per (lineup, deal, seating): their coin flips are their own, not the deal's.
- *Balanced seatings* (seatings()): G_T is a permutation group of the T team positions
  that is 2-transitive, i.e. for positions i != j and p != q the same number lambda of its
  elements send i to p and j to q: AGL(1, T) (x -> a*x + b over the field of T elements,
  T(T-1) elements, lambda = 1) for T = 2, 3, 4, 5, 7, 8 and PSL(2, 5) on the projective
  line of 6 points for T = 6 (60 elements, lambda = 2; no set of 30 exists for T = 6).
  A lineup of T distinct agents (round-robin) is played at the seatings g(lineup), g in
  G_T: T(T-1) seatings (60 at T = 6), all distinct. An all-play-all table of n < T agents
  gives every agent floor(T/n) or ceil(T/n) seats: one base seating per choice of the
  T mod n agents with the extra seat (all C(n, T mod n) choices, relabelings of one
  pattern), each moved by G_T, repeats dropped. Over the seatings of a deal, exactly:
  every agent holds every position equally often, and every ordered pair of distinct
  agents sits at every ordered pair of distinct positions equally often, so no seat
  property (speeds, team sizes, roles) favours an agent or a pairing. The count is at most
  C(n, T mod n) * |G_T| (2 agents: 2, 6, 6, 20, 10, 42, 14 seatings at 2..8 teams).
  Every hand of hands_played is a distinct (lineup, deal, seating, hand).
- Hand numbers: in `hands` mode deal d plays hand number d % 2, so two-player teams meet
  both role assignments (R4); in `games` mode every deal is a whole game (R30) from hand 0.
- Priority orders: hand h of deal d (h counted from the deal's first hand) restarts the
  table generator at hand_keys(...)[d, h], in every seating, so the hands of a game stay
  paired across seatings however many draws earlier hands took.
- Agents that live in the core (random, greedy, heuristic styles) are played entirely
  inside numba (play_bots_batch); any other agent (ppo:...) makes the runner drive the
  ticks from Python, batching `act_batch` over every table where it sits. Both paths give
  the same numbers for the same bots (tests/arena/test_tournament.py). The Python path checks
  every agent output once: act_batch's result is n action ids 0..N_ACTIONS-1 of an integer
  dtype (else a ValueError naming the agent), and the Engine's `step` applies R31 to it
  (illegal_move: raise names the agent; penalize or ignore play on).
- First run: numba compiles the kernels a run needs on first use (then caches them); when
  their cache files are missing, a run with progress on says so on stderr first
  (compile_notice).
- Same arguments, same numbers: every key comes from `seed` through numpy's SeedSequence,
  and the numbers of deal d do not depend on how many deals or lineups are played.
- Precision on request (`precision=h`): deals are played in blocks, deals 0..n-1 first
  (n = `deals`), then n..n'-1 and so on, until every paired difference has a 95% half-width
  (ci_high - ci_low) / 2 <= h points per hand, or `max_deals` deals are played (default
  100 x `deals`). The next count n' is the need projected from the widest half-width w
  (half-widths shrink as 1/sqrt(deals)): ceil(1.1 n (w/h)^2), at least n + n/4, at most 4n,
  at most max_deals. Since deal d's keys depend only on (seed, d) and the records are put in
  (lineup, deal, seating) order, the result equals a plain run with the final deal count.
  `unmet` names the pairs still wider than h.
"""
from __future__ import annotations

import dataclasses
import hashlib
import itertools
import math
import numbers
import os
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from nertz_env.actions import N_ACTIONS, check_action_array
from nertz_env.config import RulesConfig
from nertz_env.core.batch import (deal_bots_range, play_bots_batch, play_bots_range, step_range,
                                  tick_inputs_tuples)
from nertz_env.core.observe import OBS_DIM
from nertz_env.core.policies import POLICY_EXTERNAL, new_policy_arrays
from nertz_env.engine import PARALLEL_MIN_TABLES, Engine
from nertz_env.table.games import decide_winner
from nertz_env.replay.format import SUFFIX, Recorder, Replay

from ..stats import report
from ..stats import estimators as stats
from ..registry import make_agent, split_specs

FORMATS = ("auto", "round-robin", "all-play-all")
MODES = ("hands", "games")


@dataclass
class TournamentResult:
    names: list
    config: RulesConfig
    mode: str
    format: str
    lineups: list
    deals: int
    seed: int
    records: stats.HandRecords
    ticks: np.ndarray                 # ticks per record (games: summed over the game's hands)
    hands: np.ndarray                 # hands per record (1 in hands mode)
    leaderboard: list = field(default_factory=list)
    pairs: list = field(default_factory=list)
    elapsed_s: float = 0.0
    seatings: list = field(default_factory=list)  # per lineup: its seatings (records' rotation)
    hand_scores: np.ndarray | None = None  # [records, max hands, T] scores of each hand (R29)
    precision: float | None = None    # target 95% half-width of the pairs (None: plain run)
    max_deals: int | None = None      # the cap of a precision run
    deal_blocks: list = field(default_factory=list)  # deals played after each block
    unmet: list = field(default_factory=list)        # pairs wider than precision at the end
    replays: list = field(default_factory=list)      # Replay of each recorded table (record=)

    @property
    def hands_played(self) -> int:
        return int(self.hands.sum())

    def summary(self) -> dict:
        """Everything the files hold except timings (same seed, same files)."""
        cfg = dataclasses.asdict(self.config)
        return {"agents": list(self.names), "mode": self.mode, "format": self.format,
                "teams": self.config.num_teams, "deals_per_lineup": self.deals,
                "lineups": [[self.names[a] for a in lu] for lu in self.lineups],
                "seatings_per_deal": [len(s) for s in self.seatings], "seed": self.seed,
                "hands_played": self.hands_played, "records": len(self.records),
                "mean_ticks_per_hand": float(self.ticks.sum() / max(self.hands.sum(), 1)),
                "config": cfg, "leaderboard": self.leaderboard, "pairs": self.pairs,
                **({} if self.precision is None else {"precision": self.precision_summary()})}

    def precision_summary(self) -> dict:
        """A precision run's target, cap, deal counts after each block and unmet pairs."""
        return {"target_half_width": self.precision, "max_deals": self.max_deals,
                "deals": self.deals, "deal_blocks": list(self.deal_blocks),
                "reached": not self.unmet, "unmet": list(self.unmet)}

    def precision_line(self) -> str | None:
        """One line on a precision run: reached, or which pairs were not (None otherwise)."""
        if self.precision is None:
            return None
        unit = "points per hand"
        blocks = " -> ".join(map(str, self.deal_blocks))
        if not self.unmet:
            return (f"precision: every paired difference within +-{self.precision:g} {unit} "
                    f"(95%) after {self.deals} deals per lineup (blocks {blocks})")
        worst = ", ".join(f"{u['a']} - {u['b']} +-{u['half_width']:.3g}" for u in self.unmet)
        return (f"precision: {len(self.unmet)} of {len(self.pairs)} paired differences not "
                f"within +-{self.precision:g} {unit} (95%) at the cap of {self.max_deals} deals "
                f"per lineup (blocks {blocks}): {worst}")

    def table(self) -> str:
        return report.format_table(self.leaderboard, self.pairs, mode=self.mode)

    def write(self, out_dir, plot: bool = True) -> list:
        """leaderboard.csv, pairs.csv, results.json, hands.csv and leaderboard.png in out_dir,
        and replays/lineupL-dealD-seatingR.nertz.json.gz for every recorded table."""
        out = Path(out_dir)
        out.mkdir(parents=True, exist_ok=True)
        paths = [out / "leaderboard.csv", out / "pairs.csv", out / "results.json",
                 out / "hands.csv"]
        report.write_csv(self.leaderboard, paths[0])
        report.write_pairs_csv(self.pairs, paths[1])
        report.write_json(self.summary(), paths[2])
        self._write_hands(paths[3])
        for rep in self.replays:
            paths.append(rep.save(out / "replays" / replay_name(rep)))
        if plot:
            paths.append(out / "leaderboard.png")
            report.plot_leaderboard(self.leaderboard, self.pairs, paths[-1],
                                    title=self._title(), mode=self.mode)
        return paths

    def _title(self) -> str:
        played = (f"{len(self.records)} games ({self.hands_played} hands)"
                  if self.mode == "games" else f"{self.hands_played} hands")
        return (f"Nertz, {self.config.num_teams} teams, {played}, duplicate deals, "
                f"seed {self.seed}")

    def _write_hands(self, path) -> None:
        r = self.records
        T = r.agent.shape[1]
        head = ["lineup", "deal", "rotation", "hands", "ticks"]
        head += [f"agent_{p}" for p in range(T)] + [f"score_{p}" for p in range(T)]
        head += [f"called_{p}" for p in range(T)] + [f"win_{p}" for p in range(T)]
        lines = [",".join(head)]
        for i in range(len(r)):
            row = [r.lineup[i], r.deal[i], r.rotation[i], self.hands[i], self.ticks[i]]
            row += [self.names[a] for a in r.agent[i]]
            row += [f"{x:g}" for x in r.score[i]] + [f"{x:g}" for x in r.called[i]]
            row += [f"{x:g}" for x in r.win[i]]
            lines.append(",".join(f'"{x}"' if isinstance(x, str) and "," in x else str(x)
                                  for x in row))
        Path(path).write_text("\n".join(lines) + "\n")


def resolve_format(fmt: str, n_agents: int, n_teams: int) -> str:
    """"auto": round-robin when there are at least as many agents as teams."""
    if fmt == "auto":
        return "round-robin" if n_agents >= n_teams else "all-play-all"
    return fmt


def make_lineups(n_agents: int, n_teams: int, fmt: str = "auto") -> list:
    """The lineups of a format (module docstring); ValueError when the format cannot seat them."""
    if fmt not in FORMATS:
        raise ValueError(f"format {fmt!r} is unknown; formats are {', '.join(FORMATS)}")
    if n_agents < 1:
        raise ValueError("agents: name at least one agent")
    fmt = resolve_format(fmt, n_agents, n_teams)
    if fmt == "round-robin":
        if n_agents < n_teams:
            raise ValueError(f"format round-robin needs at least {n_teams} agents for {n_teams} "
                             f"teams, got {n_agents}; use all-play-all")
        return [tuple(c) for c in itertools.combinations(range(n_agents), n_teams)]
    if n_agents > n_teams:
        raise ValueError(f"format all-play-all seats every agent at one table: at most {n_teams} "
                         f"agents for {n_teams} teams, got {n_agents}; use round-robin")
    return [tuple(p % n_agents for p in range(n_teams))]


def _gf_mul(a: int, b: int, q: int) -> int:
    """a * b in the field of q elements: mod q for a prime q, else GF(2^k) (q = 4, 8)."""
    if q not in (4, 8):
        return a * b % q
    poly, bits = (0b111, 2) if q == 4 else (0b1011, 3)
    out = 0
    while b:
        if b & 1:
            out ^= a
        b >>= 1
        a <<= 1
        if a >> bits:
            a ^= poly
    return out


def position_group(n_teams: int) -> list:
    """G_T of the module docstring: the permutations (tuples g, position i -> g[i]) of a
    2-transitive group of the team positions, sorted, the identity first."""
    T = n_teams
    perms = set()
    if T in (2, 3, 4, 5, 7, 8):                              # AGL(1, T): x -> a*x + b
        add = (lambda x, y: x ^ y) if T in (4, 8) else (lambda x, y: (x + y) % T)
        for a in range(1, T):
            for b in range(T):
                perms.add(tuple(add(_gf_mul(a, x, T), b) for x in range(T)))
    elif T == 6:                                             # PSL(2, 5); point 5 is infinity
        inv = {1: 1, 2: 3, 3: 2, 4: 4}
        for a, b, c, d in itertools.product(range(5), repeat=4):
            if (a * d - b * c) % 5 != 1:
                continue
            image = [5 if (c * x + d) % 5 == 0 else (a * x + b) * inv[(c * x + d) % 5] % 5
                     for x in range(5)]                      # x -> (a x + b) / (c x + d)
            perms.add(tuple(image + [5 if c == 0 else a * inv[c] % 5]))
    else:
        raise ValueError(f"num_teams={T}: seatings exist for 2 to 8 teams")
    return sorted(perms)


def seatings(lineup) -> list:
    """The distinct seatings (tuples: agent at each team position) at which every deal of
    `lineup` is played, seating 0 first (the module docstring's balanced design)."""
    lineup = tuple(int(a) for a in lineup)
    T = len(lineup)
    agents = sorted(set(lineup))
    n = len(agents)
    group = position_group(T)
    bases = []
    if n == T:
        bases.append(lineup)
    else:
        r = T % n
        for extra in itertools.combinations(agents, r):
            order = list(extra) + [a for a in agents if a not in extra]
            bases.append(tuple(order[p % n] for p in range(T)))
    out, seen = [], set()
    for base in bases:
        for g in group:
            seat = [0] * T
            for i, a in enumerate(base):
                seat[g[i]] = a
            seat = tuple(seat)
            if seat not in seen:
                seen.add(seat)
                out.append(seat)
    return out


_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def hand_keys(prio_keys, n_hands: int) -> np.ndarray:
    """uint64 [deals, n_hands]: the priority key of hand h of each deal; hand 0 keeps the
    deal's key, later hands a splitmix64 hash of (key, h), so a hand's priority draws do not
    depend on what earlier hands of the game drew."""
    k = np.asarray(prio_keys, np.uint64)[:, None]
    h = np.arange(n_hands, dtype=np.uint64)[None, :]
    with np.errstate(over="ignore"):
        z = k + h * _GOLDEN
        z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
        z = z ^ (z >> np.uint64(31))
    z[:, 0] = k[:, 0]
    return z


def deal_keys(seed: int, deals: int) -> tuple:
    """(deal keys, priority keys) of deals 0..deals-1: deal d's keys do not depend on `deals`."""
    g = np.random.default_rng(np.random.SeedSequence([int(seed), 0]))
    keys = g.integers(0, 2**63, size=(deals, 2), dtype=np.uint64) if deals else np.zeros((0, 2), np.uint64)
    return keys[:, 0].copy(), keys[:, 1].copy()


def policy_keys(seed: int, lineup: int, deals: int, rotations: int) -> np.ndarray:
    g = np.random.default_rng(np.random.SeedSequence([int(seed), 1, int(lineup)]))
    return g.integers(0, 2**63, size=(deals, rotations), dtype=np.uint64)


def run_tournament(agents, *, teams: int = 2, deals: int = 100, seed: int = 0,
                   mode: str = "hands", format: str = "auto", config: RulesConfig | None = None,
                   max_game_hands: int = 40, batch_tables: int = 2048, progress: bool = True,
                   precision: float | None = None, max_deals: int | None = None,
                   executor: str = "local", ray_address: str | None = None,
                   block_deals: int | None = None, record: str | None = None) -> TournamentResult:
    """Play a tournament and return its records, leaderboard and paired differentials.

    agents: specs for make_agent ("random", "greedy", "heuristic:style=cautious",
    "ppo:model.zip") or Agent objects. teams: teams per table (2-8), used when config is
    None; a config gives the table format and every rule variant (team_sizes, speeds per
    seat, river_size, ...). deals: deals per lineup, each played at every seating of
    seatings(lineup).
    mode: "hands" (one hand per deal) or "games" (a whole game per deal, at most
    max_game_hands hands; a game still undecided then is won by the top total).
    precision: play deals in blocks until every paired difference's 95% half-width is at
    most this many points per hand, or max_deals deals per lineup (default 100 x deals) are
    played (module docstring); the result's `unmet` lists the pairs that did not get there.
    executor: "local" (this process) or "ray": deals cut into blocks of block_deals (default
    ceil(deals / 8)), each a Ray task at ray_address (None: a local Ray instance) that plays
    its block inside numba; blocks are merged in deal order, so the result equals a local
    run byte for byte. Ray needs agents given as spec strings (built again on each worker).
    record: keep replays (nertz_env/replay/format.py) of "all" tables, the "first:N" or those of
    "deals:D1,D2" (every lineup and seating); after the run those tables are played again
    tick by tick with a recorder and checked against the run's scores (result.replays).
    """
    if config is None:
        config = RulesConfig(num_teams=teams)
    elif not isinstance(config, RulesConfig):
        raise ValueError(f"config must be a RulesConfig, got {type(config).__name__}")
    if mode not in MODES:
        raise ValueError(f"mode {mode!r} is unknown; modes are {', '.join(MODES)}")
    if isinstance(deals, bool) or not isinstance(deals, int) or deals < 2:
        raise ValueError(f"deals={deals!r} must be an int >= 2 (confidence intervals need 2 units)")
    if (isinstance(max_game_hands, bool) or not isinstance(max_game_hands, int)
            or max_game_hands < 1):
        raise ValueError(f"max_game_hands={max_game_hands!r} must be an int >= 1")
    if isinstance(batch_tables, bool) or not isinstance(batch_tables, int) or batch_tables < 1:
        raise ValueError(f"batch_tables={batch_tables!r} must be an int >= 1")
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral) or seed < 0:
        raise ValueError(f"seed={seed!r} must be an int >= 0")
    if precision is not None and (isinstance(precision, bool)
                                  or not isinstance(precision, numbers.Real)
                                  or not math.isfinite(precision) or precision <= 0):
        raise ValueError(f"precision={precision!r} must be a number > 0 (a 95% half-width in "
                         f"points per hand) or None")
    if max_deals is not None:
        if precision is None:
            raise ValueError(f"max_deals={max_deals!r} caps a precision run: give precision too")
        if isinstance(max_deals, bool) or not isinstance(max_deals, int) or max_deals < deals:
            raise ValueError(f"max_deals={max_deals!r} must be an int >= deals ({deals})")
    cap = None if precision is None else (100 * deals if max_deals is None else max_deals)
    record = parse_record(record, cap or deals)
    if isinstance(agents, str):
        agents = split_specs(agents)
    check_executor(executor, agents, block_deals)
    objs = [make_agent(a, seed=seed) for a in agents]
    names = _unique_names([getattr(a, "name", type(a).__name__) for a in objs])
    T = config.num_teams
    lineups = make_lineups(len(objs), T, format)
    fmt = resolve_format(format, len(objs), T)
    seats = [seatings(lineup) for lineup in lineups]
    H = 1 if mode == "hands" else max_game_hands
    core = [a.core_policy() if hasattr(a, "core_policy") else None for a in objs]

    first = deals * sum(len(s) for s in seats)                    # tables of the first block
    if progress:
        if any(c is None for c in core):
            kernels = PYTHON_PATH_KERNELS
        else:
            kernels = (play_bots_batch if min(first, batch_tables) >= PARALLEL_MIN_TABLES
                       else play_bots_range,)
        note = compile_notice(kernels)
        if note:
            print(note, file=sys.stderr, flush=True)
    bar = progress_bar(first, progress, f"{len(names)} agents, {T} teams")
    parts, blocks, lo, hi = [], [], 0, deals
    elapsed = 0.0
    while True:
        t0 = time.perf_counter()
        if executor == "ray":
            parts.append(play_deals_ray(config, list(agents), seats, seed, lo, hi, mode, H,
                                        batch_tables, bar, block_deals, ray_address))
        else:
            parts.append(play_deals(config, objs, names, core, seats, seed, lo, hi, mode, H,
                                    batch_tables, bar))
        elapsed += time.perf_counter() - t0
        blocks.append(hi)
        cols = [np.concatenate(c) for c in zip(*parts)]
        order = np.lexsort((cols[2], cols[1], cols[0]))       # (lineup, deal, seating)
        cols = [c[order] for c in cols]
        records, ticks, hands = hand_records(mode, *cols)
        if precision is None:
            break
        widest = max((half_width(p) for p in stats.paired_differentials(records, names)),
                     default=0.0)
        if widest <= precision or hi >= cap:
            break
        lo, hi = hi, next_deals(hi, widest, precision, cap)
        grow_bar(bar, (hi - lo) * sum(len(s) for s in seats))
    bar.close()
    replays = []
    if record is not None:
        chosen = chosen_tables(record, seats, hi)
        start = np.cumsum([0] + [hi * len(s) for s in seats])
        idx = [start[l] + d * len(seats[l]) + r for l, d, r in chosen]
        replays = record_tables(config, objs, names, core, seats, seed, mode, H, chosen,
                                cols[4][idx], {"source": "tournament"})

    rows = stats.leaderboard(records, names)
    rows.sort(key=lambda r: -r["points"])
    pairs = stats.paired_differentials(records, names, rank=rows)   # higher-ranked agent first
    unmet = [] if precision is None else [
        {"a": p["a"], "b": p["b"], "half_width": half_width(p)} for p in pairs
        if not half_width(p) <= precision]
    return TournamentResult(names=names, config=config, mode=mode, format=fmt, lineups=lineups,
                            deals=hi, seed=seed, records=records, ticks=ticks, hands=hands,
                            leaderboard=rows, pairs=pairs, elapsed_s=elapsed, seatings=seats,
                            hand_scores=cols[4], precision=None if precision is None
                            else float(precision), max_deals=cap, deal_blocks=blocks,
                            unmet=unmet, replays=replays)


def half_width(pair) -> float:
    """The 95% half-width of a paired difference (NaN stays NaN: never within a target)."""
    return (pair["ci_high"] - pair["ci_low"]) / 2.0


def next_deals(n: int, widest: float, target: float, cap: int) -> int:
    """The deal count of the next block (module docstring: projected need, clipped)."""
    want = math.ceil(1.1 * n * (widest / target) ** 2) if math.isfinite(widest) else 2 * n
    return min(cap, max(n + max(1, n // 4), min(4 * n, want)))


def play_deals(config, objs, names, core, seats, seed, d_lo, d_hi, mode, H, batch_tables, bar):
    """Play deals d_lo..d_hi-1 of every lineup at every seating: the raw columns (lineup,
    deal, seating, agent at each position, scores, hands, calls, winner, ticks) in
    (lineup, deal, seating) order; deal d's numbers depend on (seed, d) only."""
    T = config.num_teams
    deals = d_hi - d_lo
    dkeys, pkeys = deal_keys(seed, d_hi)
    # one row per table: (lineup, deal, seating), lineup-major, then deal, then seating
    lu = np.concatenate([np.full(deals * len(s), l, np.int64) for l, s in enumerate(seats)])
    dd = np.concatenate([np.repeat(np.arange(d_lo, d_hi), len(s)) for s in seats])
    rr = np.concatenate([np.tile(np.arange(len(s)), deals) for s in seats])
    agent_at = np.concatenate([np.tile(np.array(s, np.int64), (deals, 1)) for s in seats])
    pol = np.concatenate([policy_keys(seed, l, d_hi, len(s))[d_lo:].reshape(-1)
                          for l, s in enumerate(seats)])
    M = lu.shape[0]
    first_hand = (dd % 2) if mode == "hands" else np.zeros(M, np.int64)
    hkeys = hand_keys(pkeys, H)[dd]                                            # [M, H]

    out_scores = np.zeros((M, H, T), np.int64)
    out_hands = np.zeros(M, np.int64)
    out_calls = np.zeros((M, H, T), np.int8)
    out_winner = np.full(M, -1, np.int64)
    out_ticks = np.zeros((M, H), np.int64)
    seat_team = np.array(config.seat_team)
    for lo in range(0, M, batch_tables):
        hi = min(M, lo + batch_tables)
        n = hi - lo
        kinds, knobs = new_policy_arrays(n, config.num_seats)
        seat_agent = agent_at[lo:hi][:, seat_team]                                    # [n, S]
        for i, c in enumerate(core):
            where = seat_agent == i
            if c is None:
                kinds[where] = POLICY_EXTERNAL
            else:
                kinds[where] = c[0]
                knobs[where] = c[1]
        args = (dkeys[dd[lo:hi]], hkeys[lo:hi], first_hand[lo:hi].astype(np.int64))
        outs = (out_scores[lo:hi], out_hands[lo:hi], out_calls[lo:hi], out_winner[lo:hi],
                out_ticks[lo:hi])
        play = _play_python if (kinds == POLICY_EXTERNAL).any() else _play_core
        play(config, objs, names, seat_agent, kinds, knobs, pol[lo:hi].copy(), *args,
             mode == "games", *outs)
        bar.update(n)
    return lu, dd, rr, agent_at, out_scores, out_hands, out_calls, out_winner, out_ticks


RECORD_FORMS = "all, first:N (the first N tables) or deals:D1,D2,... (every seating of those deals)"


def parse_record(record, max_deals: int | None = None):
    """None, "all", "first:N" or "deals:D1,D2,..." (a ValueError naming the forms otherwise)
    -> None, ("all", None), ("first", N) or ("deals", [D1, D2, ...]). max_deals: the most
    deals the run can play; naming a deal beyond them is a ValueError before anything plays."""
    if record is None:
        return None
    bad = ValueError(f"record={record!r}: which hands to record is {RECORD_FORMS}")
    if not isinstance(record, str):
        raise bad
    kind, _, rest = record.strip().partition(":")
    if kind == "all" and not rest:
        return ("all", None)
    try:
        nums = [int(x) for x in rest.split(",")] if rest.strip() else []
    except ValueError:
        raise bad from None
    if kind == "first" and len(nums) == 1 and nums[0] >= 1:
        return ("first", nums[0])
    if kind == "deals" and nums and min(nums) >= 0:
        if max_deals is not None and max(nums) >= max_deals:
            raise ValueError(f"record: deal {max(nums)} will not be played (deals are "
                             f"0..{max_deals - 1})")
        return ("deals", sorted(set(nums)))
    raise bad


def chosen_tables(record, seats, deals: int) -> list:
    """The (lineup, deal, seating) of every table `record` (parse_record's form) keeps, in
    the records' order; a deal number >= deals is a ValueError."""
    kind, arg = record
    if kind == "deals" and arg[-1] >= deals:
        raise ValueError(f"record: deal {arg[-1]} was not played (deals are 0..{deals - 1})")
    wanted = range(deals) if kind != "deals" else arg
    out = [(l, d, r) for l, s in enumerate(seats) for d in wanted for r in range(len(s))]
    return out[:arg] if kind == "first" else out


def record_tables(config, objs, names, core, seats, seed, mode, H, chosen, scores,
                  meta=None) -> list:
    """Play the chosen tables (lineup, deal, seating) again, tick by tick with a Recorder
    (the Python path: the same numbers as the core path, tests/arena/test_tournament.py), and
    return one Replay per table (a game's hands in one). `scores` [len(chosen), H, T] are
    the tournament's own hand scores of those tables: a replay that ends elsewhere (an agent
    that samples, or one whose moves depend on its batch) is a RuntimeError, never a file."""
    if not chosen:
        return []
    T, S = config.num_teams, config.num_seats
    D = max(d for _, d, _ in chosen) + 1
    dkeys, pkeys = deal_keys(seed, D)
    hk = hand_keys(pkeys, H)
    pols = {l: policy_keys(seed, l, D, len(s)) for l, s in enumerate(seats)}
    seat_team = np.array(config.seat_team)
    agent_at = np.array([seats[l][r] for l, _, r in chosen], np.int64).reshape(-1, T)
    seat_agent = agent_at[:, seat_team]
    kinds, knobs = new_policy_arrays(len(chosen), S)
    for i, c in enumerate(core):
        where = seat_agent == i
        kinds[where] = POLICY_EXTERNAL if c is None else c[0]
        if c is not None:
            knobs[where] = c[1]
    dd = np.array([d for _, d, _ in chosen], np.int64)
    pol = np.array([pols[l][d, r] for l, d, r in chosen], np.uint64)
    first_hand = (dd % 2) if mode == "hands" else np.zeros(len(chosen), np.int64)
    n = len(chosen)
    outs = (np.zeros((n, H, T), np.int64), np.zeros(n, np.int64), np.zeros((n, H, T), np.int8),
            np.full(n, -1, np.int64), np.zeros((n, H), np.int64))
    labels = [{"lineup": l, "deal": d, "seating": r} for l, d, r in chosen]
    rec = _play_python(config, objs, names, seat_agent, kinds, knobs, pol, dkeys[dd], hk[dd],
                       first_hand, mode == "games", *outs, labels=labels)
    got = outs[0][:, :scores.shape[1]]
    if not np.array_equal(got, scores[:, :got.shape[1]]):
        i = int(np.flatnonzero((got != scores[:, :got.shape[1]]).any(axis=(1, 2)))[0])
        raise RuntimeError(f"recording table {chosen[i]} (lineup, deal, seating) ended with "
                           f"scores {got[i].tolist()}, the tournament's were "
                           f"{scores[i].tolist()}: an agent that samples its moves cannot be "
                           "replayed (use deterministic agents to record)")
    by_table = {}
    for h in rec.hands:
        by_table.setdefault((h.label["lineup"], h.label["deal"], h.label["seating"]), []).append(h)
    out = []
    for i, key in enumerate(chosen):
        for h in by_table[key]:
            h.label.pop("table", None)
        out.append(Replay(config, [names[a] for a in seat_agent[i]], by_table[key],
                          {**(meta or {}), "seed": int(seed), "mode": mode,
                           "lineup": key[0], "deal": key[1], "seating": key[2]}))
    return out


def replay_name(replay) -> str:
    """The file name of a tournament's replay: lineup, deal and seating."""
    m = replay.meta
    cell = f"cell{m['cell_index']}-" if "cell_index" in m else ""
    return f"{cell}lineup{m['lineup']}-deal{m['deal']}-seating{m['seating']}{SUFFIX}"


EXECUTORS = ("local", "ray")


def check_executor(executor, agents, block_deals) -> None:
    """ValueError unless executor is local or ray (with spec strings) and block_deals fits."""
    if executor not in EXECUTORS:
        raise ValueError(f"executor {executor!r} is unknown; executors are {', '.join(EXECUTORS)}")
    if block_deals is not None and (isinstance(block_deals, bool) or
                                    not isinstance(block_deals, int) or block_deals < 1):
        raise ValueError(f"block_deals={block_deals!r} must be an int >= 1 or None")
    if executor == "ray":
        bad = [a for a in agents if not isinstance(a, str)]
        if bad:
            raise ValueError(f"executor='ray' builds the agents again on every worker: give "
                             f"them as spec strings, not {type(bad[0]).__name__} objects")
        try:
            import ray  # noqa: F401
        except ImportError:
            raise ValueError("executor='ray' needs Ray: pip install 'ray[default]' (or the "
                             "clients extra)") from None


_WORKER_AGENTS: dict = {}     # (spec, seed) -> agent: a worker loads each agent (a model) once


def _ray_block(config, specs, seats, seed, d_lo, d_hi, mode, H, batch_tables):
    """One block of deals on a Ray worker: the agents built from their specs (once per worker
    process), then play_deals. Agents that sample from their own generator (a learned agent
    with deterministic=false) draw in another order than a local run; every other agent's
    moves depend only on the position, so the files match."""
    objs = []
    for a in specs:
        if (a, seed) not in _WORKER_AGENTS:
            _WORKER_AGENTS[(a, seed)] = make_agent(a, seed=seed)
        objs.append(_WORKER_AGENTS[(a, seed)])
    names = _unique_names([getattr(a, "name", type(a).__name__) for a in objs])
    core = [a.core_policy() if hasattr(a, "core_policy") else None for a in objs]
    return play_deals(config, objs, names, core, seats, seed, d_lo, d_hi, mode, H,
                      batch_tables, _NoBar())


def play_deals_ray(config, specs, seats, seed, d_lo, d_hi, mode, H, batch_tables, bar,
                   block_deals=None, address=None, task_body=None):
    """play_deals over Ray: deals d_lo..d_hi-1 in blocks, one task each (retried by Ray, up
    to 3 times, when its worker dies), merged in deal order: the same columns as play_deals,
    in block order. task_body: the block's function (default _ray_block, same arguments)."""
    import ray

    if not ray.is_initialized():
        ray.init(address=address, include_dashboard=False, log_to_driver=False)
    block = block_deals or max(1, -(-(d_hi - d_lo) // 8))
    task = ray.remote(max_retries=3)(task_body or _ray_block)
    per_deal = sum(len(s) for s in seats)
    refs = {}
    for a in range(d_lo, d_hi, block):
        b = min(d_hi, a + block)
        refs[task.remote(config, specs, seats, seed, a, b, mode, H, batch_tables)] = (a, b)
    done = {}
    pending = list(refs)
    while pending:
        ready, pending = ray.wait(pending, num_returns=1)
        for r in ready:
            a, b = refs[r]
            done[a] = ray.get(r)
            bar.update((b - a) * per_deal)
    blocks = [done[a] for a in sorted(done)]
    return tuple(np.concatenate(c) for c in zip(*blocks))


def hand_records(mode, lu, dd, rr, agent_at, scores, n_hands, calls, winners, ticks):
    M, H, T = scores.shape
    if mode == "hands":
        score = scores[:, 0, :].astype(np.float64)
        called = calls[:, 0, :].astype(np.float64)
        win = _win_shares(score)
        return (stats.HandRecords(lu, dd, rr, agent_at, score, called, win),
                ticks[:, 0].copy(), np.ones(M, np.int64))
    used = np.arange(H)[None, :] < n_hands[:, None]                                   # [M, H]
    totals = (scores * used[:, :, None]).sum(axis=1)
    nh = np.maximum(n_hands, 1)[:, None]
    score = totals / nh                                                  # points per hand
    called = (calls * used[:, :, None]).sum(axis=1) / nh
    win = np.zeros((M, T))
    decided = winners >= 0
    win[np.flatnonzero(decided), winners[decided]] = 1.0
    win[~decided] = _win_shares(totals[~decided].astype(np.float64))
    return (stats.HandRecords(lu, dd, rr, agent_at, score, called, win),
            (ticks * used).sum(axis=1), n_hands.copy())


def _win_shares(score):
    top = score == score.max(axis=1, keepdims=True)
    return top / top.sum(axis=1, keepdims=True)


def _play_core(config, objs, names, seat_agent, kinds, knobs, policy_rng, dkeys, hkeys,
               first_hand, games, out_scores, out_hands, out_calls, out_winner, out_ticks):
    """Core bots only: play_bots_batch one hand at a time over the tables still in their
    game, each hand restarting the priority generator at its own key hkeys[e, h]; random
    bots' generators (policy_rng) go on from hand to hand."""
    n, T = len(dkeys), config.num_teams
    H = out_scores.shape[1]
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
        out_scores[live, h] = sc[:, 0]
        out_calls[live, h] = ca[:, 0]
        out_ticks[live, h] = tk[:, 0]
        out_hands[live] = h + 1
        if not games:
            return
        totals[live] += sc[:, 0]
        game_calls[live] += ca[:, 0]
        going = np.ones(m, bool)
        for j, e in enumerate(live):
            won = decide_winner(totals[e], game_calls[e], config.target_score)
            if won is not None:
                out_winner[e] = won
                going[j] = False
        live = live[going]
        if not live.size:
            return


def _play_python(config, objs, names, seat_agent, kinds, knobs, policy_rng, dkeys, hkeys,
                 first_hand, games, out_scores, out_hands, out_calls, out_winner, out_ticks,
                 labels=None):
    """The same play as play_bots_range, driven tick by tick from Python so that agents
    outside the core (torch policies) can act; every table of the batch moves in lock step.
    Per tick: one numba call (core/batch.py tick_inputs_tuples) writes the core bots' moves at the tables still
    playing and the observation and mask of every seat an outside agent holds there; each
    such agent then gets one act_batch call with all its rows (every table and seat it holds,
    table-major), and Engine.step checks the ids (R31 included). Finished tables cost
    nothing but the engine's status check, so a batch's long last hands run on few rows.
    torch runs on one thread meanwhile (restored after): its second thread only waits for
    the serial numba calls, and on the busy 2-core VM it made this loop 17x slower
    (benchmarks/README.md).
    labels: a list of one dict per table to record every hand played (a Recorder on the
    engine, labelled so); returns the Recorder, else None."""
    n, S = seat_agent.shape
    T = config.num_teams
    H = out_scores.shape[1]
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
    hand_no = first_hand.copy()
    h_idx = np.zeros(n, np.int64)
    totals = np.zeros((n, T), np.int64)
    game_calls = np.zeros((n, T), np.int64)
    live = np.ones(n, bool)
    serial(deal_bots_range, eng.masks, dkeys, hand_no, np.ones(n, np.int8))
    if rec is not None:
        rec.on_deal(eng)
    external = sorted({int(i) for i in np.unique(seat_agent[kinds == POLICY_EXTERNAL])})
    held = [np.nonzero(seat_agent == i) for i in external]     # (tables, seats), table-major
    seat_obs = np.zeros((n, 1, OBS_DIM), np.float32)             # write_seat_observation's rows
    threads = _torch_threads(1)
    try:
        rows = None
        while live.any():
            if rows is None:                     # the live tables and their outside seats
                tables = np.flatnonzero(live)
                rows = [(t[live[t]], s[live[t]]) for t, s in held]
                bounds = np.cumsum([0] + [t.size for t, _ in rows])
                row_t = np.concatenate([t for t, _ in rows] + [_NO_ROWS])
                row_s = np.concatenate([s for _, s in rows] + [_NO_ROWS])
            obs = np.empty((row_t.size, OBS_DIM), np.float32)    # fresh: the agents' to keep
            masks = np.empty((row_t.size, N_ACTIONS), np.int8)
            eng.run_tuples_kernel(tick_inputs_tuples, eng.masks, kinds, knobs, policy_rng, acts,
                                  tables, seat_obs, row_t, row_s, obs, masks)
            for j, i in enumerate(external):
                a, b = bounds[j], bounds[j + 1]
                if b > a:
                    acts[row_t[a:b], row_s[a:b]] = agent_actions(objs[i], names[i], obs[a:b],
                                                                 masks[a:b])
            try:
                eng.step(acts)
            except ValueError as err:            # R31 under illegal_move="raise"
                raise ValueError(_blame(err, eng, acts, live, seat_agent, names)) from None
            done = np.flatnonzero(live & eng.hand_over)
            if not done.size:
                continue
            scores = eng.hand_scores()
            redeal = np.zeros(n, np.int8)
            for e in done:
                h = h_idx[e]
                out_scores[e, h] = scores[e]
                out_calls[e, h] = st.callers[e]
                out_ticks[e, h] = st.tick[e]
                totals[e] += scores[e]
                game_calls[e] += st.callers[e]
                out_hands[e] = h + 1
                if games:
                    w = decide_winner(totals[e].tolist(), game_calls[e].tolist(),
                                      config.target_score)
                    if w is not None and w >= 0:
                        out_winner[e] = w
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


def agent_actions(agent, name, observations, action_masks) -> np.ndarray:
    """agent.act_batch(observations, action_masks) (or `act` per row for an agent with only
    `act`), checked: int64 [n] action ids 0..N_ACTIONS-1 of an integer dtype; anything else
    (floats, bools, wrong length, ids out of range) is a ValueError naming the agent."""
    where = f"agent {name!r} act_batch"
    batch = getattr(agent, "act_batch", None)
    if callable(batch):
        out = batch(observations, action_masks)
    else:
        where = f"agent {name!r} act"
        out = [agent.act(o, m) for o, m in zip(observations, action_masks)]
    try:
        out = np.asarray(out)
    except (TypeError, ValueError) as err:       # ragged lists and the like
        raise ValueError(f"{where}: returned {type(out).__name__}, not an array of action "
                         f"ids ({err})") from None
    return check_action_array(out, (len(observations),), where=where)


def _blame(err, eng, acts, live, seat_agent, names) -> str:
    """The engine's R31 message with the name of the agent that chose the illegal move."""
    legal = np.take_along_axis(eng.masks, acts[..., None].astype(np.intp), axis=2)[..., 0]
    bad = (legal == 0) & live[:, None]
    if not bad.any():
        return str(err)
    e, s = np.argwhere(bad)[0]
    return f"agent {names[seat_agent[e, s]]!r} (seat {s}): {err}"


# ---------------------------------------------------------------------------- first run
PYTHON_PATH_KERNELS = (deal_bots_range, step_range, tick_inputs_tuples)
COMPILE_NOTICE = ("numba is compiling the game kernels (first run after install; cached for "
                  "later runs): about a minute on a 2-core machine, the progress bar waits "
                  "at 0% meanwhile")


def numba_cache_dirs(py_file) -> list:
    """The directories where numba keeps the cache files of functions defined in py_file,
    in the order of its locators: NUMBA_CACHE_DIR if set (nothing else is then used), else
    the __pycache__ beside the file, then the user-wide cache (read-only installs)."""
    import numba

    src_dir = os.path.dirname(os.path.abspath(py_file))
    # numba's subfolder for a source folder: its name and a hash of its path
    sub = f"{os.path.basename(src_dir)}_{hashlib.sha1(src_dir.encode()).hexdigest()}"
    if numba.config.CACHE_DIR:
        return [os.path.join(numba.config.CACHE_DIR, sub)]
    dirs = [os.path.join(src_dir, "__pycache__")]
    try:
        from numba.misc.appdirs import AppDirs
        dirs.append(os.path.join(AppDirs(appname="numba", appauthor=False).user_cache_dir, sub))
    except ImportError:  # pragma: no cover - numba moved its vendored appdirs
        pass
    return dirs


def kernel_cached(kernel) -> bool:
    """Whether numba's cache holds an index (.nbi) for `kernel`, a @njit(cache=True)
    function: its file is named module.qualname-firstline.pyXY.nbi. True under
    NUMBA_DISABLE_JIT (nothing compiles) and for functions that are not dispatchers."""
    import numba

    py_func = getattr(kernel, "py_func", None)
    if numba.config.DISABLE_JIT or py_func is None:
        return True
    py_file = py_func.__code__.co_filename
    module = os.path.splitext(os.path.basename(py_file))[0]
    index = (f"{module}.{py_func.__qualname__}-{py_func.__code__.co_firstlineno}"
             f".py{sys.version_info[0]}{sys.version_info[1]}.nbi")
    return any(os.path.isfile(os.path.join(d, index)) for d in numba_cache_dirs(py_file))


def compile_notice(kernels) -> str | None:
    """COMPILE_NOTICE when any of `kernels` has no cache file yet (a fresh install), else None."""
    return None if all(kernel_cached(k) for k in kernels) else COMPILE_NOTICE


def _unique_names(names):
    seen, out = {}, []
    for nm in names:
        k = seen.get(nm, 0)
        seen[nm] = k + 1
        out.append(nm if k == 0 else f"{nm}#{k + 1}")
    return out


class _NoBar:
    total = 0

    def update(self, n):
        pass

    def refresh(self):
        pass

    def close(self):
        pass


def grow_bar(bar, n) -> None:
    """Add n tables to the bar's total (a precision run learns its size block by block)."""
    bar.total += n
    bar.refresh()


def progress_bar(total, enabled, desc):
    if not enabled:
        return _NoBar()
    try:
        from tqdm.auto import tqdm
    except ImportError:  # pragma: no cover
        return _NoBar()
    return tqdm(total=total, desc=desc, unit="hand", leave=False)
