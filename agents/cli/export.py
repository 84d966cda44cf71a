"""`nertz export`: a saved model to the safe format (plain arrays + JSON, read without pickle:
agents/learned/weights.py) and, with --onnx, to ONNX with the action mask as an input.

Everything is checked before anything is written: OUT must be a path stem (check_out_name);
every path it writes (OUT.npz, OUT.json, --onnx FILE) is compared, resolved (symlinks
followed, hard links too), with every file it reads (MODEL's files, the run info beside an
SB3 zip) and with each other, and must be new, or an existing regular file with --overwrite
(never a directory, FIFO, socket or device, --overwrite or not); the run info's fields,
--teams/--trust against the model's format and the ONNX graph itself (a constraint it cannot
apply is refused) come next. Then every output is written to a temporary file beside its
target and, once all are whole, each is renamed over its target (stage/commit): all appear
or none, and a failure or Ctrl-C at any point removes the temporaries and leaves every old
file as it was."""
from __future__ import annotations

import argparse
import json
import os
import secrets
import stat
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


def _model_files(model: str, run_info: bool = True) -> list:
    """The files export reads for MODEL, each checked to be a regular file (one line naming
    it otherwise); a zip's run info only when it is read (run_info: no --teams)."""
    from agents.learned.weights import is_weights, weight_files
    if not is_weights(model):
        from agents.learned.sb3_zip import sb3_path
        zp = sb3_path(model)                    # a directory or FIFO: its own line
        return [zp, *(p for p in _run_infos(zp) if run_info and p.exists())]
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


OUT_RULE = ("OUT must be a path stem, not a folder: 'models/mine' (or 'models/mine.npz') "
            "writes models/mine.npz and models/mine.json")


def check_out_name(out: str) -> None:
    """Refuse (one line, exit 2) an OUT that is not a path stem: empty, a folder (a trailing
    slash, '.', '..' or an existing directory), a name with nothing before its suffix or
    starting with '.' (a hidden file: '' wrote '..npz', '.npz' wrote '.npz.npz'), a doubled
    suffix, or a graph/zip name. A trailing .npz or .json is stripped (documented)."""
    seps = tuple(c for c in (os.sep, os.altsep) if c)
    name = Path(out).name
    stem = name[:-len(Path(name).suffix)] if Path(name).suffix in (".npz", ".json") else name
    why = None
    if out == "":
        why = "is empty"
    elif out.endswith(seps) or name in ("", ".", "..") or os.path.isdir(out):
        why = "is a folder"
    elif stem in ("", ".npz", ".json"):
        why = "has no name before its suffix"
    elif stem.startswith("."):
        why = "is a hidden name (starts with '.')"
    elif Path(stem).suffix in (".npz", ".json"):
        why = f"ends in a doubled suffix (it would write {stem}.npz)"
    elif Path(stem).suffix in (".onnx", ".zip"):
        why = (f"ends in {Path(stem).suffix} (it would write {stem}.npz; the graph goes to "
               "--onnx FILE)")
    if why is not None:
        raise ValueError(f"OUT {out!r} {why}: {OUT_RULE}")


def _check_target(label: str, path: Path, overwrite: bool) -> None:
    """A path export writes: new, or (with --overwrite) an existing regular file or a link;
    never a directory, FIFO, socket or device, nor a link to one (it would be replaced by a
    file), --overwrite or not."""
    if not os.path.lexists(path):
        return
    try:
        mode = os.stat(path).st_mode        # a link: what it points at
    except OSError:
        mode = None                         # a dangling link: only the link is replaced
    if mode is not None and stat.S_ISDIR(mode):
        raise ValueError(f"{label}: {path} is a directory; give a file name")
    if mode is not None and not stat.S_ISREG(mode):
        raise ValueError(f"{label}: {path} is not a regular file (a FIFO, socket or device); "
                         "export writes only regular files, --overwrite or not; give "
                         "another name")
    if not overwrite:
        raise ValueError(f"{label}: {path} exists; export never replaces a file unless "
                         "--overwrite is given; give a new name or add --overwrite")


def check_paths(args, inputs: list) -> list:
    """[(label, path)] export will write, after refusing (one line) any that is a file it
    reads, another of its own outputs, a directory or other non-regular file, an existing
    file without --overwrite; an OSError (exit 1) for a folder that does not exist."""
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
        if not path.parent.is_dir():                 # I/O, not a bad value: exit 1
            import errno
            code = errno.ENOTDIR if path.parent.exists() or any(
                q.is_file() for q in path.parents) else errno.ENOENT
            why = ("is not a folder (a file is in the way)" if code == errno.ENOTDIR
                   else "does not exist (export writes into an existing folder)")
            raise OSError(code, f"{label}: its folder {why}", str(path.parent))
        _check_target(label, path, getattr(args, "overwrite", False))
    return outputs


def _plain(path: Path) -> str:
    return os.path.normpath(os.path.abspath(path))


def _is_weights(model) -> bool:
    from agents.learned.weights import is_weights
    return is_weights(model)


def _beside(target: Path, tag: str) -> Path:
    """A new hidden name beside target (same folder, so same file system: os.replace is a
    rename)."""
    while True:
        p = target.parent / f".{target.name}.{secrets.token_hex(6)}.{tag}"
        if not os.path.lexists(p) and not os.path.lexists(f"{p}.npz") \
                and not os.path.lexists(f"{p}.json"):
            return p


def _named(exc: OSError, staged: list) -> OSError:
    """The OSError of a write or rename, naming the target where it named a temporary file
    beside it (ours, or nertz_env/files/atomic.py's .NAME.XXXX.part inside it)."""
    name = Path(exc.filename).name if exc.filename is not None else None
    for tmp, target in staged:
        if name is None or tmp.name in name or name == target.name:
            return OSError(exc.errno, exc.strerror or str(exc), str(target))
    return exc


def stage(out, meta: dict, arrays: dict, onnx, graph) -> list:
    """[(temporary, target)]: every output written whole to a temporary beside its target;
    on any failure (Ctrl-C included) the temporaries written so far are removed."""
    from agents.learned.weights import save_weights, weight_files
    from nertz_env.files import write_bytes
    staged = []
    try:
        if out is not None:
            npz, js = weight_files(out)
            tmp = _beside(npz, "part")                # save_weights adds .npz and .json
            staged += [(Path(f"{tmp}.npz"), npz), (Path(f"{tmp}.json"), js)]
            save_weights(tmp, meta, arrays)
        if graph is not None:
            staged.append((_beside(Path(onnx), "part"), Path(onnx)))
            write_bytes(staged[-1][0], graph)
    except BaseException as exc:
        for tmp, _ in staged:
            tmp.unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise _named(exc, staged) from None
        raise
    return staged


def commit(staged: list) -> None:
    """Rename every temporary over its target; if any rename fails (or Ctrl-C), the ones
    made are undone (a replaced file comes back from a hard link kept beside it) and the
    temporaries removed, so either every output is the new one or every target is as it
    was."""
    done = []                          # (temporary, target, backup or None, backup is a move)
    try:
        for tmp, target in staged:
            done.append((tmp, target, None, False))
            if os.path.lexists(target):
                backup = _beside(target, "old")
                try:
                    os.link(target, backup, follow_symlinks=False)
                    done[-1] = (tmp, target, backup, False)
                except OSError:            # no hard links here: move it aside instead
                    os.replace(target, backup)
                    done[-1] = (tmp, target, backup, True)
            os.replace(tmp, target)
    except BaseException as exc:
        for tmp, target, backup, moved in reversed(done):
            replaced = not os.path.lexists(tmp)        # the rename was made
            try:
                if backup is not None and (replaced or moved):
                    os.replace(backup, target)
                elif backup is not None:
                    backup.unlink()
                elif replaced:
                    target.unlink()
            except OSError:
                pass                       # best effort; the original error is the news
        for tmp, _ in staged:
            tmp.unlink(missing_ok=True)
        if isinstance(exc, OSError):
            raise _named(exc, staged) from None
        raise
    for _, _, backup, _ in done:
        if backup is not None:
            backup.unlink(missing_ok=True)


def cmd_export(args) -> int:
    if args.out is None and args.onnx is None:
        raise ValueError("nertz export: give OUT (NAME.npz: the safe format) and/or --onnx "
                         "FILE.onnx")
    if args.out is not None:
        check_out_name(args.out)
    if args.trust and _is_weights(args.model):
        raise ValueError("--trust is for an SB3 zip (it runs SB3's own load, which unpickles "
                         "it): a safe-format model (.npz/.json) is read without pickle, so "
                         "--trust would do nothing; leave it out")
    if args.team_size is not None and args.teams is None:
        raise ValueError("--team-size goes with --teams (the table an SB3 zip was trained "
                         "for); give both or neither")
    if args.onnx is not None:          # before anything is read or written
        from agents.learned.onnx_export import require_onnx
        require_onnx()
    inputs = _model_files(args.model, run_info=args.teams is None)   # --teams: none read
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
    staged = stage(args.out, meta, arrays, args.onnx, graph)
    commit(staged)
    if args.out is not None:
        npz, js = (target for _, target in staged[:2])
        print(f"wrote {npz} and {js} (play it: --agents ppo:{npz}; no pickle, numpy only)")
    if graph is not None:
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
            "OUT is a path stem: 'models/mine' (or 'models/mine.npz' / '.json': the suffix is "
            "stripped) writes models/mine.npz and models/mine.json; an empty OUT, a folder or "
            "a hidden name is refused. Nothing is written over a file export reads (MODEL's "
            "files, the run info beside a zip), OUT and --onnx must differ, and an existing "
            "OUT.npz, OUT.json or --onnx FILE is refused unless --overwrite (a directory, "
            "FIFO, socket or device always is). Every check comes before any write, and the "
            "outputs are written beside their targets and renamed at the end: all of them "
            "appear or none (a failure leaves every old file as it was).")),
        epilog="examples:\n"
               "  nertz export runs/t1/final.zip runs/t1/final.npz\n"
               "  nertz export runs/t1/final.zip runs/t1/final.npz --onnx runs/t1/final.onnx\n"
               "  nertz export agents/learned/models/learned_2teams.npz --onnx learned2.onnx",
        formatter_class=argparse.RawDescriptionHelpFormatter)
    e.add_argument("model", metavar="MODEL",
                   help="an SB3 model zip (model.save(), nertz train) or a .npz/.json model")
    e.add_argument("out", metavar="OUT", nargs="?",
                   help="a path stem NAME (or NAME.npz / NAME.json): writes NAME.npz and "
                        "NAME.json; not a folder")
    e.add_argument("--onnx", metavar="FILE", help="also write an ONNX graph to FILE")
    e.add_argument("--teams", type=int_at_least(2, 8), default=None,
                   help="an SB3 zip only: the table size it was trained for, recorded in the "
                        "JSON (default: read from the run's config.json / step_N.json when "
                        "beside MODEL); a safe-format model carries its own table, so "
                        "--teams with one is refused")
    e.add_argument("--team-size", type=int_at_least(1, 2), default=None,
                   help="with --teams: players per team it was trained for (default 1)")
    e.add_argument("--overwrite", action="store_true",
                   help="replace an existing OUT.npz, OUT.json or --onnx FILE (regular files "
                        "only; without it an existing one is refused)")
    e.add_argument("--trust", action="store_true",
                   help="an SB3 zip only (refused with a .npz/.json model): load MODEL with "
                        "SB3's own load, which unpickles it and so runs any code stored in "
                        "it: only for files whose author you trust")
    e.set_defaults(func=cmd_export)
    return e
