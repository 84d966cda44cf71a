"""The house: the layers point one way and the public names stay where users find
them. nertz_env (rules, then envs) never imports the top-level agents package; the envs live
in nertz_env/envs/ while `from nertz_env import nertz_v0` and the registered ids keep working;
the action numbering is defined once (nertz_env/core/codec.py)."""
from __future__ import annotations

import ast
import pkgutil
import subprocess
import sys
from pathlib import Path

import nertz_env

ROOT = Path(nertz_env.__file__).resolve().parent


def _imports(path: Path):
    tree = ast.parse(path.read_text(), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            yield node.module


def test_nertz_env_source_never_imports_agents():
    offenders = [f"{p.relative_to(ROOT.parent)}: {name}" for p in ROOT.rglob("*.py")
                 for name in _imports(p) if name == "agents" or name.startswith("agents.")]
    assert not offenders, offenders


def test_importing_every_nertz_env_module_loads_no_agents_module():
    """Every submodule (envs included; vector.py needs SB3, installed with [train]) imported
    in a fresh process: `agents` never appears in sys.modules."""
    code = ("import importlib, pkgutil, sys, nertz_env\n"
            "for m in pkgutil.walk_packages(nertz_env.__path__, 'nertz_env.'):\n"
            "    try:\n"
            "        importlib.import_module(m.name)\n"
            "    except ImportError as e:\n"
            "        if 'stable_baselines3' not in str(e): raise\n"
            "print(sorted(k for k in sys.modules if k == 'agents' or k.startswith('agents.')))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


def test_envs_live_in_their_subpackage_and_the_public_names_still_work():
    import gymnasium
    import pettingzoo

    from nertz_env import envs, nertz_v0
    names = {m.name for m in pkgutil.iter_modules(envs.__path__)}
    assert {"pettingzoo", "gym", "vector", "gym_vector", "episode", "opponents"} <= names
    assert not (ROOT / "pettingzoo_env.py").exists() and not (ROOT / "gym_env.py").exists()
    assert nertz_v0.parallel_env().metadata["name"] == "nertz_v0"
    env = gymnasium.make("nertz_env/Nertz-v0", num_teams=2)
    assert type(env.unwrapped).__module__ == "nertz_env.envs.gym"
    if hasattr(pettingzoo, "aec_registry"):
        assert "nertz/nertz-v0" in pettingzoo.aec_registry
    assert nertz_env.NertzGymVectorEnv is envs.NertzGymVectorEnv


def test_action_numbering_is_defined_once():
    """Only core/codec.py spells out the id offsets; other modules import them."""
    offsets = ("BUILD0 =", "SHIFT0 =", "STACK0 =", "LAKE0 =")
    files = list(ROOT.rglob("*.py")) + list((ROOT.parent / "agents").rglob("*.py"))
    where = sorted({str(p.relative_to(ROOT.parent)) for p in files
                    for line in p.read_text().splitlines()
                    if any(line.lstrip().startswith(o) for o in offsets)})
    assert where == ["nertz_env/core/codec.py"], where
