"""Distillation for expert iteration: the lean policy network, warm-started
from a safe-format model, supervised on search's labels (agents/training/labels.py).

The loss, per mini-batch of labelled rows (every row: a position the net visited where its
constrained mask left two or more moves):
- *search's move where it deviates with evidence* (`targets`): on a searched row, the best
  candidate the net may play (its constrained mask) gains more than the net's own move by
  more than `margin` and more than `z` standard errors of that difference; the target is
  that candidate (cross-entropy). The difference's standard error: where either move is the
  base move, the paired one search measured; otherwise sqrt(se_a^2 + se_b^2) (the two gains'
  errors as if independent: common random numbers make the true one smaller, so the rule is
  cautious). A row where the net's move is not a candidate (Wait where the base does not
  wait) has no target.
- *keep what PPO learned* elsewhere: on every row without a target, `kl` x KL(anchor || net)
  over the legal moves, the anchor the frozen starting network (not on target rows, where it
  would pull against search's move).
Loss = (sum of the targets' cross-entropies + kl x sum of the other rows' KL) / batch rows.
mode="soft" (`tilts`) moves every searched row only as far as its evidence goes instead:
the target is the start's policy times exp(beta x the gain over the net's move, shrunk by z
standard errors), over the legal moves, and the loss KL(target || net) (kl x on rows with no
tilt, where the target is the start itself).
mode="gains" (`gains`) regresses instead of classifying: on a searched row, for each candidate
the net may play, the change r of its log-probability ratio to the net's own move (net minus
frozen start) is fitted to kappa x its measured gain d over the net's move, by weighted least
squares, w (r - kappa d)^2 with w = 1 / (se^2 + s0^2) (se: that difference's standard error,
`_evidence`; s0 > 0 the floor: no candidate weighs more than 1 / s0^2), plus a ridge
r^2 / tau^2 toward the start: a row alone settles at r = kappa d tau^2 / (tau^2 + se^2 +
s0^2) (kappa x the gain's posterior mean under a N(0, tau^2) prior), and the net averages
rows over similar positions by their weights. So the policy moves toward a candidate in
proportion to its gain and its evidence, not where se is huge. These rows keep the start's
probabilities of the legal moves that are not candidates and of the candidates together (kl
x the KL of that coarser split); rows with no regression, kl x the full KL.

The network is the shipped `learned`'s architecture (agents/learned/weights.py: Linear+Tanh
layers, a masked action head), so the result is written in the safe format (`ppo:NAME.npz`
plays it, under the constraint of the model it started from). Rows of deals with deal % 10 ==
0 are held out (`holdout`): before/after figures of agreement with the targets and of the KL
elsewhere, and `gain_figures` (how often the most probable move became another candidate,
and search's measured gain of it); an epoch's `ce_per_row` is the regression's sum per row
in mode "gains". The network reads the observation of its model (v0, or v1: a widened or v1 model,
agents/learned/v1.py) and the labels must hold that observation's rows (labels.py
OBSERVATIONS: a v1 net labels v1 rows), else one line refuses before training.
Deterministic: one torch thread, mini-batches drawn from a generator seeded with `seed`; same
labels, same seed, same weights. `distill_targets` is the training loop itself, for any rows
with a move to learn or none (-1: the KL alone), not only search's: train/override_table.py's.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from agents.learned.weights import load_weights, save_weights
from nertz_env.actions import N_ACTIONS
from nertz_env.core.observe import OBS_DIM
from nertz_env.core.observe_memory import V1_OBS_DIM
from nertz_env.optional import require

from .lean_policy import masked_logp, policy_arrays

torch = require("torch", "train", "distillation from search labels")


class DistillConfig(NamedTuple):
    epochs: int = 4
    batch: int = 1024
    lr: float = 1e-4
    kl: float = 1.0          # weight of KL(anchor || net) on every row
    z: float = 1.0           # evidence: the gain over the net's move > z standard errors
    margin: float = 0.0      # ... and > margin points
    seed: int = 0
    mode: str = "hard"       # hard: search's move as the target; soft: the start tilted
    beta: float = 2.0        # soft: the tilt per point of evidence
    kappa: float = 0.5       # gains: the log-odds change per point of gain
    s0: float = 1.0          # gains: the weights' floor, 1 / (se^2 + s0^2)
    tau: float = 2.0         # gains: the prior's sd of a gain (points): the ridge 1 / tau^2

    def check(self) -> "DistillConfig":
        for name in ("epochs", "batch"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"distill {name}={v!r} must be an int >= 1")
        for name in ("lr", "kl", "z", "margin"):
            v = getattr(self, name)
            if not isinstance(v, (int, float)) or not np.isfinite(v) or v < 0 \
                    or (name == "lr" and v == 0):
                raise ValueError(f"distill {name}={v!r} must be a finite number "
                                 f"{'> 0' if name == 'lr' else '>= 0'}")
        if self.mode not in ("hard", "soft", "gains"):
            raise ValueError(f"distill mode={self.mode!r} must be hard, soft or gains")
        for name in ("beta", "kappa", "s0", "tau"):
            v, pos = getattr(self, name), name in ("s0", "tau")
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not np.isfinite(v) \
                    or v < 0 or (pos and v == 0):
                raise ValueError(f"distill {name}={v!r} must be a finite number "
                                 f"{'> 0' if pos else '>= 0'}")
        return self


def _evidence(labels: dict, z: float):
    """(candidates int64 [n, K], legal-for-the-net ok [n, K], gain over the net's move
    [n, K], its standard error [n, K], the net's move found among the candidates [n])."""
    cand = labels["candidates"].astype(np.int64)
    n, K = cand.shape
    legal = np.unpackbits(labels["legal"], axis=1, count=N_ACTIONS).astype(bool)
    ok = (cand >= 0) & legal[np.arange(n)[:, None], np.maximum(cand, 0)] \
        & labels["searched"][:, None]
    at = cand == labels["net_move"].astype(np.int64)[:, None]
    has = at.any(axis=1) & ok.any(axis=1)
    j = at.argmax(axis=1)
    r = np.arange(n)
    g, se = labels["gains"].astype(np.float64), labels["se"].astype(np.float64)
    diff = g - np.where(has, g[r, j], 0.0)[:, None]
    col = np.arange(K)[None, :]
    se_d = np.where(col == 0, se[r, j][:, None], np.where((j == 0)[:, None], se,
                                                           np.hypot(se, se[r, j][:, None])))
    return cand, ok & has[:, None], diff, se_d, has


def tilts(labels: dict, beta: float = 2.0, z: float = 1.0) -> tuple:
    """Soft targets: (moves int64 [n, K], tilt float32 [n, K]): per candidate the net may
    play, beta x its gain over the net's move shrunk toward 0 by z standard errors
    (sign(d) max(0, |d| - z se)); 0 elsewhere. The target is the start's policy times
    exp(tilt), normalised over the legal moves: it moves only as far as the evidence goes."""
    cand, ok, diff, se_d, _ = _evidence(labels, z)
    shrunk = np.sign(diff) * np.maximum(0.0, np.abs(diff) - z * np.nan_to_num(se_d, nan=np.inf,
                                                                                posinf=np.inf))
    tilt = np.where(ok, beta * shrunk, 0.0)
    return np.where(ok, cand, 0), np.nan_to_num(tilt).astype(np.float32)


def gains(labels: dict, s0: float = 1.0) -> tuple:
    """The regression's data (mode="gains"): (moves int64 [n, K]: the candidates the net may
    play, 0 elsewhere; at int64 [n]: the column of the net's move; diff float32 [n, K]: each
    one's measured gain over the net's move; weight float32 [n, K]: 1 / (se^2 + s0^2) of that
    difference, 0 at the net's own move, where the net may not play it, where the net's move
    is no candidate, and where se is not finite)."""
    cand, ok, diff, se_d, _ = _evidence(labels, 1.0)
    at = (cand == labels["net_move"].astype(np.int64)[:, None]).argmax(axis=1)
    col = np.arange(cand.shape[1])[None, :]
    se = np.nan_to_num(se_d, nan=np.inf)
    with np.errstate(over="ignore"):
        w = np.where(ok & (col != at[:, None]) & np.isfinite(se), 1.0 / (se * se + s0 * s0), 0.0)
    return (np.where(ok, cand, 0), at, np.where(w > 0, diff, 0.0).astype(np.float32),
            w.astype(np.float32))


ALIGN = ("deal", "seating", "seat", "tick", "net_move")


def targets(labels: dict, z: float = 1.0, margin: float = 0.0, confirm=None) -> np.ndarray:
    """int64 [n]: per row the move search's evidence pushes the net toward, -1 where none
    (module docstring). confirm: labels of the same positions by a search with other worlds
    (another seed): a target is kept only where that search's rule picks it too (SPARTA's
    re-estimate against the winner's curse)."""
    if confirm is not None:
        if any(not np.array_equal(labels[k], confirm[k]) for k in ALIGN):
            raise ValueError("confirming labels must be of the same positions (deal, seating, "
                             "seat, tick and the net's move row for row): the same net, "
                             "deals and seed, another search seed")
        mine, theirs = targets(labels, z, margin), targets(confirm, z, margin)
        return np.where(mine == theirs, mine, -1)
    cand = labels["candidates"].astype(np.int64)
    n, K = cand.shape
    legal = np.unpackbits(labels["legal"], axis=1, count=N_ACTIONS).astype(bool)
    rows = np.arange(n)[:, None]
    ok = (cand >= 0) & legal[rows, np.maximum(cand, 0)] & labels["searched"][:, None]
    gain = np.where(ok, labels["gains"].astype(np.float64), -np.inf)
    best = gain.argmax(axis=1)
    net = labels["net_move"].astype(np.int64)
    at = cand == net[:, None]
    has = at.any(axis=1) & ok.any(axis=1)
    j = at.argmax(axis=1)
    r = np.arange(n)
    diff = gain[r, best] - np.where(has, labels["gains"][r, j], 0.0)
    se_b, se_n = labels["se"][r, best].astype(np.float64), labels["se"][r, j].astype(np.float64)
    se = np.where(best == 0, se_n, np.where(j == 0, se_b, np.hypot(se_b, se_n)))
    with np.errstate(invalid="ignore"):            # z = inf with se = 0: no evidence
        push = has & (best != j) & (diff > margin) & (diff > z * se)
    return np.where(push, cand[r, best], -1)


def load_actor(path):
    """(the actor: torch Linear+Tanh layers and the head, the model's meta) of a safe-format
    model; ValueError unless it is a tanh MLP with a masked head of this game's sizes (its
    input v0's OBS_DIM or v1's V1_OBS_DIM floats)."""
    meta, arrays = load_weights(path)
    arch = meta["architecture"]
    if arch["activation"] != "tanh" or arch["action_net"] != "masked" \
            or meta["observation_size"] not in (OBS_DIM, V1_OBS_DIM) \
            or meta["action_size"] != N_ACTIONS:
        raise ValueError(f"init {str(path)!r}: distillation takes a tanh MLP with a masked "
                         f"head over {OBS_DIM} (v0) or {V1_OBS_DIM} (v1) observations and "
                         f"{N_ACTIONS} moves (learned's)")
    sizes = [meta["observation_size"], *arch["hidden"]]
    layers = []
    for i, (a, b) in enumerate(zip(sizes, sizes[1:])):
        layers += [_linear(arrays[f"hidden{i}_weight"], arrays[f"hidden{i}_bias"]),
                   torch.nn.Tanh()]
    layers.append(_linear(arrays["action_weight"], arrays["action_bias"]))
    return torch.nn.Sequential(*layers), meta


def _linear(w, b):
    m = torch.nn.Linear(w.shape[1], w.shape[0])
    with torch.no_grad():
        m.weight.copy_(torch.from_numpy(np.asarray(w, np.float32)))
        m.bias.copy_(torch.from_numpy(np.asarray(b, np.float32)))
    return m


def _soft_loss(actor, anchor, obs, legal, moves, tilt, kl: float):
    """(the batch's loss, the tilted rows' KL(target || net) sum, the other rows' sum)."""
    logp = masked_logp(actor, obs, legal)
    with torch.no_grad():
        logp0 = masked_logp(anchor, obs, legal)
        boost = torch.zeros_like(logp0).scatter_add_(1, moves, tilt)
        t = torch.log_softmax((logp0 + boost).masked_fill(~legal, -1e8), dim=1)
    kls = torch.where(legal, t.exp() * (t - logp), torch.zeros_like(logp)).sum(dim=1)
    tilted = (tilt != 0).any(dim=1)
    a, b = kls[tilted].sum(), kls[~tilted].sum()
    return (a + kl * b) / len(obs), float(a.detach()), float(b.detach())


def _gains_loss(actor, anchor, obs, legal, moves, at, diff, weight, kappa: float, kl: float,
                tau: float = np.inf):
    """(the batch's loss, the regression's sum: weighted squared residuals and the ridge, the
    KL sum): mode="gains" (module docstring); moves/at/diff/weight: `gains`' rows."""
    logp = masked_logp(actor, obs, legal)
    with torch.no_grad():
        logp0 = masked_logp(anchor, obs, legal)
    change = (logp - logp0).gather(1, moves)
    rel = change - change.gather(1, at[:, None])          # the ratio to the net's move
    reg = (weight * (rel - kappa * diff) ** 2 + (weight > 0) * rel ** 2 / tau ** 2).sum(dim=1)
    fitted = (weight > 0).any(dim=1)
    incand = torch.zeros_like(logp).scatter_add_(1, moves, (weight > 0).to(logp.dtype))
    incand = (incand.scatter_(1, at[:, None], 1.0) > 0) & fitted[:, None]   # else the full KL
    p0 = logp0.exp()
    rest = torch.where(legal & ~incand, p0 * (logp0 - logp), torch.zeros_like(logp)).sum(dim=1)
    neg = torch.full_like(logp, -1e30)
    c0 = torch.logsumexp(torch.where(incand, logp0, neg), dim=1)
    c = torch.logsumexp(torch.where(incand, logp, neg), dim=1)
    kls = rest + torch.where(fitted, c0.exp() * (c0 - c), torch.zeros_like(c))
    a, b = reg.sum(), kls.sum()
    return (a + kl * b) / len(obs), float(a.detach()), float(b.detach())


def gain_figures(actor, obs, legal, moves, at, diff, weight) -> dict:
    """On rows with a regression (`gains`' rows): the share whose most probable move is
    another candidate than the net's labelled move, the mean measured gain of the most probable
    move over the net's (0 where it is the net's move), and the share whose most probable move
    is no candidate (its gain unknown, left out of the mean)."""
    with torch.no_grad():
        top = actor(obs).masked_fill(~legal, -1e8).argmax(dim=1)
    fitted = (weight > 0).any(dim=1)
    if not bool(fitted.any()):
        return {"gain_rows": 0}
    other = (moves == top[:, None]) & (weight > 0)
    own = moves.gather(1, at[:, None])[:, 0] == top
    known = fitted & (own | other.any(dim=1))
    g = torch.where(other, diff, torch.zeros_like(diff)).sum(dim=1)
    n = float(fitted.sum())
    return {"gain_rows": int(n),
            "top_other_candidate": float((fitted & other.any(dim=1)).sum()) / n,
            "top_not_candidate": float((fitted & ~known).sum()) / n,
            "mean_gain_of_top": float(g[known].mean()) if bool(known.any()) else 0.0}


def _loss(actor, anchor, obs, legal, target, kl: float):
    """(the batch's loss, its cross-entropy sum, its KL sum)."""
    logp = masked_logp(actor, obs, legal)
    with torch.no_grad():
        logp0 = masked_logp(anchor, obs, legal)
    p0 = logp0.exp()
    kls = torch.where(legal, p0 * (logp0 - logp), torch.zeros_like(logp)).sum(dim=1)
    has = target >= 0
    ce = -logp[has, target[has]].sum() if bool(has.any()) else logp.sum() * 0.0
    kls = kls[~has].sum()                  # elsewhere only: never against a target
    return (ce + kl * kls) / len(obs), float(ce.detach()), float(kls.detach())


def measure(actor, anchor, obs, legal, target) -> dict:
    """Agreement with the targets (the net's most probable legal move), the mean probability
    of the target, and, on rows without one, the mean KL to the anchor and the share of rows
    whose most probable move changed."""
    with torch.no_grad():
        logp, logp0 = masked_logp(actor, obs, legal), masked_logp(anchor, obs, legal)
    has = target >= 0
    top, top0 = logp.argmax(dim=1), logp0.argmax(dim=1)
    p0 = logp0.exp()
    kls = torch.where(legal, p0 * (logp0 - logp), torch.zeros_like(logp)).sum(dim=1)
    out = {"rows": int(len(obs)), "targets": int(has.sum())}
    if bool(has.any()):
        out["target_agreement"] = float((top[has] == target[has]).float().mean())
        out["target_prob"] = float(logp[has, target[has]].exp().mean())
    rest = ~has
    if bool(rest.any()):
        out["kl_elsewhere"] = float(kls[rest].mean())
        out["changed_elsewhere"] = float((top[rest] != top0[rest]).float().mean())
    return out


def distill_targets(obs, legal, target, init, cfg: DistillConfig = DistillConfig(), held=None,
                    log=None, *, loss=None, extra=None) -> tuple:
    """(the trained actor, its starting meta, figures): the training loop of every
    distillation here (distill's modes, train/override_table.py's override). From the model
    at `init`, `cfg.epochs` passes over the rows not `held`, in mini-batches of `cfg.batch`
    rows in an order drawn from a generator seeded with `cfg.seed`, Adam at `cfg.lr`, of the
    hard-target loss: cross-entropy toward `target` on the rows where it is a move, `cfg.kl` x
    KL(the frozen start || net) over the legal moves on the rows where it is -1 (the anchor
    rows), both summed, divided by the batch's rows.
    obs float32 [n, the model's observation size]; legal bool [n, N_ACTIONS]; target int [n]:
    a legal move of the row or -1; held bool [n] (None: no row): kept out of training, the
    figures' rows (`measure` before and after every epoch, with `extra`'s). Figures:
    train_rows, train_targets, before, epochs (epoch, ce_per_row, kl_per_row, holdout), after.
    loss, extra: distill's other modes: loss(actor, anchor, obs, legal, rows) -> (the batch's
    loss, its first sum, its KL sum) in place of the hard-target loss; extra(actor, obs, legal,
    held) -> more held-out figures."""
    cfg = cfg.check()
    obs = np.asarray(obs)
    n = len(obs)
    target = np.asarray(target).astype(np.int64)
    legal = np.asarray(legal, bool)
    held = np.zeros(n, bool) if held is None else np.asarray(held, bool)
    if legal.shape != (n, N_ACTIONS) or target.shape != (n,) or held.shape != (n,):
        raise ValueError(f"distill rows: obs {obs.shape}, legal {legal.shape}, target "
                         f"{target.shape}, held {held.shape}: one row each, legal of "
                         f"{N_ACTIONS} moves")
    has = target >= 0
    if (target < -1).any() or (target >= N_ACTIONS).any() \
            or not legal[np.flatnonzero(has), target[has]].all():
        raise ValueError(f"distill target: every row's a legal move (0 to {N_ACTIONS - 1}) "
                         f"or -1 (no target: the KL to the start only)")
    actor, meta = load_actor(init)
    if obs.shape[1:] != (meta["observation_size"],):
        raise ValueError(f"labels hold observations of {obs.shape[1] if obs.ndim == 2 else '?'} "
                         f"floats, init {str(init)!r} reads {meta['observation_size']} (v0: "
                         f"{OBS_DIM}, v1: {V1_OBS_DIM}): label with the net being distilled")
    anchor, _ = load_actor(init)
    for p in anchor.parameters():
        p.requires_grad_(False)
    obs = torch.from_numpy(np.ascontiguousarray(obs, np.float32))
    legal, target = torch.from_numpy(legal), torch.from_numpy(target)
    held = torch.from_numpy(held)
    train_rows = np.flatnonzero(~held.numpy())

    def ev():
        o, m = obs[held], legal[held]
        return {**measure(actor, anchor, o, m, target[held]),
                **(extra(actor, o, m, held) if extra else {})}
    figures = {"train_rows": int(train_rows.size), "train_targets":
               int((target.numpy()[train_rows] >= 0).sum()), "before": ev(), "epochs": []}
    opt = torch.optim.Adam(actor.parameters(), lr=cfg.lr)
    rng = np.random.default_rng(cfg.seed)
    for epoch in range(cfg.epochs):
        order = train_rows[rng.permutation(train_rows.size)]
        ce_sum = kl_sum = 0.0
        for lo in range(0, order.size, cfg.batch):
            idx = torch.from_numpy(order[lo:lo + cfg.batch])
            if loss is None:
                batch, ce, kl = _loss(actor, anchor, obs[idx], legal[idx], target[idx], cfg.kl)
            else:
                batch, ce, kl = loss(actor, anchor, obs[idx], legal[idx], idx)
            opt.zero_grad()
            batch.backward()
            opt.step()
            ce_sum, kl_sum = ce_sum + ce, kl_sum + kl
        row = {"epoch": epoch + 1, "ce_per_row": ce_sum / max(order.size, 1),
               "kl_per_row": kl_sum / max(order.size, 1), "holdout": ev()}
        figures["epochs"].append(row)
        if log:
            log(f"distill epoch {epoch + 1}: {row}")
    figures["after"] = figures["epochs"][-1]["holdout"] if figures["epochs"] else ev()
    return actor, meta, figures


def distill(labels: dict, init, cfg: DistillConfig = DistillConfig(), log=None,
            confirm=None) -> tuple:
    """(the trained actor, its starting meta, figures): `cfg.epochs` passes over the labels'
    training rows from the model at `init` (module docstring; `distill_targets` the loop);
    confirm: `targets`'."""
    cfg = cfg.check()
    target = targets(labels, cfg.z, cfg.margin, confirm)
    moves, tilt = (torch.from_numpy(a) for a in tilts(labels, cfg.beta, cfg.z))
    gm, at, diff, weight = (torch.from_numpy(a) for a in gains(labels, cfg.s0))

    def soft(actor, anchor, obs, legal, rows):
        return _soft_loss(actor, anchor, obs, legal, moves[rows], tilt[rows], cfg.kl)

    def regress(actor, anchor, obs, legal, rows):
        return _gains_loss(actor, anchor, obs, legal, gm[rows], at[rows], diff[rows],
                           weight[rows], cfg.kappa, cfg.kl, cfg.tau)

    def extra(actor, obs, legal, held):
        return gain_figures(actor, obs, legal, gm[held], at[held], diff[held], weight[held])
    legal = np.unpackbits(labels["legal"], axis=1, count=N_ACTIONS).astype(bool)
    return distill_targets(labels["obs"], legal, target, init, cfg, labels["deal"] % 10 == 0,
                           log, loss={"soft": soft, "gains": regress}.get(cfg.mode),
                           extra=extra)


def save_distilled(actor, start_meta: dict, path, provenance: dict):
    """The actor in the safe format at path (NAME.npz + NAME.json), under the constraint of
    the model it started from; returns the .npz's path."""
    from pathlib import Path
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    hidden = start_meta["architecture"]["hidden"]
    meta, arrays = policy_arrays(actor, hidden, start_meta["observation_size"], N_ACTIONS,
                                 provenance, None, None)
    if start_meta.get("constraint"):
        meta["constraint"] = start_meta["constraint"]
    return save_weights(path, meta, arrays)[0]
