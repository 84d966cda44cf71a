"""Where a learned seat's move goes inside the core (agents/learned/core_play.py), piece by
piece: microseconds per move of one seat, in a loop over positions met in play order.

    python -m benchmarks.learned_move                      # the shipped `learned` at 4 teams
    python -m benchmarks.learned_move --teams 2 --moves 100000

One seat's observation rows and masks are recorded over --ticks consecutive ticks of one
table (every seat moving uniformly at random among its legal moves), then each piece runs
--moves times over those rows in order (the first layer kept up to date from row to row as
the kernel keeps it), inside a jitted loop built like the kernel's (fastmath where the kernel
has it), the median of --repeats:

- observation: core/observe.py write_seat_observation on one position;
- first layer: core_play._first_layer (the diff of the row against the last one seen, the
  changed entries' rows of w0, the activation);
- later layers: core_play._later_layers on blocks of --block rows at once (the kernel's
  product over the rows of the tables it plays in step, IN_STEP of them), per row;
- head: core_play._head_move (the legal moves the constraint keeps, their logits, the
  argmax and the near-tie test);
- legal moves: agents/constraints.py constrained_moves alone (part of head).

In play a move is observation + first layer + later layers + head ("move", their sum). A
tournament adds the table's bots, the tick and the cache traffic between tables (measure
those with benchmarks/learned_tournament.py). Prints a Markdown table with the command, then
one JSON line.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
import warnings

import numpy as np
from numba import njit

from agents.constraints import constrained_moves
from agents.learned.core_play import (IN_STEP, TIE_GAP, Stack, _first_layer, _head_move,
                                      _later_layers, networks)
from nertz_env.config import RulesConfig
from nertz_env.core.observe import OBS_DIM, write_seat_observation
from nertz_env.engine import Engine


@njit(cache=True, error_model="numpy")
def _observation_loop(st, prm, scr, obs, n_seats, n):
    for i in range(n):
        write_seat_observation(st, prm, scr, 0, i % n_seats, obs, 0)


@njit(cache=True, error_model="numpy", fastmath=True)
def _first_loop(rows, w0, b0, act, out, n):
    """The first layer of rows in play order, n times over; out[j] the last one of row j."""
    idx = np.zeros(OBS_DIM + 1, np.int64)
    seen = np.zeros(OBS_DIM, np.float32)
    pre = b0[0].astype(np.float64)
    for i in range(n):
        j = i % rows.shape[0]
        _first_layer(rows[j], seen, pre, 0, w0, act, out[0, j], idx)
    return out[0, 0, 0]


@njit(cache=True, error_model="numpy", fastmath=True)
def _later_loop(first, wh, bh, act, block, n):
    """The later layers over blocks of `block` first-layer rows, n rows in all."""
    h = np.empty((1, block, first.shape[2]), np.float32)
    g = np.empty_like(h)
    total = np.float32(0)
    for i in range(0, n, block):
        for r in range(block):
            h[0, r] = first[0, (i + r) % first.shape[1]]
        total += _later_layers(0, block, wh, bh, act, h, g)[0, 0, 0]
    return total


@njit(cache=True, error_model="numpy")
def _head_loop(hidden, rows, masks, wa, ba, bits, tie, n):
    idx = np.zeros(OBS_DIM + 1, np.int64)
    total = 0
    for i in range(n):
        j = i % rows.shape[0]
        a, _ = _head_move(hidden[j], rows[j], masks[j], 0, wa, ba, bits, idx, tie)
        total += a
    return total


@njit(cache=True, error_model="numpy")
def _legal_loop(rows, masks, bits, n):
    idx = np.zeros(OBS_DIM + 1, np.int64)
    total = 0
    for i in range(n):
        j = i % rows.shape[0]
        total += constrained_moves(rows[j], masks[j], bits, idx)
    return total


def record(config, ticks: int, seed: int):
    """(engine at its last position, seat 0's observation rows [ticks, OBS_DIM], its masks)."""
    eng = Engine(config, n_tables=1, seed=seed)
    eng.reset(seed=seed)
    rng = np.random.default_rng(seed)
    rows, masks = [], []
    for _ in range(ticks):
        if eng.hand_over[0]:
            eng.reset(seed=int(rng.integers(1 << 31)))
        rows.append(eng.observe(0)[0, 0].copy())
        masks.append(eng.masks[0, 0].copy())
        m = eng.masks[0]
        eng.step(np.array([[rng.choice(np.flatnonzero(m[s])) for s in range(m.shape[0])]]))
    return eng, np.array(rows, np.float32), np.ascontiguousarray(np.array(masks))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.learned_move", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--agent", default="learned", help="a net agent spec the core plays")
    ap.add_argument("--teams", type=int, default=4)
    ap.add_argument("--ticks", type=int, default=200, help="positions recorded, in play order")
    ap.add_argument("--moves", type=int, default=200_000, help="moves timed per piece")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--block", type=int, default=IN_STEP,
                    help="rows per product of the later layers (default: the kernel's IN_STEP)")
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv)
    from agents.registry import make_agent
    config = RulesConfig(num_teams=a.teams)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        agent = make_agent(a.agent)
        picks = networks(agent.for_table(config) if hasattr(agent, "for_table") else agent,
                         config)
    if picks is None:
        raise SystemExit(f"{a.agent!r} is not a net the core plays (core_play.networks)")
    st = Stack(picks[:1]).nets                      # the stacked arrays (core_play.Nets)
    eng, rows, masks = record(config, a.ticks, a.seed)
    obs = np.zeros((1, config.num_seats, OBS_DIM), np.float32)
    S, P, C = eng._common()
    bits = int(st.bits[0])
    W = st.b0.shape[1]
    first = np.zeros((1, len(rows), W), np.float32)
    _first_loop(rows, st.w0, st.b0, st.act, first, len(rows))
    hidden = np.ascontiguousarray(_later_layers(0, len(rows), st.wh, st.bh, st.act, first.copy(),
                                                np.empty_like(first))[0])
    pieces = {
        "observation": lambda n: _observation_loop(S, P, C, obs, config.num_seats, n),
        "first layer": lambda n: _first_loop(rows, st.w0, st.b0, st.act, first.copy(), n),
        "later layers": lambda n: _later_loop(first, st.wh, st.bh, st.act, a.block, n),
        "head": lambda n: _head_loop(hidden, rows, masks, st.wa, st.ba, st.bits, TIE_GAP, n),
        "legal moves": lambda n: _legal_loop(rows, masks, bits, n),
    }
    us = {}
    for name, f in pieces.items():
        f(10)                                                     # compile / load
    for _ in range(a.repeats):
        for name, f in pieces.items():                          # interleaved
            t0 = time.perf_counter()
            f(a.moves)
            us.setdefault(name, []).append((time.perf_counter() - t0) / a.moves * 1e6)
    med = {k: float(np.median(v)) for k, v in us.items()}
    med["move"] = sum(med[k] for k in ("observation", "first layer", "later layers", "head"))
    cmd = ("python -m benchmarks.learned_move " + " ".join(
        argv if argv is not None else sys.argv[1:])).strip()
    changed = float((rows[1:] != rows[:-1]).sum(1).mean())
    print(f"`{cmd}`: {a.agent} at {a.teams} teams, width {W}, later layers on {a.block} rows, "
          f"{st.wh.shape[1] + 1} hidden layers; {(rows != 0).sum(1).mean():.0f} non-zero "
          f"entries per row, {changed:.1f} changed per tick; "
          f"{masks.sum(1).mean():.1f} legal moves")
    print("| piece | us per move (median of %d) |" % a.repeats)
    print("|---|---|")
    for k in ("observation", "first layer", "later layers", "head", "legal moves", "move"):
        print(f"| {k} | {med[k]:.3f} |")
    print(json.dumps({"command": cmd, "agent": a.agent, "teams": a.teams,
                      "us_per_move": med, "runs": us}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
