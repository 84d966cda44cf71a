"""SearchAgent: one-step rollout search over a core bot, with the core as its simulator.

Per call (agents/base.py SeatView: every table of the batch where it holds a ready seat):
- the base move: the base bot's move for the seat, by the core bot's rule on the engine's
  state (nertz_env/core/policies.py scored_moves, all rows in one numba call; the move
  agents/python_policies.py computes from the seat's observation, tests/search); with
  base=learned, the shipped net's move on the seat's observation;
- candidates: the seat's legal moves under `useful-shifts` (agents/constraints.py: no River
  shifts back and forth), Wait only where the base waits, the base move always; fewer than
  two: the base move, no search;
- W worlds per decision (worlds_at: the worlds option, or the table's default by the rules
  of the view's table, 32 at 2 teams and 64 at 3 or more: spec.py table_worlds) from the
  belief (nertz_env/core/worlds.py fork_worlds: uniform or
  memory re-deal what no seat sees; oracle keeps the true cards), seeded by (seed, the deal's
  key, hand, tick, seat), each world in C slots, one per candidate, all with the world's
  priority key (common random numbers);
- in every slot the candidate is the seat's forced first move; every other seat plays its
  model's move on the position (its team's seats the rollout policy, by default the base;
  the other teams the opp policy: their visible cards are the same in every world, so it is
  their move on the real table); then every seat its policy for `horizon` ticks
  (nertz_env/core/fork.py rollout, one call for all decisions of the call). A policy is a
  core bot or `learned`, the shipped net the table's rules pick (its `for_table`
  core_networks, the arrays of NumpyPolicy's layers), played in the kernel
  (nertz_env/core/net_policy.py; near ties may go the other way than `learned`'s own);
- gain of candidate c: the mean over worlds of its relative points minus the base move's;
  the best gain (first best) is played when it exceeds `margin` and (option se=K > 0) K
  standard errors of it over the worlds, else the base move. With leaf=value (or a net's
  PATH.npz) a rollout stopped by the horizon before the hand's end adds the value net's
  estimate of the relative points to come, read from every seat's observation of the
  sampled world (nertz_env/core/leaf_value.py; agents/search/leaf.py reads the net).
evaluate(view) returns the search per row (SearchResult: candidates, gains, their standard
errors over the worlds, the move chosen); act_view plays its moves.
The real state is only read (fork_worlds copies it); same seed, same moves.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from nertz_env.bot_specs import parse_bot
from nertz_env.core.codec import N_ACTIONS, WAIT
from nertz_env.core.fork import allocate_rollouts, rollout, state_pairs
from nertz_env.core.leaf_value import allocate_leaf
from nertz_env.core.net_policy import allocate_net_work, net_arrays
from nertz_env.core.observe import OBS_DIM
from nertz_env.core.policies import N_KNOBS, POLICY_NET, scored_moves
from nertz_env.core.state import make_params
from nertz_env.core.worlds import BELIEFS, fork_worlds, world_seeds

from ..base import Agent
from ..bots import ScoredAgent
from ..constraints import check_constraint, constrain
from .leaf import load_leaf
from .spec import NET_BASES, SearchOptions, table_worlds

CANDIDATE_CONSTRAINT = "useful-shifts"
NET = (POLICY_NET, np.zeros(N_KNOBS, np.int64))     # a rollout seat played by the net


def kernel_net_problem(policy):
    """Why a NumpyPolicy cannot be played in the rollout kernel, or None."""
    from ..learned.v1 import reads_v1
    from ..learned.weights import NumpyPolicy
    if not isinstance(policy, NumpyPolicy):
        return "is not a safe-format net"
    if reads_v1(policy) or policy.obs_size != OBS_DIM or policy.n_actions != N_ACTIONS:
        return f"does not read the {OBS_DIM}-value v0 observation"
    if not (policy.deterministic and policy.masked and policy.activation in ("tanh", "relu")):
        return "is not a deterministic masked tanh/relu net"
    return None


def rollout_nets(agent, name: str) -> None:
    """ValueError (one line) unless every model `agent` (learned) may play can be played in
    the rollout kernel: checked when the search agent is made, before any play."""
    for key, policy in sorted(getattr(agent, "policies", {}).items()):
        problem = kernel_net_problem(policy)
        if problem:
            raise ValueError(f"agent {name!r}: rollout/opp=learned: its model {key} "
                             f"{problem}; the rollouts play only v0 masked MLPs")


def family_rollout_net(family, config, who: str) -> tuple:
    """(NetArrays, int64 [S] each seat's net index) of a learned agent (`learned`, `ppo:`)
    told `config`'s table: its core_networks, one entry per distinct (net, constraint bits) in
    seat order, net_arrays with TIE_GAP. ValueError (one line, starting with `who`) where a
    seat's net cannot be played in the rollout kernel."""
    from ..learned.weights import TIE_GAP
    picks = family.for_table(config).core_networks()
    if picks is None or any(kernel_net_problem(p) for p, _ in picks):
        raise ValueError(f"{who} cannot be played in the rollouts at this table (not a v0 "
                         "masked MLP)")
    uniq = []
    for p, b in picks:
        if not any(p is q and int(b) == c for q, c in uniq):
            uniq.append((p, int(b)))
    net = net_arrays([(p.hidden_layers, p.action_weight, p.action_bias, p.activation, b)
                      for p, b in uniq], TIE_GAP)
    index = np.array([next(k for k, (q, c) in enumerate(uniq) if p is q and int(b) == c)
                      for p, b in picks], np.int64)
    return net, index


def _scored(spec: str) -> ScoredAgent:
    bot = parse_bot(spec)
    return ScoredAgent(bot.style, name=bot.name, **bot.knobs)


class SearchResult(NamedTuple):
    """One row's search (SearchAgent.evaluate)."""
    candidates: tuple        # the candidate moves, the base move first
    gains: np.ndarray        # float64 [C] mean over worlds of each one's points minus the base's
    se: np.ndarray           # float64 [C] their standard errors over the worlds (nan: 1 world)
    move: int                # the move played (choose)
    searched: bool           # two or more candidates: rollouts were played


class SearchAgent(Agent):
    """`search:...` (agents/search/spec.py options; module docstring: the decision)."""

    seat_view = True

    def __init__(self, options: SearchOptions, name: str = "search", seed=None,
                 make_base=None):
        self.options = options
        self.name = name
        self.seed = int(options.seed if options.seed is not None else (seed or 0))
        if options.base in NET_BASES:                # the base move from a net
            if make_base is None:
                raise ValueError(f"agent {name!r}: base={options.base} needs make_base, the "
                                 "registry's agent maker (agents.registry.make_agent)")
            self.base = make_base(options.base, seed=self.seed)
        else:
            self.base = _scored(options.base)
        self.net = None                  # the net of rollout/opp=learned (shared with a base)
        if NET_BASES[0] in (options.rollout, options.opp):
            if make_base is None:
                raise ValueError(f"agent {name!r}: rollout/opp=learned needs make_base, the "
                                 "registry's agent maker (agents.registry.make_agent)")
            self.net = self.base if options.base in NET_BASES else make_base(
                NET_BASES[0], seed=self.seed)
            rollout_nets(self.net, name)
        self.team_bot = self._policy(options.rollout or options.base)   # the team in rollouts
        self._base_told = (None, None)   # (config, the net base told that table)
        self._net_told = (None, None)    # (config, (NetArrays, net index per seat))
        self._work = None                # the net seats' work rows, grown as needed
        self.opp = self._policy(options.opp)
        self.belief = BELIEFS[options.belief]
        self.cid = check_constraint(CANDIDATE_CONSTRAINT)
        self._buffers = {}               # config -> Rollouts, grown as needed
        self.leaf_net = None if options.leaf == "none" else load_leaf(options.leaf, name)
        self._leaf = None                # the leaf net's work rows (allocate_leaf), grown
        self.decisions = 0               # searched decisions (two or more candidates)
        self.deviations = 0              # of them, where a candidate beat the base

    def worlds_at(self, config) -> int:
        """The worlds this agent plays at a table of `config` (a RulesConfig): its worlds
        option, else the table's default (spec.py table_worlds). Every decision reads it from
        its seat view's table, so no search plays before it knows its table."""
        return table_worlds(self.options.worlds, config)

    def _policy(self, spec):
        return None if spec in NET_BASES else _scored(spec)

    def rollout_net(self, config):
        """(NetArrays, int64 [S] each seat's net index) of the net told `config`'s table."""
        if self._net_told[0] is not config:
            net, index = family_rollout_net(self.net, config, f"agent {self.name!r}: "
                                            "rollout/opp=learned")
            self._net_told = (config, (net, index))
        return self._net_told[1]

    def numba_kernels(self) -> tuple:
        """The numba kernels this agent's first decision compiles, for a probe of numba's
        cache (agents/arena/progress.py kernel_cached: a notice before the wait): its
        rollout kernel (serial, or parallel with threads > 1; it holds the bots' and the
        net's moves), the table copy and its belief's re-deal."""
        from nertz_env.core.fork import copy_tables, rollout_batch, rollout_range
        from nertz_env.core.memory import redeal_memory_slots
        from nertz_env.core.worlds import redeal_uniform_slots
        o = self.options
        kernels = [rollout_batch if o.threads > 1 else rollout_range, copy_tables]
        kernels += {"uniform": [redeal_uniform_slots],
                    "memory": [redeal_memory_slots]}.get(o.belief, [])
        return tuple(kernels)

    def act(self, observation, action_mask) -> int:
        return int(self.act_batch(np.asarray(observation)[None],
                                  np.asarray(action_mask)[None])[0])

    def act_batch(self, observations, action_masks) -> np.ndarray:
        raise ValueError(f"agent {self.name!r} searches the table and plays only where it is "
                         "passed a seat view (nertz tournament, nertz experiment, nertz play "
                         "--human, the envs' opponents); act_batch has no view")

    def candidates(self, obs, masks, base) -> list:
        """Per row: the candidate moves (base first), as in the module docstring."""
        kept = constrain(obs, masks, self.cid)
        out = []
        for r in range(len(obs)):
            moves = [int(a) for a in np.flatnonzero(kept[r])
                     if a != base[r] and (a != WAIT or base[r] == WAIT)]
            out.append([int(base[r])] + moves)
        return out

    def _rollouts(self, config, M):
        ro = self._buffers.get(config)
        if ro is None or ro.state.tick.shape[0] < M:
            cap = max(M, 2 * (0 if ro is None else ro.state.tick.shape[0]), 256)
            ro = allocate_rollouts(config, cap)
            self._buffers = {config: ro}
        return ro

    def evaluate(self, view) -> list:
        """One SearchResult per row of `view` (agents/base.py SeatView): the candidates (base
        first), each one's mean paired gain over the base move and its standard error over
        the worlds, and the move the deviation rule chooses (choose). Rows with fewer than
        two candidates are not searched: the base move alone, gain 0, not counted."""
        obs, masks = np.asarray(view.observations), np.asarray(view.masks)
        if isinstance(self.base, ScoredAgent):
            base = scored_moves(view.state, view.config, view.rows, view.seats, masks,
                                self.base.knobs)
        else:
            if self._base_told[0] is not view.config:      # the net told the table's rules
                self._base_told = (view.config, self.base.for_table(view.config))
            base = np.asarray(self._base_told[1].act_batch(obs, masks), np.int64)
        cands = self.candidates(obs, masks, base)
        out = [SearchResult((int(base[r]),), np.zeros(1), np.zeros(1), int(base[r]), False)
               for r in range(len(obs))]
        todo = [r for r in range(len(obs)) if len(cands[r]) > 1]
        if not todo:
            return out
        opt, config, st = self.options, view.config, view.state
        W = self.worlds_at(config)
        M = sum(W * len(cands[r]) for r in todo)
        ro = self._rollouts(config, M)
        pairs, self_pairs = state_pairs(st, ro.state), state_pairs(ro.state, ro.state)
        seat_team = np.asarray(config.seat_team)
        base_bot, opp_bot = (NET if b is None else b.core_policy()
                             for b in (self.team_bot, self.opp))
        net = index = work = None
        if self.net is not None and (self.team_bot is None or self.opp is None):
            net, index = self.rollout_net(config)
            if self._work is None or self._work.obs.shape[0] < ro.state.tick.shape[0] \
                    or self._work.h.shape[2] != net.b0.shape[1]:
                self._work = allocate_net_work(ro.state.tick.shape[0], net.b0.shape[1])
            work = self._work
        ro.first[:M] = -1
        slot_sets, j = [], 0
        for r in todo:
            t, s = int(view.rows[r]), int(view.seats[r])
            C = len(cands[r])
            key = [self.seed, int(view.deal_keys[t]), int(st.hand[t]), int(st.tick[t]), s]
            keys, deal_seeds = world_seeds(key, W)
            slots = fork_worlds(st, t, ro.state, ro.scratch, j, C, keys, deal_seeds,
                                self.belief, pairs, self_pairs,
                                view.memory if opt.belief == "memory" else None)
            mine = seat_team == seat_team[s]
            for q, bot in ((mine, base_bot), (~mine, opp_bot)):
                ro.kinds[j:j + W * C, q] = bot[0]
                ro.knobs[j:j + W * C, q] = bot[1]
                if bot[0] == POLICY_NET:
                    ro.knobs[j:j + W * C, q, 0] = index[q]
            ro.seats[j:j + W * C] = s
            for c, a in enumerate(cands[r]):
                ro.first[slots[:, c], s] = a
            slot_sets.append(slots)
            j += W * C
        leaf = None
        if self.leaf_net is not None:                  # leaf=: the value at the horizon
            if self._leaf is None or self._leaf.obs.shape[0] < M:
                self._leaf = allocate_leaf(self.leaf_net, ro.state.tick.shape[0])
            leaf = self._leaf
        rollout(ro, make_params(config), opt.horizon, 0, M, parallel=opt.threads > 1,
                threads=opt.threads, net=net, work=work, leaf=leaf)
        for r, slots in zip(todo, slot_sets):
            v = ro.values[slots]                                   # [W, C]
            d = v - v[:, :1]
            gain = d.mean(axis=0)
            se = d.std(axis=0, ddof=1) / np.sqrt(W) if W > 1 else np.full(len(gain), np.nan)
            best = self.choose(gain, se)
            self.decisions += 1
            self.deviations += best != 0
            out[r] = SearchResult(tuple(cands[r]), gain, se, cands[r][best], True)
        return out

    def choose(self, gain, se) -> int:
        """The index of the candidate played: the first best gain when it exceeds `margin`
        and (se option K > 0) K standard errors of that gain, else 0 (the base move)."""
        best = int(np.argmax(gain))
        k = self.options.se
        if gain[best] > self.options.margin and (k == 0 or gain[best] > k * se[best]):
            return best
        return 0

    def act_view(self, view) -> np.ndarray:
        return np.array([res.move for res in self.evaluate(view)], np.int64)
