"""How the prange kernels split B tables among threads: k = n_chunks(B) chunks of
consecutive tables, chunk c covering chunk_bounds(c, k, B). One definition for batch.py and
observe.py."""
from __future__ import annotations

from numba import njit

MAX_CHUNKS = 64   # enough for 16 threads x 4; a constant so the kernels can be cached


@njit(cache=True, error_model="numpy", inline="always")
def n_chunks(n_tables):
    return min(n_tables, MAX_CHUNKS)


@njit(cache=True, error_model="numpy", inline="always")
def chunk_bounds(c, k, n_tables):
    return c * n_tables // k, (c + 1) * n_tables // k
