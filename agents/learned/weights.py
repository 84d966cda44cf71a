"""The safe model format: plain float32 arrays in NAME.npz beside a small NAME.json that says
what they are. Reading one runs no code (no pickle, no torch, no SB3): the JSON is parsed
strictly under a size and nesting cap with every key and type checked, and what it declares
bounds what is read (MAX_PARAMS); each array's .npy header (numpy's literal parser) must
declare float32 of the declared shape before its data is read, so nothing is unpickled or
inflated past the declaration. Playing one needs numpy only (docs/models.md).

    {"format": "nertz-policy", "version": 1,
     "architecture": {"type": "mlp", "hidden": [128, 128], "activation": "tanh",
                      "action_net": "masked"},       # MaskablePPO; "unmasked": plain PPO
     "observation_size": 791, "action_size": 322,
     "arrays": {"hidden0_weight": [128, 791], "hidden0_bias": [128], ...,
                "action_weight": [322, 128], "action_bias": [322]},
     "table": {"teams": 2, "team_size": 1},          # the table it was trained for, or null
     "rules": {...},                                 # its RulesConfig fields, or null
     "provenance": {...},                            # where it came from (free-form strings)
     "constraint": "useful-shifts",       # optional: its habit (agents/constraints.py), or none
     "observation": "v1"}                 # optional: absent/"v0" (791 floats), "v1" (1019, v1.py)

`NumpyPolicy` is SB3's MlpPolicy actor (features -> hidden layers -> action_net) run in numpy:
deterministic moves are predict's own (its float32 normalise, mask, normalise, softmax and argmax,
op for op); deterministic=False samples the masked distribution with a seeded numpy generator.

The fast path of a masked net's deterministic moves (`NumpyPolicy.sparse`, on by default): the
first layer reads only the observation's non-zero entries and the action net computes only the
legal moves' logits (agents/learned/sparse.py); the legal argmax is predict's choice wherever the
top two legal logits are more than TIE_GAP apart (normalising and the softmax keep the order;
float32 rounding moves logits by ~1e-6), and the rows within TIE_GAP are played by predict's own
ops above. Same moves, a fraction of the arithmetic (benchmarks/learned_tournament.py).
"""
from __future__ import annotations

import copy
import io
import json
import math
import os
import stat
import struct
import zipfile
from pathlib import Path

import numpy as np

from nertz_env.files import open_regular, read_capped, write_bytes
from nertz_env.files.bounded import (ZIP_ERRORS, json_loads_strict, read_fault, system_fault,
                                     zip_fault)

from .observation import check_observation

FORMAT, VERSION = "nertz-policy", 1
ACTIVATIONS = {"tanh": np.tanh, "relu": lambda x: np.maximum(x, np.float32(0))}
ACTION_NETS = ("masked", "unmasked")
MAX_JSON = 1 << 20
MAX_LAYERS, MAX_WIDTH = 8, 4096
MAX_HIDDEN_LAYERS = MAX_LAYERS
MAX_PARAMS = 16 << 20                  # float32 weights and biases in all (64 MiB): ~50 times
#                                        the largest shipped net (256x256: 350k); 8 layers of
#                                        4096 (122M, 490 MiB) are refused before any is read
_NPY_HEADER = 4096                     # a .npy header is a few hundred bytes at most
MAX_NPZ = MAX_PARAMS * 4 + (1 << 20)   # the .npz file: every array stored, with its headers
_CHUNK = 1 << 20
_MAX_MEMBERS = 64                      # zip entries looked at (a net has 2 * layers + 2)
_KEYS = {"format", "version", "architecture", "observation_size", "action_size", "arrays",
         "table", "rules", "provenance", "constraint", "observation"}
_ARCH_KEYS = {"type", "hidden", "activation", "action_net"}
_TABLE_KEYS = {"teams", "team_size"}
_ILLEGAL = np.float32(-1e8)            # what MaskableCategorical writes over illegal logits
TIE_GAP = np.float32(1e-3)             # closer top-two legal logits: predict's own ops decide
_OPTIONAL = {"table", "rules", "provenance", "constraint", "observation"}


def weight_files(path) -> tuple:
    """(npz, json) of a model in the safe format given as either file (or their stem)."""
    p = Path(path)
    if p.suffix in (".npz", ".json"):
        p = p.with_suffix("")
    return Path(f"{p}.npz"), Path(f"{p}.json")


def is_weights(path) -> bool:
    """Whether `path` names a model in the safe format (its .npz or .json)."""
    return Path(path).suffix in (".npz", ".json")


def array_names(n_hidden: int) -> list:
    return [f"hidden{i}_{w}" for i in range(n_hidden) for w in ("weight", "bias")] + \
        ["action_weight", "action_bias"]


def array_shapes(meta: dict) -> dict:
    """{name: shape} the architecture implies (weights are [out, in], as torch stores them)."""
    widths = [meta["observation_size"], *meta["architecture"]["hidden"], meta["action_size"]]
    names = array_names(len(widths) - 2)
    out = {}
    for i, (n_in, n_out) in enumerate(zip(widths, widths[1:])):
        out[names[2 * i]], out[names[2 * i + 1]] = (n_out, n_in), (n_out,)
    return out


def _int(v, lo, hi) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and lo <= v <= hi


def _plain(x) -> bool:
    return x is None or isinstance(x, (str, int, bool)) or isinstance(x, float) and \
        math.isfinite(x)


def n_params(hidden, observation_size: int, action_size: int) -> int:
    """Weights and biases of an MLP observation -> hidden... -> actions."""
    widths = [observation_size, *hidden, action_size]
    return sum((a + 1) * b for a, b in zip(widths, widths[1:]))


def _widths_ok(hidden) -> bool:
    return isinstance(hidden, (list, tuple)) and 1 <= len(hidden) <= MAX_LAYERS \
        and all(_int(h, 1, MAX_WIDTH) for h in hidden)


def _net_problem(hidden, observation_size, action_size):
    """What the safe format cannot hold about these hidden layers, or None."""
    if not _widths_ok(hidden):
        return f"1 to {MAX_LAYERS} layer widths, each an integer 1..{MAX_WIDTH}"
    n = n_params(hidden, observation_size, action_size)
    if n > MAX_PARAMS:
        return (f"a network of at most {MAX_PARAMS:,} parameters (these layers, with "
                f"{observation_size} observation values and {action_size} actions, have {n:,})")
    return None


def check_net_shape(hidden, observation_size=None, action_size=None) -> None:
    """ValueError (one line) unless the safe format holds a net of these hidden layer widths
    (1..MAX_HIDDEN_LAYERS layers of 1..MAX_WIDTH, MAX_PARAMS in all with this game's
    observation and action sizes): for whatever saves a model in it, before it trains one."""
    if observation_size is None or action_size is None:
        from nertz_env.actions import N_ACTIONS
        from nertz_env.core.observe import OBS_DIM
        observation_size, action_size = OBS_DIM, N_ACTIONS
    problem = _net_problem(hidden, observation_size, action_size)
    if problem:
        raise ValueError(f"the safe model format holds {problem}")


def check_meta(meta, what: str) -> dict:
    """The JSON's content checked key by key; ValueError naming `what` and the key."""
    def bad(key, allowed):
        raise ValueError(f"{what}: {key} must be {allowed}")

    if not isinstance(meta, dict):
        bad("the file", "a JSON object")
    unknown = sorted(set(meta) - _KEYS)
    if unknown:
        bad(f"key {unknown[0]!r}", f"one of {', '.join(sorted(_KEYS))} (unknown keys are refused)")
    missing = sorted(_KEYS - set(meta) - _OPTIONAL)
    if missing:
        bad(f"key {missing[0]!r}", "present")
    if meta["format"] != FORMAT or type(meta["version"]) is not int \
            or meta["version"] != VERSION:
        bad("format/version", f"{FORMAT!r} version {VERSION} (got "
                              f"{json.dumps(meta['format'])[:40]} version "
                              f"{json.dumps(meta['version'])[:40]})")
    arch = meta["architecture"]
    if not isinstance(arch, dict) or set(arch) != _ARCH_KEYS:
        bad("architecture", f"an object with exactly {', '.join(sorted(_ARCH_KEYS))}")
    if arch["type"] != "mlp":
        bad("architecture.type", "'mlp'")
    if not (isinstance(arch["hidden"], list) and _widths_ok(arch["hidden"])):
        bad("architecture.hidden", f"1 to {MAX_LAYERS} layer widths, each 1..{MAX_WIDTH}")
    if not (isinstance(arch["activation"], str) and arch["activation"] in ACTIVATIONS):
        bad("architecture.activation", f"one of {', '.join(ACTIVATIONS)}")
    if not (isinstance(arch["action_net"], str) and arch["action_net"] in ACTION_NETS):
        bad("architecture.action_net", f"one of {', '.join(ACTION_NETS)}")
    for key in ("observation_size", "action_size"):
        if not _int(meta[key], 1, 1 << 20):
            bad(key, "a positive integer")
    check_observation(meta, bad)      # absent: v0 (its width checked where it is played)
    problem = _net_problem(arch["hidden"], meta["observation_size"], meta["action_size"])
    if problem:                       # the declared sizes bound what is read: checked first
        bad("architecture", problem)
    want = {k: list(v) for k, v in array_shapes(meta).items()}
    arrays = meta["arrays"]
    if not (isinstance(arrays, dict) and arrays == want and all(
            type(d) is int for v in arrays.values() for d in v)):
        bad("arrays", f"the shapes the architecture implies, {json.dumps(want)}")
    table = meta.get("table")
    if table is not None and not (isinstance(table, dict) and set(table) == _TABLE_KEYS
                                  and _int(table["teams"], 2, 8)
                                  and _int(table["team_size"], 1, 2)):
        bad("table", "null or {\"teams\": 2..8, \"team_size\": 1 or 2}")
    constraint = meta.get("constraint")
    if constraint is not None:
        from ..constraints import CONSTRAINTS, check_constraint
        try:
            ok = isinstance(constraint, str) and check_constraint(constraint) > 0
        except ValueError:
            ok = False
        if not ok:
            bad("constraint", f"null or one of {', '.join(CONSTRAINTS)} (several joined by '+')")
    v = meta.get("provenance")
    if v is not None and not (isinstance(v, dict) and all(
            _plain(x) or isinstance(x, list) and all(map(_plain, x)) for x in v.values())):
        bad("provenance", "null or an object of plain values (or lists of them)")
    if meta.get("rules") is not None:
        problem = rules_problem(meta["rules"])
        if problem:
            bad(*problem)
    return meta


def rules_problem(rules):
    """(field, what it must be) where `rules` (a model file's rules) are not the RulesConfig
    fields of a table (num_seats, derived, may be given and must agree), or None."""
    from nertz_env.config import RULE_FIELDS, RulesConfig
    if not isinstance(rules, dict):
        return "rules", "null or an object of RulesConfig fields"
    for k in rules:
        if k not in RULE_FIELDS and k != "num_seats":
            return f"rules.{k[:80]}", f"a RulesConfig field ({', '.join(RULE_FIELDS)})"
    fields = {k: tuple(v) if isinstance(v, list) else v for k, v in rules.items()
              if k != "num_seats"}
    try:
        config = RulesConfig(**fields)
    except (TypeError, ValueError) as exc:
        text = " ".join(str(exc).split())[:300]
        field = text.split("=", 1)[0].replace("RulesConfig.", "rules.", 1) \
            if text.startswith("RulesConfig.") else "rules"
        return field, f"a value a table can have ({text})"
    if "num_seats" in rules and (type(rules["num_seats"]) is not int
                                 or rules["num_seats"] != config.num_seats):
        return "rules.num_seats", f"{config.num_seats} (the seats of its teams)"
    return None


def file_problem(path):
    """Why `path` cannot be read as a model file ("not found", "is a directory", "is not a
    regular file"), or None. Only stat()s it: a FIFO is never opened, so nothing hangs. A
    stat the system refuses (permission, an I/O error) is an OSError naming it (exit 1)."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        return "not found"
    except OSError as err:
        if system_fault(err):
            raise read_fault(err, path, "model file") from None
        return f"cannot be read ({err.strerror or err})"
    if stat.S_ISDIR(mode):
        return "is a directory, not a file"
    if not stat.S_ISREG(mode):
        return "is not a regular file (a FIFO, socket or device is never opened)"
    return None


def _zip_directory(fh, size: int):
    """(entries, central directory bytes) of the zip's end record, or None: read before the
    zip is opened, so a directory of a million entries is refused, not parsed."""
    n = min(size, 22 + 0xFFFF)
    fh.seek(size - n)
    tail = fh.read(n)
    i = tail.rfind(b"PK\x05\x06")
    if i < 0 or len(tail) - i < 22:
        return None
    return struct.unpack("<4s4H2LH", tail[i:i + 22])[4:6]


def _read_array(zf, name: str, shape: tuple, what: str, declared: str) -> np.ndarray:
    """Member NAME.npy as float32 of `shape`: its header (dtype, shape) checked before any of
    its data is read, then exactly that many bytes read into one array, and nothing after."""
    info = zf.getinfo(f"{name}.npy")
    cap = math.prod(shape) * 4 + _NPY_HEADER
    if info.file_size > cap:
        raise ValueError(f"{what} {name + '.npy'!r} would inflate to {info.file_size:,} bytes, "
                         f"over the {cap:,} its declared shape {shape} takes; it is refused")
    fmt = np.lib.format
    try:
        with zf.open(info) as fh:
            version = fmt.read_magic(fh)
            if version not in ((1, 0), (2, 0)):
                raise ValueError(f"npy format version {version}")
            read_header = fmt.read_array_header_1_0 if version == (1, 0) \
                else fmt.read_array_header_2_0
            got, fortran, dtype = read_header(fh, max_header_size=_NPY_HEADER)
            if dtype.hasobject:
                raise ValueError("it holds Python objects, which are never unpickled")
            if dtype != np.dtype("<f4") or tuple(got) != shape:
                raise _Mismatch(f"{what}: {name} is {dtype} {tuple(got)}; {declared} "
                                f"declares float32 {shape}")
            flat = np.empty(math.prod(shape), np.dtype("<f4"))
            view = memoryview(flat).cast("B")
            done = 0
            while done < len(view):
                chunk = fh.read(min(_CHUNK, len(view) - done))
                if not chunk:
                    raise ValueError(f"its data ends after {done:,} of {len(view):,} bytes")
                view[done:done + len(chunk)] = chunk
                done += len(chunk)
            if fh.read(1):
                raise ValueError("it holds bytes past the data its shape takes")
    except _Mismatch as err:
        raise ValueError(str(err)) from None
    except ZIP_ERRORS as exc:     # damaged, encrypted, an unknown compression method
        raise zip_fault(exc, f"{what} {name + '.npy'!r} is damaged or unreadable") from None
    except ValueError as exc:
        raise ValueError(f"{what}: {name} is not a plain array "
                         f"({' '.join(str(exc).split())})") from None
    return flat.reshape(shape[::-1]).T.copy() if fortran else flat.reshape(shape)


class _Mismatch(Exception):
    """A member whose header says another dtype or shape (its own message)."""


def load_weights(path) -> tuple:
    """(meta, {name: float32 array}) of a model in the safe format, read under caps; any
    fault (missing, a directory or FIFO, too large, not the format, a key twice, an array of
    another dtype or shape, an extra or missing array, a non-finite weight) is a ValueError
    naming the file (exit 2), one the system will not let be read (permission, I/O) an
    OSError naming it (exit 1, bounded.read_fault). What the JSON declares bounds all read
    after it: at most MAX_PARAMS parameters, each array's header checked first."""
    npz, js = weight_files(path)
    for f in (npz, js):
        problem = file_problem(f)
        if problem:
            raise ValueError(f"model {str(path)!r}: {f} {problem} (the safe format is NAME.npz "
                             "with NAME.json beside it; nertz export writes both)")
    meta = check_meta(json_loads_strict(read_capped(js, MAX_JSON, "model description"),
                                        f"model description {str(js)!r}"), f"model {str(js)!r}")
    shapes = array_shapes(meta)
    what = f"model weights {str(npz)!r}"
    with open_regular(npz, "model weights") as fh:     # no FIFO swapped in can hang it
        try:
            return meta, _read_npz(fh, what, js.name, shapes)
        except OSError as err:    # the disk's own fault (zip damage is a ValueError): exit 1
            raise read_fault(err, npz, "model weights") from None


def _read_npz(fh, what: str, declared: str, shapes: dict) -> dict:
    """{name: array} of the open .npz `fh`, every member checked against `shapes`."""
    size = os.fstat(fh.fileno()).st_size
    if size > MAX_NPZ:
        raise ValueError(f"{what} is larger than {MAX_NPZ / 2**20:g} MiB, the most this "
                         "reader holds; it is refused unread")
    directory = _zip_directory(fh, size)
    if directory is not None and (directory[0] > _MAX_MEMBERS
                                  or directory[1] > 1024 * _MAX_MEMBERS):
        raise ValueError(f"{what} hold {directory[0]:,} entries in a {directory[1]:,}-byte "
                         f"directory; {declared} declares {len(shapes)} arrays")
    try:
        if directory is None:
            raise zipfile.BadZipFile("it has no zip end record")
        zf = zipfile.ZipFile(fh)
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as exc:
        raise zip_fault(exc, f"{what} are not an .npz archive") from None
    with zf:
        names = zf.namelist()
        members = set(names)
        if len(names) != len(members):
            twice = next(n for n in names if names.count(n) > 1)
            raise ValueError(f"{what} hold the member {twice[:80]!r} twice (which one "
                             "counts would be a guess); refused")
        if members != {f"{n}.npy" for n in shapes}:
            extra = sorted(members - {f"{n}.npy" for n in shapes})
            raise ValueError(f"{what} hold arrays {sorted(members)}; "
                             f"{declared} declares {sorted(f'{n}.npy' for n in shapes)}"
                             + (f" ({extra[0]} is not one of them)" if extra else ""))
        arrays = {}
        for name, shape in shapes.items():
            a = _read_array(zf, name, shape, what, declared)
            if not np.isfinite(a).all():
                raise ValueError(f"{what}: {name} holds NaN or infinite values")
            arrays[name] = a
    return arrays


def save_weights(path, meta: dict, arrays: dict) -> tuple:
    """NAME.npz and NAME.json, each written whole or not at all (checked as load_weights
    reads them first); returns their paths."""
    npz, js = weight_files(path)
    check_meta(meta, f"model {str(js)!r}")
    text = _meta_text(meta, js)
    shapes = array_shapes(meta)
    if set(arrays) != set(shapes):
        raise ValueError(f"model {str(npz)!r}: arrays {sorted(arrays)}, expected {sorted(shapes)}")
    buf = io.BytesIO()
    np.savez(buf, **{n: np.ascontiguousarray(arrays[n], dtype="<f4").reshape(shapes[n])
                     for n in shapes})
    write_bytes(npz, buf.getvalue())
    write_bytes(js, text)
    return npz, js


def _meta_text(meta: dict, js) -> bytes:
    """The bytes of NAME.json (write_json's), refused unless load_weights reads them back:
    the reader's rules (size, strict JSON: no integer of over 30 digits, no float too large)
    applied at write time, so no writer makes a file its own reader refuses."""
    what = f"model {str(js)!r}"
    try:
        text = (json.dumps(meta, indent=2, allow_nan=False) + "\n").encode("utf-8")
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{what}: its description is not plain JSON ({exc})") from None
    if len(text) > MAX_JSON:
        raise ValueError(f"{what}: its description takes {len(text):,} bytes; the reader holds "
                         f"at most {MAX_JSON:,} (a provenance field too long?)")
    check_meta(json_loads_strict(text, what), what)
    return text


def _logsumexp(x):
    m = x.max(axis=1, keepdims=True)
    return m + np.log(np.exp(x - m).sum(axis=1, keepdims=True, dtype=np.float32))


class NumpyPolicy:
    """A policy in the safe format, run in numpy (module docstring). act_batch: int64 [n]. Its
    layers: hidden_layers [(weight [in, out], bias)], action_weight [actions, width], action_bias"""

    sparse = True             # the fast path of deterministic masked moves (module docstring)

    def __init__(self, meta: dict, arrays: dict, deterministic: bool = True, seed=None,
                 name: str = "model"):
        self.meta = meta
        self.name = name
        self.deterministic = bool(deterministic)
        self.masked = meta["architecture"]["action_net"] == "masked"
        self.activation = meta["architecture"]["activation"]
        self.obs_size, self.n_actions = meta["observation_size"], meta["action_size"]
        self._act = ACTIVATIONS[meta["architecture"]["activation"]]
        n = len(meta["architecture"]["hidden"])
        self.hidden_layers = [(arrays[f"hidden{i}_weight"].T.copy(), arrays[f"hidden{i}_bias"])
                              for i in range(n)]
        self.action_weight = np.ascontiguousarray(arrays["action_weight"])
        self.action_bias = arrays["action_bias"]
        self._head = (self.action_weight.T.copy(), self.action_bias)   # logits' [width, actions]
        self._rng = np.random.default_rng(seed)

    @classmethod
    def load(cls, path, **kw) -> "NumpyPolicy":
        meta, arrays = load_weights(path)
        return cls(meta, arrays, **kw)

    def twin(self, deterministic: bool = True, seed=None) -> "NumpyPolicy":
        """This network with its own generator (and determinism): its arrays are shared, not
        copied or read again (a family whose members name one model holds it once)."""
        other = copy.copy(self)
        other.deterministic = bool(deterministic)
        other._rng = np.random.default_rng(seed)
        return other

    def logits(self, observations) -> np.ndarray:
        """The action net's float32 logits [n, action_size]."""
        x = np.asarray(observations, np.float32)
        for w, b in self.hidden_layers:
            x = self._act(x @ w + b)
        return x @ self._head[0] + self.action_bias

    def log_probs(self, observations, action_masks) -> np.ndarray:
        """SB3's log-probabilities, op for op in float32: Categorical normalises the logits;
        a masked net then writes -1e8 over illegal ones and normalises again."""
        lp = self.logits(observations)
        lp = lp - _logsumexp(lp)
        if self.masked:
            lp = np.where(np.asarray(action_masks, bool), lp, _ILLEGAL)
            lp = lp - _logsumexp(lp)
        return lp

    def act_batch(self, observations, action_masks) -> np.ndarray:
        if self.deterministic and self.masked and self.sparse:
            return self._legal_argmax(observations, action_masks)
        if self.deterministic:
            return self.predict_rows(observations, action_masks)
        lp = self.log_probs(observations, action_masks)
        g = lp.astype(np.float64) + self._rng.gumbel(size=lp.shape)    # Gumbel-max: a draw
        if self.masked:
            g = np.where(np.asarray(action_masks, bool), g, -np.inf)
        return g.argmax(axis=1).astype(np.int64)

    def _legal_argmax(self, observations, action_masks) -> np.ndarray:
        """predict's deterministic moves by the fast path (module docstring)."""
        from .sparse import first_layer, legal_argmax
        obs = np.asarray(observations, np.float32)
        masks = np.asarray(action_masks, bool)
        (w0, b0), rest = self.hidden_layers[0], self.hidden_layers[1:]
        h = self._act(first_layer(obs, w0, b0))
        for w, b in rest:
            h = self._act(h @ w + b)
        best, gap = legal_argmax(h, self.action_weight, self.action_bias, masks)
        close = np.flatnonzero(gap < TIE_GAP)
        if close.size:
            best[close] = self.predict_rows(obs[close], masks[close])
        return best

    def predict_rows(self, observations, action_masks) -> np.ndarray:
        """predict's deterministic moves op for op: the argmax of the softmax of log_probs
        (int64 [n]); the fast path's near-ties and agents/learned/core_play.py's pauses."""
        lp = self.log_probs(observations, action_masks)
        e = np.exp(lp - lp.max(axis=1, keepdims=True))
        return (e / e.sum(axis=1, keepdims=True)).argmax(axis=1).astype(np.int64)

    def act(self, observation, action_mask) -> int:
        return int(self.act_batch(np.asarray(observation)[None], np.asarray(action_mask)[None])[0])
