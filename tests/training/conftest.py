"""Fixtures of tests/training (the tiny training run itself is tiny_runs.py)."""
import pytest


@pytest.fixture
def one_torch_thread():
    """torch on one thread for the test (tiny nets gain nothing from more; numba shares the cores)."""
    torch = pytest.importorskip("torch")
    old = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(old)
