"""The replay file: `HandReplay` (one hand: its start, its ticks, the end it must reach) and
`Replay` (the config, one agent name per seat, the hands, free `meta`), written and read as
versioned, checksummed JSON. The playing-back methods of Replay (start, positions, check,
frames) are playback.py's `Playback`; the recorder that fills a Replay is recorder.py.

Design
- What makes a hand: its start (the deck orders of every team and the hand number, R4-R8, or
  an API.md layout when the hand began from a written position), then per tick every seat's
  action id and the tick's priority order (R22). Nothing else is random, so playing those
  ids in that order from that start gives the same positions: the priority order is stored
  rather than the generator's key, so a replay never depends on how the table's generator
  was seeded (tournaments restart it per hand) or on the kernel that played the hand.
- The end of each hand is written down as a check (playback.end_of): status (nertz,
  truncated, open), tick, R29 scores, callers and a digest of the whole final state of the
  table (every NertzState array but the generator key).
- The file: JSON, gzip-compressed when the name ends in ".gz" (mtime 0: the same replay gives
  the same bytes), versioned (`format`: "nertz-replay", `version`: 1). Per hand the actions
  are one flat list of ints (ticks x seats) and the priority orders one string of hex digits
  (a seat each, <= 16 seats; sizes in docs/replays.md). A sha256 of the canonical JSON of the
  content guards the file: a truncated file, a file that is not JSON, a wrong format or
  version, a missing or malformed field and a checksum mismatch are each a ReplayError (a
  ValueError) saying which and where.

Builds on config, encoding, actions and playback; never imports envs, and the recorder (which
builds on this module) only by name, in the transitional `__getattr__` at the end.
"""
from __future__ import annotations

import gzip
import hashlib
import json
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..actions import N_ACTIONS
from ..config import RulesConfig
from ..encoding import DECK, card_text, parse_card
from .playback import Playback, ReplayError

FORMAT = "nertz-replay"
VERSION = 1
SUFFIX = ".nertz.json.gz"
HEX = "0123456789abcdef"                  # a seat per hex digit: at most 16 seats


@dataclass
class HandReplay:
    """One hand: its start, its ticks and the end it must reach."""
    hand: int                                  # the hand number (R4 roles)
    decks: np.ndarray | None                   # int8 [T, 52], top of each deck first; or
    layout: dict | None                        # the API.md layout it started from
    actions: np.ndarray                        # int16 [ticks, S]
    priority: np.ndarray                       # int8 [ticks, S] the resolution order (R22)
    end: dict                                  # status, tick, scores, callers[, digest]
    label: dict = field(default_factory=dict)  # where it came from (deal, seating, ...)

    @property
    def ticks(self) -> int:
        return int(self.actions.shape[0])


@dataclass
class Replay(Playback):
    """A recorded table: every hand of it and who sat where (module docstring)."""
    config: RulesConfig
    agents: list                               # one name per seat
    hands: list                                # HandReplay
    meta: dict = field(default_factory=dict)

    # ------------------------------------------------------------------ file
    def to_json(self) -> dict:
        body = {"format": FORMAT, "version": VERSION, "config": self.config.to_dict(),
                "agents": list(self.agents), "meta": self.meta,
                "hands": [_hand_json(h) for h in self.hands]}
        body["sha256"] = _checksum(body)
        return body

    def save(self, path) -> Path:
        """Write the file (gzip when the name ends in .gz); returns the path."""
        path = Path(path)
        try:
            text = json.dumps(self.to_json(), separators=(",", ":")).encode()
        except TypeError as err:             # meta or labels holding numpy or other objects
            raise ValueError(f"replay file {str(path)!r}: meta and labels must hold JSON "
                             f"values (str, int, float, bool, None, lists, dicts): {err}") from None
        if path.name.endswith(".gz"):
            text = gzip.compress(text, mtime=0)      # mtime 0: same replay, same bytes
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(text)
        except OSError as err:
            raise ValueError(f"replay file {str(path)!r}: cannot write it "
                             f"({err.strerror or err})") from None
        return path

    @classmethod
    def load(cls, path) -> "Replay":
        """Read and validate a replay file (ReplayError, a ValueError, naming what is wrong)."""
        path = Path(path)
        try:
            raw = path.read_bytes()
        except OSError as err:
            raise ReplayError(f"replay file {str(path)!r}: cannot read it ({err.strerror})") from None
        if raw[:2] == b"\x1f\x8b":
            try:
                raw = gzip.decompress(raw)
            except (EOFError, OSError, zlib.error) as err:
                raise ReplayError(f"replay file {str(path)!r} is truncated or corrupted "
                                  f"(gzip: {err})") from None
        try:
            body = json.loads(raw)
        except (UnicodeDecodeError, json.JSONDecodeError) as err:
            raise ReplayError(f"replay file {str(path)!r} is truncated or not JSON ({err})") from None
        return cls.from_json(body, str(path))

    @classmethod
    def from_json(cls, body, where: str = "replay") -> "Replay":
        if not isinstance(body, dict) or body.get("format") != FORMAT:
            raise ReplayError(f"{where}: not a nertz replay (its 'format' must be {FORMAT!r})")
        if body.get("version") != VERSION:
            raise ReplayError(f"{where}: replay version {body.get('version')!r} is not supported "
                              f"(this nertz-env reads version {VERSION})")
        if body.get("sha256") != _checksum({k: v for k, v in body.items() if k != "sha256"}):
            raise ReplayError(f"{where}: checksum mismatch: the file was changed or corrupted "
                              "after it was written")
        try:
            config = RulesConfig(**body["config"])
        except (TypeError, ValueError, KeyError) as err:
            raise ReplayError(f"{where}: field 'config' is not a valid RulesConfig ({err})") from None
        agents = body.get("agents")
        if not isinstance(agents, list) or len(agents) != config.num_seats \
                or not all(isinstance(a, str) for a in agents):
            raise ReplayError(f"{where}: field 'agents' must list {config.num_seats} names, one "
                              "per seat")
        hands = body.get("hands")
        if not isinstance(hands, list):
            raise ReplayError(f"{where}: field 'hands' must be a list")
        meta = body.get("meta", {})
        return cls(config, agents, [_hand_from_json(h, config, f"{where}: hands[{i}]")
                                    for i, h in enumerate(hands)], meta if isinstance(meta, dict) else {})

    def summary(self) -> list:
        """One line per hand: number, ticks, status, scores, label."""
        lines = []
        for i, h in enumerate(self.hands):
            lab = " ".join(f"{k}={v}" for k, v in h.label.items())
            lines.append(f"hand {i}: hand number {h.hand}, {h.ticks} ticks, "
                         f"{h.end['status']}"
                         + (f", scores {h.end['scores']}" if "scores" in h.end else "")
                         + (f", callers {h.end['callers']}" if h.end.get("callers") else "")
                         + (f"  ({lab})" if lab else ""))
        return lines


# ---------------------------------------------------------------------- JSON
def _checksum(body: dict) -> str:
    text = json.dumps(body, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def _hand_json(h: HandReplay) -> dict:
    out = {"hand": h.hand}
    if h.layout is not None:
        out["layout"] = h.layout
    else:
        out["decks"] = [" ".join(card_text(int(c)) for c in deck) for deck in h.decks]
    out["ticks"] = h.ticks
    out["actions"] = [int(a) for a in h.actions.reshape(-1)]
    out["priority"] = "".join(HEX[int(s)] for s in h.priority.reshape(-1))
    out["end"] = h.end
    if h.label:
        out["label"] = h.label
    return out


def _hand_from_json(d, config: RulesConfig, where: str) -> HandReplay:
    if not isinstance(d, dict):
        raise ReplayError(f"{where} must be an object")
    S, T = config.num_seats, config.num_teams

    def need(key, kind):
        if key not in d or not isinstance(d[key], kind) or isinstance(d[key], bool):
            raise ReplayError(f"{where}: field {key!r} is missing or not a {kind.__name__}")
        return d[key]
    hand, ticks = need("hand", int), need("ticks", int)
    if ticks < 0:
        raise ReplayError(f"{where}: 'ticks' must be >= 0")
    decks = layout = None
    if "layout" in d:
        layout = need("layout", dict)
    else:
        text = need("decks", list)
        if len(text) != T:
            raise ReplayError(f"{where}: 'decks' must hold {T} decks, one per team")
        decks = np.zeros((T, DECK), np.int8)
        for t, deck in enumerate(text):
            cards = deck.split() if isinstance(deck, str) else []
            try:
                ids = sorted(parse_card(c, t)[1] for c in cards)
            except ValueError as err:
                raise ReplayError(f"{where}: decks[{t}]: {err}") from None
            if ids != list(range(DECK)):
                raise ReplayError(f"{where}: decks[{t}] must list the team's 52 cards once each")
            decks[t] = [parse_card(c, t)[1] for c in cards]
    acts = need("actions", list)
    if len(acts) != ticks * S or not all(isinstance(a, int) and not isinstance(a, bool)
                                         and 0 <= a < N_ACTIONS for a in acts):
        raise ReplayError(f"{where}: 'actions' must hold ticks x seats = {ticks * S} action ids "
                          f"0..{N_ACTIONS - 1}")
    prio = need("priority", str)
    if len(prio) != ticks * S or any(c not in HEX[:S] for c in prio):
        raise ReplayError(f"{where}: 'priority' must hold ticks x seats = {ticks * S} hex seat "
                          f"digits 0..{HEX[S - 1]}")
    order = np.array([HEX.index(c) for c in prio], np.int8).reshape(ticks, S)
    if ticks and not (np.sort(order, axis=1) == np.arange(S)).all():
        raise ReplayError(f"{where}: every tick's 'priority' must be a permutation of the seats")
    end = need("end", dict)
    for key in ("status", "tick"):
        if key not in end:
            raise ReplayError(f"{where}: field 'end' lacks {key!r}")
    label = d.get("label", {})
    return HandReplay(hand, decks, layout, np.array(acts, np.int16).reshape(ticks, S), order,
                      end, label if isinstance(label, dict) else {})
