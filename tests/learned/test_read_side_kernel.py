"""The net kernel reads NumpyPolicy by its public layers, and its arguments come in a few
named records (#41 item 4): play_nets_range took 37 parameters. The kernel's numbers stay
the Python loop's (tests/learned/test_core_play.py holds every column equal)."""
from __future__ import annotations

import inspect
import types

import numpy as np

import agents.learned.core_play as core_play
from agents.learned.weights import NumpyPolicy, load_weights

LEARNED = "agents/learned/models/learned.npz"


def test_numpy_policy_layers_are_public_and_are_the_file_arrays():
    meta, arrays = load_weights(LEARNED)
    p = NumpyPolicy(meta, arrays)
    n = len(meta["architecture"]["hidden"])
    assert len(p.hidden_layers) == n
    for i, (w, b) in enumerate(p.hidden_layers):
        np.testing.assert_array_equal(w, arrays[f"hidden{i}_weight"].T)
        np.testing.assert_array_equal(b, arrays[f"hidden{i}_bias"])
    np.testing.assert_array_equal(p.action_weight, arrays["action_weight"])
    np.testing.assert_array_equal(p.action_bias, arrays["action_bias"])
    x = np.random.default_rng(0).random((3, meta["observation_size"]), np.float32)
    h = x
    for w, b in p.hidden_layers:
        h = np.tanh(h @ w + b)
    np.testing.assert_allclose(p.logits(x), h @ p.action_weight.T + p.action_bias, atol=1e-5)


def test_the_stack_reads_only_the_public_layers():
    """An object with NumpyPolicy's public layers and nothing private stacks as the policy
    does: the kernel reads no private array."""
    p = NumpyPolicy.load(LEARNED)
    public = types.SimpleNamespace(hidden_layers=p.hidden_layers, action_weight=p.action_weight,
                                   action_bias=p.action_bias, activation=p.activation)
    a, b = core_play.Stack([(p, 3)]), core_play.Stack([(public, 3)])
    assert a.ok and b.ok
    for name, x, y in zip(core_play.Nets._fields, a.nets, b.nets):
        np.testing.assert_array_equal(x, y, err_msg=name)
    assert "._" not in inspect.getsource(core_play.Stack)


def test_the_kernel_takes_a_few_named_records():
    params = list(inspect.signature(core_play.play_nets_range.py_func).parameters)
    assert params == ["st", "prm", "scr", "buf", "seats", "deals", "out", "nets", "mem",
                      "in_step", "lo", "hi"]
    batch = list(inspect.signature(core_play.play_nets_batch.py_func).parameters)
    assert batch == params[:-2]
    for record in (core_play.Nets, core_play.Seats, core_play.Deals, core_play.Buffers,
                   core_play.NetMemory):
        assert len(record._fields) <= 9 and record.__doc__
