"""One notation for every view of a replay: the terminal (terminal.py), the HTML viewer
(html.py, web/viewer.js) and the GIF/MP4 (video.py) use the words, colours and conventions
defined here, and each shows `LEGEND` (docs/replays.md#notation says the same).

- Before/after: a frame is the table at the start of its tick, before that tick's moves;
  the moves listed with it were chosen at that tick, and the next frame shows their result.
- Hands: "hand 0 of 1 in the file" is a hand's place in the file (what --hand takes, 0
  first); "hand number 1" is its number in the game (R4: who holds which role).
- Team colours: one palette, envs/render.py's TEAM_COLOURS; web/table.css holds the same
  values (a test compares them) and COLOUR_NAMES names them.
- `safe(text)` neutralises a string from a file before it reaches a terminal: every
  character that is not printable (ANSI escapes, other control characters, bidi overrides,
  line separators) is written as a visible escape, so a name cannot move the cursor, clear
  the screen or hide text.
"""
from __future__ import annotations

from ..envs.render import TEAM_COLOURS

COLOUR_NAMES = ("yellow", "blue", "pink", "green", "orange", "violet", "aqua", "white")


def colour_hex(t: int) -> str:
    """The CSS colour of team t (the GIF's TEAM_COLOURS)."""
    return "#%02x%02x%02x" % TEAM_COLOURS[t % len(TEAM_COLOURS)]


def team_word(t: int) -> str:
    """'team 1 (blue)': how every view names a team."""
    return f"team {t} ({COLOUR_NAMES[t % len(COLOUR_NAMES)]})"


def hand_words(index: int, count: int, number: int) -> str:
    """'hand 0 of 1 in the file, hand number 1' (module docstring)."""
    return f"hand {index} of {count} in the file, hand number {number}"


def position_words(tick: int) -> str:
    return f"tick {tick}, before its moves"


def moves_words(tick: int) -> str:
    return (f"moves chosen at tick {tick} (in priority order, R22; tick {tick + 1} shows "
            "their result)")


def pile_count(n: int) -> str:
    """The count after a pile's top card: '5C@1 x5' (the GIF writes it under the card)."""
    return f"x{n}"


LEGEND = (
    "How to read a replay (docs/replays.md#notation):",
    "- Each picture is the table at the start of its tick, before that tick's moves. The moves "
    "listed with it were chosen at that tick; the next tick's picture shows their result.",
    "- Cards: rank then suit (10H is the ten of hearts; S spades, H hearts, D diamonds, "
    "C clubs). In the Lake a card from team N's deck is marked @N (5C@1); no mark is team "
    "0's deck (R2).",
    "- Counts: x5 after a top card means 5 cards in that pile (Lake piles, the Nertz pile, "
    "the stock and the waste); the GIF writes the count under the card (N for Nertz, S for "
    "stock, W for waste).",
    "- River columns river0, river1, ... from the left, the numbers of the move text; a "
    "column is listed bottom card first, its last card on top (R5, R11).",
    "- Moves: source>destination (nertz, waste, riverC, riverC:I with I counted from the "
    "column's bottom card, 0 first, lake); a + joins a stack's sources (R16); (failed): "
    "lost to a seat earlier in the priority order (R22); (illegal): refused (R31).",
    "- Teams and their colours: " + ", ".join(team_word(t) for t in range(8))
    + "; Lake cards carry their deck's team colour.",
    "- Scores: each team's hand score so far (R29).",
    "- \"hand 0 of 1 in the file\" is the hand's place in this file (what --hand takes, 0 "
    "first); \"hand number 1\" is its number in the game (R4: who holds which role).",
)


def legend_text() -> str:
    return "\n".join(LEGEND)


def safe(text) -> str:
    """`text` with every non-printable character written as a visible escape (\\x1b,
    \\u202e, \\n): what a terminal shows of a string read from a file."""
    text = str(text)
    if text.isprintable():
        return text
    out = []
    for ch in text:
        if ch.isprintable():
            out.append(ch)
        elif ch in "\n\r\t":
            out.append({"\n": "\\n", "\r": "\\r", "\t": "\\t"}[ch])
        else:
            code = ord(ch)
            out.append(f"\\x{code:02x}" if code < 0x100 else
                       f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}")
    return "".join(out)


def safe_lines(text) -> str:
    """Each line of `text` made safe, the line breaks kept."""
    return "\n".join(safe(line) for line in str(text).split("\n"))


def shown(value, limit: int = 60) -> str:
    """A value from a file as an error message shows it: repr (escapes included), cut."""
    text = repr(value)
    return text if len(text) <= limit else text[:limit - 3] + "..."
