"""Recipes as files (#41 item 2): `nertz train --spec train/recipes/X.toml` is the documented
command line of the shipped model X. The documented commands are read from the docs
themselves (docs/models.md; the stacking member's from its selection page), so a recipe and
its doc cannot drift apart unseen. Runs from the repository root, as the recipes' paths are."""
import io
import json
import shlex
import zipfile
from pathlib import Path

import numpy as np
import pytest

from agents.cli import build_parser, main
from agents.cli.train import config_from_args

ROOT = Path(__file__).resolve().parents[2]
RECIPES = ROOT / "train" / "recipes"
# recipe: (the page that documents its command, how the command starts)
DOCUMENTED = {
    "generalist": ("docs/models.md", "nertz train --learner lean --n-epochs 4 --bc-rows 0 "
                                     "--formats rulebook "),
    "stacking": ("docs/experiments/results/generalist4_selection.md",
                 "nertz train --learner lean --n-epochs 4 --bc-rows 0 --formats "
                 "rulebook-weighted "),
    "teams2": ("docs/models.md", "nertz train --learner sb3 --out runs/learned2 "),
    "teams4": ("docs/models.md", "nertz train --learner sb3 --out runs/learned4 "),
}


def documented(name) -> list:
    """The documented `nertz train` command of recipe `name`, as argv after `nertz`."""
    page, start = DOCUMENTED[name]
    lines = (ROOT / page).read_text().splitlines()
    for i, line in enumerate(lines):
        if line.strip().startswith(start):
            text = line.strip()
            while text.endswith("\\"):
                i += 1
                text = text[:-1] + " " + lines[i].strip()
            return shlex.split(text)[1:]
    raise AssertionError(f"{page} no longer shows {start!r}")


@pytest.fixture
def at_root(monkeypatch):
    monkeypatch.chdir(ROOT)


def _config(argv):
    return config_from_args(build_parser().parse_args(argv))


@pytest.mark.parametrize("name", sorted(DOCUMENTED))
def test_every_recipe_is_its_documented_command(name, at_root, tmp_path):
    """The config of `--spec RECIPE` is the documented command's, option for option."""
    out = str(tmp_path / "run")
    from_doc = _config(documented(name) + ["--out", out]).to_dict()
    from_file = _config(["train", "--spec", f"train/recipes/{name}.toml", "--out", out]).to_dict()
    assert from_file == from_doc


def test_every_recipe_in_the_folder_parses_and_passes_the_checks(at_root, tmp_path):
    from agents.training.config import TrainConfig
    from agents.training.recipe import load_recipe
    files = sorted(RECIPES.glob("*.toml"))
    assert {p.stem for p in files} == set(DOCUMENTED)
    for p in files:
        TrainConfig(out=str(tmp_path / p.stem), **load_recipe(p.relative_to(ROOT)))


def _lean_arrays(folder) -> dict:
    with np.load(folder / "final.npz", allow_pickle=False) as z:
        return {k: z[k] for k in z.files}


def _sb3_arrays(folder) -> dict:
    torch = pytest.importorskip("torch")
    with zipfile.ZipFile(folder / "final.zip") as z:
        state = torch.load(io.BytesIO(z.read("policy.pth")), weights_only=True)
    return {k: v.numpy() for k, v in state.items()}


def _same(a: dict, b: dict) -> None:
    assert a.keys() == b.keys() and a
    for k in a:
        assert a[k].tobytes() == b[k].tobytes(), k


# one update of the generalist's recipe at its own sizes (23,552 rows) takes too long for CI:
# both sides shrink the rollout identically (23 tables, one per format; 16 steps each)
GENERALIST_SMALL = ["--num-envs", "23", "--n-steps", "16", "--batch-size", "184",
                    "--torch-threads", "1", "--timesteps", "736", "--seed", "1"]


def test_the_generalist_recipe_gives_the_documented_commands_weights(at_root, tmp_path,
                                                                      one_torch_thread):
    pytest.importorskip("torch")
    a, b = tmp_path / "a", tmp_path / "b"
    assert main(["train", "--spec", "train/recipes/generalist.toml", *GENERALIST_SMALL,
                 "--out", str(a)]) == 0
    assert main(documented("generalist") + GENERALIST_SMALL + ["--out", str(b)]) == 0
    _same(_lean_arrays(a), _lean_arrays(b))
    ca, cb = (json.loads((x / "config.json").read_text())["config"] for x in (a, b))
    assert {**ca, "out": None} == {**cb, "out": None}


# the per-table recipe at CI size: 8 tables of 16 steps, a 256-row warm start, no TensorBoard
# (its evaluations every 1M steps: none but the final one); the same on both sides
SB3_SMALL = ["--num-envs", "8", "--n-steps", "16", "--batch-size", "64", "--bc-rows", "256",
             "--timesteps", "256", "--no-tensorboard", "--seed", "1"]


@pytest.mark.parametrize("name", ["teams2", "teams4"])        # the SB3 path: per-table models
def test_the_sb3_recipes_give_the_documented_commands_weights(name, at_root, tmp_path,
                                                              one_torch_thread):
    pytest.importorskip("sb3_contrib")
    a, b = tmp_path / "a", tmp_path / "b"
    assert main(["train", "--spec", f"train/recipes/{name}.toml", *SB3_SMALL,
                 "--out", str(a)]) == 0
    assert main(documented(name) + SB3_SMALL + ["--out", str(b)]) == 0
    _same(_sb3_arrays(a), _sb3_arrays(b))


BAD = {
    "unknown key": ('timesteps = 100\nnum_env = 8\n', ["'num_env'", "num_envs"]),
    "wrong type": ('timesteps = "100"\n', ["timesteps must be an integer", "not str"]),
    "list of wrong type": ('net_arch = [128, "x"]\n', ["net_arch must be a list of integers"]),
    "a float for an int": ('num_envs = 8.0\n', ["num_envs must be an integer"]),
    "duplicate key": ('seed = 1\nseed = 2\n', ["not valid TOML"]),
    "too deep": ("formats = " + "[" * 100 + "]" * 100 + "\n", ["nested too deep"]),
    "out in a recipe": ('out = "runs/x"\n', ["'out' cannot be in a recipe", "--out"]),
    "bad [recipe]": ('[recipe]\nname = "x"\nauthor = "y"\n', ["'author' in [recipe]"]),
    "a value the config refuses": ('num_envs = 0\n', [": num_envs=0"]),
    "a key that means nothing": ('eval_every = 0\neval_deals = 5\n',
                                 [": eval_deals means something only"]),
}


@pytest.mark.parametrize("case", sorted(BAD))
def test_a_bad_recipe_is_one_line_before_anything_is_written(case, tmp_path, capsys):
    text, words = BAD[case]
    spec = tmp_path / "bad.toml"
    spec.write_text(text)
    out = tmp_path / "run"
    assert main(["train", "--spec", str(spec), "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1, err
    assert str(spec) in err, err
    for w in words:
        assert w in err, (w, err)
    assert not out.exists()


def test_the_command_line_overrides_the_recipe_and_names_its_flag(at_root, tmp_path, capsys):
    cfg = _config(["train", "--spec", "train/recipes/teams2.toml", "--seed", "5",
                   "--out", str(tmp_path / "r")])
    assert (cfg.seed, cfg.teams, cfg.bc_rows) == (5, 2, 600_000)
    cfg = _config(["train", "--spec", "train/recipes/teams2.toml", "--eval-every", "0",
                   "--out", str(tmp_path / "r")])      # the recipe's eval_deals is no option
    assert (cfg.eval_every, cfg.eval_deals) == (0, 200)
    assert main(["train", "--spec", "train/recipes/teams2.toml", "--num-envs", "0",
                 "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err
    assert "--num-envs 0" in err and "recipe" not in err, err
    assert main(["train", "--spec", "train/recipes/teams2.toml", "--resume", "x.zip"]) == 2
    assert "--resume" in capsys.readouterr().err
    assert not (tmp_path / "r").exists()
