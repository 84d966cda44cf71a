"""The agents: the interface, make_agent, the shipped bots, and the jitted bots against the
plain-Python ones (agents/python_policies.py, written from docs/heuristics.md alone)."""
from __future__ import annotations

import numpy as np
import pytest

from agents import STYLES, make_agent
from agents.registry import split_specs
from nertz_env.bot_specs import core_bot
from agents.base import Agent
from agents.bots import KNOB_NAMES, RandomAgent, ScoredAgent, knob_vector
from agents.python_policies import choose_action
from nertz_env import RulesConfig
from nertz_env.core.policies import (N_KNOBS, POLICY_RANDOM, POLICY_SCORED, new_policy_arrays,
                                     policy_actions_range)
from nertz_env.engine import Engine
from nertz_env.encoding import PLAYING
from nertz_env.envs.spaces import SpacesOnlyEnv

CONFIGS = [
    RulesConfig(num_teams=2),
    RulesConfig(num_teams=4, river_size=5),
    RulesConfig(num_teams=3, team_sizes=(2, 1, 2), speeds=(1, 2, 1, 1, 3)),
    RulesConfig(num_teams=2, stacking=False, flow_rules=False, auto_nertz=False),
    RulesConfig(num_teams=8, max_ticks=120),
]


def _knob_rows(rng, n):
    """Every shipped style, then random knob vectors (gates, withholding values included)."""
    rows = [np.array(v, np.int64) for v in STYLES.values()]
    while len(rows) < n:
        k = rng.integers(-3, 60, size=N_KNOBS)
        k[10] = rng.integers(0, 4)
        k[11] = rng.integers(0, 2)
        rows.append(k)
    return rows[:n]


@pytest.mark.parametrize("ci", range(len(CONFIGS)))
def test_jitted_bots_choose_as_python_bots(ci):
    """On every position of mixed play, every seat, every style and random knob vectors: the
    core's choice (core/policies.py, from the state) == choose_action (from the observation)."""
    cfg = CONFIGS[ci]
    rng = np.random.default_rng(100 + ci)
    E, S = 6, cfg.num_seats
    eng = Engine(cfg, n_tables=E, seed=ci, parallel=False)
    eng.reset()
    knob_rows = _knob_rows(rng, 16)
    play_kinds, play_knobs = new_policy_arrays(E, S)
    play_kinds[:, ::2] = POLICY_SCORED                  # positions from bots and random moves
    play_knobs[:] = knob_rows[1]
    prng = rng.integers(0, 2**63, size=E, dtype=np.uint64)
    kinds = np.full((E, S), POLICY_SCORED, np.int8)
    compared = 0
    for tick in range(150):
        if (eng.state.status != PLAYING).all():
            eng.reset(seed=int(rng.integers(1 << 30)))
        obs = eng.observe().copy()
        for kr in knob_rows if tick % 5 == 0 else knob_rows[:6]:
            knobs = np.broadcast_to(kr, (E, S, N_KNOBS)).copy()
            acts = np.full((E, S), -1, np.int16)
            policy_actions_range(eng.state, eng.params, eng.scratch, eng.masks, kinds, knobs,
                                 prng, acts, 0, E)
            for e in range(E):
                if eng.state.status[e] != PLAYING:
                    continue
                for s in range(S):
                    want = choose_action(obs[e, s], eng.masks[e, s], kr)
                    assert acts[e, s] == want, (ci, tick, e, s, kr.tolist())
                    assert eng.masks[e, s, acts[e, s]] == 1
                    compared += 1
        acts = np.zeros((E, S), np.int16)
        policy_actions_range(eng.state, eng.params, eng.scratch, eng.masks, play_kinds,
                             play_knobs, prng, acts, 0, E)
        assert (np.take_along_axis(eng.masks, acts[:, :, None].astype(np.int64), 2) == 1).all()
        eng.step(acts)
    assert compared > 5000


def test_python_agents_play_legal_moves():
    cfg = RulesConfig(num_teams=4)
    eng = Engine(cfg, n_tables=3, seed=3, parallel=False)
    eng.reset()
    bots = [make_agent(s, seed=1) for s in ("random", "greedy", "heuristic",
                                            "heuristic:style=cautious")]
    for _ in range(60):
        obs = eng.observe()
        acts = np.zeros((3, 4), np.int16)
        for s, bot in enumerate(bots):
            acts[:, s] = bot.act_batch(obs[:, s], eng.masks[:, s])
            for e in range(3):
                assert eng.masks[e, s, acts[e, s]] == 1
        eng.step(acts)


def test_make_agent_specs():
    assert isinstance(make_agent("random"), RandomAgent)
    g = make_agent("greedy")
    assert g.name == "greedy" and g.knobs.tolist() == list(STYLES["greedy"])
    h = make_agent("heuristic")
    assert h.name == "heuristic" and h.knobs.tolist() == list(STYLES["balanced"])
    c = make_agent("heuristic:style=cautious,withhold_stream=when-useful,flip=20")
    want = list(STYLES["cautious"])
    want[KNOB_NAMES.index("withhold_stream")] = 1
    want[KNOB_NAMES.index("flip")] = 20
    assert c.knobs.tolist() == want
    assert make_agent("heuristic:k_flip=3").knobs[KNOB_NAMES.index("flip")] == 3
    bot = RandomAgent()
    assert make_agent(bot) is bot


@pytest.mark.parametrize("spec, words", [
    ("", "non-empty"), ("minimax", "unknown kind"), ("heuristic:style=wild", "style 'wild'"),
    ("heuristic:fast", "key=value"), ("heuristic:speed=3", "knob 'speed'"),
    ("heuristic:flip=x", "flip='x'"), ("heuristic:withhold_stream=sometimes", "withhold_stream"),
    ("heuristic:withhold_river=2", "withhold_river"), ("random:x=1", "no options"),
    ("greedy:flip=2", "no options"), ("ppo:", "ppo:path"), ("ppo:/no/such/model.zip", "does not exist"),
    (None, "non-empty string"), (3, "non-empty string"), (1.5, "non-empty string"),
    (b"random", "non-empty string"), (["random"], "non-empty string"), ("   ", "non-empty"),
    (RandomAgent, "is a class"), ("Random", "unknown kind 'Random'"),
    ("heuristic:flip=1.5", "flip='1.5' must be an integer"),
    (f"heuristic:flip={10**30}", "from -1000000 to 1000000"),
    ("heuristic:flip=", "flip='' must be an integer"), ("heuristic:flip=1,flip=2", "given twice"),
    ("heuristic:style=", "style ''"),
    ("ppo:/no/model.zip,foo=1", "unknown option 'foo'; ppo options are deterministic, device"),
    ("ppo:/no/model.zip,deterministic=maybe", "must be true or false"),
    ("ppo:/no/model.zip,device=tpu", "device='tpu'"),
    ("ppo:/no/model.zip,deterministic", "key=value"),
    ("ppo:,deterministic=true", "ppo:path"),
    ("ppo:/no/model.zip:deterministic=true",
     "after a comma: ppo:/no/model.zip,deterministic=true"),
])
def test_make_agent_errors_name_the_problem(spec, words):
    with pytest.raises(ValueError, match=words) as exc:
        make_agent(spec)
    if isinstance(spec, str) and spec.strip():
        assert repr(spec.strip()) in str(exc.value)                  # names the spec


CORE_SPECS = ["random", "greedy", "heuristic", "heuristic:style=lake-rush",
              "heuristic:style=cautious,withhold_stream=keep,flip=20", "heuristic:k_flip=-3"]


@pytest.mark.parametrize("spec", CORE_SPECS)
def test_make_agent_reads_core_specs_as_the_core_does(spec):
    """One parser (nertz_env/bot_specs.py): make_agent's bot plays the core's kind and knobs
    and carries its name."""
    agent = make_agent(spec)
    kind, knobs, name = core_bot(spec)
    assert agent.name == name
    assert agent.core_policy()[0] == kind
    assert agent.core_policy()[1].tolist() == knobs.tolist()


@pytest.mark.parametrize("spec", ["heuristic:style=wild", "heuristic:flip=x", "greedy:flip=2",
                                  "random:x=1", "heuristic:fast", "heuristic:style=greedy"])
def test_make_agent_and_the_core_refuse_core_specs_alike(spec):
    with pytest.raises(ValueError) as ours:
        make_agent(spec)
    with pytest.raises(ValueError) as core:
        core_bot(spec)
    assert str(ours.value) == str(core.value)


@pytest.mark.parametrize("seed", [-1, 1.5, "3", True])
def test_make_agent_rejects_bad_seeds(seed):
    with pytest.raises(ValueError, match="seed"):
        make_agent("random", seed=seed)


def test_split_specs():
    assert split_specs("random, heuristic:style=cautious,flip=20 ,greedy") == [
        "random", "heuristic:style=cautious,flip=20", "greedy"]
    assert split_specs("ppo:m.zip,deterministic=false,device=cuda:0,random") == [
        "ppo:m.zip,deterministic=false,device=cuda:0", "random"]
    for text, words in [("", "at least one"), (",", "at least one"),
                        ("flip=2,random", "follows no agent"), (None, "must be a string"),
                        (["random"], "must be a string")]:
        with pytest.raises(ValueError, match=words):
            split_specs(text)


def test_ppo_specs_load_models_and_options(tmp_path):
    """ppo:PATH loads a MaskablePPO model, else a PPO one; options follow after commas."""
    sb3c = pytest.importorskip("sb3_contrib")
    from stable_baselines3 import PPO

    kw = dict(n_steps=8, batch_size=8, seed=0, device="cpu")
    sb3c.MaskablePPO("MlpPolicy", SpacesOnlyEnv(), **kw).save(tmp_path / "m.zip")
    PPO("MlpPolicy", SpacesOnlyEnv(), **kw).save(tmp_path / "p.zip")
    a = make_agent(f"ppo:{tmp_path / 'm.zip'}")
    assert a.name == f"ppo:{tmp_path / 'm.zip'}" and a.policy.deterministic
    assert type(a.policy.model).__name__ == "MaskablePPO"
    spec = f"ppo:{tmp_path / 'm'},deterministic=false,device=cpu"       # SB3 adds .zip
    b = make_agent(spec)
    assert b.name == spec and not b.policy.deterministic
    c = make_agent(f"ppo:{tmp_path / 'p.zip'}")
    assert type(c.policy.model).__name__ == "PPO"
    masks = np.zeros((2, 322), np.int8)
    masks[:, [0, 1]] = 1
    for agent in (a, b, c):
        assert set(agent.act_batch(np.zeros((2, 791), np.float32), masks).tolist()) <= {0, 1}


def test_ppo_load_errors_keep_the_real_reasons(tmp_path):
    """A file that is no model, or a model zip with a part missing: one ValueError naming the
    spec, the path and the real reason (not a FileNotFoundError, not a traceback)."""
    sb3c = pytest.importorskip("sb3_contrib")
    import zipfile

    from nertz_env.envs.spaces import SpacesOnlyEnv
    bad = tmp_path / "m.zip"
    bad.write_bytes(b"not a zip file")
    good = tmp_path / "good.zip"
    sb3c.MaskablePPO("MlpPolicy", SpacesOnlyEnv(), n_steps=8, batch_size=8,
                     device="cpu").save(good)
    with zipfile.ZipFile(good) as z:
        data = z.read("data")
    with zipfile.ZipFile(tmp_path / "nopolicy.zip", "w") as z:        # data, no weights
        z.writestr("data", data)
    with zipfile.ZipFile(tmp_path / "nodata.zip", "w") as z:
        z.writestr("policy.pth", b"x")
    for path, words in ((bad, "is not an SB3 model zip (BadZipFile"),
                        (tmp_path / "nopolicy.zip", "could not be loaded as MaskablePPO "
                                                    "(KeyError"),
                        (tmp_path / "nodata.zip", "has no 'data'")):
        with pytest.raises(ValueError) as exc:
            make_agent(f"ppo:{path}")
        text = str(exc.value)
        assert text.startswith(f"agent 'ppo:{path}'") and words in text, text
        assert "\n" not in text
    (tmp_path / "dir.zip").mkdir()
    with pytest.raises(ValueError, match="is a directory"):
        make_agent(f"ppo:{tmp_path / 'dir.zip'}")
    with pytest.raises(ValueError, match="after a comma"):       # m.zip exists, the path does not
        make_agent(f"ppo:{bad}:deterministic=true")


def test_knob_vector_styles_and_overrides():
    assert knob_vector("lake-rush").tolist() == list(STYLES["lake-rush"])
    with pytest.raises(ValueError, match="style"):
        knob_vector("nope")
    assert knob_vector("balanced", withhold_stream="never")[10] == 2
    assert knob_vector("balanced", withhold_stream="keep")[10] == 3


def test_agent_interface_batch_default():
    class First(Agent):
        def act(self, observation, action_mask):
            return int(np.flatnonzero(action_mask)[-1])
    masks = np.zeros((2, 322), np.int8)
    masks[:, 0] = 1
    masks[1, 7] = 1
    assert First().act_batch(np.zeros((2, 791), np.float32), masks).tolist() == [0, 7]
    assert First().core_policy() is None


@pytest.mark.parametrize("value", [1.9, 1.0, True, np.bool_(True), "1", None, 70000, -1])
def test_default_act_batch_checks_every_id(value):
    """Agent.act_batch used to cast act's answers to int64: 1.9 became 1 in silence."""
    class Odd(Agent):
        name = "odd"

        def act(self, observation, action_mask):
            return value
    with pytest.raises(ValueError, match="agent 'odd' act"):
        Odd().act_batch(np.zeros((2, 791), np.float32), np.ones((2, 322), np.int8))


def test_random_agent_is_seeded_and_uniform():
    mask = np.zeros(322, np.int8)
    mask[[0, 1, 5]] = 1
    obs = np.zeros(791, np.float32)
    a, b = RandomAgent(4), RandomAgent(4)
    xs = [a.act(obs, mask) for _ in range(300)]
    assert xs == [b.act(obs, mask) for _ in range(300)]
    assert set(xs) == {0, 1, 5}
    counts = np.bincount(xs, minlength=6)[[0, 1, 5]]
    assert (np.abs(counts - 100) < 35).all(), counts      # 300 draws, 3 legal: ~100 each
    with pytest.raises(ValueError, match="no legal action"):
        a.act(obs, np.zeros(322, np.int8))
    assert a.core_policy()[0] == POLICY_RANDOM


def test_scored_agent_core_policy_is_its_knobs():
    h = ScoredAgent("river-builder")
    kind, knobs = h.core_policy()
    assert kind == POLICY_SCORED and knobs.tolist() == list(STYLES["river-builder"])
