"""Can a person play at each `nertz play --human --level`? A scripted person against each
level, through the session API the play page uses, on a simulated clock (so it runs fast).

    python -m benchmarks.human_pace                     # every level, 40 hands each, 2 teams
    python -m benchmarks.human_pace --levels medium,expert --hands 100
    python -m benchmarks.human_pace --bot heuristic:1600 --bot greedy:1000   # tuning points

The scripted person is far better than a real one at reading the table: every `--look-ms`
(default 1000 ms of clock, i.e. one move per second) it reads the position (session.state(),
the page's GET /state, and the seat's observation), chooses as the `greedy` bot would, and
sends that move (session.request(), the page's POST /move); the clock then plays ticks of
`--tick-ms` (session.tick(), what the server's clock does), the bots at the level's period
(agents/human/pace.py). Hand i is dealt from seed SEED+i at every level (the same deals).

Reports per level: the person's wins (hands where their team scores strictly more than every
other team; a Wilson 95% interval), mean hand points of the person and of the best other
team, their mean difference with a 95% interval over hands, and moves made per hand.
Prints a table with the command, then one JSON line.
"""
from __future__ import annotations

import argparse
import json
import math
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from agents.human.pace import DEFAULT_TICK_MS, LEVELS, bot_period
from agents.cli.common import int_at_least
from agents.human.session import PlaySession
from agents.registry import make_agent
from nertz_env.config import RulesConfig

Z95 = 1.959964


def mean_ci(xs) -> tuple[float, float]:
    """The mean and the half-width of its normal 95% interval over hands."""
    a = np.asarray(xs, float)
    if a.size < 2:
        return float(a.mean()), float("nan")
    return float(a.mean()), float(Z95 * a.std(ddof=1) / math.sqrt(a.size))


def wilson(k: int, n: int) -> tuple[float, float]:
    """The Wilson 95% interval of a share k/n."""
    p, z2 = k / n, Z95 * Z95
    mid = (p + z2 / (2 * n)) / (1 + z2 / n)
    half = Z95 * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / (1 + z2 / n)
    return mid - half, mid + half


def play_hand(agent: str, bot_ms: int, seed: int, out: Path, teams: int = 2,
              tick_ms: int = DEFAULT_TICK_MS, look_ms: int = 1000,
              max_ticks: int | None = None) -> dict:
    """One hand of the scripted person (module docstring) against `agent` at `bot_ms`."""
    kw = {} if max_ticks is None else {"max_ticks": max_ticks}
    sess = PlaySession(RulesConfig(num_teams=teams, **kw), against=agent, seed=seed,
                       bot_period=bot_period(bot_ms, tick_ms), replay_out=out)
    person = make_agent("greedy")
    every = max(1, look_ms // tick_ms)
    moves = np.zeros(sess.config.num_seats, np.int64)
    while not sess.table.hand_over:
        tick = sess.table.tick
        if tick % every == every - 1:                # one look (and move) per look_ms
            st = sess.state()
            if st["ready"] and st["legal"] != ["wait"]:
                obs, mask = sess.observation()
                move = str(sess.table.decode(int(person.act(obs, mask)), sess.seat))
                if move != "wait":
                    why = sess.request(move)
                    assert not why, why              # chosen on the position it is sent on
        res = sess.tick()
        for s, move in sess.last_moves.items():
            moves[s] += move != "wait" and res.applied[s]
    scores = sess.table.hand_scores()
    mine = scores[sess.team]
    best_other = max(s for t, s in enumerate(scores) if t != sess.team)
    bot_moves = sum(int(moves[s]) for s in sess.bot_seats) / len(sess.bot_seats)
    return {"person": mine, "other": best_other, "won": mine > best_other,
            "ticks": sess.table.tick, "person_moves": int(moves[sess.seat]),
            "bot_moves": bot_moves}


def measure(agent: str, bot_ms: int, hands: int, seed: int, **kw) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        rows = [play_hand(agent, bot_ms, seed + i, Path(tmp) / f"h{i}.nertz.json.gz", **kw)
                for i in range(hands)]
    wins = sum(r["won"] for r in rows)
    diff = [r["person"] - r["other"] for r in rows]
    return {"agent": agent, "bot_ms": bot_ms, "hands": hands, "wins": wins,
            "win_share": wins / hands, "win_ci": [round(x, 3) for x in wilson(wins, hands)],
            "person_points": mean_ci([r["person"] for r in rows]),
            "other_points": mean_ci([r["other"] for r in rows]),
            "difference": mean_ci(diff),
            "person_moves": float(np.mean([r["person_moves"] for r in rows])),
            "bot_moves": float(np.mean([r["bot_moves"] for r in rows])),
            "ticks": float(np.mean([r["ticks"] for r in rows]))}


def _pm(pair) -> str:
    return f"{pair[0]:+6.1f} ± {pair[1]:4.1f}"


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.human_pace", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--levels", default=",".join(LEVELS),
                    help=f"comma-separated levels (default all: {','.join(LEVELS)}; "
                         "'none' for only --bot points)")
    ap.add_argument("--bot", action="append", default=[], metavar="AGENT:MS",
                    help="also an agent spec at a reaction time in ms, repeatable")
    ap.add_argument("--hands", type=int_at_least(1), default=40, help="hands per level (default 40)")
    ap.add_argument("--teams", type=int_at_least(2, 8), default=2, help="teams at the table (default 2)")
    ap.add_argument("--seed", type=int, default=0, help="hand i is dealt from SEED+i")
    ap.add_argument("--look-ms", type=int_at_least(1), default=1000,
                    help="the person's time per move in ms (default 1000)")
    ap.add_argument("--tick-ms", type=int_at_least(10), default=DEFAULT_TICK_MS,
                    help=f"the clock's tick in ms (default {DEFAULT_TICK_MS})")
    ap.add_argument("--max-ticks", type=int_at_least(1), default=None, help="a hand's max_ticks (R26)")
    args = ap.parse_args(argv)
    names = [] if args.levels == "none" else args.levels.split(",")
    for name in names:
        if name not in LEVELS:
            ap.error(f"--levels: {name!r} is not a level; choose from {','.join(LEVELS)} or none")
    points = [(name, LEVELS[name].agent, LEVELS[name].bot_ms) for name in names]
    for item in args.bot:
        agent, _, ms = item.rpartition(":")
        if not (agent and ms.isdigit() and int(ms) > 0):
            ap.error(f"--bot {item!r}: give AGENT:MS, e.g. heuristic:800")
        points.append((f"{agent}@{ms}", agent, int(ms)))
    kw = dict(teams=args.teams, tick_ms=args.tick_ms, look_ms=args.look_ms,
              max_ticks=args.max_ticks)
    command = "python -m benchmarks.human_pace " + " ".join(argv if argv is not None
                                                             else sys.argv[1:])
    print(f"$ {command}")
    print(f"a scripted person (greedy choices, one move per {args.look_ms} ms) at "
          f"{args.teams} teams, {args.hands} hands per level, tick {args.tick_ms} ms")
    wl = max([5] + [len(n) for n, _, _ in points]) + 2     # column widths fit the names
    wa = max([5] + [len(a) for _, a, _ in points]) + 2
    print(f"{'level':<{wl}}{'agent':<{wa}}{'bot ms':>7}  {'person wins (95%)':<22}"
          f"{'person pts':>16}{'bot pts':>16}{'difference':>16}{'moves you/bot':>15}")
    out, start = {}, time.perf_counter()
    for name, agent, ms in points:
        r = measure(agent, ms, args.hands, args.seed, **kw)
        out[name] = r
        lo, hi = r["win_ci"]
        print(f"{name:<{wl}}{agent:<{wa}}{ms:>7}  {r['wins']:>3}/{r['hands']:<3} "
              f"({lo:.2f}-{hi:.2f})     {_pm(r['person_points']):>16}"
              f"{_pm(r['other_points']):>16}{_pm(r['difference']):>16}"
              f"{r['person_moves']:>8.0f}/{r['bot_moves']:<6.0f}", flush=True)
    print(f"({time.perf_counter() - start:.0f} s; points are hand points, R29; ± is a 95% "
          "interval over hands)")
    print(json.dumps(out))
    return out


if __name__ == "__main__":
    main()
