"""TrainConfig in parts (#41 item 1): six part dataclasses behind one config, flat on disk and
on the command line as before (config.json the same bytes), made whole by three separate
steps (normalise, check, load), and the training modules importing their extra at the top
(no class factory, no module __getattr__ but the package's declared lazy names)."""
import ast
import copy
import dataclasses
import hashlib
import json
import subprocess
import sys
from pathlib import Path

import pytest

from agents.cli import main as nertz_main
from agents.training.config import (
    FLAT,
    OPTIONAL,
    PARTS,
    EvalPart,
    LeaguePart,
    PPOPart,
    RunPart,
    TablesPart,
    TrainConfig,
    WarmStartPart,
    check,
    check_config,
    load,
    normalise,
)
from nertz_env.files import write_json

ROOT = Path(__file__).resolve().parents[2]
TRAINING = ROOT / "agents" / "training"

# config.json's keys in the order every run so far wrote them (runs, checkpoints, recipes)
ORDER = ("out seed timesteps num_envs teams max_ticks reward learner formats init shift_cost "
         "critic_warmup constraint partner opponents snapshot_every max_snapshots "
         "priority_temperature priority_uniform teacher bc_rows bc_epochs bc_batch_size "
         "bc_learning_rate bc_holdout bc_value n_steps batch_size n_epochs learning_rate gamma "
         "gae_lambda clip_range ent_coef vf_coef net_arch checkpoint_every eval_every "
         "eval_deals eval_against eval_league_deals eval_seed tensorboard progress "
         "torch_threads device resume").split()

# sha256 (first 32 hex) of the files these configs wrote before TrainConfig had parts
# (commit 25c76fc): SB3's config.json / a checkpoint's step_N.json head (run_info), and the
# lean PPO's config.json ({"config": ...})
GOLDEN = {
    "defaults": (dict(out="runs/x", torch_threads=2),
                 "869ff4c9d8137bd63039fcd76cde7c5c", "d16ac7e68aeb06acd96d5de3e21c0e68"),
    "sb3": (dict(out="runs/t1", learner="sb3", timesteps=2_000_000, teams=4, max_ticks=500,
                 opponents=("greedy", "random"), net_arch=(64, 64), constraint="none",
                 snapshot_every=1000),
            "cb5529f333abee8f5fd3f83011ae0844", "3c9fff8a3c74a86ce6af898b3ee4d078"),
    "lean_formats": (dict(out="runs/g", formats="rulebook", bc_rows=0, n_epochs=4,
                          num_envs=184, torch_threads=1),
                     "ecb38439f07f11a4388c358aff0558a7", "53772514cab375e3cc2e4a90d9c3b8e3"),
    "lean_list_formats": (dict(out="runs/h", formats=[{"num_teams": 3, "seat": 1}],
                               num_envs=8, bc_rows=64, torch_threads=1, shift_cost=0.5),
                          "a2856136728808a8a7bbd6800aec6270",
                          "2eb57308a1854a239afb7c914f2355bf"),
}


def _sha(path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:32]


@pytest.mark.parametrize("case", sorted(GOLDEN))
def test_config_json_is_the_same_bytes_as_before_the_parts(case, tmp_path):
    pytest.importorskip("torch")
    from agents.training.checkpoints import run_info
    kw, sb3_sha, lean_sha = GOLDEN[case]
    cfg = TrainConfig(**kw)
    write_json(tmp_path / "run_info.json", run_info(cfg))
    write_json(tmp_path / "lean.json", {"config": cfg.to_flat()})   # lean_ppo's config.json
    assert (_sha(tmp_path / "run_info.json"), _sha(tmp_path / "lean.json")) == (sb3_sha, lean_sha)


def test_the_flat_spelling_keeps_its_order_and_names_every_field_once():
    assert list(FLAT) == ORDER
    assert list(TrainConfig(out="x").to_flat()) == ORDER
    in_parts = [f.name for _, part in PARTS for f in dataclasses.fields(part)]
    # and the fields added since (OPTIONAL), which config.json holds only where they say
    # what a run before them could not (observation='v1')
    assert sorted(in_parts) == sorted([*ORDER, *OPTIONAL]) and len(in_parts) == len(set(in_parts))


def test_parts_and_flat_fields_make_the_same_config():
    by_parts = TrainConfig(run=RunPart(out="r", learner="sb3", timesteps=5),
                           tables=TablesPart(teams=3), league=LeaguePart(opponents=["greedy"]),
                           warm_start=WarmStartPart(bc_rows=0), ppo=PPOPart(n_steps=16),
                           evaluation=EvalPart(eval_every=0))
    flat = TrainConfig(out="r", learner="sb3", timesteps=5, teams=3, opponents=["greedy"],
                       bc_rows=0, n_steps=16, eval_every=0)
    assert by_parts == flat == TrainConfig.from_flat(**flat.to_flat())
    assert flat.ppo.n_steps == flat.n_steps == 16 and flat.tables.teams == flat.teams == 3
    assert flat.ppo.n_epochs == 4 and flat.run.torch_threads == 1     # SB3's defaults filled
    moved = dataclasses.replace(flat, seed=7)                          # a flat name over parts
    assert moved.run.seed == 7 and flat.run.seed == 0
    twin = copy.copy(flat)
    twin.seed = 9                                                      # the copy's own part
    assert twin.run.seed == 9 and flat.run.seed == 0
    with pytest.raises(TypeError, match="unexpected keyword argument 'num_env'"):
        TrainConfig(num_env=8)
    with pytest.raises(TypeError, match="ppo must be a PPOPart"):
        TrainConfig(ppo=RunPart())


def test_normalise_returns_a_new_config_and_leaves_the_old_one_as_given():
    raw = TrainConfig.unchecked(learner="sb3", constraint=None, opponents=("greedy",),
                                net_arch=(64, 32), formats=())
    before = copy.deepcopy(raw.to_flat())
    whole = normalise(raw)
    assert raw.to_flat() == before and raw.ppo.n_epochs is None     # untouched
    assert whole is not raw and whole.ppo is not raw.ppo
    assert whole.ppo.n_epochs == 4 and whole.ppo.net_arch == [64, 32]
    assert whole.league.opponents == ["greedy"]
    lean = normalise(TrainConfig.unchecked(constraint="none"))
    assert lean.ppo.n_epochs == 2 and lean.tables.constraint is None


@pytest.mark.parametrize("field, value, words", [
    ("n_epochs", 0, "n_epochs=0 must be an int >= 1"),
    ("gamma", 1.5, "gamma=1.5 must be a finite number"),
    ("teacher", "random", "teacher='random' must be greedy or a heuristic"),
    ("learner", "sb4", "learner='sb4' must be one of sb3, lean"),
])
def test_check_is_one_line_naming_the_field_and_changes_nothing(field, value, words):
    cfg = normalise(TrainConfig.unchecked(**{field: value}))
    before = copy.deepcopy(cfg.to_flat())
    with pytest.raises(ValueError) as err:
        check(cfg)
    assert str(err.value).startswith(words) and "\n" not in str(err.value)
    assert cfg.to_flat() == before
    with pytest.raises(ValueError, match=words.split(" must")[0]):
        TrainConfig(**{field: value})                      # the constructor checks too


def test_check_reads_no_file_and_load_reads_the_ones_the_config_names(tmp_path):
    """A missing model file is load's to find: check passes (it reads nothing), load names
    the entry, and the constructor (check_config) refuses it as before."""
    missing = tmp_path / "gone.zip"
    cfg = normalise(TrainConfig.unchecked(opponents=[f"snapshot:{missing}"]))
    check(cfg)
    with pytest.raises(ValueError, match=r"opponents\[0\]=.*snapshot"):
        load(cfg)
    with pytest.raises(ValueError, match=r"opponents\[0\]"):
        check_config(cfg)
    entries = load(normalise(TrainConfig.unchecked(opponents=["greedy", "random"])))
    assert [e.name for e in entries[2]] == ["greedy", "random"]


def test_check_config_gives_the_whole_config_and_keeps_the_one_given():
    raw = TrainConfig.unchecked(learner="sb3")
    whole = check_config(raw)
    assert raw.ppo.n_epochs is None and whole.ppo.n_epochs == 4


# ---------------------------------------------------------------------- imports and extras

def _tree(name):
    return ast.parse((TRAINING / name).read_text())


def test_no_class_factory_and_no_module_getattr_in_the_training_modules():
    """Every training module's classes are made at its top (no type(...) call making one, no
    class inside a function) and no module of the package, its __init__ included, has a
    module __getattr__ (the package holds the torch-free names; a run's come from their module).
    The lean PPO's modules too: their autograd Functions and Linear subclass are made at the
    top of lean_policy.py, no longer inside sparse_first_layer() and masked_head_fn()."""
    paths = sorted(TRAINING.glob("*.py"))
    assert {"lean_policy.py", "lean_ppo.py"} <= {p.name for p in paths}     # none skipped
    for path in paths:
        tree = _tree(path.name)
        assert not any(isinstance(n, ast.FunctionDef) and n.name == "__getattr__"
                       for n in tree.body), path.name
        for fn in ast.walk(tree):
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                assert not any(isinstance(n, ast.ClassDef) for n in ast.walk(fn)), \
                    f"{path.name}: a class made inside {fn.name}()"
        for call in ast.walk(tree):
            if isinstance(call, ast.Call) and getattr(call.func, "id", None) == "type":
                assert len(call.args) != 3, f"{path.name}: type(name, bases, dict)"
    import agents.training as training
    assert all(hasattr(training, name) for name in training.__all__)


def test_the_negative_control_of_the_factory_check_sees_a_factory():
    tree = ast.parse("def make():\n    class X:\n        pass\n    return type('Y', (X,), {})\n")
    fn = tree.body[0]
    assert any(isinstance(n, ast.ClassDef) for n in ast.walk(fn))
    assert any(isinstance(c, ast.Call) and getattr(c.func, "id", None) == "type"
               and len(c.args) == 3 for c in ast.walk(tree))


@pytest.mark.parametrize("module", ["league", "run", "checkpoints", "imitation", "lean_policy",
                                    "lean_ppo"])
def test_a_torch_module_without_the_extra_is_one_line_naming_it(module):
    code = ("import sys\nsys.modules['torch'] = None\nsys.modules['stable_baselines3'] = None\n"
            "import agents.training, agents.training.config, agents.training.recipe\n"
            "try:\n"
            f"    import agents.training.{module}\n"
            "except ValueError as err:\n"
            "    print('REFUSED', err)\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    line = out.stdout.strip()
    assert line.startswith("REFUSED ") and "\n" not in line and "[train]" in line, line


def test_nertz_train_without_the_extra_is_one_line_and_writes_nothing(monkeypatch, tmp_path,
                                                                      capsys):
    """The default learner's run imported torch inside its loop: without the extra it was a
    ModuleNotFoundError traceback (exit 1). Now it is the install line, exit 2, before the
    run folder or the config line."""
    monkeypatch.setitem(sys.modules, "torch", None)          # `import torch` fails now
    for argv in (["train", "--out", str(tmp_path / "a"), "--timesteps", "10"],
                 ["train", "--learner", "sb3", "--out", str(tmp_path / "b")],
                 ["train", "--resume", str(tmp_path / "c" / "checkpoints" / "step_1.zip")]):
        assert nertz_main(argv) == 2
        out, err = capsys.readouterr()
        assert out == "" and err.count("\n") == 1 and "[train]" in err, (out, err)
        assert "torch" in err
    assert not any(tmp_path.iterdir())
    assert nertz_main(["train", "--n-steps", "0", "--out", str(tmp_path / "d")]) == 2
    assert "--n-steps 0 must be an int >= 2" in capsys.readouterr().err   # checks come first


def test_the_config_json_a_run_writes_is_its_flat_config(tmp_path):
    pytest.importorskip("sb3_contrib")
    from tiny_runs import tiny

    from agents.training.run import train
    cfg = tiny(tmp_path, timesteps=128)
    train(cfg, log=lambda s: None)
    saved = json.loads((tmp_path / "run" / "config.json").read_text())["config"]
    assert list(saved) == ORDER and saved == cfg.to_flat()
    assert TrainConfig.from_flat(**saved) == cfg
