"""`nertz export`: a saved model to the safe format (plain arrays + JSON, read without pickle:
agents/learned/weights.py) and, with --onnx, to ONNX with the action mask as an input.

Everything is checked before anything is written: every path it writes (OUT.npz, OUT.json,
--onnx FILE) is compared, resolved (symlinks followed, hard links too), with every file it
reads (MODEL's files, the run info beside an SB3 zip) and with each other; the run info's
fields, --teams against the model's format and the ONNX graph itself (a constraint it cannot
apply is refused) come next; then the files are written, each whole or not at all."""
from __future__ import annotations

import argparse
import json
import os
import textwrap
from pathlib import Path

from .common import int_at_least

MAX_RUN_INFO = 1 << 20


def _run_infos(model: Path) -> list:
    """The files `nertz train` leaves beside a checkpoint (step_N.json) or in its run folder
    (config.json) that export reads a zip's table and rules from, in order."""
    return [p for p in (model.with_suffix(".json"), model.parent / "config.json",
                        model.parent.parent / "config.json") if p != model]


def _no_duplicates(what: str):
    def pairs(items):
        seen = {}
        for k, v in items:
            if k in seen:
                raise ValueError(f"{what} holds the key {k[:80]!r} twice (duplicate keys are "
                                 "refused)")
            seen[k] = v
        return seen
    return pairs


def _read_run_info(info: Path):
    """The JSON of a run info file read strictly: size, depth, no NaN, no duplicate keys
    (nertz_env/files' strict reader where it has one)."""
    from nertz_env.files import bounded, read_capped
    what = f"run info {str(info)!r}"
    raw = read_capped(info, MAX_RUN_INFO, "run info")
    strict = getattr(bounded, "json_loads_strict", None)
    if strict is not None:
        return strict(raw, what)
    bounded.json_loads_bounded(raw, what)           # depth, constants and syntax first
    return json.loads(raw, object_pairs_hook=_no_duplicates(what))


def _run_table(model: Path):
    """(table, rules) recorded by `nertz train` beside a checkpoint (step_N.json) or in the run
    folder (config.json), else (None, None). A file that records `rules` must hold rules a
    table can be built from: anything else is one ValueError naming the file and field."""
    from nertz_env.config import RulesConfig
    for info in _run_infos(model):
        if not info.is_file():
            continue
        saved = _read_run_info(info)
        if not isinstance(saved, dict) or "rules" not in saved:
            continue                                # not a run's file: the next one
        rules = saved["rules"]
        where = f"run info {str(info)!r} (read for MODEL's table)"
        if not isinstance(rules, dict):
            raise ValueError(f"{where}: rules must be an object of RulesConfig fields "
                             f"(got {type(rules).__name__})")
        fields = {k: v for k, v in rules.items() if k != "num_seats"}     # derived
        try:
            config = RulesConfig(**fields)
        except TypeError:
            unknown = sorted(set(fields) - set(RulesConfig.__dataclass_fields__))
            raise ValueError(f"{where}: rules.{unknown[0] if unknown else '?'} is not a "
                             "RulesConfig field") from None
        except ValueError as exc:
            raise ValueError(f"{where}: {str(exc).replace('RulesConfig.', 'rules.', 1)}") \
                from None
        if "num_seats" in rules and rules["num_seats"] != config.num_seats:
            raise ValueError(f"{where}: rules.num_seats must be {config.num_seats} (the seats "
                             f"of its team_sizes), got {rules['num_seats']!r}")
        return {"teams": config.num_teams, "team_size": max(config.sizes)}, rules
    return None, None


def load_any(model: str, trust: bool = False, teams=None, team_size: int = 1):
    """(meta, arrays) of MODEL: a safe-format model as it is, an SB3 zip converted (read
    without unpickling unless trust)."""
    from agents.learned.weights import is_weights, load_weights
    if is_weights(model):
        return load_weights(model)
    from agents.learned.sb3_zip import load_sb3, policy_weights, sb3_path
    path = sb3_path(model)
    if teams is not None:
        import dataclasses

        from nertz_env.config import RulesConfig
        table = {"teams": teams, "team_size": team_size}
        rules = None if team_size != 1 else dataclasses.asdict(RulesConfig(num_teams=teams))
    else:
        table, rules = _run_table(path)
    return policy_weights(load_sb3(path, trust=trust), source=path, table=table, rules=rules)


def _model_files(model: str) -> list:
    """The files export reads for MODEL, each checked to be a regular file (one line naming
    it otherwise)."""
    from agents.learned.weights import is_weights, weight_files
    if not is_weights(model):
        from agents.learned.sb3_zip import sb3_path
        zp = sb3_path(model)                    # a directory or FIFO: its own line
        return [zp, *(p for p in _run_infos(zp) if p.exists())]
    files = list(weight_files(model))
    for f in files:
        if f.is_dir():
            raise ValueError(f"{f} is a directory, not a model file (the safe format is "
                             "NAME.npz with NAME.json beside it)")
        if f.exists() and not f.is_file():
            raise ValueError(f"{f} is not a regular file (a FIFO, socket or device); give a "
                             "model file")
        if not f.is_file():
            raise ValueError(f"{f} not found (the safe format is NAME.npz with NAME.json "
                             "beside it; nertz export writes both)")
    return files


def _same(a: Path, b: Path) -> bool:
    """Whether two paths name one file: equal once resolved (symlinks followed), or one
    file reached by two names (a hard link)."""
    if a.resolve() == b.resolve():
        return True
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def check_paths(args, inputs: list) -> list:
    """[(label, path)] export will write, after refusing (one line) any that is a file it
    reads, another of its own outputs, a directory, or in a folder that does not exist."""
    from agents.learned.weights import weight_files
    outputs = []
    if args.out is not None:
        outputs += [(f"OUT {args.out!r}", p) for p in weight_files(args.out)]
    if args.onnx is not None:
        outputs.append((f"--onnx {args.onnx!r}", Path(args.onnx)))
    model_own = set(inputs[:2]) if _is_weights(args.model) else {inputs[0]}
    for i, (label, path) in enumerate(outputs):
        for src in inputs:
            if not _same(path, src):
                continue
            if src in model_own and label.startswith("OUT"):
                raise ValueError(f"{label} is MODEL itself; give another name")
            whose = "MODEL's own file" if src in model_own else "the run info read beside MODEL"
            what = whose if _plain(path) == _plain(src) else f"{src}, {whose}"
            raise ValueError(f"{label} would write over {what}: export never writes over a "
                             "file it reads; give another name")
        for other, p in outputs[:i]:
            if _same(path, p):
                raise ValueError(f"{label} is one of the files {other} writes ({p.name}); "
                                 "give the graph another name")
        if path.is_dir():
            raise ValueError(f"{label}: {path} is a directory; give a file name")
        if not path.parent.is_dir():
            raise ValueError(f"{label}: its folder {path.parent} does not exist")
    return outputs


def _plain(path: Path) -> str:
    return os.path.normpath(os.path.abspath(path))


def _is_weights(model) -> bool:
    from agents.learned.weights import is_weights
    return is_weights(model)


def _named(exc: OSError, *targets: Path) -> OSError:
    """The OSError of a write to one of `targets`, naming that target where it named the
    temporary file beside it (nertz_env/files/atomic.py: .NAME.XXXX.part)."""
    name = Path(exc.filename).name if exc.filename is not None else None
    for target in targets:
        if name is None or name.startswith(f".{target.name}.") and name.endswith(".part"):
            return OSError(exc.errno, exc.strerror or str(exc), str(target))
    return exc


def cmd_export(args) -> int:
    if args.out is None and args.onnx is None:
        raise ValueError("nertz export: give OUT (NAME.npz: the safe format) and/or --onnx "
                         "FILE.onnx")
    if args.team_size is not None and args.teams is None:
        raise ValueError("--team-size goes with --teams (the table an SB3 zip was trained "
                         "for); give both or neither")
    if args.onnx is not None:          # before anything is read or written
        from agents.learned.onnx_export import require_onnx
        require_onnx()
    inputs = _model_files(args.model)
    if args.teams is not None and _is_weights(args.model):
        raise ValueError(f"--teams/--team-size are for an SB3 zip, whose file does not say "
                         f"the table it was trained for: a safe-format model carries its own "
                         f"table and rules in {inputs[1]} and is exported as it is; leave "
                         "them out")
    check_paths(args, inputs)
    meta, arrays = load_any(args.model, trust=args.trust, teams=args.teams,
                            team_size=args.team_size or 1)
    graph = None
    if args.onnx is not None:          # built (and any refusal made) before a file is written
        from agents.learned.onnx_export import onnx_bytes
        graph = onnx_bytes(meta, arrays, f"model {args.model!r}")
    if args.out is not None:
        from agents.learned.weights import save_weights, weight_files
        npz, js = weight_files(args.out)
        try:
            save_weights(args.out, meta, arrays)
        except OSError as exc:
            raise _named(exc, npz, js) from None
        print(f"wrote {npz} and {js} (play it: --agents ppo:{npz}; no pickle, numpy only)")
    if graph is not None:
        from nertz_env.files import write_bytes
        try:
            write_bytes(args.onnx, graph)
        except OSError as exc:
            raise _named(exc, Path(args.onnx)) from None
        print(f"wrote {args.onnx} (inputs observation float32 [N, {meta['observation_size']}] "
              f"and action_mask int8 [N, {meta['action_size']}]; outputs action, log_probs"
              + (f"; plays under its constraint {meta['constraint']}"
                 if meta.get("constraint") and meta["architecture"]["action_net"] == "masked"
                 else "") + ")")
    return 0


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
            "extra: pip install -e '.[export]'); a model that plays under a constraint "
            "(useful-shifts, never-withhold) plays it inside the graph, and one under a "
            "constraint the graph cannot apply is refused.",
            "Nothing is written over a file export reads (MODEL's files, the run info beside "
            "a zip), and OUT and --onnx must differ; every check comes before any write.")),
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
                   help="an SB3 zip only: the table size it was trained for, recorded in the "
                        "JSON (default: read from the run's config.json / step_N.json when "
                        "beside MODEL); a safe-format model carries its own table, so "
                        "--teams with one is refused")
    e.add_argument("--team-size", type=int_at_least(1, 2), default=None,
                   help="with --teams: players per team it was trained for (default 1)")
    e.add_argument("--trust", action="store_true",
                   help="load MODEL with SB3's own load, which unpickles it and so runs any "
                        "code stored in it: only for files whose author you trust")
    e.set_defaults(func=cmd_export)
    return e
