"""TOML specs and recipes (nertz_env/files/spec_toml.py): nesting counted in one pass, so a
hostile 1 MB spec answers at once (the regex tokenizer it replaced rescanned an open string
from each of its quotes: 900 KB of `a\\"` ran for hours), the count never below the real
nesting of valid TOML, and every failure one line naming the file."""
from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from nertz_env.files.spec_toml import read_toml, toml_depth

ROOT = Path(__file__).resolve().parents[2]
HOSTILE = {            # built in the child from these lines (no 4 MB command line)
    "open string of escaped quotes": "'\"\"\"' + 'a\\\\\"' * 300_000",
    "escaped quotes": "'\"\\\\\"' * 300_000",
    "literal strings on one line": "\"'a' \" * 300_000",
    "open triple quotes": "'\"\"\"\\\\' * 300_000",
}


def _nesting(v) -> int:
    if isinstance(v, list):
        return 1 + max([_nesting(x) for x in v] or [0])
    if isinstance(v, dict):
        return max([_nesting(x) for x in v.values()] or [0])
    return 0


def test_hostile_text_is_measured_in_one_pass():
    """Each 0.9-1.2 MB case in a child with a generous limit: a hang (the old tokenizer took
    hours), not a speed, is what fails."""
    code = ("import sys; from nertz_env.files.spec_toml import toml_depth\n"
            "cases = [" + ", ".join(HOSTILE.values()) + "]\n"
            "assert min(len(t) for t in cases) >= 900_000\n"
            "print(sum(toml_depth(t) for t in cases))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, cwd=ROOT)
    assert out.returncode == 0, out.stderr[-1000:]


def test_the_shipped_specs_and_recipes_are_counted_as_they_nest():
    files = sorted(ROOT.glob("docs/**/*.toml")) + sorted(ROOT.glob("train/recipes/*.toml"))
    assert files
    for f in files:
        text = f.read_text()
        assert toml_depth(text) >= _nesting(tomllib.loads(text)), f


PIECES = st.sampled_from(["[", "]", "{", "}", '"', "'", "\\", "#", "\n", "a", " ", "=", ",",
                          "1", '"""', "'''"])


@settings(max_examples=3000, deadline=None)
@given(st.lists(PIECES, max_size=25))
def test_the_count_is_never_below_the_nesting_of_valid_toml(pieces):
    text = "x = " + "".join(pieces)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError:
        return
    assert toml_depth(text) >= _nesting(data)


@pytest.mark.parametrize("body, says", [
    ("a = " + "[" * 100 + "]" * 100, "nested too deep (100 levels"),
    ("a = [1,", "not valid TOML"),
    (b"a = '\xff'", "not UTF-8"),
])
def test_a_bad_file_is_one_line_naming_it(tmp_path, body, says):
    f = tmp_path / "spec.toml"
    f.write_bytes(body if isinstance(body, bytes) else body.encode())
    with pytest.raises(ValueError) as err:
        read_toml(f, "recipe", 1 << 20)
    assert says in str(err.value) and "recipe" in str(err.value) and "\n" not in str(err.value)
    with pytest.raises(ValueError, match="cannot read it"):
        read_toml(tmp_path / "missing.toml", "recipe", 1 << 20)
