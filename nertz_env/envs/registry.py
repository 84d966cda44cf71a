"""A name -> module map for the environments, for code that cannot rely on PettingZoo's own
registry (PettingZoo < 1.27 has none; with >= 1.27 `nertz_env.nertz_v0` registers
"nertz/nertz-v0" there too).

    from nertz_env.envs.registry import make
    env = make("nertz/nertz-v0", num_teams=4)                   # AEC (wrapped)
    par = make("nertz/nertz-v0", kind="parallel", num_teams=4)  # ParallelEnv
"""
from __future__ import annotations

from . import aec

# the module with PettingZoo's entry points (env, raw_env, parallel_env): envs/aec.py, which
# nertz_env.nertz_v0 re-exports (imported from here it would be an arrow back up)
ENVIRONMENTS = {"nertz/nertz-v0": aec}
KINDS = {"aec": "env", "raw": "raw_env", "parallel": "parallel_env"}


def make(name: str, kind: str = "aec", **kwargs):
    """Build a registered environment; kind: "aec" (wrapped), "raw" or "parallel"."""
    if name not in ENVIRONMENTS:
        raise ValueError(f"unknown environment {name!r}; known: {sorted(ENVIRONMENTS)}")
    if kind not in KINDS:
        raise ValueError(f"kind={kind!r}: one of {sorted(KINDS)}")
    return getattr(ENVIRONMENTS[name], KINDS[kind])(**kwargs)
