"""The rules of the house (docs/architecture.md), checked on the source tree itself, so that a
change that breaks the layout fails here whatever the files are called:

- layers point one way: `nertz_env` never imports `agents`; inside each package, a lower
  layer never imports a higher one (the LAYERS tables below: a module may import its own layer
  and the layers under it);
- no import cycle between the project's modules (a module importing its own package's
  `__init__` is not an edge: Python loads parents first);
- no module over MAX_LINES lines, at most MAX_TOP modules directly in `nertz_env/` or `agents/`;
- the whole house, scripts included, imports down only (FLOORS): `agents` imports `nertz_env`,
  `train/` and `benchmarks/` import both, and nothing imports a script folder but itself; a
  script imports no other script of its folder, only the folder's shared module (SHARED:
  `train/common.py`); no arrow between two units of one package runs back up, even within
  a layer; the scripts keep to MAX_LINES too, at most MAX_SCRIPTS in each folder;
- the learning layer rises one way inside `agents` (LEARNING): the models that play
  (`learned`) under the arena, training, judging and the CLI, in that order, package level
  only (the modules inside `agents/training` order themselves);
- no HTML, CSS or JavaScript inside Python strings: they live in `nertz_env/web/`, which is
  shipped as package data (every file there matches pyproject's globs, every glob a file);
- the action numbering is spelled out once (`nertz_env/core/codec.py`);
- the public names stay where users find them.
"""
from __future__ import annotations

import ast
import fnmatch
import re
import subprocess
import sys
from pathlib import Path

import pytest

import nertz_env

ROOT = Path(nertz_env.__file__).resolve().parents[1]
PACKAGES = ("nertz_env", "agents")
MAX_LINES = 500
MAX_TOP = 8

# Layer of each subpackage / top-level module; a module may import only from layers <= its own.
LAYERS = {
    "nertz_env": {"optional": 0, "encoding": 0, "files": 0, "core": 1, "config": 2, "actions": 2,
                  "bot_specs": 2, "engine": 3, "table": 4, "envs": 5, "replay": 6,
                  "nertz_v0": 6, "nertz_v1": 6, "__init__": 7},
    "agents": {"base": 0, "specs": 0, "python_policies": 1, "bots": 1, "constraints": 1,
               "learned": 2, "search": 2,
               "registry": 3, "stats": 0, "arena": 4, "training": 5, "human": 5,
               "judging": 6, "cli": 7, "__init__": 4, "__main__": 8},
}

SCRIPTS = ("train", "benchmarks")     # scripts on top of the library, run from the checkout
HOUSE = PACKAGES + SCRIPTS
# What each part of the house may import besides itself: what lies under it, never beside it.
FLOORS = {"nertz_env": (), "agents": ("nertz_env",), "train": ("nertz_env", "agents"),
          "benchmarks": ("nertz_env", "agents")}
# A script folder's one shared module: its scripts may import it (it imports none of them),
# never each other (train/common.py holds what the league scripts share).
SHARED = {"train": "train.common", "benchmarks": "benchmarks.common"}
MAX_SCRIPTS = 16                      # scripts directly in train/ or benchmarks/
TOP_CAPS = {"nertz_env": MAX_TOP, "agents": MAX_TOP, "train": MAX_SCRIPTS,
            "benchmarks": MAX_SCRIPTS}
# The learning layer inside agents, bottom up: the models that play, the arena that plays
# them, training, judging models, the CLI (LAYERS must rise strictly along it).
LEARNING = ("learned", "arena", "training", "judging", "cli")


def _modules(root: Path = ROOT, packages=PACKAGES):
    """{dotted name: path} of every module of `packages` under `root` (by default the two
    packages of the library)."""
    out = {}
    for pkg in packages:
        for path in sorted((root / pkg).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join(parts)] = path
    return out


MODULES = _modules()
HOUSE_MODULES = _modules(ROOT, HOUSE)


def _imports(name: str, path: Path, modules=None):
    """The project modules `name` imports anywhere in its file (module level or inside
    functions), relative imports resolved, `from pkg import submodule` counted as the
    submodule. modules: the module table names resolve against (the whole house)."""
    modules = HOUSE_MODULES if modules is None else modules
    is_pkg = path.name == "__init__.py"
    here = name.split(".") if is_pkg else name.split(".")[:-1]
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        if isinstance(node, ast.Import):
            targets = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = here[:len(here) - node.level + 1] if node.level else []
            mod = ".".join(base + (node.module.split(".") if node.module else []))
            targets = [f"{mod}.{a.name}" if f"{mod}.{a.name}" in modules else mod
                       for a in node.names]
        else:
            continue
        for t in targets:
            while t and t not in modules:        # `import a.b.c` of a name inside a.b
                t = t.rpartition(".")[0]
            if t and t != name and not name.startswith(t + "."):   # not self, not a parent
                yield t


def _graph(modules) -> dict:
    """{module: the project modules it imports} over a module table."""
    return {name: sorted(set(_imports(name, path, modules))) for name, path in modules.items()}


GRAPH = _graph(HOUSE_MODULES)          # the whole house: the library and the scripts


def _layer(name: str):
    parts = name.split(".")
    table = LAYERS[parts[0]]
    key = parts[1] if len(parts) > 1 else "__init__"
    return table.get(key)


def test_every_module_has_a_layer():
    missing = sorted({n.split(".")[1] if "." in n else n for n in MODULES if _layer(n) is None})
    assert not missing, f"add these to LAYERS (and docs/architecture.md): {missing}"


def test_nertz_env_never_imports_agents():
    offenders = [f"{n} -> {t}" for n, ts in GRAPH.items() if n.startswith("nertz_env")
                 for t in ts if t.split(".")[0] == "agents"]
    src = [f"{p.relative_to(ROOT)}" for n, p in MODULES.items() if n.startswith("nertz_env")
           and re.search(r"^\s*(from|import) agents\b", p.read_text(), re.M)]
    assert not offenders and not src, offenders + src


def _upward_arrows(graph, layer=_layer):
    """Every import inside one package from a lower layer to a higher one (between different
    subpackages / top-level modules: a unit may import itself freely)."""
    offenders = []
    for n, ts in graph.items():
        if n.split(".")[0] not in LAYERS:
            continue                              # scripts: FLOORS and SHARED below
        for t in ts:
            if n.split(".")[0] != t.split(".")[0]:
                continue                          # across packages: the test above
            same_sub = n.split(".")[:2] == t.split(".")[:2]
            if not same_sub and layer(t) > layer(n):
                offenders.append(f"{n} (layer {layer(n)}) imports {t} (layer {layer(t)})")
    return offenders


def _unit_graph(graph, package: str):
    """The import graph of `package` folded to its units (a subpackage or a top-level module:
    `nertz_env.envs`, `nertz_v0`, ...): an arrow from unit A to unit B where any module of A
    imports one of B."""
    def unit(name):
        return ".".join(name.split(".")[:2])
    out = {}
    for n, ts in graph.items():
        if n.split(".")[0] != package:
            continue
        out.setdefault(unit(n), set()).update(unit(t) for t in ts
                                              if t.split(".")[0] == package and unit(t) != unit(n))
    return {u: sorted(ts) for u, ts in out.items()}


def test_layers_point_one_way():
    offenders = _upward_arrows(GRAPH)
    assert not offenders, "\n".join(offenders)


def test_units_of_nertz_env_import_one_way():
    """Inside nertz_env, arrows between units run one way: no two units import each other,
    even through others and within one layer (`nertz_v0` imports `envs`, so nothing in `envs`
    may import `nertz_v0`)."""
    assert not _cycles(_unit_graph(GRAPH, "nertz_env")), _cycles(_unit_graph(GRAPH, "nertz_env"))


def test_one_way_checks_see_an_arrow_back_up():
    """Negative control: a fake nertz_env where envs/registry.py imports nertz_v0 (which imports
    envs) is flagged: as an upward import with nertz_v0 above envs, and as a cycle between units
    when both share a layer; the same graph without that arrow passes both."""
    graph = {"nertz_env": ["nertz_env.nertz_v0"], "nertz_env.nertz_v0": ["nertz_env.envs.aec"],
             "nertz_env.envs.aec": ["nertz_env.envs.pettingzoo"],
             "nertz_env.envs.pettingzoo": ["nertz_env.core.observe"],
             "nertz_env.envs.registry": ["nertz_env.nertz_v0"], "nertz_env.core.observe": []}

    def layers(table):
        return lambda name: table[name.split(".")[1] if "." in name else "__init__"]
    above = layers({"core": 1, "envs": 5, "nertz_v0": 6, "__init__": 7})
    level = layers({"core": 1, "envs": 5, "nertz_v0": 5, "__init__": 7})
    assert _upward_arrows(graph, above) == [
        "nertz_env.envs.registry (layer 5) imports nertz_env.nertz_v0 (layer 6)"]
    assert _upward_arrows(graph, level) == []                  # same layer: only the cycle...
    assert _cycles(_unit_graph(graph, "nertz_env")) == [["nertz_env.envs", "nertz_env.nertz_v0"]]
    graph["nertz_env.envs.registry"] = ["nertz_env.envs.aec"]  # ...and without the arrow
    assert _upward_arrows(graph, above) == [] and _cycles(_unit_graph(graph, "nertz_env")) == []


def _cycles(graph):
    """Strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on, out, counter = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    for v in graph:
        if v not in index:
            visit(v)
    return out


def test_no_import_cycle():
    assert not _cycles(GRAPH), _cycles(GRAPH)


def test_cycle_check_sees_a_cycle():
    """Negative control: the checker finds a planted cycle (and none in a chain)."""
    assert _cycles({"a": ["b"], "b": ["c"], "c": ["a"], "d": ["a"]}) == [["a", "b", "c"]]
    assert _cycles({"a": ["b"], "b": ["c"], "c": []}) == []


# ------------------------------------------------------------------ the house, scripts included
def _floor_breaks(graph, floors=FLOORS) -> list:
    """Every import from one part of the house into a part not under it (FLOORS)."""
    return [f"{n} imports {t}" for n, ts in sorted(graph.items()) for t in ts
            if t.split(".")[0] != n.split(".")[0]
            and t.split(".")[0] not in floors[n.split(".")[0]]]


def _script_breaks(graph, shared=SHARED) -> list:
    """Every import between two modules of one script folder but a script's of the folder's
    shared module (which itself imports none of the folder)."""
    out = []
    for n, ts in sorted(graph.items()):
        pkg = n.split(".")[0]
        if pkg in shared:
            out += [f"{n} imports {t}" for t in ts
                    if t.split(".")[0] == pkg and (t != shared[pkg] or n == shared[pkg])]
    return out


def _learning_breaks(table, order=LEARNING) -> list:
    """Each pair of neighbours along `order` whose layers in `table` do not rise."""
    return [f"{lo} (layer {table.get(lo)}) is not below {hi} (layer {table.get(hi)})"
            for lo, hi in zip(order, order[1:])
            if lo not in table or hi not in table or not table[lo] < table[hi]]


def _too_long(modules, root: Path = ROOT, limit: int = MAX_LINES) -> list:
    return [f"{p.relative_to(root)} ({n})" for p in modules.values()
            if (n := len(p.read_text().splitlines())) > limit]


def _too_many(root: Path = ROOT, caps=TOP_CAPS) -> list:
    out = []
    for folder, cap in caps.items():
        top = sorted(p.name for p in (root / folder).glob("*.py"))
        if len(top) > cap:
            out.append(f"{folder}/ holds {len(top)} modules directly (at most {cap}): {top}")
    return out


def test_the_house_imports_down_only():
    """nertz_env imports nothing of the house, agents only nertz_env, train/ and benchmarks/
    only those two: nothing in the library imports a script, no script folder the other."""
    assert set(FLOORS) == set(HOUSE) == {n.split(".")[0] for n in GRAPH}   # scripts read too
    offenders = _floor_breaks(GRAPH)
    assert not offenders, "\n".join(offenders)


def test_scripts_import_no_other_script():
    """A script under train/ or benchmarks/ imports no other script of its folder: what two
    share lives in the folder's shared module (train/common.py), which imports no script."""
    assert any(t == "train.common" for ts in GRAPH.values() for t in ts)   # the rule is live
    offenders = _script_breaks(GRAPH)
    assert not offenders, "\n".join(offenders)


@pytest.mark.parametrize("package", ["agents", "train", "benchmarks"])
def test_units_of_each_package_import_one_way(package):
    """As for nertz_env: no two units (subpackages, top-level modules, scripts) of a package
    import each other, even through others and within one layer."""
    units = _unit_graph(GRAPH, package)
    assert units and not _cycles(units), _cycles(units)


def test_the_learning_layer_rises():
    """Inside agents the learning layer points one way: the models that play (learned) under
    the arena, the arena under training, training under judging, judging under the CLI; so
    a learned model never imports the arena or training, training never judging. Package
    level only: the modules inside agents/training order themselves."""
    assert not _learning_breaks(LAYERS["agents"]), _learning_breaks(LAYERS["agents"])


def test_learning_layer_checks_see_arrows_back_up():
    """Negative control on the real LAYERS table: a learned model importing training, the
    arena importing training, training importing judging and judging importing the CLI are
    each flagged (and a learned <-> training pair as a cycle); the downward arrows beside
    them are not. A table with learned lifted to training's layer, or without judging, is
    flagged by the order check."""
    graph = {"agents.learned.ppo": ["agents.training.lean_ppo"],
             "agents.arena.play": ["agents.learned.ppo", "agents.training.evaluation"],
             "agents.training.lean_ppo": ["agents.arena.play", "agents.judging.grid",
                                          "agents.learned.ppo"],
             "agents.training.evaluation": [],
             "agents.judging.grid": ["agents.arena.play", "agents.cli.common",
                                     "agents.training.evaluation"],
             "agents.cli.common": ["agents.judging.grid", "agents.training.lean_ppo"]}

    def up(n, t):
        return f"{n} (layer {_layer(n)}) imports {t} (layer {_layer(t)})"
    assert sorted(_upward_arrows(graph)) == [
        up("agents.arena.play", "agents.training.evaluation"),
        up("agents.judging.grid", "agents.cli.common"),
        up("agents.learned.ppo", "agents.training.lean_ppo"),
        up("agents.training.lean_ppo", "agents.judging.grid")]
    assert _cycles(_unit_graph(graph, "agents")) == [[f"agents.{u}" for u in sorted(LEARNING)]]
    down = {n: [t for t in ts if _layer(t) <= _layer(n)] for n, ts in graph.items()}
    assert _upward_arrows(down) == [] and _cycles(_unit_graph(down, "agents")) == []
    table = LAYERS["agents"]
    assert _learning_breaks({**table, "learned": table["training"]}) == [
        f"learned (layer {table['training']}) is not below arena (layer {table['arena']})"]
    no_judging = {k: v for k, v in table.items() if k != "judging"}
    assert _learning_breaks(no_judging) == [
        f"training (layer {table['training']}) is not below judging (layer None)",
        f"judging (layer None) is not below cli (layer {table['cli']})"]


def test_house_checks_see_a_planted_tree(tmp_path):
    """Negative control from source files: a small house written to disk and read as the
    real one is read. Each planted break is found (a package importing one above it, at
    module level and inside a function; a script importing another script; a relative import
    from a learned model up into training, which training imports back; a script over
    MAX_LINES; a script folder over MAX_SCRIPTS), and nothing else: the downward arrows
    beside them (a script to train.common, train.common to agents, training to learned and
    the arena) pass."""
    files = {
        "nertz_env/__init__.py": "",
        "nertz_env/core/__init__.py": "",
        "nertz_env/core/rules.py": "from agents import base\n",                  # up a floor
        "agents/__init__.py": "",
        "agents/base.py": "import nertz_env.core.rules\n",
        "agents/learned/__init__.py": "",
        "agents/learned/ppo.py": "from ..training import lean_ppo\n",           # up a layer
        "agents/training/__init__.py": "",
        "agents/training/lean_ppo.py": "from agents.learned.ppo import Net\n"
                                       "from ..arena import play\n",
        "agents/arena/__init__.py": "",
        "agents/arena/play.py": "def run():\n    import train.common\n",        # into scripts
        "train/__init__.py": "",
        "train/common.py": "from agents.training import lean_ppo\n",
        "train/league.py": "from train.common import leg\n",
        "train/population.py": "from train import league\n",                   # a script's
        "benchmarks/__init__.py": "",
        "benchmarks/speed.py": "def run():\n    from train.common import leg\n",  # beside
        "benchmarks/long.py": "x = 1\n" * (MAX_LINES + 1),
        **{f"benchmarks/b{i}.py": "" for i in range(MAX_SCRIPTS - 2)},
    }
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text)
    modules = _modules(tmp_path, HOUSE)
    graph = _graph(modules)
    assert _floor_breaks(graph) == ["agents.arena.play imports train.common",
                                    "benchmarks.speed imports train.common",
                                    "nertz_env.core.rules imports agents.base"]
    assert _script_breaks(graph) == ["train.population imports train.league"]
    assert _upward_arrows(graph) == [
        f"agents.learned.ppo (layer {_layer('agents.learned')}) imports "
        f"agents.training.lean_ppo (layer {_layer('agents.training')})"]
    assert _cycles(_unit_graph(graph, "agents")) == [["agents.learned", "agents.training"]]
    assert _too_long(modules, tmp_path) == [f"benchmarks/long.py ({MAX_LINES + 1})"]
    too_many = _too_many(tmp_path)
    assert len(too_many) == 1 and too_many[0].startswith(
        f"benchmarks/ holds {MAX_SCRIPTS + 1} modules directly (at most {MAX_SCRIPTS})")
    (tmp_path / "benchmarks/b0.py").unlink()                   # at the cap: passes
    (tmp_path / "train/population.py").write_text("from train.common import leg\n")
    graph = _graph(_modules(tmp_path, HOUSE))
    assert _too_many(tmp_path) == [] and _script_breaks(graph) == []


def test_no_module_is_too_long_and_top_levels_stay_small():
    """Every module of the house (the scripts too) under MAX_LINES; at most MAX_TOP modules
    directly in nertz_env/ and agents/, MAX_SCRIPTS in train/ and benchmarks/."""
    long = _too_long(HOUSE_MODULES)
    assert not long, f"over {MAX_LINES} lines, split along the job: {long}"
    assert set(TOP_CAPS) == set(HOUSE)
    crowded = _too_many()
    assert not crowded, crowded


MAX_FUNCTION_LINES = 100
SHORT_FUNCTIONS = ("agents/training",)     # where every function fits on a screen or two


def _long_functions(source: str, filename: str, limit: int = MAX_FUNCTION_LINES) -> list:
    """Every function (nested ones and methods included) of `source` over `limit` lines,
    decorators aside, as 'FILE:LINE NAME (N lines)'."""
    return [f"{filename}:{n.lineno} {n.name} ({n.end_lineno - n.lineno + 1} lines)"
            for n in ast.walk(ast.parse(source, filename=filename))
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))
            and n.end_lineno - n.lineno + 1 > limit]


def test_no_function_in_the_training_layer_is_too_long():
    files = [p for d in SHORT_FUNCTIONS for p in sorted((ROOT / d).rglob("*.py"))]
    assert files
    long = [f for p in files for f in _long_functions(p.read_text(), str(p.relative_to(ROOT)))]
    assert not long, f"over {MAX_FUNCTION_LINES} lines, split into named steps: {long}"


def test_function_length_check_sees_a_long_function():
    """Negative control: a synthetic 102-line function (and a long method nested in a class)
    is flagged, a 100-line one and a short one are not."""
    def fn(name, n, indent=""):
        body = "".join(f"{indent}    x{i} = {i}\n" for i in range(n - 2))
        return f"{indent}def {name}():\n{body}{indent}    return 0\n"
    src = fn("short", 3) + "\n\n" + fn("long", 102) + "\n\n" + fn("edge", 100)
    assert _long_functions(src, "fake.py") == ["fake.py:6 long (102 lines)"]
    nested = "class C:\n" + fn("method", 101, "    ")
    assert _long_functions(nested, "fake.py") == ["fake.py:2 method (101 lines)"]


WEB_MARKERS = re.compile(r"<(html|head|body|script|style|div|button|svg)\b|</\w+>|"
                         r"\bfunction\s*\w*\s*\([\w\s,]*\)\s*\{|=>\s*\{|document\.|addEventListener", re.I)


def _string_constants(path: Path):
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            yield node.lineno, node.value


def test_no_html_css_or_js_inside_python():
    offenders = [f"{p.relative_to(ROOT)}:{line}" for p in MODULES.values()
                 for line, s in _string_constants(p) if WEB_MARKERS.search(s)]
    assert not offenders, f"move these into nertz_env/web/: {offenders}"


def test_web_marker_check_sees_markup():
    """Negative control for the check above."""
    assert WEB_MARKERS.search("<div class='x'>") and WEB_MARKERS.search("el.addEventListener(")
    assert WEB_MARKERS.search("function go(a, b) {") and WEB_MARKERS.search("x => {")
    assert not WEB_MARKERS.search("a < b and c > d, R22; the block's function (default f)")


def test_web_assets_are_all_shipped_and_every_glob_matches():
    import tomllib
    globs = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"][
        "package-data"]["nertz_env"]
    web = sorted(p.relative_to(ROOT / "nertz_env").as_posix()
                 for p in (ROOT / "nertz_env" / "web").rglob("*") if p.is_file())
    assert web, "nertz_env/web/ is empty"
    unshipped = [f for f in web if not any(fnmatch.fnmatch(f, g) for g in globs)]
    empty = [g for g in globs if not any(fnmatch.fnmatch(f, g) for f in web)]
    assert not unshipped and not empty, (unshipped, empty)


def test_action_numbering_is_defined_once():
    """Only core/codec.py spells out the id offsets; other modules import them."""
    offsets = ("BUILD0 =", "SHIFT0 =", "STACK0 =", "LAKE0 =")
    where = sorted({str(p.relative_to(ROOT)) for p in MODULES.values()
                    for line in p.read_text().splitlines()
                    if any(line.lstrip().startswith(o) for o in offsets)})
    assert where == ["nertz_env/core/codec.py"], where


def test_code_names_no_issue_numbers():
    offenders = [f"{p.relative_to(ROOT)}:{i}" for p in MODULES.values()
                 for i, line in enumerate(p.read_text().splitlines(), 1)
                 if re.search(r"\b[Ii]ssue [0-9]+|issue lands", line)]
    assert not offenders, offenders


def test_importing_every_nertz_env_module_loads_no_agents_module():
    """Every submodule imported in a fresh process: `agents` never appears in sys.modules."""
    code = ("import importlib, pkgutil, sys, nertz_env\n"
            "for m in pkgutil.walk_packages(nertz_env.__path__, 'nertz_env.'):\n"
            "    importlib.import_module(m.name)\n"
            "print(sorted(k for k in sys.modules if k == 'agents' or k.startswith('agents.')))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


def test_public_names_still_work():
    import gymnasium

    from agents import make_agent
    from nertz_env import Engine, RulesConfig, Table, nertz_v0
    assert nertz_v0.parallel_env().metadata["name"] == "nertz_v0"
    env = gymnasium.make("nertz_env/Nertz-v0", num_teams=2)
    assert type(env.unwrapped).__module__.startswith("nertz_env.envs.")
    assert Table.deal(RulesConfig(), seed=1).legal_moves(0)
    assert Engine(RulesConfig(), n_tables=2) is not None
    assert make_agent("random") is not None
    assert nertz_env.NertzGymVectorEnv is nertz_env.envs.NertzGymVectorEnv


@pytest.mark.parametrize("command", ["tournament", "experiment", "train", "replay", "play",
                                     "game"])
def test_every_nertz_command_still_exists(command):
    from agents.cli import build_parser
    ap = build_parser()
    sub = next(a for a in ap._actions if a.dest == "command")
    assert command in sub.choices
