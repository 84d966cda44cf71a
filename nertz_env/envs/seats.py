"""The one seat driver: the seats an Engine's caller plays from outside numba (opponent agents,
league snapshots, tournament agents, web-play bots) get their observations and legal moves
gathered, one batch callable asked, the ids checked ONCE, and the ids written where the next
tick reads them.

Rows: a seat at a table is a row (`rows_t[k]`, `rows_s[k]`), table-major by convention.
`SeatDriver.gather` writes every row's observation (float32 [n, OBS_DIM], fresh: the callee's
to keep) and legal moves (bool [n, N_ACTIONS]) in one numba call (core/batch.py
tick_inputs_tuples), optionally with the core bots' moves at some tables in the same call.
`SeatDriver.check` is the one check of the ids that come back:
`nertz_env.actions.check_action_array` (an integer dtype, one id per row, 0..N_ACTIONS-1),
then legality by the explicit `illegal` policy:

- `"raise"`: an illegal id is the R31 ValueError (episode.illegal_move_error's words) naming
  `where`, the row, its table and its seat, before anything changes;
- `"engine"`: nothing here; the engine's own illegal_move rule (R31) decides when it plays
  the tick (Engine.step raises under "raise", the kernels penalize or ignore otherwise).

`SeatDriver.drive` is gather + one call + check + write. After it the ids need no further
check: an agent's `act_batch` does not have to validate them (agents/base.py, FrozenPolicy
with on_illegal="pass"), and the engine takes them as checked (`Engine.step(ids,
checked=True)` checks nothing again). Under illegal_move="raise" that needs the "raise" policy
here: `SeatDriver.policy(config)` gives the one that matches a table's rules.

Usage (a one-table env whose seats 1..3 a batch agent plays):

```python
from nertz_env.envs.seats import SeatDriver

driver = SeatDriver(engine)                       # one per engine: keeps its scratch row
rows_t, rows_s = np.zeros(3, np.int64), np.array([1, 2, 3])
ids = np.zeros((1, engine.config.num_seats), np.int64)
ids[0, 0] = learner_id
driver.drive(rows_t, rows_s, agent.act_batch, out=ids,
             illegal=SeatDriver.policy(engine.config), where="opponents")                   # ids[0, 1:] now hold the agent's moves
engine.step(ids, checked=True)
```

Several agents over one gather (a tournament: one act_batch per agent over its rows):

```python
obs, masks = driver.gather(rows_t, rows_s, core=(kinds, knobs, policy_rng, acts, tables))
for agent, sl in zip(agents, slices):             # sl: that agent's rows
    acts[rows_t[sl], rows_s[sl]] = driver.check(agent.act_batch(obs[sl], masks[sl]),
                                                masks[sl], rows_t[sl], rows_s[sl],
                                                where=f"agent {agent.name!r}",
                                                illegal=SeatDriver.policy(engine.config))
engine.step(acts, checked=True)
```

Never imports agents (nertz_env never does); holds no rules (the masks are the engine's).
"""
from __future__ import annotations

import numpy as np

from ..actions import N_ACTIONS, check_action_array, check_action_id
from ..core.batch import tick_inputs_tuples
from ..core.observe import OBS_DIM
from .episode import illegal_move_error

ILLEGAL = ("raise", "engine")
_NO_ROWS = np.zeros(0, np.int64)


def check_illegal_policy(illegal) -> str:
    if not (isinstance(illegal, str) and illegal in ILLEGAL):
        raise ValueError(f"illegal={illegal!r}: one of {ILLEGAL}")
    return illegal


class SeatDriver:
    """Gathers, asks, checks and writes the outside seats of one Engine (module docstring)."""

    def __init__(self, engine):
        self.engine = engine
        self._seat_obs = None          # [B, 1, OBS_DIM]: the row the kernel writes a seat in
        self._no_policy = None         # kinds/knobs/rng/actions when no core bot moves

    def gather(self, rows_t, rows_s, core=None):
        """(obs float32 [n, OBS_DIM], masks bool [n, N_ACTIONS]) of the rows, fresh arrays.
        core: None, or (kinds [B, S], knobs [B, S, K], policy_rng [B], actions [B, S],
        tables [m]): the core bots' moves at those tables written into `actions` by the same
        numba call (core/policies.py)."""
        eng = self.engine
        rows_t = np.asarray(rows_t, np.int64)
        rows_s = np.asarray(rows_s, np.int64)
        n = rows_t.size
        if self._seat_obs is None:
            self._seat_obs = np.zeros((eng.n_tables, 1, OBS_DIM), np.float32)
        if core is None:
            if self._no_policy is None:
                from ..core.policies import new_policy_arrays
                kinds, knobs = new_policy_arrays(eng.n_tables, eng.config.num_seats)
                self._no_policy = (kinds, knobs, np.zeros(eng.n_tables, np.uint64),
                                   eng.actions)
            core = (*self._no_policy, _NO_ROWS)
        kinds, knobs, policy_rng, actions, tables = core
        obs = np.empty((n, OBS_DIM), np.float32)
        masks = np.empty((n, N_ACTIONS), np.int8)
        eng.run_tuples_kernel(tick_inputs_tuples, eng.masks, kinds, knobs, policy_rng, actions,
                              tables, self._seat_obs, rows_t, rows_s, obs, masks)
        return obs, masks.view(bool)

    @staticmethod
    def policy(config) -> str:
        """The legality policy that matches a table's rules (R31): "raise" under
        illegal_move="raise" (the ids are then fully checked here, and the engine takes them
        with checked=True), else "engine" (the kernels penalize or ignore)."""
        return "raise" if config.illegal_move == "raise" else "engine"

    @staticmethod
    def check(ids, masks, rows_t, rows_s, where: str, illegal: str) -> np.ndarray:
        """The one check of the ids returned for the rows (module docstring): int64 [n];
        a ValueError naming `where` (and for R31 the row, table and seat) otherwise."""
        n = len(rows_t)
        try:
            a = np.asarray(ids)
        except (TypeError, ValueError) as err:       # ragged lists and the like
            raise ValueError(f"{where}: returned {type(ids).__name__}, not an array of action "
                             f"ids ({err})") from None
        a = check_action_array(a, (n,), where)
        if check_illegal_policy(illegal) == "raise" and n:
            bad = ~np.asarray(masks, bool)[np.arange(n), a]
            if bad.any():
                k = int(np.flatnonzero(bad)[0])
                raise illegal_move_error(f"{where}[{k}] (table {int(rows_t[k])}, seat "
                                         f"{int(rows_s[k])})", int(a[k]), masks[k])
        return a

    def drive(self, rows_t, rows_s, act_batch, out=None, *, illegal: str,
              where: str = "seat ids", core=None) -> np.ndarray:
        """gather, ids = act_batch(obs, masks) once over all rows, check, then
        out[rows_t, rows_s] = ids (out: an int array [B, S], default the engine's action
        buffer). Returns the checked ids (int64 [n]); no rows: act_batch is not called."""
        check_illegal_policy(illegal)
        rows_t = np.asarray(rows_t, np.int64)
        rows_s = np.asarray(rows_s, np.int64)
        out = self.engine.actions if out is None else out
        if rows_t.size == 0:
            if core is not None:
                self.gather(rows_t, rows_s, core)
            return np.zeros(0, np.int64)
        obs, masks = self.gather(rows_t, rows_s, core)
        ids = self.check(act_batch(obs, masks), masks, rows_t, rows_s, where, illegal)
        out[rows_t, rows_s] = ids
        return ids


class PerRow:
    """A batch callable from per-seat `act(observation, action_mask) -> id` callables, for
    agents with `act` only (picklable: an env that holds one still pickles). acts: seat ->
    callable or None; rows_s: the seats of the rows it is called on, in row order. Row k goes
    to its seat's callable (copies of its float32 observation and int8 mask), a None seat to
    fallback(mask) (an env's random legal draw). Each scalar is read by check_action_id,
    naming "opponent at seat S": an array made of scalars would turn a bool or a mixed list
    into ints in silence. SeatDriver.check then sees a plain int64 array."""

    def __init__(self, acts: dict, rows_s, fallback=None):
        self.acts, self.rows_s, self.fallback = acts, [int(s) for s in rows_s], fallback

    def __call__(self, obs, masks) -> np.ndarray:
        out = np.empty(len(self.rows_s), np.int64)
        int8 = masks.view(np.int8)
        for k, s in enumerate(self.rows_s):
            act = self.acts[s]
            out[k] = self.fallback(int8[k]) if act is None else check_action_id(
                act(obs[k].copy(), int8[k].copy()), f"opponent at seat {s}")
        return out
