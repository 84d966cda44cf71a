"""nertz_env.files: atomic writes leave the old file or the whole new one, never a cut one;
bounded readers refuse what is over their caps with a ValueError naming the input."""
from __future__ import annotations

import gzip
import io
import time
import zipfile

import pytest

from nertz_env.files import (atomic_path, gunzip_capped, json_loads_bounded, read_capped,
                             write_bytes, write_json, write_text, zip_member_capped)


def test_atomic_write_replaces_whole(tmp_path):
    p = tmp_path / "results.json"
    write_text(p, "old")
    write_json(p, {"a": 1})
    assert p.read_text() == '{\n  "a": 1\n}\n'
    assert [x.name for x in tmp_path.iterdir()] == ["results.json"]


def test_a_written_file_gets_the_mode_open_gives_it(tmp_path):
    """Results are as readable as any file the user's umask allows (0o666 less the umask),
    new or replacing one, not owner-only as a raw temporary file would leave them."""
    import os
    old = os.umask(0o022)
    try:
        for name in ("new.json", "new.json", "plot.png"):
            write_json(tmp_path / name, {"a": 1}) if name.endswith("json") else \
                write_bytes(tmp_path / name, b"png")
            assert (tmp_path / name).stat().st_mode & 0o777 == 0o644, name
        os.umask(0o077)
        write_bytes(tmp_path / "private", b"x")
        assert (tmp_path / "private").stat().st_mode & 0o777 == 0o600
    finally:
        os.umask(old)
    assert not list(tmp_path.glob(".*.part"))


def test_failure_mid_write_leaves_old_file_and_no_temp(tmp_path):
    p = tmp_path / "results.json"
    write_text(p, "old")
    with pytest.raises(OSError):
        with atomic_path(p) as tmp:
            tmp.write_text("half")
            raise OSError(28, "No space left on device")
    assert p.read_text() == "old"
    assert [x.name for x in tmp_path.iterdir()] == ["results.json"]


def test_interrupt_leaves_no_file(tmp_path):
    p = tmp_path / "new.csv"
    with pytest.raises(KeyboardInterrupt):
        with atomic_path(p) as tmp:
            tmp.write_text("a,b\n1,")
            raise KeyboardInterrupt
    assert list(tmp_path.iterdir()) == []


def test_write_json_refuses_nan_and_keeps_old(tmp_path):
    p = tmp_path / "r.json"
    write_text(p, "old")
    with pytest.raises(ValueError):
        write_json(p, {"x": float("nan")})
    assert p.read_text() == "old"


def test_read_capped(tmp_path):
    p = tmp_path / "f"
    p.write_bytes(b"x" * 100)
    assert read_capped(p, 100) == b"x" * 100
    with pytest.raises(ValueError, match=r"replay .*larger than"):
        read_capped(p, 99, "replay")


def test_gzip_bomb_refused_fast():
    bomb = gzip.compress(b"\0" * (2 ** 31), compresslevel=9)     # ~2 MB that inflates to 2 GiB
    assert len(bomb) < 3 << 20
    t = time.perf_counter()
    with pytest.raises(ValueError, match="replay r.gz inflates to more than 64 MiB"):
        gunzip_capped(bomb, 64 << 20, "replay r.gz")
    assert time.perf_counter() - t < 5     # the cap, not the bomb, sets the work (README: < 1 s)


def test_gunzip_whole_and_cut():
    data = b"hello " * 1000
    z = gzip.compress(data)
    assert gunzip_capped(z, len(data)) == data
    with pytest.raises(ValueError, match="inflates to more than"):
        gunzip_capped(z, len(data) - 1)
    with pytest.raises(ValueError, match="cut short"):
        gunzip_capped(z[:-8], len(data))
    with pytest.raises(ValueError, match="not valid gzip"):
        gunzip_capped(b"not gzip at all", 100)


def test_zip_member_capped_trusts_no_header():
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("data", b"a" * 5000)
    with zipfile.ZipFile(buf) as zf:
        assert zip_member_capped(zf, "data", 5000) == b"a" * 5000
        with pytest.raises(ValueError, match="'data' would inflate"):
            zip_member_capped(zf, "data", 4999, "model m.zip")
        with pytest.raises(ValueError, match="has no 'policy.pth'"):
            zip_member_capped(zf, "policy.pth", 10)
        zf.getinfo("data").file_size = 10          # a lying header: the read still stops
        with pytest.raises(ValueError, match="model m.zip 'data' is damaged"):
            zip_member_capped(zf, "data", 100, "model m.zip")


@pytest.mark.parametrize("text", ["[" * 10_000 + "]" * 10_000, '{"a":' * 5000 + "1" + "}" * 5000])
def test_deep_json_is_a_value_error(text):
    with pytest.raises(ValueError, match="body is nested .* levels deep; at most 64"):
        json_loads_bounded(text, "body")


def test_json_brackets_inside_strings_do_not_count():
    assert json_loads_bounded('{"a": "[[[[{{{{\\"[[", "b": [1, [2]]}') == \
        {"a": '[[[[{{{{"[[', "b": [1, [2]]}
    assert json_loads_bounded("[" * 64 + "]" * 64) is not None


@pytest.mark.parametrize("text", ["[NaN]", '{"a": Infinity}', "{bad", b"\xff\xfe"])
def test_not_json_is_a_value_error(text):
    with pytest.raises(ValueError, match="spec"):
        json_loads_bounded(text, "spec")
