"""The lean PPO's policy (agents/training/lean_ppo.py trains it): the actor and critic
networks, their forward pieces, and their files.

- Network (`networks`): SB3's MlpPolicy for `net_arch`: a separate actor and critic, each
  Linear+Tanh layers of those widths, orthogonal init (gain sqrt 2 for hidden layers, 0.01 for
  the action head, 1 for the value head); the first layers may read sparse rows
  (`SparseFirstLayer`: the same products from the non-zero entries only).
- Forward (`masked_logp`, `sample`): illegal logits set to -1e8 (what MaskableCategorical
  writes) before the softmax, so an illegal move has probability 0 and is never drawn; a move
  drawn by Gumbel-max. `SelfPartner` plays the learner's teammate with the current actor
  (from its seat's rows of the run's observation, v0 or v1).
- Files (`save_actor`, `start_from`, `save_untrained`): the actor in the project's safe weight
  format (agents/learned/weights.py), the critic beside it as critics/NAME.npz; a run starts
  from either format or an SB3 zip; from a v1 model it trains on v1 observations
  (`run_observation`), a v0 model started into a v1 network widened.

torch is imported at the top, through nertz_env.optional.require (without the `[train]`
extra, importing this module is one line naming it); its classes are made here, at the top.
"""
from __future__ import annotations

import dataclasses
from pathlib import Path

import numpy as np

from agents.learned.sparse import (legal_draw, masked_head, masked_head_grad, sparse_forward,
                                   sparse_weight_grad)
from nertz_env.optional import require

from .config import TrainConfig

torch = require("torch", "train", "the lean PPO")


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


class SparseProduct(torch.autograd.Function):
    """The first layer's product from sparse rows (idx, val) of agents/learned/sparse.py
    `sparse_rows`, w_in the weight input-major: forward and weight gradient (numba kernels)."""

    @staticmethod
    def forward(ctx, weight, bias, idx, val, w_in):
        ctx.rows, ctx.d = (idx, val), weight.shape[1]
        return torch.from_numpy(sparse_forward(idx, val, w_in, bias.detach().numpy()))

    @staticmethod
    def backward(ctx, grad):
        g = grad.contiguous()
        g_in = sparse_weight_grad(*ctx.rows, g.numpy(), ctx.d)
        return torch.from_numpy(g_in).t(), g.sum(0), None, None, None


class SparseFirstLayer(torch.nn.Linear):
    """An nn.Linear that, given (idx, val) of agents/learned/sparse.py `sparse_rows` instead
    of a dense tensor, computes the same product from the non-zero entries only, forward and
    weight gradient (SparseProduct); dense input: nn.Linear's."""
    _w_in = None        # (the weight's version, its input-major copy): kept while unchanged

    def forward(self, x):
        if isinstance(x, tuple):
            key = (self.weight._version, self.weight.data_ptr())
            if self._w_in is None or self._w_in[0] != key:      # a rollout's steps reuse it
                self._w_in = (key, self.weight.detach().t().contiguous().numpy())
            return SparseProduct.apply(self.weight, self.bias, *x, self._w_in[1])
        return super().forward(x)


class MaskedHead(torch.autograd.Function):
    """(h [n, width] the actor's last hidden layer, the head's weight [A, width] and bias [A],
    masks bool [N, A] (numpy), rows [n], act [n]) -> (log-probability of act [n], entropy [n])
    under the masked softmax of the head's logits, computing the legal logits only
    (agents/learned/sparse.py masked_head), with its gradient to h, weight and bias
    (masked_head_grad); what the head, masked_logp, gather and the entropy of the masked
    probabilities give, up to float32 rounding."""

    @staticmethod
    def forward(ctx, h, weight, bias, masks, rows, act):
        logp, ent, ctx.legal = masked_head(h.detach().numpy(), weight.detach().numpy(),
                                           bias.detach().numpy(), masks, rows, act)
        return torch.from_numpy(logp), torch.from_numpy(ent.astype(np.float32))

    @staticmethod
    def backward(ctx, g_logp, g_ent):
        n = ctx.legal[0].shape[0]
        g1 = np.zeros(n, np.float32) if g_logp is None else g_logp.contiguous().numpy()
        g2 = np.zeros(n, np.float32) if g_ent is None else g_ent.contiguous().numpy()
        gh, gw, gb = masked_head_grad(ctx.legal, g1, g2)
        return (torch.from_numpy(gh), torch.from_numpy(gw), torch.from_numpy(gb), None,
                None, None)


def policy_arrays(actor, net_arch, obs_size: int, n_actions: int, provenance: dict,
                  rules: dict, teams: int) -> tuple:
    """(meta, arrays) of the safe format (agents/learned/weights.py) for the actor MLP; an
    actor that reads the v1 observation (obs_size 1019) is marked "observation": "v1"."""
    from agents.learned.observation import observation_width
    from agents.learned.weights import FORMAT, VERSION, array_names, array_shapes
    meta = {"format": FORMAT, "version": VERSION,
            "architecture": {"type": "mlp", "hidden": [int(w) for w in net_arch],
                             "activation": "tanh", "action_net": "masked"},
            "observation_size": obs_size, "action_size": n_actions, "arrays": {},
            "table": None if teams is None else {"teams": teams, "team_size": 1}, "rules": rules,
            "provenance": provenance}
    if obs_size == observation_width("v1"):
        meta["observation"] = "v1"
    meta["arrays"] = {k: list(v) for k, v in array_shapes(meta).items()}
    linears = [m for m in actor if hasattr(m, "weight")]
    tensors = [t for m in linears for t in (m.weight, m.bias)]
    names = array_names(len(net_arch))      # hidden0_weight, ..., action_weight, action_bias
    arrays = {n: t.detach().cpu().numpy().astype("<f4") for n, t in zip(names, tensors)}
    return meta, arrays


def masked_logp(actor, obs, mask):
    """Log-probabilities of every move with illegal ones at -1e8 before normalising
    (MaskableCategorical); obs: a dense tensor or sparse rows (SparseFirstLayer)."""
    return torch.log_softmax(actor(obs).masked_fill(~mask, -1e8), dim=1)


def sample(actor, obs, mask):
    """(action, log-probability of every move) of a Gumbel-max draw from the masked policy."""
    logp = masked_logp(actor, obs, mask)
    gumbel = -torch.log(-torch.log(torch.rand_like(logp).clamp_(1e-20, 1.0)))
    return (logp + gumbel).masked_fill(~mask, -float("inf")).argmax(dim=1), logp


def draw(actor, x, masks) -> tuple:
    """(action int64 [n], its log-probability float32 [n]) of a Gumbel-max draw from the
    masked policy at x (observations: a dense tensor, or sparse rows for a sparse first
    layer) under masks (bool [n, A] numpy), from the legal logits only
    (agents/learned/sparse.py legal_draw; the uniform draws torch's). Call under no_grad."""
    head = actor[-1]
    return legal_draw(actor[:-1](x).numpy(), head.weight.numpy(), head.bias.numpy(), masks,
                      lambda k: torch.rand(k, dtype=torch.float64).numpy())


class SelfPartner:
    """partner='self': the teammate's moves, drawn from the current actor under the masks
    `masks(obs, legal)` gives the learner (its constraint).

    The lean PPO's rollout draws them in the learner's own forward pass: before each step
    `gather(league)` reads the rows the league is about to ask for (its partner seats, in the
    order its `_external` passes them), the rollout samples them with the learner's rows and
    `answer(obs, ids)` leaves the moves, which the next act_batch returns (once, and only
    for those very observations); without an answer act_batch samples them itself."""

    def __init__(self, actor, masks):
        self.actor, self.masks = actor, masks
        self._answer = None
        self._driver = None

    def gather(self, league) -> tuple:
        """(obs float32 [n, width], legal bool [n, N_ACTIONS]) of the partner seats' rows
        the league's next step asks act_batch for (table-major, as envs/seats.py gathers
        them: the same kernel, before the tick); in a v1 env each row with its seat's memory
        block, from the env's public memory (league.py `seat_rows`: what the env would give
        a learner at that seat)."""
        from nertz_env.core.policies import POLICY_EXTERNAL
        from nertz_env.envs.seats import SeatDriver
        batch = league.batch
        if self._driver is None or self._driver.engine is not batch.engine:
            self._driver = SeatDriver(batch.engine)
        ext = batch.kinds == POLICY_EXTERNAL
        ext[:, batch.learner_seat] = False
        rows_t, rows_s = np.nonzero(ext)
        partner = np.zeros(ext.shape[1], bool)
        partner[league.partners] = True
        mine = partner[rows_s]
        obs, legal = self._driver.gather(rows_t[mine], rows_s[mine])
        return league.seat_rows(obs, rows_t[mine], rows_s[mine]), legal

    def answer(self, obs, ids) -> None:
        """The moves (int64 [n]) the next act_batch returns for exactly these observations."""
        self._answer = (obs, ids)

    def act_batch(self, obs, masks):
        o = np.asarray(obs, np.float32)
        if self._answer is not None:
            known, ids = self._answer
            self._answer = None
            if not np.array_equal(known, o):
                raise RuntimeError("partner='self': the rows asked for are not the rows "
                                   "gathered before the step")
            return ids
        with torch.no_grad():
            a, _ = sample(self.actor, torch.from_numpy(o),
                          torch.from_numpy(self.masks(o, masks)))
        return a.numpy().astype(np.int64)


def networks(cfg: TrainConfig, obs_size: int, n_actions: int, sparse: bool = True) -> tuple:
    """(actor, critic) as a run of `cfg` starts them: torch seeded with cfg.seed, then the
    actor built first (SB3's MlpPolicy shapes, orthogonal init); sparse: first layers that
    also take sparse rows (the same initial weights either way)."""
    torch.manual_seed(cfg.run.seed)
    sizes = [obs_size, *cfg.ppo.net_arch]
    first = SparseFirstLayer if sparse else None
    return (_mlp(torch.nn, sizes, n_actions, 0.01, first),
            _mlp(torch.nn, sizes, 1, 1.0, first))


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
    width = actor[0].weight.shape[1]            # v0's 791, or v1's 1019 (policy_arrays)
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    t = cfg.tables
    provenance = {"algorithm": "lean_ppo", "num_timesteps": int(steps), "seed": int(cfg.run.seed),
                  "opponents": [str(o) for o in cfg.league.opponents], "reward": t.reward,
                  "init": str(cfg.ppo.init or ""), "partner": t.partner,
                  "shift_cost": float(t.shift_cost),
                  "snapshot_every": int(cfg.league.snapshot_every)}
    if cfg.tables.formats:
        from .formats import describe, resolve
        provenance["formats"] = [describe(f) for f in resolve(cfg.tables.formats)]
    meta, arrays = policy_arrays(actor, cfg.ppo.net_arch, width, N_ACTIONS, provenance,
                                 None if cfg.tables.formats else dataclasses.asdict(cfg.rules()),
                                 None if cfg.tables.formats else cfg.tables.teams)
    if cfg.tables.constraint:
        meta["constraint"] = cfg.tables.constraint
    if critic is not None:
        cmeta, carrays = policy_arrays(critic, cfg.ppo.net_arch, width, 1,
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
    starts fresh). A v0 file into a v1 network (its first layers read 1019 floats) is widened:
    the memory block's columns start at zero, so it plays the v0 model's moves
    (agents/learned/v1.py). ValueError naming the file when its shapes differ. Returns the line
    to log."""
    from agents.learned.weights import is_weights, load_weights
    from nertz_env.core.observe import OBS_DIM
    from nertz_env.core.observe_memory import V1_OBS_DIM
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
    widened = ""
    for mods, arrs in zip(linears, src):
        w0, width = arrs[0][0], mods[0].weight.shape[1]
        if w0.ndim == 2 and w0.shape[1] == OBS_DIM and width == V1_OBS_DIM:
            arrs[0] = (np.pad(np.asarray(w0, np.float32), ((0, 0), (0, width - OBS_DIM))),
                       arrs[0][1])
            widened = ", widened to v1 (zero memory weights)"
        if [tuple(m.weight.shape) for m in mods] != [w.shape for w, _ in arrs]:
            raise ValueError(f"init={str(path)!r}: its layers {[w.shape for w, _ in arrs]} do "
                             f"not fit net_arch {[tuple(m.weight.shape) for m in mods]}")
        with torch.no_grad():
            for m, (w, b) in zip(mods, arrs):
                m.weight.copy_(torch.from_numpy(np.asarray(w, np.float32)))
                m.bias.copy_(torch.from_numpy(np.asarray(b, np.float32)))
    return f"init: {what} from {path}{widened}"


def init_observation(init) -> str | None:
    """The observation a run's init reads: "v1" for a safe-format model that says so
    (agents/learned/v1.py), "v0" for any other, None without init or where the file cannot
    be read (start_from then names its fault, as for any init)."""
    from agents.learned.observation import observation_of
    from agents.learned.weights import is_weights, load_weights
    if not init:
        return None
    try:
        return observation_of(load_weights(init)[0]) if is_weights(init) else "v0"
    except (ValueError, OSError):
        return None


def run_observation(cfg: TrainConfig) -> str:
    """The observation a lean run trains on (TrainConfig.observation): the one given, else its
    init's (a v1 model: `python -m agents.learned.v1` widens a v0 model into one that plays
    the same moves), else "v0". observation='v1' from a v0 init widens it (start_from);
    observation='v0' from a v1 init is refused, in one line before any work. Every piece
    reads the run's observation: formats (each format's env), partner='self' (SelfPartner
    gathers the partner seat's v1 rows) and snapshots (a v1 snapshot plays from its seat
    view: league.py)."""
    given, init = cfg.ppo.observation, init_observation(cfg.ppo.init)
    if given == "v0" and init == "v1":
        raise ValueError(f"observation='v0' contradicts init={str(cfg.ppo.init)!r}, which reads "
                         "the v1 observation (leave observation out or give 'v1'; a v1 net "
                         "cannot be narrowed to v0)")
    return given or init or "v0"


def save_untrained(cfg: TrainConfig, path) -> Path:
    """The actor a run of `cfg` starts from, saved as `train` saves its last (the baseline
    that tells what the training added); of the run's observation's width."""
    from agents.learned.observation import observation_width
    from nertz_env.actions import N_ACTIONS
    actor, _ = networks(cfg, observation_width(run_observation(cfg)), N_ACTIONS)
    return save_actor(actor, cfg, path, 0)
