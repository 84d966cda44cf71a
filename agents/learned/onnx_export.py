"""A safe-format model (weights.py) as an ONNX graph, for serving it outside Python.

Inputs: `observation` float32 [N, observation_size] and `action_mask` int8 [N, action_size]
(1 = legal, nertz_v0's mask as it is). Outputs: `action` int64 [N], the move NumpyPolicy
plays deterministically, and `log_probs` float32 [N, action_size]. The masking is inside the
graph, with SB3's ops: LogSoftmax, illegal entries set to -1e8 and LogSoftmax again (a
masked model; an unmasked one skips the mask), then ArgMax of the Softmax. Needs the `onnx`
package to write (the `export` extra), onnxruntime (or onnx.reference) to run.
"""
from __future__ import annotations

import numpy as np

from nertz_env.files import write_bytes
from nertz_env.optional import require

OPSET = 17
IR_VERSION = 8


INSTALL = "-e '.[export]'"               # pyproject.toml's export extra (onnx)


def require_onnx():
    """The onnx module, or one ValueError line naming the extra to install."""
    return require("onnx", INSTALL, "nertz export --onnx")


def onnx_model(meta: dict, arrays: dict):
    """The onnx ModelProto of a safe-format model."""
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
        nodes += [helper.make_node("Cast", ["action_mask"], ["legal"], to=TP.BOOL),
                  helper.make_node("Where", ["legal", "lp0", "illegal"], ["lp1"]),
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


def write_onnx(meta: dict, arrays: dict, path):
    """The ONNX file of a safe-format model at `path`, written whole or not at all."""
    return write_bytes(path, onnx_model(meta, arrays).SerializeToString())
