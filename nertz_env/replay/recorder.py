"""Recording: a `Recorder` attached to an Engine turns every hand its tables play into a Replay
(format.py); `record(env)` finds the engine behind any env of this package and attaches one.

- The engine tells the recorder of every deal, written position and tick itself
  (Engine.reset / deal / step / step_observe / write_state / load_position: the hooks
  `on_deal`, `on_position`, `before_step` / `after_step`), and so do the few batched kernels
  that step or re-deal tables without those doors (LearnerBatch's vector step calls
  `after_vec_step`; the self-play env's re-deal and the tournament's tick loop call
  `on_deal`). So every env, the Table API, tournaments and experiments record through one
  class. A hand still open when `replay()` is called is kept with status "open".
- A hand's end (playback.end_of) carries the digest of the table's final state. A vector
  step re-deals a finished table inside numba before that state can be read, so the recorder
  keeps a copy of its tables' state from before each vector step and plays a hand's last
  tick again on that copy, with the ids and priority order the kernel played (read from the
  engine, not from the recorder's own buffer): the digest is the position the kernel
  reached, so `Replay.check()` verifies vector-env hands end to end like any other.

Builds on engine, format and playback; never imports envs, table (but for layouts) or agents.
"""
from __future__ import annotations

import numpy as np

from ..encoding import PLAYING
from ..engine import Engine
from .format import HEX, HandReplay, Replay
from .playback import end_of


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
    (steps x tables x seats: one fancy-indexed copy, no per-table Python work); a playing
    table ticks at every step, so a hand is a slice of its column from the step it began,
    cut out when it ends. When the buffer is full, the steps no open hand needs are dropped
    (the rows still needed shifted to the front), else it doubles."""

    def __init__(self, engine: Engine, agents=None, tables=None, meta=None):
        if not isinstance(engine, Engine):
            raise ValueError(f"Recorder needs an Engine, got {type(engine).__name__}")
        S, n = engine.config.num_seats, engine.n_tables
        if agents is None:
            agents = [f"seat {s}" for s in range(S)]
        agents = _as_list(agents)
        if agents is None or len(agents) != S or not all(isinstance(a, str) for a in agents):
            raise ValueError(f"agents must be a list of {S} names (str), one per seat")
        if S > len(HEX):
            raise ValueError(f"replays store at most {len(HEX)} seats; this table has {S}")
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
        self._before = _Before(engine, self._tab)
        self._before.take(engine, 0)                 # a vector step may come before any deal
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
        cols = None if which is None else np.asarray(which)[self._tab] != 0
        self._before.take(engine, self.steps, cols)

    def on_position(self, engine) -> None:
        """A position was written from outside: open hands end here, the next tick starts
        a hand from the written layout."""
        for e in self.tables:
            self._close(e)
        self._before.take(engine, self.steps)

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
        inside the kernel, its new decks in the deal buffer). A finished hand's end is the
        kernel's status, tick and scores, with the callers and digest of the position its
        last tick reached, played again on the state kept from before this step (module
        docstring)."""
        step = self.steps
        self._push(engine)
        for e in self._tab[(terminated[self._tab] != 0) | (truncated[self._tab] != 0)]:
            e = int(e)
            h = self._open[e]
            if h is not None:
                end = {"status": "truncated" if truncated[e] else "nertz",
                       "tick": h.first_tick + self.steps - h.step,
                       "scores": [int(x) for x in final_scores[e]]}
                last = self._before.last_tick(engine, self._col[e], e, step)
                if last is not None:
                    end["callers"], end["digest"] = last["callers"], last["digest"]
                self._finish(e, end)
            self._start(e, int(engine.state.hand[e]), decks=engine.scratch.decks[e].copy())
        self._before.take(engine, self.steps)

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


class _Before:
    """The recorded tables' state as it was before the next step (every NertzState array but
    the generator key: the priority order of a tick is read, not drawn), and the one-table
    engine that plays a vector step's last tick of a hand on it (Recorder.after_vec_step)."""

    def __init__(self, engine: Engine, tab: np.ndarray):
        self.tab = tab
        self.every = tab.size == engine.n_tables          # all tables: plain copies
        self.fields = [i for i, name in enumerate(engine.state._fields) if name != "rng"]
        self.arrays = None                                # [recorded tables, ...] per field
        self.at = np.full(tab.size, -1, np.int64)         # the step each column was taken at
        self.sim = None

    def take(self, engine: Engine, step: int, cols=None) -> None:
        """Copy the state of the recorded tables (cols: a bool mask of them, None = all) as
        it is before step number `step`."""
        st = engine.state
        if self.arrays is None:
            self.arrays = [np.empty((self.tab.size,) + st[i].shape[1:], st[i].dtype)
                           for i in self.fields]
        if cols is None:
            for buf, i in zip(self.arrays, self.fields):
                if self.every:
                    buf[...] = st[i]
                else:
                    np.take(st[i], self.tab, axis=0, out=buf)
            self.at[:] = step
        elif cols.any():
            rows = self.tab[cols]
            for buf, i in zip(self.arrays, self.fields):
                buf[cols] = st[i][rows]
            self.at[cols] = step

    def last_tick(self, engine: Engine, col: int, e: int, step: int):
        """end_of the position that table e's tick of step `step` reached, played again from
        the copy taken before it with the ids and order the engine holds now; None when no
        copy of that moment exists (the engine was stepped through another door)."""
        if self.arrays is None or self.at[col] != step:
            return None
        if self.sim is None:
            self.sim = Engine(engine.config, 1, 0)
        sim = self.sim
        for buf, i in zip(self.arrays, self.fields):
            sim.state[i][0] = buf[col]
        sim.refresh_masks()
        sim.step(engine.actions[e][None], engine.scratch.order[e][None])
        return end_of(sim, 0)


def _as_list(x):
    """A list of the items of a list-like (not a string), else None."""
    if isinstance(x, (str, bytes, dict)) or not hasattr(x, "__iter__"):
        return None
    return list(x)


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
