"""Imitation of the best heuristic, then MaskablePPO against a league of shipped bots, judged
on duplicate deals against that heuristic under the rules tournaments play.

`nertz train`'s run (agents/training/, the library behind it), then a final judgement:

    python -m train.ppo_league --help
    python -m train.ppo_league --timesteps 2000000 --out runs/league2
    python -m train.ppo_league --teams 4 --opponents heuristic:style=river-builder,greedy

The arguments are `nertz train`'s, one per field of TrainConfig (agents/training/config.py,
a docstring under each field, as CleanRL's Args), plus `--final-deals`; every one is
honoured as `nertz train` honours it (`--learner lean`, `--init`, `--resume`, `--overwrite`
included), with its rules: every option checked before anything is written (one line,
exit 2; an argparse error too), --out new or empty (a file, or a folder holding anything, is
refused), a run stopped (Ctrl-C, exit 130, or an error) before its first checkpoint removes
its folder so the same command can run again, no SB3 temp folder left behind.

1. Environment: NertzVecEnv, `--num-envs` tables in one numba call, the learner at seat 0;
   each table plays one league entry per hand (drawn toward the entries the learner beats
   least), VecMonitor for episode returns.
2. Warm start: the teacher's move at every table, computed by the jitted bots, is played
   and recorded; the policy is cloned from it and its held-out accuracy printed.
3. MaskablePPO with TensorBoard logs, checkpoints and evaluations every few steps
   (run folder: config.json, bc.json, eval.jsonl/csv, checkpoints/, tb/); `--learner lean`:
   the lean PPO (agents/training/lean_ppo.py, final.npz).
4. Final judgement: the saved model as `ppo:PATH` (deterministic, as tournaments play it)
   against the teacher on `--final-deals` duplicate deals under the default rules (the
   default max_ticks, whatever the training used), written to final_eval.json.
Needs the [train] extra: `pip install -e ".[train]"` (with the CPU build of torch).
"""
from __future__ import annotations

import dataclasses
import sys
import time
from pathlib import Path

from agents.arena.limits import check_int
from agents.cli import os_error_line
from agents.cli import train as train_cli
from agents.cli.common import one_line
from agents.training.folder import plain, write_json
from agents.training.config import TrainConfig
from nertz_env.config import RulesConfig
from train.common import ScriptParser

PROG = "python -m train.ppo_league"


def parse(argv=None) -> tuple:
    """(the parsed arguments, their TrainConfig, --final-deals): an argparse error is one
    line (SystemExit 2), a bad value a ValueError naming it, before anything is written."""
    p = ScriptParser(prog=PROG)
    tp = train_cli.add_parser(p.add_subparsers(dest="cmd"))     # the same options as nertz train
    tp.prog = PROG
    tp.add_argument("--final-deals", type=int, default=200,
                    help="duplicate deals of the final match under the default rules")
    args = p.parse_args(["train"] + list(sys.argv[1:] if argv is None else argv))
    try:                      # checked before training, not at the final match hours later
        check_int("deals", args.final_deals, "--final-deals")
    except ValueError as err:
        tp.error(str(err))
    return args, train_cli.config_from_args(args), args.final_deals


def parse_args(argv=None) -> tuple[TrainConfig, int]:
    """(the TrainConfig of `nertz train`'s options, --final-deals)."""
    return parse(argv)[1:]


def final_judgement(cfg: TrainConfig, deals: int) -> dict:
    """Step 4: the run's final model against the teacher under the default rules."""
    from agents.training.evaluation import evaluate_policy_zip
    run = Path(cfg.out)
    final = run / ("final.npz" if cfg.learner == "lean" else "final.zip")
    rules = RulesConfig(num_teams=cfg.teams)                   # what tournaments play
    t0 = time.perf_counter()
    res = evaluate_policy_zip(final, cfg.teacher, rules, deals, cfg.eval_seed)
    res.update(rules=dataclasses.asdict(rules), seconds=time.perf_counter() - t0)
    write_json(run / "final_eval.json", res)
    print(f"final: {res['diff']:+.2f} [{res['ci_low']:+.2f}, {res['ci_high']:+.2f}] points per "
          f"hand against {cfg.teacher} over {res['deals']} deals at max_ticks={rules.max_ticks} "
          f"({res['seconds']:.0f} s); {run / 'final_eval.json'}")
    return res


def main(argv=None) -> int:
    """Steps 1-3 are `nertz train`'s command (its checks, folder rules and Ctrl-C cleanup);
    then step 4. Exit status as `nertz`'s: 2 bad input, 1 a file, 130 Ctrl-C."""
    cfg = None
    try:
        args, cfg, final_deals = parse(argv)
        train_cli.cmd_train(args)
        try:
            final_judgement(cfg, final_deals)
        except KeyboardInterrupt as err:
            err.out_note = (f"the trained run in {cfg.out} is kept, without final_eval.json; "
                            "judge it with nertz tournament")
            raise
        return 0
    except ValueError as err:
        print(f"{PROG}: error: {one_line(plain(err))}", file=sys.stderr)
        return 2
    except OSError as err:
        print(f"{PROG}: error: {one_line(os_error_line(err))}", file=sys.stderr)
        return 1
    except KeyboardInterrupt as err:
        note = getattr(err, "out_note", None) or "no half-written --out folder is kept"
        print(f"{PROG}: interrupted ({note})", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
