"""The `nertz` command (also `python -m agents`): small, with examples in every --help.

    nertz play --teams 4 --every 50 --seed 0     one hand, random legal moves, the table
                                                 printed every 50 ticks, then the scores
    nertz game --teams 3 --seed 1                whole games to target_score (R30)
    nertz tournament                             the shipped bots, duplicate deals, a
                                                 leaderboard (agents/arena/tournament.py)
    nertz experiment spec.toml                   a treatment against a baseline over a grid
                                                 of tables, effects with 95% CIs and Holm
                                                 verdicts (agents/arena/experiment.py)
"""
from __future__ import annotations

import argparse
import dataclasses
import json
import sys
import time
from pathlib import Path

import numpy as np

from nertz_env.config import RulesConfig

# upper bounds of counts: far beyond any useful run, well inside every buffer's dtype
MAX_DEALS = 1_000_000
MAX_GAMES = 10_000              # each game keeps up to game.MAX_HANDS hand rows
MAX_GAME_HANDS = 10_000


class _Parser(argparse.ArgumentParser):
    """argparse's errors as the CLI's other errors: one line on stderr, exit status 2."""

    def error(self, message):
        self.exit(2, f"nertz: error: {_one_line(message)} (see '{self.prog} --help')\n")


def _one_line(text) -> str:
    return "; ".join(line.strip() for line in str(text).splitlines() if line.strip())


def _int_at_least(lo: int, hi: int | None = None, why: str = ""):
    """An argparse type: an int in lo..hi, else argparse's one-line error naming the option."""
    allowed = f"an int >= {lo}" if hi is None else f"an int from {lo} to {hi}"
    allowed += f" ({why})" if why else ""

    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not {allowed}") from None
        if value < lo or (hi is not None and value > hi):
            raise argparse.ArgumentTypeError(f"{text} is out of range: {allowed}")
        return value

    return parse


def _positive_float(text: str) -> float:
    """An argparse type: a finite number > 0, else argparse's one-line error."""
    allowed = "a number > 0 (a 95% half-width in points per hand, e.g. 0.05)"
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not {allowed}") from None
    if not (value > 0 and value != float("inf")):
        raise argparse.ArgumentTypeError(f"{text} is out of range: {allowed}")
    return value


def _int_list(option: str, text: str) -> tuple:
    """'1,2,1' -> (1, 2, 1); ValueError naming the option otherwise."""
    out = []
    for part in text.split(","):
        try:
            out.append(int(part))
        except ValueError:
            raise ValueError(f"{option} {text!r}: {part.strip()!r} is not an integer; write "
                             "integers separated by commas, e.g. 1,2,1") from None
    return tuple(out)


# how --rule reads a value, by the annotation of the RulesConfig field
def _rule_value(key: str, kind: str, text: str):
    def bad(allowed):
        return ValueError(f"--rule {key}={text}: {key} takes {allowed}")

    low = text.strip().lower()
    if "None" in kind and low in ("none", "null"):
        return None
    if kind.startswith("bool"):
        if low not in ("true", "false"):
            raise bad("true or false")
        return low == "true"
    if kind.startswith("int"):
        try:
            return int(text)
        except ValueError:
            raise bad("an integer") from None
    if kind.startswith("float"):
        try:
            return float(text)
        except ValueError:
            raise bad("a number") from None
    if kind.startswith("tuple"):
        try:
            return _int_list(f"--rule {key}", text)
        except ValueError:
            raise bad("integers separated by commas (or none)") from None
    if kind.startswith("Mapping"):
        out, pairs = {}, "KIND:TICKS pairs separated by commas, e.g. flip:2,shift:3 (or none)"
        for part in text.split(","):
            name, sep, num = part.replace("=", ":").partition(":")
            try:
                out[name.strip()] = int(num)
            except ValueError:
                raise bad(pairs) from None
            if not sep:
                raise bad(pairs)
        return out
    return text


def _rules(items) -> dict:
    """--rule FIELD=VALUE items -> RulesConfig keyword arguments."""
    fields = {f.name: f for f in dataclasses.fields(RulesConfig)}
    settable = sorted(n for n, f in fields.items() if f.init)
    kw = {}
    for item in items:
        key, eq, value = item.partition("=")
        key = key.strip()
        if key in fields and not fields[key].init:
            raise ValueError(f"--rule {item!r}: {key} is derived from the other fields (num_teams, "
                             f"team_sizes), not set; settable fields: {', '.join(settable)}")
        if not eq or key not in fields:
            raise ValueError(f"--rule {item!r}: write FIELD=VALUE with a RulesConfig field: "
                             + ", ".join(settable))
        if key in kw:
            raise ValueError(f"--rule {item!r}: {key} is given twice")
        kind = fields[key].type if isinstance(fields[key].type, str) else str(fields[key].type)
        kw[key] = _rule_value(key, kind, value)
    return kw


def _config(args) -> RulesConfig:
    """The table's RulesConfig from the rules options (and, for tournaments, --speeds and
    --rule; --rule wins over the options that set the same field)."""
    kw = dict(num_teams=args.teams, river_size=args.river, max_ticks=args.max_ticks,
              target_score=args.target)
    if args.team_sizes:
        kw["team_sizes"] = _int_list("--team-sizes", args.team_sizes)
    if getattr(args, "speeds", ""):
        kw["speeds"] = _int_list("--speeds", args.speeds)
    rules = _rules(getattr(args, "rule", []))
    for key, option in (("speeds", "--speeds"), ("team_sizes", "--team-sizes")):
        if key in rules and key in kw:
            raise ValueError(f"{key} is given twice: by {option} and by --rule {key}=...")
    kw.update(rules)
    return RulesConfig(**kw)


def _add_rules(p: argparse.ArgumentParser) -> None:
    p.add_argument("--teams", type=int, default=4, help="teams at the table, 2-8 (default 4)")
    p.add_argument("--team-sizes", default="", metavar="1,2,..",
                   help="players per team, comma separated (default: all solo)")
    p.add_argument("--river", type=int, default=4, help="River columns, 4 or 5 (default 4)")
    p.add_argument("--max-ticks", type=int, default=RulesConfig.max_ticks,
                   help=f"a hand ends after this many ticks (default {RulesConfig.max_ticks})")
    p.add_argument("--target", type=int, default=150, help="game target score (default 150)")
    p.add_argument("--seed", type=_int_at_least(0), default=0,
                   help="seed of deals and moves, an int >= 0 (default 0)")


def cmd_play(args) -> int:
    from nertz_env.table.table import Table

    cfg = _config(args)
    if args.human:
        from ..human.server import play_from_args
        return play_from_args(args, cfg)
    human_only = [o for o, v in (("--terminal", args.terminal), ("--against", args.against),
                                 ("--port", args.port), ("--replay-out", args.replay_out),
                                 ("--no-browser", args.no_browser)) if v]
    if human_only:
        raise ValueError(f"{human_only[0]} is an option of 'nertz play --human'")
    table = Table.deal(cfg, seed=args.seed)
    rng = np.random.default_rng(args.seed)
    print(table.render())
    while not table.hand_over:
        moves = {}
        for seat in range(cfg.num_seats):
            legal = table.legal_moves(seat)
            moves[seat] = legal[int(rng.integers(len(legal)))]
        table.step(moves)
        if table.tick % args.every == 0 or table.hand_over:
            print()
            print(table.render())
    lay = table.layout()
    how = (f"team(s) {lay['callers']} called Nertz" if lay["callers"]
           else f"no caller: max_ticks={cfg.max_ticks} reached (R26)")
    print(f"\nHand over after {table.tick} ticks: {how}")
    print("Scores (R29):", ", ".join(f"team {t}: {s:+d}" for t, s in enumerate(table.hand_scores())))
    return 0


def cmd_game(args) -> int:
    from nertz_env.table.games import play_games

    cfg = _config(args)
    t = time.perf_counter()
    games = play_games(cfg, args.games, seed=args.seed)
    dt = time.perf_counter() - t
    if args.json:
        print(json.dumps(games))
        return 0
    print(f"{'game':>4s}  {'hands':>5s}  {'winner':>6s}  totals (Nertz calls)")
    for g, r in enumerate(games):
        totals = "  ".join(f"{x:4d} ({c})" for x, c in zip(r["totals"], r["calls"]))
        print(f"{g:4d}  {r['hands']:5d}  {str(r['winner']):>6s}  {totals}")
    print(f"{args.games} game(s) of random legal play in {dt:.2f} s (first call includes compile)")
    return 0


DEFAULT_AGENTS = ("random,greedy,heuristic,heuristic:style=lake-rush,"
                  "heuristic:style=river-builder,heuristic:style=cautious")


def cmd_tournament(args) -> int:
    from ..registry import make_agent, split_specs
    from ..arena.tournament import make_lineups, run_tournament

    cfg = _config(args)                       # every value is checked before anything runs
    deals = args.deals
    if args.hands is not None:                # the old name of --deals
        if deals is not None and deals != args.hands:
            raise ValueError(f"--hands {args.hands} and --deals {deals}: --hands is the old "
                             f"name of --deals, give one of them")
        deals = args.hands
        print("nertz: note: --hands is deprecated, use --deals (deals per lineup)",
              file=sys.stderr)
    deals = 200 if deals is None else deals
    if args.max_deals is not None:
        if args.precision is None:
            raise ValueError(f"--max-deals {args.max_deals} caps a --precision run: give "
                             f"--precision too")
        if args.max_deals < deals:
            raise ValueError(f"--max-deals {args.max_deals} is below --deals {deals}: the "
                             f"cap must be at least the first block")
    agents = [make_agent(s, seed=args.seed) for s in split_specs(args.agents)]
    make_lineups(len(agents), cfg.num_teams, args.format)
    _check_record(args)
    if args.out:
        try:                                  # before playing: a bad --out fails at once
            Path(args.out).mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise ValueError(f"--out {args.out!r}: cannot create that folder "
                             f"({err.strerror or err})") from None
    ray = args.ray is not None
    res = run_tournament(split_specs(args.agents) if ray else agents, config=cfg, deals=deals,
                         seed=args.seed, mode=args.mode, format=args.format,
                         progress=not args.quiet, max_game_hands=args.max_game_hands,
                         precision=args.precision, max_deals=args.max_deals,
                         executor="ray" if ray else "local",
                         ray_address=args.ray or None, block_deals=args.block_deals,
                         record=args.record)
    n_seat = sorted({len(s) for s in res.seatings})
    tables = len(res.records)
    played = (f"{tables} games ({res.hands_played} hands)" if res.mode == "games"
              else f"{res.hands_played} hands")
    print(f"{len(res.names)} agents, {cfg.num_teams} teams, {res.format}, {len(res.lineups)} "
          f"lineup(s) x {res.deals} deals x {'/'.join(map(str, n_seat))} seatings = {played}, "
          f"seed {res.seed}")
    print(res.table())
    if res.precision is not None:
        print("\n" + res.precision_line())
    rate = res.hands_played / res.elapsed_s if res.elapsed_s > 0 else float("nan")
    print(f"\nplayed in {res.elapsed_s:.2f} s ({rate:,.0f} hands/s, including any numba compile)")
    if args.out:
        paths = res.write(args.out, plot=not args.no_plot)
        print("wrote " + ", ".join(str(p) for p in paths))
    return 0


def _csv_list(option: str, text: str, kind=str) -> list:
    out = []
    for part in filter(None, (x.strip() for x in text.split(","))):
        try:
            out.append(kind(part))
        except ValueError:
            raise ValueError(f"{option} {text!r}: {part!r} is not an integer") from None
    if not out:
        raise ValueError(f"{option} {text!r}: give at least one value")
    return out


def cmd_experiment(args) -> int:
    from ..arena.experiment import load_spec, main_table, run_experiment, spec_from_dict
    from ..registry import split_specs

    over = {"name": args.name, "seed": args.seed, "deals": args.deals,
            "precision": args.precision, "max_deals": args.max_deals,
            "baseline": args.baseline, "max_game_hands": args.max_game_hands}
    if args.treatment:
        treatments = {}
        for item in args.treatment:
            name, eq, spec = item.partition("=")
            if eq and name.strip().replace("-", "_").isidentifier() and ":" not in name:
                treatments[name.strip()] = spec.strip()
            else:
                treatments[item.strip()] = item.strip()
        over["treatments"] = treatments
    if args.opponents:
        over["opponents"] = [o if "+" not in o else o.split("+")
                             for item in args.opponents for o in split_specs(item)]
    if args.teams:
        over["teams"] = _csv_list("--teams", args.teams, int)
    if args.speeds:
        over["speeds"] = list(args.speeds)
    if args.modes:
        over["modes"] = _csv_list("--modes", args.modes)
    if args.outcomes:
        over["outcomes"] = _csv_list("--outcomes", args.outcomes)
    if args.rule:
        over["rules"] = {"custom": _rules(args.rule)}
    if args.spec:
        spec = load_spec(args.spec, **over)
    else:
        if args.baseline is None or not args.treatment:
            raise ValueError("name a spec file, or at least --treatment and --baseline "
                             "(see 'nertz experiment --help')")
        spec = spec_from_dict({k: v for k, v in over.items() if v is not None},
                              where="nertz experiment")
    _check_record(args)
    if args.out:
        try:
            Path(args.out).mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise ValueError(f"--out {args.out!r}: cannot create that folder "
                             f"({err.strerror or err})") from None
    res = run_experiment(spec, progress=not args.quiet,
                         executor="local" if args.ray is None else "ray",
                         ray_address=args.ray or None, block_deals=args.block_deals,
                         record=args.record)
    cells = len(res.cells)
    hands = sum(c["hands"] for c in res.cells)
    print(f"experiment {spec.name!r}: {len(spec.treatments)} treatment(s) against "
          f"{spec.baseline!r}, {cells} cell(s), {hands} hands, seed {spec.seed}")
    print(main_table(res))
    print(f"\nplayed in {res.elapsed_s:.1f} s ({hands / max(res.elapsed_s, 1e-9):,.0f} hands/s, "
          "including any numba compile)")
    if args.out:
        paths = res.write(args.out, plot=not args.no_plot)
        print("wrote " + ", ".join(str(p) for p in paths))
    return 0


def _add_record(p: argparse.ArgumentParser) -> None:
    p.add_argument("--record", default=None, metavar="WHICH",
                   help="keep replays of some tables under --out DIR/replays: all, first:N "
                        "(the first N tables) or deals:D1,D2 (every seating of those deals); "
                        "watch one with 'nertz replay FILE'")


def _check_record(args) -> None:
    from ..arena.tournament import parse_record
    parse_record(args.record)
    if args.record is not None and not args.out:
        raise ValueError("--record needs --out DIR: the replays are written to DIR/replays")


def cmd_replay(args) -> int:
    from nertz_env.replay.format import Replay
    from nertz_env.replay.terminal import browse, events, frame_text, write_animation

    rep = Replay.load(args.file)
    if not rep.hands:
        raise ValueError(f"replay file {args.file!r} holds no hand")
    rep.hand_record(args.hand)                # a bad --hand fails before any work
    print(f"{args.file}: {len(rep.hands)} hand(s), {rep.config.num_teams} teams, seats "
          + ", ".join(f"{s} {a}" for s, a in enumerate(rep.agents)))
    print("\n".join(rep.summary()))
    if not args.no_check:
        rep.check()
        print("checked: every hand replays to its recorded end (layout digest, scores, tick)")
    frames = None
    if args.events or args.tick is not None:
        frames = rep.frames(args.hand)
    if args.events:
        print("\n".join(f"tick {t}: {ev}" for t, ev in events(frames)) or "no events")
    if args.tick is not None:
        first, last = frames[0]["tick"], frames[-1]["tick"]
        if not first <= args.tick <= last:
            raise ValueError(f"--tick {args.tick}: hand {args.hand} has ticks {first}..{last}")
        print(frame_text(rep, frames[args.tick - first]))
    if args.html:
        from nertz_env.replay.html import write_html
        _wrote(args.html, write_html, rep, args.html, hand=args.hand)
    if args.video:
        _wrote(args.video, write_animation, rep, args.video, hand=args.hand, every=args.every,
               fps=args.fps)
    if args.browse:
        browse(rep, args.hand, start=0)
    return 0


def _wrote(out, write, *args, **kw) -> None:
    """write(*args, **kw), then 'wrote PATH'; an OSError becomes a one-line ValueError."""
    try:
        print(f"wrote {write(*args, **kw)}")
    except OSError as err:
        raise ValueError(f"{out!r}: cannot write it ({err.strerror or err})") from None


def _add_ray(p: argparse.ArgumentParser) -> None:
    """--ray [ADDRESS] and --block-deals, the same for tournaments and experiments."""
    p.add_argument("--ray", nargs="?", const="", default=None, metavar="ADDRESS",
                   help="play the deals as Ray tasks in blocks (--block-deals), on the Ray "
                        "cluster at ADDRESS (e.g. auto, ray://host:10001) or, without one, a "
                        "local Ray instance; the same files as without --ray")
    p.add_argument("--block-deals", type=_int_at_least(1, MAX_DEALS), default=None,
                   metavar="N", help="with --ray: deals per task (default: 1/8 of a run's "
                                     "deals)")


def build_parser() -> argparse.ArgumentParser:
    ap = _Parser(
        prog="nertz",
        description="Nertz (Nerts, Pounce) rules engine and RL environments. Rules: RULES.md "
                    "ids R1-R31; decisions: docs/engine_contract.md.",
        epilog="examples:\n  nertz play --teams 4 --every 50\n  nertz game --teams 3 --games 5\n"
               "  nertz tournament --agents random,greedy,heuristic --deals 200 --teams 2 "
               "--seed 7 --out runs/t1\n"
               "  nertz experiment --treatment heuristic:withhold_stream=keep --baseline "
               "heuristic:withhold_stream=always --teams 2,4\n\nrun 'nertz COMMAND --help' for each command's options",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="command", metavar="COMMAND")
    p = sub.add_parser("play", help="play one hand: random legal moves, or you against bots "
                                    "(--human)",
                       description="Deal one hand, play it with uniformly random legal moves "
                                   "(every seat, every tick), print the table every N ticks and "
                                   "the hand scores. With --human, you play one seat against "
                                   "agents on a local web page (a server on 127.0.0.1 only; "
                                   "ticks run on a wall clock, click or drag your cards, an "
                                   "illegal move is refused with the rule that forbids it) or, "
                                   "with --terminal, tick by tick in the terminal; the hand "
                                   "ends with the scores and a replay file (nertz replay FILE).",
                       epilog="examples:\n"
                              "  nertz play --teams 4 --team-sizes 2,1,1,2 --every 100\n"
                              "  nertz play --human --teams 2 --against heuristic\n"
                              "  nertz play --human --teams 3 --against learned:teams=4,greedy "
                              "--tick-ms 600 --speeds 1,2,2\n"
                              "  nertz play --human --terminal --teams 2 --against greedy",
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    _add_rules(p)
    p.add_argument("--every", type=_int_at_least(1), default=100,
                   help="print the table every N ticks, N >= 1 (default 100)")
    p.add_argument("--speeds", default="", metavar="1,2,..",
                   help="ticks between moves per seat (R21; default: all 1)")
    p.add_argument("--rule", action="append", default=[], metavar="FIELD=VALUE",
                   help="any other RulesConfig field, repeatable (as in nertz tournament)")
    h = p.add_argument_group("you against the bots")
    h.add_argument("--human", action="store_true",
                   help="play one seat yourself on a local web page (or --terminal)")
    h.add_argument("--terminal", action="store_true",
                   help="with --human: play tick by tick in the terminal instead of a browser")
    h.add_argument("--against", default="", metavar="SPECS",
                   help="agents at the other seats: one spec for all, or one per seat in seat "
                        "order, comma separated (random, greedy, heuristic[:style=S], learned, "
                        "ppo:PATH; default heuristic)")
    h.add_argument("--seat", type=_int_at_least(0), default=0,
                   help="your seat (default 0); seats are numbered team by team")
    h.add_argument("--tick-ms", type=_int_at_least(10, 60000), default=400,
                   help="milliseconds per tick on the web page (default 400)")
    h.add_argument("--human-period", type=_int_at_least(1, 100), default=None,
                   help="your seat's period in ticks (R21): 2 = you move at most every other "
                        "tick (default: as --speeds, else 1)")
    h.add_argument("--port", type=_int_at_least(0, 65535), default=0,
                   help="the web page's port on 127.0.0.1 (default 0: any free port)")
    h.add_argument("--no-browser", action="store_true",
                   help="print the page's address without opening a browser")
    h.add_argument("--replay-out", default="", metavar="PATH",
                   help="where to write the hand's replay (default runs/play/<time>-seed<N>"
                        ".nertz.json.gz)")
    p.set_defaults(func=cmd_play)
    g = sub.add_parser("game", help="play whole games (R30) with random legal moves",
                       description="Play whole games to --target on the batched core, one table "
                                   "per game, all inside numba; print totals and winners.",
                       epilog="example: nertz game --teams 3 --games 8 --target 100",
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    _add_rules(g)
    g.add_argument("--games", type=_int_at_least(1, MAX_GAMES), default=4,
                   help=f"games to play in parallel, 1-{MAX_GAMES} (default 4)")
    g.add_argument("--json", action="store_true", help="print the results as JSON")
    g.set_defaults(func=cmd_game)
    t = sub.add_parser(
        "tournament", help="a leaderboard of bots over duplicate deals",
        description="Play the named agents against each other on duplicate deals: every deal is "
                    "replayed at a balanced set of distinct seatings (every agent at every team "
                    "position, every pair of agents at every pair of positions equally often; "
                    "agents/arena/tournament.py), so the cards' luck cancels. Prints a leaderboard "
                    "(mean points per hand with 95% CI, win share, Nertz-call rate, "
                    "Plackett-Luce rating) and the paired point differences with 95% CIs; "
                    "--out writes leaderboard.csv, pairs.csv, results.json, hands.csv and "
                    "leaderboard.png. Same seed, same files. Agents: "
                    "random, greedy, heuristic[:style=S,KNOB=V,...] (styles balanced, lake-rush, "
                    "river-builder, cautious; knobs in docs/heuristics.md), "
                    "ppo:PATH[,deterministic=true|false][,device=cpu|cuda|cuda:N|auto] (a saved "
                    "MaskablePPO or PPO model; the options follow the path after commas).",
        epilog="examples:\n"
               "  nertz tournament                      # the shipped bots, 4 teams\n"
               "  nertz tournament --agents random,greedy,heuristic --deals 200 --teams 2 "
               "--seed 7 --out runs/t1\n"
               "  nertz tournament --agents heuristic,heuristic:withhold_stream=never "
               "--teams 2 --deals 2000\n"
               "  nertz tournament --agents greedy,heuristic --teams 3 --speeds 1,2,1 "
               "--rule river_size=5 --mode games\n"
               "  nertz tournament --agents greedy,ppo:runs/m.zip,deterministic=false --teams 2\n"
               "  nertz tournament --agents greedy,heuristic --teams 2 --precision 0.5 "
               "--max-deals 20000   # deals until every pair is within +-0.5",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    t.add_argument("--agents", default=DEFAULT_AGENTS,
                   help="comma-separated agent specs (default: every shipped bot)")
    t.add_argument("--deals", type=_int_at_least(2, MAX_DEALS, "intervals need 2 deals"),
                   default=None, metavar="N",
                   help="deals per lineup, 2 or more (default 200); each is played at every "
                        "seating of the balanced design: T(T-1) seatings for T distinct agents "
                        "at T teams (60 at 6 teams), see agents/arena/tournament.py")
    t.add_argument("--hands", type=_int_at_least(2, MAX_DEALS, "intervals need 2 deals"),
                   default=None, metavar="N",
                   help="deprecated: the old name of --deals (prints a note; it always meant "
                        "deals, not hands)")
    t.add_argument("--precision", type=_positive_float, default=None, metavar="H",
                   help="play deals in blocks (--deals first, then more as the current "
                        "intervals project) until every paired difference has a 95%% "
                        "half-width of at most H points per hand, or --max-deals is reached; "
                        "a line (and results.json) names the pairs that were not")
    t.add_argument("--max-deals", type=_int_at_least(2, MAX_DEALS), default=None, metavar="N",
                   help="with --precision: at most N deals per lineup (default 100 x --deals); "
                        "the deals are the same as a plain run of that many deals")
    _add_rules(t)
    t.add_argument("--speeds", default="", metavar="1,2,..",
                   help="ticks between moves per seat (R21; default: all 1)")
    t.add_argument("--rule", action="append", default=[], metavar="FIELD=VALUE",
                   help="any other RulesConfig field, repeatable: true/false, integers, "
                        "comma-separated integers (speeds, team_sizes), KIND:TICKS pairs "
                        "(move_ticks=flip:2,shift:3) or none (e.g. --rule stacking=false)")
    t.add_argument("--mode", choices=("hands", "games"), default="hands",
                   help="a deal is one hand, or a whole game to --target (default hands)")
    t.add_argument("--max-game-hands", type=_int_at_least(1, MAX_GAME_HANDS), default=40,
                   help="games mode: stop a game after this many hands (default 40)")
    t.add_argument("--format", choices=("auto", "round-robin", "all-play-all"), default="auto",
                   help="round-robin: every set of --teams agents; all-play-all: all agents at "
                        "each table (default auto: round-robin when there are enough agents)")
    t.add_argument("--out", default="", metavar="DIR", help="write the leaderboard files here")
    t.add_argument("--no-plot", action="store_true", help="skip leaderboard.png")
    _add_ray(t)
    _add_record(t)
    t.add_argument("--quiet", action="store_true",
                   help="no progress bar, and no first-run notice (on a fresh install numba "
                        "first compiles the kernels, about a minute on 2 cores; without "
                        "--quiet a line on stderr says so)")
    t.set_defaults(func=cmd_tournament)

    x = sub.add_parser(
        "experiment", help="a strategy question: a treatment against a baseline, with CIs",
        description="Answer a strategy question with evidence: the treatment agent takes the "
                    "place of the baseline agent, on the same duplicate deals with the same "
                    "opponents, in every cell of a grid (opponents x --teams x --speeds x "
                    "rules x --modes). The unit is the deal: every effect is the mean over "
                    "deals of (treatment - baseline) with a 95%% interval; 'relative %%' is "
                    "the effect as a share of the baseline's points (or wins); Holm verdicts "
                    "cover every row. --out writes effects.csv, effects.md, experiment.json "
                    "and forest.png; same spec and seed, same files. A spec file (TOML) holds the "
                    "same keys as the options (agents/arena/experiment.py shows one); options given "
                    "on the command line replace the file's.",
        epilog="examples:\n"
               "  nertz experiment --treatment keep=heuristic:withhold_stream=keep "
               "--baseline heuristic:withhold_stream=always --teams 2,4 --deals 2000\n"
               "  nertz experiment docs/experiments/withholding.toml --out runs/w\n"
               "  nertz experiment --treatment heuristic --baseline greedy --opponents half "
               "--opponents random --speeds even --speeds mixed --modes hands,games\n\n"
               "opponents: 'baseline' (the treatment as one seat among baseline bots), an "
               "agent spec or specs joined by '+' (one seat among those bots), 'half' "
               "(treatment and baseline alternate round the table).\n"
               "speeds: 'even' (every seat moves every tick), 'mixed' (seats alternate "
               "periods 1 and 2, R21) or one period per seat, e.g. 1,2,1,3.",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    x.add_argument("spec", nargs="?", default=None, metavar="SPEC.toml",
                   help="an experiment spec file (optional when --treatment and --baseline "
                        "are given)")
    x.add_argument("--treatment", action="append", default=[], metavar="[NAME=]SPEC",
                   help="an agent spec to test, repeatable (NAME= labels it)")
    x.add_argument("--baseline", default=None, metavar="SPEC",
                   help="the agent spec the treatments replace")
    x.add_argument("--opponents", action="append", default=[], metavar="WHO",
                   help="repeatable: baseline (default), half, or agent specs (A+B mixes)")
    x.add_argument("--teams", default="", metavar="2,3,..",
                   help="table sizes, comma separated (default 2)")
    x.add_argument("--speeds", action="append", default=[], metavar="MIX",
                   help="repeatable: even (default), mixed, or P1,P2,... per seat")
    x.add_argument("--rule", action="append", default=[], metavar="FIELD=VALUE",
                   help="a RulesConfig field for every table, repeatable (a spec file can "
                        "name several rules variants)")
    x.add_argument("--modes", default="", metavar="hands,games",
                   help="hands (a deal is one hand; default) and/or games (a whole game to "
                        "target_score)")
    x.add_argument("--outcomes", default="", metavar="points,relative,win",
                   help="outcomes to report, the first is the headline (default all three)")
    x.add_argument("--deals", type=_int_at_least(2, MAX_DEALS, "intervals need 2 deals"),
                   default=None, metavar="N", help="deals per cell (default 1000)")
    x.add_argument("--precision", type=_positive_float, default=None, metavar="H",
                   help="play on until every headline effect's 95%% half-width is <= H (or "
                        "--max-deals)")
    x.add_argument("--max-deals", type=_int_at_least(2, MAX_DEALS), default=None, metavar="N",
                   help="with --precision: at most N deals per cell (default 100 x --deals)")
    x.add_argument("--max-game-hands", type=_int_at_least(1, MAX_GAME_HANDS), default=None,
                   help="games mode: stop a game after this many hands (default 40)")
    x.add_argument("--seed", type=_int_at_least(0), default=None,
                   help="seed of the deals, an int >= 0 (default 0)")
    x.add_argument("--name", default=None, help="a label for the report and plot")
    x.add_argument("--out", default="", metavar="DIR", help="write the result files here")
    x.add_argument("--no-plot", action="store_true", help="skip forest.png")
    _add_ray(x)
    _add_record(x)
    x.add_argument("--quiet", action="store_true", help="no progress bar")
    x.set_defaults(func=cmd_experiment)

    r = sub.add_parser(
        "replay", help="check and watch a recorded hand (text, HTML page, GIF/MP4)",
        description="Read a replay file (written by --record, by nertz play --human or by "
                    "nertz_env.replay.format.record(env)), play every hand again and check it ends "
                    "exactly as recorded, then show it: one tick as text (--tick), the events "
                    "(--events), a step-by-step browser in the terminal (--browse), a "
                    "self-contained HTML page with a scrubber (--html) or an animation "
                    "(--video a.gif or a.mp4).",
        epilog="examples:\n  nertz tournament --agents heuristic,greedy --deals 20 --out runs/t "
               "--record deals:0\n  nertz replay runs/t/replays/lineup0-deal0-seating0"
               ".nertz.json.gz --events\n  nertz replay FILE --browse      (Enter next, p "
               "previous, j N jump, / call next Nertz call, q quit)\n  nertz replay FILE "
               "--html hand.html --video hand.gif --every 5",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    r.add_argument("file", help="a replay file (.nertz.json.gz or .json)")
    r.add_argument("--hand", type=_int_at_least(0), default=0,
                   help="which hand of the file to show, 0-based (default 0)")
    r.add_argument("--tick", type=_int_at_least(0), default=None,
                   help="print the position at this tick and the moves chosen there")
    r.add_argument("--events", action="store_true",
                   help="list the hand's events: Nertz calls, burns, conflicts, illegal moves")
    r.add_argument("--browse", action="store_true",
                   help="step through the hand in the terminal (h for the keys)")
    r.add_argument("--html", default=None, metavar="OUT.html",
                   help="write a self-contained HTML viewer of the hand (no server needed)")
    r.add_argument("--video", default=None, metavar="OUT.gif|OUT.mp4",
                   help="write an animation of the hand (MP4 needs imageio-ffmpeg)")
    r.add_argument("--every", type=_int_at_least(1), default=1,
                   help="--video: keep every N-th tick (default 1)")
    r.add_argument("--fps", type=_positive_float, default=10.0,
                   help="--video: frames per second (default 10)")
    r.add_argument("--no-check", action="store_true",
                   help="skip playing every hand again to check it (on by default)")
    r.set_defaults(func=cmd_replay)

    from . import train
    train.add_parser(sub)
    return ap


def main(argv=None) -> int:
    ap = build_parser()
    args = ap.parse_args(argv)
    if not getattr(args, "func", None):
        ap.print_help()
        return 0
    try:
        return args.func(args)
    except ValueError as err:          # bad option values: the config's own message
        print(f"nertz: error: {_one_line(err)}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
