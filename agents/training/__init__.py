"""`nertz train`'s library: imitation warm start, PPO against a league (the lean PPO,
lean_ppo.py, `nertz train`'s default; SB3's MaskablePPO with evaluations, run.py: the recipe
that made the per-table models, train/recipes/teams2.toml and teams4.toml), checkpoints.

    from agents.training import TrainConfig
    from agents.training.run import train               # SB3's run (torch: the [train] extra)
    model = train(TrainConfig(out="runs/t1", learner="sb3", timesteps=2_000_000, teams=2))

The arguments: `TrainConfig` is made of parts (parts.py: RunPart, TablesPart, LeaguePart,
WarmStartPart, PPOPart, EvalPart; read as `cfg.ppo.n_epochs`, `cfg.tables.teams`). On disk
and on the command line a config is flat and always was (config.json, a checkpoint's
step_N.json, a recipe's keys, `nertz train`'s options: one name per field, parts.py FLAT
keeps their order): `TrainConfig(**flat)` / `TrainConfig.from_flat` and `to_flat` cross
between the two, and `cfg.n_epochs` reads the field in its part. A config is made whole in
three steps (config.py): `normalise` (a new config, the learner's defaults filled), `check`
(pure: one line naming the first bad field) and `load` (the league's model files and agents,
the evaluation's opponent); `check_config` runs the three, and the constructor runs
`check_config`, so a TrainConfig is always a whole run's arguments.

Two kinds of modules: those without torch, which `nertz --help`, `nertz train`'s checks and
its error lines use (they work without the `[train]` extra), and those of a run, which
import torch and stable-baselines3 at their top through nertz_env.optional.require (without
the extra, importing one is one line naming the extra; no class is made inside a function:
lean_policy.py's autograd Functions and sparse first layer are made at its top too).
Each imports only those above it at its top (called functions reach below: formats.py's
make_formats_env the league's env, imitation.py's LeanPolicy lean_policy.py's forward pass):
    parts.py        the parts and their field docs, FLAT, the shared constants     no torch
    formats.py      table formats, their presets, make_formats_env               no torch
    entries.py      the league's entries: parse_entry, LeagueEntry, league_weights  no torch
    config.py       TrainConfig, normalise / check / load, check_config, NEEDS     no torch
    folder.py       the run folder: where a run may write (check_out), what a stopped run
                    leaves (stopped_cleanly), writes whose errors name the real path  no torch
    recipe.py       recipes as files (`nertz train --spec`)                           no torch
    league.py       LeagueVecEnv, FormatsVecEnv (SB3's vector envs), make_env        [train]
    imitation.py    the warm start: the jitted teacher, its data, behaviour cloning  [train]
    evaluation.py   duplicate-deal matches played as tournaments play, eval.jsonl/csv [train]
    checkpoints.py  checkpoints, snapshots, resume_config / load_checkpoint          [train]
    run.py          SB3's train(): its loop and its callbacks                         [train]
    lean_policy.py, lean_ppo.py   the lean PPO (`nertz train`'s default)              [train]
    labels.py       search's labels of the positions a net visits (expert iteration;
                    shards over deal blocks, local processes or Ray)              no torch
    distill.py      distillation of those labels into the net (train/expert_iteration.py)
                                                                                  [train]
The `nertz train` parser and command are agents/cli/train.py's.

Importing this package imports neither torch nor stable-baselines3 (`nertz --help` builds
the train parser from TrainConfig's fields, and `nertz` works without the `[train]` extra):
it holds the names of the modules without torch; a run's names are imported from their
module (`from agents.training.run import train`, `...checkpoints import export_for_play`,
`...lean_ppo import train`), which is where torch is imported.
"""
from .config import (
    BEST_HEURISTIC,
    DEVICES,
    FIXED_ON_RESUME,
    REWARDS,
    TOURNAMENT_RULES,
    EvalPart,
    LeaguePart,
    PPOPart,
    RunPart,
    TablesPart,
    TrainConfig,
    WarmStartPart,
    check,
    check_config,
    field_docs,
    load,
    normalise,
)
from .entries import SNAPSHOT, LeagueEntry, league_weights, parse_entry
from .folder import checkpoint_files

__all__ = ["BEST_HEURISTIC", "DEVICES", "FIXED_ON_RESUME", "REWARDS", "SNAPSHOT",
           "TOURNAMENT_RULES", "EvalPart", "LeagueEntry", "LeaguePart", "PPOPart", "RunPart",
           "TablesPart", "TrainConfig", "WarmStartPart", "check", "check_config",
           "checkpoint_files", "field_docs", "league_weights", "load", "normalise",
           "parse_entry"]
