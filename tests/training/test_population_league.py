"""train/population_league.py: each main continues its own last model with the *other* mains'
last models in its league, keeps its own width and seeds, side by side or one at a time to
the same weights; a finished leg is skipped on a rerun; the judgement plays the matches it
names."""
import json

import numpy as np
import pytest

pytest.importorskip("torch")
pytest.importorskip("stable_baselines3")

from agents.training.lean_ppo import lean_config, train_run  # noqa: E402
from train import population_league as pl  # noqa: E402
from train.common import BOTS  # noqa: E402

TINY = {"num_envs": 8, "n_steps": 16, "batch_size": 64, "n_epochs": 1, "max_ticks": 100,
        "torch_threads": 1}
WIDE = "agents/learned/models/learned.npz"                         # 128 x 128


def _config(run):
    return json.loads((run / "config.json").read_text())["config"]


@pytest.fixture(scope="module")
def narrow(tmp_path_factory):
    """A 16 x 16 model with its critic (a fresh tiny run)."""
    out = tmp_path_factory.mktemp("narrow")
    return str(train_run(lean_config(out=str(out), net_arch=[16, 16], timesteps=128, seed=3,
                                     **TINY), log=lambda line: None))


def test_the_mains_chain_each_against_the_others(tmp_path, narrow):
    starts = {"A": WIDE, "B": narrow}
    chain = pl.run_population(tmp_path, starts, legs=2, steps=128, seed=20, recipe=TINY,
                              log=lambda line: None)
    assert chain == {n: [starts[n]] + [str(tmp_path / f"{n}_{k}" / "final.npz") for k in (1, 2)]
                     for n in "AB"}
    a1, a2, b1, b2 = (_config(tmp_path / f) for f in ("A_1", "A_2", "B_1", "B_2"))
    assert a1["init"] == WIDE and a1["opponents"] == BOTS + [f"ppo:{narrow}"]
    assert b1["init"] == narrow and b1["opponents"] == BOTS + [f"ppo:{WIDE}"]
    assert a2["init"] == chain["A"][1] and a2["opponents"] == BOTS + [f"ppo:{chain['B'][1]}"]
    assert b2["init"] == chain["B"][1] and b2["opponents"] == BOTS + [f"ppo:{chain['A'][1]}"]
    assert [c["seed"] for c in (a1, a2, b1, b2)] == [21, 22, 31, 32]
    assert [c["net_arch"] for c in (a1, b2)] == [[128, 128], [16, 16]]
    assert pl.width(chain["B"][2]) == [16, 16]
    before = {p: p.stat().st_mtime_ns for p in tmp_path.glob("*/final.npz")}
    assert pl.run_population(tmp_path, starts, legs=2, steps=128, seed=20, recipe=TINY,
                             log=lambda line: None) == chain          # done: skipped
    assert {p: p.stat().st_mtime_ns for p in tmp_path.glob("*/final.npz")} == before

    side = tmp_path / "side_by_side"                          # the same legs as children
    again = pl.run_population(side, starts, legs=1, steps=128, seed=20, recipe=TINY,
                              parallel=True)
    for n in "AB":
        x, y = np.load(chain[n][1]), np.load(again[n][1])
        assert sorted(x.files) == sorted(y.files)
        assert all(np.array_equal(x[k], y[k]) for k in x.files)

    rows = pl.judge({"A": chain["A"][:2], "B": chain["B"][:2]}, deals=4, seed=3)
    assert [r["match"] for r in rows] == ["A_1 vs A's start", "B_1 vs B's start",
                                          "A_1 vs B_1", "A's start vs B's start"]
    assert (rows[2]["a"], rows[2]["b"]) == (chain["A"][1], chain["B"][1])
    assert (rows[3]["a"], rows[3]["b"]) == (WIDE, narrow)
    assert all(r["ci_low"] <= r["diff"] <= r["ci_high"] for r in rows)
    assert all(0.0 <= r["agreement"][t] <= 1.0 for r in rows for t in (2, 4))


def test_bad_starts_are_refused(capsys):
    for argv, says in [(["--out", "x", "--start", f"A={WIDE}"], "two or more"),
                       (["--out", "x", "--start", f"A={WIDE}", "--start", f"A={WIDE}"],
                        "a new name"),
                       (["--out", "x", "--start", f"A={WIDE}", "--start", "B=no/such.npz"],
                        "no such model file")]:
        assert pl.main(argv) == 2
        err = capsys.readouterr().err
        assert says in err and len(err.splitlines()) == 1
