"""The shipped bots' decision rules in plain Python: the readable oracle for the jitted bots.

`docs/heuristics.md` is the contract for the `greedy` and `heuristic` bots. The batched core
runs a jitted implementation of it inside its tick loop, reading the state arrays. This module
is a second, independent implementation written only from that page: plain Python and numpy,
no numba, and it sees nothing but what the seat sees, i.e. its observation vector
(`nertz_env/core/observe.py`) and its action mask. Tests compare the two move for move, so
this file favours being obviously right over being fast.

    scores = action_scores(observation, action_mask, knobs)   # int64 [322]
    action = choose_action(observation, action_mask, knobs)   # argmax over legal, ties -> lowest id

`knobs` is the knob vector of the spec, in the order of `KNOB_NAMES`.

Reading the page literally, with these choices where it leaves room:
- Wait is always legal (the spec says so) and always scores 0, whatever the mask says; so
  choose_action returns 0 when nothing scores above 0, even on an all-zero mask.
- "A knob of -1 or less means never for that kind of move": when the knob that names a move's
  kind (k_lake_stream for waste>lake, k_lake_river for riverC>lake and for a stack without N,
  k_lake_nertz for a stack with N, k_nertz_river for nertz>riverC, ...) is -1 or less, the move
  scores that knob as it is: no bonus (+L, +1, k_empty_bonus) and no "but 1" override is
  applied on top of it, so the move is never played.
- A stack "contains W and the waste>lake rule would give 1 for W" is read as: W is in the
  stack and the waste>lake score computed for W equals 1.
"""
from __future__ import annotations

import operator

import numpy as np

from nertz_env.actions import BUILD0, N_ACTIONS, WAIT, decode
from nertz_env.encoding import COL_CAP, MAX_RIVER, SRC_NERTZ, SRC_RIVER0, SRC_WASTE

KNOB_NAMES = ("lake_nertz", "lake_stream", "lake_river", "empty_bonus", "nertz_river",
              "waste_river", "waste_river_useful", "shift_empty", "shift_expose", "flip",
              "withhold_stream", "withhold_river")

# --- action numbering: nertz_env/actions.py (its docstring has the table) -----------------
N_COLUMNS = MAX_RIVER  # River columns in the numbering (a 4-column River leaves column 4 empty)


def _build_id(src, c):
    """nertz>riverC (src 0) or waste>riverC (src 1): BUILD0 + 5 * src + C."""
    return BUILD0 + N_COLUMNS * src + c

# --- observation layout (nertz_env/core/observe.py docstring) ----------------------------
OBS_DIM = 791
CARD_F = 6           # present, (rank + 1) / 13, one-hot suit S H D C
OFF_NERTZ = 0
OFF_WASTE = 7
OFF_RIVER = 15       # 5 columns x 13 depths x card, bottom first; zeros = empty

NEVER_SCORE = -10 ** 9   # the score of an illegal action
CALL_SCORE = 10000
WITHHOLD_USEFUL, WITHHOLD_NEVER, WITHHOLD_KEEP = 1, 2, 3


# --- cards ---------------------------------------------------------------------------------
def _card_at(obs, offset):
    """(rank, suit) of the card encoded at obs[offset:offset + 6], or None when absent."""
    if obs[offset] < 0.5:
        return None
    rank = int(round(float(obs[offset + 1]) * 13)) - 1
    suit = int(np.argmax(obs[offset + 2:offset + CARD_F]))
    return rank, suit


def _is_red(card):
    return card[1] in (1, 2)          # hearts, diamonds


def fits(x, y):
    """R11: card x could be built on card y (one rank lower, other colour)."""
    return x is not None and y is not None and x[0] == y[0] - 1 and _is_red(x) != _is_red(y)


def _in_run(card, bottom, length):
    """`card` is one of the `length` cards of the same-suit ascending run starting at `bottom`."""
    return (card is not None and bottom is not None and card[1] == bottom[1]
            and 0 <= card[0] - bottom[0] < length)


class _View:
    """What the bot looks at, decoded from one seat's observation."""

    def __init__(self, obs, mask):
        self.mask = mask
        self.N = _card_at(obs, OFF_NERTZ)
        self.W = _card_at(obs, OFF_WASTE)
        self.columns = []
        for c in range(N_COLUMNS):
            col = []
            for d in range(COL_CAP):
                card = _card_at(obs, OFF_RIVER + (c * COL_CAP + d) * CARD_F)
                if card is None:
                    break
                col.append(card)
            self.columns.append(col)

    def height(self, c):
        return len(self.columns[c])

    def top(self, c):
        col = self.columns[c]
        return col[-1] if col else None

    def source_card(self, src):
        if src == SRC_NERTZ:
            return self.N
        if src == SRC_WASTE:
            return self.W
        return self.top(src - SRC_RIVER0)

    def useful_w(self):
        """useful(W): N and W exist and N fits on W."""
        return self.N is not None and self.W is not None and fits(self.N, self.W)

    def waste_to_river(self):
        """Some waste>riverC move is legal now (the action mask)."""
        return any(self.mask[_build_id(SRC_WASTE, c)] for c in range(N_COLUMNS))


# --- the score table ----------------------------------------------------------------------
def _waste_lake_score(v, k):
    if k["lake_stream"] <= -1:
        return k["lake_stream"]
    ws = k["withhold_stream"]
    if ws == WITHHOLD_NEVER or (ws == WITHHOLD_USEFUL and v.useful_w()):
        return 1
    if ws == WITHHOLD_KEEP and v.useful_w() and v.waste_to_river():
        return 1
    return k["lake_stream"]


def _river_lake_score(v, k, c):
    if k["lake_river"] <= -1:
        return k["lake_river"]
    if k["withhold_river"] == 1 and v.N is not None and fits(v.N, v.top(c)):
        return 1
    score = k["lake_river"]
    if v.height(c) == 1 and v.N is not None:
        score += k["empty_bonus"]
    return score


def _stack_score(v, k, src, length):
    bottom = v.source_card(src)
    if _in_run(v.N, bottom, length):
        if k["lake_nertz"] <= -1:
            return k["lake_nertz"]
        return k["lake_nertz"] + length
    if k["lake_river"] <= -1:
        return k["lake_river"]
    if _in_run(v.W, bottom, length) and _waste_lake_score(v, k) == 1:
        return 1
    return k["lake_river"] + length


def _nertz_river_score(v, k, c):
    if k["nertz_river"] <= -1:
        return k["nertz_river"]
    return k["nertz_river"] + (1 if v.height(c) > 0 else 0)


def _shift_score(v, k, a, index, b):
    if index == 0 and v.height(b) > 0 and v.N is not None:
        return k["shift_empty"]
    if index > 0 and v.N is not None and index <= v.height(a) \
            and fits(v.N, v.columns[a][index - 1]):
        return k["shift_expose"]
    return -1


def decode_action(action):
    """(kind, ...) of an action id in the numbering of nertz_env/actions.py:
    ('wait',) ('flip',) ('call',) ('lake', src) ('build', src, C) ('shift', A, I, B)
    ('stack', src, L)."""
    kind, src, dst, index, length = decode(action)
    if kind == "lake":
        return ("lake", src)
    if kind == "build":
        return ("build", src, dst)
    if kind == "shift":
        return ("shift", src - SRC_RIVER0, index, dst)
    if kind == "stack":
        return ("stack", src, length)
    return (kind,)


def _score(v, k, action):
    kind, *args = decode_action(action)
    if kind == "wait":
        return 0
    if kind == "call":
        return CALL_SCORE
    if kind == "flip":
        return k["flip"]
    if kind == "lake":
        (src,) = args
        if src == SRC_NERTZ:
            return k["lake_nertz"]
        if src == SRC_WASTE:
            return _waste_lake_score(v, k)
        return _river_lake_score(v, k, src - SRC_RIVER0)
    if kind == "build":
        frm, c = args
        if frm == SRC_NERTZ:
            return _nertz_river_score(v, k, c)
        return k["waste_river_useful"] if v.useful_w() else k["waste_river"]
    if kind == "shift":
        a, index, b = args
        return _shift_score(v, k, a, index, b)
    src, length = args
    return _stack_score(v, k, src, length)


# --- public API ----------------------------------------------------------------------------
def _check(observation, action_mask, knobs):
    obs = np.asarray(observation)
    if obs.shape != (OBS_DIM,):
        raise ValueError(f"observation has shape {obs.shape}; expected ({OBS_DIM},), "
                         f"one seat's observation vector")
    mask = np.asarray(action_mask)
    if mask.shape != (N_ACTIONS,):
        raise ValueError(f"action_mask has shape {mask.shape}; expected ({N_ACTIONS},)")
    try:
        values = [operator.index(x) for x in knobs]
    except TypeError:
        raise ValueError(f"knobs must be a sequence of {len(KNOB_NAMES)} ints "
                         f"({', '.join(KNOB_NAMES)}), got {knobs!r}") from None
    if len(values) != len(KNOB_NAMES):
        raise ValueError(f"knobs has {len(values)} values; expected {len(KNOB_NAMES)} "
                         f"({', '.join(KNOB_NAMES)})")
    return obs.astype(np.float64), mask.astype(bool), dict(zip(KNOB_NAMES, values))


def action_scores(observation, action_mask, knobs) -> np.ndarray:
    """int64 [322]: the spec's score of every legal action; illegal ones get NEVER_SCORE.
    Wait is always legal and scores 0."""
    obs, mask, k = _check(observation, action_mask, knobs)
    view = _View(obs, mask)
    scores = np.full(N_ACTIONS, NEVER_SCORE, dtype=np.int64)
    for action in np.flatnonzero(mask):
        scores[action] = _score(view, k, int(action))
    scores[WAIT] = 0
    return scores


def choose_action(observation, action_mask, knobs) -> int:
    """The bot's move: the highest-scoring legal action, ties to the lowest id."""
    return int(np.argmax(action_scores(observation, action_mask, knobs)))   # first maximum
