"""Tournaments with duplicate deals: the Python API behind `nertz tournament`.

Design (each part lives in its own module of agents/arena/)
- Lineups, formats and the balanced seatings of a deal: seatings.py.
- Deal keys, priority keys per hand and the random bots' keys: deals.py. Every lineup plays
  the same deals; same arguments, same numbers.
- The play loops (every table inside numba, or ticks driven from Python for agents outside
  the core): play.py. Ray: distributed.py. Records and replays (`record=`): records.py.
- Precision on request (`precision=h`): blocks of deals until every paired difference has a
  95% half-width <= h points per hand, or `max_deals` deals are played (default 100 x
  `deals`): precision.py. `unmet` names the pairs still wider than h.
- First run: numba compiles the kernels a run needs on first use (then caches them); when
  their cache files are missing, a run with progress on says so on stderr first
  (progress.py).
This module checks the arguments, runs those parts in order and writes the files.
"""
from __future__ import annotations

import csv
import dataclasses
import math
import numbers
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from nertz_env.config import RulesConfig
from nertz_env.files import atomic_path

from ..registry import make_agent, split_specs
from ..stats import estimators as stats
from ..stats import report
from .distributed import check_executor, play_deals_ray
from .limits import check_int, check_size, default_cap
from .outdir import write_files, write_run
from .play import MatchPlan, Roster, check_pair_seats, play_deals
from .precision import half_width, play_to_precision
from .progress import precision_line, print_compile_notice, progress_bar, trim_bar
from .records import hand_records, parse_record, record_chosen, replay_name
from .seatings import make_lineups, resolve_format, seatings

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

    def write(self, out_dir, plot: bool = True, overwrite: bool = False) -> list:
        """leaderboard.csv, pairs.csv, results.json, hands.csv and leaderboard.png in a fresh
        out_dir, and replays/lineupL-dealD-seatingR.nertz.json.gz for every recorded table:
        all of them or none (agents/arena/outdir.py; overwrite replaces an earlier run)."""
        return write_run(self.write_into, out_dir, plot=plot, overwrite=overwrite,
                         command="tournament")

    def write_into(self, folder, plot: bool = True) -> list:
        """write's files into `folder`, an existing folder that a run_folder claimed."""
        out = Path(folder)
        jobs = [(out / "leaderboard.csv", lambda p: report.write_csv(self.leaderboard, p)),
                (out / "pairs.csv", lambda p: report.write_pairs_csv(self.pairs, p)),
                (out / "results.json", lambda p: report.write_json(self.summary(), p)),
                (out / "hands.csv", self._write_hands)]
        jobs += [(out / "replays" / replay_name(rep), rep.save) for rep in self.replays]
        if plot:
            jobs.append((out / "leaderboard.png", lambda p: report.plot_leaderboard(
                self.leaderboard, self.pairs, p, title=self._title(), mode=self.mode)))
        return write_files(jobs)

    def _title(self) -> str:
        played = (f"{len(self.records)} games ({self.hands_played} hands)"
                  if self.mode == "games" else f"{self.hands_played} hands")
        return (f"Nertz, {self.config.num_teams} teams, {played}, duplicate deals, "
                f"seed {self.seed}")

    def _write_hands(self, path) -> None:
        """hands.csv: one row per record, agents by name, numbers as %g."""
        r = self.records
        T = r.agent.shape[1]
        head = ["lineup", "deal", "rotation", "hands", "ticks"]
        head += [f"agent_{p}" for p in range(T)] + [f"score_{p}" for p in range(T)]
        head += [f"called_{p}" for p in range(T)] + [f"win_{p}" for p in range(T)]
        with atomic_path(path) as tmp, open(tmp, "w", newline="") as fh:
            w = csv.writer(fh, lineterminator="\n")
            w.writerow(head)
            for i in range(len(r)):
                row = [r.lineup[i], r.deal[i], r.rotation[i], self.hands[i], self.ticks[i]]
                row += [self.names[a] for a in r.agent[i]]
                row += [f"{x:g}" for x in r.score[i]] + [f"{x:g}" for x in r.called[i]]
                row += [f"{x:g}" for x in r.win[i]]
                w.writerow(row)


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
    played (agents/arena/precision.py); the result's `unmet` lists the pairs that did not
    get there.
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
    deals = check_int("deals", deals)
    max_game_hands = check_int("max_game_hands", max_game_hands)
    if isinstance(batch_tables, bool) or not isinstance(batch_tables, int) or batch_tables < 1:
        raise ValueError(f"batch_tables={batch_tables!r} must be an int >= 1")
    seed = check_int("seed", seed)
    if precision is not None and (isinstance(precision, bool)
                                  or not isinstance(precision, numbers.Real)
                                  or not math.isfinite(precision) or precision <= 0):
        raise ValueError(f"precision={precision!r} must be a number > 0 (a 95% half-width in "
                         f"points per hand) or None")
    if max_deals is not None:
        if precision is None:
            raise ValueError(f"max_deals={max_deals!r} caps a precision run: give precision too")
        if check_int("max_deals", max_deals) < deals:
            raise ValueError(f"max_deals={max_deals!r} must be an int >= deals ({deals})")
    cap = max_deals
    if isinstance(agents, str):
        agents = split_specs(agents)
    check_executor(executor, agents, block_deals)
    roster = Roster.of([make_agent(a, seed=seed) for a in agents])
    names = roster.names[:roster.n_listed]
    T = config.num_teams
    lineups = make_lineups(len(names), T, format)
    fmt = resolve_format(format, len(names), T)
    plan = MatchPlan(config, [seatings(lineup) for lineup in lineups], seed, mode,
                     1 if mode == "hands" else max_game_hands, batch_tables)
    check_pair_seats(config, plan.seats, roster)      # before anything plays
    if precision is not None and max_deals is None:
        cap = default_cap(deals, plan.tables_per_deal, plan.max_hands, T)
    check_size(cap or deals, plan.tables_per_deal, plan.max_hands, T,
               f"{'max_deals' if max_deals else 'deals'} ({len(names)} agents, {T} teams, "
               f"{len(lineups)} lineup(s))")
    record = parse_record(record, cap or deals)

    first = deals * plan.tables_per_deal                          # tables of the first block
    if progress:
        print_compile_notice(roster.core, first, batch_tables, roster.agents)
        if precision is not None:
            print(precision_line(precision, deals, cap, "lineups", "max_deals" if max_deals
                                 else "the default cap, 100 x deals or what fits in memory",
                                 cap * plan.tables_per_deal * plan.max_hands,
                                 "leave out --precision to play exactly --deals N"),
                  file=sys.stderr, flush=True)
    # a precision run's bar counts to its cap (trim_bar), so it never goes backwards
    bar = progress_bar((cap or deals) * plan.tables_per_deal, progress,
                       f"{len(names)} agents, {T} teams")
    elapsed = 0.0

    def play(lo, hi):
        nonlocal elapsed
        t0 = time.perf_counter()
        if executor == "ray":
            block = play_deals_ray(plan, list(agents), lo, hi, bar, block_deals, ray_address)
        else:
            block = play_deals(plan, roster, lo, hi, bar)
        elapsed += time.perf_counter() - t0
        return block

    def widest(block):
        records = hand_records(mode, block).records
        return max((half_width(p) for p in stats.paired_differentials(records, names)),
                   default=0.0)

    played = play_to_precision(play, deals, precision, cap, widest)
    trim_bar(bar, ((cap or deals) - played.deal_blocks[-1]) * plan.tables_per_deal)
    bar.close()
    block, hi = played.block, played.deal_blocks[-1]
    records, ticks, hands = hand_records(mode, block)
    replays = [] if record is None else record_chosen(plan, roster, record, block, hi,
                                                      {"source": "tournament"})
    rows = stats.leaderboard(records, names)
    rows.sort(key=lambda r: -r["points"])
    pairs = stats.paired_differentials(records, names, rank=rows)   # higher-ranked agent first
    unmet = [] if precision is None else [
        {"a": p["a"], "b": p["b"], "half_width": half_width(p)} for p in pairs
        if not half_width(p) <= precision]
    return TournamentResult(names=names, config=config, mode=mode, format=fmt, lineups=lineups,
                            deals=hi, seed=seed, records=records, ticks=ticks, hands=hands,
                            leaderboard=rows, pairs=pairs, elapsed_s=elapsed, seatings=plan.seats,
                            hand_scores=block.scores, precision=None if precision is None
                            else float(precision), max_deals=cap,
                            deal_blocks=played.deal_blocks, unmet=unmet, replays=replays)
