"""The league of opponents: what every other seat of a training table plays.

League: `opponents` is a list of entries, each an agent spec for every other seat or
per-seat specs joined by '+' ("greedy+heuristic+heuristic" at 4 teams). Core bots (random,
greedy, heuristic styles) play inside numba; any other make_agent spec (`learned`,
`ppo:PATH`, `rllib:...`) plays from outside it, as the snapshots do (below). Every table draws
an entry when it is dealt a hand, with weights that favour the entries the learner beats
least: softmax(-paired difference / priority_temperature), mixed with `priority_uniform`
of uniform (`league_weights`), where the paired differences come from the evaluation's
matches against every entry (evaluation.py, `eval_league_deals`; uniform until the first
evaluation).

Snapshots (`snapshot_every`): every that many steps the learner is saved as
snapshots/step_N.zip (checkpoints.py `save_snapshot`) and joins the league as an entry
"snapshot:step_N" (at most `max_snapshots`, the oldest leaves), played at every other seat
of the tables that draw it by FrozenPolicy exactly as make_agent("ppo:PATH") plays
(deterministic); a v1 learner's snapshots are v1 models, played as `ppo:` plays them: from
their seats' view (act_view over the env's public memory, the rows the env would give a learner
at those seats), as is any seat-view entry (a v1 `ppo:` model: a v0 env then keeps the memory
for it). Those seats, and every seat of a non-core agent, are POLICY_EXTERNAL in the env's bot
arrays: per step one numba call gathers all their rows (nertz_env/envs/learner_batch.py
`external`) and each distinct spec runs one act_batch over all of its rows, whatever tables,
seats and entries they sit at. Evaluations play the learner against each entry alike.

`make_env` builds the training env (NertzVecEnv -> LeagueVecEnv -> VecMonitor); with table
formats, formats.py's make_formats_env makes one per format, stepped as one FormatsVecEnv. The entries
themselves (`parse_entry`, `LeagueEntry`, `league_weights`, `SNAPSHOT`) are entries.py's,
without torch, re-exported here. Needs the `[train]` extra: stable-baselines3 is imported at
the top (LeagueVecEnv is a VecEnvWrapper), through nertz_env.optional, whose error names the
extra.
"""
from __future__ import annotations

import numpy as np

from nertz_env.core.policies import POLICY_EXTERNAL
from nertz_env.core.scoring import relative_points
from nertz_env.envs.opponents import for_table, is_viewer
from nertz_env.optional import require

from ..learned.ppo import other_tables_expected
from .entries import SNAPSHOT, LeagueEntry, league_weights, parse_entry

_vec_env = require("stable_baselines3.common.vec_env", "train", "the training league")


class LeagueVecEnv(_vec_env.VecEnvWrapper):
    """A NertzVecEnv whose tables each play one league entry at a time: every table draws an
    entry (league weights) when it is dealt a hand (at reset and when a hand ends), and the
    entry's bots are written into that table's rows of the env's per-table bot arrays
    (kinds / knobs [tables, seats]), which the core plays inside numba. A snapshot entry
    marks those seats POLICY_EXTERNAL instead: per step the env gathers every such seat of
    every table in one numba call and calls `_external` once, which runs one act_batch per
    snapshot over all the rows of the tables that drew it (at most K forward passes for K
    live snapshots). Per entry it counts the finished hands and the learner's mean relative
    points (`stats()`).

    partner='self': the learner's teammates (a two-player team) are POLICY_EXTERNAL at every
    table, whatever the entry, and play `self_agent` (set_self_agent: the learner's current
    network), so the learner trains beside itself, as it plays when a model takes both
    seats of its team."""

    def __init__(self, venv, entries, seed: int = 0, temperature: float = 2.0,
                 uniform: float = 0.2, partner: str = "league"):
        super().__init__(venv)                       # VecEnvWrapper's
        self.batch = venv.batch
        self.learner_seat = venv.learner_seat
        self.others = [s for s in range(venv.config.num_seats) if s != self.learner_seat]
        self.team = venv.config.seat_team[self.learner_seat]
        if partner not in ("league", "self"):
            raise ValueError(f"partner={partner!r} must be 'league' or 'self'")
        self.partners = [s for s in self.others if venv.config.seat_team[s] == self.team] \
            if partner == "self" else []
        self.self_agent = None
        self.rng = np.random.default_rng(np.random.SeedSequence([int(seed), 7]))
        self.temperature, self.uniform = float(temperature), float(uniform)
        self.table_entry = np.zeros(self.num_envs, np.int64)
        self.set_entries(entries)

    def set_entries(self, entries, diffs=None) -> None:
        """The hook for the league's opponents: a list of entries (core bot specs, '+'-joined
        per-seat specs, or LeagueEntry), optionally with each one's paired difference (the
        learner minus the entry, points per hand; NaN: unknown). Every table draws anew."""
        parsed = [parse_entry(e, len(self.others), where=f"entries[{i}]")
                  for i, e in enumerate(entries)]
        if not parsed:
            raise ValueError("entries must name at least one opponent")
        d = np.full(len(parsed), np.nan) if diffs is None else np.asarray(diffs, float)
        if d.shape != (len(parsed),):
            raise ValueError(f"diffs: one number per entry ({len(parsed)}), got {d.shape}")
        self.entries, self.diffs = parsed, d
        self.weights = league_weights(d, self.temperature, self.uniform)
        self.hands = np.zeros(len(parsed), np.int64)
        self.rel_sum = np.zeros(len(parsed), np.float64)
        self._hook()
        self._draw(np.arange(self.num_envs))

    def add_snapshot(self, path, keep: int) -> None:
        """A frozen copy of the learner (a saved model zip) joins the league with no
        evaluation yet (NaN: the mean weight); beyond `keep` snapshots the oldest leaves.
        Tables keep their entries; only those that held a dropped one draw anew."""
        new = parse_entry(f"{SNAPSHOT}{path}", len(self.others), where="snapshot")
        snaps = [i for i, en in enumerate(self.entries) if en.path is not None]
        drop = set(snaps[:max(0, len(snaps) + 1 - int(keep))])
        kept = [i for i in range(len(self.entries)) if i not in drop]
        remap = np.full(len(self.entries), -1, np.int64)
        remap[kept] = np.arange(len(kept))
        self.entries = [self.entries[i] for i in kept] + [new]
        self.diffs = np.append(self.diffs[kept], np.nan)
        self.hands = np.append(self.hands[kept], 0)
        self.rel_sum = np.append(self.rel_sum[kept], 0.0)
        self.weights = league_weights(self.diffs, self.temperature, self.uniform)
        self.table_entry = remap[self.table_entry]
        self._hook()
        self._draw(np.flatnonzero(self.table_entry < 0))

    def snapshot_paths(self) -> list:
        """The live snapshots' model zips, oldest first."""
        return [en.path for en in self.entries if en.path is not None]

    def _hook(self) -> None:
        """The env calls _external per step only while an entry has seats played outside
        numba; `_outside` [entries, other seats] indexes those seats' distinct agents
        (`_agents`, one per spec), -1 for a core seat."""
        self._agents, index = [], {}
        self._outside = np.full((len(self.entries), len(self.others)), -1, np.int64)
        for i, en in enumerate(self.entries):
            for k, a in enumerate(en.agents or ()):
                if a is not None:                  # one agent per spec, across entries too
                    self._outside[i, k] = index.setdefault(en.specs[k], len(index))
                    if index[en.specs[k]] == len(self._agents):    # told this table's rules
                        with other_tables_expected():      # a league plays its opponents
                            self._agents.append(for_table(a, self.venv.config))  # anywhere
        if any(is_viewer(a) for a in self._agents):       # a v1 entry in a v0 env too
            self.batch.keep_memory()
        self._slot = np.full(self.venv.config.num_seats, -1, np.int64)
        self._slot[self.others] = np.arange(len(self.others))
        self._partner = np.zeros(self.venv.config.num_seats, bool)
        self._partner[self.partners] = True
        self.batch.external = self._external if self._agents or self.partners else None

    def set_self_agent(self, agent) -> None:
        """What the learner's teammates play with partner='self' (an object with act_batch)."""
        self.self_agent = agent

    def seat_rows(self, obs, tables, seats) -> np.ndarray:
        """The rows of the env's observation at (tables, seats) from their v0 rows `obs` (as
        envs/seats.py gathers them): v0 as they are; in a v1 env each with its seat's memory
        block from the env's own public memory (envs/memory_keeper.py TableMemory.v1, the
        kernel that writes the learner's), never from a face-down card."""
        if getattr(self.batch, "observation", "v0") != "v1":
            return obs
        return self.batch.memory.v1(obs, tables, seats)

    def _external(self, obs, masks, tables, seats) -> np.ndarray:
        """The outside seats' moves at all their rows: one act_batch per distinct spec over
        every row it plays, whatever its table, seat and entry; an agent played with a seat
        view (a v1 net: a snapshot of a v1 learner, a v1 ppo: entry) one act_view over the
        SeatView of its rows (envs/memory_keeper.py, as the envs' opponents are played). The
        partner='self' rows are the env's observation at the partner's seat (seat_rows)."""
        ids = np.zeros(len(tables), np.int64)
        who = self._outside[self.table_entry[tables], self._slot[seats]]
        mine = self._partner[seats]
        if mine.any():
            if self.self_agent is None:
                raise ValueError("partner='self': set_self_agent(agent) before stepping")
            who[mine] = -2
            rows = np.flatnonzero(mine)
            ids[rows] = self.self_agent.act_batch(
                self.seat_rows(obs[rows], tables[rows], seats[rows]), masks[rows])
        for a in np.unique(who[who >= 0]):
            rows = np.flatnonzero(who == a)
            agent = self._agents[a]
            if is_viewer(agent):
                ids[rows] = agent.act_view(self._view(tables[rows], seats[rows], obs[rows],
                                                      masks[rows]))
            else:
                ids[rows] = agent.act_batch(obs[rows], masks[rows])
        return ids

    def _view(self, tables, seats, obs, masks):
        """The SeatView of these rows over the env's engine and public memory."""
        return self.batch.memory.view(tables, seats, obs, masks)

    def set_diffs(self, diffs) -> None:
        """New paired differences (from an evaluation): new weights for the next draws."""
        d = np.asarray(diffs, float)
        if d.shape != (len(self.entries),):
            raise ValueError(f"diffs: one number per entry ({len(self.entries)}), got {d.shape}")
        self.diffs = d
        self.weights = league_weights(d, self.temperature, self.uniform)

    def _draw(self, tables) -> None:
        if len(tables) == 0:
            return
        pick = self.rng.choice(len(self.entries), size=len(tables), p=self.weights)
        self.table_entry[tables] = pick
        for e, i in zip(tables, pick):
            for s, (kind, knobs) in zip(self.others, self.entries[i].seats):
                self.batch.kinds[e, s] = POLICY_EXTERNAL if s in self.partners else kind
                self.batch.knobs[e, s] = knobs

    def reset(self):
        obs = self.venv.reset()
        self._draw(np.arange(self.num_envs))
        return obs

    def step_wait(self):
        obs, rewards, dones, infos = self.venv.step_wait()
        done = np.flatnonzero(dones)
        if done.size:
            T = self.venv.config.num_teams
            for e in done:
                sc = np.asarray(infos[e]["final_scores"], np.float64)
                rel = relative_points(sc[self.team], sc.sum(), T)
                i = self.table_entry[e]
                self.hands[i] += 1
                self.rel_sum[i] += rel
                infos[e]["opponent"] = self.entries[i].name
            self._draw(done)
        return obs, rewards, dones, infos

    def stats(self) -> list:
        """Per entry: name, weight, last evaluated difference, training hands and the
        learner's mean relative points in them."""
        return [{"name": en.name, "weight": float(w),
                 "eval_diff": float(d) if np.isfinite(d) else None,       # None: not yet
                 "hands": int(h), "mean_relative": float(r / h) if h else None}
                for en, w, d, h, r in zip(self.entries, self.weights, self.diffs, self.hands,
                                          self.rel_sum)]


def make_env(cfg, seed: int | None = None, monitor: bool = True, rules=None,
             num_envs: int | None = None, learner_seat: int = 0,
             observation: str | None = None):
    """The training env of a TrainConfig: NertzVecEnv + LeagueVecEnv (+ VecMonitor); rules,
    num_envs and learner_seat: another table than the config's (formats.py: one per format);
    observation: the learner's, "v0" or "v1" (None: TrainConfig.observation, else v0; a lean
    run passes lean_policy.py run_observation's, which reads its init too)."""
    from nertz_env.envs.vector import NertzVecEnv
    if observation is None:
        observation = cfg.ppo.observation or "v0"
    seed = cfg.run.seed if seed is None else seed
    rules = cfg.rules() if rules is None else rules
    t, lg = cfg.tables, cfg.league
    base = NertzVecEnv(num_envs=t.num_envs if num_envs is None else num_envs, config=rules,
                       seed=seed, reward=t.reward, learner_seat=learner_seat,
                       observation=observation)
    env = LeagueVecEnv(base, lg.opponents, seed=seed, temperature=lg.priority_temperature,
                       uniform=lg.priority_uniform, partner=t.partner)
    return _vec_env.VecMonitor(env) if monitor else env


def league_of(env):
    """The LeagueVecEnv inside wrappers (VecMonitor)."""
    while not isinstance(env, LeagueVecEnv):
        env = getattr(env, "venv", None)
        if env is None:
            raise ValueError("no LeagueVecEnv in this env")
    return env


class FormatsVecEnv(_vec_env.VecEnv):
    """The formats' vector envs (each a league env of its own: make_formats_env) stepped as
    one (formats.py's module docstring). Rows are the formats' tables in order; every
    sub-env has the same spaces."""

    def __init__(self, envs, names):
        self.envs, self.names = list(envs), list(names)
        first = self.envs[0]
        super().__init__(sum(e.num_envs for e in self.envs), first.observation_space,
                         first.action_space)
        self.bounds = np.cumsum([0] + [e.num_envs for e in self.envs])
        self._actions = None
        # the NertzVecEnvs' action_masks, found once (a league wrapper forwards per lookup)
        self._masks = [_base(e).action_masks for e in self.envs]

    def reset(self):
        return np.concatenate([e.reset() for e in self.envs])

    def step_async(self, actions):
        self._actions = np.asarray(actions)

    def step_wait(self):
        obs, rew, done, infos = [], [], [], []
        for i, e in enumerate(self.envs):
            o, r, d, inf = e.step(self._actions[self.bounds[i]:self.bounds[i + 1]])
            for x in inf:
                x["format"] = self.names[i]
            obs.append(o)
            rew.append(r)
            done.append(d)
            infos += list(inf)
        return np.concatenate(obs), np.concatenate(rew), np.concatenate(done), infos

    def action_masks(self):
        return np.concatenate([masks() for masks in self._masks])

    def close(self):
        for e in self.envs:
            e.close()

    def env_is_wrapped(self, wrapper_class, indices=None):
        return [False] * self.num_envs

    def get_attr(self, attr_name, indices=None):
        if attr_name == "render_mode":            # SB3's VecEnv asks at construction
            return [None] * self.num_envs
        raise AttributeError(f"FormatsVecEnv does not forward {attr_name!r}")

    def set_attr(self, attr_name, value, indices=None):
        raise AttributeError(f"FormatsVecEnv does not forward {attr_name!r}")

    def env_method(self, method_name, *args, indices=None, **kwargs):
        raise AttributeError(f"FormatsVecEnv does not forward {method_name!r}")

    def seed(self, seed=None):
        return [None] * self.num_envs


def _base(env):
    """The NertzVecEnv under a league (its action_masks)."""
    while not hasattr(env, "batch") or not hasattr(env, "action_masks"):
        env = env.venv
    return env


__all__ = ["SNAPSHOT", "FormatsVecEnv", "LeagueEntry", "LeagueVecEnv", "league_of",
           "league_weights", "make_env", "parse_entry"]
