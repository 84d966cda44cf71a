"""Does a run keep getting stronger? (`nertz judge curve`, docs/experiments/plateau.md): each
checkpoint after N steps against the one nearest N/4, head to head on duplicate deals.

Per (N, teams): the paired difference in points per hand of step N minus step ~N/4 (95%
t-interval over deals, the deal the unit: run_tournament's paired differentials, both at
every seating of every deal): at 2 teams the two alone; at more teams river-builder joins
them as a third agent (run_tournament's lineups of the three). Checkpoints are the run's
checkpoints/step_N.npz, and final.npz at the step its final.json records. An N is compared
when a checkpoint lies between N/6 and N/3 (the one nearest N/4) at or above `min_step`.

Same run, deals and seed, same rows: `CurveResult.write_into` writes curve.json and curve.md,
neither holding a timing.
"""
from __future__ import annotations

import dataclasses
from pathlib import Path

from nertz_env.files import json_loads_bounded, read_capped

from ..arena.tournament import run_tournament
from . import RowsResult

BASELINE = "heuristic:style=river-builder"
TABLE_HEAD = ("| teams | N | N/4 | points per hand, N minus N/4 [95% CI] | deals |\n"
              "|---|---|---|---|---|")


def checkpoints(run) -> dict:
    """{step: path} of a run's checkpoints/step_N.npz, final.npz at the step its final.json
    records (provenance.num_timesteps; read capped), sorted by step. ValueError naming the
    folder when it holds none."""
    run = Path(run)
    out = {}
    for p in (run / "checkpoints").glob("step_*.npz"):
        step = p.stem.split("_")[1]
        if step.isdigit():
            out[int(step)] = p
    final = run / "final.npz"
    if final.is_file():
        where = str(final.with_suffix(".json"))
        meta = json_loads_bounded(read_capped(final.with_suffix(".json"), 1 << 20,
                                              "model metadata"), where)
        prov = (meta.get("provenance") if isinstance(meta, dict) else None) or {}
        step = prov.get("num_timesteps", max(out, default=0) + 1)
        if isinstance(step, bool) or not isinstance(step, (int, float)) or step < 0:
            raise ValueError(f"{where}: provenance.num_timesteps {step!r} is not a step count")
        out[int(step)] = final
    if not out:
        raise ValueError(f"--run {str(run)!r} holds no checkpoints/step_N.npz nor final.npz: "
                         "name a lean PPO run folder")
    return dict(sorted(out.items()))


def pairs(ck: dict, at=(), min_step: int = 1_000_000) -> list:
    """(N, quarter) of the comparisons: every N of `at` (each must be a checkpoint's step:
    ValueError naming those that are not) or every step, with the checkpoint nearest N/4 when
    it lies in [N/6, N/3] and at or above min_step."""
    steps = list(ck)
    missing = [n for n in at if n not in ck]
    if missing:
        raise ValueError(f"--at {missing}: not a checkpoint's step of the run; it has "
                         f"{', '.join(f'{s:,}' for s in steps)}")
    out = []
    for n in list(at) or steps:
        quarter = min(steps, key=lambda s: abs(s - n / 4))
        if quarter >= min_step and n / 6 <= quarter <= n / 3:
            out.append((n, quarter))
    return out


def compare(new: str, old: str, teams: int, deals: int, seed: int, progress: bool) -> dict:
    """One row: new minus old in points per hand (river-builder the third agent above 2
    teams)."""
    agents = [new, old] if teams == 2 else [new, old, BASELINE]
    res = run_tournament(agents, teams=teams, deals=deals, seed=seed, progress=progress)
    (p,) = [p for p in res.pairs if {p["a"], p["b"]} == {new, old}]
    sign = 1.0 if p["a"] == new else -1.0
    lo, hi = sorted((sign * p["ci_low"], sign * p["ci_high"]))
    return {"diff": sign * p["diff"], "ci_low": lo, "ci_high": hi, "deals": p["units"],
            "seconds": res.elapsed_s}


def run_curve(run, teams: list, deals: int, seed: int, min_step: int = 1_000_000, at=(),
              progress: bool = False, on_row=None) -> list:
    """Every (teams, N) row of the module docstring; on_row(row) as each is done."""
    ck = checkpoints(run)
    todo = pairs(ck, at, min_step)
    rows = []
    for t in teams:
        for n, quarter in todo:
            r = compare(f"ppo:{ck[n]}", f"ppo:{ck[quarter]}", t, deals, seed, progress)
            row = {"teams": t, "step": n, "quarter_step": quarter, **r}
            rows.append(row)
            if on_row is not None:
                on_row(row)
    return rows


def row_line(r: dict) -> str:
    return (f"| {r['teams']} | {r['step']:,} | {r['quarter_step']:,} | {r['diff']:+.2f} "
            f"[{r['ci_low']:+.2f}, {r['ci_high']:+.2f}] | {r['deals']} |")


@dataclasses.dataclass
class CurveResult(RowsResult):
    run: str
    deals: int
    seed: int
    rows: list
    command: str = ""
    head, what, stem, row_line = TABLE_HEAD, "run", "curve", staticmethod(row_line)

    def write_into(self, folder, plot: bool = False) -> list:
        """curve.json (every row) and curve.md (the table) into `folder`."""
        return self.json_and_table(folder)


__all__ = ["CurveResult", "checkpoints", "pairs", "run_curve"]
