"""The expert-iteration loop (train/expert_iteration.py): a tiny generation end to end, --resume
skipping what is done and refusing other options, bad options refused before any work."""
from __future__ import annotations

import json

import pytest

pytest.importorskip("torch")

from train.expert_iteration import main  # noqa: E402

TINY = ["--generations", "2", "--formats", "2teams:4", "--search", "search:worlds=2,horizon=5",
        "--block", "2", "--epochs", "1", "--batch", "256", "--judge-deals", "4", "--seed", "1"]


def test_a_tiny_generation_then_resume(tmp_path, one_torch_thread, capsys):
    out = tmp_path / "ei"
    assert main(["--out", str(out)] + TINY) == 0
    g1 = out / "gen1"
    for f in ("labels/2teams/labels.json", "model.npz", "model.json", "distill.json",
              "judge.json"):
        assert (g1 / f).is_file(), f
    judge = json.loads((g1 / "judge.json").read_text())
    assert judge["deals"] == 4 and judge["a"].startswith("ppo:")
    rec = json.loads((out / "expert_iteration.json").read_text())
    assert rec["formats"] == "2teams:4" and rec["judge_deals"] == 4
    stamp = (g1 / "model.npz").stat().st_mtime_ns
    assert main(["--out", str(out), "--resume"] + TINY) == 0          # nothing redone
    assert (g1 / "model.npz").stat().st_mtime_ns == stamp
    capsys.readouterr()
    assert main(["--out", str(out), "--resume"] + TINY + ["--lr", "0.01"]) == 2
    assert "--lr was 0.0001 in this run, now 0.01" in capsys.readouterr().err
    assert main(["--out", str(out)] + TINY) == 2                     # not without --resume
    assert "--resume" in capsys.readouterr().err
    other = tmp_path / "other"                  # the same labels, another distillation
    assert main(["--out", str(other), "--labels-from", str(out)] + TINY + ["--lr", "3e-4"]) == 0
    assert "labels copied from" in capsys.readouterr().out
    a, b = (d / "gen1" / "labels" / "2teams" for d in (out, other))
    assert sorted(p.name for p in a.iterdir()) == sorted(p.name for p in b.iterdir())
    assert all((a / p.name).read_bytes() == p.read_bytes() for p in b.iterdir())
    assert (other / "gen1" / "model.npz").read_bytes() != (g1 / "model.npz").read_bytes()
    third = tmp_path / "third"                  # other labels (another seed): labelled anew
    assert main(["--out", str(third), "--labels-from", str(out)] + TINY[:-1] + ["2"]) == 0
    assert "holds other labels" in capsys.readouterr().out


def test_bad_options_refused_before_any_work(tmp_path, capsys):
    out = tmp_path / "never"
    assert main(["--out", str(out)] + TINY + ["--formats", "2teams:4,5teams:3"]) == 2
    assert "--formats item '5teams:3'" in capsys.readouterr().err
    assert main(["--out", str(out)] + TINY + ["--init", "nope.npz"]) == 2
    assert main(["--out", str(out)] + TINY + ["--kl", "-1"]) == 2
    assert not out.exists()


def test_confirming_labels_are_written_and_used(tmp_path, one_torch_thread, capsys):
    out = tmp_path / "c"
    args = TINY[:1] + ["1"] + TINY[2:]                    # --generations 1
    assert main(["--out", str(out), "--confirm", "search:worlds=2,horizon=5,seed=9"] + args) == 0
    labels = out / "gen1" / "labels"
    assert (labels / "2teams-confirm" / "labels.json").is_file()
    info = json.loads((labels / "2teams-confirm" / "labels.json").read_text())
    assert info["search"] == "search:worlds=2,horizon=5,seed=9"
    from agents.training.distill import targets
    from agents.training.labels import read_labels
    lab, conf = (read_labels(labels / n)[1] for n in ("2teams", "2teams-confirm"))
    train = lab["deal"] % 10 != 0
    confirmed = int((targets(lab, confirm=conf)[train] >= 0).sum())
    assert int((targets(lab)[train] >= 0).sum()) > confirmed > 0
    d = json.loads((out / "gen1" / "distill.json").read_text())
    assert d["figures"]["train_targets"] == confirmed           # distilled on the confirmed


def test_the_ceiling_plays_search_where_it_has_evidence(tmp_path, one_torch_thread):
    from train.expert_iteration import ceiling
    net = "agents/learned/models/learned_stacking.npz"
    spec = "search:worlds=2,horizon=5"
    never = ceiling(net, net, spec, float("inf"), 3, 5)      # no evidence is that strong
    assert never["diff"] == 0.0 and never["ci_low"] == never["ci_high"] == 0.0
    always = ceiling(net, net, spec, 0.0, 3, 5)              # search's move wherever better
    assert always["diff"] != 0.0
    out = tmp_path / "ceil"
    args = TINY[:1] + ["1"] + TINY[2:] + ["--ceiling-deals", "2"]
    assert main(["--out", str(out)] + args) == 0
    row = json.loads((out / "gen1" / "ceiling.json").read_text())
    assert row["deals"] == 2 and row["a"].startswith("ceiling:")
