"""`nertz play --human --terminal`: a PlaySession (session.py) tick by tick in a terminal: the
table as text, the person's legal moves numbered, a number or move text read from a stream
(so it runs with piped stdin)."""
from __future__ import annotations

import sys
from pathlib import Path

from .session import PlaySession


def play_terminal(session: PlaySession, stdin=None, out=None) -> Path | None:
    """Tick by tick in a terminal: the table, the person's legal moves numbered, a number or
    move text per line (Enter: wait, q: quit). A refused move prints the rule and asks
    again. The end of input (Ctrl-D, `</dev/null`) quits as q does. Returns the replay
    path (None when the person quit: nothing written)."""
    stdin = sys.stdin if stdin is None else stdin
    out = sys.stdout if out is None else out
    table, seat = session.table, session.seat

    def say(*lines):
        print(*lines, sep="\n", file=out, flush=True)

    say(f"You are seat {seat} (team {session.team}) against "
        + ", ".join(f"seat {s} {a}" for s, a in enumerate(session.agents) if s != seat))
    while not table.hand_over:
        legal = session.legal()
        if legal == ["wait"]:
            say(f"tick {table.tick}: seat {seat} is busy (R21), waiting")
            session.tick()
            continue
        say("", table.render(), "your moves: " + "  ".join(f"[{i}] {m}" for i, m in enumerate(legal)))
        while True:
            print(f"tick {table.tick} move (number or text, Enter = wait, q = quit): ",
                  end="", file=out, flush=True)
            line = stdin.readline()
            text = line.strip()
            if not line or text.lower() in ("q", "quit"):
                say(("" if line else "(end of input) ") + "quit: no replay written")
                return None
            if text.isdigit():
                if int(text) < len(legal):
                    text = legal[int(text)]
                else:
                    say(f"no move [{text}]: choose 0..{len(legal) - 1} or type a move")
                    continue
            why = session.request(text or "wait")
            if not why:
                break
            say(f"refused: {why}")
        session.tick()
        for line in session.log[-3:]:
            if line.startswith(f"tick {table.tick - 1}:"):
                say(line)
    path = session.finish()
    say("", table.render(),
        "Final scores (R29): " + ", ".join(f"team {t}{' (you)' if t == session.team else ''} "
                                           f"{s:+d}" for t, s in enumerate(table.hand_scores())),
        f"replay written to {path}")
    return path
