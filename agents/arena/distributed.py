"""Blocks of deals on Ray (executor="ray"): the same columns as a local play_deals.

Deals d_lo..d_hi-1 are cut into blocks of block_deals (default ceil(deals / 8)), each a Ray
task (retried by Ray, up to 3 times, when its worker dies) that builds the agents from their
spec strings, once per worker process, and plays its block with play_deals. Blocks are merged
in deal order, so a run equals a local one byte for byte. Agents that sample from their own
generator (a learned agent with deterministic=false) draw in another order than a local run;
every other agent's moves depend only on the position, so the files match.

The only module of the arena that imports ray (through nertz_env.optional, when called).
"""
from __future__ import annotations

from nertz_env.optional import require

from ..registry import make_agent
from .play import Block, MatchPlan, Roster, play_deals
from .progress import NoBar

EXECUTORS = ("local", "ray")
RAY_PURPOSE = "executor='ray' (tournaments and experiments on Ray)"


def check_executor(executor, agents, block_deals) -> None:
    """ValueError unless executor is local or ray (with spec strings) and block_deals fits."""
    if executor not in EXECUTORS:
        raise ValueError(f"executor {executor!r} is unknown; executors are {', '.join(EXECUTORS)}")
    if block_deals is not None and (isinstance(block_deals, bool) or
                                    not isinstance(block_deals, int) or block_deals < 1):
        raise ValueError(f"block_deals={block_deals!r} must be an int >= 1 or None")
    if executor == "ray":
        bad = [a for a in agents if not isinstance(a, str)]
        if bad:
            raise ValueError(f"executor='ray' builds the agents again on every worker: give "
                             f"them as spec strings, not {type(bad[0]).__name__} objects")
        require("ray", "ray", RAY_PURPOSE)


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
        ray.init(address=address, include_dashboard=False, log_to_driver=False)
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
