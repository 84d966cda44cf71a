"""Search cost: a `search:` agent (agents/search) playing whole hands, end to end.

    python -m benchmarks.search                                  # defaults, 2 and 4 teams
    python -m benchmarks.search --teams 2 --deals 50 --spec search:worlds=1 --spec search:worlds=64

For each spec and table size: a tournament (agents/arena/tournament.py run_tournament) of the
search agent against copies of the opponent (`learned` unless --opponent), one search seat at
every table, each deal at every seating (2 tables a deal at 2 teams, 12 at 4), after a
warm-up tournament of 2 deals (numba compile, buffers) with the same agent object. Counted:
the hands played (tables; every one has one search seat), the searched decisions (ticks where
the seat had two or more candidates, SearchAgent.decisions) and how many left the base move.
Reported: seconds per hand (wall and CPU of this process, the opponents' play included),
searched decisions per CPU second and ms of CPU per searched decision (all of the run's CPU
over its decisions: the base bot, the opponents and the engine included).

Threads: one. The agent's rollouts run serially (agents/search/agent.py calls the core's
rollout() without parallel=True and offers no threads option), so NUMBA_NUM_THREADS changes
nothing here; the table says so in its threads column. The kernel alone: benchmarks/rollout.py.
Prints a table with the command, then one JSON line.
"""
from __future__ import annotations

import argparse
import json
import sys
import time

from agents import make_agent
from agents.arena.tournament import run_tournament

WARM_DEALS = 2


def bench(spec: str, teams: int, deals: int, seed: int, opponent: str) -> dict:
    """One row: the spec's agent in one seat against teams-1 copies of the opponent."""
    agent = make_agent(spec, seed=seed)
    if not hasattr(agent, "decisions"):
        raise ValueError(f"--spec {spec!r} must be a search: agent (it counts its decisions)")
    lineup = [agent] + [opponent] * (teams - 1)
    run_tournament(lineup, teams=teams, deals=WARM_DEALS, seed=seed + 1, progress=False)
    d0, v0 = agent.decisions, agent.deviations
    w0, c0 = time.perf_counter(), time.process_time()
    res = run_tournament(lineup, teams=teams, deals=deals, seed=seed, progress=False)
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    hands, dec = res.hands_played, agent.decisions - d0
    return {"spec": spec, "teams": teams, "threads": 1, "deals": deals, "hands": hands,
            "decisions": dec, "deviations": agent.deviations - v0,
            "wall_s": round(wall, 3), "cpu_s": round(cpu, 3),
            "s_per_hand": round(wall / hands, 5), "cpu_s_per_hand": round(cpu / hands, 5),
            "decisions_per_hand": round(dec / hands, 2),
            "decisions_per_cpu_s": round(dec / cpu, 1) if cpu > 0 else None,
            "cpu_ms_per_decision": round(1000 * cpu / dec, 4) if dec else None}


def table(rows: list) -> str:
    out = ["| spec | teams | threads | hands | searched decisions (left the base) | "
           "s per hand, wall / CPU | decisions per CPU s | ms CPU per decision |",
           "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        ms = "-" if r["cpu_ms_per_decision"] is None else f"{r['cpu_ms_per_decision']:.3f}"
        dps = "-" if r["decisions_per_cpu_s"] is None else f"{r['decisions_per_cpu_s']:,.0f}"
        out.append(f"| `{r['spec']}` | {r['teams']} | {r['threads']} | {r['hands']:,} | "
                   f"{r['decisions']:,} ({r['deviations']:,}) | {r['s_per_hand']:.4f} / "
                   f"{r['cpu_s_per_hand']:.4f} | {dps} | {ms} |")
    return "\n".join(out)


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.search", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--spec", action="append", help="a search: agent spec, repeatable "
                    "(default: search, the defaults)")
    ap.add_argument("--teams", default="2,4", help="table sizes, comma separated")
    ap.add_argument("--deals", type=int, default=100, help="deals per row (each at every "
                    "seating)")
    ap.add_argument("--seed", type=int, default=4051)
    ap.add_argument("--opponent", default="learned", help="the other seats' agent spec")
    args = ap.parse_args(argv)
    try:
        teams = [int(t) for t in args.teams.split(",")]
    except ValueError:
        ap.error(f"--teams {args.teams!r} must be table sizes such as 2,4")
    if args.deals < 2 or args.seed < 0 or any(not 2 <= t <= 8 for t in teams):
        ap.error("--deals must be >= 2 (intervals need 2), --seed >= 0 and --teams from 2 to 8")
    specs = args.spec or ["search"]
    cmd = "python -m benchmarks.search " + " ".join(sys.argv[1:] if argv is None else argv)
    rows = [bench(s, t, args.deals, args.seed, args.opponent) for s in specs for t in teams]
    result = {"command": cmd.strip(), "opponent": args.opponent, "seed": args.seed,
              "rows": rows}
    print(f"$ {result['command']}")
    print(table(rows))
    print(json.dumps(result))
    return result


if __name__ == "__main__":
    main()
