"""Tournament throughput with a learned seat: hands per second of run_tournament with one
`ppo:` agent (an untrained MaskablePPO, MlpPolicy net_arch [128, 128]: speed does not depend
on training) among core bots (four teams by default: the three of BOTS; --teams N: the
first N - 1 of BOTS repeated in order).

    python -m benchmarks.learned_tournament                 # 4 teams, 200 deals x 12 seatings
    python -m benchmarks.learned_tournament --deals 20 --net 64,64
    python -m benchmarks.learned_tournament --speeds 1,2,1,2   # mixed speeds (R21)
    python -m benchmarks.learned_tournament --teams 6

Measures, after a warm-up tournament (numba compile excluded): hands/s of one run (the
runner's own elapsed time) and the mean ticks per hand. 200 deals is `nertz tournament`'s
default: 2,400 tables, played as batches of 2,048 and 352 (batch_tables). The model is
built and saved in a temporary folder. Prints one table row with the command, then one
JSON line.
"""
from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

import numpy as np


from agents.arena.tournament import run_tournament

BOTS = ("heuristic", "greedy", "heuristic:style=river-builder")


def save_model(path, net_arch, seed=0) -> None:
    """An untrained MaskablePPO with the learner's spaces, saved at path."""
    from sb3_contrib import MaskablePPO

    from nertz_env.envs.spaces import SpacesOnlyEnv

    MaskablePPO("MlpPolicy", SpacesOnlyEnv(), policy_kwargs={"net_arch": list(net_arch)},
                n_steps=8, batch_size=8, seed=seed, device="cpu").save(path)


def kernel_at(rev: str, tmp: Path):
    """agents/learned/core_play.py as it was at git revision `rev`, loaded as a module of
    agents.learned (its relative imports resolve to today's package) from a file in tmp."""
    import importlib.util
    import subprocess
    text = subprocess.run(["git", "show", f"{rev}:agents/learned/core_play.py"],
                          check=True, capture_output=True, text=True,
                          cwd=Path(__file__).resolve().parents[1]).stdout
    path = tmp / "core_play_at_rev.py"
    path.write_text(text)
    spec = importlib.util.spec_from_file_location("agents.learned._core_play_at_rev", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.Stack = _old_names(module.Stack)
    return module


def _old_names(stack_class):
    """The Stack of a kernel from before NumpyPolicy's layers were public (its `_layers`
    and `_head_out`, now `hidden_layers` and `action_weight`) reads them under the old names
    (given on the policies it stacks; a Stack of today reads neither)."""
    def stack(picks):
        for policy, _ in picks:
            policy._layers, policy._head_out = policy.hidden_layers, policy.action_weight
        return stack_class(picks)
    return stack


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.learned_tournament",
                                 description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--deals", type=int, default=200)
    ap.add_argument("--net", default="128,128", help="MlpPolicy net_arch, comma-separated")
    ap.add_argument("--batch-tables", type=int, default=2048)
    ap.add_argument("--teams", type=int, default=4,
                    help="teams at the table, 2 to 8 (default 4)")
    ap.add_argument("--speeds", default=None, metavar="P,P,P,P",
                    help="each seat's period (R21), one per team, e.g. 1,2,1,2 "
                         "(default: all 1)")
    ap.add_argument("--torch-threads", type=int, default=None,
                    help="torch.set_num_threads before the runs (default: torch's own)")
    ap.add_argument("--agent", default=None,
                    help="the learned seat's spec (default: an untrained ppo: model of --net)")
    ap.add_argument("--instead", default=None, metavar="SPEC",
                    help="also play the same tournament with this core bot in that seat, "
                         "interleaved, and report the ratio of hands/s (the issue's measure)")
    ap.add_argument("--repeats", type=int, default=1, help="runs of each, interleaved")
    ap.add_argument("--dense", action="store_true",
                    help="safe-format models without the fast path (NumpyPolicy.sparse off)")
    ap.add_argument("--dense-too", action="store_true",
                    help="also the learned lineup with the fast path off, interleaved")
    ap.add_argument("--python-too", action="store_true",
                    help="also the learned lineup through the Python-driven loop (the nets "
                         "played outside the core: agents/arena/play.py CORE_NETS off), "
                         "interleaved")
    ap.add_argument("--kernel-from", default=None, metavar="REV",
                    help="also the learned lineup with agents/learned/core_play.py as it was "
                         "at git revision REV (git show; old and new kernels in one run), "
                         "interleaved")
    args = ap.parse_args(argv)
    if args.torch_threads is not None:
        import torch
        torch.set_num_threads(args.torch_threads)
    if args.dense:
        from agents.learned.weights import NumpyPolicy
        NumpyPolicy.sparse = False
    net = [int(x) for x in args.net.split(",")]
    from nertz_env.config import RulesConfig
    config = RulesConfig(num_teams=args.teams, speeds=tuple(int(x) for x in args.speeds.split(","))
                         if args.speeds else None)
    cmd = "python -m benchmarks.learned_tournament " + " ".join(
        argv if argv is not None else sys.argv[1:])
    bots = [BOTS[i % len(BOTS)] for i in range(args.teams - 1)]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        seat = args.agent
        if seat is None:
            path = Path(tmp) / "model.zip"
            save_model(path, net)
            seat = f"ppo:{path}"
        lineups = {"learned": [seat, *bots]}
        if args.dense_too:
            lineups["learned, dense"] = [seat, *bots]
        if args.python_too:
            lineups["learned, Python loop"] = [seat, *bots]
        old_kernel = None
        if args.kernel_from:
            old_kernel = kernel_at(args.kernel_from, Path(tmp))
            lineups[f"learned, kernel at {args.kernel_from}"] = [seat, *bots]
        if args.instead:
            lineups["instead"] = [args.instead, *bots]
        from agents.arena import play
        from agents.learned import core_play
        from agents.learned.weights import NumpyPolicy
        new_kernel = (core_play.Stack, core_play.play_nets)

        def setup(name):
            NumpyPolicy.sparse = not (args.dense or name == "learned, dense")
            play.CORE_NETS = name != "learned, Python loop"
            old = old_kernel is not None and name.startswith("learned, kernel at")
            core_play.Stack, core_play.play_nets = (
                (old_kernel.Stack, old_kernel.play_nets) if old else new_kernel)
        for name, agents in lineups.items():
            setup(name)
            run_tournament(agents, config=config, deals=2, seed=1, progress=False)  # compile
        for _ in range(args.repeats):
            for name, agents in lineups.items():
                setup(name)
                r = run_tournament(agents, config=config, deals=args.deals, seed=0,
                                   progress=False, batch_tables=args.batch_tables)
                rows.append({"lineup": name, "seat": agents[0], "teams": r.config.num_teams,
                             "hands": r.hands_played,
                             "elapsed_s": r.elapsed_s, "hands_per_s": r.hands_played / r.elapsed_s,
                             "ticks_per_hand": float(r.ticks.sum() / r.hands_played)})
    print("| seat | others | hands | ticks per hand | seconds | hands/s |")
    print("|---|---|---|---|---|---|")
    for r in rows:
        seat = r["seat"] if r["lineup"] == "instead" or args.agent else f"ppo {net}"
        tag = f" ({r['lineup'].split(', ', 1)[1]})" if ", " in r["lineup"] else ""
        print(f"| {seat}{tag} | "
              f"{', '.join(bots)} | {r['hands']:,} | {r['ticks_per_hand']:,.0f} | "
              f"{r['elapsed_s']:,.1f} | {r['hands_per_s']:,.1f} |")
    out = {"teams": args.teams, "speeds": args.speeds, "net_arch": net, "deals": args.deals,
           "runs": rows, "command": cmd}
    if args.instead:
        med = {n: float(np.median([r["hands_per_s"] for r in rows if r["lineup"] == n]))
               for n in lineups}
        out["ratio"] = med["learned"] / med["instead"]
        print(f"ratio of medians (learned seat / {args.instead}): {out['ratio']:.2f}  `{cmd}`")
        if args.dense_too:
            out["ratio_dense"] = med["learned, dense"] / med["instead"]
            print(f"the same with the fast path off: {out['ratio_dense']:.2f}")
        if args.kernel_from:
            out["ratio_kernel_from"] = med[f"learned, kernel at {args.kernel_from}"] / med[
                "instead"]
            print(f"the same with the kernel at {args.kernel_from}: "
                  f"{out['ratio_kernel_from']:.2f}")
        if args.python_too:
            out["ratio_python"] = med["learned, Python loop"] / med["instead"]
            print(f"the same through the Python loop: {out['ratio_python']:.2f}")
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
