"""The PettingZoo spec sheet's version history (nertz_env/envs/pettingzoo.py, "## Version
History") keeps up with what an agent sees: each version's latest entry (nertz_v0, nertz_v1)
records the fingerprint of that version's observation layout and infos, and this test
recomputes it. A change to the observation
(its size, the segments' offsets, any value the writer puts there) or to the infos' keys or
kinds fails here until the history says so: a new entry (v1 when agents trained on v0 no
longer fit) ending with the fingerprint this test prints. Renaming a constant changes nothing:
only values are hashed."""
from __future__ import annotations

import hashlib
import json
import numbers
import re

import numpy as np
import pytest

from nertz_env import nertz_v0, nertz_v1
from nertz_env.core import observe, observe_memory
from nertz_env.envs import pettingzoo as pz_module

# the layout's numbers, by the names observe.py has had since the initial release
LAYOUT = ("OBS_DIM", "CARD_F", "OFF_NERTZ", "OFF_WASTE", "OFF_RIVER", "OFF_LAKE_NEXT",
          "OFF_LAKE_SUIT", "OFF_OPP", "OPP_F", "MAX_OPP", "OFF_SELF")
# tables the fingerprint plays: solo and two-player teams, hand and game episodes
TABLES = (dict(num_teams=2, max_ticks=60),
          dict(num_teams=3, team_sizes=(2, 1, 2), max_ticks=40, episode="game"),
          dict(num_teams=8, max_ticks=30))
SEED = 7
# v1's memory block (core/observe_memory.py): its numbers, by name
V1_LAYOUT = ("V1_OBS_DIM", "MEM_F", "MB_STOCK", "MB_WASTE", "MB_UNDER_WASTE", "MB_NEXT",
             "MB_UNDER_NERTZ", "MB_KNOWN", "MB_OPP", "OPP_MEM_F", "NEXT_FLIPS")
VERSIONS = {"v0": nertz_v0, "v1": nertz_v1}


def _kind(value) -> str:
    if isinstance(value, (bool, np.bool_)):
        return "bool"
    if isinstance(value, numbers.Integral):
        return "int"
    if isinstance(value, numbers.Real):
        return "float"
    return type(value).__name__


def _play(kwargs, module=nertz_v0) -> dict:
    """What a seat sees over one seeded run: the observations' and masks' bytes (digests), the
    spaces, and every info key with the kind of its value."""
    env = module.parallel_env(**kwargs)
    rng = np.random.default_rng(SEED)
    obs_hash, mask_hash, infos = hashlib.sha256(), hashlib.sha256(), set()
    observations, info = env.reset(seed=SEED)
    space = env.observation_space(env.agents[0])
    spaces = {k: [str(s.dtype), list(s.shape), float(np.min(s.low)), float(np.max(s.high))]
              for k, s in space.spaces.items()}
    while True:
        for agent in sorted(observations):
            obs_hash.update(np.ascontiguousarray(observations[agent]["observation"]).tobytes())
            mask_hash.update(np.ascontiguousarray(observations[agent]["action_mask"]).tobytes())
            infos.update((key, _kind(v)) for key, v in info[agent].items())
        if not env.agents:
            break
        actions = {a: int(rng.choice(np.flatnonzero(observations[a]["action_mask"])))
                   for a in env.agents}
        observations, _, _, _, info = env.step(actions)
    return {"spaces": spaces, "obs": obs_hash.hexdigest(), "masks": mask_hash.hexdigest(),
            "infos": sorted(infos), "action_space": int(env.action_space(env.possible_agents[0]).n)}


def fingerprint(version: str = "v0") -> str:
    record = {"layout": {name: int(getattr(observe, name)) for name in LAYOUT},
              "tables": [_play(kwargs, VERSIONS[version]) for kwargs in TABLES]}
    if version != "v0":                  # (v0's record as it always was)
        record["memory"] = {name: int(getattr(observe_memory, name)) for name in V1_LAYOUT}
    blob = json.dumps(record, sort_keys=True).encode()
    return hashlib.sha256(blob).hexdigest()[:16]


def history(doc: str) -> list:
    """The entries ("- vN: ...") of the docstring's Version History, each as one string."""
    section = doc.split("## Version History", 1)[1]
    return [e.strip() for e in re.split(r"\n- (?=v\d+:)", "\n" + section.strip()) if e.strip()]


def recorded(entry: str):
    m = re.search(r"fingerprint[^`]*`([0-9a-f]{16})`", entry)
    return m.group(1) if m else None


@pytest.mark.parametrize("version", list(VERSIONS))
def test_the_latest_version_note_has_the_layout_fingerprint(version):
    entries = history(pz_module.__doc__)
    assert entries, "pettingzoo.py has no Version History entries"
    mine = [e for e in entries if e.startswith(version + ":")]
    assert mine, f"pettingzoo.py's Version History has no {version} entry"
    now = fingerprint(version)
    assert recorded(mine[-1]) == now, (
        f"the observation layout or the infos of {version} changed (fingerprint {now}, the "
        f"history's latest {version} entry records {recorded(mine[-1])}): say what changed in "
        f"a new entry of the Version History in nertz_env/envs/pettingzoo.py (a new version if "
        f"agents trained on the old one no longer fit), ending with 'Layout fingerprint: "
        f"`{now}`.'")
    earlier = [recorded(e) for e in entries if e is not mine[-1]]
    assert now not in earlier, "a new entry needs the new fingerprint; an old one has it"


def test_the_fingerprint_sees_a_changed_observation(monkeypatch):
    """Negative control: one observation value moved, an info key added, the layout's numbers
    changed: each gives another fingerprint; the same run twice gives the same one."""
    base = fingerprint()
    assert fingerprint() == base
    real_step = pz_module.NertzParallelEnv.step

    def shifted_obs(self, actions):
        obs, *rest = real_step(self, actions)
        for o in obs.values():
            o["observation"][-1] += 0.5               # e.g. a self entry rescaled
        return (obs, *rest)
    monkeypatch.setattr(pz_module.NertzParallelEnv, "step", shifted_obs)
    assert fingerprint() != base
    monkeypatch.setattr(pz_module.NertzParallelEnv, "step", real_step)

    def extra_info(self, actions):
        obs, r, te, tr, info = real_step(self, actions)
        return obs, r, te, tr, {a: {**i, "new_key": 1} for a, i in info.items()}
    monkeypatch.setattr(pz_module.NertzParallelEnv, "step", extra_info)
    assert fingerprint() != base
    monkeypatch.setattr(pz_module.NertzParallelEnv, "step", real_step)

    monkeypatch.setattr(observe, "OFF_SELF", observe.OFF_SELF + 1)
    assert fingerprint() != base


@pytest.mark.parametrize("doc, ok", [
    ("## Version History\n- v0: first. Layout fingerprint: `0123456789abcdef`.\n", True),
    ("## Version History\n- v0: first. Layout fingerprint: `0123456789abcdef`.\n"
     "- v1: the self block grew. Layout fingerprint: `fedcba9876543210`.\n", False),
])
def test_the_history_reader_takes_the_last_entry(doc, ok):
    """Negative control for the reader: a later entry with another fingerprint is the one
    read."""
    assert (recorded(history(doc)[-1]) == "0123456789abcdef") is ok
