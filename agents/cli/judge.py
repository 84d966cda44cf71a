"""`nertz judge {grid,curve,h2h,agreement}`: how strong a model is, and how far from another
(agents/judging measures it; this module reads the options, checks them before any play,
prints the result and writes the --out folder). `nertz probe` and `nertz exploit` are the
other two judgements, commands of their own."""
from __future__ import annotations

import argparse
import shlex
import sys

from .common import (LIMITS, MAX_SEED, HelpFormatter, add_out, csv_list, fit, int_at_least,
                     int_option, out_folder, refuse_alone, say_written)

DEALS = f"an int from {LIMITS['deals'].lo} to {LIMITS['deals'].hi:,}"   # as the refusal says
SEED = f"seed of the deals, an int from 0 to {MAX_SEED}"
DESCRIPTION = """\
Judge models: each judgement plays agents on duplicate deals (the same cards for both sides;
95% intervals over deals, the deal the independent unit) and prints a table; --out DIR keeps
its files (a new or empty folder, complete or absent), none holding a timing: same options,
same files.

  grid       each agent as one seat among river-builders against river-builder in that seat,
             in every table format of the grid (docs/experiments/learned_grid.md)
  curve      a run's checkpoint after N steps against its checkpoint at ~N/4
             (docs/experiments/plateau.md)
  h2h        agent A against agent B at 2 teams
  agreement  the share of positions where agent B plays agent A's move

What an agent does at named decisions: nertz probe. How far a trained best response beats
it: nertz exploit."""
EPILOG = """\
examples:
  nertz judge grid --agents "learned=learned" --deals 1000 --held-out --out runs/grid
  nertz judge curve --run runs/generalist2 --teams 2,4 --deals 1000 --out runs/curve
  nertz judge h2h learned:model=generalist heuristic:style=river-builder --deals 2000
  nertz judge agreement ppo:runs/w128/final.npz learned:model=generalist --teams 2,4

run 'nertz judge JUDGEMENT --help' for each one's options"""


def _agent_specs(specs, option: str) -> None:
    """Every spec made once (a bad one is a one-line ValueError naming `option`)."""
    from ..registry import make_agent
    for spec in specs:
        try:
            make_agent(spec)
        except ValueError as err:
            text = str(err)
            raise ValueError(f"{option} {text[6:]}" if text.startswith("agent ")
                             else f"{option} {spec!r}: {text}") from None


def _command(args, words) -> str:
    """The command line that gives these files again (options in a fixed order)."""
    return " ".join(["nertz", "judge", args.judgement] + [shlex.quote(str(w)) for w in words])


def _bar(total, args, desc):
    from ..arena.progress import progress_bar
    return progress_bar(total, not args.quiet, desc)


# --------------------------------------------------------------------------- grid
def cmd_grid(args) -> int:
    import time

    from ..judging import grid
    refuse_alone(args, [("--overwrite", args.overwrite, "--out DIR", bool(args.out)),
                        ("--no-plot", args.no_plot, "--out DIR", bool(args.out))])
    if args.replot:
        return _replot(args)
    agents = grid.parse_agents(args.agents)
    _agent_specs(agents.values(), "--agents")
    cells = grid.select_cells(args.held_out, args.only_held_out, args.cells)
    total = grid.tables_of(agents, cells, args.deals, args.seed)   # every cell's spec checked
    words = ["--agents", args.agents, "--deals", args.deals, "--seed", args.seed]
    words += (["--held-out"] if args.held_out else []) + (
        ["--only-held-out"] if args.only_held_out else []) + (
        ["--cells", args.cells] if args.cells else [])
    with out_folder(args.out, args.overwrite, "judge grid") as staging:
        print(grid.TABLE_HEAD, flush=True)
        bar = _bar(total, args, f"grid: {len(cells)} cells")
        t0 = time.perf_counter()
        try:
            rows = grid.run_grid(agents, cells, args.deals, args.seed, bar,
                                 on_row=lambda r: print(grid.row_line(r), flush=True))
        finally:
            bar.close()
        print(f"\n{len(cells)} cells x {len(agents)} agents, {args.deals} deals each, seed "
              f"{args.seed}: {time.perf_counter() - t0:,.0f} s")
        res = grid.GridResult(agents, args.deals, args.seed, rows, _command(args, words))
        paths = res.write_into(staging, plot=not args.no_plot) if staging is not None else []
    return say_written(args, paths, staging, GRID_FILES)


def _replot(args) -> int:
    """--replot FILE: grid.png (and grid.md) from the rows of an earlier grid file."""
    from nertz_env.files import json_loads_bounded, read_capped

    from ..judging import grid
    if not args.out:
        raise ValueError("--replot only means something with --out DIR (grid.png is written "
                         "there): give --out DIR too")
    done = json_loads_bounded(read_capped(args.replot, 16 << 20, "grid results"), args.replot)
    try:
        res = grid.GridResult(done["agents"], int(done["deals"]), int(done["seed"]),
                              list(done["rows"]), str(done.get("command", "")))
        res.table()
    except (KeyError, TypeError, ValueError, AttributeError) as err:
        raise ValueError(f"--replot {args.replot!r} is not a grid's results (agents, deals, "
                         f"seed and rows with cell, kind, treatment and effects): {err!r}"
                         ) from None
    with out_folder(args.out, args.overwrite, "judge grid") as staging:
        print(res.table())
        paths = res.write_into(staging, plot=True)
    return say_written(args, paths, staging, GRID_FILES)


GRID_FILES = "grid.json, grid.md and grid.png"


def _add_grid(sub) -> None:
    from ..judging.grid import GRID, HELD_OUT
    p = sub.add_parser(
        "grid", help="each agent in one seat among river-builders, in every table format",
        formatter_class=HelpFormatter,
        description=f"""\
Each agent takes one seat among river-builders, and river-builder takes that seat instead,
on the same duplicate deals (every team position of every deal), in each table format of
the grid: {len(GRID)} formats the 'rulebook' training preset holds (team counts, teams of
two, River 5, mixed and uneven speeds, no stacking, no flow rules) and, with --held-out,
{len(HELD_OUT)} it does not. Per format and agent: points per hand, agent minus river-builder
in that seat (95% interval over deals), and the share of hands cut at max_ticks (R26) in the agent's
lineups and in river-builder's. A row is printed as each format ends; a progress bar on
stderr counts the hands (--quiet hides it).

formats: {'; '.join(c[0] for c in GRID)}
held out: {'; '.join(c[0] for c in HELD_OUT)}""",
        epilog="""\
examples:
  nertz judge grid --agents "learned=learned" --deals 1000 --held-out --out runs/grid
  nertz judge grid --agents "g=ppo:runs/g1/final.npz;learned" --cells "River 5" --deals 200
  nertz judge grid --replot docs/experiments/results/learned_grid.json --out runs/plot""")
    p.add_argument("--agents", default="learned", metavar="NAME=SPEC;...",
                   help="agents, NAME=SPEC or SPEC items separated by ';' (quote them in a "
                        "shell; any agent spec: learned, ppo:PATH, heuristic:...) "
                        "(default: learned)")
    p.add_argument("--deals", type=int_option("deals"), default=1000,
                   help=f"duplicate deals per format, {DEALS} (default: 1000)")
    p.add_argument("--seed", type=int_option("seed"), default=2027,
                   help=f"{SEED} (default: 2027)")
    p.add_argument("--held-out", action="store_true", help="also the held-out formats")
    p.add_argument("--only-held-out", action="store_true", help="only the held-out formats")
    p.add_argument("--cells", default="", metavar="TEXT",
                   help="only the formats whose name holds TEXT (e.g. 'River 5')")
    p.add_argument("--replot", default="", metavar="FILE",
                   help="play nothing: draw grid.png (and grid.md, grid.json) into --out from "
                        "an earlier grid's rows (its grid.json, or a results file of "
                        "docs/experiments/results/)")
    add_out(p, GRID_FILES)
    p.add_argument("--no-plot", action="store_true", help="with --out: skip grid.png")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_grid)


# --------------------------------------------------------------------------- curve
def cmd_curve(args) -> int:
    import time

    from ..judging import curve
    refuse_alone(args, [("--overwrite", args.overwrite, "--out DIR", bool(args.out))])
    teams = csv_list("--teams", args.teams, int)
    bad = [t for t in teams if not 2 <= t <= 8]
    if bad:
        raise ValueError(f"--teams {args.teams!r}: {bad[0]} is not an int from 2 to 8")
    at = [int(float(x)) for x in _numbers("--at", args.at)]
    todo = curve.pairs(curve.checkpoints(args.run), at, args.min_step)   # refusals first
    if not todo:
        raise ValueError(f"--run {args.run!r}: no checkpoint pairs N and ~N/4 (a checkpoint "
                         f"between N/6 and N/3, at or above --min-step {args.min_step:,}); "
                         "lower --min-step or name --at steps")
    words = ["--run", args.run, "--teams", args.teams, "--deals", args.deals, "--seed",
             args.seed, "--min-step", args.min_step] + (["--at", args.at] if args.at else [])
    with out_folder(args.out, args.overwrite, "judge curve") as staging:
        print(curve.TABLE_HEAD, flush=True)
        t0 = time.perf_counter()
        rows = curve.run_curve(args.run, teams, args.deals, args.seed, args.min_step, at,
                               progress=not args.quiet,
                               on_row=lambda r: print(curve.row_line(r), flush=True))
        print(f"\n{len(rows)} matches, {args.deals} deals each, seed {args.seed}: "
              f"{time.perf_counter() - t0:,.0f} s")
        res = curve.CurveResult(args.run, args.deals, args.seed, rows, _command(args, words))
        paths = res.write_into(staging) if staging is not None else []
    return say_written(args, paths, staging, "curve.json and curve.md")


def _numbers(option: str, text: str) -> list:
    out = []
    for part in filter(None, (x.strip() for x in text.split(","))):
        try:
            value = float(part)
        except ValueError:
            value = -1.0
        if not value >= 0 or value != int(value):
            raise ValueError(f"{option} {text!r}: {part!r} is not a step count (an int >= 0)")
        out.append(part)
    return out


def _add_curve(sub) -> None:
    p = sub.add_parser(
        "curve", help="a run's checkpoints after N steps against those at ~N/4",
        formatter_class=HelpFormatter,
        description="""\
Does a run keep getting stronger? Each checkpoint after N steps plays the run's checkpoint
nearest N/4 (between N/6 and N/3, at or above --min-step) head to head on duplicate deals:
at 2 teams the two alone, at more teams with river-builder as a third agent. Per table size
and N: points per hand, N minus N/4, 95% interval over deals. The checkpoints are the run's
checkpoints/step_N.npz and final.npz (at the step its final.json records). A progress bar
per match on stderr (--quiet hides it).""",
        epilog="""\
examples:
  nertz judge curve --run runs/generalist2 --teams 2,4 --deals 1000 --out runs/curve
  nertz judge curve --run runs/w128 --teams 2,4 --deals 1000 --min-step 500000 \\
      --at 2001920,4003840,8007680,16015360""")
    p.add_argument("--run", required=True, metavar="DIR",
                   help="a lean PPO run folder (checkpoints/step_N.npz, final.npz)")
    p.add_argument("--teams", default="2", metavar="T,T",
                   help="table sizes, comma separated, each 2 to 8 (default: 2)")
    p.add_argument("--deals", type=int_option("deals"), default=500,
                   help=f"duplicate deals per match, {DEALS} (default: 500)")
    p.add_argument("--seed", type=int_option("seed"), default=4049,
                   help=f"{SEED} (default: 4049)")
    p.add_argument("--min-step", type=int_at_least(0), default=1_000_000, metavar="STEPS",
                   help="the earliest N/4 compared, an int >= 0 (default: 1000000)")
    p.add_argument("--at", default="", metavar="N,N",
                   help="only these N, comma separated, each a checkpoint's step (default: "
                        "every checkpoint with one near N/4)")
    add_out(p, "curve.json and curve.md")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    p.set_defaults(func=cmd_curve)


# --------------------------------------------------------------------------- h2h
def cmd_h2h(args) -> int:
    from ..judging.head_to_head import HeadToHead, head_to_head
    refuse_alone(args, [("--overwrite", args.overwrite, "--out DIR", bool(args.out))])
    _agent_specs([args.a], "A")
    _agent_specs([args.b], "B")
    if args.a == args.b:
        raise ValueError(f"A and B are the same spec {args.a!r}: name two agents")
    words = [args.a, args.b, "--deals", args.deals, "--seed", args.seed]
    with out_folder(args.out, args.overwrite, "judge h2h") as staging:
        res = HeadToHead(head_to_head(args.a, args.b, args.deals, args.seed,
                                      progress=not args.quiet), _command(args, words))
        print(fit(res.line()))
        paths = res.write_into(staging) if staging is not None else []
    return say_written(args, paths, staging, "h2h.json")


def _add_h2h(sub) -> None:
    p = sub.add_parser(
        "h2h", help="agent A against agent B at 2 teams", formatter_class=HelpFormatter,
        description="""\
Agent A against agent B at 2 solo teams on duplicate deals (each deal played at both
seatings): points per hand, A minus B, with its 95% interval over deals. For more agents or
table sizes, a leaderboard: nertz tournament.""",
        epilog="""\
examples:
  nertz judge h2h learned:model=generalist heuristic:style=river-builder --deals 2000
  nertz judge h2h ppo:runs/x/main_2/final.npz ppo:runs/x/exploiter_1/final.npz --seed 2062""")
    p.add_argument("a", metavar="A", help="an agent spec (learned, ppo:PATH, heuristic:...)")
    p.add_argument("b", metavar="B", help="the agent it plays")
    p.add_argument("--deals", type=int_option("deals"), default=2000,
                   help=f"duplicate deals, {DEALS} (default: 2000)")
    p.add_argument("--seed", type=int_option("seed"), default=0,
                   help=f"{SEED} (default: 0)")
    add_out(p, "h2h.json")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.set_defaults(func=cmd_h2h)


# --------------------------------------------------------------------------- agreement
def cmd_agreement(args) -> int:
    from ..judging.agreement import Agreement, agreement
    refuse_alone(args, [("--overwrite", args.overwrite, "--out DIR", bool(args.out))])
    _agent_specs([args.a], "A")
    _agent_specs([args.b], "B")
    teams = csv_list("--teams", args.teams, int)
    bad = [t for t in teams if not 2 <= t <= 8]
    if bad:
        raise ValueError(f"--teams {args.teams!r}: {bad[0]} is not an int from 2 to 8")
    words = [args.a, args.b, "--teams", args.teams, "--seed", args.seed, "--tables",
             args.tables, "--ticks", args.ticks]
    with out_folder(args.out, args.overwrite, "judge agreement") as staging:
        shares = {t: agreement(args.a, args.b, t, args.seed + t, args.tables, args.ticks)
                  for t in teams}
        res = Agreement(args.a, args.b, args.seed, args.tables, args.ticks, shares,
                        _command(args, words))
        print(fit(f"positions with a choice where {args.b} plays {args.a}'s move ({args.a} "
                  f"at seat 0 among river-builders):"))
        print(res.table())
        paths = res.write_into(staging) if staging is not None else []
    return say_written(args, paths, staging, "agreement.json")


def _add_agreement(sub) -> None:
    p = sub.add_parser(
        "agreement", help="the share of positions where B plays A's move",
        formatter_class=HelpFormatter,
        description="""\
How far apart are two models? A plays seat 0 of --tables tables among river-builders for
--ticks ticks; at every position where seat 0 has more than one legal move, B is asked too.
The share of those positions where B plays A's move, per table size (each table size T on
the deals of seed --seed + T).""",
        epilog="""\
examples:
  nertz judge agreement ppo:runs/w128/final.npz learned:model=generalist --teams 2,4
  nertz judge agreement ppo:runs/a.npz ppo:runs/b.npz --tables 256 --ticks 200 --out runs/ag""")
    p.add_argument("a", metavar="A", help="the agent that plays (learned, ppo:PATH, ...)")
    p.add_argument("b", metavar="B", help="the agent compared with it")
    p.add_argument("--teams", default="2,4", metavar="T,T",
                   help="table sizes, comma separated, each 2 to 8 (default: 2,4)")
    p.add_argument("--seed", type=int_option("seed"), default=0,
                   help=f"{SEED} (default: 0)")
    p.add_argument("--tables", type=int_at_least(1, 4096), default=128,
                   help="tables played at once, an int from 1 to 4,096 (default: 128)")
    p.add_argument("--ticks", type=int_at_least(1, 100_000), default=100,
                   help="ticks played, an int from 1 to 100,000 (default: 100)")
    add_out(p, "agreement.json")
    p.set_defaults(func=cmd_agreement)


def add_parser(sub) -> argparse.ArgumentParser:
    p = sub.add_parser("judge", help="judge models: grid of formats, learning curve, head to "
                       "head, same-move agreement", description=DESCRIPTION, epilog=EPILOG,
                       formatter_class=HelpFormatter)
    inner = p.add_subparsers(dest="judgement", metavar="JUDGEMENT")
    for add in (_add_grid, _add_curve, _add_h2h, _add_agreement):
        add(inner)
    p.set_defaults(func=lambda args: _no_judgement(p))
    return p


def _no_judgement(p) -> int:
    p.print_help(sys.stdout)
    return 0


__all__ = ["add_parser", "cmd_agreement", "cmd_curve", "cmd_grid", "cmd_h2h"]
