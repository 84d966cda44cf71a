"""Blocks of deals on Ray (executor="ray"): the same columns as a local play_deals.

Deals d_lo..d_hi-1 are cut into blocks of block_deals (default ceil(deals / 8)), each a Ray
task (retried by Ray, up to 3 times, when its worker dies) that builds the agents from their
spec strings, once per worker process, and plays its block with play_deals. Blocks are merged
in deal order, so a run equals a local one byte for byte. Agents that sample from their own
generator (a learned agent with deterministic=false) draw in another order than a local run;
every other agent's moves depend only on the position, so the files match: a `search:` agent's
too (agents/search: its draws are seeded from the run's seed, the table's deal key, hand, tick
and seat, never from where a table sits in a block; tests/arena/test_ray.py).

The only module of the arena that imports ray (through nertz_env.optional, when called).
"""
from __future__ import annotations

import logging
import warnings

from nertz_env.optional import require

from ..registry import make_agent
from .limits import check_int
from .play import Block, MatchPlan, Roster, play_deals
from .progress import NoBar

EXECUTORS = ("local", "ray")
RAY_PURPOSE = "executor='ray' (tournaments and experiments on Ray)"


def check_executor(executor, agents, block_deals) -> None:
    """ValueError unless executor is local or ray (with spec strings) and block_deals fits."""
    if executor not in EXECUTORS:
        raise ValueError(f"executor {executor!r} is unknown; executors are {', '.join(EXECUTORS)}")
    if block_deals is not None:
        check_int("block_deals", block_deals)
    if executor == "ray":
        bad = [a for a in agents if not isinstance(a, str)]
        if bad:
            raise ValueError(f"executor='ray' builds the agents again on every worker: give "
                             f"them as spec strings, not {type(bad[0]).__name__} objects")
        require("ray", "ray", RAY_PURPOSE)


def connect_error(address, err) -> str:
    """One line on a failed ray.init: what failed, why (its first line), what to do."""
    why = next((ln.strip() for ln in str(err).splitlines() if ln.strip()), type(err).__name__)
    where = (f"cannot connect to the Ray cluster at {address!r}" if address
             else "cannot start a local Ray instance")
    return (f"Ray: {where} ({type(err).__name__}: {why[:200]}); start a cluster with "
            f"'ray start --head' and give its address (--ray auto), or drop --ray to play the "
            f"deals in this process")


def _connect(ray, address) -> None:
    """ray.init, its failure one line (connect_error): the client's INFO log lines and
    timeout warning are held back while it connects, so nothing but that line is printed."""
    held = logging.root.manager.disable            # ray's loggers set their own levels
    logging.disable(logging.WARNING)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            ray.init(address=address, include_dashboard=False, log_to_driver=False)
    except Exception as err:          # ray raises ConnectionError, RuntimeError, ...
        raise ValueError(connect_error(address, err)) from None
    finally:
        logging.disable(held)


_WORKER_AGENTS: dict = {}     # (spec, seed) -> agent: a worker loads each agent (a model) once


def ray_block(plan: MatchPlan, specs, d_lo: int, d_hi: int) -> Block:
    """One block of deals on a Ray worker: the agents built from their specs (once per worker
    process), then play_deals."""
    objs = []
    for a in specs:
        if (a, plan.seed) not in _WORKER_AGENTS:
            _WORKER_AGENTS[(a, plan.seed)] = make_agent(a, seed=plan.seed)
        objs.append(_WORKER_AGENTS[(a, plan.seed)])
    return play_deals(plan, Roster.of(objs), d_lo, d_hi, NoBar())


def play_deals_ray(plan: MatchPlan, specs, d_lo: int, d_hi: int, bar, block_deals=None,
                   address=None, task_body=None) -> Block:
    """play_deals over Ray (module docstring): the same Block, its rows in block order.
    task_body: the block's function (default ray_block, same arguments)."""
    ray = require("ray", "ray", RAY_PURPOSE)
    if not ray.is_initialized():
        _connect(ray, address)
    block = block_deals or max(1, -(-(d_hi - d_lo) // 8))
    task = ray.remote(max_retries=3)(task_body or ray_block)
    refs = {}
    for a in range(d_lo, d_hi, block):
        b = min(d_hi, a + block)
        refs[task.remote(plan, list(specs), a, b)] = (a, b)
    done = {}
    pending = list(refs)
    while pending:
        ready, pending = ray.wait(pending, num_returns=1)
        for r in ready:
            a, b = refs[r]
            done[a] = ray.get(r)
            bar.update((b - a) * plan.tables_per_deal)
    return Block.concat([done[a] for a in sorted(done)])
