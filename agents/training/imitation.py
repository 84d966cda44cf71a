"""The imitation warm start (`bc_rows` > 0): behaviour cloning of `teacher` before PPO.

The teacher is a core bot (the default is the strongest shipped heuristic, river-builder).
Its move for the learner seat is computed by the jitted bots (core/policies.py
`policy_actions_range`) on the env's own state (`Teacher`), and the env is stepped with it,
so the data set is produced at the vector env's speed (`collect_teacher_data`). The policy
is trained by cross-entropy on its masked logits (and, `bc_value`, its value head on the
teacher's discounted returns: `behaviour_clone`); the held-out accuracy (tables never
trained on: `split_holdout`) is printed and saved in bc.json (`warm_start`).

The lean PPO's actor and critic are cloned through `LeanPolicy` (the same loss, optimiser
and minibatches); with formats the data comes from every format's tables (`teacher_data`).

Imports config.py and league.py (the env of the run's kind); needs the `[train]` extra: torch
is imported at the top (through nertz_env.optional, whose error names the extra); folder.py's
writer and tqdm inside functions.
"""
from __future__ import annotations

import copy
import sys
import time
from pathlib import Path

import numpy as np

from nertz_env.bot_specs import core_bot
from nertz_env.core.policies import POLICY_EXTERNAL, POLICY_SCORED, policy_actions_range
from nertz_env.optional import require

from .config import TrainConfig
from .league import make_env

torch = require("torch", "train", "the imitation warm start")


class Teacher:
    """The move of a core bot at the learner seat of every table of a NertzVecEnv (or a
    wrapper of one), computed by the jitted bots (core/policies.py) on the env's state."""

    def __init__(self, env, spec: str):
        base = env
        while hasattr(base, "venv"):                 # VecMonitor, LeagueVecEnv: the NertzVecEnv
            base = base.venv
        self.env = base
        self.engine = base.engine
        self.seat = base.learner_seat
        kind, knobs, self.name = core_bot(spec)
        if kind != POLICY_SCORED:
            raise ValueError(f"teacher {spec!r} must be greedy or a heuristic spec")
        self.knobs_row = knobs
        E, S = self.engine.actions.shape
        self.kinds = np.full((E, S), POLICY_EXTERNAL, np.int8)   # only the learner seat is written
        self.kinds[:, self.seat] = kind
        self.knobs = np.zeros((E, S, knobs.shape[0]), np.int64)
        self.knobs[:, self.seat] = knobs
        self.rng = np.zeros(E, np.uint64)
        self.actions = np.zeros((E, S), np.int16)

    def __call__(self) -> np.ndarray:
        """int64 [tables]: the teacher's choice in every table's current position."""
        eng = self.engine
        policy_actions_range(eng.state, eng.params, eng.scratch, eng.masks, self.kinds,
                             self.knobs, self.rng, self.actions, 0, self.actions.shape[0])
        return self.actions[:, self.seat].astype(np.int64)


def collect_teacher_data(env, teacher: Teacher, rows: int, gamma: float = 0.99,
                         bar=None) -> dict:
    """Play the teacher at the learner seat of every table for ceil(rows / tables) steps and
    keep every position: obs float32 [n, OBS], masks bool [n, A], actions int64 [n] (the
    teacher's), returns float32 [n] (discounted rewards to the end of the hand; NaN where
    the hand did not end inside the data), table int64 [n]. Rows are table-major. bar: a
    progress bar, advanced by the positions of every step."""
    E = env.num_envs
    steps = -(-rows // E)
    obs = env.reset()
    O, A = obs.shape[1], env.action_space.n
    X = np.empty((E, steps, O), np.float32)          # table-major: the rows need no copy
    M = np.empty((E, steps, A), bool)
    Y = np.empty((E, steps), np.int64)
    R = np.empty((E, steps), np.float32)
    D = np.empty((E, steps), bool)
    for t in range(steps):
        X[:, t] = obs
        M[:, t] = teacher.env.batch.action_masks()
        Y[:, t] = teacher()
        obs, R[:, t], D[:, t], _ = env.step(Y[:, t])
        if bar is not None:
            bar.update(E)
    G = np.full((E, steps), np.nan, np.float32)
    run = np.full(E, np.nan, np.float32)              # NaN until a hand end is seen
    for t in range(steps - 1, -1, -1):
        run = np.where(D[:, t], R[:, t], R[:, t] + gamma * run)
        G[:, t] = run
    n = E * steps
    return {"obs": X.reshape(n, O), "masks": M.reshape(n, A), "actions": Y.reshape(n),
            "returns": G.reshape(n), "table": np.repeat(np.arange(E), steps)}


def split_holdout(data: dict, holdout: float):
    """(train, held-out): the last `holdout` share of the tables (whole tables, so held-out
    positions come from deals never trained on). Rows must be table-major (as
    collect_teacher_data gives them): both parts are views."""
    table = data["table"]
    if np.any(np.diff(table) < 0):
        raise ValueError("split_holdout: rows must be table-major (tables in ascending order)")
    E = int(table.max()) + 1
    n_hold = max(1, round(E * holdout)) if holdout > 0 else 0
    cut = int(np.searchsorted(table, E - n_hold))
    return ({k: v[:cut] for k, v in data.items()}, {k: v[cut:] for k, v in data.items()})


def policy_choices(policy, obs, masks, batch: int = 4096) -> np.ndarray:
    """The masked argmax of the policy's logits (deterministic play) for every row."""
    out = []
    with torch.no_grad():
        for i in range(0, len(obs), batch):
            o = torch.as_tensor(obs[i:i + batch], device=policy.device)
            dist = policy.get_distribution(o, action_masks=masks[i:i + batch])
            out.append(dist.distribution.logits.argmax(dim=1).cpu().numpy())
    return np.concatenate(out) if out else np.zeros(0, np.int64)


def imitation_accuracy(policy, data: dict) -> float:
    """Share of rows where the policy's deterministic move is the teacher's."""
    if len(data["actions"]) == 0:
        return float("nan")
    return float((policy_choices(policy, data["obs"], data["masks"]) == data["actions"]).mean())


def behaviour_clone(policy, data: dict, epochs: int, batch_size: int, lr: float,
                    value: bool = True, vf_coef: float = 0.5, seed: int = 0, log=None,
                    bar=None) -> list:
    """Cross-entropy of the policy's masked logits on the teacher's moves (plus, `value`,
    vf_coef * squared error of the value head on the returns), with an Adam of its own.
    Returns the mean cross-entropy per epoch. bar: a progress bar, advanced by the rows of
    every minibatch."""
    g = np.random.default_rng(np.random.SeedSequence([int(seed), 11]))
    opt = torch.optim.Adam(policy.parameters(), lr=lr)
    n = len(data["actions"])
    dev = policy.device
    has_ret = np.isfinite(data["returns"])
    policy.set_training_mode(True)
    losses = []
    for ep in range(epochs):
        order = g.permutation(n)
        ce_sum, v_sum, k = 0.0, 0.0, 0
        for i in range(0, n, batch_size):
            idx = order[i:i + batch_size]
            obs = torch.as_tensor(data["obs"][idx], device=dev)
            act = torch.as_tensor(data["actions"][idx], device=dev)
            values, logp, _ = policy.evaluate_actions(obs, act,
                                                      action_masks=data["masks"][idx])
            ce = -logp.mean()
            loss = ce
            if value:
                ok = torch.as_tensor(has_ret[idx], device=dev)
                if ok.any():
                    ret = torch.as_tensor(data["returns"][idx], device=dev)
                    v_err = ((values.flatten() - ret)[ok] ** 2).mean()
                    loss = loss + vf_coef * v_err
                    v_sum += v_err.item() * len(idx)
            opt.zero_grad()
            loss.backward()        # no norm clipping: the value error would starve the policy
            opt.step()
            ce_sum += ce.item() * len(idx)
            k += len(idx)
            if bar is not None:
                bar.update(len(idx))
        losses.append(ce_sum / max(k, 1))
        if log:
            log(f"imitation epoch {ep + 1}/{epochs}: cross-entropy {losses[-1]:.4f}"
                + (f", value error {v_sum / max(k, 1):.2f}" if value else ""))
    policy.set_training_mode(False)
    return losses


class LeanPolicy:
    """The lean PPO's actor and critic (lean_policy.py) under the names behaviour_clone and
    policy_choices call on an SB3 policy: evaluate_actions, get_distribution, parameters
    (the actor's, then the critic's), set_training_mode, device. The logits are
    masked_logp's (illegal moves at -1e8 before normalising, as in the PPO updates)."""
    device = "cpu"

    def __init__(self, actor, critic):
        self.actor, self.critic = actor, critic

    def parameters(self) -> list:
        return list(self.actor.parameters()) + list(self.critic.parameters())

    def set_training_mode(self, mode: bool) -> None:
        self.actor.train(mode)
        self.critic.train(mode)

    def _logp(self, obs, action_masks):
        from .lean_policy import masked_logp
        return masked_logp(self.actor, obs, torch.as_tensor(np.asarray(action_masks, bool)))

    def evaluate_actions(self, obs, actions, action_masks):
        """(values, log-probability of `actions`, None) as SB3's evaluate_actions."""
        logp = self._logp(obs, action_masks)
        return self.critic(obs), logp.gather(1, actions[:, None]).squeeze(1), None

    def get_distribution(self, obs, action_masks):
        """An object whose .distribution.logits are the masked log-probabilities."""
        from types import SimpleNamespace
        return SimpleNamespace(distribution=SimpleNamespace(logits=self._logp(obs, action_masks)))


def teacher_data(cfg: TrainConfig, bar=None, masks=None, self_agent=None) -> tuple:
    """(data, train part, held-out part) of the warm start: the teacher's positions on a fresh
    env of the run's kind (seed cfg.run.seed + 500009), with formats one env per format (each its
    share of the tables; the held-out tables, split_holdout's last ones, are then the last
    formats'). masks(obs, legal):
    the learner's masks (its constraint), rows whose teacher move they forbid dropped;
    self_agent: the partner of partner='self'."""
    other = copy.copy(cfg)                      # its parts its own
    other.run.seed = cfg.run.seed + 500_009
    if cfg.tables.formats:
        from .formats import make_formats_env
        env = make_formats_env(other)
        subs = env.envs
    else:
        env = make_env(other, monitor=False)
        subs = [env]
    steps = -(-cfg.warm_start.bc_rows // env.num_envs)
    parts, offset = [], 0
    for sub in subs:
        if self_agent is not None:
            from .league import league_of
            league_of(sub).set_self_agent(self_agent)
        d = collect_teacher_data(sub, Teacher(sub, cfg.warm_start.teacher), steps * sub.num_envs,
                                 cfg.ppo.gamma, bar=bar)
        d["table"] = d["table"] + offset
        offset += sub.num_envs
        if masks is not None:
            d["masks"] = np.asarray(masks(d["obs"], d["masks"]), bool)
            keep = d["masks"][np.arange(len(d["actions"])), d["actions"]]
            d = {k: v[keep] for k, v in d.items()}
        parts.append(d)
    env.close()
    data = parts[0] if len(parts) == 1 else {k: np.concatenate([p[k] for p in parts])
                                             for k in parts[0]}
    return (data, *split_holdout(data, cfg.warm_start.bc_holdout))


def phase_bar(total: int, desc: str, unit: str, enabled: bool = True):
    """A tqdm bar over one phase of the warm start (None when off or tqdm is missing)."""
    from nertz_env.optional import available
    if not enabled or not available("tqdm"):
        return None
    from tqdm.auto import tqdm
    return tqdm(total=total, desc=desc, unit=unit, unit_scale=True, dynamic_ncols=True,
                smoothing=0, mininterval=0.5, file=sys.stderr)


def _shown(bar, log):
    """log's lines drawn above bar while it lasts (a run's LogAboveBar has a `bar`)."""
    if bar is not None and hasattr(log, "bar"):
        log.bar = bar
    return bar


def _done(bar, log) -> None:
    if bar is not None:
        bar.close()
        if hasattr(log, "bar"):
            log.bar = None


def warm_start(model, cfg: TrainConfig, run: Path, log=print, masks=None,
               self_agent=None) -> dict:
    """Collect teacher data on a fresh env of the run's kind (other seed: teacher_data, with
    masks and self_agent), clone it into model.policy (an SB3 policy or a LeanPolicy),
    measure the held-out accuracy; writes bc.json. With cfg.run.progress each phase (the
    positions collected, the rows fitted) has its own bar."""
    from .folder import write_json
    ws, E = cfg.warm_start, cfg.tables.num_envs
    t0 = time.perf_counter()
    bar = _shown(phase_bar(-(-ws.bc_rows // E) * E, "imitation data", "pos", cfg.run.progress),
                 log)
    try:
        data, fit, held = teacher_data(cfg, bar, masks, self_agent)
    finally:
        _done(bar, log)
    t_collect = time.perf_counter() - t0
    log(f"imitation: {len(data['actions']):,} positions of {ws.teacher} in {t_collect:.1f} s "
        f"({len(data['actions']) / max(t_collect, 1e-9):,.0f} env-steps/s); "
        f"{len(held['actions']):,} held out")
    t0 = time.perf_counter()
    bar = _shown(phase_bar(ws.bc_epochs * len(fit["actions"]), "behaviour cloning", "row",
                           cfg.run.progress), log)
    try:
        losses = behaviour_clone(model.policy, fit, ws.bc_epochs, ws.bc_batch_size,
                                 ws.bc_learning_rate, ws.bc_value, cfg.ppo.vf_coef, cfg.run.seed,
                                 log, bar=bar)
    finally:
        _done(bar, log)
    t_fit = time.perf_counter() - t0
    acc = imitation_accuracy(model.policy, held)
    info = {"teacher": cfg.warm_start.teacher, "rows": len(data["actions"]),
            "train_rows": len(fit["actions"]), "heldout_rows": len(held["actions"]),
            "heldout_accuracy": acc, "train_accuracy": imitation_accuracy(model.policy, fit),
            "losses": losses, "collect_seconds": t_collect, "fit_seconds": t_fit}
    write_json(run / "bc.json", {k: None if isinstance(v, float) and not np.isfinite(v) else v
                                 for k, v in info.items()})     # strict JSON: NaN is null
    log(f"imitation: held-out accuracy {acc:.3f} (train {info['train_accuracy']:.3f}), "
        f"fit in {t_fit:.1f} s")
    return info
