"""Reports of Nertz bot tournaments: the plain-text tables, the CSV and JSON files and the
leaderboard plot of the rows that agents/stats/estimators.py computes (leaderboard(),
paired_differentials()). Nothing here estimates anything.

Public API: ``format_table``, ``write_csv``, ``write_pairs_csv``, ``write_json``,
``plot_leaderboard``.
"""

from __future__ import annotations

import csv
import json
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from nertz_env.files import atomic_path, write_text
from nertz_env.optional import require

from .estimators import LEADERBOARD_FIELDS, PAIR_FIELDS, orient_pairs

__all__ = [
    "fit_lines",
    "format_table",
    "plot_leaderboard",
    "write_csv",
    "write_json",
    "write_pairs_csv",
]


def _fmt(x: Any, spec: str) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "-"
    return format(x, spec)


WIDTH = 100        # the widest line a printed table takes (terminals of 100 columns)


def _pieces(text: str, w: int) -> list[str]:
    """text cut into pieces of at most w characters, after a ',', ':', '+', '=' or ' '
    where one falls in the piece (agent specs stay readable), else at w."""
    out = []
    while len(text) > w:
        cut = max(text.rfind(c, 0, w) for c in ",:+= ")
        cut = cut + 1 if cut >= w // 3 else w
        out.append(text[:cut].rstrip())
        text = text[cut:].lstrip()
    return out + [text]


def _render(header: Sequence[str], body: list[list[str]], left: int,
            width: int = WIDTH) -> list[str]:
    """Aligned columns, the first `left` left-aligned; a table wider than `width` wraps its
    left-aligned cells over lines, and when that cannot fit either, each row becomes a line
    of its left cells above a line of the others (every line within `width`)."""
    widths = [len(h) for h in header]
    for r in body:
        widths = [max(w, len(c)) for w, c in zip(widths, r)]
    fixed = sum(widths[left:]) + 2 * (len(widths) - 1)
    budget = width - fixed
    floors = [min(widths[k], max(8, len(header[k]))) for k in range(left)]
    if sum(widths) + 2 * (len(widths) - 1) > width and left and budget >= sum(floors):
        while sum(widths[:left]) > budget:
            k = max(range(left), key=lambda j: widths[j] - floors[j])
            widths[k] -= 1
    elif sum(widths) + 2 * (len(widths) - 1) > width and left:
        return _stacked(header, body, left, width)

    def lines(cells: Sequence[str]) -> list[str]:
        cut = [_pieces(c, widths[k]) if k < left else [c] for k, c in enumerate(cells)]
        return ["  ".join((col[i] if i < len(col) else "").ljust(w) if k < left
                          else (col[i] if i < len(col) else "").rjust(w)
                          for k, (col, w) in enumerate(zip(cut, widths))).rstrip()
                for i in range(max(len(col) for col in cut))]

    out = lines(header) + ["  ".join("-" * w for w in widths)]
    for r in body:
        out += lines(r)
    return out


def _stacked(header, body, left, width) -> list[str]:
    """_render's last resort: per row, its left cells joined, then the rest indented."""
    lab = " / ".join(header[:left])
    rest = _render(["", *header[left:]], [["", *r[left:]] for r in body], 0, width)
    out = [lab, rest[0], "-" * min(width, max(map(len, rest)))]
    for r, line in zip(body, rest[2:]):
        out += _pieces(" / ".join(r[:left]), width) + [line]
    return out


render_rows = _render   # a plain-text table: header, rows of cells, left-aligned columns


def fit_lines(text: str, width: int = WIDTH) -> str:
    """text with every line longer than `width` wrapped at spaces (continuations indented
    two more than the line), so nothing printed is wider than the terminal's 100 columns."""
    import textwrap

    out = []
    for line in text.split("\n"):
        if len(line) <= width:
            out.append(line)
            continue
        pad = " " * (len(line) - len(line.lstrip()))
        out += textwrap.wrap(line, width, initial_indent="", subsequent_indent=pad + "  ",
                             break_on_hyphens=False) or [line[:width]]
    return "\n".join(out)


_MODE_UNITS = {"hands": ("hand", "hands"), "games": ("game", "games")}


def _units(mode: str) -> tuple[str, str]:
    if mode not in _MODE_UNITS:
        raise ValueError(f"mode {mode!r} is unknown; modes are {', '.join(_MODE_UNITS)}")
    return _MODE_UNITS[mode]


def _n_deals(rows: Sequence[dict], pairs: Sequence[dict]) -> int:
    counts = [int(r.get("units", 0) or 0) for r in rows] + [int(p["units"]) for p in pairs]
    return max(counts, default=0)


def format_table(rows: Sequence[dict], pairs: Sequence[dict] = (), *,
                 mode: str = "hands") -> str:
    """Aligned plain-text tables: the leaderboard (ranked by mean points per hand over deals),
    then the paired differences listed by that rank, then a legend of every column.

    ``mode`` ("hands" or "games") names what a record is: the ``hands`` column counts
    hands or games, and win shares are per hand or per game.
    """
    one, many = _units(mode)
    header = ["#", "agent", many, "deals", "points", "+/-95%", "win", "+/-95%",
              "nertz", "+/-95%", "rating", "rating 95% CI"]
    body = []
    for k, r in enumerate(rows, 1):
        body.append([
            str(k), str(r["agent"]), str(r["hands"]), str(r.get("units", "-")),
            _fmt(r["points"], ".2f"), _fmt(r["points_ci"], ".2f"),
            _fmt(r["win_share"], ".3f"), _fmt(r.get("win_ci"), ".3f"),
            _fmt(r["nertz_rate"], ".3f"), _fmt(r.get("nertz_ci"), ".3f"),
            _fmt(r.get("rating"), "+.2f"),
            f"[{_fmt(r.get('rating_low'), '+.2f')}, {_fmt(r.get('rating_high'), '+.2f')}]",
        ])
    short = _short_names(header, body, 1)
    for r in body:
        r[1] = short.get(r[1], r[1])
    n = _n_deals(rows, pairs)
    lines = [(f"Leaderboard: ranked by mean points per hand (95% CI over {n} deals; "
             f"{mode} mode)")]
    lines += _render(header, body, left=2)
    lines.append("")
    ranked = orient_pairs(pairs, rows) if pairs and rows else list(pairs)
    lines.append("Paired differences A - B in points per hand, A ranked above B "
                 "(95% paired t-interval over deals)")
    if not ranked:
        lines.append("  (no pair shares at least 2 deals)")
    else:
        lines.append(f"  {len(ranked)} intervals at once: holm = Holm-adjusted over all "
                     f"{len(ranked)} pairs (family-wise alpha 0.05), sig = raw")
        pheader = ["A", "B", "deals", "diff", "95% CI", "p", "sig", "holm"]
        pbody = []
        for p in ranked:
            ci = f"[{_fmt(p['ci_low'], '+.2f')}, {_fmt(p['ci_high'], '+.2f')}]"
            pbody.append([short.get(str(p["a"]), str(p["a"])),
                          short.get(str(p["b"]), str(p["b"]))
                          + ("" if p.get("same_table", True) else " ~"),
                          str(p["units"]), _fmt(p["diff"], "+.2f"), ci,
                          _fmt(p.get("p_value"), ".3g"),
                          "*" if p["significant"] else "", "*" if p.get("holm") else ""])
        lines += _render(pheader, pbody, left=2)
    if short:
        lines += ["", "Agents named in short above (their names do not fit a "
                  f"{WIDTH}-column line):"]
        lines += [f"  {s}  {name}" for name, s in short.items()]
    lines.append("")
    lines += _legend(one, many, mode, any(not p.get("same_table", True) for p in ranked))
    return fit_lines("\n".join(lines)) + "\n"


def _short_names(header, body, col: int, width: int = WIDTH) -> dict:
    """{name: short name} of the names in column `col` too long for what the other columns
    leave of `width`: its start, '..' and a number [k], so every row stays one line and
    names that start alike stay apart (the table's legend lists them in full)."""
    others = [max([len(h)] + [len(r[k]) for r in body]) for k, h in enumerate(header) if k != col]
    budget = max(12, width - sum(others) - 2 * len(others))
    out = {}
    for r in body:
        name = r[col]
        if len(name) > budget and name not in out:
            tag = f"..[{len(out) + 1}]"
            out[name] = name[:budget - len(tag)] + tag
    return out


def _legend(one: str, many: str, mode: str, apart: bool) -> list[str]:
    per = " (a game's points divided by its hands)" if mode == "games" else ""
    out = [
        "Legend",
        f"  {many}: {many} the agent played (a team position in one {one})",
        "  deals: independent deals the agent played; every interval is over deals",
        (f"  points: mean points per hand{per}, averaged within each deal, then over deals"
        " (the ranking)"),
        "  +/-95%: half-width of the 95% Student-t interval over deals of the column to its left",
        f"  win: share of {many} won (ties share the win)",
        "  nertz: share of hands in which the agent's team called Nertz",
        "  rating: Plackett-Luce log-strength fitted over all hands (mean 0; not the ranking)",
        "  rating 95% CI: percentile bootstrap over deals",
        ("  diff / 95% CI / p: paired difference over deals, its t-interval and two-sided"
        " paired t-test"),
        "  sig: raw 95% interval excludes 0;  holm: significant after Holm's correction",
    ]
    if apart:
        out.append("  ~ after B: A and B never shared a table; diff of their per-deal means")
    return out


def _write_dicts(rows: Sequence[dict], path: Any, default_fields: Sequence[str]) -> None:
    fields = list(rows[0].keys()) if rows else list(default_fields)
    with atomic_path(path) as tmp, open(tmp, "w", newline="") as fh:
        w = csv.DictWriter(fh, fieldnames=fields, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({k: (repr(float(v)) if isinstance(v, (float, np.floating)) else v)
                        for k, v in r.items()})


def write_csv(rows: Sequence[dict], path: Any) -> None:
    """Write leaderboard rows as CSV (header = row keys; floats as repr)."""
    _write_dicts(rows, path, LEADERBOARD_FIELDS)


def write_pairs_csv(pairs: Sequence[dict], path: Any) -> None:
    """Write paired-differential rows as CSV."""
    _write_dicts(pairs, path, PAIR_FIELDS)


def _jsonable(obj: Any, digits: int) -> Any:
    if isinstance(obj, dict):
        return {str(k): _jsonable(v, digits) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_jsonable(v, digits) for v in obj]
    if isinstance(obj, np.ndarray):
        return _jsonable(obj.tolist(), digits)
    if isinstance(obj, (bool, np.bool_)):
        return bool(obj)
    if isinstance(obj, (int, np.integer)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        x = float(obj)
        if not math.isfinite(x):
            return None
        return float(format(x, f".{digits}g"))
    return obj


def write_json(obj: Any, path: Any, digits: int = 8) -> None:
    """Write ``obj`` as indented JSON.

    Floats (and numpy scalars/arrays) are rounded to ``digits`` significant
    digits, NaN/inf become ``null``; dict keys keep their insertion order
    (deterministic for the rows built here).
    """
    write_text(path, json.dumps(_jsonable(obj, digits), indent=2, allow_nan=False) + "\n")


def plot_leaderboard(rows: Sequence[dict], pairs: Sequence[dict], path: Any,
                     title: str | None = "Nertz tournament", *, mode: str = "hands") -> None:
    """Save a PNG: left, mean points per hand with 95% CI over deals per agent (leaderboard
    order = the ranking); right, heatmap of paired differences (row minus column, annotated;
    ``*`` = raw 95% interval excludes 0, ``**`` = also Holm-significant).  Long titles wrap."""
    import textwrap

    require("matplotlib", "matplotlib", "the leaderboard plot (leaderboard.png)")
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    _units(mode)
    names = [str(r["agent"]) for r in rows]
    n = len(names)
    idx = {a: i for i, a in enumerate(names)}
    mat = np.full((n, n), np.nan)
    mark = np.full((n, n), "", dtype=object)
    for p in pairs:
        i, j = idx.get(str(p["a"])), idx.get(str(p["b"]))
        if i is None or j is None:
            continue
        mat[i, j], mat[j, i] = p["diff"], -p["diff"]
        m = ("**" if p.get("holm") else "*") if p["significant"] else ""
        mark[i, j] = mark[j, i] = m

    side = max(3.0, 0.5 * n + 2.0)
    width = 2.0 * side + 1.5
    fig = Figure(figsize=(width, side + 0.6))
    FigureCanvasAgg(fig)
    ax1, ax2 = fig.subplots(1, 2)

    y = np.arange(n)
    pts = np.array([r["points"] for r in rows], dtype=float)
    err = np.array([r["points_ci"] for r in rows], dtype=float)
    err = np.where(np.isfinite(err), err, 0.0)
    ax1.errorbar(pts, y, xerr=err, fmt="o", capsize=4, color="tab:blue")
    ax1.set_yticks(y)
    ax1.set_yticklabels([f"{k}. {a}" for k, a in enumerate(names, 1)])
    ax1.invert_yaxis()
    ax1.axvline(0.0, color="grey", lw=0.8, ls=":")
    ax1.set_xlabel("mean points per hand\n(95% CI over deals; rank order)", fontsize=9)
    ax1.grid(axis="x", alpha=0.3)

    finite = mat[np.isfinite(mat)]
    vmax = float(np.max(np.abs(finite))) if finite.size else 1.0
    vmax = vmax if vmax > 0 else 1.0
    im = ax2.imshow(np.ma.masked_invalid(mat), cmap="RdBu", vmin=-vmax, vmax=vmax)
    ax2.set_xticks(y)
    ax2.set_xticklabels(names, rotation=45, ha="right")
    ax2.set_yticks(y)
    ax2.set_yticklabels(names)
    for i in range(n):
        for j in range(n):
            if np.isfinite(mat[i, j]):
                txt = f"{mat[i, j]:+.1f}" + mark[i, j]
                dark = abs(mat[i, j]) > 0.6 * vmax
                ax2.text(j, i, txt, ha="center", va="center", fontsize=8,
                         color="white" if dark else "black")
    ax2.set_title("paired diff, points per hand: row - column\n"
                  "* 95% CI excludes 0, ** also Holm", fontsize=9)
    fig.colorbar(im, ax=ax2, fraction=0.046, pad=0.04)
    if title:
        chars = max(30, int(width * 9))
        fig.suptitle("\n".join(textwrap.wrap(str(title), chars)), fontsize=11)
    fig.tight_layout()
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", dpi=100, bbox_inches="tight")
