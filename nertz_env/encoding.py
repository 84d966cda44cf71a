"""THE index map: every encoding in a Nertz state. No other file defines an index.

Glossary (the rulebook's words, one per thing; docs/rules.md):
- Nertz pile: 13 cards per team, only the top face up. (a.k.a. "Pounce pile": not used here)
- River: the team's columns (4 or 5), built down in alternating colours.
- Stream: the team's remaining cards. Its stock is the face-down part, its waste the flipped
  part; the top waste card is the available Stream card.
- Lake: the shared piles in the middle, built up in suit from an ace.

Cards
    card id   = suit * 13 + rank           int8, 0..51: a card of a team's own deck
    lake card = deck * 52 + card id        int16: a Lake card remembers its owner (R10)
    rank 0 = A ... 12 = K; suit 0..3 = S H D C; red = H, D (R1)
    NO_CARD = -1 marks an empty slot.

Sources (where an available card sits, R9) used by actions and stacks
    SRC_NERTZ = 0, SRC_WASTE = 1, SRC_RIVER0 + c = River column c (c < MAX_RIVER)

State arrays (nertz_env/core/state.py, axes: table e, team t, seat s, column c, depth d)
    | array      | dtype  | shape              | meaning                                         |
    |------------|--------|--------------------|-------------------------------------------------|
    | nertz      | int8   | [E, T, 13]         | Nertz pile bottom -> top                        |
    | nertz_n    | int8   | [E, T]             | cards in it                                     |
    | river      | int8   | [E, T, R, 13]      | River columns bottom -> top                     |
    | river_n    | int8   | [E, T, R]          | cards per column                                |
    | stream     | int8   | [E, T, 52]         | Stream s0 first (stock and waste together)      |
    | stream_n   | int8   | [E, T]             | cards in the Stream                             |
    | waste_n    | int8   | [E, T]             | cards flipped (k of R15); top = stream[k-1]     |
    | lake       | int16  | [E, 4T, 13]        | Lake piles bottom -> top, lake card ids         |
    | lake_n     | int8   | [E, 4T]            | cards per Lake pile                             |
    | lake_piles | int8   | [E]                | piles started (in start order, D4)              |
    | lake_next  | int8   | [E, 52]            | piles whose next needed card is this card id    |
    | lake_own   | int16  | [E, T]             | cards of each team's deck in the Lake (R29)     |
    | ready      | int32  | [E, S]             | tick from which the seat is ready again (R21)   |
    | tick       | int32  | [E]                | ticks played this hand                          |
    | hand       | int32  | [E]                | hand number in the game (roles, R4)             |
    | turnovers  | int32  | [E, T]             | Stream turn-overs since the last card move (R27)|
    | burns      | int32  | [E]                | burns in a row without a card move (R28)        |
    | penalties  | int32  | [E, T]             | penalized illegal moves (R31)                   |
    | callers    | int8   | [E, T]             | 1 = the team called Nertz this hand (R24)       |
    | status     | int8   | [E]                | PLAYING, OVER_NERTZ or OVER_TRUNCATED           |
    | rng        | uint64 | [E]                | the table's seeded generator state (R8, R22)    |

    The counters are int32: a hand of max_ticks (<= 1,000,000) ticks adds at most one burn and
    one penalty per seat a tick. What every state must satisfy (each card once, valid piles,
    counters in range) is checked by core/invariants.py on every state written from outside
    (layouts, set_state) and by the property tests.
"""
from __future__ import annotations

N_RANKS, N_SUITS, DECK = 13, 4, 52
NO_CARD = -1
ACE, KING = 0, 12
SUITS = "SHDC"
RANKS = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")

MAX_TEAMS = 8              # R3; every team axis is sized for it
NERTZ_SIZE = 13            # R6
MAX_RIVER = 5              # R5 variant
COL_CAP = 13               # a River column holds at most K..A (13 cards)
STREAM_CAP = 52            # a layout may put a whole deck in the Stream
LAKE_PILES_PER_TEAM = 4    # one per ace of the team's deck

SRC_NERTZ, SRC_WASTE, SRC_RIVER0 = 0, 1, 2
N_SOURCES = SRC_RIVER0 + MAX_RIVER

# status values
PLAYING, OVER_NERTZ, OVER_TRUNCATED = 0, 1, 2

# move kinds, index into the move cost vector (RulesConfig.move_ticks)
COST_FLIP, COST_LAKE, COST_RIVER, COST_SHIFT = 0, 1, 2, 3


def rank_of(card: int) -> int:
    return card % N_RANKS


def suit_of(card: int) -> int:
    return card // N_RANKS


def is_red(card: int) -> bool:
    return suit_of(card) in (1, 2)


def card_text(card: int, deck: int | None = None, default_deck: int = 0) -> str:
    """Canonical text of a card id (D1): '10H', 'QS@1'."""
    text = RANKS[rank_of(card)] + SUITS[suit_of(card)]
    if deck is not None and deck != default_deck:
        text += f"@{deck}"
    return text


_RANK_OF_TEXT = {r: i for i, r in enumerate(RANKS)}
_RANK_OF_TEXT["T"] = 9


def parse_card(text, default_deck: int = 0) -> tuple[int, int]:
    """Parse R2 card text -> (deck, card id). ValueError names the text otherwise."""
    if not isinstance(text, str):
        raise ValueError(f"card {text!r} is not a string; cards are written like '10H', 'QS@1' (R2)")
    body = text.strip().upper()
    deck = default_deck
    if "@" in body:
        body, _, deck_text = body.partition("@")
        if not deck_text.isdigit():
            raise ValueError(f"card {text!r}: the deck after '@' must be a team number (R2)")
        deck = int(deck_text)
    if len(body) < 2 or body[-1] not in SUITS or body[:-1] not in _RANK_OF_TEXT:
        raise ValueError(
            f"card {text!r} is malformed: write a rank A 2-10 J Q K (T for 10) then a suit "
            f"S H D C, optionally @N for the deck, e.g. '10H', 'QS@1' (R2)")
    return deck, SUITS.index(body[-1]) * N_RANKS + _RANK_OF_TEXT[body[:-1]]
