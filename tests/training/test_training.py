"""agents/training/ (config, league, imitation, evaluation, checkpoints, run) and the
`nertz train` parser (agents/cli/train.py): the warm start's labels and accuracy, the league's
per-table opponents, checkpoints that resume to the same next update, the evaluation callback,
the config JSON and the argument checks. Tiny configs: small nets, few tables, short hands."""
import argparse
import copy
import dataclasses
import json
import math

import numpy as np
import pytest

pytest.importorskip("sb3_contrib")
torch = pytest.importorskip("torch")

from stable_baselines3.common.callbacks import BaseCallback
from tiny_runs import tiny

from agents import training
from agents.training import checkpoints, evaluation
from agents.cli import train as train_cli
from agents.python_policies import choose_action
from agents.training import run as training_run
from agents.training.config import TrainConfig
from agents.training.imitation import (
    Teacher,
    behaviour_clone,
    collect_teacher_data,
    imitation_accuracy,
    policy_choices,
    split_holdout,
)
from agents.training.league import league_of, make_env
from agents.training.run import build_model
from nertz_env.bot_specs import core_bot
from nertz_env.core.policies import POLICY_RANDOM, POLICY_SCORED
from nertz_env.core.scoring import relative_points

pytestmark = pytest.mark.usefixtures("one_torch_thread")


# ---------------------------------------------------------------------------- imitation
@pytest.mark.parametrize("spec", [training.BEST_HEURISTIC, "greedy", "heuristic:style=cautious"])
def test_jitted_teacher_labels_equal_the_python_policy(tmp_path, spec):
    cfg = tiny(tmp_path, teams=3, opponents=["random", "greedy+heuristic"])
    env = make_env(cfg, monitor=False)
    data = collect_teacher_data(env, Teacher(env, spec), 400)
    knobs = core_bot(spec)[1]
    rows = np.random.default_rng(0).choice(len(data["actions"]), 300, replace=False)
    want = [choose_action(data["obs"][i], data["masks"][i], knobs) for i in rows]
    assert list(data["actions"][rows]) == want
    assert len(set(want)) > 5                      # varied positions, not all one move


def test_imitation_reproduces_the_heuristic_on_held_out_positions(tmp_path):
    cfg = tiny(tmp_path, num_envs=32, max_ticks=300)
    env = make_env(cfg, monitor=False)
    data = collect_teacher_data(env, Teacher(env, cfg.teacher), 20_000)
    fit, held = split_holdout(data, 0.2)
    assert not set(fit["table"]) & set(held["table"])         # whole tables held out
    model = build_model(cfg, make_env(cfg))
    before = imitation_accuracy(model.policy, held)
    behaviour_clone(model.policy, fit, epochs=5, batch_size=256, lr=3e-3, value=True)
    acc = imitation_accuracy(model.policy, held)
    print(f"held-out imitation accuracy {acc:.4f} on {len(held['actions'])} positions "
          f"(untrained {before:.4f})")
    assert acc >= 0.95 > before


# ---------------------------------------------------------------------------- league
def test_league_opponents_are_drawn_per_table_and_redrawn_per_hand(tmp_path):
    cfg = tiny(tmp_path, num_envs=64, max_ticks=40, opponents=["random", "greedy"])
    env = make_env(cfg)
    league = league_of(env)
    env.reset()
    kinds = league.batch.kinds[:, 1]
    assert set(np.unique(kinds)) == {POLICY_RANDOM, POLICY_SCORED}      # a mix over tables
    assert np.array_equal(kinds == POLICY_SCORED, league.table_entry == 1)
    first = league.table_entry.copy()
    episodes = 0
    relative = np.zeros(2)                   # per entry: the learner team's relative points
    for _ in range(60):
        masks = env.env_method("action_masks")
        drew = league.table_entry.copy()
        _, _, dones, infos = env.step(np.array([np.flatnonzero(m)[-1] for m in masks]))
        for e in np.flatnonzero(dones):
            assert "episode" in infos[e] and "opponent" in infos[e]        # VecMonitor's
            sc = np.asarray(infos[e]["final_scores"], np.float64)
            relative[drew[e]] += relative_points(sc[0], sc.sum(), 2)
            episodes += 1
    assert episodes > 0 and league.hands.sum() == episodes
    assert np.array_equal(league.rel_sum, relative) and relative.any()
    assert not np.array_equal(first, league.table_entry)
    assert np.array_equal(league.batch.kinds[:, 1] == POLICY_SCORED, league.table_entry == 1)
    # the entry the learner beats least is drawn most
    league.set_diffs([5.0, -3.0])
    assert league.weights[1] > 0.5 > league.weights[0] >= cfg.priority_uniform / 2
    league.rng = np.random.default_rng(1)
    league._draw(np.arange(64))
    assert (league.table_entry == 1).mean() > 0.6
    with pytest.raises(ValueError, match="entries"):
        league.set_entries([])
    with pytest.raises(ValueError, match=r"entries\[0\].*snapshots|not supported"):
        league.set_entries([object()])


def test_importing_training_and_the_train_parser_loads_neither_torch_nor_sb3():
    """`nertz --help` builds the train parser (TrainConfig's fields): importing the training
    package must not wait for torch or stable-baselines3."""
    import subprocess
    import sys
    code = ("import sys, argparse, agents.training\n"
            "from agents.cli import train\n"
            "train.add_parser(argparse.ArgumentParser().add_subparsers())\n"
            "print(sorted(m for m in ('torch', 'stable_baselines3', 'sb3_contrib', 'tqdm',\n"
            "                         'tensorboard') if m in sys.modules))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]", out.stdout + out.stderr


def test_league_weights():
    w = training.league_weights([0.0, 4.0, np.nan], temperature=2.0, uniform=0.2)
    assert w.sum() == pytest.approx(1.0) and w[0] > w[2] > w[1]
    assert np.allclose(training.league_weights([np.nan] * 3, 2.0, 0.2), 1 / 3)


# ---------------------------------------------------------------------------- resume
def test_checkpoint_resumes_to_the_same_next_update(tmp_path):
    """Run A trains two updates with a checkpoint between them. Run B resumes from that
    checkpoint through train(cfg with resume); its rollout is replaced by A's second rollout
    (and numpy's generator by A's at that moment: it draws the minibatches), so its first
    update must give A's parameters and optimizer state exactly."""
    cfg = tiny(tmp_path, checkpoint_every=128, timesteps=256)
    seen = {}

    class Capture(BaseCallback):
        def _on_step(self):
            return True

        def _on_rollout_end(self):
            if self.num_timesteps == 256:
                seen["buffer"] = copy.deepcopy(vars(self.model.rollout_buffer))
                seen["np"] = np.random.get_state()

    a = training_run.train(cfg, log=lambda s: None, callbacks=[Capture()])
    ck = tmp_path / "run" / "checkpoints" / "step_128.zip"
    assert ck.is_file() and (tmp_path / "run" / "checkpoints" / "step_256.zip").is_file()

    class Inject(BaseCallback):
        def _on_step(self):
            return True

        def _on_rollout_end(self):
            for k, v in seen["buffer"].items():
                if isinstance(v, np.ndarray):
                    getattr(self.model.rollout_buffer, k)[...] = v
            np.random.set_state(seen["np"])

    cfg_b = checkpoints.resume_config(ck, out=str(tmp_path / "resumed"))
    assert cfg_b.resume == str(ck) and cfg_b.timesteps == 256
    b = training_run.train(cfg_b, log=lambda s: None, callbacks=[Inject()])
    assert b.num_timesteps == a.num_timesteps == 256 and b._n_updates == a._n_updates
    pa, pb = a.policy.state_dict(), b.policy.state_dict()
    for k in pa:
        assert torch.equal(pa[k], pb[k]), k
    oa, ob = a.policy.optimizer.state_dict(), b.policy.optimizer.state_dict()
    for i, st in oa["state"].items():
        for k, v in st.items():
            assert torch.equal(v, ob["state"][i][k]), (i, k)

    # the config beside the checkpoint holds every argument; config.json too
    saved = json.loads((tmp_path / "run" / "checkpoints" / "step_128.json").read_text())
    top = json.loads((tmp_path / "run" / "config.json").read_text())
    want = cfg.to_flat()
    assert saved["config"] == want == top["config"]
    assert saved["num_timesteps"] == 128 and saved["rules"]["max_ticks"] == 150
    assert top["tournament_rules"]["max_ticks"] != 150 and not top["same_rules_as_tournaments"]


def test_resume_keeps_the_fixed_fields(tmp_path):
    cfg = tiny(tmp_path, checkpoint_every=128, timesteps=128)
    training_run.train(cfg, log=lambda s: None)
    ck = tmp_path / "run" / "checkpoints" / "step_128.zip"
    with pytest.raises(ValueError, match="net_arch"):
        checkpoints.resume_config(ck, net_arch=[64, 64])
    with pytest.raises(ValueError, match="resume"):
        checkpoints.resume_config(tmp_path / "nope.zip")
    with pytest.raises(ValueError, match="already holds a run"):      # a fresh run, same folder
        training_run.train(cfg, log=lambda s: None)


# ---------------------------------------------------------------------------- evaluation
def test_evaluation_logs_a_paired_difference_and_plays_as_tournaments(tmp_path):
    from stable_baselines3.common.logger import configure

    from agents.registry import make_agent
    cfg = tiny(tmp_path, eval_deals=6, eval_league_deals=2, opponents=["random", "greedy"])
    run = tmp_path / "run"
    run.mkdir()
    model = build_model(cfg, make_env(cfg))
    model.set_logger(configure(str(tmp_path / "log"), ["json"]))
    first = evaluation.evaluate_run(model, cfg, run, model.logger, log=lambda s: None)
    again = evaluation.evaluate_run(model, cfg, run, model.logger, log=lambda s: None)
    rows = [json.loads(line) for line in (run / "eval.jsonl").read_text().splitlines()]
    assert len(rows) == 6 and rows[0]["against"] == cfg.eval_against
    assert {r["against"] for r in rows[1:3]} == {"league:random", "league:greedy"}
    for r in rows:
        assert set(evaluation.EVAL_FIELDS) <= set(r) and r["deterministic"] is True
        assert all(math.isfinite(r[k]) for k in ("diff", "ci_low", "ci_high", "points"))
        assert r["ci_low"] <= r["diff"] <= r["ci_high"] and r["ci_high"] > r["ci_low"]
    assert first["diff"] == again["diff"] and first["ci_low"] == again["ci_low"]  # deterministic
    assert (run / "eval.csv").read_text().count("\n") == 7
    logged = (tmp_path / "log" / "progress.json").read_text()
    assert '"eval/diff"' in logged and '"eval/ci_low"' in logged
    # the league got the evaluation's numbers
    assert np.allclose(league_of(model.get_env()).diffs, [rows[4]["diff"], rows[5]["diff"]])
    # the moves are those of make_agent("ppo:PATH"), the tournament's agent
    model.save(tmp_path / "m.zip")
    agent = make_agent(f"ppo:{tmp_path / 'm.zip'}")
    env = make_env(cfg, monitor=False)
    data = collect_teacher_data(env, Teacher(env, cfg.teacher), 200)
    assert np.array_equal(agent.act_batch(data["obs"], data["masks"]),
                          policy_choices(model.policy, data["obs"], data["masks"]))


# ---------------------------------------------------------------------------- arguments
@pytest.mark.parametrize("field,value", [
    ("timesteps", 0), ("num_envs", 0), ("teams", 1), ("teams", 9), ("max_ticks", 0),
    ("reward", "win"), ("opponents", []), ("opponents", ["nope"]),
    ("opponents", ["greedy+random+random"]), ("teacher", "random"), ("net_arch", []),
    ("net_arch", [32, 0]), ("learning_rate", 0.0), ("gamma", 1.5), ("bc_holdout", 1.0),
    ("batch_size", 10**6), ("eval_deals", 1), ("eval_league_deals", 1), ("device", "tpu"),
    ("seed", -1), ("priority_uniform", 2.0), ("bc_rows", 3), ("learning_rate", float("nan")),
    ("timesteps", True), ("out", ""), ("eval_against", "heuristic:style=nope"),
    ("eval_against", "ppo:/no/such/model.zip"),
])
def test_bad_arguments_are_one_line_value_errors(tmp_path, field, value):
    with pytest.raises(ValueError) as err:
        tiny(tmp_path, **{field: value})
    text = str(err.value)
    assert "\n" not in text
    assert field in text or field.replace("_", " ") in text or "teams" in text


def test_cli_arguments_build_the_config(tmp_path):
    ap = argparse.ArgumentParser()
    train_cli.add_parser(ap.add_subparsers())
    args = ap.parse_args(["train", "--out", str(tmp_path / "r"), "--opponents",
                          "greedy,heuristic:style=cautious,flip=20", "--net-arch", "32,32",
                          "--no-tensorboard", "--max-ticks", "200", "--reward", "score"])
    cfg = train_cli.config_from_args(args)
    assert cfg.opponents == ["greedy", "heuristic:style=cautious,flip=20"]
    assert cfg.net_arch == [32, 32] and cfg.tensorboard is False and cfg.max_ticks == 200
    assert cfg.reward == "score" and cfg.timesteps == TrainConfig().timesteps
    assert args.func is train_cli.cmd_train
    bad = ap.parse_args(["train", "--net-arch", "32,x"])
    with pytest.raises(ValueError, match="net_arch"):
        train_cli.config_from_args(bad)


def test_the_learners_own_defaults_and_explicit_values(tmp_path, monkeypatch):
    """n_epochs and torch_threads default by learner: the lean PPO 2 epochs on 2 torch
    threads (1 where the process may use one core), SB3 4 epochs on 1; a value given is kept,
    `nertz train --help` says both defaults, and the run's first line names only options
    that differ from its learner's defaults."""
    monkeypatch.setattr("os.sched_getaffinity", lambda pid: {0, 1, 2, 3})
    ap = argparse.ArgumentParser()
    train_cli.add_parser(ap.add_subparsers())

    def cfg(*argv):
        return train_cli.config_from_args(ap.parse_args(["train", "--out", str(tmp_path), *argv]))
    lean, sb3 = cfg("--learner", "lean", "--bc-rows", "0"), cfg("--learner", "sb3")
    assert (lean.n_epochs, lean.torch_threads) == (2, 2)
    assert (sb3.n_epochs, sb3.torch_threads) == (4, 1)
    default = cfg()                            # no --learner: the lean PPO with a warm start
    assert (default.learner, default.bc_rows, default.n_epochs) == ("lean", 200_000, 2)
    kept = cfg("--learner", "lean", "--bc-rows", "0", "--n-epochs", "4", "--torch-threads", "1")
    assert (kept.n_epochs, kept.torch_threads) == (4, 1)
    line = train_cli.changed_line(lean)
    assert "bc_rows=0" in line and "n_epochs" not in line and "torch_threads" not in line
    assert "learner=sb3" in train_cli.changed_line(sb3)
    assert "n_epochs=4" in train_cli.changed_line(kept)
    monkeypatch.setattr("os.sched_getaffinity", lambda pid: {0})
    assert TrainConfig(learner="lean", bc_rows=0).torch_threads == 1
    assert TrainConfig(learner="lean", bc_rows=0, torch_threads=2).torch_threads == 2
    helps = {a.dest: a.help for a in ap._subparsers._group_actions[0].choices["train"]._actions}
    assert "(default: 2 with --learner lean, 4 with sb3)" in helps["n_epochs"]
    assert "(default: 2 with --learner lean, 1 with sb3)" in helps["torch_threads"]
    with pytest.raises(ValueError, match="n_epochs=0"):
        TrainConfig(learner="lean", bc_rows=0, n_epochs=0)


def test_one_seat_among_copies_at_four_teams(tmp_path):
    from nertz_env.config import RulesConfig
    cfg = tiny(tmp_path, teams=4)
    build_model(cfg, make_env(cfg)).save(tmp_path / "m.zip")
    r = evaluation.evaluate_policy_zip(tmp_path / "m.zip", "greedy",
                                     RulesConfig(num_teams=4, max_ticks=100), 3, 0)
    assert r["deals"] == 3 and r["hands"] == 3 * 12          # every seating of 1 + 3 copies
    assert all(math.isfinite(r[k]) for k in ("diff", "ci_low", "ci_high"))


def test_tensorboard_and_episode_returns(tmp_path, monkeypatch):
    ea = pytest.importorskip("tensorboard.backend.event_processing.event_accumulator")
    EventAccumulator = ea.EventAccumulator
    cfg = tiny(tmp_path, max_ticks=20, tensorboard=True, eval_every=128, eval_deals=2)
    training_run.train(cfg, log=lambda s: None)
    (events,) = (tmp_path / "run" / "tb").glob("ppo_*")
    acc = EventAccumulator(str(events))
    acc.Reload()
    tags = acc.Tags()["scalars"]
    for tag in ("rollout/ep_rew_mean", "eval/diff", "eval/ci_low", "eval/ci_high",
                "league/weight/" + training.BEST_HEURISTIC):
        assert tag in tags, tag
    said = []
    monkeypatch.setattr(training_run, "tensorboard_available", lambda: False)
    training_run.train(tiny(tmp_path, out=str(tmp_path / "r2"), tensorboard=True), log=said.append)
    assert not (tmp_path / "r2" / "tb").exists()
    assert any("tensorboard is not installed" in s for s in said)


def test_a_short_league_run_beats_the_untrained_policy_against_random_opponents(tmp_path):
    """Paired over duplicate deals (agents/arena/experiment.py): the policy after a short run
    against a league of random bots, in the seat of the untrained policy (same seed, same
    initial network), among random opponents; the 95% interval lies above zero."""
    from agents.arena.experiment import run_experiment, spec_from_dict

    cfg = tiny(tmp_path, opponents=["random"], timesteps=12_288, num_envs=16, n_steps=64,
               batch_size=256, n_epochs=4, learning_rate=1e-3, max_ticks=200, seed=3)
    untrained = build_model(cfg, make_env(cfg))
    untrained.save(tmp_path / "untrained.zip")
    training_run.train(cfg, log=lambda *a: None)
    spec = spec_from_dict({"baseline": f"ppo:{tmp_path / 'untrained.zip'}",
                           "treatments": {"trained": f"ppo:{tmp_path / 'run' / 'final.zip'}"},
                           "opponents": ["random"], "teams": [2], "deals": 60, "seed": 1,
                           "outcomes": ["points"], "rules": {"short": {"max_ticks": 200}}})
    (row,) = run_experiment(spec, progress=False).rows
    assert row["ci_low"] > 0, row


# ---------------------------------------------------------------------------- snapshots
class CountingPolicy:
    """An outside seat's agent that counts its act_batch calls and rows."""

    def __init__(self, policy):
        self.policy, self.calls, self.rows = policy, 0, 0

    def act_batch(self, obs, masks):
        self.calls += 1
        self.rows += len(obs)
        return self.policy.act_batch(obs, masks)


def test_snapshots_are_drawn_per_table_and_play_frozen_policy_ids_in_one_call_per_step(
        tmp_path):
    from agents.registry import make_agent
    from nertz_env.core.policies import POLICY_EXTERNAL
    cfg = tiny(tmp_path, teams=3, num_envs=24, max_ticks=30, opponents=["random"])
    env = make_env(cfg, monitor=False)
    league = league_of(env)
    paths = []
    for seed in (1, 2, 3):                 # three different networks; the oldest is dropped
        paths.append(str(tmp_path / f"snap{seed}.zip"))
        build_model(dataclasses.replace(cfg, seed=seed), env).save(paths[-1])
        league.add_snapshot(paths[-1], keep=2)
    assert league.snapshot_paths() == paths[1:]
    assert [en.name for en in league.entries] == ["random", "snapshot:snap2", "snapshot:snap3"]
    counters = {}
    for i in (1, 2):
        counters[i] = CountingPolicy(league.entries[i].agents[0])
        league.entries[i].agents = [counters[i]] * 2
    league._hook()
    ref = {i: make_agent(f"ppo:{paths[i]}").policy for i in (1, 2)}   # the tournament's player
    env.reset()
    eng, batch = league.batch.engine, league.batch
    drawn, moves, redrawn = set(), 0, False
    for _ in range(40):
        ent = league.table_entry.copy()
        drawn |= set(ent.tolist())
        snap = ent > 0
        assert np.array_equal(batch.kinds[:, 1:] == POLICY_EXTERNAL, np.repeat(snap[:, None], 2, 1))
        want = {}
        for s in (1, 2):                     # what FrozenPolicy plays at that seat now
            seat_obs = eng.observe(s)[:, 0]
            for i in (1, 2):
                t = np.flatnonzero(ent == i)
                if t.size:
                    want[i, s] = (t, ref[i].act_batch(seat_obs[t], eng.masks[t, s].astype(bool)))
        before = {i: c.calls for i, c in counters.items()}
        masks = batch.action_masks()
        _, _, dones, _ = env.step(np.array([np.flatnonzero(m)[0] for m in masks]))
        for i, c in counters.items():        # one forward pass per live snapshot per step
            assert c.calls - before[i] == int((ent == i).any())
        for (i, s), (t, ids) in want.items():
            assert np.array_equal(batch.engine.actions[t, s], ids), (i, s)
            moves += int((ids != 0).sum())
        redrawn |= bool(dones.any()) and not np.array_equal(ent, league.table_entry)
    assert drawn == {0, 1, 2} and redrawn
    assert moves > 20                        # the snapshots made real moves, not only Wait
    assert sum(c.rows for c in counters.values()) > 40 * 2


def test_any_agent_spec_is_a_league_entry_played_in_one_call_per_step(tmp_path):
    """`learned` (not a core bot) as an opponent: its seats are POLICY_EXTERNAL, one
    act_batch per step covers every such row of every table and seat (also beside a core
    seat of a '+'-joined entry), and the moves played are make_agent("learned")'s."""
    from agents.registry import make_agent
    from nertz_env.core.policies import POLICY_EXTERNAL, POLICY_SCORED
    cfg = tiny(tmp_path, teams=3, num_envs=24, max_ticks=30,
               opponents=["learned", "learned+greedy", "random"])
    env = make_env(cfg, monitor=False)
    league = league_of(env)
    assert [en.agents[0] is en.agents[-1] for en in league.entries[:1]] == [True]
    assert league.entries[1].agents[1] is None and league.entries[2].agents == [None, None]
    (agent,) = league._agents                  # one agent for the spec, over both entries
    counter = CountingPolicy(agent)
    for en in league.entries[:2]:
        en.agents = [counter if a is not None else None for a in en.agents]
    league._hook()
    ref = make_agent("learned").for_table(league.venv.config)     # the league told its copy
    env.reset()
    eng, batch = league.batch.engine, league.batch
    outside_rows = 0
    for _ in range(30):
        ent = league.table_entry.copy()
        ext = np.stack([ent <= 1, ent == 0], axis=1)          # seats 1, 2 played outside
        assert np.array_equal(batch.kinds[:, 1:] == POLICY_EXTERNAL, ext)
        assert (batch.kinds[:, 2][ent == 1] == POLICY_SCORED).all()
        want = {}
        for s in (1, 2):
            t = np.flatnonzero(ext[:, s - 1])
            if t.size:
                want[s] = (t, ref.act_batch(eng.observe(s)[:, 0][t], eng.masks[t, s].astype(bool)))
        before = counter.calls
        masks = batch.action_masks()
        env.step(np.array([np.flatnonzero(m)[0] for m in masks]))
        assert counter.calls - before == int(ext.any())
        for s, (t, ids) in want.items():
            assert np.array_equal(batch.engine.actions[t, s], ids), s
            outside_rows += t.size
    assert outside_rows > 30 and counter.rows == outside_rows


def test_snapshots_join_the_league_and_resume_with_the_checkpoint(tmp_path):
    cfg = tiny(tmp_path, snapshot_every=128, max_snapshots=1, checkpoint_every=128,
               timesteps=256, eval_every=128, eval_league_deals=2, eval_deals=2)
    model = training_run.train(cfg, log=lambda s: None)
    run = tmp_path / "run"
    league = league_of(model.get_env())
    assert league.snapshot_paths() == [str(run / "snapshots" / "step_256.zip")]   # oldest gone
    assert [en.name for en in league.entries] == [training.BEST_HEURISTIC, "snapshot:step_256"]
    ck = json.loads((run / "checkpoints" / "step_128.json").read_text())
    assert ck["snapshots"] == ["snapshots/step_128.zip"]
    assert [s["name"] for s in ck["league"]][-1] == "snapshot:step_128"
    rows = [json.loads(line)["against"] for line in (run / "eval.jsonl").read_text().splitlines()]
    assert "league:snapshot:step_128" in rows                 # evaluated like every entry
    seen = {}

    class Look(BaseCallback):
        def _on_training_start(self):
            lg = league_of(self.model.get_env())
            seen["paths"] = lg.snapshot_paths()
            seen["diffs"] = lg.diffs.copy()

        def _on_step(self):
            return True

    last = json.loads((run / "checkpoints" / "step_256.json").read_text())
    assert last["snapshots"] == ["snapshots/step_256.zip"]
    cfg_b = checkpoints.resume_config(run / "checkpoints" / "step_256.zip", timesteps=384,
                                   out=str(tmp_path / "resumed"), eval_every=0)
    training_run.train(cfg_b, log=lambda s: None, callbacks=[Look()])
    # played from a copy in the resumed run's own folder (its checkpoints name it inside)
    assert seen["paths"] == [str(tmp_path / "resumed" / "snapshots" / "step_256.zip")]
    saved = [s["eval_diff"] for s in last["league"]]          # evaluated at 256: numbers
    assert None not in saved and np.allclose(seen["diffs"], saved)
    (run / "snapshots" / "step_128.zip").unlink()
    with pytest.raises(ValueError, match="snapshot"):
        checkpoints.resume_config(run / "checkpoints" / "step_128.zip", out=str(tmp_path / "r3"))


@pytest.mark.parametrize("field,value", [
    ("snapshot_every", -1), ("snapshot_every", 1.5), ("max_snapshots", 0),
    ("opponents", ["greedy", "snapshot:/no/such/model.zip"]), ("opponents", ["snapshot:"]),
])
def test_bad_snapshot_options_are_value_errors(tmp_path, field, value):
    with pytest.raises(ValueError, match=field):
        tiny(tmp_path, **{field: value})


def test_external_seats_get_their_ids_from_one_call_and_bad_ids_are_value_errors():
    from nertz_env.core.policies import POLICY_EXTERNAL
    from nertz_env.envs.vector import NertzVecEnv
    env = NertzVecEnv(num_envs=6, seed=0, num_teams=3, max_ticks=50, illegal_move="raise")
    env.reset()
    b = env.batch
    b.kinds[::2, 2] = POLICY_EXTERNAL           # seat 2 of tables 0, 2, 4
    calls = []

    def last_legal(obs, masks, tables, seats):
        calls.append((tables.copy(), seats.copy()))
        return np.array([np.flatnonzero(m)[-1] for m in masks])

    b.external = last_legal
    env.step(np.zeros(6, np.int64))
    assert len(calls) == 1 and list(calls[0][0]) == [0, 2, 4] and set(calls[0][1]) == {2}
    for bad, words in [(lambda *a: np.zeros(3), "external ids"),
                       (lambda *a: np.full(3, 10**6), "external ids"),
                       (lambda o, m, t, s: np.array([np.flatnonzero(~r)[0] for r in m]),
                        r"external ids\[0\] \(table 0, seat 2\).*R31")]:
        b.external = bad
        with pytest.raises(ValueError, match=words):
            env.step(np.zeros(6, np.int64))


def test_export_for_play_keeps_the_policy_and_drops_the_optimizer_state(tmp_path):
    from agents.registry import make_agent

    cfg = tiny(tmp_path, timesteps=256)
    model = training_run.train(cfg, log=lambda *a: None)
    src = tmp_path / "run" / "final.zip"
    dst = checkpoints.export_for_play(src, tmp_path / "play.zip")
    assert dst.stat().st_size < src.stat().st_size
    env = make_env(cfg, seed=9, monitor=False)
    obs, masks = env.reset(), env.action_masks()
    a, b = make_agent(f"ppo:{src}"), make_agent(f"ppo:{dst}")
    assert (a.act_batch(obs, masks) == b.act_batch(obs, masks)).all()
    assert model.num_timesteps == 256


# ---------------------------------------------------------------------------- checkpoint files
@pytest.fixture(scope="module")
def one_checkpoint(tmp_path_factory):
    """A run folder with a league snapshot and a checkpoint at 128 steps (made once)."""
    tmp = tmp_path_factory.mktemp("ck")
    cfg = tiny(tmp, checkpoint_every=128, snapshot_every=128, timesteps=128)
    training_run.train(cfg, log=lambda s: None)
    return tmp / "run"


def _copy_run(src, tmp_path):
    import shutil
    dst = tmp_path / "copy"
    shutil.copytree(src, dst)
    return dst, dst / "checkpoints" / "step_128.zip"


def test_generator_states_are_saved_as_data(one_checkpoint):
    d = one_checkpoint / "checkpoints"
    assert sorted(p.name for p in d.iterdir()) == ["step_128.json", "step_128.rng.json",
                                                   "step_128.zip"]
    st = json.loads((d / "step_128.rng.json").read_text())
    assert set(st) == {"torch", "numpy", "league_rng"} and len(st["numpy"]["key"]) == 624
    assert not list(one_checkpoint.rglob("*.part"))


DAMAGE = {
    "rng missing": ("step_128.rng.json", None, "generator states .*step_128.rng.json are "
                                               "missing"),
    "rng damaged": ("step_128.rng.json", b'{"torch": "zz"}', "step_128.rng.json are damaged"),
    "rng deep": ("step_128.rng.json", b"[" * 3000 + b"]" * 3000, "step_128.rng.json.*nested"),
    "json cut": ("step_128.json", b'{"config": {', "step_128.json.*not valid JSON"),
    "json shape": ("step_128.json", b'{"config": {}, "league": 3, "num_timesteps": 1}',
                   "step_128.json: field league must be"),
    "zip damaged": ("step_128.zip", b"PK\x03\x04 cut short", "step_128.zip.*not an SB3 model zip"),
}


@pytest.mark.parametrize("case", list(DAMAGE))
def test_a_missing_or_damaged_part_is_one_line_naming_it(one_checkpoint, tmp_path, capsys,
                                                         case):
    """Each part of a checkpoint: missing or damaged is one ValueError line naming the file
    (resume used to go on without the generator states, or print a traceback)."""
    run, ck = _copy_run(one_checkpoint, tmp_path)
    name, data, words = DAMAGE[case]
    part = ck.parent / name
    if data is None:
        part.unlink()
    else:
        part.write_bytes(data)
    with pytest.raises(ValueError, match=words) as err:
        checkpoints.resume_config(ck, out=str(tmp_path / "r"))
    assert "\n" not in str(err.value)
    from agents.cli import main
    assert main(["train", "--resume", str(ck), "--out", str(tmp_path / "r2")]) == 2
    assert name in capsys.readouterr().err


def test_an_older_checkpoints_rng_pt_resumes_with_weights_only(one_checkpoint, tmp_path,
                                                               monkeypatch):
    run, ck = _copy_run(one_checkpoint, tmp_path)
    st = json.loads((ck.parent / "step_128.rng.json").read_text())
    (ck.parent / "step_128.rng.json").unlink()
    torch.save({"torch": torch.get_rng_state(), "numpy": np.random.get_state(),
                "league_rng": st["league_rng"]}, ck.parent / "step_128.rng.pt")
    real = torch.load
    modes = []

    def spy(*a, **kw):
        modes.append(kw.get("weights_only"))
        return real(*a, **kw)

    monkeypatch.setattr(torch, "load", spy)
    cfg = checkpoints.resume_config(ck, out=str(tmp_path / "r"), timesteps=128)
    training_run.train(cfg, log=lambda s: None)
    assert modes and all(m is True for m in modes)


def test_crafted_checkpoint_and_snapshot_zips_run_nothing_on_resume(one_checkpoint, tmp_path):
    """`nertz train --resume` over a run folder from someone else: the checkpoint zip and the
    league snapshot it lists are read without unpickling (the payload would create a file)."""
    from tests.agents.hostile_files import craft

    run, ck = _copy_run(one_checkpoint, tmp_path)
    marker = tmp_path / "pwned"
    snap = run / "snapshots" / "step_128.zip"
    for z in (ck, snap):
        craft(z, tmp_path / "evil.zip", marker)
        (tmp_path / "evil.zip").replace(z)
    cfg = checkpoints.resume_config(ck, out=str(tmp_path / "r"), timesteps=256)
    model = training_run.train(cfg, log=lambda s: None)
    assert model.num_timesteps == 256 and not marker.exists()
    assert league_of(model.get_env()).snapshot_paths()[0] == \
        str(tmp_path / "r" / "snapshots" / snap.name)           # copied into the new run


def test_a_checkpoint_zip_with_garbage_weights_is_one_line(one_checkpoint, tmp_path, capsys):
    """A checkpoint zip whose data entry reads but whose weights are junk (a truncated copy):
    `nertz train --resume` fails on one line naming the zip, not a torch traceback."""
    import zipfile

    from agents.cli import main

    run, ck = _copy_run(one_checkpoint, tmp_path)
    with zipfile.ZipFile(ck) as z:
        members = {n: z.read(n) for n in z.namelist()}
    members["policy.pth"] = members["policy.pth"][:100]
    with zipfile.ZipFile(ck, "w") as z:
        for n, b in members.items():
            z.writestr(n, b)
    assert main(["train", "--resume", str(ck), "--out", str(tmp_path / "r")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "step_128.zip" in err[0] and "could not be loaded" in err[0], err
