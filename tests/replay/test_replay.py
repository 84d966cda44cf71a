"""Replays (nertz_env/replay/: format.py, recorder.py, playback.py): every way a hand is played records it, the file round-trips,
playing it back reaches the same layouts and scores, bad files are clear errors, and the
terminal and animation views read it."""
from __future__ import annotations

import gzip
import json

import numpy as np
import pytest

from agents.cli import main
from agents.arena.experiment import run_experiment, spec_from_dict
from agents.arena.tournament import parse_record, run_tournament
from nertz_env import RulesConfig, Table, nertz_v0
from nertz_env.envs.gym import NertzGymEnv
from nertz_env.envs.selfplay_sb3 import NertzSelfPlayVecEnv
from nertz_env.envs.vector import NertzVecEnv
from nertz_env.replay import Recorder, Replay, ReplayError, record
from nertz_env.replay.terminal import browse, find_event, write_animation
from tests.helpers import layout_of, pick_moves, random_config, team


def legal(rng, mask):
    return int(rng.choice(np.flatnonzero(mask)))


def roundtrip(rep, tmp_path, name="r.nertz.json.gz") -> Replay:
    return Replay.load(rep.save(tmp_path / name))


# ---------------------------------------------------------------------- every env records
def test_table_hands_replay_to_every_layout(tmp_path):
    """Random legal play over the Table API, many configs: the replay's frames are the
    table's own layouts, tick by tick, and its scores at the end."""
    rng = np.random.default_rng(5)
    for i in range(6):
        cfg = random_config(rng, illegal_move="penalize")
        table = Table.deal(cfg, seed=i)
        rec = record(table)
        seen = []
        while not table.hand_over and table.tick < 120:
            seen.append(table.layout())
            moves = pick_moves(rng, [[str(m) for m in table.legal_moves(s)]
                                     for s in range(cfg.num_seats)])
            if rng.random() < 0.05:               # a penalized illegal move now and then
                moves[0] = "nertz>river0" if "nertz>river0" not in moves.values() else "wait"
            table.step(moves)
        seen.append(table.layout())
        rep = roundtrip(rec.replay(), tmp_path)
        rep.check()
        frames = rep.frames(0)
        assert [f["layout"] for f in frames] == seen
        assert frames[-1]["scores"] == table.hand_scores()


def test_a_hand_from_a_layout_and_the_conflict_event(tmp_path):
    """Two teams race a 2H to the one AH pile: the replay starts from the written layout,
    and the loser's failed move is a conflict event (R22) at that tick."""
    lay = layout_of([team(["5S", "2H"]), team(["5C", "2H"])], lake=[["AH"]])
    table = Table.from_layout(lay)
    rec = record(table, agents=["north", "south"])
    table.step({0: "nertz>lake", 1: "nertz>lake"}, priority=[1, 0])
    rep = roundtrip(rec.replay(), tmp_path)
    rep.check()
    h = rep.hands[0]
    assert h.layout is not None and h.decks is None
    frames = rep.frames(0)
    assert frames[0]["moves"] == ["nertz>lake", "nertz>lake"]
    assert frames[0]["order"] == [1, 0] and frames[0]["applied"] == [False, True]
    assert frames[0]["events"] == ["conflict: seat 0 nertz>lake failed (R22)"]
    assert frames[1]["layout"]["lake"] == [["AH", "2H@1"]]
    assert find_event(frames, -1, "conflict") == 0


def test_parallel_aec_gym_vector_and_selfplay_envs_record(tmp_path):
    rng = np.random.default_rng(1)
    reps = []
    env = nertz_v0.parallel_env(num_teams=3, max_ticks=80, episode="game", target_score=20)
    rec = record(env)
    obs, _ = env.reset(seed=3)
    while env.agents:
        obs, *_ = env.step({a: legal(rng, obs[a]["action_mask"]) for a in env.agents})
    reps.append((rec.replay(), 2))                # a game: at least two hands

    aec = nertz_v0.env(num_teams=2, max_ticks=60)
    rec = record(aec)
    aec.reset(seed=2)
    for agent in aec.agent_iter(200):
        o, _, te, tr, _ = aec.last()
        aec.step(None if te or tr else legal(rng, o["action_mask"]))
    reps.append((rec.replay(), 1))

    g = NertzGymEnv(max_ticks=70)
    rec = record(g)
    g.reset(seed=5)
    done = False
    while not done:
        _, _, te, tr, _ = g.step(legal(rng, g.action_masks()))
        done = te or tr
    reps.append((rec.replay(), 1))

    v = NertzVecEnv(num_envs=3, num_teams=2, max_ticks=50, opponents="greedy")
    rec = record(v, tables=[0, 2])
    v.reset()
    for _ in range(120):
        v.step_async(np.array([legal(rng, m) for m in v.action_masks()]))
        v.step_wait()
    reps.append((rec.replay(), 4))                # 2 tables x 2 finished hands at least

    sp = NertzSelfPlayVecEnv(n_tables=2, num_teams=2, max_ticks=40)
    rec = record(sp)
    sp.reset()
    for _ in range(90):
        sp.step_async(np.array([legal(rng, m) for m in sp.action_masks()]))
        sp.step_wait()
    reps.append((rec.replay(), 4))

    for rep, at_least in reps:
        rep = roundtrip(rep, tmp_path)
        assert len(rep.hands) >= at_least
        rep.check()


def test_a_replay_does_not_depend_on_the_tables_generator(tmp_path):
    """The priority orders are stored: a hand replays the same whatever key the table's
    generator had (tournaments restart it per hand)."""
    rng = np.random.default_rng(0)
    env = nertz_v0.parallel_env(num_teams=4, max_ticks=200)
    rec = record(env)
    obs, _ = env.reset(seed=11)
    while env.agents:
        obs, *_ = env.step({a: legal(rng, obs[a]["action_mask"]) for a in env.agents})
    rep = rec.replay()
    assert any(len(set(map(tuple, h.priority))) > 1 for h in rep.hands)   # orders vary
    rep.check()


# ---------------------------------------------------------------------- tournaments
def test_tournament_records_chosen_tables_exactly(tmp_path):
    res = run_tournament(["heuristic", "greedy", "random"], teams=3, deals=3, seed=4,
                         record="deals:2", progress=False)
    assert len(res.replays) == 6                                   # the 6 seatings of deal 2
    paths = res.write(tmp_path, plot=False)
    files = sorted((tmp_path / "replays").iterdir())
    assert len(files) == 6 and set(files) <= set(paths)
    for rep, path in zip(res.replays, files):
        back = Replay.load(path)
        back.check()
        m = back.meta
        row = np.flatnonzero((res.records.deal == m["deal"]) & (res.records.rotation == m["seating"]))
        assert back.hands[0].end["scores"] == res.hand_scores[row[0], 0].tolist()
        assert back.hands[0].end["tick"] == int(res.ticks[row[0]])
        seats = [res.names[a] for a in res.records.agent[row[0]]]
        assert back.agents == seats                           # one seat per team here


def test_tournament_games_record_every_hand(tmp_path):
    res = run_tournament(["heuristic", "greedy"], teams=2, deals=2, seed=1, mode="games",
                         record="all", progress=False, config=RulesConfig(target_score=60))
    assert len(res.replays) == len(res.records)
    for i, rep in enumerate(res.replays):
        rep.check()
        assert len(rep.hands) == int(res.hands[i])
        got = [h.end["scores"] for h in rep.hands]
        assert got == res.hand_scores[i, :len(got)].tolist()


def test_tournament_with_a_learned_agent_records(tmp_path):
    pytest.importorskip("sb3_contrib")
    res = run_tournament(["learned", "heuristic:style=river-builder"], teams=2, deals=2,
                         seed=0, record="first:2", progress=False)
    assert len(res.replays) == 2
    for rep in res.replays:
        assert "learned" in rep.agents
        roundtrip(rep, tmp_path).check()


def test_a_recording_that_does_not_match_is_refused(monkeypatch):
    """record_tables checks its replays against the run's own scores."""
    import agents.arena.play as play
    real = play.play_python

    def off_by_one(config, roster, tables, games, out, **kw):
        rec = real(config, roster, tables, games, out, **kw)
        out.scores[:] += 1                         # as if the replay ended elsewhere
        return rec
    monkeypatch.setattr(play, "play_python", off_by_one)
    with pytest.raises(RuntimeError, match="samples its moves"):
        run_tournament(["greedy", "random"], deals=2, seed=0, record="first:1", progress=False)


@pytest.mark.parametrize("bad", ["some", "first:0", "first:x", "deals:", "deals:-1", 3])
def test_record_forms_are_checked(bad):
    with pytest.raises(ValueError, match="all, first:N"):
        parse_record(bad)
    with pytest.raises(ValueError, match="all, first:N"):
        run_tournament(["greedy", "random"], deals=2, record=bad, progress=False)


def test_record_deal_beyond_the_run_is_an_error():
    with pytest.raises(ValueError, match="deal 5 will not be played"):
        run_tournament(["greedy", "random"], deals=2, record="deals:5", progress=False)


def test_experiment_records_each_cell(tmp_path):
    spec = spec_from_dict({"baseline": "greedy", "treatments": {"h": "heuristic"},
                           "teams": [2, 3], "deals": 2, "seed": 3})
    res = run_experiment(spec, progress=False, record="first:1")
    assert [r.meta["cell_index"] for r in res.replays] == [0, 1]
    assert res.replays[0].agents == ["h", "greedy"]
    res.write(tmp_path, plot=False)
    for f in sorted((tmp_path / "replays").iterdir()):
        assert f.name.startswith("cell")
        Replay.load(f).check()


# ---------------------------------------------------------------------- bad files
@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    d = tmp_path_factory.mktemp("rep")
    res = run_tournament(["heuristic", "greedy"], teams=4, deals=2, seed=2, record="first:1",
                         progress=False)
    rep = res.replays[0]
    return rep, rep.save(d / "h.nertz.json.gz"), rep.save(d / "h.json")


def test_truncated_files_are_clear_errors(saved, tmp_path):
    _, gz, plain = saved
    for src, cut in ((gz, 0.6), (plain, 0.5), (plain, 0.0)):
        data = src.read_bytes()
        p = tmp_path / src.name
        p.write_bytes(data[:int(len(data) * cut)])
        with pytest.raises(ReplayError, match="truncated"):
            Replay.load(p)
    with pytest.raises(ReplayError, match="cannot read"):
        Replay.load(tmp_path / "missing.json")


def _edit(path, tmp_path, change, rehash=False):
    body = json.loads(path.read_text())
    change(body)
    if rehash:
        from nertz_env.replay.format import _checksum
        body["sha256"] = _checksum({k: v for k, v in body.items() if k != "sha256"})
    out = tmp_path / "edited.json"
    out.write_text(json.dumps(body))
    return out


def test_corrupted_files_are_clear_errors(saved, tmp_path):
    _, _, plain = saved

    def flip_action(b):
        b["hands"][0]["actions"][5] = (b["hands"][0]["actions"][5] + 1) % 300
    with pytest.raises(ReplayError, match="checksum mismatch"):
        Replay.load(_edit(plain, tmp_path, flip_action))
    for change, words in [
        (lambda b: b.update(version=2), "version 2 is not supported"),
        (lambda b: b.update(format="chess"), "not a nertz replay"),
        (lambda b: b["hands"][0].pop("priority"), "missing key 'priority'"),
        (lambda b: b["hands"][0].update(priority="0000" * b["hands"][0]["ticks"]),
         "permutation of the seats"),
        (lambda b: b["hands"][0]["actions"].pop(), "ticks x seats"),
        (lambda b: b["hands"][0]["decks"].__setitem__(0, "AS AS"), r"decks\[0\]"),
        (lambda b: b["config"].update(num_teams=9), "'config' is not a valid RulesConfig"),
        (lambda b: b.update(agents=["x"]), "'agents' must list 4 names"),
    ]:
        with pytest.raises(ReplayError, match=words):
            Replay.load(_edit(plain, tmp_path, change, rehash=True))


def test_a_consistent_but_wrong_replay_fails_its_check(saved, tmp_path):
    """A file edited and re-hashed (so it loads) no longer reaches its recorded end."""
    _, _, plain = saved
    Replay.load(plain).check()

    def swap_order(b):                            # every tick resolved in the other order
        h = b["hands"][0]
        p, S = h["priority"], len(b["agents"])
        h["priority"] = "".join(p[i:i + S][::-1] for i in range(0, len(p), S))

    def other_scores(b):
        b["hands"][0]["end"]["scores"][0] += 1

    def wait_everywhere(b):
        h = b["hands"][0]
        h["actions"] = [0] * len(h["actions"])
    for change in (swap_order, other_scores, wait_everywhere):
        rep = Replay.load(_edit(plain, tmp_path, change, rehash=True))
        with pytest.raises(ReplayError, match="hand 0"):
            rep.check()


def test_gzip_files_are_the_same_bytes_for_the_same_replay(saved, tmp_path):
    rep, gz, _ = saved
    assert rep.save(tmp_path / "again.nertz.json.gz").read_bytes() == gz.read_bytes()
    assert json.loads(gzip.decompress(gz.read_bytes()))["format"] == "nertz-replay"


def test_recorder_arguments_are_checked():
    table = Table.deal()
    with pytest.raises(ValueError, match="list of 2 names"):
        Recorder(table.engine, agents=["one"])
    with pytest.raises(ValueError, match="list of 2 names"):
        Recorder(table.engine, agents="ab")                # not two names, one string
    for tables in ([3], "0", [True], 0):
        with pytest.raises(ValueError, match="table numbers 0..0"):
            Recorder(table.engine, tables=tables)
    with pytest.raises(ValueError, match="meta must be a dict"):
        Recorder(table.engine, meta=5)
    with pytest.raises(ValueError, match="no nertz Engine"):
        record(object())
    rep = record(table).replay()
    with pytest.raises(ValueError, match="hand=0"):
        rep.frames(0)                                  # nothing was played yet


# ---------------------------------------------------------------------- views
def test_browse_steps_jumps_and_searches(saved):
    rep = saved[0]
    frames = rep.frames(0)
    call = find_event(frames, -1, "called")
    assert call is not None
    out = []
    lines = iter(["n", "n", "p", "/ called", "? nothing-like-this", f"j {frames[-1]['tick']}",
                  "", "e", "bogus", "q"])
    browse(rep, 0, read=lambda prompt: next(lines), write=out.append)
    text = "\n".join(out)
    def at(k):
        return f"tick {frames[k]['tick']}, before its moves"
    assert at(1) in out[2] and at(2) in out[3]
    assert at(1) in out[4]
    assert at(call) in out[5] and "called (R24)" in out[5]
    assert "no earlier event with 'nothing-like-this'" == out[6]
    assert at(-1) in out[7] and out[8] == "end of the hand"
    assert "called (R24)" in out[9]
    assert "unknown command 'bogus'" in text


def test_cli_replay_checks_and_shows(saved, tmp_path, capsys):
    _, gz, _ = saved
    gif = tmp_path / "h.gif"
    assert main(["replay", str(gz), "--events", "--tick", "2", "--video", str(gif),
                 "--every", "7"]) == 0
    out = capsys.readouterr().out
    assert "checked: every hand replays" in out and "called (R24)" in out
    assert "tick 2, before its moves" in out and "moves chosen at tick 2 (in priority order" in out
    from PIL import Image
    ticks = Replay.load(gz).hands[0].ticks
    with Image.open(gif) as im:
        assert im.n_frames == len(range(0, ticks + 1, 7)) + (ticks % 7 != 0)
    assert main(["replay", str(tmp_path / "nope.json")]) == 2
    assert "cannot read" in capsys.readouterr().err
    assert main(["replay", str(gz), "--hand", "4"]) == 2
    assert "hands 0..0" in capsys.readouterr().err
    assert main(["replay", str(gz), "--tick", "99999"]) == 2
    with pytest.raises(ValueError, match=".gif or an .mp4"):
        write_animation(Replay.load(gz), tmp_path / "x.avi")


def test_cli_tournament_record_needs_out(capsys):
    assert main(["tournament", "--agents", "greedy,random", "--deals", "2", "--record",
                 "all", "--quiet"]) == 2
    err = capsys.readouterr().err                     # (the tournament CLI's own words)
    assert "--record" in err and "--out" in err and err.count("\n") == 1


def test_mp4_has_one_frame_per_kept_tick(saved, tmp_path):
    """MP4 needs the [video] extra: skipped without it, failed under NERTZ_REQUIRE_CLIENTS=1."""
    import importlib
    import os
    try:
        importlib.import_module("imageio_ffmpeg")
        imageio = importlib.import_module("imageio.v2")
    except ImportError as err:
        if os.environ.get("NERTZ_REQUIRE_CLIENTS") == "1":
            pytest.fail(f"the [video] extra is not installed ({err})")
        pytest.skip(f"the [video] extra is not installed ({err})")
    rep = saved[0]
    path = write_animation(rep, tmp_path / "h.mp4", every=5, fps=20)
    ticks = rep.hands[0].ticks
    with imageio.get_reader(path) as reader:
        assert reader.count_frames() == len(range(0, ticks + 1, 5)) + (ticks % 5 != 0)


def test_unwritable_outputs_are_one_line_errors(saved, tmp_path, capsys):
    _, gz, _ = saved
    (tmp_path / "file").write_text("")
    bad = str(tmp_path / "file" / "under-a-file")
    with pytest.raises(ValueError, match="cannot write it"):
        saved[0].save(bad + ".json")
    for flag, name in (("--html", "x.html"), ("--video", "x.gif")):
        assert main(["replay", str(gz), "--no-check", flag, f"{bad}/{name}"]) == 1   # I/O
        assert "cannot write it" in capsys.readouterr().err


def test_meta_that_is_not_json_is_a_clear_error(tmp_path):
    table = Table.deal()
    rec = record(table, meta={"when": object()})
    table.step({})
    with pytest.raises(ValueError, match="must hold JSON values"):
        rec.replay().save(tmp_path / "x.json")
    assert not (tmp_path / "x.json").exists()


def test_an_experiment_refuses_an_unplayed_deal_before_playing(monkeypatch):
    import agents.arena.experiment as exp
    monkeypatch.setattr(exp, "_play_cell", lambda *a, **k: pytest.fail("played first"))
    spec = spec_from_dict({"baseline": "greedy", "treatments": {"h": "heuristic"}, "deals": 3})
    with pytest.raises(ValueError, match="deal 3 will not be played"):
        run_experiment(spec, progress=False, record="deals:3")
