"""Judging models: one module per judgement, each with a `nertz` command.

    grid.py          the grid of table formats        nertz judge grid
    curve.py         a run's learning curve            nertz judge curve
    head_to_head.py  agent A against agent B           nertz judge h2h
    agreement.py     same-move agreement of two agents nertz judge agreement
    exploitability.py  a trained best response's margin  nertz exploit
    probe.py         what an agent does at named decisions  nertz probe

Built on the arena (matches on duplicate deals), the statistics, the learned agents and the
training (exploitability's responders); nothing below imports it, only the CLI
(tests/test_house.py LAYERS). Published figures made with these: docs/experiments/results/.

`RowsResult`: what the grid's and the learning curve's results share (one definition).
"""
from __future__ import annotations

from pathlib import Path

from nertz_env.files import write_json, write_text


class RowsResult:
    """The rows of one judgement with its `deals`, `seed` and the `command` that made them
    (the fields of the dataclass built on it): its Markdown table (`head`, then `row_line`
    of each row), its JSON (`what` names the field of what was judged, first after the
    command; rows without their seconds, so a rerun gives the same bytes) and both written
    as STEM.json and STEM.md (`stem`)."""
    head = what = stem = ""

    @staticmethod
    def row_line(row: dict) -> str:
        raise NotImplementedError

    def table(self) -> str:
        return "\n".join([self.head] + [self.row_line(r) for r in self.rows])

    def to_dict(self) -> dict:
        return {"command": self.command, self.what: getattr(self, self.what),
                "deals": self.deals, "seed": self.seed,
                "rows": [{k: v for k, v in r.items() if k != "seconds"} for r in self.rows]}

    def json_and_table(self, folder) -> list:
        """STEM.json (every row) and STEM.md (the table) into `folder`; their paths."""
        folder = Path(folder)
        return [Path(write_json(folder / f"{self.stem}.json", self.to_dict())),
                Path(write_text(folder / f"{self.stem}.md", self.table() + "\n"))]
