"""The effects of an experiment: per-deal outcomes of the focal seats, paired intervals,
and their table (effects.md, the terminal) and forest plot.

- Outcomes, per focal seat and hand (games mode: per game): `points` (its points per hand),
  `relative` (its points minus the mean of the other teams' at the table, the project's one
  formula nertz_env.core.scoring.relative_points), `win` (hands mode: its share of the
  hand's top score; games mode: it won the game to target_score, R30).
- The unit is the deal: per deal, the treatment's mean outcome over its seats and seatings
  minus the baseline's (agents/stats/estimators.py deal_means); the effect is the mean over
  deals with a Student-t 95% interval and a two-sided t-test p-value. `relative effect`: the
  effect in percent of the baseline's mean points per hand (win: of its mean win share),
  with a delta-method interval over deals; none when the baseline's mean is not clearly
  above 0.

Plays nothing: agents/arena/experiment.py hands it the records.
"""
from __future__ import annotations

import dataclasses
import math

import numpy as np

from nertz_env.core.scoring import relative_points
from nertz_env.files import atomic_path
from nertz_env.optional import require

from ..stats import estimators as stats
from ..stats import report
from ..stats.records import HandRecords
from .experiment_spec import OUTCOME_LABEL, OUTCOMES, Cell, ExperimentSpec


def outcome_values(records: HandRecords, outcome: str) -> np.ndarray:
    """[M, T] the outcome of every team position of every record (module docstring)."""
    if outcome == "points":
        return records.score
    if outcome == "win":
        return records.win
    if outcome == "relative":
        return relative_points(records.score, records.score.sum(axis=1, keepdims=True),
                               records.num_teams)
    raise ValueError(f"outcome {outcome!r} is unknown; outcomes are {', '.join(OUTCOMES)}")


def effect_interval(treat: np.ndarray, base: np.ndarray, scale: np.ndarray) -> dict:
    """Paired effect over deals: per-deal treatment and baseline means (NaN-free, same deals)
    and the per-deal denominator of the relative effect (the baseline's mean points or win)."""
    d = treat - base
    n = d.shape[0]
    diff, half = stats.mean_ci(d)
    sd = float(d.std(ddof=1)) if n > 1 else float("nan")
    if n > 1 and sd > 0:
        p = stats.t_pvalue(diff / (sd / math.sqrt(n)), n - 1)
    else:
        p = float("nan") if n < 2 else (1.0 if diff == 0 else 0.0)
    out = {"deals": int(n), "baseline_mean": float(base.mean()), "treatment_mean": float(treat.mean()),
           "effect": diff, "ci_low": diff - half, "ci_high": diff + half, "half_width": half,
           "p": p, "relative_pct": None, "relative_ci_low": None, "relative_ci_high": None}
    b_mean, b_half = stats.mean_ci(scale)
    if n > 1 and b_mean > 0 and b_mean - b_half > 0:       # a denominator clearly above 0
        ratio = diff / b_mean
        z = (d - ratio * scale) / b_mean                    # delta method, clustered by deal
        r_half = stats.t_quantile_975(n - 1) * float(z.std(ddof=1)) / math.sqrt(n)
        out.update(relative_pct=100 * ratio, relative_ci_low=100 * (ratio - r_half),
                   relative_ci_high=100 * (ratio + r_half))
    # each side's own mean over deals: what an arm scores, not only how it differs (a
    # fast seat's relative points among copies of itself is the worth of its speed)
    out["baseline_half_width"] = stats.mean_ci(base)[1] if n > 1 else float("nan")
    out["treatment_half_width"] = stats.mean_ci(treat)[1] if n > 1 else float("nan")
    return out


def cell_effects(spec: ExperimentSpec, cell: Cell, plan, records: HandRecords,
                 hands: np.ndarray) -> list:
    """One row per (treatment, outcome) of a cell: effect_interval of the per-deal means of
    the treatment's seats against the baseline's (plan: experiment.py CellPlan)."""
    K = len(spec.treatments)
    n_agents = len(plan.specs)
    means = {o: stats.deal_means(records, n_agents, outcome_values(records, o))
             for o in set(spec.outcomes) | {"points", "win"}}
    rows = []
    for k, tname in enumerate(spec.treatments):
        for o in spec.outcomes:
            m = means[o]
            scale = means["win" if o == "win" else "points"][:, K]
            row = {"treatment": tname, "treatment_spec": spec.treatments[tname],
                   "baseline": spec.baseline, **dataclasses.asdict(cell), "outcome": o}
            row.update(effect_interval(m[:, k], m[:, K], scale))
            played = records.lineup == k if cell.opponents == "half" else np.isin(records.lineup, [k, K])
            row["hands"] = int(hands[played].sum())       # the hands behind this row
            rows.append(row)
    return rows


# ---------------------------------------------------------------------- reports
def _pm(x, spec=".3f"):
    return "-" if x is None or not math.isfinite(x) else format(x, "+" + spec)


def _mean(row, side) -> str:
    """An arm's mean with its 95% half-width over deals (rows written before 2026-12-03
    hold the mean only)."""
    half = row.get(f"{side}_half_width")
    m = f"{row[f'{side}_mean']:.3f}"
    return m if half is None or not math.isfinite(half) else f"{m} +-{half:.3f}"


def format_effects(rows: list, spec: ExperimentSpec | None = None, *,
                   markdown: bool = False) -> str:
    """The effects table: one line per row; columns that never vary go to the header.
    markdown=True: the same table as Markdown (effects.md)."""
    if not rows:
        return "(no rows)"
    keys = ["treatment", "opponents", "teams", "speeds", "rules", "mode", "outcome"]
    varying = [k for k in keys if len({str(r[k]) for r in rows}) > 1 or k == "treatment"]
    fixed = [k for k in keys if k not in varying]
    head = varying + ["deals", "baseline", "treatment_mean", "effect [95% CI]",
                      "relative % [95% CI]", "p", "Holm"]
    body = []
    for r in rows:
        rel = ("-" if r["relative_pct"] is None else
               f"{r['relative_pct']:+.1f} [{r['relative_ci_low']:+.1f}, {r['relative_ci_high']:+.1f}]")
        verdict = "-" if not math.isfinite(r["p"]) else (
            ("better" if r["effect"] > 0 else "worse") if r["holm"] else "n.s.")
        body.append([str(r[k]) for k in varying] + [
            str(r["deals"]), _mean(r, "baseline"), _mean(r, "treatment"),
            f"{_pm(r['effect'])} [{_pm(r['ci_low'])}, {_pm(r['ci_high'])}]", rel,
            "-" if not math.isfinite(r["p"]) else f"{r['p']:.2g}", verdict])
    lines = []
    if fixed:
        lines.append("all rows: " + ", ".join(f"{k} {rows[0][k]}" for k in fixed))
    head = [("baseline mean" if h == "baseline" else "treatment mean" if h == "treatment_mean"
             else h) for h in head]
    if markdown:
        if fixed:
            lines.append("")
        lines += ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
        lines += ["| " + " | ".join(c.replace("|", "\\|") for c in r) + " |" for r in body]
    else:
        lines += report.render_rows(head, body, left=len(varying))
    n = len(rows)
    base = spec.baseline if spec else rows[0]["baseline"]
    lines += ["",
              f"effect: the treatment's outcome minus the baseline's ({base}) in the same seat "
              "on the same deals with the same opponents; 95% CI over deals (the unit).",
              "outcomes: points = points per hand; relative = points per hand minus the mean "
              "of the other teams at the table; win = win share (games mode: games won).",
              "means: each arm's mean outcome in the focal seat, +- its 95% half-width over "
              "deals.",
              "relative %: the effect as a percentage of the baseline's mean points per hand "
              "(win: of its win share).",
              f"Holm: {n} intervals are shown; 'better'/'worse' = significant after Holm's "
              f"correction over all {n} rows (family-wise 5%), 'n.s.' = not."]
    return "\n".join(lines) if markdown else report.fit_lines("\n".join(lines))


def plot_forest(rows: list, path, title: str = "",
                caption: str = "effect (treatment - baseline); filled: significant after Holm"
                ) -> None:
    """A forest plot: one panel per outcome, one line per (treatment, cell), effect and 95%
    interval; filled markers are those whose `holm` is true (Holm-significant unless the
    caption says otherwise), a dotted line marks no effect."""
    import textwrap

    require("matplotlib", "matplotlib", "the forest plot (forest.png)")
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure
    from matplotlib.ticker import MaxNLocator

    outcomes = list(dict.fromkeys(r["outcome"] for r in rows))
    keys = ["treatment", "opponents", "teams", "speeds", "rules", "mode"]
    varying = [k for k in keys if len({str(r[k]) for r in rows}) > 1 or k == "treatment"]
    labels = list(dict.fromkeys(
        "  ".join(f"{r[k]}{' teams' if k == 'teams' else ''}" for k in varying) for r in rows))
    n = len(labels)
    height = max(2.5, 0.28 * n + 1.6)
    width = 4.0 + 3.2 * len(outcomes)
    fig = Figure(figsize=(width, height), layout="constrained")
    FigureCanvasAgg(fig)
    axes = fig.subplots(1, len(outcomes), sharey=True, squeeze=False)[0]
    pos = {lab: i for i, lab in enumerate(labels)}
    for ax, o in zip(axes, outcomes):
        for r in rows:
            if r["outcome"] != o:
                continue
            y = pos["  ".join(f"{r[k]}{' teams' if k == 'teams' else ''}" for k in varying)]
            ax.plot([r["ci_low"], r["ci_high"]], [y, y], color="tab:blue", lw=1.5)
            ax.plot([r["effect"]], [y], "o", color="tab:blue",
                    mfc="tab:blue" if r["holm"] else "white", ms=5)
        ax.axvline(0.0, color="grey", ls=":", lw=1)
        ax.set_title(OUTCOME_LABEL[o], fontsize=9)
        ax.grid(axis="x", alpha=0.3)
        ax.xaxis.set_major_locator(MaxNLocator(nbins=5))     # tick labels that never collide
        ax.tick_params(axis="x", labelsize=8)
    axes[0].set_yticks(range(n))
    axes[0].set_yticklabels(labels, fontsize=8)
    axes[0].invert_yaxis()
    # constrained layout places the title, the panels' titles and the caption without overlap
    fig.supxlabel(caption, fontsize=8)
    if title:
        fig.suptitle("\n".join(textwrap.wrap(title, max(40, int(width * 11)))), fontsize=10)
    with atomic_path(path) as tmp:
        fig.savefig(tmp, format="png", dpi=100, metadata={"Software": None})
