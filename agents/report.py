"""Reports of Nertz bot tournaments: the plain-text tables, the CSV and JSON files and the
leaderboard plot of the rows that agents/stats.py computes (leaderboard(),
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

from .stats import LEADERBOARD_FIELDS, PAIR_FIELDS

__all__ = [
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


def _render(header: Sequence[str], body: list[list[str]], left: int) -> list[str]:
    widths = [len(h) for h in header]
    for r in body:
        widths = [max(w, len(c)) for w, c in zip(widths, r)]

    def line(cells: Sequence[str]) -> str:
        return "  ".join(c.ljust(w) if k < left else c.rjust(w)
                         for k, (c, w) in enumerate(zip(cells, widths))).rstrip()

    out = [line(header), "  ".join("-" * w for w in widths)]
    out += [line(r) for r in body]
    return out


def format_table(rows: Sequence[dict], pairs: Sequence[dict] = ()) -> str:
    """Aligned plain-text tables: the leaderboard, then the paired
    differentials (``*`` marks a 95% interval excluding 0)."""
    header = ["#", "agent", "hands", "points", "+/-95%", "win", "nertz",
              "mu", "sigma", "ordinal"]
    body = []
    for k, r in enumerate(rows, 1):
        body.append([
            str(k), str(r["agent"]), str(r["hands"]),
            _fmt(r["points"], ".2f"), _fmt(r["points_ci"], ".2f"),
            _fmt(r["win_share"], ".3f"), _fmt(r["nertz_rate"], ".3f"),
            _fmt(r["mu"], ".2f"), _fmt(r["sigma"], ".2f"), _fmt(r["ordinal"], ".2f"),
        ])
    lines = ["Leaderboard (points per hand, 95% CI over (lineup, deal) units)"]
    lines += _render(header, body, left=2)
    lines.append("")
    lines.append("Paired differentials (A - B points per hand, 95% paired t-interval)")
    if not pairs:
        lines.append("  (no pair shares at least 2 units)")
    else:
        pheader = ["A", "B", "units", "diff", "95% CI", "sig"]
        pbody = []
        for p in pairs:
            ci = f"[{_fmt(p['ci_low'], '+.2f')}, {_fmt(p['ci_high'], '+.2f')}]"
            pbody.append([str(p["a"]), str(p["b"]), str(p["units"]),
                          _fmt(p["diff"], "+.2f"), ci,
                          "*" if p["significant"] else ""])
        lines += _render(pheader, pbody, left=2)
    return "\n".join(lines) + "\n"


def _write_dicts(rows: Sequence[dict], path: Any, default_fields: Sequence[str]) -> None:
    fields = list(rows[0].keys()) if rows else list(default_fields)
    with open(path, "w", newline="") as fh:
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
    with open(path, "w") as fh:
        json.dump(_jsonable(obj, digits), fh, indent=2, allow_nan=False)
        fh.write("\n")


def plot_leaderboard(rows: Sequence[dict], pairs: Sequence[dict], path: Any,
                     title: str | None = "Nertz tournament") -> None:
    """Save a PNG: left, mean points per hand with 95% CI per agent
    (leaderboard order); right, heatmap of paired differentials (row minus
    column, annotated; ``*`` = significant)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    names = [str(r["agent"]) for r in rows]
    n = len(names)
    idx = {a: i for i, a in enumerate(names)}
    mat = np.full((n, n), np.nan)
    sig = np.zeros((n, n), dtype=bool)
    for p in pairs:
        i, j = idx.get(str(p["a"])), idx.get(str(p["b"]))
        if i is None or j is None:
            continue
        mat[i, j], mat[j, i] = p["diff"], -p["diff"]
        sig[i, j] = sig[j, i] = bool(p["significant"])

    side = max(3.0, 0.5 * n + 2.0)
    fig = Figure(figsize=(2.0 * side + 1.5, side))
    FigureCanvasAgg(fig)
    ax1, ax2 = fig.subplots(1, 2)

    y = np.arange(n)
    pts = np.array([r["points"] for r in rows], dtype=float)
    err = np.array([r["points_ci"] for r in rows], dtype=float)
    err = np.where(np.isfinite(err), err, 0.0)
    ax1.errorbar(pts, y, xerr=err, fmt="o", capsize=4, color="tab:blue")
    ax1.set_yticks(y)
    ax1.set_yticklabels(names)
    ax1.invert_yaxis()
    ax1.axvline(0.0, color="grey", lw=0.8, ls=":")
    ax1.set_xlabel("mean points per hand (95% CI)")
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
                txt = f"{mat[i, j]:+.1f}" + ("*" if sig[i, j] else "")
                dark = abs(mat[i, j]) > 0.6 * vmax
                ax2.text(j, i, txt, ha="center", va="center", fontsize=8,
                         color="white" if dark else "black")
    ax2.set_title("paired diff: row - column (* = 95% significant)", fontsize=9)
    fig.colorbar(im, ax=ax2, fraction=0.046, pad=0.04)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(path, format="png", dpi=100)
