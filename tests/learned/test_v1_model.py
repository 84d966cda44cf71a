"""A network that reads the v1 observation is a first-class model (issue 42 items 1 and 4):
its file says so and is checked, it plays as a seat-view agent wherever an agent plays
(tournaments, families, the envs' opponents), widening a v0 model gives one that plays the
same moves, and it never peeks at the cards no seat has seen."""
from __future__ import annotations

import json

import numpy as np
import pytest

from agents.arena.tournament import run_tournament
from agents.base import Agent, SeatView
from agents.learned import v1 as v1mod
from agents.learned.family import write_family
from agents.learned.v1 import widen_model
from agents.learned.weights import load_weights, save_weights
from agents.registry import MODELS_DIR, make_agent
from nertz_env import RulesConfig
from nertz_env.core.observe import OBS_DIM
from nertz_env.core.observe_memory import V1_NEXT, V1_OBS_DIM
from nertz_env.envs.seats import SeatDriver
from tests.search.test_search_agent import _same_records, permute_never_seen, positions

V0 = MODELS_DIR / "learned.npz"


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    """{name: .npz path}: v0 (the shipped generalist), wide (it widened: zero memory
    weights), mem (wide with non-zero memory weights)."""
    d = tmp_path_factory.mktemp("v1models")
    widen_model(V0, d / "wide")
    meta, arrays = load_weights(d / "wide.npz")
    w = arrays["hidden0_weight"].copy()
    w[:, OBS_DIM:] = np.random.default_rng(0).normal(0, 3.0, (w.shape[0], V1_OBS_DIM - OBS_DIM))
    save_weights(d / "mem", meta, dict(arrays, hidden0_weight=w))
    return {"v0": V0, "wide": d / "wide.npz", "mem": d / "mem.npz"}


def _one_line_error(fn, *words):
    with pytest.raises(ValueError) as err:
        fn()
    text = str(err.value)
    assert "\n" not in text and all(w in text for w in words), text
    return text


# ------------------------------------------------------------------ 1. the format
def test_the_file_records_its_observation_and_v0_files_are_unchanged(models):
    meta = json.loads(models["wide"].with_suffix(".json").read_text())
    assert meta["observation"] == "v1" and meta["observation_size"] == V1_OBS_DIM
    assert meta["arrays"]["hidden0_weight"][1] == V1_OBS_DIM
    for js in MODELS_DIR.glob("*.json"):                  # absent: v0, as every shipped file
        assert "observation" not in json.loads(js.read_text()), js.name
    v0, a0 = load_weights(V0)
    _, a1 = load_weights(models["wide"])
    assert not a1["hidden0_weight"][:, OBS_DIM:].any()
    np.testing.assert_array_equal(a1["hidden0_weight"][:, :OBS_DIM], a0["hidden0_weight"])
    for k in a0:
        if k != "hidden0_weight":
            np.testing.assert_array_equal(a0[k], a1[k])


@pytest.mark.parametrize("change,words", [
    ({"observation": "v1"}, ("observation_size must be 1019", "'v1'", "got 791")),
    ({"observation": "v2"}, ("observation must be", '"v2"')),
    ({"observation": True}, ("observation must be",)),
    ({"observation": "v0", "observation_size": 1019}, ("observation_size must be 791",))])
def test_an_observation_that_disagrees_with_the_width_is_one_line(tmp_path, models, change,
                                                                  words):
    src = V0 if change.get("observation_size") != 1019 else models["wide"]
    meta = json.loads(src.with_suffix(".json").read_text())
    meta.update(change)
    if "observation_size" in change:          # arrays as that width declares them
        meta["observation"] = "v0"
    (tmp_path / "m.npz").write_bytes(src.read_bytes())
    (tmp_path / "m.json").write_text(json.dumps(meta))
    text = _one_line_error(lambda: load_weights(tmp_path / "m.npz"), *words)
    assert "m.json" in text
    _one_line_error(lambda: make_agent(f"ppo:{tmp_path / 'm.npz'}"), "m.json")


# ------------------------------------------------------------------ 2. playing a v1 net
@pytest.mark.parametrize("teams", [2, 4])
def test_a_widened_model_plays_exactly_the_v0_models_records(models, teams):
    """The v1 net (in the net kernel, which keeps the memory: the Python loop's records, tests/
    learned/test_core_play_v1.py) with zero memory weights
    plays the v0 net's tournament (through the net kernel) record for record: its rows'
    v0 prefix is the v0 observation, column for column."""
    wide = make_agent(f"ppo:{models['wide']}")
    assert wide.seat_view and not make_agent(f"ppo:{V0}").seat_view
    deals = 12 if teams == 2 else 4          # enough that a row off by one column shows
    a = run_tournament([wide, "learned"], teams=teams, deals=deals, seed=4, progress=False)
    b = run_tournament([f"ppo:{V0}", "learned"], teams=teams, deals=deals, seed=4,
                       progress=False)
    _same_records(a, b)
    c = run_tournament([f"ppo:{models['mem']}", "learned"], teams=teams, deals=deals, seed=4,
                       progress=False)
    assert not np.array_equal(c.records.score, b.records.score)    # the memory is read


def test_a_family_with_a_v1_member_plays_it_with_the_view(tmp_path, models):
    fam = write_family(tmp_path / "fam", [("gen", models["wide"], {})])
    agent = make_agent(f"learned:family={fam}")
    bound = agent.for_table(RulesConfig(num_teams=2))
    assert agent.seat_view and bound.seat_view       # the Python loop passes it a view;
    assert all(p is bound.policies[bound.by_hand] for p, _ in bound.core_networks())  # kernel
    a = run_tournament([agent, "learned"], teams=2, deals=3, seed=4, progress=False)
    b = run_tournament([f"ppo:{V0}", "learned"], teams=2, deals=3, seed=4, progress=False)
    _same_records(a, b)
    _one_line_error(lambda: bound.act_batch(np.zeros((1, OBS_DIM), np.float32),
                                            np.ones((1, 322), bool)), "v1 observation",
                    "seat view")


def test_act_batch_without_a_view_is_one_line(models):
    agent = make_agent(f"ppo:{models['wide']}")
    obs, mask = np.zeros((1, OBS_DIM), np.float32), np.ones((1, 322), np.int8)
    for fn in (lambda: agent.act_batch(obs, mask), lambda: agent.act(obs[0], mask[0])):
        _one_line_error(fn, "ppo:", "reads the v1 observation", "act_batch has no view")


def test_a_v1_network_given_v0_rows_is_one_line(models):
    """The net's own fast path (NumpyPolicy.act_batch, the sparse first layer) reads the
    columns it is given: a v0 row for a v1 net must be refused, not played without memory."""
    from agents.learned.ppo import load_weights_policy
    policy = load_weights_policy(models["wide"])
    obs, mask = np.zeros((2, OBS_DIM), np.float32), np.ones((2, 322), bool)
    _one_line_error(lambda: policy.act_batch(obs, mask), f"{V1_OBS_DIM} values per row")
    wide = np.zeros((2, V1_OBS_DIM), np.float32)
    assert policy.act_batch(wide, mask).shape == (2,)


def _moves(spec, st, eng, mem, rows_t, rows_s, obs, masks):
    keys = np.arange(st.tick.shape[0], dtype=np.uint64)
    return make_agent(spec).act_view(SeatView(eng.config, st, mem, keys, rows_t, rows_s,
                                              obs, masks))


def _twins(spec, teams, n=24, ticks=(10, 25, 40)):
    """(moves on the real tables, on their never-seen-permuted twins, the zero-memory net's
    moves on the real tables)."""
    real, twin, zero = [], [], []
    for tk in ticks:
        eng, mem = positions(teams, n, tk, seed=tk)
        other = permute_never_seen(eng.state, mem, seed=tk)
        assert any((a != b).any() for a, b in zip(eng.state, other))
        live = np.flatnonzero(eng.state.status == 0)
        rows_t = np.repeat(live, eng.config.num_seats)
        rows_s = np.tile(np.arange(eng.config.num_seats), live.size)
        obs, masks = SeatDriver(eng).gather(rows_t, rows_s)
        real.append(_moves(spec[0], eng.state, eng, mem, rows_t, rows_s, obs, masks))
        twin.append(_moves(spec[0], other, eng, mem, rows_t, rows_s, obs, masks))
        zero.append(_moves(spec[1], eng.state, eng, mem, rows_t, rows_s, obs, masks))
    return np.concatenate(real), np.concatenate(twin), np.concatenate(zero)


@pytest.mark.parametrize("teams", [2, 4])
def test_no_peeking_permuting_never_seen_cards_never_changes_a_move(models, teams):
    real, twin, zero = _twins((f"ppo:{models['mem']}", f"ppo:{models['wide']}"), teams)
    assert (real != zero).sum() >= 3               # the memory weights do move its choices
    np.testing.assert_array_equal(real, twin)


def test_the_no_peeking_test_catches_a_view_that_reads_the_true_stream(models, monkeypatch):
    """Negative control: rows whose next-flip slot holds the true next stock card (what no
    seat may know) change moves on the permuted twins."""
    honest = v1mod.view_rows

    def peeking(view):
        rows = honest(view)
        st = view.state
        team = np.asarray(view.config.seat_team)[view.seats]
        k = st.waste_n[view.rows, team]
        card = st.stream[view.rows, team, np.minimum(k, st.stream_n[view.rows, team] - 1)]
        card = card.astype(np.int64) % 52
        rows[:, V1_NEXT:V1_NEXT + 6] = 0
        rows[:, V1_NEXT] = 1
        rows[:, V1_NEXT + 1] = (card % 13 + 1) / 13
        rows[np.arange(len(rows)), V1_NEXT + 2 + card // 13] = 1
        return rows

    monkeypatch.setattr("agents.learned.ppo.view_rows", peeking)
    real, twin, _ = _twins((f"ppo:{models['mem']}", f"ppo:{models['wide']}"), 2)
    assert (real != twin).any()


# ------------------------------------------------------------------ 3. widening
def test_widening_refuses_a_v1_model_and_an_existing_out_and_writes_nothing(tmp_path, models):
    _one_line_error(lambda: widen_model(models["wide"], tmp_path / "x"), "only a v0 model")
    assert not list(tmp_path.iterdir())
    (tmp_path / "y.json").write_text("{}")
    _one_line_error(lambda: widen_model(V0, tmp_path / "y"), "exists")
    assert not (tmp_path / "y.npz").exists()


def test_the_widen_command(tmp_path, capsys):
    assert v1mod.main([str(V0), str(tmp_path / "w")]) == 0
    assert json.loads((tmp_path / "w.json").read_text())["observation"] == "v1"
    assert v1mod.main([str(V0), str(tmp_path / "w")]) == 2          # exists: bad input
    assert "error:" in capsys.readouterr().err


# ------------------------------------------------------------------ 4. the envs' opponents
def _episode(opponent, steps=400):
    from nertz_env.envs.gym import NertzGymEnv
    env = NertzGymEnv(num_teams=3, opponents=opponent)
    obs, info = env.reset(seed=5)
    out = [obs]
    for _ in range(steps):
        legal = np.flatnonzero(info["action_mask"])
        obs, r, term, trunc, info = env.step(int(legal[-1]))
        out.append(obs)
        if term or trunc:
            break
    return np.array(out)


def test_a_v1_net_opponent_plays_in_the_gym_env(models):
    wide = _episode(make_agent(f"ppo:{models['wide']}"))
    np.testing.assert_array_equal(wide, _episode(make_agent(f"ppo:{V0}")))
    assert not np.array_equal(_episode(make_agent(f"ppo:{models['mem']}")), wide)


def _vec_run(opponent, steps=60):
    from nertz_env.envs.vector import NertzVecEnv
    env = NertzVecEnv(num_envs=6, num_teams=3, seed=7, opponents=opponent)
    out = [env.reset()]
    for _ in range(steps):
        masks = env.action_masks()
        acts = np.array([np.flatnonzero(m)[-1] for m in masks])
        obs, rew, done, _ = env.step(acts)
        out += [obs, rew[:, None].astype(np.float32)]
    return np.concatenate(out, axis=1)


class _V0Viewer(Agent):
    """The v0 net as a seat-view agent (the vector envs take only those and core bots)."""
    seat_view = True

    def __init__(self, inner):
        self.inner, self.name = inner, "v0-viewer"

    def act_view(self, view):
        return self.inner.act_batch(view.observations, view.masks)


def test_a_v1_net_opponent_plays_in_the_vector_env(models):
    """The vector envs take a v1 net (a seat-view agent; a v0 `ppo:` is refused there)."""
    wide = _vec_run(make_agent(f"ppo:{models['wide']}"))
    np.testing.assert_array_equal(wide, _vec_run(_V0Viewer(make_agent(f"ppo:{V0}"))))
    assert not np.array_equal(_vec_run(make_agent(f"ppo:{models['mem']}")), wide)


def test_a_v1_net_plays_at_the_human_table(tmp_path, models):
    """The human session passes a v1 net its seat view: the widened net plays the v0 net's
    hand move for move (the person's moves scripted), the memory weights another."""
    from nertz_env.replay import Replay
    from tests.human.test_play_search import scripted_hand

    def hand(name):
        path = tmp_path / f"{name}.nertz.json.gz"
        scripted_hand(RulesConfig(num_teams=2), f"ppo:{models[name]}", 3, path)
        return Replay.load(path).hands[0]

    wide, v0 = hand("wide"), hand("v0")
    assert np.array_equal(wide.actions, v0.actions) and wide.ticks == v0.ticks
    assert not np.array_equal(hand("mem").actions, wide.actions)
