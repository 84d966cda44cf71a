"""Expert iteration, try 10 (docs/experiments/expert_iteration.md, "Try 10: a move-pair
table"): search's gains averaged with no position at all, per (candidate move, the net's own
move), fitted search's held-out gains better than every network of try 9 (0.255 against
0.18-0.22). Does that table, played, beat the net it was measured on?

The table: over the labels' rows of one format (agents/training/labels.py; default
runs/expit7's `nertz_v1` labels of the widened `learned_stacking`, whose moves are
`learned`'s), every searched candidate the net may play, keyed (candidate, net's move), its
measured gain over the net's move (agents/training/distill.py `gains`), averaged with
weight 1 / (se^2 + s0^2) (--weighting evidence) or 1 (--weighting plain); the mean's
standard error is clustered by deal (the labels' independent unit). A pair is kept where it
was seen at least --min-count times and its mean minus --z standard errors exceeds
--threshold points. The override agent plays the net's move (as `ppo:NET` plays it: its
constraint), except where a kept pair (c, the net's move) has c legal for the net (Wait
only where the net waits): then the kept c of the largest mean.

Judged without search, on duplicate deals the labels never saw (--seed): 2 teams, head to
head against `learned` (`learned:model=stacking`, the net it starts from; agents/judging's
quantity: its points per hand minus `learned`'s at the table); 4 teams, one seat among
river-builders, its points (and relative points) minus `learned`'s in the same seat on the
same deals (`nertz experiment`'s quantity), 95% intervals over deals. Offline and in-process: the table is not a model file and is not
shipped; this script only measures it.

  nice python -m train.override_table --format 4teams --weighting plain --z 1 --deals 1000 --seed 10101

--distill OUT: the override's play distilled into the network itself (a network that plays
without the table). The override plays --record-deals duplicate deals of each format of
--distill-formats (seed --record-seed; 2 teams against `learned`, 4 teams as one seat among
river-builders, each format with its own table, the one --weighting/--z/--threshold keep;
the formats of --anchor-formats with no table: the net's own play, held by the KL),
recording at every decision with two or more moves the v0 observation, the legal mask, the
net's move and the override's (rows where they agree kept one in --stride); held out: a
ninth as many deals of seed --record-seed + 1. The net is then fine-tuned from --net as
agents/training/distill.py's hard mode does it: cross-entropy toward the override's move
where it differs from the net's, KL to the frozen start elsewhere (figures on the held-out
rows: agreement on the changed ones, changed share of the rest). The model is written in the safe format (OUT/model.npz + .json, `ppo:OUT/model.npz`
plays it), with OUT/distill.json.

  nice python -m train.override_table --distill runs/override10/net --record-deals 3000
"""
from __future__ import annotations

import argparse
import sys

import numpy as np

PROG = "python -m train.override_table"
LABELS = {"2teams": "runs/expit7/gen1/labels/2teams", "4teams": "runs/expit7/gen1/labels/4teams"}
NET = "agents/learned/models/learned_stacking.npz"
RIVER_BUILDER = "heuristic:style=river-builder"
# The yardstick and the 2-team opponent: the family's stacking member (NET itself), named so
# that shipping net_c as `learned` at 4+ teams (2026-12-08) leaves every figure here replayable.
LEARNED = "learned:model=stacking"
KEY = 400                                       # > N_ACTIONS: key = candidate * KEY + net move


def parser():
    p = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--format", choices=sorted(LABELS), default="4teams",
                   help="the labels' format and the judging table")
    p.add_argument("--labels", action="append", default=[], help="a labels folder of "
                   "--format (repeat to pool several: their deals count apart; default: "
                   "runs/expit7's of the format)")
    p.add_argument("--net", default=NET, help="the net the override plays over "
                   "(default %(default)s)")
    p.add_argument("--weighting", choices=("evidence", "plain"), default="plain")
    p.add_argument("--z", type=float, default=1.0)
    p.add_argument("--threshold", type=float, default=0.0)
    p.add_argument("--min-count", type=int, default=20)
    p.add_argument("--s0", type=float, default=0.5)
    p.add_argument("--baseline", default=LEARNED, metavar="SPEC",
                   help=f"the agent the override is judged against (default {LEARNED}, "
                        "the net of generation 1's figures; a later generation: ppo:NET)")
    p.add_argument("--deals", type=int, default=1000)
    p.add_argument("--seed", type=int, default=10101)
    p.add_argument("--distill", default="", metavar="OUT", help="distil the override into "
                   "the network (module docstring) into the new folder OUT; no judging")
    p.add_argument("--distill-formats", default="2teams,4teams")
    p.add_argument("--anchor-formats", default="", help="formats recorded with no table: "
                   "the net's own moves kept there by the KL alone (comma separated)")
    p.add_argument("--record-deals", type=int, default=3000)
    p.add_argument("--record-seed", type=int, default=20001)
    p.add_argument("--stride", type=int, default=4)
    p.add_argument("--epochs", type=int, default=3)
    p.add_argument("--lr", type=float, default=3e-4)
    p.add_argument("--kl", type=float, default=1.0)
    return p


def pair_table(lab: dict, weighting: str, z: float, threshold: float, min_count: int,
               s0: float) -> dict:
    """{(candidate, net move): mean gain} of the kept pairs (module docstring)."""
    from agents.training.distill import gains
    gm, _, diff, w = gains(lab, s0)
    net = lab["net_move"].astype(np.int64)
    deal = np.broadcast_to(lab["deal"].astype(np.int64)[:, None], gm.shape)
    m = w > 0
    key = (gm * KEY + net[:, None])[m]
    d = diff[m].astype(np.float64)
    ww = w[m].astype(np.float64) if weighting == "evidence" else np.ones(d.size)
    uk, inv = np.unique(key, return_inverse=True)
    c = np.bincount(inv, ww)
    mean = np.bincount(inv, ww * d) / c
    count = np.bincount(inv)
    span = int(deal.max()) + 1                                  # (pair, deal) as one key
    dk, dinv = np.unique(inv.astype(np.int64) * span + deal[m],
                         return_inverse=True)
    per_deal = np.bincount(dinv, ww * (d - mean[inv]))       # residual sums per (pair, deal)
    se = np.sqrt(np.bincount(dk // span, per_deal ** 2,
                             minlength=uk.size)) / c
    keep = (count >= min_count) & (mean - z * se > threshold)
    return {(int(k) // KEY, int(k) % KEY): float(v) for k, v in zip(uk[keep], mean[keep])}


def override_agent(net: str, table: dict):
    from agents.training.labels import LabellingAgent
    from nertz_env.actions import N_ACTIONS, WAIT
    best = np.full((N_ACTIONS, N_ACTIONS), -np.inf)       # [net move, candidate]
    for (c, b), v in table.items():
        best[b, c] = v

    class Override(LabellingAgent):
        fires = decisions = 0
        record = None                  # a list: (obs, legal, net move, its move) per batch

        def act_view(self, view):
            obs, legal, moves = self.net_moves(view)
            vals = np.where(legal, best[moves], -np.inf)
            vals[moves != WAIT, WAIT] = -np.inf
            vals[np.arange(len(moves)), moves] = -np.inf
            pick = vals.argmax(axis=1)
            fire = np.isfinite(vals[np.arange(len(moves)), pick])
            self.decisions += len(moves)
            self.fires += int(fire.sum())
            out = np.where(fire, pick, moves)
            if self.record is not None:
                two = legal.sum(axis=1) >= 2
                self.record.append((obs[two], np.packbits(legal[two], axis=1), moves[two],
                                    out[two]))
            return out

    agent = Override(net, None)
    agent.name = f"override:{net}"
    return agent


def judge(agent, fmt: str, deals: int, seed: int, baseline: str = LEARNED) -> list:
    """[(outcome, mean, low, high)] of the agent minus `baseline` (module docstring; a later
    generation's override is judged against the net it plays over: --baseline ppo:NET)."""
    from agents.arena.tournament import run_tournament
    from agents.stats import estimators as stats
    if fmt == "2teams":
        res = run_tournament([agent, baseline], teams=2, deals=deals, seed=seed,
                             format="round-robin", progress=False)
        dm = stats.deal_means(res.records, 2)
        x, h = stats.mean_ci(dm[:, 0] - dm[:, 1])
        return [("head to head", x, x - h, x + h)]
    arms = []
    for a in (agent, baseline):
        res = run_tournament([a] + [RIVER_BUILDER] * 3, teams=4, deals=deals, seed=seed,
                             format="round-robin", progress=False)
        dm = stats.deal_means(res.records, 4)
        arms.append((dm[:, 0], dm[:, 0] - dm[:, 1:].mean(axis=1)))
    out = []
    for i, name in enumerate(("points", "relative")):
        x, h = stats.mean_ci(arms[0][i] - arms[1][i])
        out.append((name, x, x - h, x + h))
    return out


def record(net: str, tables: dict, deals: int, seed: int, stride: int) -> dict:
    """The override's decisions on `deals` deals of `seed` (the --distill part of the module
    docstring): obs, legal (packed), net move, target (the override's move where it differs
    from the net's, else -1)."""
    from agents.arena.tournament import run_tournament
    parts = []
    for fmt, table in tables.items():
        agent = override_agent(net, table)
        agent.record = []
        lineup = [agent, LEARNED] if fmt == "2teams" else [agent] + [RIVER_BUILDER] * 3
        run_tournament(lineup, teams=2 if fmt == "2teams" else 4, deals=deals, seed=seed,
                       format="round-robin", progress=False)
        for obs, legal, mv, out in agent.record:
            keep = (mv != out) | (np.arange(len(mv)) % stride == 0)
            parts.append((obs[keep], legal[keep], mv[keep], np.where(mv != out, out, -1)[keep]))
    cat = [np.concatenate(x) for x in zip(*parts)]
    return {"obs": cat[0], "legal": cat[1], "net_move": cat[2], "target": cat[3]}


def distill_config(a):
    """The fine-tuning's settings (agents/training/distill.py DistillConfig, checked: one line
    refuses a bad --epochs, --lr or --kl before any work)."""
    from agents.training.distill import DistillConfig
    return DistillConfig(epochs=a.epochs, batch=1024, lr=a.lr, kl=a.kl, seed=a.seed).check()


def distill_override(a, tables: dict, stage) -> dict:
    """Fine-tune --net toward the recorded override (hard targets, KL elsewhere:
    agents/training/distill.py `distill_targets`); writes model.npz + .json and distill.json
    into `stage` (main's run_folder)."""
    import torch

    from agents.training.distill import distill_targets, save_distilled
    from nertz_env.actions import N_ACTIONS
    from nertz_env.files import write_json
    cfg = distill_config(a)
    torch.manual_seed(a.seed)
    fit = record(a.net, tables, a.record_deals, a.record_seed, a.stride)
    out = record(a.net, tables, max(a.record_deals // 9, 2), a.record_seed + 1, a.stride)
    data = {k: np.concatenate([fit[k], out[k]]) for k in fit}
    held = np.arange(len(data["target"])) >= len(fit["target"])
    print(f"recorded {len(held):,} rows ({int(held.sum()):,} held out), "
          f"{int((data['target'] >= 0).sum()):,} with a target", flush=True)
    legal = np.unpackbits(data["legal"], axis=1, count=N_ACTIONS).astype(bool)
    actor, meta, fig = distill_targets(data["obs"], legal, data["target"], a.net, cfg, held,
                                       lambda line: print(line, flush=True))
    figs = {"rows": len(held), "targets": int((data["target"] >= 0).sum()),
            "held_rows": int(held.sum()), "before": fig["before"],
            "epochs": [{"epoch": r["epoch"], "holdout": r["holdout"]} for r in fig["epochs"]]}
    save_distilled(actor, meta, stage / "model.npz",
                   {"algorithm": "override_table distillation (try 10)", "init": a.net,
                    "formats": sorted(tables), "pairs": [len(t) for t in tables.values()],
                    "weighting": a.weighting, "z": a.z, "threshold": a.threshold,
                    "record_deals": a.record_deals, "record_seed": a.record_seed})
    write_json(stage / "distill.json", {"args": vars(a), "figures": figs,
                                         "tables": {f: sorted(map(list, t)) for f, t
                                                    in tables.items()}})
    return figs


TABLE_KEYS = ("candidates", "gains", "se", "legal", "searched", "net_move", "deal")
DEAL_SPAN = 10**9                    # pooled folders' deals: folder i's deal d is i * span + d


def pooled(labs: list) -> dict:
    """The table's fields of several labels folders' arrays, one after another; each folder's
    deals offset by DEAL_SPAN x its place, so deals of different folders (other seeds, the
    same numbers) are different units of the deal-clustered error."""
    if len(labs) == 1:
        return labs[0]
    K = max(lab["candidates"].shape[1] for lab in labs)
    out = {}
    for k in TABLE_KEYS:
        parts = []
        for i, lab in enumerate(labs):
            x = lab[k]
            if k in ("candidates", "gains", "se") and x.shape[1] < K:
                fill = -1 if k == "candidates" else 0.0
                x = np.pad(x, ((0, 0), (0, K - x.shape[1])), constant_values=fill)
            parts.append(x.astype(np.int64) + i * DEAL_SPAN if k == "deal" else x)
        out[k] = np.concatenate(parts)
    return out


def table_of(a, fmt: str) -> dict:
    from agents.training.labels import read_labels
    folders = a.labels if a.labels and fmt == a.format else [LABELS[fmt]]
    lab = pooled([read_labels(f)[1] for f in folders])
    return pair_table(lab, a.weighting, a.z, a.threshold, a.min_count, a.s0)


def main(argv=None) -> int:
    a = parser().parse_args(argv)
    if a.distill:
        from pathlib import Path

        from agents.arena.outdir import run_folder
        from nertz_env.optional import require
        from train.common import exit_status
        try:
            with run_folder(Path(a.distill), option="--distill") as stage:   # a used OUT: refused
                require("torch", "train", PROG)                           # then before any work
                distill_config(a)
                tables = {f: table_of(a, f) for f in a.distill_formats.split(",") if f}
                tables.update({f: {} for f in a.anchor_formats.split(",") if f})
                distill_override(a, tables, Path(stage))
        except (ValueError, OSError, KeyboardInterrupt) as err:
            return exit_status(err, PROG, "nothing written: OUT is written whole or not at all")
        return 0
    from train.common import exit_status
    try:
        from agents.registry import make_agent
        make_agent(a.baseline)                   # a bad --baseline: one line, before work
        table = table_of(a, a.format)
    except (ValueError, OSError, KeyboardInterrupt) as err:
        return exit_status(err, PROG, "nothing played")
    print(f"{len(table)} pairs kept (candidate, net move: mean gain): "
          + ", ".join(f"{c},{b}: {v:+.2f}" for (c, b), v in sorted(table.items())), flush=True)
    agent = override_agent(a.net, table)
    for name, x, lo, hi in judge(agent, a.format, a.deals, a.seed, a.baseline):
        print(f"{a.format} {name}: override minus {a.baseline} {x:+.3f} [{lo:+.3f}, {hi:+.3f}] "
              f"points per hand, {a.deals} deals, seed {a.seed}")
    print(f"the override played another move at {agent.fires:,} of {agent.decisions:,} "
          f"decisions ({100 * agent.fires / max(agent.decisions, 1):.2f}%)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
