"""A name -> module map for the environments, for code that cannot rely on PettingZoo's own
registry (PettingZoo < 1.27 has none; with >= 1.27 `nertz_env.nertz_v0` registers
"nertz/nertz-v0" there too, `nertz_env.nertz_v1` "nertz/nertz-v1").

    from nertz_env.envs.registry import make
    env = make("nertz/nertz-v0", num_teams=4)                   # AEC (wrapped)
    par = make("nertz/nertz-v0", kind="parallel", num_teams=4)  # ParallelEnv
"""
from __future__ import annotations

from types import SimpleNamespace

from . import aec

# the modules with PettingZoo's entry points (env, raw_env, parallel_env): envs/aec.py, which
# nertz_env.nertz_v0 re-exports (imported from here it would be an arrow back up), and its v1
# functions, which nertz_env.nertz_v1 re-exports (the v1 observation: core/observe_memory.py)
ENVIRONMENTS = {"nertz/nertz-v0": aec,
                "nertz/nertz-v1": SimpleNamespace(env=aec.env_v1, raw_env=aec.raw_env_v1,
                                                  parallel_env=aec.parallel_env_v1)}
KINDS = {"aec": "env", "raw": "raw_env", "parallel": "parallel_env"}


def make(name: str, kind: str = "aec", **kwargs):
    """Build a registered environment; kind: "aec" (wrapped), "raw" or "parallel"."""
    if name not in ENVIRONMENTS:
        raise ValueError(f"unknown environment {name!r}; known: {sorted(ENVIRONMENTS)}")
    if kind not in KINDS:
        raise ValueError(f"kind={kind!r}: one of {sorted(KINDS)}")
    return getattr(ENVIRONMENTS[name], KINDS[kind])(**kwargs)


def version_entry_points(env_id: str, module: str):
    """(env, raw_env, parallel_env, registered): the entry points of version `env_id` (as
    ENVIRONMENTS has them) for its version module `module` (nertz_env.nertz_v0, nertz_v1) to
    publish in PettingZoo's module style, and whether env_id is now in PettingZoo's registry
    (PettingZoo >= 1.27) with that module's functions as its entry points."""
    fns = ENVIRONMENTS[env_id]
    try:
        from pettingzoo import aec_registry, parallel_registry, register
    except ImportError:                          # PettingZoo < 1.27 has no registry
        registered = False
    else:
        if env_id not in aec_registry:
            register("aec", env_id, entry_point=f"{module}:env")
        if env_id not in parallel_registry:
            register("parallel", env_id, entry_point=f"{module}:parallel_env")
        registered = True
    return fns.env, fns.raw_env, fns.parallel_env, registered
