"""train/override_table.py (try 10): the move-pair table keeps what its rule says, clusters
its standard error by deal, and the override plays a kept pair only where it may."""
import numpy as np
import pytest

from nertz_env.actions import N_ACTIONS, WAIT
from train.override_table import override_agent, pair_table

NET = "agents/learned/models/learned_stacking.npz"


def labels(rows):
    """rows: (deal, net move, {candidate: gain over the net's move}); every candidate legal,
    se 0.5 each."""
    K = 1 + max(len(c) for _, _, c in rows)
    n = len(rows)
    cand = np.full((n, K), -1, np.int16)
    g = np.zeros((n, K), np.float32)
    se = np.full((n, K), 0.5, np.float32)
    legal = np.zeros((n, N_ACTIONS), bool)
    for r, (_, b, cs) in enumerate(rows):
        cand[r, 0] = b
        legal[r, b] = True
        for j, (c, v) in enumerate(cs.items(), 1):
            cand[r, j], g[r, j] = c, v
            legal[r, c] = True
    return {"candidates": cand, "gains": g, "se": se, "legal": np.packbits(legal, axis=1),
            "searched": np.ones(n, bool), "net_move": np.array([b for _, b, _ in rows], np.int16),
            "deal": np.array([d for d, _, _ in rows], np.int64)}


def test_a_pair_is_kept_by_count_mean_and_its_deal_clustered_error():
    pytest.importorskip("torch")           # pair_table reads gains from distill.py (torch)
    rng = np.random.default_rng(0)
    rows = [(d, 3, {5: 1.0 + 0.1 * rng.standard_normal(), 6: -0.2 + 0.1 * rng.standard_normal()})
            for d in range(30)]
    rows += [(100 + d, 4, {7: 2.0}) for d in range(10)]            # too few: 10 < 20
    # (8, 9): +3 on 25 rows of one deal, -1 on 25 rows of 25 other deals: mean +1, but the
    # deal is the unit: one deal's rows are one draw, so the clustered error is large
    rows += [(500, 9, {8: 3.0})] * 25 + [(600 + d, 9, {8: -1.0}) for d in range(25)]
    t = pair_table(labels(rows), "plain", 1.0, 0.0, 20, 0.5)
    assert set(t) == {(5, 3)}
    assert t[(5, 3)] == pytest.approx(1.0, abs=0.1)
    assert (8, 9) in pair_table(labels(rows), "plain", 0.0, 0.0, 20, 0.5)   # mean alone: kept
    assert set(pair_table(labels(rows), "plain", 1.0, 0.0, 5, 0.5)) == {(5, 3), (7, 4)}
    assert pair_table(labels(rows), "plain", 1.0, 1.5, 5, 0.5) == {(7, 4): pytest.approx(2.0)}


def test_the_override_plays_the_best_kept_pair_only_where_it_is_legal():
    agent = override_agent(NET, {(5, 3): 0.5, (6, 3): 0.9, (7, 4): 1.0, (WAIT, 8): 2.0})
    legal = np.zeros((5, N_ACTIONS), bool)
    moves = np.array([3, 3, 4, 8, 10])
    legal[0, [3, 5, 6]] = True          # both kept pairs: the larger mean (6)
    legal[1, [3, 5]] = True             # 6 is not legal: 5
    legal[2, [4]] = True                # 7 not legal: the net's move
    legal[3, [8, WAIT]] = True          # Wait only where the net waits: the net's move
    legal[4, [10, 5, 6]] = True         # no pair kept for the net's move 10
    agent.net_moves = lambda view: (None, legal, moves.copy())
    out = agent.act_view(None)
    assert out.tolist() == [6, 5, 4, 8, 10]
    assert (agent.fires, agent.decisions) == (2, 5)


def test_a_used_distill_folder_is_refused_before_any_work(tmp_path, monkeypatch, capsys):
    import train.override_table as ot
    out = tmp_path / "used"
    out.mkdir()
    (out / "mine.txt").write_text("not nertz's")
    monkeypatch.setattr(ot, "table_of", lambda *a: pytest.fail("work began"))
    assert ot.main(["--distill", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "used" in err
    assert sorted(p.name for p in out.iterdir()) == ["mine.txt"]


def test_distilling_moves_the_net_toward_the_override(tmp_path):
    pytest.importorskip("torch")
    import argparse

    import train.override_table as ot
    from agents.registry import make_agent
    from nertz_env.files import json_loads_bounded
    # every other move the net may play kept at the same mean: the override plays the first
    # legal one that is not the net's (nor Wait), a target at every decision it sees
    table = {(c, b): 1.0 for c in range(N_ACTIONS) for b in range(N_ACTIONS)
             if c != b and c != WAIT}
    a = argparse.Namespace(net=NET, record_deals=2, record_seed=3, stride=4, epochs=4,
                           lr=1e-2, kl=1.0, seed=0, weighting="plain", z=1.0, threshold=0.0)
    figs = ot.distill_override(a, {"4teams": table}, tmp_path)
    assert figs["targets"] > 100 and figs["held_rows"] > 0
    assert figs["before"]["target_agreement"] == 0.0         # the start never plays a target
    assert figs["epochs"][-1]["holdout"]["target_agreement"] > 0.2
    agent = make_agent(f"ppo:{tmp_path / 'model.npz'}")
    assert agent is not None
    info = json_loads_bounded((tmp_path / "distill.json").read_text())
    assert info["figures"]["targets"] == figs["targets"]


def test_pooled_folders_keep_their_deals_apart():
    pytest.importorskip("torch")           # pair_table reads gains from distill.py (torch)
    from train.override_table import DEAL_SPAN, pooled
    rng = np.random.default_rng(1)
    one = [(d, 3, {5: 1.0 + rng.standard_normal(), 6: 0.2}) for d in range(20)]
    two = [(d, 3, {5: 1.0 + rng.standard_normal()}) for d in range(20)]     # fewer columns
    lab = pooled([labels(one), labels(two)])
    assert np.unique(lab["deal"]).size == 40 and lab["candidates"].shape[1] == 3
    by_hand = labels(one + [(DEAL_SPAN + d, b, c) for d, b, c in two])
    for key in ("plain", "evidence"):
        assert pair_table(lab, key, 1.0, 0.0, 5, 0.5) == pair_table(by_hand, key, 1.0, 0.0, 5,
                                                                    0.5)


def test_a_bad_labels_folder_is_one_line_without_distill(tmp_path, capsys):
    """Without --distill, a labels folder that is not one is exit 2 in one line (was a
    traceback: table_of read the labels outside any guard)."""
    import train.override_table as ot
    assert ot.main(["--labels", str(tmp_path / "absent")]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "absent" in err


def test_the_yardstick_is_the_stacking_member_not_plain_learned():
    """Every try-10 figure is 'minus learned' as it was when measured (the stacking member);
    plain `learned` plays a distilled net at 4+ teams since it shipped, which would judge
    the override against its own distillation."""
    import train.override_table as ot
    from agents.registry import make_agent
    assert ot.LEARNED == "learned:model=stacking"
    src = open(ot.__file__).read()
    assert '"learned"' not in src
    bot = make_agent(ot.LEARNED)
    assert bot is not None


def test_a_bad_baseline_is_one_line_before_any_work(monkeypatch, capsys):
    """--baseline (a later generation's yardstick, ppo:NET) is checked before the labels are
    read: a bad spec is exit 2 in one line naming it."""
    import train.override_table as ot
    monkeypatch.setattr(ot, "table_of", lambda *a: pytest.fail("work began"))
    assert ot.main(["--baseline", "heuristic:style=nope"]) == 2
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "nope" in err


def test_the_judge_plays_the_baseline_it_is_given(monkeypatch):
    """judge() plays --baseline as the 2-team opponent and in the 4-team baseline arm."""
    import numpy as np

    import agents.arena.tournament as tournament
    import train.override_table as ot
    from agents.stats import estimators
    seen = []

    def fake(lineup, teams, deals, seed, **kw):
        seen.append((teams, list(lineup)))
        return type("R", (), {"records": teams})()
    monkeypatch.setattr(tournament, "run_tournament", fake)
    monkeypatch.setattr(estimators, "deal_means", lambda rec, t: np.zeros((4, rec)))
    ot.judge("X", "2teams", 4, 1, "ppo:NET")
    ot.judge("X", "4teams", 4, 1, "ppo:NET")
    rb = ot.RIVER_BUILDER
    assert seen == [(2, ["X", "ppo:NET"]), (4, ["X", rb, rb, rb]), (4, ["ppo:NET", rb, rb, rb])]
