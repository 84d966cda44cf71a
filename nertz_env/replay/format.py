"""The replay file: `HandReplay` (one hand: its start, its ticks, the end it must reach) and
`Replay` (the config, one agent name per seat, the hands, free `meta`), written and read as
versioned, checksummed JSON. The playing-back methods of Replay (start, positions, check,
frames) are playback.py's `Playback`; the recorder that fills a Replay is recorder.py.

Design
- What makes a hand: its start (the deck orders of every team and the hand number, R4-R8, or
  a docs/api.md layout when the hand began from a written position), then per tick every seat's
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
  content guards the file. Reading treats the file as untrusted (validate.py): capped in
  bytes, inflated size, nesting and counts, every key checked with strict types; a path that
  is not a regular file (a FIFO is never opened), a truncated file, a file that is not JSON
  (or JSON with a key twice in one object, or an integer of over 100 digits), a wrong format
  or version, an unknown, missing or malformed field and a checksum mismatch are each a
  ReplayError (a ValueError) of one line saying which and where. Writing is whole or not at all (nertz_env.files).

Builds on config, encoding, actions and playback; never imports envs, and the recorder (which
builds on this module) only by name, in the transitional `__getattr__` at the end.
"""
from __future__ import annotations

import gzip
import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..config import RulesConfig
from ..encoding import card_text
from ..files import MAX_INT_DIGITS, gunzip_capped, json_loads_strict, read_capped, write_bytes
from . import validate as V
from .notation import hand_words, safe
from .playback import Playback, ReplayError
from .validate import HEX, MAX_FILE_BYTES, MAX_JSON_BYTES  # noqa: F401  (HEX: the recorder's)

FORMAT = "nertz-replay"
VERSION = 1
SUFFIX = ".nertz.json.gz"


@dataclass
class HandReplay:
    """One hand: its start, its ticks and the end it must reach."""
    hand: int                                  # the hand number (R4 roles)
    decks: np.ndarray | None                   # int8 [T, 52], top of each deck first; or
    layout: dict | None                        # the docs/api.md layout it started from
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
        """Write the file (gzip when the name ends in .gz), whole or not at all
        (nertz_env.files.write_bytes); returns the path."""
        path = Path(path)
        try:
            text = json.dumps(self.to_json(), separators=(",", ":"), allow_nan=False).encode()
        except (TypeError, ValueError) as err:   # meta or labels holding numpy, NaN, ...
            raise ValueError(f"replay file {str(path)!r}: meta and labels must hold JSON "
                             f"values (str, int, float, bool, None, lists, dicts): {err}") from None
        if path.name.endswith(".gz"):
            text = gzip.compress(text, mtime=0)      # mtime 0: same replay, same bytes
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            write_bytes(path, text)
        except OSError as err:
            raise ValueError(f"replay file {str(path)!r}: cannot write it "
                             f"({err.strerror or err})") from None
        return path

    @classmethod
    def load(cls, path) -> "Replay":
        """Read and validate a replay file under validate.py's caps (ReplayError, a
        ValueError, naming what is wrong; a file the system will not let be read is an
        OSError naming it, nertz_env/files/bounded.py read_fault)."""
        path = Path(path)
        where = f"replay file {str(path)!r}"
        try:
            raw = read_capped(path, MAX_FILE_BYTES, "replay file")
        except ValueError as err:      # missing too; an unreadable file stays an OSError (exit 1)
            raise ReplayError(str(err)) from None
        if raw[:2] == b"\x1f\x8b":
            try:
                raw = gunzip_capped(raw, MAX_JSON_BYTES, where)
            except ValueError as err:
                text = str(err).replace("is cut short", "is truncated (cut short)")
                raise ReplayError(text.replace("is not valid gzip", "is truncated or corrupted:"
                                               " not valid gzip")) from None
        elif len(raw) > MAX_JSON_BYTES:
            raise ReplayError(f"{where} is larger than the {MAX_JSON_BYTES >> 20} MiB of JSON "
                              "this reader holds")
        try:
            body = json_loads_strict(raw, where, max_int_digits=MAX_INT_DIGITS)
        except ValueError as err:
            raise ReplayError(str(err).replace("is not valid JSON", "is truncated or not "
                                               "valid JSON")) from None
        return cls.from_json(body, where)

    @classmethod
    def from_json(cls, body, where: str = "replay") -> "Replay":
        """A Replay from a parsed file, every key checked (validate.py)."""
        V.top_level(body, where, FORMAT, VERSION)
        config = V.config_of(body["config"], where)
        agents = V.agents_of(body["agents"], config, where)
        hands = [HandReplay(**h) for h in V.hands_of(body["hands"], config, where)]
        meta = V.free_dict(body.get("meta", {}), f"{where}: meta")
        if body["sha256"] != _checksum({k: v for k, v in body.items() if k != "sha256"}):
            raise ReplayError(f"{where}: checksum mismatch: the file was changed or corrupted "
                              "after it was written")
        return cls(config, list(agents), hands, meta)

    def summary(self) -> list:
        """One line per hand (notation.py's words): its place and number, ticks, status,
        scores, label; every string from the file made safe for a terminal."""
        lines = []
        for i, h in enumerate(self.hands):
            lab = " ".join(f"{safe(k)}={safe(v)}" for k, v in h.label.items())
            lines.append(f"{hand_words(i, len(self.hands), h.hand)}: {h.ticks} ticks, "
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
