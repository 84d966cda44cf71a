"""The numba rules core: batched Nertz state in typed arrays and the kernels that play it.

Must never import gymnasium, pettingzoo or anything above it in nertz_env (only numpy, numba,
nertz_env.encoding and nertz_env.actions). The array layout is documented in nertz_env/encoding.py;
the decisions docs/rules.md leaves open are in docs/engine_contract.md (D1-D21).
"""
from . import kernel_cache as _kernel_cache

_kernel_cache.install()       # before any kernel of nertz_env or agents is decorated
