"""nertz_env/files readers against hostile input (#40): a path that is not a regular file is
refused before it is opened (a FIFO would hang the reader), an over-long JSON integer is a
one-line error naming what was read and its field (not Python's int-conversion message), and
json_loads_strict refuses a key given twice."""
from __future__ import annotations

import os
import signal

import pytest

from nertz_env.files import (check_regular, json_loads_bounded, json_loads_strict,
                             read_capped)
from nertz_env.files import bounded


@pytest.fixture
def alarm():
    """Fail instead of hanging: a read that blocks (a FIFO opened) is cut after 5 s."""
    def ring(*_):
        raise TimeoutError("the reader blocked: it opened a FIFO")
    old = signal.signal(signal.SIGALRM, ring)
    signal.alarm(5)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs os.mkfifo (POSIX)")
@pytest.mark.parametrize("name", ["x.nertz.json.gz", "fifo.npz", "spec.toml"])
def test_a_fifo_is_refused_unopened(tmp_path, alarm, name):
    fifo = tmp_path / name
    os.mkfifo(fifo)
    with pytest.raises(ValueError) as err:
        read_capped(fifo, 1 << 20, "some file")
    text = str(err.value)
    assert text == (f"some file {str(fifo)!r} is not a regular file (a FIFO, socket or device "
                    "is never opened)")
    with pytest.raises(ValueError, match="is not a regular file"):
        check_regular(fifo, "some file")


def test_a_directory_is_refused_as_a_directory(tmp_path):
    with pytest.raises(ValueError) as err:
        read_capped(tmp_path, 1 << 20, "replay file")
    assert str(err.value) == f"replay file {str(tmp_path)!r} is a directory; a file is needed"


def test_a_regular_file_and_a_symlink_to_one_are_read(tmp_path):
    p = tmp_path / "a.json"
    p.write_bytes(b"{}")
    (tmp_path / "link.json").symlink_to(p)
    assert read_capped(p, 10) == b"{}" == read_capped(tmp_path / "link.json", 10)
    with pytest.raises(ValueError, match="nope.json': cannot read it"):   # missing: bad
        read_capped(tmp_path / "nope.json", 10)          # input, exit 2 (bounded.read_fault)


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs os.mkfifo (POSIX)")
def test_a_fifo_swapped_in_after_the_stat_is_not_read(tmp_path, alarm, monkeypatch):
    """The open itself never blocks and is checked again: a FIFO that appears between the
    stat and the open is refused too."""
    fifo = tmp_path / "late.json"
    os.mkfifo(fifo)
    monkeypatch.setattr(bounded, "check_regular", lambda path, what: None)
    with pytest.raises(ValueError, match="late.json' is not a regular file"):
        read_capped(fifo, 10, "file")


@pytest.mark.parametrize("load", [json_loads_bounded, json_loads_strict])
def test_a_5000_digit_integer_is_one_line_naming_the_file_and_field(load):
    raw = '{"config": {"seed": ' + "7" * 5000 + '}, "x": 1}'
    with pytest.raises(ValueError) as err:
        load(raw, "checkpoint 'c.json'")
    text = str(err.value)
    assert "\n" not in text and "set_int_max_str_digits" not in text
    assert text.startswith("checkpoint 'c.json': field config.seed holds an integer of 5000 "
                           "digits; at most ")
    with pytest.raises(ValueError, match=r"field hands\[1\]\[0\] holds an integer of 4301"):
        load('{"hands": [[1], [-' + "1" * 4301 + "]]}", "f")
    with pytest.raises(ValueError, match="field the top level holds an integer of 200"):
        load("1" * 200, "f")


def test_integer_caps_bounded_100_strict_30_and_roomier_on_request():
    big = 10 ** 99                                 # 100 digits: the bounded reader's most
    assert json_loads_bounded(f"[{big}, {-big}]") == [big, -big]
    with pytest.raises(ValueError, match="integer of 101 digits; at most 100"):
        json_loads_bounded(f"[{big * 10}]")
    assert json_loads_bounded(str(2 ** 128 - 1)) == 2 ** 128 - 1    # a PCG64 state word
    assert json_loads_strict(str(10 ** 29)) == 10 ** 29
    with pytest.raises(ValueError, match="integer of 31 digits; at most 30"):
        json_loads_strict(str(10 ** 30))
    assert json_loads_strict(str(10 ** 40), max_int_digits=100) == 10 ** 40


def test_strict_refuses_a_key_twice_and_bounded_keeps_the_last():
    raw = '{"format": "nertz-replay", "version": 1, "version": 1}'
    with pytest.raises(ValueError, match=r"^replay file 'r.json' holds the key 'version' twice"):
        json_loads_strict(raw, "replay file 'r.json'")
    assert json_loads_bounded(raw) == {"format": "nertz-replay", "version": 1}
