"""Replays: every hand a table plays, recorded exactly and played back exactly.

Design
- What makes a hand: its start (the deck orders of every team and the hand number, R4-R8, or
  an API.md layout when the hand began from a written position), then per tick every seat's
  action id and the tick's priority order (R22). Nothing else is random, so playing those
  ids in that order from that start gives the same positions: the priority order is stored
  rather than the generator's key, so a replay never depends on how the table's generator
  was seeded (tournaments restart it per hand) or on the kernel that played the hand.
- Recording: a `Recorder` attaches to an `Engine` (engine.recorder) and is told of every
  deal, written position and tick by the engine itself (Engine.reset / deal / step /
  step_observe / write_state / load_position) and by the few batched kernels that step or
  re-deal tables without those doors (LearnerBatch's vector step, the self-play env's
  re-deal, the tournament's tick loop call `on_deal` / `after_vec_step`). So every env, the
  Table API, tournaments and experiments record through one class. A hand still open when
  `replay()` is called is kept with status "open".
- The end of each hand is written down as a check: status (nertz, truncated, open), tick,
  R29 scores, callers and a digest of the whole final state of the table (every NertzState
  array but the generator key). `Replay.check()` plays every hand again and compares all
  of it; a vector env re-deals inside numba before anything can read the final position, so
  its hands carry no digest (scores, tick and status are still checked).
- The file: JSON, gzip-compressed when the name ends in ".gz", versioned
  (`format`: "nertz-replay", `version`: 1). Per hand the actions are one flat list of ints
  (ticks x seats) and the priority orders one string of hex digits (a seat each, <= 16
  seats): a few KB per bot hand gzipped (docs/replays.md). A sha256 of
  the canonical JSON of the content guards the file: a truncated file, a file that is not
  JSON, a wrong format or version, a missing or malformed field and a checksum mismatch are
  each a ValueError saying which and where.
- Playing back: `frames(hand)` gives one dict per position (tick 0..n): the layout (API.md),
  the R29 scores, the moves each seat chose from it in move text (illegal ones marked), which
  took effect, the priority order, and the events of the tick (Nertz calls, burns, conflicts
  R22, illegal moves R31). The terminal viewer, the HTML viewer, GIF/MP4 frames and the tests
  all read these.
"""
from __future__ import annotations

import gzip
import hashlib
import json
import zlib
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ..actions import N_ACTIONS, WAIT
from ..config import RulesConfig
from ..engine import Engine
from ..encoding import DECK, OVER_NERTZ, OVER_TRUNCATED, PLAYING, card_text, parse_card

FORMAT = "nertz-replay"
VERSION = 1
SUFFIX = ".nertz.json.gz"
_STATUS = {PLAYING: "open", OVER_NERTZ: "nertz", OVER_TRUNCATED: "truncated"}
_HEX = "0123456789abcdef"


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
class Replay:
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

    # ------------------------------------------------------------------ playing back
    def hand_record(self, hand) -> HandReplay:
        """The HandReplay at this index (a ValueError naming the range otherwise)."""
        if isinstance(hand, bool) or not isinstance(hand, (int, np.integer)) \
                or not 0 <= hand < len(self.hands):
            raise ValueError(f"hand={hand!r}: this replay has hands 0..{len(self.hands) - 1}")
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
                raise ReplayError(f"hand {hand}, tick {k}: {err}") from None
        yield eng, h.ticks

    def check(self, hand: int | None = None) -> None:
        """Play the hand (every hand: None) again; ReplayError naming the hand and what
        differs when the end is not the recorded one."""
        for i in (range(len(self.hands)) if hand is None else [hand]):
            h = self.hand_record(i)
            for eng, k in self.positions(i):
                if k < h.ticks and eng.state.status[0] != PLAYING:
                    raise ReplayError(f"hand {i}: over at tick {int(eng.state.tick[0])} but "
                                      f"{h.ticks - k} recorded tick(s) are left")
            got = end_of(eng, 0, h.end.get("digest") is not None)
            for key, want in h.end.items():
                if got[key] != want:
                    raise ReplayError(f"hand {i} does not replay to its recorded end: {key} "
                                      f"{got[key]!r}, recorded {want!r}")

    def frames(self, hand: int = 0) -> list:
        """One dict per position of the hand (module docstring): tick, layout, scores,
        then the moves chosen there, applied, order and events ([] at the last)."""
        from ..table.table import Table, layout_of
        out = []
        h = self.hand_record(hand)
        legal = None                     # were the moves of the previous position legal (R31)
        for eng, k in self.positions(hand):
            lay = layout_of(eng, 0)
            frame = {"tick": lay["tick"], "layout": lay,
                     "scores": [int(x) for x in eng.hand_scores()[0]],
                     "moves": [], "applied": [], "order": [], "events": []}
            if out:
                _finish_tick(out[-1], legal, h.actions[k - 1], eng, lay)
            if k < h.ticks:
                table = Table(eng)
                frame["moves"] = [_move_text(table, eng, s, int(a))
                                  for s, a in enumerate(h.actions[k])]
                frame["order"] = [int(x) for x in h.priority[k]]
                legal = [bool(eng.masks[0, s, a]) for s, a in enumerate(h.actions[k])]
            out.append(frame)
        return out

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


def end_of(engine: Engine, e: int, digest: bool = True, scores=None) -> dict:
    """The end record of table e now: status, tick, R29 scores, callers[, digest].
    scores: engine.hand_scores() when the caller has it (several tables ending at once)."""
    st = engine.state
    scores = engine.hand_scores() if scores is None else scores
    out = {"status": _STATUS[int(st.status[e])], "tick": int(st.tick[e]),
           "scores": [int(x) for x in scores[e]],
           "callers": [t for t in range(engine.config.num_teams) if st.callers[e, t]]}
    if digest:
        out["digest"] = state_digest(engine, e)
    return out


# ---------------------------------------------------------------------- recording
class _Open:
    """A hand being recorded at one table: its start and the first step it played."""
    __slots__ = ("hand", "decks", "layout", "label", "step")

    def __init__(self, hand, step, decks=None, layout=None, label=None):
        self.hand, self.decks, self.layout = hand, decks, layout
        self.step = step
        self.label = dict(label or {})

    @property
    def first_tick(self) -> int:
        return 0 if self.layout is None else int(self.layout["tick"])


class Recorder:
    """Records the hands of an engine's tables (all, or `tables`) into a Replay.

    rec = Recorder(env_engine, agents=["me", "heuristic"]); ...play...; rec.replay().save(p)
    Attaching replaces any recorder the engine had; `detach()` stops recording. `labels`
    (table -> dict) are copied into each hand's label when it starts (tournaments name the
    deal and seating so).

    Every step writes the recorded tables' action and order rows into one buffer array
    (steps x tables x seats: one fancy-indexed copy, no per-table Python work; measured in
    benchmarks/replay_overhead.py); a playing table ticks at every step, so a hand is a slice
    of its column from the step it began, cut out when it ends. When the buffer is full, the
    steps no open hand needs are dropped, else it doubles."""

    def __init__(self, engine: Engine, agents=None, tables=None, meta=None):
        if not isinstance(engine, Engine):
            raise ValueError(f"Recorder needs an Engine, got {type(engine).__name__}")
        S, n = engine.config.num_seats, engine.n_tables
        if agents is None:
            agents = [f"seat {s}" for s in range(S)]
        agents = _as_list(agents)
        if agents is None or len(agents) != S or not all(isinstance(a, str) for a in agents):
            raise ValueError(f"agents must be a list of {S} names (str), one per seat")
        if S > len(_HEX):
            raise ValueError(f"replays store at most {len(_HEX)} seats; this table has {S}")
        listed = _as_list(range(n) if tables is None else tables)
        if listed is None or not all(isinstance(e, (int, np.integer)) and not isinstance(
                e, (bool, np.bool_)) and 0 <= e < n for e in listed):
            raise ValueError(f"tables must be a list of table numbers 0..{n - 1}, got {tables!r}")
        tables = sorted({int(e) for e in listed})
        if meta is not None and not isinstance(meta, dict):
            raise ValueError(f"meta must be a dict (JSON values) or None, got {meta!r}")
        self.engine, self.agents, self.tables = engine, agents, tables
        self.meta = dict(meta or {})
        self.labels: dict = {}
        self._open: dict = {e: None for e in tables}
        self._tab = np.array(tables, np.int64)
        self._col = {e: i for i, e in enumerate(tables)}
        shape = (64, len(tables), S)
        self._acts = np.zeros(shape, np.int16)       # [buffered steps, tables, seats]
        self._orders = np.zeros(shape, np.int8)
        self._base = 0                               # the step number of buffer row 0
        self.steps = 0                               # steps seen
        self.hands: list = []                        # finished HandReplay, in finishing order
        engine.recorder = self

    def detach(self) -> None:
        if self.engine.recorder is self:
            self.engine.recorder = None

    # ------------------------------------------------------------------ engine hooks
    def on_deal(self, engine, which=None, decks=None) -> None:
        """Tables dealt just now (which: None = all, else a mask): a new hand each, from
        `decks` (explicit orders) or the engine's deal buffer."""
        src = engine.scratch.decks if decks is None else np.asarray(decks)
        for e in self.tables:
            if which is None or which[e]:
                self._close(e)
                self._start(e, int(engine.state.hand[e]), decks=src[e].astype(np.int8).copy())

    def on_position(self, engine) -> None:
        """A position was written from outside: open hands end here, the next tick starts
        a hand from the written layout."""
        for e in self.tables:
            self._close(e)

    def before_step(self, engine) -> np.ndarray:
        """Which recorded tables are playing (bool, one per table of `tables`); a hand begun
        from a written position is opened from its layout now."""
        playing = engine.state.status[self._tab] == PLAYING
        for e in self._tab[playing]:
            if self._open[e] is None:
                from ..table.table import layout_of
                self._start(int(e), int(engine.state.hand[e]), layout=layout_of(engine, e))
        return playing

    def after_step(self, engine, playing) -> None:
        self._push(engine)
        ended = self._tab[playing & (engine.state.status[self._tab] != PLAYING)]
        if ended.size:                               # R29 of every table, once per step
            scores = engine.hand_scores()
            for e in ended:
                self._finish(int(e), end_of(engine, e, scores=scores))

    def after_vec_step(self, engine, terminated, truncated, final_scores) -> None:
        """A vector env's step (every table was playing; a finished one is already re-dealt
        inside the kernel, its new decks in the deal buffer)."""
        self._push(engine)
        for e in self._tab[(terminated[self._tab] != 0) | (truncated[self._tab] != 0)]:
            e = int(e)
            h = self._open[e]
            if h is not None:
                self._finish(e, {"status": "truncated" if truncated[e] else "nertz",
                                 "tick": h.first_tick + self.steps - h.step,
                                 "scores": [int(x) for x in final_scores[e]]})
            self._start(e, int(engine.state.hand[e]), decks=engine.scratch.decks[e].copy())

    # ------------------------------------------------------------------ the step buffer
    def _start(self, e, hand, decks=None, layout=None) -> None:
        self._open[e] = _Open(hand, self.steps, decks, layout, self.labels.get(e))

    def _push(self, engine) -> None:
        i = self.steps - self._base
        if i == self._acts.shape[0]:
            keep = min((h.step for h in self._open.values() if h is not None),
                       default=self.steps)
            drop = keep - self._base
            if drop > i // 2:                        # shift the live rows down
                self._acts[:i - drop] = self._acts[drop:i]
                self._orders[:i - drop] = self._orders[drop:i]
                self._base, i = keep, i - drop
            else:                                    # or make room
                self._acts = np.concatenate([self._acts, np.zeros_like(self._acts)])
                self._orders = np.concatenate([self._orders, np.zeros_like(self._orders)])
        self._acts[i] = engine.actions[self._tab]
        self._orders[i] = engine.scratch.order[self._tab]
        self.steps += 1

    def _rows(self, e, h):
        """(actions int16 [k, S], priority int8 [k, S]) of the open hand h at table e."""
        a, b, c = h.step - self._base, self.steps - self._base, self._col[e]
        return self._acts[a:b, c].copy(), self._orders[a:b, c].copy()

    # ------------------------------------------------------------------ results
    def _close(self, e) -> None:
        """A hand cut off by a deal or a written position: kept when it has ticks."""
        h = self._open[e]
        if h is not None and self.steps > h.step:
            self._finish(e, None)
        self._open[e] = None

    def _finish(self, e, end) -> None:
        h = self._open[e]
        if end is None:                  # cut by a deal or a written position: its length
            end = {"status": "open", "tick": h.first_tick + self.steps - h.step}
        self.hands.append(self._hand_replay(e, h, end))
        self._open[e] = None

    def _hand_replay(self, e, h, end) -> HandReplay:
        label = {"table": e, **h.label} if len(self.tables) > 1 else dict(h.label)
        actions, priority = self._rows(e, h)
        return HandReplay(h.hand, h.decks, h.layout, actions, priority, end, label)

    def replay(self, include_open: bool = True) -> Replay:
        """The hands recorded so far (finished ones first, in the order they ended; then the
        open ones at their current position when include_open)."""
        hands = list(self.hands)
        if include_open:
            for e in self.tables:
                h = self._open[e]
                if h is not None and self.steps > h.step:
                    hands.append(self._hand_replay(e, h, end_of(self.engine, e)))
        return Replay(self.engine.config, list(self.agents), hands, dict(self.meta))


def _as_list(x):
    """A list of the items of a list-like (not a string), else None."""
    if isinstance(x, (str, bytes, dict)) or not hasattr(x, "__iter__"):
        return None
    return list(x)


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
    out["priority"] = "".join(_HEX[int(s)] for s in h.priority.reshape(-1))
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
    if len(prio) != ticks * S or any(c not in _HEX[:S] for c in prio):
        raise ReplayError(f"{where}: 'priority' must hold ticks x seats = {ticks * S} hex seat "
                          f"digits 0..{_HEX[S - 1]}")
    order = np.array([_HEX.index(c) for c in prio], np.int8).reshape(ticks, S)
    if ticks and not (np.sort(order, axis=1) == np.arange(S)).all():
        raise ReplayError(f"{where}: every tick's 'priority' must be a permutation of the seats")
    end = need("end", dict)
    for key in ("status", "tick"):
        if key not in end:
            raise ReplayError(f"{where}: field 'end' lacks {key!r}")
    label = d.get("label", {})
    return HandReplay(hand, decks, layout, np.array(acts, np.int16).reshape(ticks, S), order,
                      end, label if isinstance(label, dict) else {})


def find_engine(env) -> Engine:
    """The Engine behind a Table, any env of this package (PettingZoo parallel or AEC,
    Gymnasium, vector, self-play) or a wrapper around one; ValueError when there is none."""
    seen, todo = set(), [env]
    while todo:
        obj = todo.pop(0)
        if obj is None or id(obj) in seen:
            continue
        seen.add(id(obj))
        if isinstance(obj, Engine):
            return obj
        for name in ("engine", "_engine"):
            eng = getattr(obj, name, None) if not isinstance(obj, type) else None
            if isinstance(eng, Engine):
                return eng
        for name in ("batch", "unwrapped", "env", "par_env", "_env", "venv", "aec_env"):
            try:
                todo.append(getattr(obj, name, None))
            except Exception:                 # some wrappers raise on unknown attributes
                pass
    raise ValueError(f"{type(env).__name__} has no nertz Engine to record (give a Table, an "
                     "env of nertz_env or the Engine itself)")


def record(env, agents=None, tables=None, meta=None) -> Recorder:
    """Start recording every hand the env's tables play from now on (the next reset's deal
    included): `rec = record(env); ...; rec.replay().save("hand.nertz.json.gz")`."""
    return Recorder(find_engine(env), agents=agents, tables=tables, meta=meta)
