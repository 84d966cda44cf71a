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
- first layer: core_play._hidden with the net's later layers removed (the diff of the row
  against the last one seen, the changed entries' rows of w0, the activation);
- hidden: core_play._hidden (the first layer as above, then every later layer);
- move: core_play._net_move (hidden, the legal moves the constraint keeps, their logits, the
  argmax and the near-tie test);
- legal moves: agents/constraints.py constrained_moves alone.

In play a move is observation + move; "later layers" is hidden - first layer. A tournament
adds the table's bots, the tick and the cache traffic between tables (measure those with
benchmarks/learned_tournament.py). Prints a Markdown table with the command, then one JSON
line.
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
from agents.learned.core_play import TIE_GAP, Stack, _hidden, _net_move, networks
from nertz_env.config import RulesConfig
from nertz_env.core.observe import OBS_DIM, write_seat_observation
from nertz_env.engine import Engine


@njit(cache=True, error_model="numpy")
def _observation_loop(st, prm, scr, obs, n_seats, n):
    for i in range(n):
        write_seat_observation(st, prm, scr, 0, i % n_seats, obs, 0)


@njit(cache=True, error_model="numpy", fastmath=True)
def _hidden_loop(rows, w0, b0, wh, bh, act, n):
    W = b0.shape[1]
    ha, hb = np.empty(W, np.float32), np.empty(W, np.float32)
    idx = np.zeros(OBS_DIM + 1, np.int64)
    seen = np.zeros(OBS_DIM, np.float32)
    pre = b0[0].astype(np.float64)
    for i in range(n):
        _hidden(rows[i % rows.shape[0]], seen, pre, 0, w0, wh, bh, act, ha, hb, idx)
    return ha[0]


@njit(cache=True, error_model="numpy")
def _move_loop(rows, masks, w0, b0, wh, bh, wa, ba, bits, act, tie, n):
    W = b0.shape[1]
    ha, hb = np.empty(W, np.float32), np.empty(W, np.float32)
    idx = np.zeros(OBS_DIM + 1, np.int64)
    seen = np.zeros(OBS_DIM, np.float32)
    pre = b0[0].astype(np.float64)
    total = 0
    for i in range(n):
        j = i % rows.shape[0]
        a, _ = _net_move(rows[j], seen, pre, masks[j], 0, w0, wh, bh, wa, ba, bits, act, ha,
                         hb, idx, tie)
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
    st = Stack(picks[:1])
    eng, rows, masks = record(config, a.ticks, a.seed)
    obs = np.zeros((1, config.num_seats, OBS_DIM), np.float32)
    S, P, C = eng._common()
    no_later = st.wh[:, :0], st.bh[:, :0]
    bits = int(st.bits_arr[0])
    pieces = {
        "observation": lambda n: _observation_loop(S, P, C, obs, config.num_seats, n),
        "first layer": lambda n: _hidden_loop(rows, st.w0, st.b0, *no_later, st.act, n),
        "hidden": lambda n: _hidden_loop(rows, st.w0, st.b0, st.wh, st.bh, st.act, n),
        "move": lambda n: _move_loop(rows, masks, st.w0, st.b0, st.wh, st.bh, st.wa, st.ba,
                                     st.bits_arr, st.act, TIE_GAP, n),
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
    med["later layers"] = med["hidden"] - med["first layer"]
    cmd = ("python -m benchmarks.learned_move " + " ".join(
        argv if argv is not None else sys.argv[1:])).strip()
    changed = float((rows[1:] != rows[:-1]).sum(1).mean())
    print(f"`{cmd}`: {a.agent} at {a.teams} teams, width {st.b0.shape[1]}, "
          f"{st.wh.shape[1] + 1} hidden layers; {(rows != 0).sum(1).mean():.0f} non-zero "
          f"entries per row, {changed:.1f} changed per tick; "
          f"{masks.sum(1).mean():.1f} legal moves")
    print("| piece | us per move (median of %d) |" % a.repeats)
    print("|---|---|")
    for k in ("observation", "first layer", "later layers", "hidden", "legal moves", "move"):
        print(f"| {k} | {med[k]:.3f} |")
    print(json.dumps({"command": cmd, "agent": a.agent, "teams": a.teams,
                      "us_per_move": med, "runs": us}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
