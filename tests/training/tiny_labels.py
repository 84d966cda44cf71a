"""The tiny labelling the search-label tests share (test_labels.py, test_labels_v1.py): the
shipped stacking net, two formats of four deals in blocks of two, a 2-world 5-tick search."""
from pathlib import Path

NET = "agents/learned/models/learned_stacking.npz"
TINY = dict(formats=["2teams", "4teams"], deals=4, block=2, seed=3,
            search="search:worlds=2,horizon=5", stride=2)


def folder_bytes(folder) -> dict:
    """{file name: its bytes} of a labels folder."""
    return {p.name: p.read_bytes() for p in sorted(Path(folder).iterdir())}
