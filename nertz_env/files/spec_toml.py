"""TOML files people write (experiment specs, training recipes), read under caps: the size
capped before anything is decoded, the nesting of arrays and inline tables counted before
tomllib parses (it recurses once per level: 100,000 brackets end in a RecursionError), in
time linear in the text, and every failure one ValueError line naming the file.

`toml_depth` walks the text once: outside strings and comments it counts [ { ] }, and it
jumps over basic strings ("..." with backslash escapes), literal strings ('...'), the
multi-line forms (three quotes) and comments. A single-line string left open ends at its
line's end (tomllib then reports the file as invalid TOML). An earlier regex tokenizer
rescanned an open string from each of its quotes: quadratic, so 900 KB of `a\\"` took hours.
"""
from __future__ import annotations

import re

from .bounded import MAX_JSON_DEPTH, read_capped

_SPECIAL = re.compile(r"[\"'#\[\]{}]")
_BASIC_STOP = re.compile(r'["\\\n]')          # inside "...": the end, an escape, a line end
_ML_BASIC_STOP = re.compile(r'"""|\\')         # inside """...""": the end or an escape


def _after_basic(text: str, i: int) -> int:
    """Index after the "..." string whose body starts at i (its line's end if left open)."""
    while True:
        m = _BASIC_STOP.search(text, i)
        if m is None:
            return len(text)
        c = m.group()
        if c == "\\":
            i = m.end() + 1
            continue
        return m.end()


def _after_multiline(text: str, i: int, quote: str) -> int:
    """Index after the three-quote string whose body starts at i (the text's end if open);
    up to two more quotes right after the closing three belong to the string (TOML)."""
    if quote == "'":
        k = text.find("'''", i)
    else:
        while True:
            m = _ML_BASIC_STOP.search(text, i)
            if m is None:
                return len(text)
            if m.group() == "\\":
                i = m.end() + 1
                continue
            k = m.start()
            break
    if k < 0:
        return len(text)
    end = k + 3
    for _ in range(2):
        if text.startswith(quote, end):
            end += 1
    return end


def _after_literal(text: str, i: int) -> int:
    """Index after the '...' string whose body starts at i (its line's end if left open)."""
    k = text.find("'", i)
    if k < 0:
        nl = text.find("\n", i)
        return len(text) if nl < 0 else nl + 1
    nl = text.find("\n", i, k)
    return nl + 1 if nl >= 0 else k + 1


def toml_depth(text: str) -> int:
    """How deeply arrays and inline tables nest in TOML `text`: the most [ and { open at
    once, outside strings and comments; one pass over the text."""
    depth = most = 0
    i, n = 0, len(text)
    while i < n:
        m = _SPECIAL.search(text, i)
        if m is None:
            break
        c, j = m.group(), m.start()
        if c == "#":
            nl = text.find("\n", j)
            i = n if nl < 0 else nl + 1
        elif c in "[{":
            depth += 1
            most = max(most, depth)
            i = j + 1
        elif c in "]}":
            depth -= 1
            i = j + 1
        elif text.startswith(c * 3, j):
            i = _after_multiline(text, j + 3, c)
        elif c == '"':
            i = _after_basic(text, j + 1)
        else:
            i = _after_literal(text, j + 1)
    return most


def read_toml(path, what: str, max_bytes: int) -> dict:
    """The parsed TOML of the file `path` (`what`: "experiment spec", "recipe", ...): at most
    max_bytes, UTF-8, nested at most MAX_JSON_DEPTH levels; ValueError, one line naming the
    file, for anything else (a missing file or a directory included); an existing file the
    system will not let be read is read_capped's OSError naming it (bounded.read_fault)."""
    try:
        import tomllib
    except ModuleNotFoundError:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    where = f"{what} {str(path)!r}"
    try:
        text = read_capped(path, max_bytes, what).decode()
        depth = toml_depth(text)
        if depth > MAX_JSON_DEPTH:
            raise ValueError(f"{where}: nested too deep ({depth} levels of [ and {{); at most "
                             f"{MAX_JSON_DEPTH} are read")
        return tomllib.loads(text)
    except RecursionError:          # toml_depth's count is the guard; this is its backstop
        raise ValueError(f"{where}: nested too deep; at most {MAX_JSON_DEPTH} levels are "
                         "read") from None
    except UnicodeDecodeError:
        raise ValueError(f"{where}: not UTF-8 text") from None
    except tomllib.TOMLDecodeError as err:
        raise ValueError(f"{where}: not valid TOML ({err})") from None
