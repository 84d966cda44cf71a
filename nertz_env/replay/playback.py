"""Playing a recorded hand again: the end a hand must reach, and the tick-by-tick playback.

- `end_of(engine, e)` is the end record of a table now: status (nertz, truncated, open),
  tick, R29 scores, the teams that called and `state_digest`, a sha256 of every NertzState
  array of the table but its generator key (equal digests, equal positions). The recorder
  writes it when a hand ends; `check()` computes it again at the end of the playback.
- `Playback` is the playing-back half of `Replay` (format.py): `start(hand)` (a one-table
  engine at the hand's start: its decks dealt, or its docs/api.md layout written), `positions`
  (the engine before each tick, stepped in place with the recorded ids and priority orders,
  R22), `check()` (every hand again, compared with its recorded end) and `iter_frames(hand)`
  (a generator, one dict per position; `frames(hand)` is its list: the layout, the R29
  scores, each seat's chosen move in move text with illegal ones marked, which took
  effect, the priority order and the events of the tick: Nertz calls, burns, conflicts R22,
  illegal moves R31). The terminal viewer, the HTML viewer, GIF/MP4 frames and the tests
  all read the frames.

Builds on engine and table; never imports the file format, the recorder or envs.
"""
from __future__ import annotations

import hashlib

import numpy as np

from ..actions import N_ACTIONS, WAIT
from ..encoding import OVER_NERTZ, OVER_TRUNCATED, PLAYING
from ..engine import Engine

STATUS = {PLAYING: "open", OVER_NERTZ: "nertz", OVER_TRUNCATED: "truncated"}


class ReplayError(ValueError):
    """A replay file that cannot be read, or a replay that does not reproduce."""


def state_digest(engine: Engine, e: int) -> str:
    """sha256 (16 hex digits) of table e's whole state but its generator key: equal
    digests, equal positions (and tick, hand, readiness, counters)."""
    h = hashlib.sha256()
    for name, arr in zip(engine.state._fields, engine.state):
        if name != "rng":
            h.update(np.ascontiguousarray(arr[e]).tobytes())
    return h.hexdigest()[:16]


def end_of(engine: Engine, e: int, digest: bool = True, scores=None) -> dict:
    """The end record of table e now: status, tick, R29 scores, callers[, digest].
    scores: engine.hand_scores() when the caller has it (several tables ending at once)."""
    st = engine.state
    scores = engine.hand_scores() if scores is None else scores
    out = {"status": STATUS[int(st.status[e])], "tick": int(st.tick[e]),
           "scores": [int(x) for x in scores[e]],
           "callers": [t for t in range(engine.config.num_teams) if st.callers[e, t]]}
    if digest:
        out["digest"] = state_digest(engine, e)
    return out


class Playback:
    """The playing-back methods of Replay (module docstring); needs `config` and `hands`."""

    def hand_record(self, hand):
        """The HandReplay at this index (a ValueError naming the range otherwise)."""
        if isinstance(hand, bool) or not isinstance(hand, (int, np.integer)) \
                or not 0 <= hand < len(self.hands):
            raise ValueError(f"hand={hand!r}: this replay has hands 0..{len(self.hands) - 1} "
                             "(a hand's place in the file, 0 first)")
        return self.hands[int(hand)]

    def start(self, hand: int = 0) -> Engine:
        """A one-table engine at the start of the hand."""
        h = self.hand_record(hand)
        if h.layout is not None:
            from ..table.table import Table
            return Table.from_layout(h.layout, self.config).engine
        eng = Engine(self.config, 1, 0)
        eng.deal(h.decks[None], hands=[h.hand])
        return eng

    def positions(self, hand: int = 0):
        """Yield (engine, k) before tick k of the hand (k = 0..ticks-1), then (engine, ticks)
        at its end; the engine is one object, stepped in place."""
        h = self.hand_record(hand)
        eng = self.start(hand)
        for k in range(h.ticks):
            yield eng, k
            try:
                eng.step(h.actions[k][None], h.priority[k][None].astype(np.int32))
            except ValueError as err:
                raise ReplayError(f"hand {hand} of {len(self.hands)} in the file, tick {k}: "
                                  f"{err}") from None
        yield eng, h.ticks

    def check(self, hand: int | None = None) -> None:
        """Play the hand (every hand: None) again; ReplayError naming the hand and what
        differs when the end is not the recorded one."""
        for i in (range(len(self.hands)) if hand is None else [hand]):
            h = self.hand_record(i)
            for eng, k in self.positions(i):
                if k < h.ticks and eng.state.status[0] != PLAYING:
                    raise ReplayError(f"hand {i} of {len(self.hands)} in the file: over at "
                                      f"tick {int(eng.state.tick[0])} but "
                                      f"{h.ticks - k} recorded tick(s) are left")
            got = end_of(eng, 0, h.end.get("digest") is not None)
            for key, want in h.end.items():
                if got[key] != want:
                    raise ReplayError(f"hand {i} of {len(self.hands)} in the file does not "
                                      f"replay to its recorded end: {key} "
                                      f"{got[key]!r}, recorded {want!r}")

    def frames(self, hand: int = 0) -> list:
        """Every frame of the hand as a list (iter_frames; short hands, tests)."""
        return list(self.iter_frames(hand))

    def iter_frames(self, hand: int = 0):
        """Yield one dict per position of the hand (module docstring): tick, layout, scores,
        then the moves chosen there, applied, order and events ([] at the last). A generator
        holding one frame at a time, so viewers and videos of long hands stay flat in memory:
        a frame is yielded once the next position has filled its applied flags and events."""
        from ..table.table import Table, layout_of
        h = self.hand_record(hand)
        legal = pending = None           # were the moves of the previous position legal (R31)
        for eng, k in self.positions(hand):
            lay = layout_of(eng, 0)
            frame = {"tick": lay["tick"], "layout": lay,
                     "scores": [int(x) for x in eng.hand_scores()[0]],
                     "moves": [], "applied": [], "order": [], "events": []}
            if pending is not None:
                _finish_tick(pending, legal, h.actions[k - 1], eng, lay)
                yield pending
            if k < h.ticks:
                table = Table(eng)
                frame["moves"] = [_move_text(table, eng, s, int(a))
                                  for s, a in enumerate(h.actions[k])]
                frame["order"] = [int(x) for x in h.priority[k]]
                legal = [bool(eng.masks[0, s, a]) for s, a in enumerate(h.actions[k])]
            pending = frame
        yield pending


def _finish_tick(frame, legal, acts, eng, lay_after) -> None:
    """Fill the applied flags and events of the tick that led from `frame` (its moves were
    `acts`, legal or not) to lay_after."""
    callers_before, burns_before = frame["layout"]["callers"], frame["layout"]["burns"]
    applied = [bool(x) for x in eng.applied[0]]
    frame["applied"] = applied
    ev = []
    for s, (ok, lg, a) in enumerate(zip(applied, legal, acts)):
        if not lg:
            ev.append(f"illegal: seat {s} {frame['moves'][s]} (R31)")
        elif not ok and a != WAIT:
            ev.append(f"conflict: seat {s} {frame['moves'][s]} failed (R22)")
    if lay_after["burns"] > burns_before:
        ev.append(f"burn: the Streams were burned (R27, burn {lay_after['burns']})")
    for t in lay_after["callers"]:
        if t not in callers_before:
            ev.append(f"Nertz: team {t} called (R24)")
    frame["events"] = ev


def _move_text(table, eng, seat: int, a: int) -> str:
    if not 0 <= a < N_ACTIONS:
        return f"#{a}"
    try:
        text = str(table.decode(a, seat))
    except ValueError:
        text = f"#{a}"
    return text if eng.masks[0, seat, a] else text + " (illegal)"
