"""`nertz train`'s library: imitation warm start, PPO against a league (the lean PPO,
lean_ppo.py, `nertz train`'s default; SB3's MaskablePPO with evaluations, run.py),
checkpoints (needs the `[train]` extra).

    from agents.training import TrainConfig, train       # SB3's run
    model = train(TrainConfig(out="runs/t1", learner="sb3", timesteps=2_000_000, teams=2))

One job per module, imported in this order (each imports only those above it):
    league.py       the league of opponents, its weights, the training env (make_env)
    config.py       TrainConfig, its field docs and checks, REWARDS, BEST_HEURISTIC
    folder.py       the run folder: where a run may write (check_out), what a stopped run
                    leaves (stopped_cleanly), writes whose errors name the real path
    imitation.py    the warm start: the jitted teacher, its data, behaviour cloning
    evaluation.py   duplicate-deal matches played as tournaments play, eval.jsonl/csv
    checkpoints.py  checkpoints, snapshots, resume_config / load_checkpoint, export_for_play
    run.py          train(): the loop and its callbacks
The `nertz train` parser and command are agents/cli/train.py's. Importing this package
imports neither torch nor stable-baselines3.
"""
from .checkpoints import (
    checkpoint_files,
    export_for_play,
    load_checkpoint,
    resume_config,
    run_info,
    save_checkpoint,
    save_snapshot,
)
from .config import (
    BEST_HEURISTIC,
    DEVICES,
    FIXED_ON_RESUME,
    REWARDS,
    TOURNAMENT_RULES,
    TrainConfig,
    check_config,
    field_docs,
)
from .evaluation import EVAL_FIELDS, evaluate_mixed, evaluate_policy_zip, evaluate_run
from .imitation import (
    Teacher,
    behaviour_clone,
    collect_teacher_data,
    imitation_accuracy,
    policy_choices,
    split_holdout,
    warm_start,
)
from .league import (
    SNAPSHOT,
    LeagueEntry,
    league_class,
    league_of,
    league_weights,
    make_env,
    parse_entry,
)
from .run import build_model, make_callbacks, rules_line, tensorboard_available, train


def __getattr__(name):
    if name == "LeagueVecEnv":          # made on first use: it subclasses SB3's VecEnvWrapper
        return league_class()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "BEST_HEURISTIC",
    "DEVICES",
    "EVAL_FIELDS",
    "FIXED_ON_RESUME",
    "LeagueEntry",
    "LeagueVecEnv",  # noqa: F822 (made on first use: module __getattr__)
    "REWARDS",
    "SNAPSHOT",
    "TOURNAMENT_RULES",
    "Teacher",
    "TrainConfig",
    "behaviour_clone",
    "build_model",
    "check_config",
    "checkpoint_files",
    "collect_teacher_data",
    "evaluate_mixed",
    "evaluate_policy_zip",
    "evaluate_run",
    "export_for_play",
    "field_docs",
    "imitation_accuracy",
    "league_class",
    "league_of",
    "league_weights",
    "load_checkpoint",
    "make_callbacks",
    "make_env",
    "parse_entry",
    "policy_choices",
    "resume_config",
    "rules_line",
    "run_info",
    "save_checkpoint",
    "save_snapshot",
    "split_holdout",
    "tensorboard_available",
    "train",
    "warm_start",
]
