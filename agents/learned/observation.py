"""The observation a safe-format model reads (its JSON's optional "observation": absent or "v0":
nertz_v0, 791 floats; "v1": nertz_v1, 1019, v0's vector then the seat's memory block,
nertz_env/core/observe_memory.py). agents/learned/weights.py checks a file's width against it;
agents/learned/v1.py plays and widens v1 models. Imports nothing of agents."""
from __future__ import annotations

import json

OBSERVATIONS = ("v0", "v1")            # what a model file's "observation" may say


def observation_of(meta: dict) -> str:
    """The observation a model's description says it reads: "v0" (the key absent, as in every
    file written before v1) or "v1"."""
    return meta.get("observation") or "v0"


def observation_width(version: str) -> int:
    """The floats of observation `version`: v0 OBS_DIM (791), v1 V1_OBS_DIM (1019)."""
    from nertz_env.core.observe import OBS_DIM
    if version == "v0":
        return OBS_DIM
    from nertz_env.core.observe_memory import V1_OBS_DIM
    return V1_OBS_DIM


def check_observation(meta: dict, bad) -> None:
    """A model description's "observation" (weights.check_meta): absent, or one of
    OBSERVATIONS with observation_size its width; else bad(field, what it must be)."""
    if "observation" not in meta:
        return
    version = meta["observation"]
    if not (isinstance(version, str) and version in OBSERVATIONS):
        bad("observation", f'absent (v0), "v0" or "v1" (got {json.dumps(version)[:40]})')
    if meta["observation_size"] != observation_width(version):
        bad("observation_size", f"{observation_width(version)}, the width of observation "
            f"{version!r} (got {meta['observation_size']})")
