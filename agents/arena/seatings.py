"""Lineups and the balanced seating design of a tournament (pure Python, no numpy).

- A *lineup* is the tuple of agents at the team positions 0..T-1 of a table. `round-robin`
  plays every combination of T distinct agents (needs at least T agents); `all-play-all`
  seats all agents at every table, cycling through the list to fill T teams (needs at most
  T agents). `auto` picks round-robin when there are at least T agents.
- *Duplicate deals*: each deal is replayed at several *seatings* of a lineup (an assignment
  of its agents to the team positions); the records' field `rotation` is the index of the
  seating in seatings(lineup) (seating 0 is the lineup itself). Paired differences over
  deals then cancel the deal's luck (agents/stats/estimators.py).
- *Balanced seatings* (seatings()): G_T is a permutation group of the T team positions
  that is 2-transitive, i.e. for positions i != j and p != q the same number lambda of its
  elements send i to p and j to q: AGL(1, T) (x -> a*x + b over the field of T elements,
  T(T-1) elements, lambda = 1) for T = 2, 3, 4, 5, 7, 8 and PSL(2, 5) on the projective
  line of 6 points for T = 6 (60 elements, lambda = 2; no set of 30 exists for T = 6).
  A lineup of T distinct agents (round-robin) is played at the seatings g(lineup), g in
  G_T: T(T-1) seatings (60 at T = 6), all distinct. An all-play-all table of n < T agents
  gives every agent floor(T/n) or ceil(T/n) seats: one base seating per choice of the
  T mod n agents with the extra seat (all C(n, T mod n) choices, relabelings of one
  pattern), each moved by G_T, repeats dropped. Over the seatings of a deal, exactly:
  every agent holds every position equally often, and every ordered pair of distinct
  agents sits at every ordered pair of distinct positions equally often, so no seat
  property (speeds, team sizes, roles) favours an agent or a pairing. The count is at most
  C(n, T mod n) * |G_T| (2 agents: 2, 6, 6, 20, 10, 42, 14 seatings at 2..8 teams).

Never imports the engine or the play loops: the design is plain combinatorics.
"""
from __future__ import annotations

import itertools
import math

from .limits import MAX_TABLES

FORMATS = ("auto", "round-robin", "all-play-all")


def resolve_format(fmt: str, n_agents: int, n_teams: int) -> str:
    """"auto": round-robin when there are at least as many agents as teams."""
    if fmt == "auto":
        return "round-robin" if n_agents >= n_teams else "all-play-all"
    return fmt


def make_lineups(n_agents: int, n_teams: int, fmt: str = "auto") -> list:
    """The lineups of a format (module docstring); ValueError when the format cannot seat them."""
    if fmt not in FORMATS:
        raise ValueError(f"format {fmt!r} is unknown; formats are {', '.join(FORMATS)}")
    if n_agents < 1:
        raise ValueError("agents: name at least one agent")
    fmt = resolve_format(fmt, n_agents, n_teams)
    if fmt == "round-robin":
        if n_agents < n_teams:
            raise ValueError(f"format round-robin needs at least {n_teams} agents for {n_teams} "
                             f"teams, got {n_agents}; use all-play-all")
        count = math.comb(n_agents, n_teams)
        if count * len(position_group(n_teams)) > MAX_TABLES:
            raise ValueError(f"format round-robin: {n_agents} agents at {n_teams} teams make "
                             f"{count:,} lineups of {len(position_group(n_teams))} seatings, "
                             f"more tables per deal than a run holds ({MAX_TABLES:,}); name "
                             "fewer agents")
        return [tuple(c) for c in itertools.combinations(range(n_agents), n_teams)]
    if n_agents > n_teams:
        raise ValueError(f"format all-play-all seats every agent at one table: at most {n_teams} "
                         f"agents for {n_teams} teams, got {n_agents}; use round-robin")
    return [tuple(p % n_agents for p in range(n_teams))]


def _gf_mul(a: int, b: int, q: int) -> int:
    """a * b in the field of q elements: mod q for a prime q, else GF(2^k) (q = 4, 8)."""
    if q not in (4, 8):
        return a * b % q
    poly, bits = (0b111, 2) if q == 4 else (0b1011, 3)
    out = 0
    while b:
        if b & 1:
            out ^= a
        b >>= 1
        a <<= 1
        if a >> bits:
            a ^= poly
    return out


def position_group(n_teams: int) -> list:
    """G_T of the module docstring: the permutations (tuples g, position i -> g[i]) of a
    2-transitive group of the team positions, sorted, the identity first."""
    T = n_teams
    perms = set()
    if T in (2, 3, 4, 5, 7, 8):                              # AGL(1, T): x -> a*x + b
        add = (lambda x, y: x ^ y) if T in (4, 8) else (lambda x, y: (x + y) % T)
        for a in range(1, T):
            for b in range(T):
                perms.add(tuple(add(_gf_mul(a, x, T), b) for x in range(T)))
    elif T == 6:                                             # PSL(2, 5); point 5 is infinity
        inv = {1: 1, 2: 3, 3: 2, 4: 4}
        for a, b, c, d in itertools.product(range(5), repeat=4):
            if (a * d - b * c) % 5 != 1:
                continue
            image = [5 if (c * x + d) % 5 == 0 else (a * x + b) * inv[(c * x + d) % 5] % 5
                     for x in range(5)]                      # x -> (a x + b) / (c x + d)
            perms.add(tuple(image + [5 if c == 0 else a * inv[c] % 5]))
    else:
        raise ValueError(f"num_teams={T}: seatings exist for 2 to 8 teams")
    return sorted(perms)


def seatings(lineup) -> list:
    """The distinct seatings (tuples: agent at each team position) at which every deal of
    `lineup` is played, seating 0 first (the module docstring's balanced design)."""
    lineup = tuple(int(a) for a in lineup)
    T = len(lineup)
    agents = sorted(set(lineup))
    n = len(agents)
    group = position_group(T)
    bases = []
    if n == T:
        bases.append(lineup)
    else:
        r = T % n
        for extra in itertools.combinations(agents, r):
            order = list(extra) + [a for a in agents if a not in extra]
            bases.append(tuple(order[p % n] for p in range(T)))
    out, seen = [], set()
    for base in bases:
        for g in group:
            seat = [0] * T
            for i, a in enumerate(base):
                seat[g[i]] = a
            seat = tuple(seat)
            if seat not in seen:
                seen.add(seat)
                out.append(seat)
    return out
