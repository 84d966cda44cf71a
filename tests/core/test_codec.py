"""nertz_env/core/codec.py: the one definition of the action-id numbering. Every id
0..N_ACTIONS-1 decodes and re-encodes to itself, in Python (actions.py) and inside numba
(the kernels' inlined path), and matches the table in nertz_env/actions.py's docstring."""
from __future__ import annotations

import re

import numpy as np
import pytest
from numba import njit

from nertz_env import actions as act
from nertz_env.actions import KINDS, N_ACTIONS, Move, decode, decode_simple, encode_move
from nertz_env.core import codec
from nertz_env.encoding import MAX_RIVER, SRC_RIVER0

IDS = range(N_ACTIONS)


def _encode(kind, src, dst, index, length):
    """Re-encode decode's fields with the codec's id functions (Python)."""
    if kind in ("wait", "flip", "call"):
        return {"wait": act.WAIT, "flip": act.FLIP, "call": act.CALL}[kind]
    if kind == "lake":
        return codec.lake_id.py_func(src)
    if kind == "build":
        return codec.build_id.py_func(src, dst)
    if kind == "shift":
        return codec.shift_id.py_func(src - SRC_RIVER0, index, dst)
    return codec.stack_id.py_func(src, length)


@njit(cache=False)
def _numba_roundtrip(n):
    """decode then re-encode every id inside numba (inline="always" as in the kernels)."""
    out = np.empty((n, 6), np.int64)
    for a in range(n):
        kind, src, dst, index, length = codec.decode(a)
        if kind == codec.KIND_LAKE:
            back = codec.lake_id(src)
        elif kind == codec.KIND_BUILD:
            back = codec.build_id(src, dst)
        elif kind == codec.KIND_SHIFT:
            back = codec.shift_id(src - SRC_RIVER0, index, dst)
        elif kind == codec.KIND_STACK:
            back = codec.stack_id(src, length)
        else:
            back = a
        out[a, 0], out[a, 1], out[a, 2], out[a, 3], out[a, 4] = kind, src, dst, index, length
        out[a, 5] = back
    return out


def test_every_id_round_trips_in_python():
    seen = set()
    for a in IDS:
        fields = decode(a)
        assert _encode(*fields) == a, (a, fields)
        seen.add(fields)
        m = decode_simple(a)
        if isinstance(m, Move):
            assert encode_move(m) == a
            assert encode_move(Move.parse(str(m))) == a         # through the text form
        else:
            assert m == ("stack", fields[1], fields[4])
    assert len(seen) == N_ACTIONS                                # no two ids decode alike


def test_numba_agrees_with_python():
    out = _numba_roundtrip(N_ACTIONS)
    assert (out[:, 5] == np.arange(N_ACTIONS)).all()
    for a in IDS:
        kind, src, dst, index, length = decode(a)
        assert tuple(out[a, :5]) == (KINDS.index(kind), src, dst, index, length), a
        assert codec.decode(a) == tuple(out[a, :5])              # the compiled function


def _doc_table():
    """Rows of actions.py's docstring table: (first id, last id, count, move text)."""
    rows = []
    for line in act.__doc__.splitlines():
        m = re.match(r"\s*\|\s*(\d+)(?:-(\d+))?\s*\|\s*(\d+)\s*\|\s*([^|]*?)\s*\|", line)
        if m:
            lo = int(m.group(1))
            hi = int(m.group(2) or lo)
            rows.append((lo, hi, int(m.group(3)), m.group(4)))
    return rows


def test_docstring_table_matches_the_codec():
    rows = _doc_table()
    assert [r[0] for r in rows] == [0, 1, 2, 3, 10, 20, 280]
    assert f"N_ACTIONS = {N_ACTIONS}" in act.__doc__
    kinds = ["wait", "flip", "call", "lake", "build", "shift", "stack"]
    expect_next = 0
    for (lo, hi, count, text), kind in zip(rows, kinds, strict=True):
        assert lo == expect_next and hi - lo + 1 == count, (lo, hi, count)
        expect_next = hi + 1
        assert {decode(a)[0] for a in range(lo, hi + 1)} == {kind}, text
    assert expect_next == N_ACTIONS
    lake0, build0, shift0, stack0 = (r[0] for r in rows[3:])
    # the table's encoding column, written out independently of the codec
    for a in IDS:
        kind, src, dst, index, length = decode(a)
        if kind == "lake":                       # LAKE0 + source
            assert a == lake0 + src
        elif kind == "build":                    # BUILD0 + 5 * (0 nertz, 1 waste) + C
            assert src in (0, 1) and a == build0 + 5 * src + dst
        elif kind == "shift":                    # SHIFT0 + (4A + B') * 13 + I
            col_a, col_b = src - SRC_RIVER0, dst
            assert col_a != col_b and 0 <= col_b < MAX_RIVER and 0 <= index < 13
            b_prime = col_b if col_b < col_a else col_b - 1
            assert a == shift0 + (4 * col_a + b_prime) * 13 + index
        elif kind == "stack":                    # STACK0 + 6 * source + (L - 2), L = 2..7
            assert 2 <= length <= 7 and a == stack0 + 6 * src + (length - 2)
    # the move texts of the table's first ids
    assert [str(decode_simple(a)) for a in (0, 1, 2, 3, 4, 5, 10, 15)] == [
        "wait", "flip", "call", "nertz>lake", "waste>lake", "river0>lake", "nertz>river0",
        "waste>river0"]


@pytest.mark.parametrize("bad", [-1, N_ACTIONS, 70000, True, 1.0, "3", None])
def test_decode_rejects_what_is_not_an_id(bad):
    with pytest.raises(ValueError, match="action"):
        decode(bad)
