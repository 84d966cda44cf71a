"""render_rgb: a table position as an RGB picture (the environments' `render_mode="rgb_array"`).

numpy only (no PIL, no matplotlib): a hand-made 5x7 bitmap font (digits, A-Z, a little
punctuation) and 7x7 suit glyphs; every card face is drawn once at import and blitted with
one slice assignment, so a 4-team position renders in a few milliseconds.

Picture (scale 1; `scale=k` repeats every pixel k x k):
- header: tick and hand number (and "NERTZ CALLED" once a team called);
- the Lake in the middle: 8 piles a row, each pile its top card with the pile's card count
  under it and a bar in the colour of the top card's owner (deck) at the card's foot;
- each team's panel around it (teams 0..ceil(T/2)-1 above the Lake, the others below):
  a label in the team's colour ("TEAM 1  -26" with the hand score when `scores` is given,
  "NERTZ!" after a call), the Nertz top card face up with the cards left under it, the stock
  (a card back) with its count, the waste top card with the cards flipped, then the River
  columns as overlapping cards, every card's rank and suit visible.
Red suits (H, D) are drawn in RED, black suits (S, C) in BLACK on white faces with a border,
on a green felt. The size depends only on the number of teams (River 4 or 5 columns use the
same panel), so frames of one video all have the same shape: `picture_shape(num_teams)`.
"""
from __future__ import annotations

from functools import lru_cache

import numpy as np

from ..encoding import N_RANKS, RANKS, parse_card

FELT = (18, 102, 52)
FELT_DARK = (10, 70, 34)
CARD_FACE = (250, 250, 244)
CARD_EDGE = (45, 45, 45)
CARD_BACK = (44, 66, 160)
CARD_BACK_LINE = (120, 140, 220)
RED = (204, 20, 34)
BLACK = (12, 12, 12)
TEXT = (240, 240, 240)
COUNT = (255, 226, 120)
TEAM_COLOURS = ((255, 210, 60), (110, 200, 255), (255, 130, 200), (170, 255, 120),
                (255, 160, 80), (200, 160, 255), (120, 255, 230), (255, 255, 255))

CARD_W, CARD_H = 24, 32        # one card at scale 1
OVERLAP = 10                   # River cards show their top 10 rows (the rank/suit label)
SLOT = 28                      # horizontal pitch of piles and columns
MARGIN, HEADER_H = 4, 12
PANEL_W = 4 + 3 * SLOT + 4 + 5 * SLOT + 4          # Nertz, stock, waste, 5 River columns
PANEL_H = 12 + 12 * OVERLAP + CARD_H + 4           # label, a full K..A column
LAKE_COLS, LAKE_SLOT_H, LAKE_LABEL_H = 8, CARD_H + 12, 10

_FONT_ROWS = {
    "0": [" ### ", "#   #", "#  ##", "# # #", "##  #", "#   #", " ### "],
    "1": ["  #  ", " ##  ", "  #  ", "  #  ", "  #  ", "  #  ", " ### "],
    "2": [" ### ", "#   #", "    #", "   # ", "  #  ", " #   ", "#####"],
    "3": ["#####", "   # ", "  #  ", "   # ", "    #", "#   #", " ### "],
    "4": ["   # ", "  ## ", " # # ", "#  # ", "#####", "   # ", "   # "],
    "5": ["#####", "#    ", "#### ", "    #", "    #", "#   #", " ### "],
    "6": ["  ## ", " #   ", "#    ", "#### ", "#   #", "#   #", " ### "],
    "7": ["#####", "    #", "   # ", "  #  ", " #   ", " #   ", " #   "],
    "8": [" ### ", "#   #", "#   #", " ### ", "#   #", "#   #", " ### "],
    "9": [" ### ", "#   #", "#   #", " ####", "    #", "   # ", " ##  "],
    "A": [" ### ", "#   #", "#   #", "#####", "#   #", "#   #", "#   #"],
    "B": ["#### ", "#   #", "#   #", "#### ", "#   #", "#   #", "#### "],
    "C": [" ### ", "#   #", "#    ", "#    ", "#    ", "#   #", " ### "],
    "D": ["#### ", "#   #", "#   #", "#   #", "#   #", "#   #", "#### "],
    "E": ["#####", "#    ", "#    ", "#### ", "#    ", "#    ", "#####"],
    "F": ["#####", "#    ", "#    ", "#### ", "#    ", "#    ", "#    "],
    "G": [" ### ", "#   #", "#    ", "# ###", "#   #", "#   #", " ####"],
    "H": ["#   #", "#   #", "#   #", "#####", "#   #", "#   #", "#   #"],
    "I": [" ### ", "  #  ", "  #  ", "  #  ", "  #  ", "  #  ", " ### "],
    "J": ["  ###", "   # ", "   # ", "   # ", "   # ", "#  # ", " ##  "],
    "K": ["#   #", "#  # ", "# #  ", "##   ", "# #  ", "#  # ", "#   #"],
    "L": ["#    ", "#    ", "#    ", "#    ", "#    ", "#    ", "#####"],
    "M": ["#   #", "## ##", "# # #", "# # #", "#   #", "#   #", "#   #"],
    "N": ["#   #", "#   #", "##  #", "# # #", "#  ##", "#   #", "#   #"],
    "O": [" ### ", "#   #", "#   #", "#   #", "#   #", "#   #", " ### "],
    "P": ["#### ", "#   #", "#   #", "#### ", "#    ", "#    ", "#    "],
    "Q": [" ### ", "#   #", "#   #", "#   #", "# # #", "#  # ", " ## #"],
    "R": ["#### ", "#   #", "#   #", "#### ", "# #  ", "#  # ", "#   #"],
    "S": [" ####", "#    ", "#    ", " ### ", "    #", "    #", "#### "],
    "T": ["#####", "  #  ", "  #  ", "  #  ", "  #  ", "  #  ", "  #  "],
    "U": ["#   #", "#   #", "#   #", "#   #", "#   #", "#   #", " ### "],
    "V": ["#   #", "#   #", "#   #", "#   #", "#   #", " # # ", "  #  "],
    "W": ["#   #", "#   #", "#   #", "# # #", "# # #", "# # #", " # # "],
    "X": ["#   #", "#   #", " # # ", "  #  ", " # # ", "#   #", "#   #"],
    "Y": ["#   #", "#   #", " # # ", "  #  ", "  #  ", "  #  ", "  #  "],
    "Z": ["#####", "    #", "   # ", "  #  ", " #   ", "#    ", "#####"],
    "-": ["     ", "     ", "     ", "#####", "     ", "     ", "     "],
    "+": ["     ", "  #  ", "  #  ", "#####", "  #  ", "  #  ", "     "],
    "!": ["  #  ", "  #  ", "  #  ", "  #  ", "  #  ", "     ", "  #  "],
    ":": ["     ", "  #  ", "  #  ", "     ", "  #  ", "  #  ", "     "],
    ".": ["     ", "     ", "     ", "     ", "     ", "     ", "  #  "],
    "/": ["    #", "    #", "   # ", "  #  ", " #   ", "#    ", "#    "],
    "(": ["   # ", "  #  ", " #   ", " #   ", " #   ", "  #  ", "   # "],
    ")": [" #   ", "  #  ", "   # ", "   # ", "   # ", "  #  ", " #   "],
    "#": [" # # ", " # # ", "#####", " # # ", "#####", " # # ", " # # "],
    " ": ["     "] * 7,
}
_SUIT_ROWS = {     # suit id order of layout.py: S H D C
    0: ["   #   ", "  ###  ", " ##### ", "#######", "## # ##", "   #   ", "  ###  "],
    1: [" ## ## ", "#######", "#######", "#######", " ##### ", "  ###  ", "   #   "],
    2: ["   #   ", "  ###  ", " ##### ", "#######", " ##### ", "  ###  ", "   #   "],
    3: ["  ###  ", "  ###  ", "## # ##", "#######", "## # ##", "   #   ", "  ###  "],
}


def _bitmap(rows) -> np.ndarray:
    return np.array([[ch == "#" for ch in row] for row in rows], bool)


GLYPHS = {ch: _bitmap(rows) for ch, rows in _FONT_ROWS.items()}
SUIT_GLYPHS = {s: _bitmap(rows) for s, rows in _SUIT_ROWS.items()}


def text_width(text: str) -> int:
    return 6 * len(text) - 1 if text else 0


def draw_text(img: np.ndarray, y: int, x: int, text: str, colour) -> None:
    """Write `text` (upper-cased; unknown characters as blanks) with its top-left at (y, x),
    clipped to the picture."""
    H, W = img.shape[:2]
    for ch in text.upper():
        g = GLYPHS.get(ch)
        if g is not None and ch != " " and 0 <= y and y + 7 <= H and 0 <= x and x + 5 <= W:
            img[y:y + 7, x:x + 5][g] = colour
        x += 6


def _frame(fill, edge=CARD_EDGE) -> np.ndarray:
    img = np.empty((CARD_H, CARD_W, 3), np.uint8)
    img[:] = edge
    img[1:-1, 1:-1] = fill
    return img


def _face(card: int) -> np.ndarray:
    suit, rank = divmod(card, N_RANKS)
    colour = RED if suit in (1, 2) else BLACK
    img = _frame(CARD_FACE)
    label = RANKS[rank]
    draw_text(img, 2, 2, label, colour)
    x = 2 + text_width(label) + 1
    img[2:9, x:x + 7][SUIT_GLYPHS[suit]] = colour
    big = SUIT_GLYPHS[suit].repeat(2, 0).repeat(2, 1)               # 14 x 14 pip
    img[13:27, 5:19][big] = colour
    return img


def _back() -> np.ndarray:
    img = _frame(CARD_BACK)
    yy, xx = np.mgrid[0:CARD_H - 4, 0:CARD_W - 4]
    img[2:-2, 2:-2][(yy + xx) % 4 == 0] = CARD_BACK_LINE
    return img


FACES = np.stack([_face(c) for c in range(52)])          # [52, CARD_H, CARD_W, 3]
BACK = _back()
_EMPTY_MASK = np.zeros((CARD_H, CARD_W), bool)
_EMPTY_MASK[[0, -1], :] = True
_EMPTY_MASK[:, [0, -1]] = True


# ---------------------------------------------------------------------------- geometry
def _check_teams(num_teams) -> int:
    if isinstance(num_teams, bool) or not isinstance(num_teams, (int, np.integer)) \
            or not 2 <= num_teams <= 8:
        raise ValueError(f"num_teams={num_teams!r}: render_rgb draws 2 to 8 teams")
    return int(num_teams)


@lru_cache(maxsize=None)
def _geometry(num_teams: int):
    top = (num_teams + 1) // 2
    rows = (4 * num_teams + LAKE_COLS - 1) // LAKE_COLS
    lake_w = LAKE_COLS * SLOT
    width = 2 * MARGIN + max(top * PANEL_W, lake_w)
    lake_y = HEADER_H + PANEL_H
    lake_h = LAKE_LABEL_H + rows * LAKE_SLOT_H
    height = lake_y + lake_h + PANEL_H + MARGIN
    panels = []
    for t in range(num_teams):
        row, i = (0, t) if t < top else (1, t - top)
        n = top if row == 0 else num_teams - top
        x0 = (width - n * PANEL_W) // 2 + i * PANEL_W
        y0 = HEADER_H if row == 0 else lake_y + lake_h
        panels.append((y0, x0))
    lake_x = (width - lake_w) // 2 + 2
    return height, width, tuple(panels), (lake_y, lake_x)


def picture_shape(num_teams: int, scale: int = 1) -> tuple:
    """(H, W, 3): the shape of every picture of a table with `num_teams` teams."""
    h, w, _, _ = _geometry(_check_teams(num_teams))
    return (h * scale, w * scale, 3)


def card_origin(kind: str, num_teams: int, team: int = 0, index: int = 0,
                depth: int = 0) -> tuple:
    """(y, x) at scale 1 of a card's top-left corner: kind "lake" (index = pile), "nertz",
    "stock", "waste" or "river" (index = column, depth = position from the column's bottom).
    The card covers CARD_H x CARD_W pixels from there (a covered River card: its top OVERLAP
    rows)."""
    _, _, panels, (lake_y, lake_x) = _geometry(_check_teams(num_teams))
    if kind == "lake":
        r, c = divmod(index, LAKE_COLS)
        return lake_y + LAKE_LABEL_H + r * LAKE_SLOT_H, lake_x + c * SLOT
    y0, x0 = panels[team]
    if kind in ("nertz", "stock", "waste"):
        return y0 + 12, x0 + 4 + ("nertz", "stock", "waste").index(kind) * SLOT
    if kind == "river":
        return y0 + 12 + depth * OVERLAP, x0 + 4 + 3 * SLOT + 4 + index * SLOT
    raise ValueError(f"kind={kind!r}: one of lake, nertz, stock, waste, river")


@lru_cache(maxsize=None)
def _background(num_teams: int) -> np.ndarray:
    h, w, panels, (lake_y, lake_x) = _geometry(num_teams)
    img = np.empty((h, w, 3), np.uint8)
    img[:] = FELT
    draw_text(img, lake_y + 1, lake_x, "LAKE", TEXT)
    for p in range(4 * num_teams):
        _blit_empty(img, *card_origin("lake", num_teams, index=p))
    for t, (y0, x0) in enumerate(panels):
        img[y0 + 1, x0 + 2:x0 + PANEL_W - 2] = FELT_DARK                  # panel separators
        for kind in ("nertz", "stock", "waste"):
            _blit_empty(img, *card_origin(kind, num_teams, t))
    img.setflags(write=False)
    return img


def _blit_empty(img, y, x) -> None:
    img[y:y + CARD_H, x:x + CARD_W][_EMPTY_MASK] = FELT_DARK


def _card_id(text) -> tuple:
    deck, cid = parse_card(text, 0)
    return deck, cid


# ---------------------------------------------------------------------------- drawing
def render_rgb(layout: dict, *, scale: int = 1, scores=None, highlight: int | None = None
               ) -> np.ndarray:
    """An H x W x 3 uint8 picture of a position in docs/api.md's layout format (`Table.layout()`).

    scores: optional per-team hand scores to print in the team labels; highlight: optional
    team whose panel gets a frame (the learner's team). The shape depends only on the number
    of teams and `scale` (`picture_shape`)."""
    if isinstance(scale, bool) or not isinstance(scale, (int, np.integer)) or not 1 <= scale <= 16:
        raise ValueError(f"scale={scale!r}: an int from 1 to 16")
    teams = layout["teams"]
    T = _check_teams(len(teams))
    h, w, panels, _ = _geometry(T)
    img = _background(T).copy()
    callers = set(layout.get("callers", ()))

    head = f"TICK {layout.get('tick', 0)}  HAND {layout.get('hand', 0)}"
    if callers:
        head += "  NERTZ CALLED"
    draw_text(img, 3, MARGIN, head, TEXT)

    for p, pile in enumerate(layout.get("lake", [])[:4 * T]):
        y, x = card_origin("lake", T, index=p)
        deck, cid = _card_id(pile[-1])
        img[y:y + CARD_H, x:x + CARD_W] = FACES[cid]
        img[y + CARD_H - 3:y + CARD_H - 1, x + 1:x + CARD_W - 1] = TEAM_COLOURS[deck % 8]
        n = str(len(pile))
        draw_text(img, y + CARD_H + 2, x + (CARD_W - text_width(n)) // 2, n, COUNT)

    for t, team in enumerate(teams):
        y0, x0 = panels[t]
        colour = TEAM_COLOURS[t % 8]
        label = f"TEAM {t}"
        if scores is not None:
            label += f"  {int(scores[t]):+d}"
        draw_text(img, y0 + 3, x0 + 4, label, colour)
        if t in callers:
            draw_text(img, y0 + 3, x0 + 4 + text_width(label) + 12, "NERTZ!", COUNT)
        if highlight is not None and t == highlight:
            img[y0:y0 + PANEL_H, [x0, x0 + PANEL_W - 1]] = colour
            img[[y0, y0 + PANEL_H - 1], x0:x0 + PANEL_W] = colour

        nertz, stream = team["nertz"], team["stream"]
        k = int(team.get("waste", 0))
        below = y0 + 12 + CARD_H + 2
        y, x = card_origin("nertz", T, t)
        if nertz:
            img[y:y + CARD_H, x:x + CARD_W] = FACES[_card_id(nertz[-1])[1]]
        _count(img, below, x, f"N{len(nertz)}")
        y, x = card_origin("stock", T, t)
        if len(stream) > k:
            img[y:y + CARD_H, x:x + CARD_W] = BACK
        _count(img, below, x, f"S{len(stream) - k}")
        y, x = card_origin("waste", T, t)
        if k:
            img[y:y + CARD_H, x:x + CARD_W] = FACES[_card_id(stream[k - 1])[1]]
        _count(img, below, x, f"W{k}")
        for c, column in enumerate(team["river"][:5]):
            if not column:                      # an empty column: its outline
                _blit_empty(img, *card_origin("river", T, t, c))
            for d, card in enumerate(column[:13]):
                y, x = card_origin("river", T, t, c, d)
                img[y:y + CARD_H, x:x + CARD_W] = FACES[_card_id(card)[1]]
    if scale != 1:
        img = img.repeat(scale, 0).repeat(scale, 1)
    return img


def _count(img, y, x, text) -> None:
    draw_text(img, y, x + (CARD_W - text_width(text)) // 2, text, COUNT)
