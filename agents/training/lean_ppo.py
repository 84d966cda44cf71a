"""A lean PPO in torch over the batched env, read CleanRL's way: the policy module apart
(lean_policy.py: the actor and critic, their masked forward pass, their files), and here one
function per step, each readable alone: `make_learner` (env, networks, optimiser, league),
`collect_rollout`, `gae`, `ppo_update` (the update and its statistics, nothing else), and
`train`, which runs them in turn while `Books` keeps the run's books between updates (progress
bar, checkpoints, snapshots into the league, the log line).

    from agents.training.lean_ppo import lean_config, train
    policy_path = train(lean_config(out="runs/lean", timesteps=500_000))  # runs/lean/final.npz
    # play it: nertz tournament --agents ppo:runs/lean/final.npz,heuristic:style=river-builder

The same algorithm as `nertz train`'s MaskablePPO (agents/training/run.py), without SB3's
per-step machinery (rollout buffer objects, callbacks, distribution classes, dict infos):

- Environment: the very env `nertz train` trains on (league.py `make_env`: NertzVecEnv with the
  learner at seat 0, the league's opponents per table, the same `reward=`), without VecMonitor.
- Network: SB3's MlpPolicy for `net_arch` [128, 128]: a separate actor and critic, each
  Linear+Tanh layers of those widths, orthogonal init (gain sqrt 2 for hidden layers, 0.01 for
  the action head, 1 for the value head; lean_policy.py `networks`), Adam with eps 1e-5.
- Action mask: illegal logits set to -1e8 (what MaskableCategorical writes) before the
  softmax, so an illegal move has probability 0 and is never drawn.
- PPO: GAE(gamma, lambda) over n_steps x num_envs, a hand cut at max_ticks bootstrapped from
  the value of its terminal observation (as SB3 does on TimeLimit.truncated), n_epochs over
  shuffled minibatches, advantages normalised per minibatch, clipped policy loss, unclipped
  value loss times vf_coef, entropy bonus, gradient norm clipped at max_grad_norm.
- Logged per update (the log line: every log_every steps and after the last update): the last
  minibatch's policy loss, value loss and entropy; approx-KL (CleanRL's estimator
  `((ratio - 1) - log ratio).mean()`, averaged over the update's minibatches), clip fraction
  (the share of samples whose ratio lay outside 1 +- clip_range, averaged likewise) and the
  explained variance of the rollout's returns by its values (1 - Var[return - value] /
  Var[return]; nan when the returns do not vary). They are computed without gradients from
  tensors the update makes anyway: the weights and the random stream stay as without them.
- Constraint (TrainConfig.constraint, agents/constraints.py): the learner's masks pass through
  it before the policy sees them, in the rollout and so in the update; the saved model names
  it, so `ppo:` plays it under the same masks.
- Observation (TrainConfig.observation, else init's, else v0: lean_policy.py
  run_observation): "v1" gives every env (each format's too) observation="v1", the learner's
  rows with their memory block (1019 floats), a fresh network that reads them or init's
  (a v0 init widened), the partner's rows and v1 snapshots' play from the same memory
  (league.py), and a saved model that says "observation": "v1".
- Partner (TrainConfig.partner='self'): at a two-player team the learner's teammate plays the
  current actor, its moves sampled under the same masks (league.py), not a league entry,
  in the learner's own forward pass (lean_policy.py SelfPartner gather/answer).
- The head's legal logits only: the rollout's draw (lean_policy.py draw) and the update's
  log-probabilities, entropy and gradient (MaskedHead). Speed: benchmarks/README.md.
- Output: the actor in the project's safe weight format (agents/learned/weights.py), which
  `make_agent("ppo:OUT/final.npz")` plays in numpy.

- Snapshots (TrainConfig.snapshot_every): every that many steps the actor is saved as
  snapshots/step_N.npz and joins every format's league as an entry at every other seat
  (league.py add_snapshot: played deterministically as `ppo:` plays it, at most max_snapshots,
  the oldest leaves), drawn as often as each other entry (no evaluations here to weight them).

- Warm start (TrainConfig.bc_rows > 0, no init): before the first rollout the actor imitates
  the teacher and the critic fits its discounted returns (imitation.py, as SB3's run does;
  `lean_warm_start`), bc.json written in the run folder.

Not here: the evaluations and league priorities of SB3's `nertz train`; it starts from a fresh
network, the warm start or TrainConfig.init.

torch is imported at the top, through nertz_env.optional.require (without the `[train]`
extra, importing this module is one line naming it).
"""
from __future__ import annotations

import dataclasses
import time
from pathlib import Path

import numpy as np

from agents.constraints import check_constraint, constrain
from agents.learned.sparse import sparse_rows
from nertz_env.actions import SHIFT0, SHIFT_PAIRS
from nertz_env.core.observe import OBS_DIM
from nertz_env.optional import require

from .config import TrainConfig
from .lean_policy import (MaskedHead, SelfPartner, SparseFirstLayer, _mlp,  # noqa: F401
                          critic_path, draw, masked_logp, networks, policy_arrays, sample,
                          run_observation, save_actor, save_untrained, start_from)

torch = require("torch", "train", "the lean PPO")


# the TrainConfig fields the lean PPO reads (and the warm start's: imitation.py)
USED = ("out", "seed", "timesteps", "num_envs", "teams", "max_ticks", "reward", "opponents",
        "formats", "init", "observation", "n_steps", "batch_size", "n_epochs", "learning_rate",
        "gamma", "gae_lambda", "clip_range", "ent_coef", "vf_coef", "net_arch", "torch_threads",
        "checkpoint_every", "shift_cost", "constraint", "partner", "snapshot_every",
        "max_snapshots", "critic_warmup", "teacher", "bc_rows", "bc_epochs", "bc_batch_size",
        "bc_learning_rate", "bc_holdout", "bc_value")
# lean_config's parts off unless asked for (the warm start too: bc_rows=N switches it on)
OFF = {"learner": "lean", "bc_rows": 0, "snapshot_every": 0, "eval_every": 0,
       "checkpoint_every": 0, "progress": False, "tensorboard": False}  # checkpoints: step_N.npz


def lean_config(**fields) -> TrainConfig:
    """A TrainConfig for the lean PPO: `nertz train`'s defaults for every field it reads
    (USED), with the parts it does not do and the warm start switched off (OFF; give bc_rows
    for a warm start); TrainConfig's checks apply."""
    return TrainConfig(**{**OFF, **fields})


def check_lean(cfg: TrainConfig) -> None:
    """ValueError unless the config is the lean PPO's (learner='lean': config.py then refuses a
    warm start, snapshots and resume, which it does not do)."""
    if cfg.run.learner != "lean":
        raise ValueError(f"learner={cfg.run.learner!r}: the lean PPO trains learner='lean' configs "
                         "(lean_config makes one)")
    run_observation(cfg)            # observation='v0' with a v1 init: refused before any work

@dataclasses.dataclass
class Learner:
    """What a run trains and on what: the env (base: the NertzVecEnv whose action_masks it
    reads), the actor and critic with their optimiser over params, masks(obs, legal): the
    learner's legal moves under its constraint, is_shift: 1 at the river-shift moves (the
    shift_cost shaping), the leagues (one per format) and, with partner='self', the
    (league, SelfPartner) pairs of the leagues with partner seats, whose moves the rollout
    draws in the learner's forward pass."""
    env: object
    base: object
    actor: object
    critic: object
    optim: object
    params: list
    masks: object
    is_shift: np.ndarray
    leagues: list
    obs_size: int
    n_actions: int
    partners: list = dataclasses.field(default_factory=list)
    sparse: bool = True


def make_learner(cfg: TrainConfig, sparse: bool, begin, log) -> Learner:
    """The env `nertz train` trains on (one league env per format with formats), the networks
    (from cfg.init if given), the optimiser and the league's partner; begin() once they are
    made (each refusal of theirs before it), then init's line."""
    from .league import league_of, make_env
    observation = run_observation(cfg)
    if cfg.tables.formats:
        from .formats import make_formats_env
        env = base = make_formats_env(cfg, observation)
    else:
        env = make_env(cfg, monitor=False, observation=observation)
        base = env.venv                             # the NertzVecEnv (its action_masks)
    obs_size = int(np.prod(env.observation_space.shape))
    n_actions = int(env.action_space.n)
    actor, critic = networks(cfg, obs_size, n_actions, sparse)
    init_line = start_from(actor, critic, cfg.ppo.init) if cfg.ppo.init else None
    is_shift = np.zeros(n_actions, np.float32)
    is_shift[SHIFT0:SHIFT0 + SHIFT_PAIRS * 13] = 1.0
    if begin is not None:
        begin()
    if init_line:                         # after begin: a refused run prints nothing
        log(init_line)
    params = list(actor.parameters()) + list(critic.parameters())
    optim = torch.optim.Adam(params, lr=cfg.ppo.learning_rate, eps=1e-5)
    cid = check_constraint(cfg.tables.constraint)

    def masks(obs, legal):
        """The learner's legal moves under its constraint (bool; it reads the v0 prefix of a
        v1 observation)."""
        return constrain(np.asarray(obs)[:, :OBS_DIM], legal, cid) if cid else \
            np.asarray(legal, bool)

    leagues = [league_of(sub) for sub in (env.envs if cfg.tables.formats else [env])]
    partners = []
    if cfg.tables.partner == "self":
        for league in leagues:
            partner = SelfPartner(actor, masks)
            league.set_self_agent(partner)
            if league.partners:
                partners.append((league, partner))
    return Learner(env, base, actor, critic, optim, params, masks, is_shift, leagues,
                   obs_size, n_actions, partners, sparse)


@dataclasses.dataclass
class Rollout:
    """One rollout's storage, [n_steps, num_envs, ...]: observations, masks, actions, their
    log-probabilities, rewards, done flags (of the observation at that step) and values; the
    observation and done flags after it; running: each table's return so far in its hand,
    returns: every finished hand's."""
    obs: object
    mask: object
    act: object
    logp: object
    rew: object
    done: object
    val: object
    next_obs: object
    next_done: object
    running: np.ndarray
    returns: list


def rollout_storage(cfg: TrainConfig, learner: Learner) -> Rollout:
    """Empty storage for a rollout of cfg's shape, next_obs the env's first observation."""
    S, E = cfg.ppo.n_steps, cfg.tables.num_envs
    return Rollout(torch.zeros((S, E, learner.obs_size)),
                   torch.zeros((S, E, learner.n_actions), dtype=torch.bool),
                   torch.zeros((S, E), dtype=torch.int64), torch.zeros((S, E)),
                   torch.zeros((S, E)), torch.zeros((S, E)), torch.zeros((S, E)),
                   torch.from_numpy(np.asarray(learner.env.reset(), np.float32)),
                   torch.zeros(E), np.zeros(E), [])


def collect_rollout(learner: Learner, buf: Rollout, cfg: TrainConfig) -> None:
    """n_steps steps of every table into buf: the learner's masks, a move drawn from the
    masked policy, its log-probability and the state's value, then the env's step. With
    partner='self' the teammates' rows (gathered before the step) join the learner's in the
    one actor pass and their moves are left with their SelfPartner for the step to play."""
    E = cfg.tables.num_envs
    for t in range(cfg.ppo.n_steps):
        obs, legal = buf.next_obs, learner.base.action_masks()
        partners = [(p, *p.gather(lg)) for lg, p in learner.partners]
        if partners:       # partner='self': the teammates' rows in the same forward pass
            obs = torch.cat([obs, *(torch.from_numpy(o) for _, o, _ in partners)])
            legal = np.concatenate([legal, *(m for _, _, m in partners)])
        mask = learner.masks(obs.numpy(), legal)
        buf.obs[t], buf.done[t] = buf.next_obs, buf.next_done
        buf.mask[t] = torch.from_numpy(mask[:E])
        x = sparse_rows(obs.numpy()) if learner.sparse else obs      # read once, both nets
        with torch.no_grad():
            ids, logp = draw(learner.actor, x, mask)
            buf.val[t] = learner.critic((x[0][:E], x[1][:E]) if learner.sparse else x[:E])[:, 0]
        start = E
        for p, o, _ in partners:
            p.answer(o, ids[start:start + len(o)])
            start += len(o)
        buf.act[t] = action = torch.from_numpy(ids[:E])
        buf.logp[t] = torch.from_numpy(logp[:E])
        o, r, d, infos = learner.env.step(ids[:E])
        buf.rew[t] = torch.from_numpy(step_rewards(learner, buf, cfg, action, r, d, infos))
        buf.next_obs = torch.from_numpy(np.asarray(o, np.float32))
        buf.next_done = torch.from_numpy(np.asarray(d, np.float32))


def step_rewards(learner: Learner, buf: Rollout, cfg: TrainConfig, action, r, d, infos):
    """The learner's rewards of one step: shift_cost taken per river shift, a finished hand's
    return recorded, a hand cut at max_ticks bootstrapped from its terminal observation's
    value (as SB3 does on TimeLimit.truncated)."""
    r = np.asarray(r, np.float32)
    if cfg.tables.shift_cost:              # the reward shaping of TrainConfig.shift_cost
        r = r - np.float32(cfg.tables.shift_cost) * learner.is_shift[action.numpy()]
    buf.running += r
    for e in np.flatnonzero(d):
        buf.returns.append(buf.running[e])
        buf.running[e] = 0.0
        if infos[e].get("TimeLimit.truncated"):      # a cut hand: bootstrap (as SB3)
            term = torch.from_numpy(np.asarray(infos[e]["terminal_observation"],
                                               np.float32))[None]
            with torch.no_grad():
                r[e] += cfg.ppo.gamma * float(learner.critic(term)[0, 0])
    return r


def gae(buf: Rollout, next_value, gamma: float, lam: float) -> tuple:
    """(advantages, returns) of the rollout by GAE(gamma, lambda), next_value the value of the
    observation after it (call under torch.no_grad)."""
    S, E = buf.rew.shape
    adv = torch.zeros((S, E))
    last = torch.zeros(E)
    for t in reversed(range(S)):
        nonterminal = 1.0 - (buf.next_done if t == S - 1 else buf.done[t + 1])
        nv = next_value if t == S - 1 else buf.val[t + 1]
        delta = buf.rew[t] + gamma * nv * nonterminal - buf.val[t]
        last = delta + gamma * lam * nonterminal * last
        adv[t] = last
    return adv, adv + buf.val


def minibatch_losses(learner: Learner, x, masks, rows, act, old_logp, adv, ret,
                     clip_range: float):
    """(policy loss, value loss, entropy, ratio, new log-probability) of one minibatch:
    advantages normalised, the clipped policy loss, the unclipped value loss. masks: the
    rollout's legal moves (numpy bool [N, A]), rows: the minibatch's rows of them; the
    log-probabilities and entropy under the masked softmax from the legal logits only
    (lean_policy.py MaskedHead)."""
    head = learner.actor[-1]
    new_logp, entropy_rows = MaskedHead.apply(learner.actor[:-1](x), head.weight, head.bias,
                                              masks, rows, act.numpy())
    if len(adv) > 1:
        adv = (adv - adv.mean()) / (adv.std() + 1e-8)
    ratio = torch.exp(new_logp - old_logp)
    pg_loss = -torch.min(adv * ratio, adv * ratio.clamp(1 - clip_range, 1 + clip_range)).mean()
    v_loss = ((learner.critic(x).squeeze(1) - ret) ** 2).mean()
    return pg_loss, v_loss, entropy_rows.mean(), ratio, new_logp


def explained_variance(values, returns) -> float:
    """1 - Var[returns - values] / Var[returns] (nan when the returns do not vary)."""
    y_pred, y_true = values.numpy().reshape(-1), returns.numpy().reshape(-1)
    var_y = np.var(y_true)
    return float("nan") if var_y == 0 else float(1 - np.var(y_true - y_pred) / var_y)


def ppo_update(learner: Learner, buf: Rollout, adv, ret, cfg: TrainConfig, rng,
               actor_learns: bool, max_grad_norm: float, sparse: bool) -> dict:
    """n_epochs over shuffled minibatches of the rollout (rng draws the order); the critic
    learns always, the actor too when actor_learns (after critic_warmup). Returns the
    update's statistics (module docstring), computed without gradients."""
    rollout = cfg.ppo.n_steps * cfg.tables.num_envs
    b_obs = buf.obs.reshape(rollout, learner.obs_size)
    b_mask = buf.mask.reshape(rollout, learner.n_actions).numpy()
    b_act, b_logp = buf.act.reshape(-1), buf.logp.reshape(-1)
    b_adv, b_ret = adv.reshape(-1), ret.reshape(-1)
    if sparse:                        # the rollout's rows as column ids and values, once
        b_idx, b_val = sparse_rows(b_obs.numpy())
    kls, clipped = [], []
    for _ in range(cfg.ppo.n_epochs):
        order = torch.from_numpy(rng.permutation(rollout))
        for i in range(0, rollout, cfg.ppo.batch_size):
            mb = order[i:i + cfg.ppo.batch_size]
            rows = mb.numpy()
            x = (b_idx[rows], b_val[rows]) if sparse else b_obs[mb]
            pg_loss, v_loss, entropy, ratio, new_logp = minibatch_losses(
                learner, x, b_mask, rows, b_act[mb], b_logp[mb], b_adv[mb], b_ret[mb],
                cfg.ppo.clip_range)
            with torch.no_grad():             # statistics only: no graph, no random draw
                kls.append(((ratio - 1) - (new_logp - b_logp[mb])).mean())
                clipped.append(((ratio - 1).abs() > cfg.ppo.clip_range).float().mean())
            loss = cfg.ppo.vf_coef * v_loss
            if actor_learns:                       # after the warm-up the actor learns too
                loss = loss + pg_loss - cfg.ppo.ent_coef * entropy
            learner.optim.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(learner.params, max_grad_norm)
            learner.optim.step()
    return {"policy_loss": pg_loss.item(), "value_loss": v_loss.item(),
            "entropy": entropy.item(), "approx_kl": float(torch.stack(kls).mean()),
            "clip_fraction": float(torch.stack(clipped).mean()),
            "explained_variance": explained_variance(buf.val, ret)}


class Books:
    """The run's bookkeeping between updates, apart from them: the progress bar (cfg.progress),
    checkpoints/step_N.npz (checkpoint_every), snapshots joining the league (snapshot_every),
    the time spent in rollouts and updates, and the log line (every log_every steps and after
    the last update)."""

    def __init__(self, cfg: TrainConfig, learner: Learner, log, log_every: int):
        self.cfg, self.learner, self.log, self.log_every = cfg, learner, log, log_every
        self.rollout = cfg.ppo.n_steps * cfg.tables.num_envs
        self.n_updates = -(-cfg.run.timesteps // self.rollout)
        self.next_checkpoint = cfg.run.checkpoint_every or None
        self.next_snapshot = cfg.league.snapshot_every or None
        self.t0, self.t_rollout, self.t_update = time.perf_counter(), 0.0, 0.0
        self.bar = None
        if cfg.run.progress:
            from .run import LogAboveBar, progress_bar
            self.bar = progress_bar(0, self.n_updates * self.rollout)
            self.log = LogAboveBar(log)
            self.log.bar = self.bar

    def after_update(self, step: int, stats: dict, returns: list) -> None:
        cfg, learner = self.cfg, self.learner
        if self.next_checkpoint is not None and step >= self.next_checkpoint:
            save_actor(learner.actor, cfg, Path(cfg.run.out) / "checkpoints" / f"step_{step}.npz",
                       step, learner.critic)
            every = cfg.run.checkpoint_every
            self.next_checkpoint = (step // every + 1) * every
        if self.next_snapshot is not None and step >= self.next_snapshot:
            snap = save_actor(learner.actor, cfg,
                              Path(cfg.run.out) / "snapshots" / f"step_{step}.npz", step)
            for league in learner.leagues:
                league.add_snapshot(str(snap), cfg.league.max_snapshots)
            self.log(f"snapshot {snap.stem} joins the league "
                     f"({len(learner.leagues[0].snapshot_paths())} live)")
            every = cfg.league.snapshot_every
            self.next_snapshot = (step // every + 1) * every
        if self.bar is not None:
            self.bar.update(self.rollout)
        every = self.log_every
        if step >= self.n_updates * self.rollout or (
                every and step // every != (step - self.rollout) // every):
            self.log(self.line(step, stats, returns))

    def line(self, step: int, stats: dict, returns: list) -> str:
        dt = time.perf_counter() - self.t0
        recent = (f"mean return (last 100) {np.mean(returns[-100:]):+.2f}"
                  if returns else "no hand finished yet")
        return (f"step {step:,}: {step / max(dt, 1e-9):,.0f} env-steps/s, hands {len(returns)}, "
                f"{recent}, policy loss {stats['policy_loss']:+.4f}, "
                f"value loss {stats['value_loss']:.4f}, entropy {stats['entropy']:.3f}, "
                f"approx-KL {stats['approx_kl']:.5f}, "
                f"clip fraction {stats['clip_fraction']:.3f}, "
                f"explained variance {stats['explained_variance']:+.3f}; "
                f"{self.t_rollout:.1f} s in rollouts, {self.t_update:.1f} s in updates")

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.log.bar = None


def lean_warm_start(learner: Learner, cfg: TrainConfig, log) -> dict:
    """The imitation warm start (imitation.py warm_start, as SB3's run does it) into the
    learner's actor and critic: the teacher's positions under the learner's masks (its
    constraint), partner='self' played by the actor; writes OUT/bc.json."""
    from types import SimpleNamespace

    from .imitation import LeanPolicy, warm_start
    from .run import LogAboveBar
    ws = cfg.warm_start
    log(f"imitation warm start: collecting {ws.bc_rows:,} positions of {ws.teacher}, "
        f"then {ws.bc_epochs} epoch(s) of behaviour cloning...")
    Path(cfg.run.out).mkdir(parents=True, exist_ok=True)      # train() alone: no run folder yet
    partner = SelfPartner(learner.actor, learner.masks) if cfg.tables.partner == "self" else None
    return warm_start(SimpleNamespace(policy=LeanPolicy(learner.actor, learner.critic)), cfg,
                      Path(cfg.run.out), LogAboveBar(log),
                      masks=learner.masks if cfg.tables.constraint else None, self_agent=partner)


def train(args: TrainConfig, log=print, on_rollout=None, max_grad_norm: float = 0.5,
          log_every: int = 0, sparse: bool = True, begin=None) -> Path:
    """One run of a TrainConfig (module docstring; its USED fields); returns the path of the
    saved final.npz. max_grad_norm: the gradient norm clip (SB3's default); log_every: a
    line every this many env steps (0: only the last line); sparse: the first layers, in the
    rollouts and the updates, read only the observations' non-zero entries
    (agents/learned/sparse.py; the same products up to float32 rounding).
    on_rollout(step, actions, masks, rewards): called after every rollout with its actions
    [n_steps, num_envs], masks [n_steps, num_envs, n_actions] and rewards [n_steps, num_envs]
    (shift_cost and a cut hand's bootstrap included; tests check every action was legal).
    begin(): called once the env, the networks and init are made (each refusal of theirs
    before it), before the first rollout and the first file: train_run creates its run
    folder there."""
    check_lean(args)
    cfg = args
    torch.set_num_threads(cfg.run.torch_threads)
    rng = np.random.default_rng(cfg.run.seed)
    learner = make_learner(cfg, sparse, begin, log)
    if cfg.warm_start.bc_rows and not cfg.ppo.init:
        lean_warm_start(learner, cfg, log)
    buf = rollout_storage(cfg, learner)
    books = Books(cfg, learner, log, log_every)
    step = 0
    for _ in range(books.n_updates):
        t1 = time.perf_counter()
        collect_rollout(learner, buf, cfg)
        step += books.rollout
        t2 = time.perf_counter()
        books.t_rollout += t2 - t1
        if on_rollout is not None:
            on_rollout(step, buf.act.numpy().copy(), buf.mask.numpy().copy(),
                       buf.rew.numpy().copy())
        with torch.no_grad():
            adv, ret = gae(buf, learner.critic(buf.next_obs).squeeze(1), cfg.ppo.gamma,
                           cfg.ppo.gae_lambda)
        stats = ppo_update(learner, buf, adv, ret, cfg, rng, step > cfg.ppo.critic_warmup,
                           max_grad_norm, sparse)
        books.t_update += time.perf_counter() - t2
        books.after_update(step, stats, buf.returns)
    books.close()
    learner.env.close()
    return save_actor(learner.actor, cfg, Path(cfg.run.out) / "final.npz", step, learner.critic)


def train_run(cfg: TrainConfig, log=print, overwrite: bool = False, begin=None) -> Path:
    """`nertz train --learner lean`: a run folder (new or empty, checked first: checkpoints.py
    check_out) with config.json, checkpoints/step_N.npz (every checkpoint_every steps) and
    final.npz + final.json; a line every tenth of the run (overwrite and begin: as run.py
    train's). The folder is created only once the env, the network and init are made (a
    refusal leaves nothing and prints nothing but its error), and a run stopped
    before its first checkpoint removes it (checkpoints.py stopped_cleanly). Returns
    final.npz's path."""
    import shlex
    from contextlib import ExitStack

    from .folder import check_out, stopped_cleanly, write_json
    run = Path(cfg.run.out)
    state = check_out(cfg, overwrite)
    rollout = cfg.ppo.n_steps * cfg.tables.num_envs
    guard = ExitStack()

    def made():
        guard.enter_context(stopped_cleanly(cfg, state, log))     # makes the folder
        write_json(run / "config.json", {"config": cfg.to_dict()})
        if begin is not None:
            begin()
        if cfg.tables.formats:
            from .formats import describe, resolve, table_shares
            fmts = resolve(cfg.tables.formats)
            log(f"formats: {len(fmts)} table formats (tables each), " + "; ".join(
                f"{describe(f)} ({n})" for f, n in table_shares(cfg.tables.num_envs, fmts)))

    t0 = time.perf_counter()
    with guard:
        npz = train(cfg, log=log, log_every=max(rollout, cfg.run.timesteps // 10), begin=made)
    log(f"trained in {time.perf_counter() - t0:,.0f} s; run folder {run}: final.npz (the "
        "model, the safe format)" + (", checkpoints/step_N.npz" if any(
            (run / "checkpoints").glob("step_*.npz")) else "")
        + "; play it: nertz tournament --agents "
        + shlex.quote(f"ppo:{npz},{cfg.evaluation.eval_against}")
        + ("" if cfg.tables.formats else f" --teams {cfg.tables.teams}"))
    return npz
