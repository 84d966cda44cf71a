"""Search cost: a `search:` agent (agents/search) playing whole hands, end to end.

    python -m benchmarks.search                                  # defaults, 2 and 4 teams
    python -m benchmarks.search --teams 2 --deals 50 --spec search:worlds=1 --spec search:worlds=64
    python -m benchmarks.search --also 5dd9197                   # before/after in one run

For each spec and table size: a tournament (agents/arena/tournament.py run_tournament) of the
search agent against copies of the opponent (`learned` unless --opponent), one search seat at
every table, each deal at every seating (2 tables a deal at 2 teams, 12 at 4), after a
warm-up tournament of 2 deals (numba compile, buffers) with the same agent object. Counted:
the hands played (tables; every one has one search seat), the searched decisions (ticks where
the seat had two or more candidates, SearchAgent.decisions) and how many left the base move.
Reported: seconds per hand (wall and CPU of this process, the opponents' play included),
searched decisions per CPU second and ms of CPU per searched decision (all of the run's CPU
over its decisions: the base bot, the opponents and the engine included).

Threads (--threads, default 1,2): each spec is measured with the agent's option threads=N
(its rollouts on N numba threads; 1: serial; the same moves). CPU is the process's, all its
threads; with two threads, wall is what shrinks. The kernel alone: benchmarks/rollout.py.

--also REV (repeatable): the same rows (one thread) from the tree of git revision REV
(`git archive`, its own numba cache, compiled by an untimed warm-up) run in a fresh
interpreter by REV's own benchmarks/search.py, right after this tree's rows: a before/after
in one run, with the ratios now / REV of decisions per CPU second and of wall per hand.
Prints a table with the command, then one JSON line.
"""
from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from agents import make_agent
from agents.arena.tournament import run_tournament

WARM_DEALS = 2


def with_threads(spec: str, threads: int) -> str:
    """The spec with the option threads=N (N > 1), as written in the table."""
    if threads == 1:
        return spec
    return f"{spec}{',' if ':' in spec else ':'}threads={threads}"


def bench(spec: str, teams: int, deals: int, seed: int, opponent: str,
          threads: int = 1) -> dict:
    """One row: the spec's agent (threads=N) in one seat against teams-1 opponents."""
    agent = make_agent(spec, seed=seed)
    if not hasattr(agent, "decisions"):
        raise ValueError(f"--spec {spec!r} must be a search: agent (it counts its decisions)")
    if threads > 1:
        agent = make_agent(with_threads(spec, threads), seed=seed)
    lineup = [agent] + [opponent] * (teams - 1)
    run_tournament(lineup, teams=teams, deals=WARM_DEALS, seed=seed + 1, progress=False)
    d0, v0 = agent.decisions, agent.deviations
    w0, c0 = time.perf_counter(), time.process_time()
    res = run_tournament(lineup, teams=teams, deals=deals, seed=seed, progress=False)
    wall, cpu = time.perf_counter() - w0, time.process_time() - c0
    hands, dec = res.hands_played, agent.decisions - d0
    return {"spec": spec, "teams": teams, "threads": threads, "deals": deals, "hands": hands,
            "decisions": dec, "deviations": agent.deviations - v0,
            "wall_s": round(wall, 3), "cpu_s": round(cpu, 3),
            "s_per_hand": round(wall / hands, 5), "cpu_s_per_hand": round(cpu / hands, 5),
            "decisions_per_hand": round(dec / hands, 2),
            "decisions_per_cpu_s": round(dec / cpu, 1) if cpu > 0 else None,
            "cpu_ms_per_decision": round(1000 * cpu / dec, 4) if dec else None}


def also_rows(rev: str, argv: list, tmp: Path) -> list:
    """The rows of REV's own benchmarks/search.py (one thread), run on REV's tree (docstring);
    each row's spec is marked @REV."""
    here = Path(__file__).resolve().parents[1]
    tree = tmp / f"tree_{rev}"
    tree.mkdir()
    archive = subprocess.run(["git", "-C", str(here), "archive", rev], capture_output=True,
                             check=True).stdout
    subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    if not (tree / "benchmarks" / "search.py").is_file():
        raise ValueError(f"--also {rev!r}: that revision has no benchmarks/search.py")
    cmd = [sys.executable, "-m", "benchmarks.search", *argv]
    for warm in (True, False):          # the first run compiles REV's kernels, untimed
        args = cmd[:3] + ["--teams", "2", "--deals", "2"] + cmd[3:] if warm else cmd
        out = subprocess.run(args, cwd=tree, capture_output=True, text=True, check=True).stdout
    rows = json.loads(out.strip().splitlines()[-1])["rows"]
    for r in rows:
        r["spec"] = f"{r['spec']}@{rev}"
        r["threads"] = 1
    return rows


def table(rows: list) -> str:
    out = ["| spec | teams | threads | hands | searched decisions (left the base) | "
           "s per hand, wall / CPU | decisions per CPU s | ms CPU per decision |",
           "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        ms = "-" if r["cpu_ms_per_decision"] is None else f"{r['cpu_ms_per_decision']:.3f}"
        dps = "-" if r["decisions_per_cpu_s"] is None else f"{r['decisions_per_cpu_s']:,.0f}"
        out.append(f"| `{with_threads(r['spec'], r['threads'])}` | {r['teams']} | "
                   f"{r['threads']} | {r['hands']:,} | "
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
    ap.add_argument("--threads", default="1,2", help="the agent's threads=N, comma separated "
                    "(default 1,2)")
    ap.add_argument("--also", metavar="REV", action="append", default=[],
                    help="the same rows (one thread) from git revision REV's tree, repeatable")
    args = ap.parse_args(argv)
    try:
        teams = [int(t) for t in args.teams.split(",")]
        threads = [int(t) for t in args.threads.split(",")]
    except ValueError:
        ap.error(f"--teams {args.teams!r} and --threads {args.threads!r} must be comma "
                 "separated ints such as 2,4")
    if args.deals < 2 or args.seed < 0 or any(not 2 <= t <= 8 for t in teams):
        ap.error("--deals must be >= 2 (intervals need 2), --seed >= 0 and --teams from 2 to 8")
    if any(t < 1 for t in threads):
        ap.error(f"--threads {args.threads!r} must be ints >= 1")
    specs = args.spec or ["search"]
    here = Path(__file__).resolve().parents[1]
    for s in specs:                      # specs, thread counts, revisions: checked before runs
        if not hasattr(make_agent(s), "decisions"):
            raise ValueError(f"--spec {s!r} must be a search: agent (it counts its decisions)")
        for n in threads:
            make_agent(with_threads(s, n))
    for rev in args.also:
        if subprocess.run(["git", "-C", str(here), "rev-parse", "--verify", "--quiet",
                           f"{rev}^{{commit}}"], capture_output=True).returncode:
            raise ValueError(f"--also {rev!r} must be a git revision of {here}")
    argv = sys.argv[1:] if argv is None else list(argv)
    cmd = "python -m benchmarks.search " + " ".join(argv)
    rows = [bench(s, t, args.deals, args.seed, args.opponent, n)
            for s in specs for t in teams for n in threads]
    ratios = []
    if args.also:
        base_argv = ["--deals", str(args.deals), "--seed", str(args.seed), "--teams",
                     args.teams, "--opponent", args.opponent]
        base_argv += [x for s in specs for x in ("--spec", s)]
        with tempfile.TemporaryDirectory(prefix="search_bench_") as tmp:
            for rev in args.also:
                old = also_rows(rev, base_argv, Path(tmp))
                for o in old:
                    now = next(r for r in rows if r["threads"] == 1 and r["teams"] == o["teams"]
                               and f"{r['spec']}@{rev}" == o["spec"])
                    ratios.append({"rev": rev, "spec": now["spec"], "teams": o["teams"],
                                   "decisions_per_cpu_s": _ratio(now, o, "decisions_per_cpu_s"),
                                   "wall_per_hand": _ratio(o, now, "s_per_hand")})
                rows += old
    result = {"command": cmd.strip(), "opponent": args.opponent, "seed": args.seed,
              "rows": rows, "ratios": ratios}
    print(f"$ {result['command']}")
    print(table(rows))
    for q in ratios:
        print(f"now / {q['rev']}, `{q['spec']}` at {q['teams']} teams, one thread: "
              f"{q['decisions_per_cpu_s']}x the decisions per CPU s, "
              f"{q['wall_per_hand']}x faster wall per hand")
    print(json.dumps(result))
    return result


def _ratio(a: dict, b: dict, key: str):
    return round(a[key] / b[key], 3) if a[key] and b[key] else None


if __name__ == "__main__":
    main()
