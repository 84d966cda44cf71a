"""Replay files as hostile input, second round (#40): `nertz replay` on a FIFO or a directory
is one line before anything is opened (a FIFO hung it), a key given twice is refused (the
last one won in silence), and a 5,000-digit integer is one line naming the file and field
(not Python's int-conversion message)."""
from __future__ import annotations

import json
import os
import signal

import pytest

from agents.cli import main
from nertz_env.replay import Replay, ReplayError
from nertz_env.replay.format import _checksum

from tests.replay.test_hostile import play


@pytest.fixture(scope="module")
def short():
    return play(ticks=20)


@pytest.fixture
def alarm():
    """Fail instead of hanging: a command that opens a FIFO blocks; it is cut after 10 s."""
    def ring(*_):
        raise TimeoutError("nertz replay blocked: it opened a FIFO")
    old = signal.signal(signal.SIGALRM, ring)
    signal.alarm(10)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)


def one_line_error(capsys) -> str:
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Traceback" not in err, err
    return err


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs os.mkfifo (POSIX)")
@pytest.mark.parametrize("name", ["x.nertz.json.gz", "fifo.npz"])
def test_nertz_replay_refuses_a_fifo_without_opening_it(tmp_path, capsys, alarm, name):
    fifo = tmp_path / name
    os.mkfifo(fifo)
    assert main(["replay", str(fifo)]) == 2
    assert one_line_error(capsys) == (f"nertz: error: replay file {str(fifo)!r} is not a "
                                      "regular file (a FIFO, socket or device is never opened)")


def test_nertz_replay_on_a_directory_says_so(tmp_path, capsys):
    folder = tmp_path / "d.nertz.json.gz"
    folder.mkdir()
    assert main(["replay", str(folder)]) == 2
    assert one_line_error(capsys) == (f"nertz: error: replay file {str(folder)!r} is a "
                                      "directory; a file is needed")


def test_a_key_given_twice_is_refused_naming_the_file_and_key(tmp_path, short, capsys):
    text = json.dumps(short.to_json())
    plain = tmp_path / "r.json"
    plain.write_text(text)
    assert Replay.load(plain).hands                        # the plain JSON file reads
    dup = tmp_path / "dup.json"
    dup.write_text(text.replace('"version": 1,', '"version": 1, "version": 1,', 1))
    assert dup.read_text().count('"version": 1') == 2
    with pytest.raises(ReplayError, match=r"^replay file '.*dup.json' holds the key 'version' "
                                          "twice in one object"):
        Replay.load(dup)
    assert main(["replay", str(dup), "--no-check"]) == 2
    assert "holds the key 'version' twice" in one_line_error(capsys)


def test_a_5000_digit_integer_is_one_line_naming_file_and_field(tmp_path, short, capsys):
    body = json.loads(json.dumps(short.to_json()))
    body["meta"] = {"seed": 0}
    body["sha256"] = _checksum({k: v for k, v in body.items() if k != "sha256"})
    text = json.dumps(body)
    big = tmp_path / "big.json"
    big.write_text(text.replace('"seed": 0', '"seed": ' + "9" * 5000))
    with pytest.raises(ReplayError) as err:
        Replay.load(big)
    assert str(err.value) == (f"replay file {str(big)!r}: field meta.seed holds an integer "
                              "of 5000 digits; at most 100 are read")
    assert main(["replay", str(big)]) == 2
    err = one_line_error(capsys)
    assert "field meta.seed" in err and "set_int_max_str_digits" not in err
    # an integer of a few dozen digits in meta (a 128-bit seed) still reads
    ok = json.loads(text)
    ok["meta"] = {"seed": 2 ** 128 - 1}
    ok["sha256"] = _checksum({k: v for k, v in ok.items() if k != "sha256"})
    (tmp_path / "ok.json").write_text(json.dumps(ok))
    assert Replay.load(tmp_path / "ok.json").meta == {"seed": 2 ** 128 - 1}
