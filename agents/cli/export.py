"""`nertz export`: a saved model to the safe format (plain arrays + JSON, read without pickle:
agents/learned/weights.py) and, with --onnx, to ONNX with the action mask as an input."""
from __future__ import annotations

import argparse
import dataclasses
import textwrap
from pathlib import Path

from .common import int_at_least


def _run_table(model: Path):
    """(table, rules) recorded by `nertz train` beside a checkpoint (step_N.json) or in the run
    folder (config.json), else (None, None)."""
    from nertz_env.files import json_loads_bounded, read_capped
    for info in (model.with_suffix(".json"), model.parent / "config.json",
                 model.parent.parent / "config.json"):
        if info.is_file() and info != model:
            saved = json_loads_bounded(read_capped(info, 1 << 20, "run info"), str(info))
            rules = saved.get("rules") if isinstance(saved, dict) else None
            if isinstance(rules, dict) and isinstance(rules.get("num_teams"), int):
                sizes = rules.get("team_sizes") or [1]
                return {"teams": rules["num_teams"], "team_size": max(sizes)}, rules
    return None, None


def load_any(model: str, trust: bool = False, teams=None, team_size: int = 1):
    """(meta, arrays) of MODEL: a safe-format model as it is, an SB3 zip converted (read
    without unpickling unless trust)."""
    from agents.learned.weights import is_weights, load_weights
    if is_weights(model):
        return load_weights(model)
    from agents.learned.sb3_zip import load_sb3, policy_weights, sb3_path
    path = sb3_path(model)
    table, rules = _run_table(path)
    if teams is not None:
        from nertz_env.config import RulesConfig
        table = {"teams": teams, "team_size": team_size}
        rules = None if team_size != 1 else dataclasses.asdict(RulesConfig(num_teams=teams))
    return policy_weights(load_sb3(path, trust=trust), source=path, table=table, rules=rules)


def cmd_export(args) -> int:
    if args.out is None and args.onnx is None:
        raise ValueError("nertz export: give OUT (NAME.npz: the safe format) and/or --onnx "
                         "FILE.onnx")
    if args.onnx is not None:          # before anything is read or written
        from agents.learned.onnx_export import require_onnx
        require_onnx()
    meta, arrays = load_any(args.model, trust=args.trust, teams=args.teams,
                            team_size=args.team_size)
    if args.out is not None:
        from agents.learned.weights import save_weights, weight_files
        npz, js = weight_files(args.out)
        if npz.resolve() in {p.resolve() for p in weight_files(args.model)}:
            raise ValueError(f"OUT {args.out!r} is MODEL itself; give another name")
        _writable(npz)
        save_weights(args.out, meta, arrays)
        print(f"wrote {npz} and {js} (play it: --agents ppo:{npz}; no pickle, numpy only)")
    if args.onnx is not None:
        from agents.learned.onnx_export import write_onnx
        _writable(Path(args.onnx))
        write_onnx(meta, arrays, args.onnx)
        print(f"wrote {args.onnx} (inputs observation float32 [N, {meta['observation_size']}] "
              f"and action_mask int8 [N, {meta['action_size']}]; outputs action, log_probs)")
    return 0


def _writable(path: Path) -> None:
    if not path.parent.is_dir():
        raise ValueError(f"{path}: its folder {path.parent} does not exist")


def add_parser(sub) -> argparse.ArgumentParser:
    e = sub.add_parser(
        "export", help="a model to the safe format (no pickle) and/or ONNX",
        description="\n\n".join(textwrap.fill(t, 90) for t in (
            "Convert a saved model to the safe format: NAME.npz (plain float32 arrays) and "
            "NAME.json (architecture, sizes, the table it was trained for, provenance), which "
            "`ppo:NAME.npz` and the shipped `learned` models read without running any code "
            "(numpy only; docs/models.md).",
            "A model file from someone else can run code on your machine: an SB3 zip holds "
            "pickled objects that SB3's own load (and `ppo:PATH,trust=yes`) unpickles, and "
            "an RLlib checkpoint is unpickled by RLlib itself. export reads an SB3 zip "
            "without unpickling anything (a stock PPO / MaskablePPO MlpPolicy) and refuses "
            "anything else unless --trust; share and load models as NAME.npz + NAME.json.",
            "--onnx writes an ONNX graph with the action mask as an input (needs the export "
            "extra: pip install -e '.[export]').")),
        epilog="examples:\n"
               "  nertz export runs/t1/final.zip runs/t1/final.npz\n"
               "  nertz export runs/t1/final.zip runs/t1/final.npz --onnx runs/t1/final.onnx\n"
               "  nertz export agents/learned/models/learned_2teams.npz --onnx learned2.onnx",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    e.add_argument("model", metavar="MODEL",
                   help="an SB3 model zip (model.save(), nertz train) or a .npz/.json model")
    e.add_argument("out", metavar="OUT", nargs="?",
                   help="NAME or NAME.npz: writes NAME.npz and NAME.json")
    e.add_argument("--onnx", metavar="FILE", help="also write an ONNX graph to FILE")
    e.add_argument("--teams", type=int_at_least(2, 8), default=None,
                   help="the table size it was trained for, recorded in the JSON (default: "
                        "read from the run's config.json / step_N.json when beside MODEL)")
    e.add_argument("--team-size", type=int_at_least(1, 2), default=1,
                   help="with --teams: players per team it was trained for (default 1)")
    e.add_argument("--trust", action="store_true",
                   help="load MODEL with SB3's own load, which unpickles it and so runs any "
                        "code stored in it: only for files whose author you trust")
    e.set_defaults(func=cmd_export)
    return e
