"""A fresh user's walk through `nertz play --human`, `nertz train --help` and `nertz judge
--help` (2026-12-07, second pass): what it tripped on, each kept fixed here."""
from __future__ import annotations

import argparse
import io

from agents.cli import build_parser, main


def subparser(*names):
    parser = build_parser()
    for name in names:
        sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
        parser = sub.choices[name]
    return parser


def helps(parser) -> dict:
    """option -> its help text, whitespace collapsed."""
    return {a.option_strings[0]: " ".join((a.help or "").split())
            for a in parser._actions if a.option_strings}


def human(tmp_path, monkeypatch, stdin: str, *extra) -> tuple[int, str]:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("sys.stdin", io.StringIO(stdin))
    out = io.StringIO()
    monkeypatch.setattr("sys.stdout", out)
    code = main(["play", "--human", "--terminal", "--teams", "2", "--max-ticks", "6",
                 "--seed", "1", "--against", "greedy", *extra])
    return code, out.getvalue()


def test_end_of_input_quits_and_writes_nothing(tmp_path, monkeypatch):
    """A: stdin at its end (`</dev/null`) is quitting, not a hand played as waits."""
    code, text = human(tmp_path, monkeypatch, "", "--replay-out", str(tmp_path / "h.nertz.json.gz"))
    assert code == 0 and "no replay written" in text and "replay written to" not in text
    assert list(tmp_path.iterdir()) == []
