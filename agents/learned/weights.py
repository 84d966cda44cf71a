"""The safe model format: plain float32 arrays in NAME.npz beside a small NAME.json that says
what they are. Reading one runs no code (no pickle, no torch, no SB3): the JSON is parsed
under a size and nesting cap with every key checked, the arrays are read with
allow_pickle=False and must have exactly the dtype and shape the JSON declares. Playing one
needs numpy only (docs/models.md).

    {"format": "nertz-policy", "version": 1,
     "architecture": {"type": "mlp", "hidden": [128, 128], "activation": "tanh",
                      "action_net": "masked"},       # MaskablePPO; "unmasked": plain PPO
     "observation_size": 791, "action_size": 322,
     "arrays": {"hidden0_weight": [128, 791], "hidden0_bias": [128], ...,
                "action_weight": [322, 128], "action_bias": [322]},
     "table": {"teams": 2, "team_size": 1},          # the table it was trained for, or null
     "rules": {...},                                 # its RulesConfig fields, or null
     "provenance": {...},                            # where it came from (free-form strings)
     "constraint": "useful-shifts"}                  # optional: the habit it plays under
                                                     # (agents/constraints.py), null or absent: none

`NumpyPolicy` is SB3's MlpPolicy actor (features -> hidden layers -> action_net) run in
numpy: deterministic moves are predict's own (its float32 normalise, mask, normalise,
softmax and argmax, op for op); deterministic=False samples the masked distribution with a
seeded numpy generator.

The fast path of a masked net's deterministic moves (`NumpyPolicy.sparse`, on by default):
the first layer reads only the observation's non-zero entries and the action net computes
only the legal moves' logits (agents/learned/sparse.py); the legal argmax is predict's
choice wherever the top two legal logits are more than TIE_GAP apart (normalising and the
softmax keep the order; float32 rounding moves logits by ~1e-6), and the rows within
TIE_GAP are played by predict's own ops above. Same moves, a fraction of the arithmetic
(benchmarks/learned_tournament.py).
"""
from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import numpy as np

from nertz_env.files import json_loads_bounded, read_capped, write_bytes, write_json, zip_member_capped

FORMAT, VERSION = "nertz-policy", 1
ACTIVATIONS = {"tanh": np.tanh, "relu": lambda x: np.maximum(x, np.float32(0))}
ACTION_NETS = ("masked", "unmasked")
MAX_JSON = 1 << 20
MAX_NPZ = 256 << 20
MAX_LAYERS, MAX_WIDTH = 8, 4096
_NPY_HEADER = 4096                     # a .npy header is a few hundred bytes at most
_KEYS = {"format", "version", "architecture", "observation_size", "action_size", "arrays",
         "table", "rules", "provenance", "constraint"}
_ARCH_KEYS = {"type", "hidden", "activation", "action_net"}
_TABLE_KEYS = {"teams", "team_size"}
_ILLEGAL = np.float32(-1e8)            # what MaskableCategorical writes over illegal logits
TIE_GAP = np.float32(1e-3)             # closer top-two legal logits: predict's own ops decide


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
    return x is None or isinstance(x, (str, int, float, bool))


def check_meta(meta, what: str) -> dict:
    """The JSON's content checked key by key; ValueError naming `what` and the key."""
    def bad(key, allowed):
        raise ValueError(f"{what}: {key} must be {allowed}")

    if not isinstance(meta, dict):
        bad("the file", "a JSON object")
    unknown = sorted(set(meta) - _KEYS)
    if unknown:
        bad(f"key {unknown[0]!r}", f"one of {', '.join(sorted(_KEYS))} (unknown keys are refused)")
    missing = sorted(_KEYS - set(meta) - {"table", "rules", "provenance", "constraint"})
    if missing:
        bad(f"key {missing[0]!r}", "present")
    if meta["format"] != FORMAT or meta["version"] != VERSION:
        bad("format/version", f"{FORMAT!r} version {VERSION} (got {meta['format']!r} "
                              f"version {meta['version']!r})")
    arch = meta["architecture"]
    if not isinstance(arch, dict) or set(arch) != _ARCH_KEYS:
        bad("architecture", f"an object with exactly {', '.join(sorted(_ARCH_KEYS))}")
    if arch["type"] != "mlp":
        bad("architecture.type", "'mlp'")
    if not (isinstance(arch["hidden"], list) and 1 <= len(arch["hidden"]) <= MAX_LAYERS
            and all(_int(h, 1, MAX_WIDTH) for h in arch["hidden"])):
        bad("architecture.hidden", f"1 to {MAX_LAYERS} layer widths, each 1..{MAX_WIDTH}")
    if arch["activation"] not in ACTIVATIONS:
        bad("architecture.activation", f"one of {', '.join(ACTIVATIONS)}")
    if arch["action_net"] not in ACTION_NETS:
        bad("architecture.action_net", f"one of {', '.join(ACTION_NETS)}")
    for key in ("observation_size", "action_size"):
        if not _int(meta[key], 1, 1 << 20):
            bad(key, "a positive integer")
    want = {k: list(v) for k, v in array_shapes(meta).items()}
    if meta["arrays"] != want:
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
    for key in ("rules", "provenance"):
        v = meta.get(key)
        if v is not None and not (isinstance(v, dict) and all(
                _plain(x) or isinstance(x, list) and all(map(_plain, x)) for x in v.values())):
            bad(key, "null or an object of plain values (or lists of them)")
    return meta


def load_weights(path) -> tuple:
    """(meta, {name: float32 array}) of a model in the safe format, read under caps; any
    fault (missing, too large, not the format, an array of another dtype or shape, an extra
    or missing array, a non-finite weight) is a ValueError naming the file."""
    npz, js = weight_files(path)
    for f in (npz, js):
        if not f.is_file():
            raise ValueError(f"model {str(path)!r}: {f} not found (the safe format is NAME.npz "
                             "with NAME.json beside it; nertz export writes both)")
    meta = check_meta(json_loads_bounded(read_capped(js, MAX_JSON, "model description"),
                                         f"model description {str(js)!r}"), f"model {str(js)!r}")
    shapes = array_shapes(meta)
    raw = read_capped(npz, MAX_NPZ, "model weights")
    try:
        zf = zipfile.ZipFile(io.BytesIO(raw))
    except zipfile.BadZipFile:
        raise ValueError(f"model weights {str(npz)!r} are not an .npz archive") from None
    members = set(zf.namelist())
    if members != {f"{n}.npy" for n in shapes}:
        extra = sorted(members - {f"{n}.npy" for n in shapes})
        raise ValueError(f"model weights {str(npz)!r} hold arrays {sorted(members)}; "
                         f"{js.name} declares {sorted(f'{n}.npy' for n in shapes)}"
                         + (f" ({extra[0]} is not one of them)" if extra else ""))
    arrays = {}
    for name, shape in shapes.items():
        cap = int(np.prod(shape)) * 4 + _NPY_HEADER
        data = zip_member_capped(zf, f"{name}.npy", cap, f"model weights {str(npz)!r}")
        try:
            a = np.lib.format.read_array(io.BytesIO(data), allow_pickle=False)
        except ValueError as exc:
            raise ValueError(f"model weights {str(npz)!r}: {name} is not a plain array "
                             f"({' '.join(str(exc).split())})") from None
        if a.dtype != np.dtype("<f4") or a.shape != shape:
            raise ValueError(f"model weights {str(npz)!r}: {name} is {a.dtype} {a.shape}; "
                             f"{js.name} declares float32 {shape}")
        if not np.isfinite(a).all():
            raise ValueError(f"model weights {str(npz)!r}: {name} holds NaN or infinite values")
        arrays[name] = a
    return meta, arrays


def save_weights(path, meta: dict, arrays: dict) -> tuple:
    """NAME.npz and NAME.json, each written whole or not at all (checked as load_weights
    reads them first); returns their paths."""
    npz, js = weight_files(path)
    check_meta(meta, f"model {str(js)!r}")
    shapes = array_shapes(meta)
    if set(arrays) != set(shapes):
        raise ValueError(f"model {str(npz)!r}: arrays {sorted(arrays)}, expected {sorted(shapes)}")
    buf = io.BytesIO()
    np.savez(buf, **{n: np.ascontiguousarray(arrays[n], dtype="<f4").reshape(shapes[n])
                     for n in shapes})
    write_bytes(npz, buf.getvalue())
    write_json(js, meta)
    return npz, js


def _logsumexp(x):
    m = x.max(axis=1, keepdims=True)
    return m + np.log(np.exp(x - m).sum(axis=1, keepdims=True, dtype=np.float32))


class NumpyPolicy:
    """A policy in the safe format, run in numpy (module docstring). act_batch: int64 [n]."""

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
        self._layers = [(arrays[f"hidden{i}_weight"].T.copy(), arrays[f"hidden{i}_bias"])
                        for i in range(n)]
        self._head = (arrays["action_weight"].T.copy(), arrays["action_bias"])
        self._head_out = np.ascontiguousarray(arrays["action_weight"])   # [actions, width]
        self._rng = np.random.default_rng(seed)

    @classmethod
    def load(cls, path, **kw) -> "NumpyPolicy":
        meta, arrays = load_weights(path)
        return cls(meta, arrays, **kw)

    def logits(self, observations) -> np.ndarray:
        """The action net's float32 logits [n, action_size]."""
        x = np.asarray(observations, np.float32)
        for w, b in self._layers:
            x = self._act(x @ w + b)
        return x @ self._head[0] + self._head[1]

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
        (w0, b0), rest = self._layers[0], self._layers[1:]
        h = self._act(first_layer(obs, w0, b0))
        for w, b in rest:
            h = self._act(h @ w + b)
        best, gap = legal_argmax(h, self._head_out, self._head[1], masks)
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
