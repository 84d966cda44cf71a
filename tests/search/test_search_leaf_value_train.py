"""train/leaf_value.py: --help, a used --out refused before any work, same seed same
weights, and what it writes is a leaf net `search:leaf=PATH.npz` reads."""
from __future__ import annotations

import json

import pytest

from agents.search.leaf import load_leaf
from train import leaf_value

TINY = ["--hands-2", "6", "--hands-4", "2", "--every", "20", "--hidden", "8", "--epochs", "1"]


def test_help(capsys):
    with pytest.raises(SystemExit) as err:
        leaf_value.main(["--help"])
    assert err.value.code == 0
    out = capsys.readouterr().out
    assert "--out" in out and "--hands-2" in out and "leaf value" in out


def test_a_used_out_is_refused_before_any_work(tmp_path, capsys):
    out = tmp_path / "used"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    assert leaf_value.main(["--out", str(out)] + TINY) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--out" in err
    assert sorted(p.name for p in out.iterdir()) == ["keep.txt"]


def test_without_torch_one_line_before_any_work(tmp_path, capsys, monkeypatch):
    """Without the [train] extra: one line naming what is missing and the install line, exit
    2, nothing written."""
    import builtins
    real = builtins.__import__

    def no_torch(name, *args, **kw):
        if name == "torch" or name.startswith("torch."):
            raise ImportError("No module named 'torch'")
        return real(name, *args, **kw)

    monkeypatch.setattr(builtins, "__import__", no_torch)
    monkeypatch.delitem(__import__("sys").modules, "torch", raising=False)
    out = tmp_path / "new"
    assert leaf_value.main(["--out", str(out)] + TINY) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "needs torch" in err and ".[train]" in err
    assert not out.exists()


def test_bad_options_are_one_line(capsys):
    with pytest.raises(SystemExit) as err:
        leaf_value.main(["--out", "x", "--hidden", "8,zero"])
    assert err.value.code == 2
    assert "--hidden='8,zero' must be widths" in capsys.readouterr().err


def test_same_seed_same_weights_and_search_reads_them(tmp_path):
    pytest.importorskip("torch")                   # the [train] extra (CI's first pass lacks it)
    for name in ("a", "b"):
        assert leaf_value.main(["--out", str(tmp_path / name)] + TINY) == 0
    a, b = tmp_path / "a", tmp_path / "b"
    assert (a / "leaf_value.npz").read_bytes() == (b / "leaf_value.npz").read_bytes()
    report = json.loads((a / "report.json").read_text())
    assert set(report["teams"]) == {"2", "4"} and report["teams"]["2"]["records"] > 50
    net = load_leaf(str(a / "leaf_value.npz"), "t")
    assert net.w0.shape == (1, 791, 8) and net.wa.shape == (1, 1, 8)
