"""Networks that read the v1 observation (nertz_v1: v0's 791 floats, then the 228-float block
of what the seat remembers, nertz_env/core/observe_memory.py), in the safe format.

A model file says which observation it reads (`"observation": "v1"` in its JSON, with
`observation_size` 1019; absent: v0, 791 floats; agents/learned/weights.py checks the two
agree). Such a net plays wherever an agent plays, as a seat-view agent (agents/base.py:
`seat_view = True`, `act_view(SeatView)`): its rows are written from the view's state and the
tables' public memory by observe_v1_rows (the v0 prefix is the view's own observations), never
from a face-down card, then played by NumpyPolicy. `ppo:PATH` and `learned:...` agents whose
model reads v1 are such agents (agents/learned/ppo.py, shipped.py); the arena's Python loop,
the human table and the envs' opponents pass them a view. act_batch has no view and refuses
them in one line. The arena's net kernel (agents/learned/core_play.py) plays v1 models as it
plays v0 ones, the memory kept inside it from public events: the same records as the Python
loop's (tests/learned/test_core_play_v1.py).

Widening (`widen_model`, or `python -m agents.learned.v1 SRC.npz OUT.npz`): a v0 model made a
v1 one whose first layer reads the memory block through zero weights, so it plays exactly the
v0 model's moves (the warm start of a network that learns to use the memory).
"""
from __future__ import annotations

import sys

import numpy as np

from .observation import observation_of, observation_width
from .weights import load_weights, save_weights

def reads_v1(policy) -> bool:
    """Whether a NumpyPolicy's model reads the v1 observation (its file says so)."""
    meta = getattr(policy, "meta", None)
    return isinstance(meta, dict) and observation_of(meta) == "v1"


def check_fits(meta: dict, what: str) -> None:
    """ValueError (one line naming `what`) unless a model of description `meta` fits a Nertz
    seat: a v0 model's sizes as agents/learned/sb3_zip.py check_sizes says (791 and 322); a v1
    model's action size (its width is its version's: weights.check_meta)."""
    from nertz_env.actions import N_ACTIONS
    from .sb3_zip import check_sizes
    if observation_of(meta) == "v0":
        check_sizes(meta["observation_size"], meta["action_size"], what)
    elif meta["action_size"] != N_ACTIONS:
        raise ValueError(f"{what}: action_size must be {N_ACTIONS} (a Nertz seat's actions, "
                         f"nertz_env/actions.py), got {meta['action_size']}")


def view_rows(view) -> np.ndarray:
    """float32 [n, V1_OBS_DIM]: the v1 observations of a SeatView's rows (agents/base.py):
    the view's v0 observations, then each seat's memory block from the tables' public memory."""
    from nertz_env.core.observe_memory import observe_v1_rows
    return observe_v1_rows(view.state, view.config, view.memory, view.rows, view.seats,
                           v0=np.asarray(view.observations, np.float32))


def no_view_error(name: str) -> ValueError:
    """The one refusal of a v1 net asked to move without a seat view."""
    return ValueError(f"agent {name!r} reads the v1 observation (what its seat remembers) and "
                      "plays only where it is passed a seat view (nertz tournament, nertz "
                      "experiment, nertz play --human, the envs' opponents); act_batch has no "
                      "view")


def widen(meta: dict, arrays: dict, source: str = "") -> tuple:
    """(meta, arrays) of the v1 model that plays exactly as v0 model (meta, arrays): its first
    layer's weight gains zero columns for the memory block; everything else is unchanged.
    ValueError where the model does not read v0."""
    if observation_of(meta) != "v0":
        raise ValueError(f"model {source!r}: observation is {observation_of(meta)!r}; only a "
                         "v0 model is widened")
    v0, v1 = observation_width("v0"), observation_width("v1")
    if meta["observation_size"] != v0:
        raise ValueError(f"model {source!r}: observation_size must be {v0} (v0) to widen, got "
                         f"{meta['observation_size']}")
    w = arrays["hidden0_weight"]
    wide = np.zeros((w.shape[0], v1), np.float32)
    wide[:, :v0] = w
    out_meta = dict(meta, observation_size=v1, observation="v1")
    out_meta["arrays"] = dict(meta["arrays"], hidden0_weight=[w.shape[0], v1])
    prov = dict(meta.get("provenance") or {})
    prov["widened_from"] = str(source)[-200:]
    out_meta["provenance"] = prov
    return out_meta, dict(arrays, hidden0_weight=wide)


def widen_model(src, dst) -> tuple:
    """Read v0 safe-format model `src`, write its widened v1 twin to `dst` (DST.npz and
    DST.json, each whole or not at all); returns their paths. Refuses (ValueError, nothing
    written) a model that is not v0, or a dst that already exists."""
    from .weights import weight_files
    for f in weight_files(dst):
        if f.exists():
            raise ValueError(f"OUT {str(f)!r} exists: name a new model")
    meta, arrays = load_weights(src)
    meta, arrays = widen(meta, arrays, str(src))
    return save_weights(dst, meta, arrays)


def main(argv=None) -> int:
    import argparse
    ap = argparse.ArgumentParser(
        prog="python -m agents.learned.v1",
        description="Widen a v0 safe-format model into a v1 one (it reads the memory block "
                    "through zero weights, so it plays the same moves): the warm start of a "
                    "network that reads the v1 observation.")
    ap.add_argument("src", help="the v0 model (NAME.npz with NAME.json beside it)")
    ap.add_argument("out", help="the v1 model to write (OUT.npz and OUT.json; must be new)")
    a = ap.parse_args(argv)
    try:
        npz, js = widen_model(a.src, a.out)
    except ValueError as err:
        print(f"{ap.prog}: error: {' '.join(str(err).split())}", file=sys.stderr)
        return 2
    except OSError as err:
        print(f"{ap.prog}: error: {err.strerror or err}", file=sys.stderr)
        return 1
    print(f"{npz} and {js}: play it as ppo:{npz}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
