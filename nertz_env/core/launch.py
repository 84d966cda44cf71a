"""launch_parallel: the one door to numba's prange kernels, safe from several Python threads.

Engines may be stepped from several Python threads at once, each its own engine: every prange
kernel is launched through `launch_parallel`, which holds a process-wide lock while the layer
in use is numba's "workqueue" (it aborts the process when two threads enter it at once) and
launches freely under the thread-safe layers (omp, tbb). The threading layer itself is left
to numba (or NUMBA_THREADING_LAYER). Imports only numba.
"""
from __future__ import annotations

import threading

import numba

_LAUNCH_LOCK = threading.Lock()
# None: not known yet (no parallel launch in this process); then True only under workqueue
_serialize_launches = None


def launch_parallel(kernel, *args):
    """kernel(*args) for a prange (parallel=True) kernel, safe from any number of threads:
    serialized by a process-wide lock while numba's threading layer is "workqueue" (or not
    yet known: the first launch picks the layer), unlocked under omp and tbb."""
    global _serialize_launches
    if _serialize_launches is False:
        return kernel(*args)
    with _LAUNCH_LOCK:
        out = kernel(*args)
        if _serialize_launches is None:
            try:
                _serialize_launches = numba.threading_layer() == "workqueue"
            except ValueError:            # no layer launched (NUMBA_DISABLE_JIT): stay locked
                pass
    return out
