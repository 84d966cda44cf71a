"""Golden playthroughs: seeded hands replayed tick by tick must give, byte for byte, the text
stored in tests/golden/ (legal action ids and their moves, chosen moves, applied flags,
callers, hand scores and every observation segment; tests/golden.py says what and how).

Any drift of rules, legal moves, move text, scoring or observations fails here with a unified
diff of the first differences. When a change is deliberate, regenerate the files from the
repository root and bump the env version (nertz_v<N>):

    python tests/golden.py --write        # or: python -m tests.golden --write
"""
from __future__ import annotations

import difflib

import pytest

import golden

DIFF_LINES = 60


@pytest.mark.parametrize("name", sorted(golden.CONFIGS))
def test_golden_playthrough(name):
    path = golden.path_of(name)
    assert path.exists(), f"{path} is missing: run `python tests/golden.py --write`"
    expected = path.read_text()
    actual = golden.play(name)
    if actual != expected:
        diff = difflib.unified_diff(expected.splitlines(), actual.splitlines(),
                                    f"{path.name} (stored)", f"{path.name} (now)", n=2,
                                    lineterm="")
        shown = "\n".join(list(diff)[:DIFF_LINES])
        pytest.fail(f"golden playthrough {name} drifted (first differences below). If the "
                    f"change is deliberate, run `python tests/golden.py --write` and bump "
                    f"nertz_v<N>.\n{shown}", pytrace=False)


def test_golden_files_cover_the_events_they_are_for():
    """The stored playthroughs exercise what they were chosen for (so a regeneration that
    loses them, say after a change of the chooser, is noticed)."""
    texts = {name: golden.path_of(name).read_text() for name in golden.CONFIGS}
    every = "".join(texts.values())
    assert "callers [1] | hand_over 1 truncated 0" in texts["2teams_default"]   # a Nertz call
    assert "hand_over 1 truncated 1" in texts["4teams_river5_move_ticks"]       # R26
    assert texts["2teams_penalize"].count("(illegal)") >= 5                     # R31
    assert "+" in "".join(x for x in every.splitlines() if " plays " in x)      # a stack (R16)
    lost = [x for x in texts["3teams_pairs_speeds"].splitlines()
            if x.startswith("  priority") and "=0" in x.split("|")[1]]
    assert lost, "no lost race (R22) in the 3-team playthrough"
    for name, text in texts.items():
        assert len(text) < 300_000, f"{name}: keep golden files small"


def test_the_regeneration_command_writes_what_is_stored(tmp_path, monkeypatch, capsys):
    """`python tests/golden.py --write` writes exactly the stored files; without --write it
    checks them and exits 1 on a stale one."""
    monkeypatch.setattr(golden, "GOLDEN_DIR", tmp_path)
    assert golden.main(["--write"]) == 0
    for name in golden.CONFIGS:
        stored = (golden.Path(golden.__file__).parent / "golden" / f"{name}.txt").read_bytes()
        assert (tmp_path / f"{name}.txt").read_bytes() == stored, name
    assert golden.main([]) == 0
    first = tmp_path / f"{min(golden.CONFIGS)}.txt"
    first.write_text(first.read_text().replace("scores [", "scores [9", 1))
    assert golden.main([]) == 1
    assert f"differs: {first}" in capsys.readouterr().out
