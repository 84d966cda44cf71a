"""stable-baselines3 model zips, read without running the code they may hold.

An SB3 zip's `data` entry is JSON in which every value that is not plain JSON (the policy
class, the spaces, schedules, buffers, last observations) is a cloudpickled blob under
":serialized:": `PPO.load` unpickles them, so a zip from someone else can run any code on
load. `load_sb3` never unpickles one: it reads `data` itself under caps, checks the readable
parts (the policy's module, the spaces' shapes), and hands SB3 `custom_objects` that replace
every ":serialized:" entry (SB3 then skips it); the weights (*.pth) are read by SB3 with
torch.load(weights_only=True). What that cannot rebuild (a custom policy class, pickled
policy_kwargs) is refused, unless the caller passes trust=True: then SB3's own load runs,
pickles and all (`ppo:PATH,trust=yes`, only for files whose author you trust).

`policy_weights` turns a loaded stock MlpPolicy into the safe format (weights.py).
"""
from __future__ import annotations

import hashlib
import json
import math
import re
import zipfile
from pathlib import Path

import numpy as np

from nertz_env.actions import N_ACTIONS
from nertz_env.core.observe import OBS_DIM
from nertz_env.files import json_loads_bounded, zip_member_capped
from nertz_env.files.bounded import read_fault
from nertz_env.optional import require

from .weights import (FORMAT, MAX_LAYERS, MAX_PARAMS, MAX_WIDTH, VERSION, array_names,
                      array_shapes, n_params)

MAX_DATA = 16 << 20
MAX_MEMBER = 256 << 20
# the policy's module (readable beside its pickle) -> (package, algorithm, policy class)
POLICY_MODULES = {
    "sb3_contrib.common.maskable.policies": ("sb3_contrib", "MaskablePPO",
                                             "MaskableActorCriticPolicy"),
    "stable_baselines3.common.policies": ("stable_baselines3", "PPO", "ActorCriticPolicy"),
}
TRUST_HINT = ("loading it runs code stored in the file: add ,trust=yes only if you trust "
              "whoever made it (docs/models.md), or ask them for the safe .npz/.json format")
_VAL = re.compile(r"val=([-+0-9.eE]+)")
_ANSI = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b[@-_]")


def error_text(exc, limit: int = 300) -> str:
    """A loader's exception as one plain line: terminal escape codes (torch's bold) removed,
    whitespace runs joined, at most `limit` characters."""
    return " ".join(_ANSI.sub("", str(exc)).split())[:limit]


def sb3_path(path) -> Path:
    """The zip of `path` (SB3 also tries PATH.zip); ValueError when neither is a file."""
    p = Path(path)
    tries = (p,) if p.suffix == ".zip" else (p, Path(f"{p}.zip"))
    for q in tries:
        if q.is_file():
            return q
    for q in tries:
        if q.is_dir():
            raise ValueError(f"ppo model {str(q)!r} is a directory, not a model file; give the "
                             "path of a model saved with model.save() or of a .npz/.json model")
        if q.exists():
            raise ValueError(f"ppo model {str(q)!r} is not a regular file (a FIFO, socket or "
                             "device); give the path of a model file")
    nor = "" if len(tries) == 1 else f" (nor {str(tries[1])!r})"
    raise ValueError(f"ppo model {str(path)!r} does not exist{nor}; give the path of a model "
                     "saved with model.save() or of a .npz/.json model (nertz export)")


def read_data(path) -> dict:
    """The `data` JSON of an SB3 zip, read under caps (every member's size checked too)."""
    p = sb3_path(path)
    what = f"ppo model {str(path)!r}"
    try:
        with zipfile.ZipFile(p) as zf:
            for info in zf.infolist():
                if info.file_size > MAX_MEMBER:
                    raise ValueError(f"{what}: member {info.filename!r} would inflate to "
                                     f"{info.file_size:,} bytes; refused")
            raw = zip_member_capped(zf, "data", MAX_DATA, what)
    except OSError as exc:             # permission, I/O: an OSError, exit 1 (bounded.read_fault)
        raise read_fault(exc, p, "ppo model") from None
    except zipfile.BadZipFile as exc:
        raise ValueError(f"{what} is not an SB3 model zip ({type(exc).__name__}: "
                         f"{_why(exc)})") from None
    data = json_loads_bounded(raw, f"{what}: its data entry")
    if not isinstance(data, dict):
        raise ValueError(f"{what}: its data entry is not a JSON object")
    return data


def _why(exc) -> str:
    """An OSError's reason without its file name (the message names the file once)."""
    return exc.strerror if isinstance(exc, OSError) and exc.strerror else error_text(exc)


def _serialized(v) -> bool:
    return isinstance(v, dict) and ":serialized:" in v


def _readable_int_tuple(text):
    try:
        return tuple(int(x) for x in str(text).strip("[]() ").replace(",", " ").split())
    except ValueError:
        return None


def spaces_of(data: dict, what: str) -> tuple:
    """(observation shape, action count) from the spaces' readable fields (never unpickled)."""
    obs, act = data.get("observation_space"), data.get("action_space")
    if not (isinstance(obs, dict) and "spaces.box.Box" in str(obs.get(":type:"))):
        raise ValueError(f"{what}: its observation space is not a flat Box ({TRUST_HINT})")
    if not (isinstance(act, dict) and "spaces.discrete.Discrete" in str(act.get(":type:"))):
        raise ValueError(f"{what}: its action space is not Discrete ({TRUST_HINT})")
    shape = _readable_int_tuple(obs.get("_shape"))
    n = _readable_int_tuple(act.get("n"))
    if not shape or not n or len(n) != 1:
        raise ValueError(f"{what}: its spaces' sizes are not readable ({TRUST_HINT})")
    return shape, n[0]


def check_sizes(obs_size, n_actions, what: str) -> None:
    """ValueError naming both sizes when a model does not fit this game's spaces."""
    if obs_size != OBS_DIM or n_actions != N_ACTIONS:
        raise ValueError(f"{what} does not fit this game: it takes observations of "
                         f"{obs_size} values and chooses among {n_actions} actions; a Nertz "
                         f"seat has {OBS_DIM} and {N_ACTIONS} (nertz_env/core/observe.py, "
                         "nertz_env/actions.py)")


def _layers(v) -> bool:
    return isinstance(v, list) and len(v) <= MAX_LAYERS and all(
        type(h) is int and 1 <= h <= MAX_WIDTH for h in v)


def net_size(data: dict, obs_size: int, n_actions: int, what: str) -> int:
    """The parameters of the stock policy `data` declares (its actor, its critic and their
    heads), read from policy_kwargs.net_arch before anything is built: ValueError (one line
    naming the field) where net_arch is not one the safe format bounds (at most MAX_LAYERS
    layers of 1..MAX_WIDTH, MAX_PARAMS parameters for each of actor and critic)."""
    kwargs = data.get("policy_kwargs")
    if kwargs is None:
        kwargs = {}
    if not isinstance(kwargs, dict):
        raise ValueError(f"{what}: its policy_kwargs must be an object (got "
                         f"{type(kwargs).__name__}); {TRUST_HINT}")
    arch = kwargs.get("net_arch", {"pi": [64, 64], "vf": [64, 64]})     # SB3's default
    if isinstance(arch, list):
        pi = vf = arch
    elif isinstance(arch, dict) and set(arch) <= {"pi", "vf"}:
        pi, vf = arch.get("pi", []), arch.get("vf", [])
    else:
        pi = vf = None
    if not (_layers(pi) and _layers(vf)):
        raise ValueError(f"{what}: its policy_kwargs.net_arch must be a list of at most "
                         f"{MAX_LAYERS} layer widths, each an integer 1..{MAX_WIDTH} (or "
                         "{\"pi\": [...], \"vf\": [...]} of such lists; got "
                         f"{_brief(arch)}); refused before building it")
    actor, critic = n_params(pi, obs_size, n_actions), n_params(vf, obs_size, 1)
    if max(actor, critic) > MAX_PARAMS:
        raise ValueError(f"{what}: its policy_kwargs.net_arch declares {actor:,} actor and "
                         f"{critic:,} critic parameters; at most {MAX_PARAMS:,} each are read "
                         "(refused before building it)")
    return actor + critic


def _brief(v) -> str:
    text = json.dumps(v) if isinstance(v, (list, dict, str, int, float, bool)) else "?"
    return text if len(text) <= 60 else text[:57] + "..."


def check_stored_sizes(path, params: int, what: str) -> None:
    """Every .pth member of the zip no larger than `params` float32 parameters take (with
    an optimizer's two moments and room for headers): checked before torch reads any."""
    cap = 12 * params + (1 << 20)
    try:
        with zipfile.ZipFile(path) as zf:
            big = [i for i in zf.infolist() if i.filename.endswith(".pth")
                   and i.file_size > cap]
    except (OSError, zipfile.BadZipFile) as exc:
        raise ValueError(f"{what} is not an SB3 model zip ({error_text(exc)})") from None
    if big:
        raise ValueError(f"{what}: member {big[0].filename!r} holds {big[0].file_size:,} "
                         f"bytes; the network its data declares ({params:,} parameters) "
                         f"takes at most {cap:,}; refused unread")


def timesteps(data_or_value, what: str) -> int:
    """num_timesteps (of a data dict, or the value itself) as an int the safe format's reader
    takes: a non-negative integer of at most 30 digits; ValueError naming `what` and it."""
    v = data_or_value.get("num_timesteps", 0) if isinstance(data_or_value, dict) \
        else data_or_value
    if isinstance(v, np.integer):
        v = int(v)
    if type(v) is not int or not 0 <= v < 10 ** 30:
        shown = repr(v) if isinstance(v, (int, float, str)) else type(v).__name__
        raise ValueError(f"{what}: num_timesteps must be a whole number from 0 to 10**30 "
                         f"(got {shown[:40]})")
    return v


def _schedule_value(v, default: float) -> float:
    if isinstance(v, (int, float)) and not isinstance(v, bool):
        return float(v)
    m = _VAL.search(str(v.get("value_schedule", ""))) if isinstance(v, dict) else None
    try:
        return float(m.group(1)) if m else default
    except ValueError:
        return default


def check_data(data: dict, what: str) -> int:
    """The readable parts of `data` checked before anything is built or imported: a stock
    policy class, plain policy_kwargs, spaces of this game, a network within the safe
    format's bounds, a whole num_timesteps. Returns the network's parameters."""
    policy = data.get("policy_class")
    module = policy.get("__module__") if isinstance(policy, dict) else None
    if not (isinstance(module, str) and module in POLICY_MODULES):
        shown = repr(module)[:80] if isinstance(module, str) or module is None \
            else f"a JSON {type(module).__name__}"
        raise ValueError(f"{what}: its policy class (from module {shown}) is not a stock "
                         f"PPO or MaskablePPO policy; {TRUST_HINT}")
    if _serialized(data.get("policy_kwargs")):
        raise ValueError(f"{what}: its policy_kwargs are pickled (a custom activation or "
                         f"feature extractor); {TRUST_HINT}")
    shape, n = spaces_of(data, what)
    obs_size = math.prod(shape)
    check_sizes(obs_size, n, what)
    timesteps(data, what)
    return net_size(data, obs_size, n, what)


def safe_objects(data: dict, what: str) -> tuple:
    """(algorithm class, custom_objects): a stand-in for every ':serialized:' entry."""
    check_data(data, what)
    module = data["policy_class"]["__module__"]
    package, algo, policy_cls = POLICY_MODULES[module]
    purpose = f"{what}: a ppo agent (the train extra)"
    algo_cls = getattr(require(package, "train", purpose), algo)
    policies = require(module, "train", purpose)
    from nertz_env.envs.spaces import action_space, observation_space
    custom = {k: None for k, v in data.items() if _serialized(v)}
    custom.update(policy_class=getattr(policies, policy_cls),
                  observation_space=observation_space(), action_space=action_space(),
                  clip_range=_schedule_value(data.get("clip_range"), 0.2),
                  lr_schedule=_schedule_value(data.get("lr_schedule"), 3e-4))
    if _serialized(data.get("learning_rate")):
        custom["learning_rate"] = custom["lr_schedule"]
    custom["lr_schedule"] = _constant(custom["lr_schedule"])
    return algo_cls, custom


def _constant(value: float):
    utils = require("stable_baselines3.common.utils", "train", "a ppo model")
    schedule = getattr(utils, "FloatSchedule", None)          # SB3 >= 2.6; older: a function
    return schedule(float(value)) if schedule else utils.get_schedule_fn(float(value))


def load_sb3(path, device: str = "cpu", env=None, trust: bool = False, **kwargs):
    """An SB3 PPO / MaskablePPO model from its zip, without unpickling anything (module
    docstring) unless trust=True. ValueError naming the path for every refusal or fault."""
    what = f"ppo model {str(path)!r}"
    p = sb3_path(path)
    data = read_data(p)
    if trust:
        return _trusted_load(p, what, device, env, **kwargs)
    algo_cls, custom = safe_objects(data, what)
    check_stored_sizes(p, net_size(data, OBS_DIM, N_ACTIONS, what), what)
    try:
        return algo_cls.load(str(p), env=env, device=device, custom_objects=custom, **kwargs)
    except Exception as exc:  # any loader failure is the file's: one line naming it
        raise ValueError(f"{what} could not be loaded as {algo_cls.__name__} "
                         f"({type(exc).__name__}: {error_text(exc)})") from exc


def _trusted_load(p, what, device, env, **kwargs):
    """SB3's own load (it unpickles the file): MaskablePPO, else PPO."""
    errors = []
    for package, algo in (("sb3_contrib", "MaskablePPO"), ("stable_baselines3", "PPO")):
        cls = getattr(require(package, "train", f"{what}: a ppo agent (the train extra)"), algo)
        try:
            return cls.load(str(p), env=env, device=device, **kwargs)
        except Exception as exc:  # reported together with the other loader's error
            errors.append(f"as {algo}: {type(exc).__name__}: {error_text(exc, 200)}")
    raise ValueError(f"{what} could not be loaded ({'; '.join(errors)})")


def policy_weights(model, source=None, table=None, rules=None) -> tuple:
    """(meta, arrays) of the safe format from a loaded PPO / MaskablePPO whose policy is the
    stock MlpPolicy (flat features, Linear+activation layers, a linear action net); anything
    else is a ValueError saying what does not fit."""
    torch = require("torch", "train", "exporting a model")
    nn = torch.nn
    policy = model.policy
    name = type(model).__name__
    what = f"model {str(source) if source else name!r}"
    from stable_baselines3.common.torch_layers import FlattenExtractor
    if not isinstance(getattr(policy, "pi_features_extractor", None), FlattenExtractor):
        raise ValueError(f"{what}: only the stock MlpPolicy exports (its features extractor "
                         f"is {type(getattr(policy, 'features_extractor', None)).__name__})")
    obs_size = int(np.prod(policy.observation_space.shape))
    n_actions = int(getattr(policy.action_space, "n", 0))
    check_sizes(obs_size, n_actions, what)
    layers = list(policy.mlp_extractor.policy_net)
    linears = layers[0::2]
    acts = {type(m) for m in layers[1::2]}
    kinds = {nn.Tanh: "tanh", nn.ReLU: "relu"}
    if (len(layers) % 2 or not linears or not all(isinstance(m, nn.Linear) for m in linears)
            or len(acts) != 1 or next(iter(acts)) not in kinds
            or not isinstance(policy.action_net, nn.Linear)):
        raise ValueError(f"{what}: its actor is not Linear layers with one Tanh/ReLU activation "
                         f"({policy.mlp_extractor.policy_net}); only such an MLP exports")
    masked = name == "MaskablePPO"
    meta = {"format": FORMAT, "version": VERSION,
            "architecture": {"type": "mlp", "hidden": [m.out_features for m in linears],
                             "activation": kinds[next(iter(acts))],
                             "action_net": "masked" if masked else "unmasked"},
            "observation_size": obs_size, "action_size": n_actions, "arrays": {},
            "table": table, "rules": rules,
            "provenance": {"algorithm": name,
                           "num_timesteps": timesteps(model.num_timesteps, what)}}
    if source is not None:
        src = Path(source)
        meta["provenance"].update(source=src.name,
                                  source_sha256=hashlib.sha256(src.read_bytes()).hexdigest())
    meta["arrays"] = {k: list(v) for k, v in array_shapes(meta).items()}
    tensors = [t for m in linears for t in (m.weight, m.bias)] + \
        [policy.action_net.weight, policy.action_net.bias]
    arrays = {n: t.detach().cpu().numpy().astype("<f4")
              for n, t in zip(array_names(len(linears)), tensors)}
    return meta, arrays
