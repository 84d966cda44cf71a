"""SearchAgent: one-step rollout search over a core bot, with the core as its simulator.

Per call (agents/base.py SeatView: every table of the batch where it holds a ready seat):
- the base move: the base bot's move for the seat, by the core bot's rule on the engine's
  state (nertz_env/core/policies.py scored_moves, all rows in one numba call; the move
  agents/python_policies.py computes from the seat's observation, tests/search); with
  base=learned, the shipped net's move on the seat's observation;
- candidates: the seat's legal moves under `useful-shifts` (agents/constraints.py: no River
  shifts back and forth), Wait only where the base waits, the base move always; fewer than
  two: the base move, no search;
- W worlds per decision from the belief (nertz_env/core/worlds.py fork_worlds: uniform or
  memory re-deal what no seat sees; oracle keeps the true cards), seeded by (seed, the deal's
  key, hand, tick, seat), each world in C slots, one per candidate, all with the world's
  priority key (common random numbers);
- in every slot the candidate is the seat's forced first move; every other seat plays its
  model's move on the position (its team's seats the rollout bot, by default the base; the
  other teams the opp bot: their visible cards are the same in every world, so it is their
  move on the real table); then
  every seat its bot for `horizon` ticks (nertz_env/core/fork.py rollout, one call for all
  decisions of the call);
- gain of candidate c: the mean over worlds of its relative points minus the base move's;
  the best gain (first best) is played when it exceeds `margin` and (option se=K > 0) K
  standard errors of it over the worlds, else the base move.
evaluate(view) returns the search per row (SearchResult: candidates, gains, their standard
errors over the worlds, the move chosen); act_view plays its moves.
The real state is only read (fork_worlds copies it); same seed, same moves.
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np

from nertz_env.bot_specs import parse_bot
from nertz_env.core.codec import WAIT
from nertz_env.core.fork import allocate_rollouts, rollout, state_pairs
from nertz_env.core.policies import scored_moves
from nertz_env.core.state import make_params
from nertz_env.core.worlds import BELIEFS, fork_worlds, world_seeds

from ..base import Agent
from ..bots import ScoredAgent
from ..constraints import check_constraint, constrain
from .spec import NET_BASES, SearchOptions

CANDIDATE_CONSTRAINT = "useful-shifts"


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
        self.team_bot = _scored(options.rollout or options.base)   # the team in rollouts
        self._base_told = (None, None)   # (config, the net base told that table)
        self.opp = _scored(options.opp)
        self.belief = BELIEFS[options.belief]
        self.cid = check_constraint(CANDIDATE_CONSTRAINT)
        self._buffers = {}               # config -> Rollouts, grown as needed
        self.decisions = 0               # searched decisions (two or more candidates)
        self.deviations = 0              # of them, where a candidate beat the base

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
        W = opt.worlds
        M = sum(W * len(cands[r]) for r in todo)
        ro = self._rollouts(config, M)
        pairs, self_pairs = state_pairs(st, ro.state), state_pairs(ro.state, ro.state)
        seat_team = np.asarray(config.seat_team)
        base_bot, opp_bot = self.team_bot.core_policy(), self.opp.core_policy()
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
            ro.seats[j:j + W * C] = s
            for c, a in enumerate(cands[r]):
                ro.first[slots[:, c], s] = a
            slot_sets.append(slots)
            j += W * C
        rollout(ro, make_params(config), opt.horizon, 0, M, parallel=opt.threads > 1,
                threads=opt.threads)
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
