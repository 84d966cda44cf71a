"""The documentation is true of the repository: README.md and docs/**/*.md checked as code.

- Every ```python block runs as written (a fresh interpreter in a temp dir, one per block);
  every ```pycon block of a file runs as one doctest session (`...` matches any text).
  Markers in an HTML comment on the line before a block (invisible on GitHub):
  `<!-- docs-test: slow -->` (marked slow, still run), `<!-- docs-test: needs=train -->`
  (skipped, with the install command, only when that extra is missing; the imports of a block
  are read for this too), `<!-- docs-test: not runnable: REASON -->` (never run, says why).
- Every `nertz ...` command shown (shell blocks and inline code) parses with the real parser,
  so a renamed option fails here; one that only names options (`nertz train --resume`) names
  options of that command. A block that needs an extra says `pip install -e ".[EXTRA]"`.
- Relative links, images and `#anchors` resolve inside the repository (files and headings);
  `docs/<page>.md#anchor` cited anywhere (code, messages, help texts) resolves too.
- Every rule id R.. cited in the code, tests and docs is a rule of docs/rules.md, every
  decision id D.. one of docs/engine_contract.md, every RulesConfig field is named in
  docs/rules.md, and no file cites the rulebook or API contract as a file outside docs/.
"""
from __future__ import annotations

import ast
import dataclasses
import doctest
import importlib.util
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md"] + sorted((ROOT / "docs").rglob("*.md"))
REQUIRED = os.environ.get("NERTZ_REQUIRE_CLIENTS") == "1"     # .ci/run: extras never skip

# an import of the module means the block needs the extra (pyproject.toml)
EXTRA_OF_MODULE = {"torch": "train", "stable_baselines3": "train", "sb3_contrib": "train",
                   "tensorboard": "train", "ray": "clients", "torchrl": "clients",
                   "tianshou": "clients", "supersuit": "clients", "imageio": "video",
                   "playwright": "test"}
MODULES_OF_EXTRA = {"train": ("torch", "stable_baselines3", "sb3_contrib"),
                    "clients": ("torchrl", "supersuit", "ray"), "ray": ("ray",),
                    "video": ("imageio",), "test": ("playwright", "hypothesis")}
SHELL_LANGS = {"", "bash", "sh", "shell", "console"}
MARKER = re.compile(r"^<!--\s*docs-test:(.*?)-->\s*$")
FENCE = re.compile(r"^(`{3,})\s*([\w+-]*)")
# files of the tree that are text worth reading for references (no data, no build output)
TEXT_SUFFIXES = {".py", ".md", ".js", ".html", ".css", ".toml", ".txt", ".cfg", ".ini", ".sh",
                 ".yml", ".yaml"}
SKIP_DIRS = {".git", ".venv", ".ci-venv", "__pycache__", "runs", "node_modules", ".pytest_cache",
             ".hypothesis"}


def rel(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


# --------------------------------------------------------------------------- markdown parsing
@dataclasses.dataclass
class Block:
    path: Path
    line: int             # 1-based line of the opening fence
    lang: str
    text: str
    markers: dict

    @property
    def id(self) -> str:
        return f"{rel(self.path)}:{self.line}"


def parse_markers(comment: str) -> dict:
    out = {}
    for part in comment.split(";"):
        key, _, value = part.strip().partition("=")
        if key.strip().startswith("not runnable"):
            out["not runnable"] = key.strip()[len("not runnable"):].lstrip(": ").strip() or value
        elif key.strip():
            out[key.strip()] = value.strip()
    return out


def blocks_of(path: Path) -> list[Block]:
    lines = path.read_text(encoding="utf-8").split("\n")
    out, i = [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, lang, start = m.group(1), m.group(2).lower(), i
        j = i + 1
        while j < len(lines) and not lines[j].startswith(fence):
            j += 1
        prev = lines[start - 1] if start else ""
        mk = MARKER.match(prev.strip())
        out.append(Block(path, start + 1, lang, "\n".join(lines[start + 1:j]),
                         parse_markers(mk.group(1)) if mk else {}))
        i = j + 1
    return out


def kept_lines(path: Path, keep) -> str:
    """The page with every line blanked but those `keep(lang)` accepts (line numbers kept):
    `lang` is None for prose, else the language of the fenced block the line is in. Fence
    lines themselves are always blanked."""
    out, fence, lang = [], None, None
    for line in path.read_text(encoding="utf-8").split("\n"):
        m = FENCE.match(line)
        if fence is None and m:
            fence, lang = m.group(1), m.group(2).lower()
            out.append("")
        elif fence is not None and line.startswith(fence):
            fence = None
            out.append("")
        else:
            out.append(line if keep(None if fence is None else lang) else "")
    return "\n".join(out)


def prose_of(path: Path) -> str:
    """The file with its fenced blocks blanked (line numbers kept)."""
    return kept_lines(path, lambda lang: lang is None)


def prose_lines():
    """(page, "page:line", line) for every prose line of README.md and docs/."""
    for p in DOCS:
        for n, line in enumerate(prose_of(p).split("\n"), 1):
            yield p, f"{rel(p)}:{n}", line


def slug(heading: str) -> str:
    """GitHub's anchor of a heading: tags and punctuation dropped, spaces to '-'."""
    text = re.sub(r"<[^>]+>", "", heading).strip().lower()
    text = re.sub(r"[`*_~]", lambda m: "_" if m.group() == "_" else "", text)
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors_of(path: Path) -> set:
    prose = prose_of(path)
    out, seen = set(), {}
    for m in re.finditer(r"^#{1,6}\s+(.*?)\s*#*\s*$", prose, flags=re.M):
        s = slug(m.group(1))
        n = seen.get(s, 0)
        seen[s] = n + 1
        out.add(s if n == 0 else f"{s}-{n}")
    out |= set(re.findall(r"<a\s+(?:id|name)=\"([^\"]+)\"", path.read_text(encoding="utf-8")))
    return out


ALL_BLOCKS = [b for p in DOCS for b in blocks_of(p)]
PY_BLOCKS = [b for b in ALL_BLOCKS if b.lang in ("python", "py") and ">>>" not in b.text]
PYCON_FILES = sorted({b.path for b in ALL_BLOCKS if b.lang == "pycon" or
                      (b.lang in ("python", "py") and ">>>" in b.text)})


# --------------------------------------------------------------------------- python blocks
def extras_needed(block: Block) -> list[str]:
    needed = {e.strip() for e in block.markers.get("needs", "").split(",") if e.strip()}
    try:
        tree = ast.parse(block.text)
    except SyntaxError:
        return sorted(needed)           # the run reports it
    for node in ast.walk(tree):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
            [node.module or ""] if isinstance(node, ast.ImportFrom) else []
        for name in names:
            extra = EXTRA_OF_MODULE.get(name.split(".")[0])
            if extra:
                needed.add(extra)
    return sorted(needed)


def missing_extra(extras: list[str]) -> str | None:
    for extra in extras:
        if extra not in MODULES_OF_EXTRA:
            pytest.fail(f"docs-test marker names an unknown extra {extra!r}; known: "
                        f"{sorted(MODULES_OF_EXTRA)}")
        for module in MODULES_OF_EXTRA[extra]:
            if importlib.util.find_spec(module) is None:
                return f"needs the [{extra}] extra ({module} missing): pip install -e '.[{extra}]'"
    return None


def block_param(b: Block):
    marks = [pytest.mark.slow] if "slow" in b.markers else []
    return pytest.param(b, id=b.id, marks=marks)


@pytest.mark.parametrize("block", [block_param(b) for b in PY_BLOCKS])
def test_python_block_runs_as_written(block, tmp_path):
    unknown = set(block.markers) - {"slow", "needs", "not runnable"}
    assert not unknown, f"{block.id}: unknown docs-test marker(s) {sorted(unknown)}"
    if "not runnable" in block.markers:
        assert block.markers["not runnable"], f"{block.id}: say why it is not runnable"
        pytest.skip(f"{block.id} is marked not runnable: {block.markers['not runnable']}")
    why = missing_extra(extras_needed(block))
    if why:
        if REQUIRED:
            pytest.fail(f"{block.id} {why}")
        pytest.skip(f"{block.id} {why}")
    (tmp_path / "block.py").write_text(block.text, encoding="utf-8")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]),
               MPLBACKEND="Agg")
    proc = subprocess.run([sys.executable, "block.py"], cwd=tmp_path, env=env, text=True,
                          capture_output=True, timeout=600)
    assert proc.returncode == 0, (
        f"the ```python block at {block.id} does not run as written (exit {proc.returncode}):\n"
        f"{proc.stderr[-3000:]}")


def test_a_block_that_needs_an_extra_says_which():
    """A reader without the extra is told the install command in the block itself, and the
    suite skips the block with the same command (never fails it) unless CI requires extras."""
    bad = [f"{b.id} needs [{extra}] but does not say pip install -e \".[{extra}]\""
           for b in PY_BLOCKS for extra in extras_needed(b)
           if f'pip install -e ".[{extra}]"' not in b.text and "not runnable" not in b.markers]
    assert not bad, "\n".join(bad)
    rllib = [b for b in PY_BLOCKS if "ray.rllib" in b.text]
    assert rllib and all("clients" in extras_needed(b) for b in rllib)


def test_a_missing_extra_skips_with_the_install_command(monkeypatch):
    monkeypatch.setattr(importlib.util, "find_spec",      # every module there but ray
                        lambda name, *a: None if name == "ray" else object())
    assert missing_extra(["clients"]) == ("needs the [clients] extra (ray missing): "
                                          "pip install -e '.[clients]'")


@pytest.mark.parametrize("path", PYCON_FILES, ids=rel)
def test_pycon_examples_are_true(path, tmp_path, monkeypatch):
    """All pycon blocks of a page form one doctest session, in page order."""
    monkeypatch.chdir(tmp_path)
    text = kept_lines(path, lambda lang: lang in ("pycon", "python", "py"))
    test = doctest.DocTestParser().get_doctest(text, {}, rel(path), str(path), 0)
    assert test.examples, f"{rel(path)}: no examples found"
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
    report = []
    runner.run(test, out=report.append)
    assert runner.failures == 0, "".join(report)


# --------------------------------------------------------------------------- shell commands
def shell_commands() -> list[tuple[str, str]]:
    """(where, command line) of every `nertz ...` in shell blocks and in inline code."""
    out = []
    for b in ALL_BLOCKS:
        if b.lang not in SHELL_LANGS:
            continue
        joined = re.sub(r"\\\n\s*", " ", b.text)
        for k, line in enumerate(joined.split("\n")):
            line = re.sub(r"^\s*\$\s+", "", line)
            if re.search(r"(^|&&|;|\|)\s*nertz\b", line):
                out.append((f"{b.id}+{k + 1}", line))
    for _, where, line in prose_lines():
        for code in re.findall(r"`([^`]+)`", line):
            words = code.split()
            # a bare `nertz replay` names a command; one with arguments is a command line
            if words[:1] == ["nertz"] and (len(words) > 2 or any(w.startswith("-") for w in words)):
                out.append((where, code))
    return out


def nertz_argvs(line: str) -> list[list[str]]:
    try:
        tokens = shlex.split(line, comments=True)
    except ValueError as e:
        raise AssertionError(f"does not parse as a shell line ({e}): {line}") from None
    argvs, cur = [], []
    for t in tokens + ["&&"]:
        if t == "...":                    # an elision in prose (`nertz tournament ... --out DIR`)
            continue
        if t in ("&&", "||", ";", "|"):
            if cur and cur[0] == "nertz":
                argvs.append(cur[1:])
            cur = []
        else:
            cur.append(t)
    return argvs


def sub_parsers() -> dict:
    import argparse

    from agents.cli import build_parser
    ap = build_parser()
    return next(a.choices for a in ap._actions if isinstance(a, argparse._SubParsersAction))


@pytest.mark.parametrize("where,line", shell_commands(), ids=[w for w, _ in shell_commands()])
def test_nertz_commands_shown_parse(where, line, capsys):
    from agents.cli import build_parser
    for argv in nertz_argvs(line):
        if len(argv) > 1 and all(w.startswith("-") for w in argv[1:]) and argv[0] in sub_parsers():
            # `nertz train --resume` names options: each must be one of that command's options
            known = sub_parsers()[argv[0]]._option_string_actions
            unknown = [w for w in argv[1:] if w.partition("=")[0] not in known]
            assert not unknown, f"{where}: `nertz {argv[0]}` has no option {unknown}"
            continue
        try:
            build_parser().parse_args(argv)
        except SystemExit as e:
            err = capsys.readouterr().err.strip().splitlines()
            if e.code == 0 and ({"-h", "--help"} & set(argv)):
                continue
            pytest.fail(f"{where}: `nertz {' '.join(argv)}` does not parse: "
                        f"{err[-1] if err else e}")


# --------------------------------------------------------------------------- links and anchors
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)|<(?:a|img)\s[^>]*?(?:href|src)=\"([^\"]+)\"")


def check_target(source: Path, target: str) -> str | None:
    """None when the relative link resolves, else why not."""
    if re.match(r"^[a-z][a-z0-9+.-]*:", target):          # http:, mailto:, ...
        return None
    path_part, _, anchor = target.partition("#")
    dest = (source.parent / path_part).resolve() if path_part else source
    try:
        dest.relative_to(ROOT)
    except ValueError:
        return f"{target} points outside the repository"
    if not dest.exists():
        return f"{target}: {rel(dest) if dest.is_relative_to(ROOT) else dest} does not exist"
    if anchor:
        if dest.suffix != ".md":
            return f"{target}: an anchor into a file that is not a markdown page"
        if anchor not in anchors_of(dest):
            return f"{target}: {rel(dest)} has no heading or anchor #{anchor}"
    return None


def test_relative_links_and_anchors_resolve():
    bad = []
    for p, where, line in prose_lines():
        for m in LINK.finditer(line):
            why = check_target(p, m.group(1) or m.group(2))
            if why:
                bad.append(f"{where}: {why}")
    assert not bad, "links that do not resolve:\n" + "\n".join(bad)


REPO_TOPS = ("nertz_env", "agents", "tests", "docs", "train", "benchmarks", ".ci")
CODE_PATH = re.compile(r"`((?:%s)/[\w./*-]*)`" % "|".join(re.escape(t) for t in REPO_TOPS))


def test_repository_paths_in_docs_exist():
    """A path of the repository named in backticks (`agents/arena/seatings.py`) exists."""
    bad = []
    for _, where, line in prose_lines():
        for m in CODE_PATH.finditer(line):
            path = m.group(1).rstrip(".,:;")
            if not any(ROOT.glob(path.rstrip("/"))) and not (ROOT / path).exists():
                bad.append(f"{where}: `{path}` does not exist")
    assert not bad, "paths that do not exist:\n" + "\n".join(bad)


def tree_files():
    for dirpath, dirnames, filenames in os.walk(ROOT):
        dirnames[:] = [d for d in dirnames if d not in SKIP_DIRS and not d.endswith(".egg-info")
                       and not (d.startswith(".") and d != ".ci")]
        for f in filenames:
            path = Path(dirpath) / f
            if path.suffix in TEXT_SUFFIXES or path.parent.name == ".ci":
                if path.stat().st_size <= 2_000_000:
                    yield path


def tree_lines(tops=None):
    """("file:line", line) for every line of the tree's text files (only under `tops` if given)."""
    for path in tree_files():
        if tops is not None and not any(path == t or t in path.parents for t in tops):
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8", errors="replace").split("\n"), 1):
            yield f"{rel(path)}:{n}", line


def test_docs_anchors_cited_anywhere_resolve():
    """`docs/rules.md#R21` in code, messages and pages points at a page and an anchor."""
    bad = []
    pattern = re.compile(r"\b(docs/[\w/.-]+?\.md)(?:#([\w-]+))?")
    for where, line in tree_lines():
        for m in pattern.finditer(line):
            page = ROOT / m.group(1)
            if not page.exists():
                bad.append(f"{where}: {m.group(1)} does not exist")
            elif m.group(2) and m.group(2) not in anchors_of(page):
                bad.append(f"{where}: {m.group(1)} has no anchor #{m.group(2)}")
    assert not bad, "\n".join(bad)


def test_help_texts_cite_only_files_that_exist():
    """Every `nertz ... --help` page names only repository files that exist."""
    from agents.cli import build_parser
    pages = [("nertz", build_parser().format_help())]
    pages += [(f"nertz {name}", sub.format_help()) for name, sub in sub_parsers().items()]
    bad = []
    pattern = re.compile(r"(?<![\w/])((?:%s)/[\w/.-]*\w)" % "|".join(REPO_TOPS))
    for name, text in pages:
        text = re.sub(r"\s*\n\s*", " ", text)            # argparse wraps long words at '-'
        for m in pattern.finditer(text):
            target = m.group(1)
            if not (ROOT / target).exists() and not (ROOT / target.partition("#")[0]).exists():
                bad.append(f"{name} --help cites {target}, which does not exist")
    assert not bad, "\n".join(bad)


# --------------------------------------------------------------------------- rule ids
RULES = ROOT / "docs" / "rules.md"
CONTRACT = ROOT / "docs" / "engine_contract.md"


def cited_ids(letter: str) -> dict:
    out = {}
    pattern = re.compile(r"\b%s(\d+)\b" % letter)
    tops = [ROOT / t for t in ("nertz_env", "agents", "tests", "docs", "train", "benchmarks")] + \
        [ROOT / "README.md"]
    for where, line in tree_lines(tops):
        for m in pattern.finditer(line):
            out.setdefault(f"{letter}{m.group(1)}", where)
    return out


def test_every_rule_id_is_an_anchor_of_rules_md():
    text = RULES.read_text(encoding="utf-8")
    anchors = anchors_of(RULES)
    for k in range(1, 32):
        assert re.search(r'^#{2,6} .*<a id="R%d"></a>' % k, text, flags=re.M), \
            f"docs/rules.md: R{k} is not a heading with <a id=\"R{k}\"></a>"
        assert text.count(f'<a id="R{k}"></a>') == 1, f"docs/rules.md: R{k} anchored twice"
    missing = {i: where for i, where in cited_ids("R").items() if i not in anchors}
    assert not missing, "rule ids cited but not in docs/rules.md: " + ", ".join(
        f"{i} ({w})" for i, w in sorted(missing.items()))


def test_every_decision_id_is_an_anchor_of_the_contract():
    anchors = anchors_of(CONTRACT)
    assert {f"D{k}" for k in range(1, 22)} <= anchors, "docs/engine_contract.md: D1-D21 anchors"
    missing = {i: where for i, where in cited_ids("D").items() if i not in anchors}
    assert not missing, "decision ids cited but not in docs/engine_contract.md: " + ", ".join(
        f"{i} ({w})" for i, w in sorted(missing.items()))


def test_every_rules_config_field_is_named_in_rules_md():
    from nertz_env.config import RulesConfig
    text = RULES.read_text(encoding="utf-8")
    fields = [f.name for f in dataclasses.fields(RulesConfig) if f.init]
    missing = [f for f in fields if f"`{f}`" not in text]
    assert not missing, f"RulesConfig fields not named in docs/rules.md: {missing}"


def test_no_file_cites_the_rulebook_outside_docs():
    """The rulebook and the API contract are docs/rules.md and docs/api.md: a clone has no
    other copy, so nothing may point at one."""
    names = ("RULES" + ".md", "API" + ".md", "shared" + "/RULES", "shared" + "/API")
    bad = []
    for where, line in tree_lines():
        if any(name in line for name in names):
            bad.append(f"{where}: {line.strip()[:100]}")
    assert not bad, (f"{len(bad)} lines cite a rulebook file outside docs/ (write docs/rules.md "
                     f"or docs/api.md):\n" + "\n".join(bad))


def test_model_cards_stay_cards():
    """docs/models.md is one card per shipped model and the safe-format reference (under 350
    lines); studies go to docs/experiments/, so the cards do not grow back into a notebook."""
    lines = (ROOT / "docs" / "models.md").read_text().splitlines()
    assert len(lines) < 350, f"docs/models.md has {len(lines)} lines: move studies to docs/experiments/"
    cards = [ln for ln in lines if ln.startswith("## ")]
    assert any("learned" in c for c in cards), cards
