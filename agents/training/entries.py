"""The league's entries, without torch: what every other seat of a training table plays
(league.py's module docstring tells the league), parsed and loaded (`parse_entry`: an agent
spec for every other seat, per-seat specs joined by '+', or "snapshot:PATH"), and the
weights the tables draw them by (`league_weights`).

config.py loads a run's entries with these before anything starts; league.py's
LeagueVecEnv plays them. Imports nertz_env and agents' specs and registry only.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from nertz_env.bot_specs import CORE_KINDS, core_bot
from nertz_env.core.policies import POLICY_EXTERNAL

from ..specs import split_lineup

SNAPSHOT = "snapshot:"


@dataclass
class LeagueEntry:
    """One opponent of the league: a name and, per other seat, its make_agent spec, the core
    bot (kind, knobs) and the agent playing it from outside numba (None for a core bot, whose
    seat the core plays; POLICY_EXTERNAL for the others). A snapshot has `path` set."""
    name: str
    specs: list       # per other seat: a make_agent spec (a snapshot's: "ppo:PATH")
    seats: list       # [(kind, knobs int64 [K])] one per other seat, in seat order
    path: str | None = None
    agents: list = None   # per other seat: an Agent (its act_batch) or None (a core bot)

    def external(self) -> bool:
        return any(a is not None for a in self.agents or ())


def _outside_agent(spec: str, where: str):
    """make_agent(spec) for a seat the core cannot play; ValueError naming `where`."""
    from ..registry import make_agent
    try:
        return make_agent(spec)
    except ValueError as err:
        raise ValueError(f"{where}: {err}") from None


def parse_entry(entry, n_others: int, where: str = "opponent") -> LeagueEntry:
    """A league entry from an agent spec (all other seats), specs joined by '+' (one per
    other seat), or "snapshot:PATH" (a saved model of the learner at every other seat,
    played deterministically as make_agent("ppo:PATH")); ValueError naming `where`
    otherwise. A spec the core cannot play is made once (make_agent) and shared by every
    seat that names it."""
    if isinstance(entry, LeagueEntry):
        return entry
    if not isinstance(entry, str) or not entry.strip():
        raise ValueError(f"{where}={entry!r} must be an agent spec such as 'greedy', "
                         "'heuristic:style=river-builder', 'learned' or 'ppo:PATH', or "
                         "'snapshot:PATH' (learner snapshots: a saved model)")
    knobs0 = core_bot("random")[1] * 0
    if entry.strip().startswith(SNAPSHOT):
        path = entry.strip()[len(SNAPSHOT):].strip()
        if not path or not Path(path).is_file() or "," in path:
            raise ValueError(f"{where}={entry!r}: a snapshot is 'snapshot:PATH' with PATH an "
                             "existing model file (no commas in the path)")
        agent = _outside_agent(f"ppo:{path}", where)
        return LeagueEntry(f"snapshot:{Path(path).stem}", [f"ppo:{path}"] * n_others,
                           [(POLICY_EXTERNAL, knobs0)] * n_others, path=path,
                           agents=[agent] * n_others)
    specs = split_lineup(entry)         # a '+' inside a spec (constraints) stays in it
    if len(specs) == 1:
        specs = specs * n_others
    if len(specs) != n_others:
        raise ValueError(f"{where}={entry!r} names {len(specs)} seats joined by '+'; the table "
                         f"has {n_others} other seats (or give one spec for all)")
    seats, agents, made = [], [], {}
    for s in specs:
        if s.partition(":")[0] in CORE_KINDS:
            try:
                kind, knobs, _ = core_bot(s)
            except ValueError as err:
                raise ValueError(f"{where}: {err}") from None
            seats.append((kind, knobs))
            agents.append(None)
            continue
        if s not in made:
            made[s] = _outside_agent(s, where)
        core = made[s].core_policy()
        if core is not None:
            seats.append((int(core[0]), np.asarray(core[1], np.int64)))
            agents.append(None)
        else:
            seats.append((POLICY_EXTERNAL, knobs0))
            agents.append(made[s])
    return LeagueEntry(entry.strip(), specs, seats, agents=agents)


def league_weights(diffs, temperature: float, uniform: float) -> np.ndarray:
    """Sampling weights of the entries: softmax(-diff / temperature) mixed with `uniform` of
    the uniform weights; entries with no number yet (NaN) get the mean of those that have
    one (all NaN: uniform)."""
    d = np.asarray(diffs, np.float64)
    n = d.size
    if n == 0:
        return d
    known = np.isfinite(d)
    if not known.any():
        return np.full(n, 1.0 / n)
    d = np.where(known, d, d[known].mean())
    z = -(d - d.min()) / temperature
    p = np.exp(z - z.max())
    p /= p.sum()
    return (1.0 - uniform) * p + uniform / n


__all__ = ["SNAPSHOT", "LeagueEntry", "league_weights", "parse_entry"]
