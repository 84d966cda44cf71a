"""From played tables to records: hand records for the statistics, and replays.

- hand_records turns a Block (agents/arena/play.py) into HandRecords (agents/stats) with
  ticks and hands per record: in hands mode one record per hand; in games mode one per
  game, its score in points per hand and its win the game's winner (the top total's share
  when the game ended undecided at its hand cap).
- The one record selection, `record=`: "all" tables, the "first:N" tables (in the records'
  order) or every lineup and seating of "deals:D1,D2,..." (parse_record, chosen_tables).
  The chosen tables are played again tick by tick with a Recorder (record_tables) and
  checked against the run's own scores, so a replay file always shows the hand scored.

Never imports the executor (distributed.py) nor the precision loop.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from nertz_env.replay import SUFFIX, Replay

from ..stats.records import HandRecords
from . import play
from .deals import DealKeys, policy_keys
from .play import Block, HandResults, MatchPlan, Roster, make_tables


class Tally(NamedTuple):
    """The records of a run and what the statistics do not hold."""
    records: HandRecords
    ticks: np.ndarray        # ticks per record (games: summed over the game's hands)
    hands: np.ndarray        # hands per record (1 in hands mode)


def hand_records(mode: str, block: Block) -> Tally:
    """The records of every table of `block` (module docstring)."""
    lu, dd, rr, agent_at = block.lineup, block.deal, block.seating, block.agent_at
    scores, n_hands, calls, winners, ticks = (block.scores, block.hands, block.calls,
                                              block.winner, block.ticks)
    M, H, T = scores.shape
    if mode == "hands":
        score = scores[:, 0, :].astype(np.float64)
        called = calls[:, 0, :].astype(np.float64)
        win = _win_shares(score)
        return Tally(HandRecords(lu, dd, rr, agent_at, score, called, win),
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
    return Tally(HandRecords(lu, dd, rr, agent_at, score, called, win),
                 (ticks * used).sum(axis=1), n_hands.copy())


def _win_shares(score):
    top = score == score.max(axis=1, keepdims=True)
    return top / top.sum(axis=1, keepdims=True)


# ---------------------------------------------------------------------------- record=
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


def record_chosen(plan: MatchPlan, roster: Roster, record, block: Block, deals: int,
                  meta=None) -> list:
    """The replays `record` (parse_record's form) asks for, from a run's sorted Block of
    `deals` deals per lineup (record_tables checks them against its scores)."""
    chosen = chosen_tables(record, plan.seats, deals)
    start = np.cumsum([0] + [deals * len(s) for s in plan.seats])
    idx = [start[l] + d * len(plan.seats[l]) + r for l, d, r in chosen]
    return record_tables(plan, roster, chosen, block.scores[idx], meta)


def record_tables(plan: MatchPlan, roster: Roster, chosen, scores, meta=None) -> list:
    """Play the chosen tables (lineup, deal, seating) again, tick by tick with a Recorder
    (the Python path: the same numbers as the core path, tests/arena/test_tournament.py), and
    return one Replay per table (a game's hands in one). `scores` [len(chosen), H, T] are
    the run's own hand scores of those tables: a replay that ends elsewhere (an agent that
    samples, or one whose moves depend on its batch) is a RuntimeError, never a file."""
    if not chosen:
        return []
    config, seats = plan.config, plan.seats
    T, H, n = config.num_teams, plan.max_hands, len(chosen)
    D = max(d for _, d, _ in chosen) + 1
    keys = DealKeys.of(plan.seed, 0, D, H)
    pols = {l: policy_keys(plan.seed, l, D, len(s)) for l, s in enumerate(seats)}
    agent_at = np.array([seats[l][r] for l, _, r in chosen], np.int64).reshape(-1, T)
    dd = np.array([d for _, d, _ in chosen], np.int64)
    pol = np.array([pols[l][d, r] for l, d, r in chosen], np.uint64)
    tables = make_tables(plan, roster.core, keys, agent_at, dd, pol, roster.roles,
                         roster.names)
    out = HandResults.zeros(n, H, T)
    labels = [{"lineup": l, "deal": d, "seating": r} for l, d, r in chosen]
    # looked up on the module when called, so a test can stand in for the loop
    rec = play.play_python(config, roster.for_table(config), tables, plan.mode == "games", out,
                           labels=labels)
    got = out.scores[:, :scores.shape[1]]
    if not np.array_equal(got, scores[:, :got.shape[1]]):
        i = int(np.flatnonzero((got != scores[:, :got.shape[1]]).any(axis=(1, 2)))[0])
        raise RuntimeError(f"recording table {chosen[i]} (lineup, deal, seating) ended with "
                           f"scores {got[i].tolist()}, the tournament's were "
                           f"{scores[i].tolist()}: an agent that samples its moves cannot be "
                           "replayed (use deterministic agents to record)")
    by_table = {}
    for h in rec.hands:
        by_table.setdefault((h.label["lineup"], h.label["deal"], h.label["seating"]), []).append(h)
    replays = []
    for i, key in enumerate(chosen):
        for h in by_table[key]:
            h.label.pop("table", None)
        replays.append(Replay(config, [roster.names[a] for a in tables.seat_agent[i]],
                              by_table[key], {**(meta or {}), "seed": int(plan.seed),
                                              "mode": plan.mode, "lineup": key[0],
                                              "deal": key[1], "seating": key[2]}))
    return replays


def replay_name(replay) -> str:
    """The file name of a tournament's replay: lineup, deal and seating."""
    m = replay.meta
    cell = f"cell{m['cell_index']}-" if "cell_index" in m else ""
    return f"{cell}lineup{m['lineup']}-deal{m['deal']}-seating{m['seating']}{SUFFIX}"
