"""Episode bookkeeping shared by the environments (PettingZoo `NertzParallelEnv` and Gymnasium
`NertzGymEnv`), both over table 0 of an `Engine`: the score-reward baseline, whole games
(hands dealt until R30 names a winner) and snapshots (get_state / set_state).

It holds no rules: the scores are `Engine.hand_scores`, the winner `game.decide_winner`.
"""
from __future__ import annotations

import copy
import threading
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ..config import RULE_FIELDS, RulesConfig
from ..core.scoring import relative_points
from ..core.state import cards_in_play, coerce_state
from ..engine import Engine
from ..table.games import MAX_HANDS, decide_winner
from ..encoding import DECK, OVER_TRUNCATED, PLAYING

RESET_OPTIONS = ("layout",)                # the keys reset(options=...) takes
EPISODES = ("hand", "game")
REWARDS = ("score", "relative", "win")


def env_config(config, rules) -> RulesConfig:
    """An environment's config: RulesConfig(**rules) with illegal_move="penalize" by default
    (checkers send unmasked actions), or `config` with `rules` replaced."""
    if config is None:
        return RulesConfig(**{"illegal_move": "penalize", **rules})
    if not isinstance(config, RulesConfig):
        raise ValueError(f"config must be a RulesConfig, got {type(config).__name__}")
    return config.replace(**rules) if rules else config


def check_rule_kwargs(rules: dict, own: tuple) -> None:
    """An env constructor's **rules: only RulesConfig fields; `own` names the constructor's
    other arguments for the message."""
    unknown = sorted(map(str, set(rules) - set(RULE_FIELDS)))
    if unknown:
        raise ValueError(f"unknown keyword argument(s) {unknown}: allowed are the RulesConfig "
                         f"fields {list(RULE_FIELDS)} and {', '.join(own)}")


def check_seed(seed, where: str = "seed"):
    """A reset/constructor seed: None, or an int >= 0 (numpy ints too, not bool), returned as
    a Python int (what Gymnasium's seeding takes); anything else a ValueError."""
    if seed is None:
        return None
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"{where}={seed!r}: a seed is None or an int >= 0")
    return int(seed)


def check_options(options, allowed=RESET_OPTIONS, where: str = "options",
                  tolerated=()) -> dict:
    """reset(options=...): None or a dict whose keys are among `allowed`; returned as a dict.
    A non-dict or an unknown key is a ValueError naming the key and the allowed keys. Keys in
    `tolerated` are accepted and do nothing (the PettingZoo env: _PETTINGZOO_PROBE)."""
    if options is None:
        return {}
    if not isinstance(options, Mapping):
        raise ValueError(f"{where} must be None or a dict with keys among {list(allowed)}, got "
                         f"{type(options).__name__}")
    unknown = [k for k in options
               if not (isinstance(k, str) and (k in allowed or k in tolerated))]
    if unknown:
        raise ValueError(f"{where}: unknown key(s) {unknown!r}; the allowed keys are "
                         f"{list(allowed)}")
    return dict(options)


def illegal_move_error(where: str, action: int, mask) -> ValueError:
    """R31 under illegal_move="raise", the same words in every env: `where` names the agent,
    seat or table, `mask` its legal moves now."""
    legal = np.flatnonzero(mask).tolist()
    return ValueError(f"{where}: action id {action} is not among the legal moves now {legal} "
                      f"(R31, illegal_move='raise')")


def check_reward(reward: str, episode: str, rewards=REWARDS) -> None:
    """ValueError unless reward is one of `rewards` and episode one of EPISODES; "win" is
    decided at a game's end (R30), so it needs episode="game"."""
    if reward not in rewards:
        raise ValueError(f"reward={reward!r} is invalid: one of {tuple(rewards)}")
    if episode not in EPISODES:
        raise ValueError(f"episode={episode!r} is invalid: one of {EPISODES}")
    if reward == "win" and episode != "game":
        raise ValueError("reward='win' is decided at the end of a game (R30): it needs "
                         f"episode='game' (got episode={episode!r})")


def team_rewards(reward: str, delta, win) -> list:
    """One float reward per team for one tick (the envs' Rewards docstring sections): delta
    the change of every team's R29 hand score (int array [T]), win the winning team of a game
    that just ended, else None. "score": delta; "relative": delta minus the mean of the other
    teams' (core/scoring.relative_points, also the vector kernel's); "win": +1 for the winner,
    -1 for every other team, 0 before a game's end."""
    delta, T = np.asarray(delta), np.size(delta)
    if reward == "score":
        return delta.astype(np.float64).tolist()
    if reward == "relative":                     # (RulesConfig: 2 teams or more)
        return relative_points(delta, delta.sum(), T).tolist()
    team = np.zeros(T)
    if win is not None:
        team[:] = -1.0
        team[win] = 1.0
    return team.tolist()


@dataclass
class TickOutcome:
    """What the tick just played means for the episode."""
    delta: np.ndarray              # int64 [T]: change of every team's hand score this step
    terminated: bool
    truncated: bool
    win: int | None                # the game's winning team on its last step, else None
    hand_over: bool                # a hand ended this step (game: the next one is dealt)
    final_scores: np.ndarray | None  # that hand's R29 scores when hand_over


class GameLedger:
    """Reward baseline and game totals of table 0 of an engine.

    episode="hand": the episode is one hand; a Nertz call terminates it, max_ticks (R26)
    truncates it. episode="game": hands 0, 1, 2, ... are dealt until `decide_winner` names a
    winner (terminated) or MAX_HANDS hands pass (truncated); a hand that ends without ending
    the game is replaced at once by the next (R4 roles from the hand number)."""

    def __init__(self, num_teams: int, target_score: int, episode: str = "hand"):
        if episode not in EPISODES:
            raise ValueError(f"episode={episode!r}: one of {EPISODES}")
        self.episode = episode
        self.target_score = int(target_score)
        self._prev = [0] * num_teams                   # team hand scores after the previous step
        self.totals = np.zeros(num_teams, np.int64)    # game: finished hands' scores
        self.calls = np.zeros(num_teams, np.int64)     # game: Nertz calls (R30 tie-break)
        self.hands = 0                                 # game: hands finished

    @property
    def prev(self) -> np.ndarray:
        """int64 [T]: the team hand scores after the previous step (the reward baseline)."""
        return np.array(self._prev, np.int64)

    @prev.setter
    def prev(self, value) -> None:
        self._prev = np.asarray(value, np.int64).reshape(-1).tolist()

    def reset(self) -> None:
        self._prev = [0] * len(self._prev)
        self.totals[:] = 0
        self.calls[:] = 0
        self.hands = 0

    def after_tick(self, eng: Engine, scores=None) -> TickOutcome:
        """Account for the tick `eng` just played (table 0): rewards' score change, the end of
        the hand / game, and in a game the deal of the next hand. scores: table 0's R29 scores
        after the tick if the caller has them (Engine.step_observe), else computed here."""
        scores = eng.hand_scores()[0] if scores is None else np.array(scores, np.int64)
        delta = scores - self.prev
        self._prev = scores.tolist()
        status = eng.state.status[0]
        if status == PLAYING:                          # the common case
            return TickOutcome(delta, False, False, None, False, None)
        terminated = truncated = False
        win = None
        hand_over, final = True, scores.copy()
        if self.episode == "hand":
            truncated = bool(status == OVER_TRUNCATED)
            terminated = not truncated
        else:
            self.totals += scores
            self.calls += eng.state.callers[0]
            self.hands += 1
            win = decide_winner(self.totals, self.calls, self.target_score)
            if win is not None:
                terminated = True
            elif self.hands >= MAX_HANDS:
                truncated = True
            else:                                  # next hand of the game (R4 roles)
                eng.reset(hands=[int(eng.state.hand[0]) + 1])
                self._prev = [0] * len(self._prev)
        return TickOutcome(delta, terminated, truncated, win, hand_over, final)

    def playing_delta(self, scores: list) -> list:
        """after_tick's delta, as a list of floats, for a caller that has checked that the
        hand is still in play (nothing else to account for) and read table 0's R29 scores as
        a list of ints: the common step, without numpy."""
        prev, self._prev = self._prev, scores
        return [float(a - b) for a, b in zip(scores, prev)]

    def get_state(self) -> dict:
        return {"prev_scores": self.prev.copy(), "totals": self.totals.copy(),
                "calls": self.calls.copy(), "hands": self.hands}


SNAPSHOT_VERSION = 1
"""The format of take_snapshot's dicts; load_snapshot reads only this version."""
SNAPSHOT_KEYS = ("version", "fingerprint", "complete_decks", "engine", "np_random",
                 "prev_scores", "totals", "calls", "hands")


def take_snapshot(eng: Engine, ledger: GameLedger) -> dict:
    """A deep copy of the engine's arrays and generator plus the ledger, with the format's
    version, the rules' fingerprint (RulesConfig.fingerprint) and whether every deck is
    complete (a dealt table: load_snapshot then wants each card exactly once)."""
    return {"version": SNAPSHOT_VERSION, "fingerprint": eng.config.fingerprint(),
            "complete_decks": bool((cards_in_play(eng.state) == DECK).all()),
            "engine": {name: arr.copy() for name, arr in eng.state._asdict().items()},
            "np_random": copy.deepcopy(eng.np_random.bit_generator.state),
            **ledger.get_state()}


def checked_rng_state(bit_generator, state, name: str) -> dict:
    """A copy of `state` if `bit_generator` accepts it (tried on a fresh generator of the same
    kind), else a ValueError naming it; `bit_generator` itself is not touched."""
    kind = type(bit_generator).__name__
    if not isinstance(state, dict) or state.get("bit_generator") != kind:
        got = state.get("bit_generator") if isinstance(state, dict) else type(state).__name__
        raise ValueError(f"set_state: {name} must be a {kind} state dict "
                         f"(bit_generator.state), got {got!r}")
    with _PROBE_LOCK:
        probe = _PROBES.get(type(bit_generator))
        if probe is None:
            probe = _PROBES[type(bit_generator)] = type(bit_generator)(0)
        try:
            probe.state = state
            read = probe.state                    # a fresh copy, the caller's to keep
        except (TypeError, ValueError, KeyError, OverflowError) as err:
            raise ValueError(f"set_state: {name} is not a valid {kind} state: {err}") from None
    if not _same_leaves(state, read):             # what the setter truncated or ignored
        raise ValueError(f"set_state: {name} is not a valid {kind} state: it does not read back "
                         f"as given (integers only, no floats)")
    return read


_PROBES: dict = {}                 # one scratch generator per kind, to try states on
_PROBE_LOCK = threading.Lock()


def _same_leaves(given, read) -> bool:
    """given == read, leaf by leaf, with no float anywhere in `given`."""
    if isinstance(given, dict):
        return isinstance(read, dict) and given.keys() == read.keys() and all(
            _same_leaves(given[k], read[k]) for k in given)
    if isinstance(given, (float, np.floating)) or (
            isinstance(given, np.ndarray) and given.dtype.kind not in "iub"):
        return False
    if isinstance(given, np.ndarray) or isinstance(read, np.ndarray):
        return np.array_equal(given, read)
    return given == read


def _int_array(snapshot, name, shape, low=None) -> np.ndarray:
    """snapshot[name] as a fresh int64 array of `shape`: integers only (no floats, no wrap)."""
    try:
        arr = np.asarray(snapshot[name])
    except (ValueError, TypeError):
        arr = None
    if arr is None or arr.dtype.kind not in "iu":
        kind = type(snapshot[name]).__name__ if arr is None else f"{arr.dtype} array"
        raise ValueError(f"set_state: {name!r} is a {kind}; expected integers, shape {shape}")
    if arr.shape != shape:
        raise ValueError(f"set_state: {name!r} has shape {arr.shape}; this env's config needs "
                         f"{shape}")
    if arr.size and (int(arr.max()) > np.iinfo(np.int64).max
                     or (low is not None and int(arr.min()) < low)):
        raise ValueError(f"set_state: {name!r} = {arr.tolist()} is out of range"
                         + (f" (values >= {low})" if low is not None else " (int64)"))
    return arr.astype(np.int64)


def load_snapshot(eng: Engine, ledger: GameLedger, snapshot: dict, check=None):
    """Restore a take_snapshot() dict (plus the caller's keys) into `eng` and `ledger`.

    Everything is validated before anything is written (the engine's arrays and np_random,
    the ledger, and whatever `check` reads): the format's version, every array's dtype
    (integers that fit exactly: a float is refused, not truncated) and shape, the rules'
    fingerprint (a snapshot of other rules is refused), the state's invariants
    (core/invariants.py) and the generator's state. A failure is a ValueError saying which.
    `check(snapshot)`, if given, reads and validates the caller's own keys (it may raise
    ValueError, KeyError, TypeError) before anything is written; its result is returned."""
    if not isinstance(snapshot, dict):
        raise ValueError(f"set_state needs a dict from get_state(), got {type(snapshot).__name__}")
    if "version" not in snapshot:
        raise ValueError("set_state needs a dict from get_state(): this one has no 'version' "
                         "(a snapshot of an older nertz_env, or not a snapshot)")
    version = snapshot["version"]
    if type(version) is not int or version != SNAPSHOT_VERSION:
        raise ValueError(f"set_state: snapshot version {version!r}; this nertz_env reads "
                         f"version {SNAPSHOT_VERSION} (take the snapshot again with get_state())")
    missing = [k for k in SNAPSHOT_KEYS if k not in snapshot]
    if missing:
        raise ValueError(f"set_state needs a dict from get_state(): missing key(s) {missing}")
    arrays = coerce_state(snapshot["engine"], eng.state, "set_state")
    fingerprint = snapshot["fingerprint"]
    if fingerprint != eng.config.fingerprint():
        raise ValueError(f"set_state: the snapshot was taken under other rules (fingerprint "
                         f"{fingerprint!r}); this env plays {eng.config} (fingerprint "
                         f"{eng.config.fingerprint()!r})")
    complete = snapshot["complete_decks"]
    if not isinstance(complete, (bool, np.bool_)):
        raise ValueError(f"set_state: 'complete_decks' = {complete!r} must be True or False")
    rng_state = checked_rng_state(eng.np_random.bit_generator, snapshot["np_random"], "np_random")
    T = ledger.totals.shape
    prev = _int_array(snapshot, "prev_scores", T)
    totals = _int_array(snapshot, "totals", T)
    calls = _int_array(snapshot, "calls", T, low=0)
    hands = snapshot["hands"]
    if isinstance(hands, (bool, np.bool_)) or not isinstance(hands, (int, np.integer)) \
            or not 0 <= hands <= MAX_HANDS:
        raise ValueError(f"set_state: 'hands' = {hands!r} must be an int from 0 to {MAX_HANDS}")
    try:
        extra = check(snapshot) if check is not None else None
    except (KeyError, TypeError) as err:
        raise ValueError(f"set_state needs a dict from get_state(): {err!r}") from None
    # the invariants last: write_state checks them before it writes anything
    eng.write_state(arrays, bool(complete), "set_state")
    eng.np_random.bit_generator.state = rng_state
    ledger.prev, ledger.totals, ledger.calls = prev, totals, calls
    ledger.hands = int(hands)
    return extra
