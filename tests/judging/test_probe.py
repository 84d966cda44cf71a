"""agents/judging/probe.py and `nertz probe`: positions from readable layouts land in the right
class and moves in the right response; the ratio interval over deals covers at its nominal
rate (simulated); an agent made to play waste>lake (the never-withhold constraint) is probed
as doing so, a free one is not; the command prints the table and writes its files."""
from __future__ import annotations

import contextlib
import io
import json

import numpy as np

from agents.judging.probe import CLASSES, RESPONSES, classify, probe, ratio_ci
from nertz_env import Table
from nertz_env.config import RulesConfig

OTHER = {"nertz": ["2D", "KC"], "river": [["9D"], ["8S"], ["7H"], ["6C"]], "stream": ["3D"],
         "waste": 0}


def _classes(layout, moves):
    """{move: (classes, response)} of seat 0 in a layout, one row per move."""
    table = Table.from_layout(layout)
    obs = np.repeat(table.engine.observe(0)[:, 0], len(moves), axis=0)
    masks = np.repeat(table.action_mask(0)[None], len(moves), axis=0).astype(np.int8)
    acts = np.array([table.encode(m) for m in moves], np.int64)
    cls = np.zeros((len(moves), len(CLASSES)), np.bool_)
    resp = np.zeros(len(moves), np.int64)
    classify(obs, masks, acts, cls, resp)
    return {m: ({CLASSES[c] for c in np.flatnonzero(cls[i])}, RESPONSES[resp[i]])
            for i, m in enumerate(moves)}


def test_classes_and_responses_from_layouts():
    # 5H on the waste, the Lake takes it (AH..4H), the Nertz top 4S builds on it, 6C takes it
    keep = {"lake": [["AH", "2H", "3H", "4H"]],
            "teams": [{"nertz": ["9D", "4S"], "river": [["6C"], ["KD"], ["QS"], ["JH"]],
                       "stream": ["5H", "8D"], "waste": 1}, OTHER]}
    got = _classes(keep, ["waste>lake", "waste>river0", "flip", "wait", "river3>lake"])
    assert got["waste>lake"] == ({"stream-lake", "stream-lake-keep"}, "lake")
    assert got["waste>river0"][1] == "river" and got["flip"][1] == "flip"
    assert got["wait"][1] == "wait" and got["river3>lake"][1] == "other"
    keep["teams"][0]["river"][0] = ["KH"]                 # no River home for 5H: fits
    assert _classes(keep, ["flip"])["flip"] == ({"stream-lake", "stream-lake-fits"}, "flip")
    keep["teams"][0]["nertz"] = ["9D", "4D"]              # 4D does not build on 5H
    assert _classes(keep, ["flip"])["flip"] == ({"stream-lake"}, "flip")
    # no Stream card for the Lake (5H, the Lake has no hearts), a River top (3C) for it
    river = {"lake": [["AC", "2C"]],
             "teams": [{"nertz": ["9D", "4S"], "river": [["3C"], ["KD"], ["QS"], ["JH"]],
                        "stream": ["5H", "8D"], "waste": 1}, OTHER]}
    got = _classes(river, ["river0>lake", "flip"])
    assert got["river0>lake"] == ({"river-lake"}, "lake")
    assert got["flip"] == ({"river-lake"}, "other")


def test_the_ratio_interval_over_deals_covers_at_its_nominal_rate():
    """Deals of 1..20 decisions with their own rates (a Beta around 0.3, independent of the
    decision count): the 95% interval of the pooled rate holds the true one 93-97% of the time
    over 2,000 simulated studies of 60 deals (a binomial interval over the decisions, which
    ignores the deal, would not: it covers about 85% here)."""
    rng = np.random.default_rng(0)
    hits, naive = 0, 0
    sims, D, truth = 2000, 60, 0.3
    for _ in range(sims):
        n = rng.integers(1, 21, D)
        p = rng.beta(1.5, 3.5, D)                      # mean 0.3
        k = rng.binomial(n, p)
        rate, lo, hi = ratio_ci(k, n)
        hits += lo <= truth <= hi
        se = np.sqrt(rate * (1 - rate) / n.sum())
        naive += rate - 1.96 * se <= truth <= rate + 1.96 * se
    assert 0.93 <= hits / sims <= 0.97, hits / sims
    assert naive / sims < 0.9


def _tiny_model(tmp_path):
    from agents.learned.weights import FORMAT, VERSION, array_shapes, save_weights
    meta = {"format": FORMAT, "version": VERSION, "observation_size": 791, "action_size": 322,
            "architecture": {"type": "mlp", "hidden": [16], "activation": "tanh",
                             "action_net": "masked"}}
    meta["arrays"] = {k: list(v) for k, v in array_shapes(meta).items()}
    rng = np.random.default_rng(1)
    arrays = {k: rng.normal(size=v).astype(np.float32) for k, v in array_shapes(meta).items()}
    return save_weights(tmp_path / "tiny", meta, arrays)[0]


def test_probe_sees_a_constrained_agent_take_the_stream_card(tmp_path):
    path = _tiny_model(tmp_path)
    res = probe({"free": f"ppo:{path}", "forced": f"ppo:{path},constraint=never-withhold"},
                RulesConfig(num_teams=2, max_ticks=400), deals=30, seed=3)
    rows = {(r["agent"], r["class"]): r for r in res.rows}
    forced, free = rows["forced", "stream-lake"], rows["free", "stream-lake"]
    assert forced["decisions"] >= 30 and free["decisions"] >= 30
    assert forced["responses"]["lake"]["rate"] >= 0.95          # the rest: Call (other)
    for name in ("river", "flip", "wait"):
        assert forced["responses"][name]["rate"] == 0.0
    assert free["responses"]["lake"]["rate"] < 0.8
    for r in res.rows:                   # each row's responses are its decisions, shared out
        if r["decisions"] and r["class"] != "river-lake":
            assert abs(sum(x["rate"] for x in r["responses"].values()) - 1) < 1e-9
        lake = r["responses"]["lake"]
        assert r["deals"] < 2 or 0.0 <= lake["low"] <= lake["rate"] <= lake["high"] <= 1.0
        assert (lake["rate"] is None) == (r["decisions"] == 0)
    again = probe({"forced": f"ppo:{path},constraint=never-withhold"},
                  RulesConfig(num_teams=2, max_ticks=400), deals=30, seed=3)
    assert again.rows == [r for r in res.rows if r["agent"] == "forced"]   # same deals, seed


def test_the_probe_command(tmp_path):
    from agents.cli import main
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["probe", "greedy", "heuristic", "--deals", "10", "--max-ticks", "300",
                     "--out", str(tmp_path / "p")]) == 0
    text = out.getvalue()
    assert "| greedy | stream-lake |" in text and "| heuristic | river-lake |" in text
    data = json.loads((tmp_path / "p" / "probe.json").read_text())
    assert len(data["rows"]) == 2 * len(CLASSES) and data["deals"] == 10
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        assert main(["probe", "nosuchbot", "--deals", "10"]) == 2
    assert "nosuchbot" in err.getvalue()
