"""A safe-format model (weights.py) as an ONNX graph, for serving it outside Python.

Inputs: `observation` float32 [N, observation_size] and `action_mask` int8 [N, action_size]
(1 = legal, nertz_v0's mask as it is). Outputs: `action` int64 [N], the move NumpyPolicy
plays deterministically, and `log_probs` float32 [N, action_size]. The masking is inside the
graph, with SB3's ops: LogSoftmax, illegal entries set to -1e8 and LogSoftmax again (a
masked model; an unmasked one skips the mask), then ArgMax of the Softmax. Needs the `onnx`
package to write (the `export` extra), onnxruntime (or onnx.reference) to run.

A masked model whose file names a constraint (agents/constraints.py; the shipped generalist
plays under useful-shifts) plays it inside the graph too: the graph clears the moves the
constraint forbids from the mask before the masking above (all legal moves stay when it
forbids every one), as `ppo:` and `learned` do before NumpyPolicy, so `action` is their move
and `log_probs` are over the moves the constraint keeps. GRAPH_CONSTRAINTS are the ones the
graph expresses (from the observation's card slots, nertz_env/core/observe.py, and the mask);
a model under any other is refused with one line, never written as a graph that would play
moves its constraint forbids.
"""
from __future__ import annotations

import numpy as np

from nertz_env.files import write_bytes
from nertz_env.optional import require

OPSET = 17
IR_VERSION = 8
GRAPH_CONSTRAINTS = ("useful-shifts", "never-withhold")


INSTALL = "-e '.[export]'"               # pyproject.toml's export extra (onnx)


def require_onnx():
    """The onnx module, or one ValueError line naming the extra to install."""
    return require("onnx", INSTALL, "nertz export --onnx")


def graph_constraint(meta: dict, what: str = "model") -> int:
    """The constraint bits the graph applies (0: none); ValueError naming the constraint when
    the model plays under one the graph cannot express (GRAPH_CONSTRAINTS)."""
    from ..constraints import check_constraint, constraint_bit
    name = meta.get("constraint")
    bits = check_constraint(name)
    if meta["architecture"]["action_net"] != "masked":
        return 0                         # an unmasked net's move ignores the mask (NumpyPolicy)
    ok = sum(constraint_bit(c) for c in GRAPH_CONSTRAINTS)
    if bits & ~ok:
        raise ValueError(f"{what} plays under constraint {name!r}, which the ONNX graph cannot "
                         f"apply (it applies {' and '.join(GRAPH_CONSTRAINTS)}): its graph "
                         "would play moves the constraint forbids, so none is written; play "
                         "it in Python (ppo:MODEL.npz) instead")
    return bits


def _shift_tables():
    """Per shift action: its id, the index of the card slot it is judged by in the graph's
    card table ([Nertz top, 65 River slots, 5 column tops]) and whether it moves the whole
    column (agents/constraints.py, useful-shifts)."""
    from nertz_env.core.codec import KIND_SHIFT, N_ACTIONS, decode
    from nertz_env.encoding import SRC_RIVER0
    ids, ref, whole = [], [], []
    for a in range(N_ACTIONS):
        kind, src, dst, i, _ = decode.py_func(a)
        if kind == KIND_SHIFT:
            ids.append(a)
            whole.append(i == 0)
            ref.append(1 + 13 * 5 + dst if i == 0 else 1 + (src - SRC_RIVER0) * 13 + i - 1)
    return np.array(ids), np.array(ref, np.int64), np.array(whole, np.float32)


class _Nodes:
    """A node list with fresh names and float32 constants."""

    def __init__(self, onnx):
        self.onnx, self.nodes, self.inits, self.n = onnx, [], [], 0

    def __call__(self, op, *inputs, **attrs):
        self.n += 1
        out = f"c{self.n}_{op.lower()}"
        self.nodes.append(self.onnx.helper.make_node(op, list(inputs), [out], **attrs))
        return out

    def const(self, value, dtype=np.float32):
        self.n += 1
        name = f"k{self.n}"
        self.inits.append(self.onnx.numpy_helper.from_array(np.asarray(value, dtype), name))
        return name


def _constrained_legal(g: _Nodes, bits: int, n_actions: int) -> str:
    """Nodes from (observation, action_mask) to the bool mask the constraint keeps
    (agents/constraints.py constrained_moves: the legal moves none of `bits` forbids, or every
    legal move when it forbids all of them)."""
    from nertz_env.core.codec import CALL, lake_id
    from nertz_env.core.observe import CARD_F, OFF_NERTZ, OFF_RIVER
    from nertz_env.encoding import MAX_RIVER, SRC_WASTE

    from ..constraints import NEVER_WITHHOLD, USEFUL_SHIFTS
    f1, f0 = g.const(1.0), g.const(0.0)
    legal = g("Cast", g("Cast", "action_mask", to=g.onnx.TensorProto.BOOL),
              to=g.onnx.TensorProto.FLOAT)                                   # [N, A]: 1 legal
    forbidden = []
    if bits & USEFUL_SHIFTS:
        def cols(lo, hi):
            return g("Slice", "observation", g.const([lo], np.int64), g.const([hi], np.int64),
                     g.const([1], np.int64))
        slots = g("Concat", g("Reshape", cols(OFF_NERTZ, OFF_NERTZ + CARD_F),
                              g.const([-1, 1, CARD_F], np.int64)),
                  g("Reshape", cols(OFF_RIVER, OFF_RIVER + MAX_RIVER * 13 * CARD_F),
                    g.const([-1, MAX_RIVER * 13, CARD_F], np.int64)), axis=1)   # [N, 66, 6]

        def field(lo, hi):
            return g("Slice", slots, g.const([lo], np.int64), g.const([hi], np.int64),
                     g.const([2], np.int64))
        present = g("Cast", g("Not", g("Less", g("Squeeze", field(0, 1), g.const([2], np.int64)),
                                        g.const(0.5))), to=g.onnx.TensorProto.FLOAT)
        suits = g("Cast", g("Greater", field(2, 6), g.const(0.5)), to=g.onnx.TensorProto.FLOAT)
        before = g("CumSum", suits, g.const(2, np.int64), exclusive=1)
        first = g("Mul", suits, g("Cast", g("Equal", before, f0), to=g.onnx.TensorProto.FLOAT))
        valid = g("Mul", present, g("MatMul", first, g.const([1, 1, 1, 1])))    # [N, 66]
        red = g("MatMul", first, g.const([0, 1, 1, 0]))                         # suits 1, 2
        rank = g("Sub", g("Round", g("Mul", g("Squeeze", field(1, 2), g.const([2], np.int64)),
                                     g.const(13.0))), f1)
        river_shape = g.const([-1, MAX_RIVER, 13], np.int64)

        def river(x):
            return g("Reshape", g("Slice", x, g.const([1], np.int64), g.const([66], np.int64),
                                  g.const([1], np.int64)), river_shape)
        gaps = g("CumSum", g("Sub", f1, river(valid)), g.const(2, np.int64))
        run = g("Cast", g("Equal", gaps, f0), to=g.onnx.TensorProto.FLOAT)      # [N, 5, 13]
        after = g("Pad", g("Slice", run, g.const([1], np.int64), g.const([13], np.int64),
                           g.const([2], np.int64)), g.const([0, 0, 0, 0, 0, 1], np.int64))
        is_top = g("Sub", run, after)                                          # column tops
        axis2 = g.const([2], np.int64)

        def with_tops(x, top):
            return g("Concat", x, top, axis=1)                                  # [N, 71]
        t_valid = g("Squeeze", g("Slice", run, g.const([0], np.int64), g.const([1], np.int64),
                                 axis2), axis2)
        table = {name: with_tops(x, t_valid if name == "valid" else
                                 g("ReduceSum", g("Mul", is_top, river(x)), axis2, keepdims=0))
                 for name, x in (("valid", valid), ("rank", rank), ("red", red))}
        ids, ref, whole = _shift_tables()
        k_ref, k_nertz = g.const(ref, np.int64), g.const([0], np.int64)
        r = {n: g("Gather", t, k_ref, axis=1) for n, t in table.items()}       # [N, K]
        n = {k: g("Gather", t, k_nertz, axis=1) for k, t in table.items()}     # [N, 1]
        builds = g("Mul", g("Mul", r["valid"], n["valid"]), g("Mul", g("Cast", g(
            "Equal", r["rank"], g("Add", n["rank"], f1)), to=g.onnx.TensorProto.FLOAT),
            g("Abs", g("Sub", r["red"], n["red"]))))
        k_whole = g.const(whole)
        no_build = g("Sub", f1, builds)
        # the whole column: forbidden onto an empty column or one the Nertz top builds on;
        # a part: forbidden unless the Nertz top builds on the card it uncovers
        inner = g("Add", g("Mul", k_whole, g("Sub", f1, g("Mul", r["valid"], no_build))),
                  g("Mul", g("Sub", f1, k_whole), no_build))
        forbid = g("Sub", f1, g("Mul", n["valid"], g("Sub", f1, inner)))       # [N, K]
        where = np.full(n_actions, len(ids), np.int64)
        where[ids] = np.arange(len(ids))
        padded = g("Concat", forbid, g("Mul", g("Slice", forbid, g.const([0], np.int64),
                                                g.const([1], np.int64), g.const([1], np.int64)),
                                       f0), axis=1)
        forbidden.append(g("Gather", padded, g.const(where, np.int64), axis=1))
    if bits & NEVER_WITHHOLD:
        allowed = np.ones(n_actions, np.float32)
        allowed[[lake_id.py_func(SRC_WASTE), CALL]] = 0
        w = g("Gather", legal, g.const([lake_id.py_func(SRC_WASTE)], np.int64), axis=1)
        forbidden.append(g("Mul", w, g.const(allowed)))
    forb = forbidden[0] if len(forbidden) == 1 else g("Max", *forbidden)
    kept = g("Mul", legal, g("Sub", f1, forb))
    some = g("Greater", g("ReduceMax", kept, axes=[1], keepdims=1), f0)
    return g("Greater", g("Where", some, kept, legal), g.const(0.5))


def onnx_model(meta: dict, arrays: dict, what: str = "model"):
    """The onnx ModelProto of a safe-format model (its constraint inside: module docstring)."""
    bits = graph_constraint(meta, what)
    onnx = require_onnx()
    helper, TP = onnx.helper, onnx.TensorProto
    n_obs, n_act = meta["observation_size"], meta["action_size"]
    act = {"tanh": "Tanh", "relu": "Relu"}[meta["architecture"]["activation"]]
    inits = [onnx.numpy_helper.from_array(np.asarray(v, np.float32), name=k)
             for k, v in arrays.items()]
    nodes, x = [], "observation"
    for i in range(len(meta["architecture"]["hidden"])):
        nodes += [helper.make_node("Gemm", [x, f"hidden{i}_weight", f"hidden{i}_bias"],
                                   [f"z{i}"], transB=1),
                  helper.make_node(act, [f"z{i}"], [f"h{i}"])]
        x = f"h{i}"
    nodes += [helper.make_node("Gemm", [x, "action_weight", "action_bias"], ["logits"],
                               transB=1),
              helper.make_node("LogSoftmax", ["logits"], ["lp0"], axis=1)]
    out = "lp0"
    if meta["architecture"]["action_net"] == "masked":
        inits.append(onnx.numpy_helper.from_array(np.array(-1e8, np.float32), "illegal"))
        if bits:
            g = _Nodes(onnx)
            legal = _constrained_legal(g, bits, n_act)
            nodes += g.nodes + [helper.make_node("Identity", [legal], ["legal"])]
            inits += g.inits
        else:
            nodes.append(helper.make_node("Cast", ["action_mask"], ["legal"], to=TP.BOOL))
        nodes += [helper.make_node("Where", ["legal", "lp0", "illegal"], ["lp1"]),
                  helper.make_node("LogSoftmax", ["lp1"], ["log_probs"], axis=1)]
    else:
        nodes.append(helper.make_node("Identity", [out], ["log_probs"]))
    nodes += [helper.make_node("Softmax", ["log_probs"], ["probs"], axis=1),
              helper.make_node("ArgMax", ["probs"], ["action"], axis=1, keepdims=0)]
    graph = helper.make_graph(
        nodes, "nertz_policy",
        [helper.make_tensor_value_info("observation", TP.FLOAT, ["N", n_obs]),
         helper.make_tensor_value_info("action_mask", TP.INT8, ["N", n_act])],
        [helper.make_tensor_value_info("action", TP.INT64, ["N"]),
         helper.make_tensor_value_info("log_probs", TP.FLOAT, ["N", n_act])],
        inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)],
                              producer_name="nertz export")
    model.ir_version = IR_VERSION
    onnx.checker.check_model(model)
    return model


def onnx_bytes(meta: dict, arrays: dict, what: str = "model") -> bytes:
    """The serialized graph (built before anything is written: a refusal writes nothing)."""
    return onnx_model(meta, arrays, what).SerializeToString()


def write_onnx(meta: dict, arrays: dict, path):
    """The ONNX file of a safe-format model at `path`, written whole or not at all."""
    return write_bytes(path, onnx_bytes(meta, arrays))
