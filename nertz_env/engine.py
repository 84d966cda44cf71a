"""Engine: owns the state of B tables, their work buffers, masks and seeded generators, and
moves arrays in and out of the numba kernels. Every wrapper (Table, environments, games,
benchmarks) goes through it; it holds no rules itself.

Randomness (R8, R22): `np_random` (a numpy Generator seeded by the user) draws one 64-bit key
per table at reset; each table's splitmix64 stream (state.rng) then draws that table's deck
shuffles and per-tick priority orders inside numba, so batched play never leaves the jit and
the same seed always gives the same games. Explicit deck orders (duplicate deals, replays)
bypass the shuffle: `Engine.deal(decks)`.

Small batches run the serial kernels: a parallel launch costs more than it saves below a few
hundred tables, and with numba's OpenMP layer idle worker threads spin, which slows a
single-table tick badly on a busy machine. PARALLEL_MIN_TABLES sets the switch.

Validation happens here, at the Python boundary, before anything changes: action ids out of
range, wrong shapes, illegal moves under illegal_move="raise" are `ValueError`s naming the
table, seat and action. Ids travel as the argument of `step` / `step_observe`; ids a caller
has already checked (envs/seats.py SeatDriver, an env's per-agent check) go in with
`checked=True`, which skips every check here (dtype, range and R31), so each id is checked
once.

Threads: every prange kernel is launched through core/launch.py `launch_parallel` (safe from
several Python threads, each with its own engine).
"""
from __future__ import annotations

import functools
from typing import NamedTuple

import numpy as np

from .actions import N_ACTIONS
from .config import RulesConfig
from .core.batch import (deal_batch, deal_range, deal_seeded_batch, masks_range,
                         observe_range_tuples, step_batch, step_observe_range_tuples,
                         step_range_tuples, write_masks_batch, write_scores_batch)
from .core.launch import launch_parallel
from .core.legal import first_illegal
from .core.observe import (OBS_DIM, StepSummary, observe_batch, observe_seat_batch,
                           observe_seat_range, step_observe_batch, summary_width)
from .core.state import (allocate_masks, allocate_scratch, allocate_state, copy_table,
                         make_params)
from .encoding import DECK, OVER_TRUNCATED, PLAYING


PARALLEL_MIN_TABLES = 256
MAX_TABLES = 1 << 24          # far beyond memory at 4 teams (~5 KB a table)
_FLOAT32, _INT8 = np.dtype(np.float32), np.dtype(np.int8)
_INT32_MAX = int(np.iinfo(np.int32).max)


class StepObservation(NamedTuple):
    """Engine.step_observe's results (unpacks as summary, obs, masks)."""
    summary: StepSummary           # the packed per-table row, read by name (core/observe.py)
    obs: np.ndarray                # float32 [B, S, OBS_DIM], fresh
    masks: np.ndarray              # int8 [B, S, N_ACTIONS], fresh (a copy of Engine.masks)


_new_tuple = tuple.__new__


def new_generator(seed) -> np.random.Generator:
    """numpy's default_rng(seed) for a seed numpy takes (None, an int >= 0, a sequence of
    them, a SeedSequence / BitGenerator / Generator); anything else a ValueError naming it."""
    if isinstance(seed, (bool, np.bool_, float, np.floating, str, bytes)):
        raise ValueError(f"seed={seed!r}: a seed is None or an int >= 0 (numpy's default_rng)")
    try:
        return np.random.default_rng(seed)
    except (TypeError, ValueError, OverflowError) as err:
        raise ValueError(f"seed={seed!r}: a seed is None or an int >= 0 (numpy: {err})") from None


class Engine:
    """B tables of one RulesConfig, played in lock step."""

    def __init__(self, config: RulesConfig | None = None, n_tables: int = 1, seed=None,
                 parallel: bool | None = None):
        """parallel: None chooses by size (PARALLEL_MIN_TABLES); True/False forces the
        prange kernels or the serial ones (same results, see the property tests)."""
        if isinstance(n_tables, (bool, np.bool_)) or not isinstance(n_tables, (int, np.integer)) \
                or not 1 <= n_tables <= MAX_TABLES:
            raise ValueError(f"n_tables={n_tables!r} must be an int from 1 to {MAX_TABLES}")
        n_tables = int(n_tables)
        np_random = new_generator(seed)            # a bad seed: nothing is allocated
        self.config = config if config is not None else RulesConfig()
        if not isinstance(self.config, RulesConfig):
            raise ValueError(f"config must be a RulesConfig, got {type(config).__name__}")
        self.n_tables = n_tables
        self.params = make_params(self.config)
        self.state = allocate_state(self.config, n_tables)
        self.scratch = allocate_scratch(self.config, n_tables)
        self.masks = allocate_masks(self.config, n_tables)
        self.applied = np.zeros((n_tables, self.config.num_seats), np.int8)
        self.actions = np.zeros((n_tables, self.config.num_seats), np.int16)
        self._actions_shape = self.actions.shape
        self.priority = np.full((n_tables, self.config.num_seats), -1, np.int32)
        self._all = np.ones(n_tables, np.int8)
        self._seat_obs = None
        self._raise_illegal = self.config.illegal_move == "raise"
        self.recorder = None          # a replay.Recorder while one records this engine's hands
        # the kernels over this engine's own buffers, bound once (_bind); the observation
        # buffer (B x S x OBS_DIM floats) only when first asked for
        self._obs = self._summary = self._step_observe = self._observe = None
        self.parallel = n_tables >= PARALLEL_MIN_TABLES if parallel is None else bool(parallel)
        self.np_random = np_random
        self.state.rng[:] = self.np_random.integers(0, 2**63, size=n_tables, dtype=np.uint64)

    @property
    def parallel(self) -> bool:
        """True: the prange kernels; False: the serial ones (may be switched at any time)."""
        return self._parallel

    @parallel.setter
    def parallel(self, value) -> None:
        self._parallel = bool(value)
        self._step = self._bind(step_batch, step_range_tuples, self.actions, self.priority,
                                self.masks, self.applied)
        if self._obs is not None:
            self._bind_observe()

    def __getstate__(self):
        """pickle / deepcopy: the bound kernels are left out and rebound on load."""
        state = self.__dict__.copy()
        for name in ("_step", "_step_observe", "_observe"):
            state.pop(name, None)
        state["recorder"] = None                 # a copy does not record into the original's
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._step_observe = self._observe = None
        self.parallel = self._parallel

    # ------------------------------------------------------------------ deals
    def seed(self, seed) -> None:
        """Restart the generators: np_random and every table's key."""
        self.np_random = new_generator(seed)
        self.state.rng[:] = self.np_random.integers(0, 2**63, size=self.n_tables, dtype=np.uint64)

    def reset(self, seed=None, hands=None) -> None:
        """Deal every table a fresh seeded hand (R5-R8). hands: hand numbers (R4), default 0."""
        hands = self._hands(hands)                 # checked before any generator moves
        if seed is not None:
            self.np_random = new_generator(seed)
        self.state.rng[:] = self.np_random.integers(0, 2**63, size=self.n_tables, dtype=np.uint64)
        # (not run_kernel: the prange kernel takes no decks and no seeded flag)
        if self.parallel:
            launch_parallel(deal_seeded_batch, *self._common(), self._all, hands, self.masks)
        else:
            deal_range(*self._common(), self._all, self.scratch.decks, hands, self.masks, True,
                       0, self.n_tables)
        if self.recorder is not None:
            self.recorder.on_deal(self)

    def deal(self, decks, hands=None) -> None:
        """Deal every table from explicit deck orders, decks[e, t] a permutation of 0..51
        with index 0 the top of the deck (D2)."""
        decks = np.asarray(decks)
        shape = (self.n_tables, self.config.num_teams, DECK)
        if decks.shape != shape:
            raise ValueError(f"decks has shape {decks.shape}; expected {shape} (tables, teams, 52)")
        ok = np.sort(decks, axis=-1) == np.arange(DECK)
        if not ok.all():
            e, t = np.argwhere(~ok.all(axis=-1))[0]
            raise ValueError(f"decks[{e}, {t}] is not a permutation of the card ids 0..51")
        decks, hands = decks.astype(np.int8), self._hands(hands)
        if self.parallel:
            launch_parallel(deal_batch, *self._common(), self._all, decks, hands, self.masks)
        else:
            deal_range(*self._common(), self._all, decks, hands, self.masks, False, 0,
                       self.n_tables)
        if self.recorder is not None:
            self.recorder.on_deal(self, decks=decks)

    def _hands(self, hands):
        if hands is None:
            return np.zeros(self.n_tables, np.int32)
        h = np.asarray(hands)
        if h.dtype.kind not in "iu" or h.ndim > 1 or h.size not in (1, self.n_tables):
            raise ValueError(f"hands={hands!r}: one int hand number, or one per table "
                             f"({self.n_tables})")
        h = np.broadcast_to(h.astype(np.int64), (self.n_tables,))
        if (h < 0).any() or (h > _INT32_MAX).any():
            raise ValueError(f"hands={hands!r}: hand numbers are 0..{_INT32_MAX}")
        return h.astype(np.int32)

    def seed_tables(self, keys) -> None:
        """Set every table's generator key (state.rng: its priority draws and shuffles, R22)
        from explicit uint64 keys, one per table (duplicate-deal tournaments)."""
        k = np.asarray(keys)
        if k.dtype != np.uint64 or k.shape != (self.n_tables,):
            raise ValueError(f"keys: uint64 array of shape ({self.n_tables},), got {k.dtype} "
                             f"{k.shape}")
        self.state.rng[:] = k

    def refresh_masks(self) -> None:
        """Rewrite every mask after the state was written from outside (layouts, set_state)."""
        self.run_kernel(write_masks_batch, masks_range, self.masks)

    # ------------------------------------------------------------------ state from outside
    def load_position(self, other: "Engine") -> None:
        """Table 0 of `other` (a checked position of the same config, e.g. the engine of
        Table.from_layout) becomes table 0 here; this engine's generator key stays, so its
        seeded tick order goes on (R22). Masks are rewritten."""
        if not isinstance(other, Engine) or other.config != self.config:
            raise ValueError("load_position needs an Engine of the same RulesConfig")
        key = self.state.rng[0]
        copy_table(other.state, 0, self.state, 0)
        self.state.rng[0] = key
        self.refresh_masks()
        if self.recorder is not None:
            self.recorder.on_position(self)

    def check_invariants(self, complete_decks: bool = True) -> None:
        """ValueError naming the table, team and what is wrong if the state breaks an
        invariant of core/invariants.py. complete_decks: every deck's 52 cards in play (a
        dealt table); False allows the partial decks of layouts (cards out of play)."""
        from .core.invariants import check_state
        check_state(self.state, self.params, complete_decks)

    def checked_state(self, arrays, complete_decks: bool = True, what: str = "state"):
        """Validated copies of state arrays (a dict of every NertzState field, or a NertzState)
        for this engine: integer dtypes that fit exactly, this config's shapes, the invariants
        of core/invariants.py; else a ValueError naming the array / table / team (`what`
        prefixes it). Nothing is written."""
        from .core.invariants import check_state
        from .core.state import coerce_state
        state = coerce_state(arrays, self.state, what)
        check_state(state, self.params, complete_decks, what)
        return state

    def write_state(self, arrays, complete_decks: bool = True, what: str = "state") -> None:
        """Replace every table's state by `arrays` (checked_state first: nothing changes on a
        ValueError), then rewrite the masks. The generators (np_random) are not touched."""
        state = self.checked_state(arrays, complete_decks, what)
        for dst, src in zip(self.state, state):
            dst[...] = src
        self.refresh_masks()
        if self.recorder is not None:
            self.recorder.on_position(self)

    # ------------------------------------------------------------------ play
    def step(self, actions, priority=None, *, checked: bool = False) -> np.ndarray:
        """One tick at every table. actions: int [B, S]; priority: None (draw) or int [B, S]
        permutations of the seats. checked: the ids already passed the one check
        (envs/seats.py SeatDriver.check under SeatDriver.policy(config), or an env's own
        per-agent check; module docstring): dtype, range and R31 are not checked again.
        Returns applied
        [B, S] (1 = took effect). Tables whose hand is over are left as they are."""
        self._load(actions, priority, checked)
        if self.recorder is None:
            self._step()
        else:
            live = self.recorder.before_step(self)
            self._step()
            self.recorder.after_step(self, live)
        return self.applied

    def step_observe(self, actions=None, priority=None, *, checked: bool = False
                     ) -> StepObservation:
        """`step`, then `hand_scores()`, `observe()` of every seat and the new masks, in one
        numba call (one dispatch instead of three: the PettingZoo env's step). Returns a
        StepObservation (summary, obs, masks): summary a StepSummary over a buffer of the
        engine, rewritten by the next call (status, tick, hand, applied, scores by name);
        obs and masks fresh arrays, the caller's to keep (masks is a copy of `self.masks`,
        which the engine goes on using). actions and checked as in `step`. actions=None, the
        older form: the ids already written into `self.actions` count as checked."""
        if checked and priority is None and type(actions) is np.ndarray \
                and actions.shape == self._actions_shape:     # an env's every step
            self.actions[:] = actions
        elif actions is None:
            if self._raise_illegal:
                self._check_legal(self.actions)
            if priority is not None:
                self._load_priority(priority)
        else:
            self._load(actions, priority, checked)
        if self._step_observe is None:
            self._bind_observe()
        obs = np.empty(self._obs_shape, _FLOAT32)
        masks = np.empty(self._masks_shape, _INT8)
        if self.recorder is None:
            self._step_observe(obs, masks)
        else:
            live = self.recorder.before_step(self)
            self._step_observe(obs, masks)
            self.recorder.after_step(self, live)
        # tuple.__new__: the NamedTuple without its Python-level __new__ (a one-table env's step)
        return _new_tuple(StepObservation, (self._summary_view, obs, masks))

    def _bind(self, batch_kernel, tuples_kernel, *args):
        """The prange or the serial kernel (self.parallel) over all tables with these args,
        as a callable taking the per-call arguments (appended after the bound ones). The
        serial one is a core/batch.py *_tuples kernel: state, params and scratch go in as
        plain tuples of the same arrays (cheaper for numba's dispatcher to type)."""
        if self.parallel:
            return functools.partial(launch_parallel, batch_kernel, *self._common(), *args)
        return functools.partial(tuples_kernel, *map(tuple, self._common()), *args, 0,
                                 self.n_tables)

    def run_tuples_kernel(self, kernel, *args):
        """One call of a serial core/batch.py *_tuples kernel that picks its own tables (its
        arguments say which): kernel(state, params, scratch as plain tuples, *args)."""
        return kernel(*map(tuple, self._common()), *args)

    def _common(self) -> tuple:
        return self.state, self.params, self.scratch

    def run_kernel(self, batch_kernel, range_kernel, *args):
        """One call of a whole-batch kernel over this engine's tables, the door for kernels
        the engine does not bind itself (vector envs, tournaments, games): when
        self.parallel, launch_parallel(batch_kernel, state, params, scratch, *args), else
        range_kernel(state, params, scratch, *args, 0, n_tables). range_kernel=None: a kernel
        with no serial variant (whole games), always launched as batch_kernel."""
        if self.parallel or range_kernel is None:
            return launch_parallel(batch_kernel, *self._common(), *args)
        return range_kernel(*self._common(), *args, 0, self.n_tables)

    def _bind_observe(self) -> None:
        if self._obs is None:
            S, T = self.config.num_seats, self.config.num_teams
            self._obs = np.zeros((self.n_tables, S, OBS_DIM), np.float32)
            self._summary = np.zeros((self.n_tables, summary_width(S, T)), np.int64)
            self._summary_view = StepSummary(self._summary, S)
            self._obs_shape, self._masks_shape = self._obs.shape, self.masks.shape
        self._observe = self._bind(observe_batch, observe_range_tuples, self._obs)
        # obs and masks out: passed per call, after the bound arguments
        self._step_observe = self._bind(step_observe_batch, step_observe_range_tuples,
                                        self.actions, self.priority, self.masks, self.applied,
                                        self._summary)

    def _load(self, actions, priority, checked: bool = False) -> None:
        """Validate actions (and priority) and copy them into the kernel buffers; nothing
        changes on a ValueError. checked: the caller has checked the ids (dtype, range, and R31
        under illegal_move="raise"): nothing is checked again."""
        a = np.asarray(actions)
        shape = self.actions.shape
        if a.shape != shape:
            raise ValueError(f"actions has shape {a.shape}; expected {shape} (tables, seats)")
        if checked:
            pass
        elif not np.issubdtype(a.dtype, np.integer):
            raise ValueError(f"actions must be integers (action ids 0..{N_ACTIONS - 1}), got {a.dtype}")
        elif a.size and (a.min() < 0 or a.max() >= N_ACTIONS):
            e, s = np.argwhere((a < 0) | (a >= N_ACTIONS))[0]
            raise ValueError(f"action id {a[e, s]} (table {e}, seat {s}) is out of range: "
                             f"action ids are 0..{N_ACTIONS - 1}")
        if self._raise_illegal and not checked:
            self._check_legal(a)
        if priority is not None:                  # (none: column 0 is -1, the kernels set
            self._load_priority(priority)         # it back after using a given order)
        self.actions[:] = a

    def _load_priority(self, priority) -> None:
        shape = self.actions.shape
        p = np.asarray(priority)
        if p.shape != shape or not (np.sort(p, axis=1) == np.arange(shape[1])).all():
            raise ValueError(f"priority must be None or, per table, a permutation of the "
                             f"{shape[1]} seats (shape {shape})")
        self.priority[:] = p

    def _check_legal(self, a) -> None:
        """R31 under illegal_move="raise": a ValueError naming table, seat and action."""
        bad = first_illegal(self.masks, a, self.state.status)       # jitted: one step's cost
        if bad >= 0:
            e, s = divmod(bad, self.config.num_seats)
            raise ValueError(f"illegal move at table {e}: seat {s} chose action {a[e, s]}, "
                             f"which is not among its legal moves (R31)")

    # ------------------------------------------------------------------ reading
    def observe(self, seat: int | None = None) -> np.ndarray:
        """Every seat's observation of the current position (core/observe.py):
        float32 [B, S, OBS_DIM], written into one buffer owned by the engine. With `seat`,
        only that seat's, as float32 [B, 1, OBS_DIM] (a learner's view, S times less work)."""
        if seat is not None:
            if isinstance(seat, (bool, np.bool_)) or not isinstance(seat, (int, np.integer)) \
                    or not 0 <= seat < self.config.num_seats:
                raise ValueError(f"seat={seat!r}: seats are ints 0..{self.config.num_seats - 1}")
            seat = int(seat)
            if self._seat_obs is None:
                self._seat_obs = np.zeros((self.n_tables, 1, OBS_DIM), np.float32)
            self.run_kernel(observe_seat_batch, observe_seat_range, self._seat_obs, seat)
            return self._seat_obs
        if self._observe is None:
            self._bind_observe()
        self._observe()
        return self._obs

    def hand_scores(self) -> np.ndarray:
        """R29 (D20) for every table: int [B, T]."""
        out = np.zeros((self.n_tables, self.config.num_teams), np.int64)
        write_scores_batch(self.state, self.params, out)
        return out

    @property
    def hand_over(self) -> np.ndarray:
        return self.state.status != PLAYING

    @property
    def truncated(self) -> np.ndarray:
        return self.state.status == OVER_TRUNCATED
