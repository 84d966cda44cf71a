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


@pytest.fixture
def bars(monkeypatch):
    """Every tqdm bar the run makes, kept after it closes (tqdm.auto's tqdm replaced by a
    subclass that keeps each)."""
    tqdm_auto = pytest.importorskip("tqdm.auto")
    made = []

    class Kept(tqdm_auto.tqdm):
        def __init__(self, *a, **kw):
            super().__init__(*a, **kw)
            made.append(self)

    monkeypatch.setattr(tqdm_auto, "tqdm", Kept)
    return made
