"""Help texts say what an option does, not how fast it ran on some machine: measured figures
(seconds, minutes, steps/s, speed ratios, "on 2 cores") live in benchmarks/README.md's
current-figures table (with their command and date) or in the docs. Checked on the source of
every argparse help, description and epilog of the `nertz` commands, the recipes in train/
and the benchmarks."""
from __future__ import annotations

import ast
import re
from pathlib import Path

import nertz_env

ROOT = Path(nertz_env.__file__).resolve().parents[1]
FILES = sorted([*ROOT.glob("agents/cli/*.py"), *ROOT.glob("train/*.py"),
                *ROOT.glob("benchmarks/*.py")])

MEASURED = re.compile(
    r"\babout (a|an|one|\d[\d,.]*) ?(second|minute|hour|s\b|min\b|h\b)"
    r"|\bup to (a|an|\d[\d,.]*) ?(second|minute|hour)"
    r"|\b\d[\d,.]*\s*(s|seconds|secs?|minutes|mins?|hours)\b(?![-/'])"
    r"|\b\d[\d,.]*\s*k?\s*(env-|agent-|learner )?(steps|hands|deals|moves|ticks)/s\b"
    r"|\bon a \d+-core machine|\bon \d+ cores\b"
    r"|\b\d[\d,.]*\s*x (faster|slower)|\b\d[\d,.]*\s*% (faster|slower|of (the )?speed)", re.I)


def _module_strings(tree) -> dict:
    return {t.id: n.value.value for n in tree.body if isinstance(n, ast.Assign)
            and isinstance(n.value, ast.Constant) and isinstance(n.value.value, str)
            for t in n.targets if isinstance(t, ast.Name)}


def _text(value, doc: str, names: dict) -> str:
    """The text an argparse keyword's expression gives, as far as the source shows it: a
    `__doc__` expression evaluated (`__doc__.split(...)[0]`), a module-level constant
    resolved, else every string constant inside it (f-strings, joins)."""
    used = {n.id for n in ast.walk(value) if isinstance(n, ast.Name)}
    if used == {"__doc__"}:
        return str(eval(compile(ast.Expression(value), "<help>", "eval"), {"__doc__": doc}))
    parts = [n.value for n in ast.walk(value) if isinstance(n, ast.Constant)
             and isinstance(n.value, str)]
    parts += [names[n] for n in used if n in names]
    return " ".join(parts)


def help_texts(path: Path):
    """(line, keyword, text) of every help=, description= and epilog= in a file."""
    tree = ast.parse(path.read_text(), filename=str(path))
    doc, names = ast.get_docstring(tree, clean=False) or "", _module_strings(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            for kw in node.keywords:
                if kw.arg in ("help", "description", "epilog"):
                    yield kw.value.lineno, kw.arg, _text(kw.value, doc, names)


def test_no_measured_figures_in_help_texts():
    found = [f"{p.relative_to(ROOT)}:{line} {kw}: {m.group(0)!r}" for p in FILES
             for line, kw, text in help_texts(p) for m in [MEASURED.search(" ".join(text.split()))]
             if m]
    assert not found, ("measured figures in help texts; move them to benchmarks/README.md "
                       "(current figures) and keep what the option does:\n" + "\n".join(found))


def test_the_check_sees_measurements_and_not_option_values():
    """Negative control: the figures the help texts used to hold are flagged; an option's
    own unit and default are not."""
    for measured in ("on a fresh install numba first compiles the kernels, about a minute on "
                     "2 cores", "compiles its kernels the first time after install: up to a "
                     "minute", "the generalist trains at 17.2k env-steps/s", "takes 34.0 s",
                     "about 3 minutes", "1.4x faster", "9,372 hands/s on this machine"):
        assert MEASURED.search(measured), measured
    for fine in ("the person's time per move in ms (default 1000)", "--video: frames per "
                 "second (default 10)", "time per measurement", "tournament hands/s, jitted",
                 "at most one move per MS milliseconds", "deals per cell (default 1000)",
                 "What recording replays costs, measured in one run on this machine."):
        assert not MEASURED.search(fine), fine
    tree = ast.parse('"""Doc.\n\nabout a minute on 2 cores"""\nimport argparse\n'
                     'argparse.ArgumentParser(description=__doc__.split("\\n\\n")[0])\n'
                     'argparse.ArgumentParser(description=__doc__)\n')
    doc = ast.get_docstring(tree, clean=False)
    texts = [_text(kw.value, doc, {}) for n in ast.walk(tree) if isinstance(n, ast.Call)
             for kw in n.keywords]
    assert texts == ["Doc.", "Doc.\n\nabout a minute on 2 cores"]
