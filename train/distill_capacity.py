"""Expert iteration, try 9 (docs/experiments/expert_iteration.md, "Try 9: capacity"): can a
wider or deeper network, trained from scratch, predict search's gains on deals it did not
train on better than the warm-started 128x128 net (held-out correlation 0.14-0.18)?

Offline only: no games. The labels are expert_iteration's (agents/training/labels.py), the
loss is distill's mode "gains" (agents/training/distill.py `_gains_loss`: every searched
candidate's log-odds change against the net's move regressed onto kappa x its gain, weight
1 / (se^2 + s0^2), the ridge 1 / tau^2, kl x the KL to the start elsewhere). The network is a
*residual* on the frozen start: logits = start(obs) + fresh(obs), `fresh` a tanh MLP of the
given widths, orthogonal init, its last layer zero (so it starts as the start's policy) and
nothing of it warm-started. The fitted log-odds change is then exactly fresh's, the
quantity the write-up's "fit" measured for the warm-started nets. `--evaluate MODEL`
measures an existing distilled model (e.g. runs/expit8/g7/model.npz) the same way.

Split by deal, never by row: rows of deals with deal % 10 == 0 are held out (distill's
`holdout`; the 2-team and 4-team labels' deal numbers name the same deals of one seed).
Figures per epoch, on the held-out rows (`corr_2t` on the 2-team ones, the write-up's "fit"):
the correlation of the fitted change r with kappa x d over candidate pairs with weight > 0
(unweighted, as /tmp/h3/check.py computed it), its weighted R^2; the same on a fixed sample
of training rows; search agreement (the net's most probable move equals search's move, on
searched rows where search's move differs from the net's labelled move); distill's `measure`
(z = 1 targets) and `gain_figures`. Deterministic: seeded torch and numpy, --threads torch
threads (default 2). A two-layer fresh net is saved as one safe-format model (--save: the
start's and fresh's layers side by side, block-diagonal, the heads summed: the same logits).
--net-move-input is a diagnostic of inputs: the fresh net also reads a one-hot of the net's
labelled move (the start's own choice); such a net is not a playable model.

  nice python -m train.distill_capacity --hidden 512,512 --epochs 10 --out runs/distill9/w512x2
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

PROG = "python -m train.distill_capacity"
LABELS = ("runs/expit7/gen1/labels/2teams", "runs/expit7/gen1/labels/4teams")
START = "runs/expit7/gen0/model.npz"


def parser():
    p = argparse.ArgumentParser(prog=PROG, description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--labels", action="append", help="a labels folder (repeat; default: "
                   f"{', '.join(LABELS)})")
    p.add_argument("--start", default=START, help="the frozen start (the residual's base, "
                   "the KL's anchor, the change's reference); default %(default)s")
    p.add_argument("--hidden", default="512,512", help="fresh net widths, comma separated")
    p.add_argument("--evaluate", default="", help="measure this model instead of training")
    p.add_argument("--epochs", type=int, default=10)
    p.add_argument("--batch", type=int, default=1024)
    p.add_argument("--lr", type=float, default=1e-3)
    p.add_argument("--kappa", type=float, default=4.0)
    p.add_argument("--tau", type=float, default=2.0)
    p.add_argument("--s0", type=float, default=0.5)
    p.add_argument("--kl", type=float, default=1.0)
    p.add_argument("--weight-decay", type=float, default=0.0, help="AdamW decay")
    p.add_argument("--train-share", type=int, default=9, help="train on the deals with deal "
                   "%% 10 in 1..N only (a learning curve; default all 9 tenths)")
    p.add_argument("--seed", type=int, default=9)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--save", action="store_true", help="save the model (two-layer nets)")
    p.add_argument("--net-move-input", action="store_true", help="a diagnostic of inputs: the "
                   "fresh net also reads a one-hot of the net's labelled move (the start's "
                   "own choice; not a playable model)")
    p.add_argument("--out", required=True, help="a new or empty folder for results.json")
    return p


def check(a):
    try:
        hidden = [int(x) for x in a.hidden.split(",")]
    except ValueError:
        hidden = []
    if not hidden or min(hidden) < 1 or len(hidden) > 4:
        raise ValueError(f"--hidden {a.hidden!r} must be 1-4 comma-separated widths >= 1")
    if not 1 <= a.train_share <= 9:
        raise ValueError(f"--train-share {a.train_share} must be 1..9")
    for name in ("epochs", "batch", "threads"):
        if getattr(a, name) < 1:
            raise ValueError(f"--{name} {getattr(a, name)} must be >= 1")
    for name in ("lr", "tau", "s0"):
        if not getattr(a, name) > 0:
            raise ValueError(f"--{name} {getattr(a, name)} must be > 0")
    for name in ("kappa", "kl", "weight_decay"):
        if not getattr(a, name) >= 0:
            raise ValueError(f"--{name.replace('_', '-')} {getattr(a, name)} must be >= 0")
    if a.save and (a.evaluate or len(hidden) != 2 or a.net_move_input):
        raise ValueError("--save takes a two-layer --hidden, no --evaluate, no --net-move-input")
    for f in [*(a.labels or LABELS), a.start, *([a.evaluate] if a.evaluate else [])]:
        if not Path(f).exists():
            raise ValueError(f"{f!r} does not exist")
    out = Path(a.out)
    if out.exists() and (not out.is_dir() or any(out.iterdir())):
        raise ValueError(f"--out {a.out!r} must be new or an empty folder")
    return hidden


def load(folders):
    """(labels merged, is-2-team row mask, the folders' infos)."""
    from agents.training.labels import merge_labels, read_labels
    parts = [read_labels(f) for f in folders]
    lab, infos = merge_labels(parts)
    two = np.concatenate([np.full(len(p["net_move"]), i["formats"] == ["2teams"])
                          for i, p in parts])
    return lab, two, infos


class Data:
    def __init__(self, lab, two, a):
        import torch
        from agents.training.distill import gains, targets
        from nertz_env.actions import N_ACTIONS
        self.obs = torch.from_numpy(np.ascontiguousarray(lab["obs"], np.float32))
        if a.net_move_input:                   # the fresh net's extra input (the anchor slices)
            hot = torch.zeros((len(self.obs), N_ACTIONS))
            hot[torch.arange(len(self.obs)), torch.from_numpy(lab["net_move"].astype(np.int64))] = 1
            self.obs = torch.cat([self.obs, hot], dim=1)
        self.legal = torch.from_numpy(np.unpackbits(lab["legal"], axis=1, count=N_ACTIONS)
                                      .astype(bool))
        self.gm, self.at, self.diff, self.w = (torch.from_numpy(x) for x in gains(lab, a.s0))
        self.target = torch.from_numpy(targets(lab, 1.0, 0.0))
        self.search = torch.from_numpy(lab["search_move"].astype(np.int64))
        self.net = torch.from_numpy(lab["net_move"].astype(np.int64))
        self.dev = torch.from_numpy(lab["searched"] & (lab["search_move"] != lab["net_move"]))
        self.held = lab["deal"] % 10 == 0
        self.two = two
        train = np.flatnonzero(~self.held & (lab["deal"] % 10 <= a.train_share))
        self.train = train
        self.train_probe = np.sort(np.random.default_rng(0).choice(train, min(50_000, train.size),
                                                                  replace=False))


def logits(actor, obs, step=16384):
    import torch
    with torch.no_grad():
        return torch.cat([actor(obs[i:i + step]) for i in range(0, len(obs), step)])


def figures(actor, anchor, d: Data, rows, kappa) -> dict:
    """The held-out (or training-sample) figures of the module docstring on `rows`."""
    import torch
    from agents.training.distill import gain_figures, measure
    idx = torch.from_numpy(rows)
    obs, legal = d.obs[idx], d.legal[idx]
    logp = torch.log_softmax(logits(actor, obs).masked_fill(~legal, -1e8), dim=1)
    logp0 = torch.log_softmax(logits(anchor, obs).masked_fill(~legal, -1e8), dim=1)
    gm, at, diff, w = d.gm[idx], d.at[idx], d.diff[idx], d.w[idx]
    ch = (logp - logp0).gather(1, gm)
    rel = ch - ch.gather(1, at[:, None])
    out = {"rows": int(rows.size)}
    two = torch.from_numpy(d.two[rows])
    for name, sel in (("2t", two), ("all", torch.ones_like(two))):
        m = (w > 0) & sel[:, None]
        x, y, ww = rel[m].double().numpy(), kappa * diff[m].double().numpy(), w[m].double().numpy()
        out[f"pairs_{name}"] = int(m.sum())
        out[f"corr_{name}"] = float(np.corrcoef(x, y)[0, 1]) if x.size > 2 and x.std() > 0 \
            else 0.0
        out[f"r2w_{name}"] = float(1 - (ww * (x - y) ** 2).sum() / (ww * y ** 2).sum()) \
            if x.size else 0.0
    top = logp.argmax(dim=1)
    dev = d.dev[idx]
    out["search_agreement_dev"] = float((top[dev] == d.search[idx][dev]).float().mean())
    out["dev_rows"] = int(dev.sum())
    searched = (w > 0).any(dim=1)
    out["search_agreement_searched"] = float((top[searched] == d.search[idx][searched])
                                             .float().mean())
    # distill's own figures (the z = 1 targets' agreement, moves and their gain)
    out.update(measure(_Fixed(logp), _Fixed(logp0), obs, legal, d.target[idx]))
    out.update(gain_figures(_Fixed(logp), obs, legal, gm, at, diff, w))
    return out


class _Fixed:
    """Precomputed log-probabilities standing in for an actor (its logits give the same
    masked log-softmax and argmax)."""
    def __init__(self, logp):
        self.logp = logp

    def __call__(self, obs):
        return self.logp


def fresh_net(sizes, out, seed):
    import torch
    from agents.training.lean_policy import _mlp
    torch.manual_seed(seed)
    net = _mlp(torch.nn, sizes, out, 1.0)
    torch.nn.init.zeros_(net[-1].weight)
    torch.nn.init.zeros_(net[-1].bias)
    return net


def sliced(anchor, width: int):
    """The anchor reading the first `width` floats of a row (--net-move-input's rows)."""
    import torch

    class Sliced(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = anchor

        def forward(self, x):
            return self.inner(x[:, :width])
    return Sliced()


def residual(anchor, fresh):
    import torch

    class Residual(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fresh = fresh
            self.anchor = anchor

        def forward(self, x):
            return self.anchor(x) + self.fresh(x)
    return Residual()


def merged_sequential(anchor, fresh):
    """One Linear+Tanh MLP with the same logits as anchor(x) + fresh(x) (both two-layer)."""
    import torch
    la = [m for m in anchor if isinstance(m, torch.nn.Linear)]
    lf = [m for m in fresh if isinstance(m, torch.nn.Linear)]
    w0 = torch.cat([la[0].weight, lf[0].weight]), torch.cat([la[0].bias, lf[0].bias])
    w1 = torch.block_diag(la[1].weight, lf[1].weight), torch.cat([la[1].bias, lf[1].bias])
    w2 = torch.cat([la[2].weight, lf[2].weight], dim=1), la[2].bias + lf[2].bias
    layers = []
    for i, (w, b) in enumerate((w0, w1, w2)):
        m = torch.nn.Linear(w.shape[1], w.shape[0])
        with torch.no_grad():
            m.weight.copy_(w)
            m.bias.copy_(b)
        layers += [m] + ([torch.nn.Tanh()] if i < 2 else [])
    return torch.nn.Sequential(*layers)


def run(a, hidden, staging, log=print) -> dict:
    import torch
    from agents.training.distill import _gains_loss, load_actor
    torch.set_num_threads(a.threads)
    t0 = time.time()
    lab, two, infos = load(a.labels or LABELS)
    d = Data(lab, two, a)
    del lab
    anchor, meta = load_actor(a.start)
    for p in anchor.parameters():
        p.requires_grad_(False)
    bare = anchor
    if a.net_move_input:
        anchor = sliced(anchor, meta["observation_size"])
    held = np.flatnonzero(d.held)
    rec = {"command": " ".join([PROG, *sys.argv[1:]]), "labels": infos,
           "config": {k: v for k, v in vars(a).items() if k != "out"},
           "train_rows": int(d.train.size), "held_rows": int(held.size), "epochs": []}
    if a.evaluate:
        actor, _ = load_actor(a.evaluate)
        rec["held"] = figures(actor, anchor, d, held, a.kappa)
        rec["train_sample"] = figures(actor, anchor, d, d.train_probe, a.kappa)
        rec["seconds"] = time.time() - t0
        log(json.dumps({"held": rec["held"], "train_sample": rec["train_sample"]}))
        return rec
    fresh = fresh_net([int(d.obs.shape[1]), *hidden], meta["action_size"], a.seed)
    actor = residual(anchor, fresh)
    rec["fresh_parameters"] = int(sum(p.numel() for p in fresh.parameters()))
    opt = torch.optim.AdamW(fresh.parameters(), lr=a.lr, weight_decay=a.weight_decay)
    rng = np.random.default_rng(a.seed)
    for epoch in range(a.epochs):
        t = time.time()
        order = d.train[rng.permutation(d.train.size)]
        reg_sum = kl_sum = 0.0
        for lo in range(0, order.size, a.batch):
            idx = torch.from_numpy(order[lo:lo + a.batch])
            loss, reg, kl = _gains_loss(actor, anchor, d.obs[idx], d.legal[idx], d.gm[idx],
                                        d.at[idx], d.diff[idx], d.w[idx], a.kappa, a.kl, a.tau)
            opt.zero_grad()
            loss.backward()
            opt.step()
            reg_sum, kl_sum = reg_sum + reg, kl_sum + kl
        row = {"epoch": epoch + 1, "reg_per_row": reg_sum / order.size,
               "kl_per_row": kl_sum / order.size, "train_seconds": time.time() - t,
               "held": figures(actor, anchor, d, held, a.kappa),
               "train_sample": figures(actor, anchor, d, d.train_probe, a.kappa)}
        rec["epochs"].append(row)
        h, s = row["held"], row["train_sample"]
        log(f"epoch {epoch + 1} ({row['train_seconds']:.0f} s): held corr_2t "
            f"{h['corr_2t']:.3f} all {h['corr_all']:.3f} | train {s['corr_2t']:.3f} | "
            f"search dev {h['search_agreement_dev']:.3f} target {h.get('target_agreement', 0):.3f}"
            f" changed {h.get('changed_elsewhere', 0):.4f} moves {h.get('top_other_candidate', 0):.4f}"
            f" gain {h.get('mean_gain_of_top', 0):+.3f}")
    if a.save:
        from agents.training.distill import save_distilled
        m = dict(meta, architecture=dict(meta["architecture"],
                                          hidden=[w + meta["architecture"]["hidden"][0]
                                                  for w in hidden]))
        save_distilled(merged_sequential(bare, fresh), m, Path(staging) / "model.npz",
                       {"algorithm": "expert_iteration_capacity", "start": a.start,
                        "labels": [i["formats"] for i in infos], **rec["config"]})
    rec["seconds"] = time.time() - t0
    return rec


def main(argv=None) -> int:
    a = parser().parse_args(argv)
    try:
        hidden = check(a)
    except ValueError as err:
        print(f"{PROG}: error: {err}", file=sys.stderr)
        return 2
    from agents.arena.outdir import run_folder
    from nertz_env.files import write_json
    try:
        with run_folder(a.out, command=PROG) as staging:
            rec = run(a, hidden, staging, log=lambda m: print(m, flush=True))
            write_json(Path(staging) / "results.json", rec)
    except (ValueError, OSError, KeyboardInterrupt) as err:   # 2 bad input, 1 a file, 130
        from train.common import exit_status
        return exit_status(err, PROG, "nothing written: --out is written whole or not at all")
    print(f"wrote {a.out}/results.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
