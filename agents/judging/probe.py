"""Behaviour probes: what an agent does at named decision classes, over duplicate deals
(`nertz probe`; moved here from agents/arena/probe.py with the other judgements).

`probe(agents, config, deals, seed, opponents)` plays each agent at seat 0 of `deals` tables
(table d is deal d: NertzVecEnv deals table d of seed s the same hand whoever plays it, so
every agent meets the same deals) with `opponents` at every other seat, for one hand per
table. At every decision of seat 0 (a tick it is ready, with its legal moves and its
observation) the position is classified (CLASSES, from what the seat sees: its Nertz top,
waste top, River and legal moves) and the chosen move sorted into a response:

    class                 the position                                  the responses
    stream-lake           waste>lake is legal (the Stream card could    lake (alone or in a
                          go to the Lake, R10)                          stack), river, flip,
    stream-lake-fits      ... and the Nertz top builds on it (R11),     wait, other
                          and no waste>river is legal
    stream-lake-keep      ... the Nertz top builds on it and it can go
                          to the River too
    river-lake            some riverC>lake is legal and no waste>lake   lake (a River card),
                                                                        other

Per (agent, class): the decisions, the deals they came from and, per response, the rate
(responses / decisions) with a 95% interval over deals: the deal is the independent unit
(one hand per deal, and a hand's decisions are not independent), a ratio estimator with
its linearised variance, t quantile at deals - 1 degrees of freedom (coverage checked by
simulation in tests/judging/test_probe.py), clipped to [0, 1].

Every argument is checked before the first hand (`check_probe`): --deals within the limits
table's "probe_deals" (every deal of an agent is one table of a vector env held at once:
limits.py PROBE_DEAL_BYTES each, at most MAX_PROBE_BYTES), every agent made and told its
table (a pair at the solo seat 0 refused), the opponents seated. `progress=True`: a bar on
stderr over the hands (deals x agents), advancing as hands end.
"""
from __future__ import annotations

import dataclasses
import json
import math

import numpy as np
from numba import njit

from nertz_env.core.codec import (KIND_BUILD, KIND_FLIP, KIND_LAKE, KIND_STACK, KIND_WAIT,
                                  build_id, decode, lake_id)
from nertz_env.core.observe import OFF_NERTZ, OFF_WASTE, read_card, read_top
from nertz_env.core.policies import in_run
from nertz_env.core.rules import can_build_on
from nertz_env.encoding import MAX_RIVER, NO_CARD, SRC_RIVER0, SRC_WASTE

from ..stats.student_t import t_quantile_975

CLASSES = ("stream-lake", "stream-lake-fits", "stream-lake-keep", "river-lake")
RESPONSES = ("lake", "river", "flip", "wait", "other")
NO_CLASS = -1


@njit(cache=True, error_model="numpy")
def classify(obs, masks, actions, cls, resp):
    """cls[r, c]: row r is of class c; resp[r]: the response index of its chosen move
    (RESPONSES; for river-lake: lake or other)."""
    for r in range(obs.shape[0]):
        row, m = obs[r], masks[r]
        kd, src, dst, i, length = decode(actions[r])
        w_lake = m[lake_id(SRC_WASTE)] != 0
        w_river = False
        for c in range(MAX_RIVER):
            if m[build_id(SRC_WASTE, c)] != 0:
                w_river = True
        r_lake = False
        for c in range(MAX_RIVER):
            if m[lake_id(SRC_RIVER0 + c)] != 0:
                r_lake = True
        n_top, w_top = read_card(row, OFF_NERTZ), read_card(row, OFF_WASTE)
        fits = n_top != NO_CARD and w_top != NO_CARD and can_build_on(n_top, w_top)
        for c in range(4):
            cls[r, c] = False
        resp[r] = 4
        if w_lake:
            cls[r, 0] = True
            cls[r, 1] = fits and not w_river
            cls[r, 2] = fits and w_river
            if kd == KIND_LAKE and src == SRC_WASTE:
                resp[r] = 0
            elif kd == KIND_STACK and in_run(w_top, read_top(row, src), length):
                resp[r] = 0
            elif kd == KIND_BUILD and src == SRC_WASTE:
                resp[r] = 1
            elif kd == KIND_FLIP:
                resp[r] = 2
            elif kd == KIND_WAIT:
                resp[r] = 3
        elif r_lake:
            cls[r, 3] = True
            if (kd == KIND_LAKE or kd == KIND_STACK) and src >= SRC_RIVER0:
                resp[r] = 0


def ratio_ci(k, n) -> tuple:
    """(rate, low, high) of sum(k) / sum(n) with a 95% interval over the units (deals) of the
    per-unit counts k, n: the linearised (delta-method) variance of a ratio estimator."""
    k, n = np.asarray(k, np.float64), np.asarray(n, np.float64)
    keep = n > 0
    k, n = k[keep], n[keep]
    D = len(n)
    if D == 0:
        return float("nan"), float("nan"), float("nan")
    rate = k.sum() / n.sum()
    if D < 2:
        return float(rate), float("nan"), float("nan")
    z = k - rate * n
    se = math.sqrt(D / (D - 1) * float((z ** 2).sum())) / n.sum()
    h = t_quantile_975(D - 1) * se
    return float(rate), max(0.0, float(rate - h)), min(1.0, float(rate + h))   # a rate's range


@dataclasses.dataclass
class ProbeResult:
    """Per (agent, class): decisions, deals and per-response rates with intervals (`rows`)."""
    rows: list
    config: dict
    deals: int
    seed: int
    opponents: str

    def table(self) -> str:
        lines = ["| agent | class | decisions | deals | " + " | ".join(RESPONSES) + " |",
                 "|---|---|---|---|" + "---|" * len(RESPONSES)]
        for r in self.rows:
            cells = []
            for name in RESPONSES:
                x = r["responses"].get(name) or {"rate": None}
                if x["rate"] is None:
                    cells.append("")
                elif x["low"] is None:                       # one deal: no interval
                    cells.append(f"{x['rate']:.2f}")
                else:
                    cells.append(f"{x['rate']:.2f} [{x['low']:.2f}, {x['high']:.2f}]")
            lines.append(f"| {r['agent']} | {r['class']} | {r['decisions']:,} | {r['deals']} | "
                         + " | ".join(cells) + " |")
        return "\n".join(lines)

    def to_json(self) -> str:
        return json.dumps({"deals": self.deals, "seed": self.seed, "opponents": self.opponents,
                           "config": self.config, "rows": self.rows}, indent=1)


def probe_counts(agent, config, deals: int, seed: int, opponents: str, bar=None):
    """n [deals, classes] decisions and k [deals, classes, responses] of one agent; `bar`
    (a progress bar, progress.py) advances by the hands that end."""
    from nertz_env.envs.opponents import for_table
    from nertz_env.envs.vector import NertzVecEnv
    env = NertzVecEnv(num_envs=deals, config=config, seed=seed, opponents=opponents)
    agent = for_table(agent, config)
    obs = env.reset()
    alive = np.ones(deals, bool)
    n = np.zeros((deals, len(CLASSES)), np.int64)
    k = np.zeros((deals, len(CLASSES), len(RESPONSES)), np.int64)
    cls = np.zeros((deals, len(CLASSES)), np.bool_)
    resp = np.zeros(deals, np.int64)
    while alive.any():
        masks = np.asarray(env.action_masks())
        acts = np.asarray(agent.act_batch(obs, masks), np.int64)
        classify(np.ascontiguousarray(obs, np.float32), np.ascontiguousarray(masks, np.int8),
                 acts, cls, resp)
        live = alive[:, None] & cls
        n += live
        d, c = np.nonzero(live)
        np.add.at(k, (d, c, resp[d]), 1)
        obs, _, done, _ = env.step(acts)
        ended = alive & np.asarray(done, bool)
        alive &= ~ended
        if bar is not None and ended.any():
            bar.update(int(ended.sum()))
    return n, k


def check_probe(agents: dict, config, deals, seed, opponents: str, names=None) -> dict:
    """{name: Agent} of every spec, once each of the arguments is checked: ValueError naming
    the first bad one (`names` maps deals, seed, opponents, agent to what the caller calls
    them: the CLI's options). Nothing is played before it returns: every agent is made and
    told its table, the opponents are seated at one table."""
    from nertz_env.config import RulesConfig
    from nertz_env.envs.opponents import for_table
    from nertz_env.envs.vector import NertzVecEnv

    from ..base import Pair
    from ..registry import make_agent
    from ..arena.limits import check_int
    names = {"deals": "deals", "seed": "seed", "opponents": "opponents", "agent": "agent",
             **(names or {})}
    check_int("probe_deals", deals, names["deals"])          # memory: limits.py
    check_int("seed", seed, names["seed"])
    if not isinstance(config, RulesConfig):
        raise ValueError(f"config must be a RulesConfig, got {type(config).__name__}")
    if not isinstance(agents, dict) or not agents:
        raise ValueError(f"{names['agent']}: name at least one agent")
    made = {}
    for name, spec in agents.items():
        try:
            made[name] = make_agent(spec, seed=seed)
            for_table(made[name], config)
        except ValueError as err:      # its message names the spec: 'agent ...' or not
            text = str(err)
            raise ValueError(f"{names['agent']} {text[6:]}" if text.startswith("agent ")
                             else f"{names['agent']} {spec!r}: {text}") from None
        if isinstance(made[name], Pair) and (config.team_sizes or (1,))[0] != 2:
            sizes = ",".join(map(str, config.team_sizes)) if config.team_sizes else "all solo"
            raise ValueError(f"{names['agent']} {spec!r} is a pair and the probed seat is team 0, "
                             f"a solo team (team_sizes: {sizes}): pairs "
                             "play two-player teams only (R4); give team 0 two players "
                             "(--team-sizes 2,..)")
    if not isinstance(opponents, str) or not opponents.strip():
        raise ValueError(f"{names['opponents']}={opponents!r} must be an agent spec such as "
                         "'heuristic:style=river-builder'")
    try:
        NertzVecEnv(num_envs=1, config=config, seed=seed, opponents=opponents)
    except ValueError as err:
        text = str(err).removeprefix("opponents: ")
        raise ValueError(f"{names['opponents']} {opponents!r}: {text}") from None
    return made


def probe(agents: dict, config, deals: int = 200, seed: int = 0,
          opponents: str = "heuristic:style=river-builder", progress: bool = False,
          names=None) -> ProbeResult:
    """Every agent ({name: spec}) probed on the same deals (module docstring). Every
    argument is checked first (check_probe; `names`: what the refusals call them).
    progress: a bar on stderr over every agent's hands (deals x agents, one per table)."""
    from ..arena.progress import progress_bar
    made = check_probe(agents, config, deals, seed, opponents, names)
    rows = []
    bar = progress_bar(deals * len(made), progress,
                       f"probe: {len(made)} agent{'s' if len(made) > 1 else ''}")
    try:
        for name, spec in agents.items():
            n, k = probe_counts(made[name], config, deals, seed, opponents, bar)
            rows += _rows(name, spec, n, k)
    finally:
        bar.close()
    return ProbeResult(rows, {f.name: getattr(config, f.name) for f in
                              dataclasses.fields(config) if f.init}, deals, seed, opponents)


def _rows(name, spec, n, k) -> list:
    """The rows of one agent: per class, its decisions, deals and per-response rates."""
    rows = []
    for c, cname in enumerate(CLASSES):
        shown = RESPONSES if cname != "river-lake" else ("lake", "other")
        res = {}
        for r, rname in enumerate(RESPONSES):
            if rname in shown:
                rate, lo, hi = (None if not np.isfinite(x) else x
                                for x in ratio_ci(k[:, c, r], n[:, c]))
                res[rname] = {"rate": rate, "low": lo, "high": hi}   # None: no decisions
        rows.append({"agent": name, "spec": spec, "class": cname,
                     "decisions": int(n[:, c].sum()), "deals": int((n[:, c] > 0).sum()),
                     "responses": res})
    return rows
