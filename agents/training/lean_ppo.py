"""A lean PPO in torch over the batched env, one readable file (CleanRL style).

    from agents.training.lean_ppo import lean_config, train
    policy_path = train(lean_config(out="runs/lean", timesteps=500_000))  # runs/lean/final.npz
    # play it: nertz tournament --agents ppo:runs/lean/final.npz,heuristic:style=river-builder

The same algorithm as `nertz train`'s MaskablePPO (agents/training/run.py), without SB3's
per-step machinery (rollout buffer objects, callbacks, distribution classes, dict infos):

- Environment: the very env `nertz train` trains on (league.py `make_env`: NertzVecEnv with the
  learner at seat 0, the league's opponents per table, the same `reward=`), without VecMonitor.
- Network: SB3's MlpPolicy for `net_arch` [128, 128]: a separate actor and critic, each
  Linear+Tanh layers of those widths, orthogonal init (gain sqrt 2 for hidden layers, 0.01 for
  the action head, 1 for the value head), Adam with eps 1e-5.
- Action mask: illegal logits set to -1e8 (what MaskableCategorical writes) before the
  softmax, so an illegal move has probability 0 and is never drawn.
- PPO: GAE(gamma, lambda) over n_steps x num_envs, a hand cut at max_ticks bootstrapped from
  the value of its terminal observation (as SB3 does on TimeLimit.truncated), n_epochs over
  shuffled minibatches, advantages normalised per minibatch, clipped policy loss, unclipped
  value loss times vf_coef, entropy bonus, gradient norm clipped at max_grad_norm.
- Constraint (TrainConfig.constraint, agents/constraints.py): the learner's masks pass through
  it before the policy sees them, in the rollout and so in the update; the saved model names
  it, so `ppo:` plays it under the same masks.
- Partner (TrainConfig.partner='self'): at a two-player team the learner's teammate plays the
  current actor, its moves sampled under the same masks (league.py), not a league entry.
- Output: the actor in the project's safe weight format (agents/learned/weights.py), which
  `make_agent("ppo:OUT/final.npz")` plays in numpy.

- Snapshots (TrainConfig.snapshot_every): every that many steps the actor is saved as
  snapshots/step_N.npz and joins every format's league as an entry at every other seat
  (league.py add_snapshot: played deterministically as `ppo:` plays it, at most max_snapshots,
  the oldest leaves), drawn as often as each other entry (no evaluations here to weight them).

Not here: the imitation warm start, evaluations and league priorities of `nertz train`; it
starts from a fresh network or from TrainConfig.init.

torch is imported inside `train` (like the rest of agents/training: `nertz --help` should not
wait for it).
"""
from __future__ import annotations

import dataclasses
import time
from pathlib import Path

import numpy as np

from .config import TrainConfig


# the TrainConfig fields the lean PPO reads; a warm start or snapshots it does not do are refused
USED = ("out", "seed", "timesteps", "num_envs", "teams", "max_ticks", "reward", "opponents",
        "formats", "init", "n_steps", "batch_size", "n_epochs", "learning_rate", "gamma",
        "gae_lambda", "clip_range", "ent_coef", "vf_coef", "net_arch", "torch_threads",
        "checkpoint_every", "shift_cost", "constraint", "partner", "snapshot_every",
        "max_snapshots", "critic_warmup")
OFF = {"learner": "lean", "bc_rows": 0, "snapshot_every": 0, "eval_every": 0,
       "checkpoint_every": 0, "progress": False, "tensorboard": False}  # checkpoints: step_N.npz


def lean_config(**fields) -> TrainConfig:
    """A TrainConfig for the lean PPO: `nertz train`'s defaults for every field it reads
    (USED), with the parts it does not do switched off (OFF); TrainConfig's checks apply."""
    return TrainConfig(**{**OFF, **fields})


def check_lean(cfg: TrainConfig) -> None:
    """ValueError unless the config is the lean PPO's (learner='lean': config.py then refuses a
    warm start, snapshots and resume, which it does not do)."""
    if cfg.learner != "lean":
        raise ValueError(f"learner={cfg.learner!r}: the lean PPO trains learner='lean' configs "
                         "(lean_config makes one)")


def _mlp(nn, sizes, out, out_gain, first=None):
    """Linear+Tanh layers of `sizes`, then a Linear to `out`; orthogonal init (SB3's gains).
    first: the class of the first layer (a Linear subclass: SparseFirstLayer)."""
    layers = []
    for n_in, n_out in zip(sizes, sizes[1:]):
        cls = first if first is not None and not layers else nn.Linear
        layers += [cls(n_in, n_out), nn.Tanh()]
    layers.append(nn.Linear(sizes[-1], out))
    for m in layers:
        if isinstance(m, nn.Linear):
            nn.init.orthogonal_(m.weight, gain=out_gain if m is layers[-1] else np.sqrt(2))
            nn.init.zeros_(m.bias)
    return nn.Sequential(*layers)


_SPARSE = []


def sparse_first_layer():
    """SparseFirstLayer: an nn.Linear that, given (idx, val) of agents/learned/sparse.py
    `sparse_rows` instead of a dense tensor, computes the same product from the non-zero
    entries only, forward and weight gradient (numba kernels); dense input: nn.Linear's."""
    if _SPARSE:
        return _SPARSE[0]
    import torch

    from agents.learned.sparse import sparse_forward, sparse_weight_grad

    class SparseProduct(torch.autograd.Function):
        @staticmethod
        def forward(ctx, weight, bias, idx, val):
            ctx.rows, ctx.d = (idx, val), weight.shape[1]
            w_in = weight.detach().t().contiguous().numpy()
            return torch.from_numpy(sparse_forward(idx, val, w_in, bias.detach().numpy()))

        @staticmethod
        def backward(ctx, grad):
            g = grad.contiguous()
            g_in = sparse_weight_grad(*ctx.rows, g.numpy(), ctx.d)
            return torch.from_numpy(g_in).t(), g.sum(0), None, None

    class SparseFirstLayer(torch.nn.Linear):
        def forward(self, x):
            if isinstance(x, tuple):
                return SparseProduct.apply(self.weight, self.bias, *x)
            return super().forward(x)

    _SPARSE.append(SparseFirstLayer)
    return SparseFirstLayer


def policy_arrays(actor, net_arch, obs_size: int, n_actions: int, provenance: dict,
                  rules: dict, teams: int) -> tuple:
    """(meta, arrays) of the safe format (agents/learned/weights.py) for the actor MLP."""
    from agents.learned.weights import FORMAT, VERSION, array_names, array_shapes
    meta = {"format": FORMAT, "version": VERSION,
            "architecture": {"type": "mlp", "hidden": [int(w) for w in net_arch],
                             "activation": "tanh", "action_net": "masked"},
            "observation_size": obs_size, "action_size": n_actions, "arrays": {},
            "table": None if teams is None else {"teams": teams, "team_size": 1}, "rules": rules,
            "provenance": provenance}
    meta["arrays"] = {k: list(v) for k, v in array_shapes(meta).items()}
    linears = [m for m in actor if hasattr(m, "weight")]
    tensors = [t for m in linears for t in (m.weight, m.bias)]
    names = array_names(len(net_arch))      # hidden0_weight, ..., action_weight, action_bias
    arrays = {n: t.detach().cpu().numpy().astype("<f4") for n, t in zip(names, tensors)}
    return meta, arrays


def train(args: TrainConfig, log=print, on_rollout=None, max_grad_norm: float = 0.5,
          log_every: int = 0, sparse: bool = True, begin=None) -> Path:
    """One run of a TrainConfig (module docstring; its USED fields); returns the path of the
    saved final.npz. max_grad_norm: the gradient norm clip (SB3's default); log_every: a
    line every this many env steps (0: only the last line); sparse: the updates' first layers
    read only the observations' non-zero entries (agents/learned/sparse.py; the same
    products up to float32 rounding, measured in benchmarks/train_throughput.py).
    on_rollout(step, actions, masks, rewards): called after every rollout with its actions
    [n_steps, num_envs], masks [n_steps, num_envs, n_actions] and rewards [n_steps, num_envs]
    (shift_cost and a cut hand's bootstrap included; tests check every action was legal).
    begin(): called once the env, the networks and init are made (each refusal of theirs
    before it), before the first rollout and the first file: train_run creates its run
    folder there."""
    import torch
    from torch import nn

    from agents.constraints import check_constraint, constrain
    from agents.learned.sparse import sparse_rows

    from .league import league_of, make_env

    check_lean(args)
    cfg = args
    torch.set_num_threads(args.torch_threads)
    rng = np.random.default_rng(args.seed)

    # ---- env: what `nertz train` trains on (one league env per format with formats)
    if cfg.formats:
        from .formats import make_formats_env
        env = make_formats_env(cfg)
        base = env
    else:
        env = make_env(cfg, monitor=False)
        base = env.venv                             # the NertzVecEnv (its action_masks)
    E, S = args.num_envs, args.n_steps
    obs_size = int(np.prod(env.observation_space.shape))
    n_actions = int(env.action_space.n)

    # ---- agent: SB3's MlpPolicy shapes, actor and critic apart (from cfg.init if given)
    actor, critic = networks(args, obs_size, n_actions, sparse)
    init_line = start_from(actor, critic, cfg.init) if cfg.init else None
    from nertz_env.actions import SHIFT0, SHIFT_PAIRS
    is_shift = np.zeros(n_actions, np.float32)
    is_shift[SHIFT0:SHIFT0 + SHIFT_PAIRS * 13] = 1.0
    if begin is not None:
        begin()
    if init_line:                         # after begin: a refused run prints nothing
        log(init_line)
    checkpoints = Path(args.out) / "checkpoints"
    next_checkpoint = args.checkpoint_every or None
    params = list(actor.parameters()) + list(critic.parameters())
    optim = torch.optim.Adam(params, lr=args.learning_rate, eps=1e-5)

    def masked_logp(o, m):
        """log-probabilities with illegal moves at -1e8 before normalising (MaskableCategorical)."""
        return torch.log_softmax(actor(o).masked_fill(~m, -1e8), dim=1)

    cid = check_constraint(cfg.constraint)

    def learner_masks(obs, masks):
        """The learner's legal moves under its constraint (bool)."""
        return constrain(obs, masks, cid) if cid else np.asarray(masks, bool)

    def sample(o, m):
        """(action, log-probability of every move) of a Gumbel-max draw from the masked policy."""
        logp = masked_logp(o, m)
        gumbel = -torch.log(-torch.log(torch.rand_like(logp).clamp_(1e-20, 1.0)))
        return (logp + gumbel).masked_fill(~m, -float("inf")).argmax(dim=1), logp

    class SelfPartner:
        """partner='self': the teammate's moves, drawn from the current actor."""

        def act_batch(self, obs, masks):
            o = np.asarray(obs, np.float32)
            with torch.no_grad():
                a, _ = sample(torch.from_numpy(o), torch.from_numpy(learner_masks(o, masks)))
            return a.numpy().astype(np.int64)

    leagues = [league_of(sub) for sub in (env.envs if cfg.formats else [env])]
    if cfg.partner == "self":
        for league in leagues:
            league.set_self_agent(SelfPartner())
    next_snapshot = cfg.snapshot_every or None

    # ---- rollout storage
    obs_buf = torch.zeros((S, E, obs_size))
    mask_buf = torch.zeros((S, E, n_actions), dtype=torch.bool)
    act_buf = torch.zeros((S, E), dtype=torch.int64)
    logp_buf = torch.zeros((S, E))
    rew_buf = torch.zeros((S, E))
    done_buf = torch.zeros((S, E))
    val_buf = torch.zeros((S, E))

    rollout = S * E
    n_updates = -(-args.timesteps // rollout)
    next_obs = torch.from_numpy(np.asarray(env.reset(), np.float32))
    next_done = torch.zeros(E)
    step, t0 = 0, time.perf_counter()
    ep_returns, ep_ret = [], np.zeros(E)
    pg_loss = v_loss = entropy = torch.tensor(0.0)
    t_rollout = t_update = 0.0
    bar = None
    if args.progress:
        from .run import LogAboveBar, progress_bar
        bar = progress_bar(0, n_updates * rollout)
        log = LogAboveBar(log)
        log.bar = bar
    for update in range(n_updates):
        # ---- collect a rollout
        t1 = time.perf_counter()
        for t in range(S):
            mask = torch.from_numpy(learner_masks(next_obs.numpy(), base.action_masks()))
            obs_buf[t], mask_buf[t], done_buf[t] = next_obs, mask, next_done
            with torch.no_grad():
                action, logp = sample(next_obs, mask)
                val_buf[t] = critic(next_obs).squeeze(1)
            act_buf[t] = action
            logp_buf[t] = logp.gather(1, action[:, None]).squeeze(1)
            o, r, d, infos = env.step(action.numpy())
            r = np.asarray(r, np.float32)
            if cfg.shift_cost:                     # the reward shaping of TrainConfig.shift_cost
                r = r - np.float32(cfg.shift_cost) * is_shift[action.numpy()]
            ep_ret += r
            for e in np.flatnonzero(d):
                ep_returns.append(ep_ret[e])
                ep_ret[e] = 0.0
                if infos[e].get("TimeLimit.truncated"):      # a cut hand: bootstrap (as SB3)
                    term = torch.from_numpy(np.asarray(infos[e]["terminal_observation"],
                                                       np.float32))[None]
                    with torch.no_grad():
                        r[e] += args.gamma * float(critic(term)[0, 0])
            rew_buf[t] = torch.from_numpy(r)
            next_obs = torch.from_numpy(np.asarray(o, np.float32))
            next_done = torch.from_numpy(np.asarray(d, np.float32))
        step += rollout
        t2 = time.perf_counter()
        t_rollout += t2 - t1
        if on_rollout is not None:
            on_rollout(step, act_buf.numpy().copy(), mask_buf.numpy().copy(),
                       rew_buf.numpy().copy())

        # ---- GAE
        with torch.no_grad():
            next_value = critic(next_obs).squeeze(1)
            adv = torch.zeros((S, E))
            last = torch.zeros(E)
            for t in reversed(range(S)):
                nonterminal = 1.0 - (next_done if t == S - 1 else done_buf[t + 1])
                nv = next_value if t == S - 1 else val_buf[t + 1]
                delta = rew_buf[t] + args.gamma * nv * nonterminal - val_buf[t]
                last = delta + args.gamma * args.gae_lambda * nonterminal * last
                adv[t] = last
            ret = adv + val_buf

        # ---- PPO update
        b_obs, b_mask = obs_buf.reshape(rollout, obs_size), mask_buf.reshape(rollout, n_actions)
        b_act, b_logp = act_buf.reshape(-1), logp_buf.reshape(-1)
        b_adv, b_ret = adv.reshape(-1), ret.reshape(-1)
        if sparse:                        # the rollout's rows as column ids and values, once
            b_idx, b_val = sparse_rows(b_obs.numpy())
        for _ in range(args.n_epochs):
            order = torch.from_numpy(rng.permutation(rollout))
            for i in range(0, rollout, args.batch_size):
                mb = order[i:i + args.batch_size]
                x = (b_idx[mb.numpy()], b_val[mb.numpy()]) if sparse else b_obs[mb]
                logp_all = masked_logp(x, b_mask[mb])
                new_logp = logp_all.gather(1, b_act[mb][:, None]).squeeze(1)
                a = b_adv[mb]
                if len(mb) > 1:
                    a = (a - a.mean()) / (a.std() + 1e-8)
                ratio = torch.exp(new_logp - b_logp[mb])
                pg_loss = -torch.min(a * ratio, a * ratio.clamp(1 - args.clip_range,
                                                                1 + args.clip_range)).mean()
                v_loss = ((critic(x).squeeze(1) - b_ret[mb]) ** 2).mean()
                # exp of a -1e8 (illegal) log-probability takes a slow path: clamp, then zero
                probs = logp_all.clamp(min=-80.0).exp().masked_fill(~b_mask[mb], 0.0)
                entropy = -(probs * logp_all).sum(dim=1).mean()
                loss = args.vf_coef * v_loss
                if step > cfg.critic_warmup:           # after the warm-up the actor learns too
                    loss = loss + pg_loss - args.ent_coef * entropy
                optim.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(params, max_grad_norm)
                optim.step()
        pg_loss, v_loss, entropy = pg_loss.detach(), v_loss.detach(), entropy.detach()
        t_update += time.perf_counter() - t2
        if next_checkpoint is not None and step >= next_checkpoint:
            save_actor(actor, cfg, checkpoints / f"step_{step}.npz", step, critic)
            next_checkpoint = (step // args.checkpoint_every + 1) * args.checkpoint_every
        if next_snapshot is not None and step >= next_snapshot:
            snap = save_actor(actor, cfg, Path(args.out) / "snapshots" / f"step_{step}.npz", step)
            for league in leagues:
                league.add_snapshot(str(snap), cfg.max_snapshots)
            log(f"snapshot {snap.stem} joins the league ({len(leagues[0].snapshot_paths())} live)")
            next_snapshot = (step // cfg.snapshot_every + 1) * cfg.snapshot_every
        if bar is not None:
            bar.update(rollout)
        last_update = update == n_updates - 1
        if last_update or (log_every and step // log_every
                           != (step - rollout) // log_every):
            dt = time.perf_counter() - t0
            recent = (f"mean return (last 100) {np.mean(ep_returns[-100:]):+.2f}"
                      if ep_returns else "no hand finished yet")
            log(f"step {step:,}: {step / max(dt, 1e-9):,.0f} env-steps/s, hands {len(ep_returns)}, "
                f"{recent}, policy loss {pg_loss.item():+.4f}, "
                f"value loss {v_loss.item():.4f}, entropy {entropy.item():.3f}; "
                f"{t_rollout:.1f} s in rollouts, {t_update:.1f} s in updates")

    if bar is not None:
        bar.close()
        log.bar = None
    env.close()
    return save_actor(actor, cfg, Path(args.out) / "final.npz", step, critic)


def networks(cfg: TrainConfig, obs_size: int, n_actions: int, sparse: bool = True) -> tuple:
    """(actor, critic) as a run of `cfg` starts them: torch seeded with cfg.seed, then the
    actor built first (SB3's MlpPolicy shapes, orthogonal init); sparse: first layers that
    also take sparse rows (the same initial weights either way)."""
    import torch
    from torch import nn
    torch.manual_seed(cfg.seed)
    sizes = [obs_size, *cfg.net_arch]
    first = sparse_first_layer() if sparse else None
    return _mlp(nn, sizes, n_actions, 0.01, first), _mlp(nn, sizes, 1, 1.0, first)


def critic_path(path) -> Path:
    """Where the critic of the actor saved at path lies: critics/NAME.npz beside it."""
    p = Path(path)
    return p.parent / "critics" / p.name


def save_actor(actor, cfg: TrainConfig, path, steps: int, critic=None) -> Path:
    """The actor in the safe format at path (NAME.npz + NAME.json); returns the .npz. With
    formats its table and rules are null (it plays every table) and the formats are listed
    in its provenance. critic: saved too, as critics/NAME.npz (the same format, one output;
    `init` reads it back, so a run continues with its value function)."""
    from agents.learned.weights import save_weights
    from nertz_env.actions import N_ACTIONS

    from .folder import naming
    from nertz_env.core.observe import OBS_DIM
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    provenance = {"algorithm": "lean_ppo", "num_timesteps": int(steps), "seed": int(cfg.seed),
                  "opponents": [str(o) for o in cfg.opponents], "reward": cfg.reward,
                  "init": str(cfg.init or ""), "partner": cfg.partner,
                  "shift_cost": float(cfg.shift_cost), "snapshot_every": int(cfg.snapshot_every)}
    if cfg.formats:
        from .formats import describe, resolve
        provenance["formats"] = [describe(f) for f in resolve(cfg.formats)]
    meta, arrays = policy_arrays(actor, cfg.net_arch, OBS_DIM, N_ACTIONS, provenance,
                                 None if cfg.formats else dataclasses.asdict(cfg.rules()),
                                 None if cfg.formats else cfg.teams)
    if cfg.constraint:
        meta["constraint"] = cfg.constraint
    if critic is not None:
        cmeta, carrays = policy_arrays(critic, cfg.net_arch, OBS_DIM, 1,
                                       {**provenance, "role": "critic"}, None, None)
        critic_path(path).parent.mkdir(parents=True, exist_ok=True)
        with naming(critic_path(path)):
            save_weights(critic_path(path), cmeta, carrays)
    with naming(path):
        return save_weights(path, meta, arrays)[0]


def start_from(actor, critic, path) -> str:
    """Copy a saved model's weights into the fresh actor (and critic): an SB3 zip (read
    without unpickling: agents/learned/sb3_zip.py) gives both, a safe-format .npz the actor
    and, where critics/NAME.npz lies beside it (save_actor), the critic (else the critic
    starts fresh). ValueError naming the file when its shapes differ. Returns the line to
    log."""
    import torch
    from agents.learned.weights import is_weights, load_weights
    linears = [[m for m in net if hasattr(m, "weight")] for net in (actor, critic)]
    if is_weights(path):
        n = len(linears[0]) - 1
        src = []
        for f in (path, critic_path(path)):
            if f == critic_path(path) and not (Path(f).is_file()
                                               and Path(f).with_suffix(".json").is_file()):
                break
            _, arrays = load_weights(f)
            src.append([(arrays[f"hidden{i}_weight"], arrays[f"hidden{i}_bias"])
                        for i in range(n)] + [(arrays["action_weight"], arrays["action_bias"])])
        what = ("the actor and the critic (critics/ beside it)" if len(src) == 2
                else "the actor (the critic starts fresh)")
    else:
        from agents.learned.sb3_zip import load_sb3
        pol = load_sb3(path).policy
        pair = lambda m: (m.weight.detach().numpy(), m.bias.detach().numpy())  # noqa: E731
        src = [[pair(m) for m in pol.mlp_extractor.policy_net if hasattr(m, "weight")]
               + [pair(pol.action_net)],
               [pair(m) for m in pol.mlp_extractor.value_net if hasattr(m, "weight")]
               + [pair(pol.value_net)]]
        what = "the actor and the critic"
    for mods, arrs in zip(linears, src):
        if [tuple(m.weight.shape) for m in mods] != [w.shape for w, _ in arrs]:
            raise ValueError(f"init={str(path)!r}: its layers {[w.shape for w, _ in arrs]} do "
                             f"not fit net_arch {[tuple(m.weight.shape) for m in mods]}")
        with torch.no_grad():
            for m, (w, b) in zip(mods, arrs):
                m.weight.copy_(torch.from_numpy(np.asarray(w, np.float32)))
                m.bias.copy_(torch.from_numpy(np.asarray(b, np.float32)))
    return f"init: {what} from {path}"


def save_untrained(cfg: TrainConfig, path) -> Path:
    """The actor a run of `cfg` starts from, saved as `train` saves its last (the baseline
    that tells what the training added)."""
    from nertz_env.actions import N_ACTIONS
    from nertz_env.core.observe import OBS_DIM
    actor, _ = networks(cfg, OBS_DIM, N_ACTIONS)
    return save_actor(actor, cfg, path, 0)


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
    run = Path(cfg.out)
    state = check_out(cfg, overwrite)
    rollout = cfg.n_steps * cfg.num_envs
    guard = ExitStack()

    def made():
        guard.enter_context(stopped_cleanly(cfg, state, log))     # makes the folder
        write_json(run / "config.json", {"config": cfg.to_dict()})
        if begin is not None:
            begin()
        if cfg.formats:
            from .formats import describe, resolve, table_shares
            fmts = resolve(cfg.formats)
            log(f"formats: {len(fmts)} table formats (tables each), " + "; ".join(
                f"{describe(f)} ({n})" for f, n in table_shares(cfg.num_envs, fmts)))

    t0 = time.perf_counter()
    with guard:
        npz = train(cfg, log=log, log_every=max(rollout, cfg.timesteps // 10), begin=made)
    log(f"trained in {time.perf_counter() - t0:,.0f} s; run folder {run}: final.npz (the "
        "model, the safe format)" + (", checkpoints/step_N.npz" if any(
            (run / "checkpoints").glob("step_*.npz")) else "")
        + "; play it: nertz tournament --agents "
        + shlex.quote(f"ppo:{npz},{cfg.eval_against}")
        + ("" if cfg.formats else f" --teams {cfg.teams}"))
    return npz
