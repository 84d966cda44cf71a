"""Expert iteration: search labels the positions the current network visits,
the network is distilled on search's targets, the new network plays the next generation.

    python -m train.expert_iteration --out runs/expit --generations 3
    python -m train.expert_iteration --out runs/expit --resume          # after a stop

Per generation g (OUT/genG/):
1. labels/FORMAT/: the current network (generation 0: --init, the model plain `learned` plays at
   the default rules) plays --formats (FORMAT:DEALS, agents/training/labels.py FORMATS) on
   fresh deals (seed --seed x 1000 + g) and `--search` labels every decision where it had a
   choice (agents/training/labels.py), on --workers processes or on Ray (--ray);
2. model.npz/.json: the network distilled on those labels (agents/training/distill.py:
   search's move where it deviates by more than --z standard errors, KL --kl to the network
   it started from everywhere; --mode soft or gains: every candidate's gain, --beta or
   --kappa per point), in the safe format; distill.json its figures;
3. judge.json: the new network against the previous one head to head at 2 solo teams on
   --judge-deals fresh duplicate deals (agents/judging/head_to_head.py, seed --judge-seed +
   g), points per hand with the 95% interval over deals.
--observation v1 widens a v0 --init into a v1 network first (OUT/gen0/model.npz,
agents/learned/v1.py: it reads the memory block through zero weights, so it plays exactly as
--init), and every generation then labels and learns from v1 rows (the memory block); a v1
--init is taken as it is. Labels of one observation and a net of another are refused in one
line (--labels-from before any work).
It stops after --generations, or when a generation does not beat the last (the interval's
low end <= 0). Every step's files are written whole; --resume skips the finished steps of
the same options (OUT/expert_iteration.json records them; other options are refused, one
line naming the first that differs). Needs the [train] extra (torch).
"""
from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from train.common import exit_status

PROG = "python -m train.expert_iteration"
DEFAULT_INIT = "agents/learned/models/learned_stacking.npz"
RECORD = "expert_iteration.json"
OPTIONS = ("init", "observation", "formats", "search", "opponent", "seed", "block", "stride",
           "epochs", "batch", "lr", "kl", "z", "margin", "mode", "beta", "kappa", "s0", "tau",
           "confirm", "judge_deals", "judge_seed")


def parser():
    from train.common import ScriptParser
    p = ScriptParser(prog=PROG, description=__doc__.split("\n\n")[0])
    p.add_argument("--out", required=True, help="the run's folder (new or empty, or --resume)")
    p.add_argument("--resume", action="store_true", help="go on with a run of the same options")
    p.add_argument("--init", default=DEFAULT_INIT, help="generation 0 (a safe-format .npz)")
    p.add_argument("--observation", choices=("v0", "v1"), default=None,
                   help="what the networks read (default: --init's); v1 with a v0 --init "
                        "widens it first (OUT/gen0/model.npz), a v1 --init is refused v0")
    p.add_argument("--generations", type=int, default=3, help="at most this many generations")
    p.add_argument("--formats", default="2teams:1000,4teams:250",
                   help="FORMAT:DEALS,... labelled per generation (2teams, 4teams, 4teams-self)")
    p.add_argument("--search", default="search", help="the expert's agent spec")
    p.add_argument("--opponent", default="learned", help="the 2teams format's opponent")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--block", type=int, default=16, help="deals per labels shard")
    p.add_argument("--stride", type=int, default=4, help="keep 1 in N unsearched rows")
    p.add_argument("--workers", type=int, default=1, help="labelling processes")
    p.add_argument("--ray", default=None, metavar="ADDRESS",
                   help="label on Ray (auto, an address, or local for a local instance)")
    p.add_argument("--labels-from", default=None, metavar="RUN",
                   help="copy a generation's labels from another run where they are the "
                        "same (same net, search, seed, deals): only the distillation differs")
    p.add_argument("--epochs", type=int, default=4)
    p.add_argument("--batch", type=int, default=1024)
    p.add_argument("--lr", type=float, default=1e-4)
    p.add_argument("--kl", type=float, default=1.0, help="weight of KL to the starting net")
    p.add_argument("--z", type=float, default=1.0, help="standard errors of evidence")
    p.add_argument("--margin", type=float, default=0.0, help="points of evidence")
    p.add_argument("--mode", default="hard",
                   help="hard or soft targets, or gains: regression on every candidate's "
                        "gain (distill.py)")
    p.add_argument("--confirm", default=None, metavar="SPEC",
                   help="label the same positions again with this search (another seed, "
                        "e.g. search:seed=777); hard targets only where both agree")
    p.add_argument("--beta", type=float, default=2.0, help="soft: the tilt per point")
    p.add_argument("--kappa", type=float, default=0.5,
                   help="gains: the log-odds change per point of gain")
    p.add_argument("--s0", type=float, default=1.0,
                   help="gains: the weights' floor, weight 1 / (se^2 + s0^2)")
    p.add_argument("--tau", type=float, default=2.0,
                   help="gains: the prior's sd of a gain in points (the ridge 1 / tau^2)")
    p.add_argument("--judge-deals", type=int, default=500)
    p.add_argument("--judge-seed", type=int, default=7000)
    p.add_argument("--ceiling-deals", type=int, default=0,
                   help="also judge, per generation, the net with search's move played "
                        "wherever its z rule finds evidence (the ceiling of a perfect "
                        "distillation) against the previous generation on N deals (0: not)")
    return p


def parse_formats(text: str) -> dict:
    from agents.training.labels import FORMATS
    out = {}
    for item in text.split(","):
        fmt, _, n = item.strip().partition(":")
        if fmt not in FORMATS or not n.isdigit() or int(n) < 1 or fmt in out:
            raise ValueError(f"--formats item {item!r} must be FORMAT:DEALS, FORMAT one of "
                             f"{', '.join(FORMATS)} (each once), DEALS an int >= 1")
        out[fmt] = int(n)
    return out


def check(args) -> dict:
    """The record of the run's options; ValueError (one line) for a bad one, before any work."""
    from agents.training.distill import DistillConfig
    from agents.training.labels import check_net
    parse_formats(args.formats)
    if args.ceiling_deals < 0:
        raise ValueError("--ceiling-deals must be an int >= 0")
    for name in ("generations", "block", "stride", "workers", "judge_deals"):
        if getattr(args, name) < 1:
            raise ValueError(f"--{name.replace('_', '-')} must be an int >= 1")
    for name in ("seed", "judge_seed"):
        if getattr(args, name) < 0:
            raise ValueError(f"--{name.replace('_', '-')} must be an int >= 0")
    DistillConfig(args.epochs, args.batch, args.lr, args.kl, args.z, args.margin, 0,
                  args.mode, args.beta, args.kappa, args.s0, args.tau).check()
    args.init = str(Path(check_net(args.init)).resolve())
    start_observation(args)
    from agents.registry import make_agent
    make_agent(args.search, seed=0)
    if args.confirm is not None:
        make_agent(args.confirm, seed=0)
    make_agent(args.opponent, seed=0)
    return {k: getattr(args, k) for k in OPTIONS}


def start_observation(args) -> str:
    """The observation generation 1 labels ('nertz_v0' or 'nertz_v1'): --observation, else
    --init's; ValueError for a v1 --init asked to read v0, or --labels-from labels of the
    other observation."""
    import json
    from agents.training.labels import OBSERVATION_V1, net_observation
    have = net_observation(args.init)
    if args.observation == "v0" and have == OBSERVATION_V1:
        raise ValueError(f"--observation v0: --init {args.init!r} reads nertz_v1 (a v1 net is "
                         "not narrowed); give a v0 model or --observation v1")
    want = OBSERVATION_V1 if args.observation == "v1" else have
    if args.labels_from:
        for p in sorted((Path(args.labels_from) / "gen1" / "labels").glob("*/labels.json")):
            try:
                theirs = json.loads(p.read_text()).get("observation")
            except (OSError, ValueError, AttributeError):
                continue
            if theirs != want:
                raise ValueError(f"--labels-from: {str(p)!r} holds {theirs!r} labels; this "
                                 f"run's net reads {want!r}")
    return want


def widened_start(out: Path, args) -> str:
    """--init, or (--observation v1 with a v0 --init) its widened v1 twin OUT/gen0/model.npz,
    written once (agents/learned/v1.py widen_model; kept on --resume)."""
    from agents.learned.v1 import widen_model
    from agents.training.labels import OBSERVATION_V1, net_observation
    if args.observation != "v1" or net_observation(args.init) == OBSERVATION_V1:
        return args.init
    model = out / "gen0" / "model.npz"
    if not (model.is_file() and model.with_suffix(".json").is_file()):
        model.parent.mkdir(parents=True, exist_ok=True)
        widen_model(args.init, model)
        log(f"gen0: {args.init} widened to v1: {model}")
    return str(model.resolve())


def check_record(out: Path, rec: dict, resume: bool) -> None:
    import json
    p = out / RECORD
    if not resume:
        if out.exists() and (not out.is_dir() or any(out.iterdir())):
            raise ValueError(f"--out {str(out)!r} is not a new or empty folder (give --resume "
                             "to go on with its run)")
        return
    if not p.is_file():
        raise ValueError(f"--resume: {str(p)!r} is missing: no run to go on with")
    old = json.loads(p.read_text())
    for k in OPTIONS:                 # an option added since the run: its default then
        was = old.get(k, parser().get_default(k))
        if was != rec[k]:
            raise ValueError(f"--resume: --{k.replace('_', '-')} was {was!r} in this "
                             f"run, now {rec[k]!r}")


def log(msg: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {msg}", flush=True)


def generation(out: Path, g: int, prev: str, args, rec: dict) -> dict:
    """Labels, distillation and judgement of generation g (each skipped when done)."""
    from agents.judging.head_to_head import head_to_head
    from agents.training.distill import DistillConfig, distill, save_distilled
    from agents.training.labels import (merge_labels, net_observation, read_labels,
                                        write_labels)
    from nertz_env.files import json_loads_bounded, read_capped, write_json
    gdir = out / f"gen{g}"
    gdir.mkdir(parents=True, exist_ok=True)
    labels, fm = gdir / "labels", parse_formats(args.formats)
    sets = [(fmt, fmt, args.search) for fmt in fm]
    sets += [(f"{fmt}-confirm", fmt, args.confirm) for fmt in fm if args.confirm]
    for name, fmt, search in sets:                 # labels/NAME/: each whole or absent
        deals = fm[fmt]
        if (labels / name / "labels.json").is_file():
            continue
        if args.labels_from and reuse(Path(args.labels_from) / f"gen{g}" / "labels" / name,
                                      labels / name, prev, deals, g, args, search):
            continue
        log(f"gen{g}: labelling {name} ({deals} deals, {search}) with {prev}")
        write_labels(labels / name, prev, formats=[fmt], deals=deals,
                     seed=args.seed * 1000 + g, search=search, opponent=args.opponent,
                     block=args.block, stride=args.stride, workers=args.workers,
                     executor="local" if args.ray is None else "ray",
                     ray_address=None if args.ray in (None, "local") else args.ray, log=log)
    model = gdir / "model.npz"
    if not (gdir / "distill.json").is_file():
        lab, infos = merge_labels([read_labels(labels / fmt) for fmt in fm])
        net_obs = net_observation(prev)
        for i in infos:
            if i["observation"] != net_obs:
                raise ValueError(f"gen{g}: labels of {i['observation']!r} under {labels}, the "
                                 f"net {prev} reads {net_obs!r}")
        confirm = merge_labels([read_labels(labels / f"{fmt}-confirm") for fmt in fm])[0] \
            if args.confirm else None
        log(f"gen{g}: distilling on {len(lab['net_move'])} rows")
        cfg = DistillConfig(args.epochs, args.batch, args.lr, args.kl, args.z, args.margin,
                            args.seed + g, args.mode, args.beta, args.kappa, args.s0,
                            args.tau)
        actor, meta, fig = distill(lab, prev, cfg, log=log, confirm=confirm)
        save_distilled(actor, meta, model, {"algorithm": "expert_iteration", "generation": g,
                                            "init": prev, "labels": str(labels),
                                            "label_rows": int(len(lab["net_move"])),
                                            "observation": infos[0]["observation"],
                                            "search": args.search})
        write_json(gdir / "distill.json", {"generation": g, "init": prev, "labels": infos,
                                           "config": cfg._asdict(), "figures": fig})
    if args.ceiling_deals and not (gdir / "ceiling.json").is_file():
        log(f"gen{g}: the ceiling of {prev} with {args.search} on {args.ceiling_deals} deals")
        write_json(gdir / "ceiling.json", ceiling(prev, prev, args.search, args.z,
                                                  args.ceiling_deals, args.judge_seed + g))
    judge = gdir / "judge.json"
    if not judge.is_file():
        log(f"gen{g}: judging against {prev} on {args.judge_deals} deals")
        row = head_to_head(f"ppo:{model}", f"ppo:{prev}", args.judge_deals,
                           args.judge_seed + g)
        write_json(judge, row)
    row = json_loads_bounded(read_capped(judge, 1 << 20, "judgement"), str(judge))
    log(f"gen{g}: {row['diff']:+.2f} [{row['ci_low']:+.2f}, {row['ci_high']:+.2f}] points "
        "per hand against the previous generation")
    return row


def ceiling_agent(net: str, search: str, z: float, seed: int):
    """The net's move, except where `search` (evaluated at every position it visits) finds a
    candidate the net may play better than the net's move by more than z standard errors
    (agents/training/distill.py targets' rule): that candidate. What a perfect distillation
    of the labels would play."""
    import numpy as np
    from agents.registry import make_agent
    from agents.training.distill import targets
    from agents.training.labels import LabellingAgent

    class Ceiling(LabellingAgent):
        def act_view(self, view):
            masks = np.asarray(view.masks)
            _, legal, moves = self.net_moves(view)           # v0 or v1 rows, as ppo: plays
            pick = np.flatnonzero(legal.sum(axis=1) >= 2)
            if not pick.size:
                return moves
            sub = view._replace(rows=view.rows[pick], seats=view.seats[pick],
                                observations=np.asarray(view.observations)[pick],
                                masks=masks[pick])
            res = self.search.evaluate(sub)
            K = max(len(r.candidates) for r in res)
            pad = lambda f, v: np.array([list(f(r)) + [v] * (K - len(r.candidates))  # noqa
                                         for r in res])
            lab = {"candidates": pad(lambda r: r.candidates, -1), "gains": pad(
                lambda r: r.gains, 0.0), "se": np.nan_to_num(pad(lambda r: r.se, 0.0),
                                                             nan=np.inf),
                "net_move": moves[pick], "searched": np.array([r.searched for r in res]),
                "legal": np.packbits(legal[pick], axis=1)}
            t = targets(lab, z)
            moves[pick[t >= 0]] = t[t >= 0]
            return moves

    agent = Ceiling(net, make_agent(search, seed=seed))
    agent.name = f"ceiling:{net}"
    return agent


def ceiling(net: str, prev: str, search: str, z: float, deals: int, seed: int) -> dict:
    """The ceiling agent of `net` against `prev` (ppo:) at 2 teams, head_to_head's row."""
    import numpy as np
    from agents.arena.tournament import run_tournament
    from agents.stats import estimators as stats
    res = run_tournament([ceiling_agent(net, search, z, seed), f"ppo:{prev}"], teams=2,
                         deals=deals, seed=seed, format="round-robin", progress=False)
    dm = stats.deal_means(res.records, 2)
    diff, half = stats.mean_ci(dm[:, 0] - np.nanmean(dm[:, 1:], axis=1))
    return {"a": f"ceiling:{net}", "b": f"ppo:{prev}", "search": search, "z": z,
            "deals": deals, "seed": seed, "diff": float(diff), "ci_low": float(diff - half),
            "ci_high": float(diff + half)}


def reuse(src: Path, dst: Path, prev: str, deals: int, g: int, args, search: str) -> bool:
    """Copy another run's labels of this generation when they are the ones this run would
    write (same net bytes, search, opponent, seed, deals, block, stride): labels depend on
    nothing else (agents/training/labels.py), so only the distillation differs."""
    import json
    import shutil
    from agents.training.labels import sha256_file
    try:
        info = json.loads((src / "labels.json").read_text())
    except (OSError, ValueError):
        return False
    want = {"net_sha256": sha256_file(prev), "search": search, "seed": args.seed * 1000 + g,
            "opponent": args.opponent, "deals": deals, "block": args.block,
            "stride": args.stride}
    if any(info.get(k) != v for k, v in want.items()):
        log(f"gen{g}: {src} holds other labels; labelling anew")
        return False
    shutil.copytree(src, dst.with_name(dst.name + ".partial"), dirs_exist_ok=True)
    dst.with_name(dst.name + ".partial").rename(dst)
    log(f"gen{g}: labels copied from {src}")
    return True


def main(argv=None) -> int:
    args = parser().parse_args(argv)
    out = Path(args.out)
    try:
        rec = check(args)
        check_record(out, rec, args.resume)
    except ValueError as err:
        print(f"{PROG}: error: {err}", file=sys.stderr)
        return 2
    import torch
    from nertz_env.files import write_json
    torch.set_num_threads(1)
    out.mkdir(parents=True, exist_ok=True)
    if not (out / RECORD).is_file():
        write_json(out / RECORD, {**rec, "command": " ".join([PROG] + list(
            sys.argv[1:] if argv is None else argv))})
    try:
        best = widened_start(out, args)
        for g in range(1, args.generations + 1):
            row = generation(out, g, best, args, rec)
            if not row["ci_low"] > 0:
                log(f"stopped after generation {g}: it does not beat generation {g - 1}")
                break
            best = str((out / f"gen{g}" / "model.npz").resolve())
    except BaseException as err:        # 2 bad input, 1 a file, 130 Ctrl-C; else raised
        code = exit_status(err, PROG, f"finished steps are kept in {out}: the same command "
                           "with --resume goes on from them")
        if code is None:
            raise
        return code
    log(f"best model: {best}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
