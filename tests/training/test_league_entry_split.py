"""A league entry's seats join with '+', and so do a constraint's parts: a documented spec
'ppo:M.npz,constraint=useful-shifts+never-withhold' is one seat, not two (#40)."""
from __future__ import annotations

from pathlib import Path

import pytest

from agents.training.entries import parse_entry          # torch-free: no [train] extra needed

MODEL = Path(__file__).resolve().parents[2] / "agents" / "learned" / "models" / "learned.npz"


def test_a_constraint_joined_with_plus_stays_in_its_spec():
    spec = f"ppo:{MODEL},constraint=useful-shifts+never-withhold"
    one = parse_entry(spec, 1)                       # one other seat: the whole spec is it
    assert len(one.seats) == 1
    two = parse_entry(f"greedy+{spec}", 2)           # two seats: greedy and the model
    assert len(two.seats) == 2
    with pytest.raises(ValueError, match="names 2 seats"):
        parse_entry(f"greedy+{spec}", 3)
