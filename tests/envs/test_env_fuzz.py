"""Fuzzing every environment entry point with malformed input: the ParallelEnv, the
AEC forms (nertz_v0.env / raw_env), NertzGymEnv, NertzVecEnv (SB3) and NertzGymVectorEnv, on
their constructors, reset (seeds, options), step / step_async (actions of every wrong type,
shape and range, unknown agents) and seed / set_options.

Every malformed call must be a ValueError, never a TypeError, OverflowError or a crash inside
numba, and must leave the env exactly as it was: its snapshot (state arrays, generators,
bookkeeping) compares equal before and after. The env objects are built once and reused
across examples (a failed call changes nothing, so every example starts from the same
position). The same bad action id gets the same words from every env (the shared validator of
nertz_env/actions.py), after the part that names the agent / argument.
"""
from __future__ import annotations

import copy
import functools

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nertz_env import N_ACTIONS, RulesConfig, nertz_v0
from nertz_env.envs.gym import NertzGymEnv
from nertz_env.envs.gym_vector import NertzGymVectorEnv

FUZZ = settings(max_examples=60, deadline=None,
                suppress_health_check=[HealthCheck.too_slow])
N_ENVS = 3

pytestmark = pytest.mark.filterwarnings("ignore:Observation is not a NumPy array:UserWarning")


# ------------------------------------------------------------------------------ strategies
def out_of_range_ints():
    return st.one_of(st.integers(max_value=-1), st.integers(min_value=N_ACTIONS),
                     st.sampled_from([2**31, 2**63, 2**64, -2**63, 10**30]))


# anything that is not an action id (None aside: it means Wait in the PettingZoo envs)
bad_action_ids = st.one_of(
    st.booleans(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.integers(0, N_ACTIONS - 1).map(float),                       # 3.0: equal to an id
    out_of_range_ints(),
    out_of_range_ints().filter(lambda x: -2**63 <= x < 2**63).map(np.int64),
    st.text(max_size=4),
    st.binary(max_size=3),
    st.complex_numbers(max_magnitude=10),
    st.lists(st.integers(0, N_ACTIONS - 1), min_size=2, max_size=3),
    st.lists(st.integers(0, N_ACTIONS - 1), max_size=0),
    st.sampled_from([np.float32(1.0), np.float64(2.5), np.bool_(True), np.bool_(False),
                     np.array([1, 2]), np.array([1.0]), np.array([[0]], bool), np.array([]),
                     np.array(["0"]), {"id": 0}, object(), np.uint64(2**64 - 1),
                     np.array(5.0), np.array([N_ACTIONS])]),
)

bad_seeds = st.one_of(
    st.integers(max_value=-1), st.floats(allow_nan=True), st.text(max_size=3), st.booleans(),
    st.lists(st.integers(0, 5), min_size=1, max_size=2), st.complex_numbers(max_magnitude=3),
    st.sampled_from([np.float64(1.0), np.int64(-3), np.bool_(True), object(), b"1"]),
)

bad_layouts = st.one_of(
    st.integers(), st.text(max_size=3), st.lists(st.integers(), max_size=2),
    st.sampled_from([{}, {"teams": 3}, {"lake": [], "teams": []}, {"lake": 5, "teams": [{}]},
                     {"lake": [], "teams": [{"nertz": ["ZZ"]}, {}]}]),
)


def bad_options(allowed):
    """options that are not None/{}-with-allowed-keys: a non-dict, an unknown key, or (when
    "layout" is allowed) a malformed layout."""
    key = st.one_of(st.text(max_size=6), st.integers(), st.none()).filter(
        lambda k: k not in allowed and k != "options")
    strategies = [
        st.one_of(st.text(max_size=3), st.integers(), st.lists(st.text(max_size=3), max_size=2),
                  st.floats()),
        st.dictionaries(key, st.integers(), min_size=1, max_size=2),
    ]
    if "layout" in allowed:
        strategies.append(bad_layouts.map(lambda lay: {"layout": lay}))
    return st.one_of(*strategies)


def bad_action_arrays(n):
    """Learner actions of a vector env with n tables that are not n integer ids in range."""
    good = st.lists(st.integers(0, N_ACTIONS - 1), min_size=n, max_size=n)
    return st.one_of(
        good.map(lambda xs: np.array(xs, float)),
        good.map(lambda xs: np.array(xs) > 100),
        st.lists(st.integers(0, N_ACTIONS - 1), max_size=n + 2).filter(
            lambda xs: len(xs) != n).map(np.array),
        good.map(lambda xs: np.array(xs).reshape(n, 1)),
        st.tuples(good, st.integers(0, n - 1), out_of_range_ints()).map(
            lambda t: t[0][:t[1]] + [t[2]] + t[0][t[1] + 1:]),
        good.map(lambda xs: [str(x) for x in xs]),
        st.sampled_from([None, 3, "0", 1.5, object(), {"a": 1}]),
    )


# ------------------------------------------------------------------------------ envs, snapshots
@functools.cache
def parallel_env():
    env = nertz_v0.parallel_env(num_teams=2, max_ticks=500)
    env.reset(seed=1)
    env.step({"player_0": 1, "player_1": 1})
    return env


@functools.cache
def raised_parallel_env():
    env = nertz_v0.parallel_env(num_teams=3, illegal_move="raise")
    env.reset(seed=2)
    return env


@functools.cache
def aec_env(kind):
    env = (nertz_v0.env if kind == "env" else nertz_v0.raw_env)(num_teams=2, max_ticks=500)
    env.reset(seed=3)
    env.step(0)                                     # player_0 has acted: player_1's turn
    return env


@functools.cache
def gym_env():
    env = NertzGymEnv(num_teams=3, max_ticks=500)
    env.reset(seed=4)
    env.step(1)
    return env


@functools.cache
def vec_env():
    from nertz_env.envs.vector import NertzVecEnv
    env = NertzVecEnv(num_envs=N_ENVS, seed=5, num_teams=2)
    env.reset()
    env.step(np.zeros(N_ENVS, np.int64))
    return env


@functools.cache
def gym_vec_env():
    env = NertzGymVectorEnv(num_envs=N_ENVS, seed=6,
                            config=RulesConfig(num_teams=2))      # illegal_move="raise"
    env.reset(seed=6)
    env.step(np.zeros(N_ENVS, np.int64))
    return env


def snapshot(env):
    """Everything that decides what the env does next, deep-copied."""
    if hasattr(env, "agent_selection"):                      # AEC (wrapped or raw)
        inner = env
        while not isinstance(inner, nertz_v0.NertzAECEnv):
            inner = inner.env
        return (env.unwrapped.get_state(), inner.agent_selection, dict(inner._actions))
    if hasattr(env, "get_state"):
        return env.get_state()
    eng, b = env.engine, env.batch
    env_rng = getattr(env, "_np_random", None)               # gymnasium's VectorEnv
    return ({k: v.copy() for k, v in eng.state._asdict().items()}, eng.masks.copy(),
            copy.deepcopy(eng.np_random.bit_generator.state), b.actions.copy(),
            b.policy_rng.copy(), b.prev.copy(), getattr(env, "_next_seed", None),
            copy.deepcopy(getattr(env, "_options", None)),
            None if env_rng is None else copy.deepcopy(env_rng.bit_generator.state))


def equal(a, b) -> bool:
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(equal(a[k], b[k]) for k in a)
    if isinstance(a, (list, tuple)):
        return len(a) == len(b) and all(equal(x, y) for x, y in zip(a, b))
    if isinstance(a, np.ndarray):
        return a.dtype == b.dtype and np.array_equal(a, b)
    return type(a) is type(b) and a == b


def rejects(env, call, match=None) -> str:
    """call() must raise ValueError and leave env as it was; returns the message."""
    before = snapshot(env)
    with pytest.raises(ValueError, match=match) as err:
        call()
    assert equal(snapshot(env), before)
    return str(err.value)


def tail(message: str) -> str:
    """The message after the part naming the agent / argument ("player_0: ...")."""
    return message.split(": ", 1)[1]


# ------------------------------------------------------------------------------ actions
@FUZZ
@given(action=bad_action_ids)
def test_the_same_bad_action_gets_the_same_answer_everywhere(action):
    par = parallel_env()
    answers = [
        rejects(par, lambda: par.step({"player_1": action}), "player_1"),          # general
        rejects(par, lambda: par.step({"player_0": 0, "player_1": action}), "player_1"),
        rejects(gym_env(), lambda: gym_env().step(action), "^action: "),
    ]
    for kind in ("env", "raw_env"):
        aec = aec_env(kind)
        answers.append(rejects(aec, lambda: aec.step(action), "player_1"))
    assert len({tail(a) for a in answers}) == 1, answers


@FUZZ
@given(agent=st.one_of(st.text(max_size=8), st.integers(), st.none(), st.booleans(),
                       st.sampled_from(["player_2", "player_-1", "PLAYER_0", " player_0"]),
                       ).filter(lambda a: a not in ("player_0", "player_1")),
       action=st.one_of(st.integers(0, N_ACTIONS - 1), st.none()))
def test_unknown_agents(agent, action):
    par = parallel_env()
    msg = rejects(par, lambda: par.step({"player_0": 0, agent: action}), "unknown agent")
    assert "player_0" in msg and "player_1" in msg                     # names the agents


@FUZZ
@given(actions=st.one_of(st.lists(st.integers(0, 5), max_size=3), st.integers(), st.text(),
                         st.none(), st.tuples(st.integers(0, 5)),
                         st.sampled_from([np.zeros(2, np.int64), object()])))
def test_parallel_actions_must_be_a_dict(actions):
    par = parallel_env()
    rejects(par, lambda: par.step(actions), "dict")


@FUZZ
@given(data=st.data())
def test_illegal_moves_under_raise(data):
    """illegal_move="raise": any illegal id of any agent, in either action path."""
    par = raised_parallel_env()
    agent = data.draw(st.sampled_from(par.agents))
    illegal = np.flatnonzero(par.engine.masks[0, par._seat[agent]] == 0)
    action = int(data.draw(st.sampled_from(illegal.tolist())))
    full = data.draw(st.booleans())
    acts = (dict.fromkeys(par.agents, 0) if full else {}) | {agent: action}
    rejects(par, lambda: par.step(acts), f"{agent}: action id {action} .*R31")


@FUZZ
@given(actions=bad_action_arrays(N_ENVS), which=st.sampled_from(["sb3", "gymnasium"]))
def test_vector_env_actions(actions, which):
    if which == "sb3":
        pytest.importorskip("stable_baselines3")
        env = vec_env()
        rejects(env, lambda: env.step_async(actions), "^actions")
    else:
        env = gym_vec_env()
        rejects(env, lambda: env.step(actions), "^actions")


@FUZZ
@given(data=st.data())
def test_vector_env_illegal_ids_under_raise(data):
    env = gym_vec_env()
    masks = env.action_masks()
    acts = np.zeros(N_ENVS, np.int64)
    e = data.draw(st.integers(0, N_ENVS - 1))
    acts[e] = data.draw(st.sampled_from(np.flatnonzero(~masks[e]).tolist()))
    rejects(env, lambda: env.step(acts),
            f"actions\\[{e}\\] \\(table {e}, seat {env.learner_seat}\\): action id {acts[e]} .*R31")


def test_vector_envs_word_bad_arrays_alike():
    pytest.importorskip("stable_baselines3")
    for actions in (np.zeros(N_ENVS, float), np.arange(N_ENVS + 1), np.array([0, 0, 999])):
        a = rejects(vec_env(), lambda: vec_env().step_async(actions))
        b = rejects(gym_vec_env(), lambda: gym_vec_env().step(actions))
        assert a == b


# ------------------------------------------------------------------------------ reset, seeds
@FUZZ
@given(seed=bad_seeds, which=st.sampled_from(["parallel", "aec", "gym", "gym_vector"]))
def test_bad_reset_seeds(seed, which):
    env = {"parallel": parallel_env, "aec": lambda: aec_env("raw_env"), "gym": gym_env,
           "gym_vector": gym_vec_env}[which]()
    rejects(env, lambda: env.reset(seed=seed), "seed")


@FUZZ
@given(data=st.data(), which=st.sampled_from(["parallel", "aec", "gym", "gym_vector"]))
def test_bad_reset_options(data, which):
    env = {"parallel": parallel_env, "aec": lambda: aec_env("raw_env"), "gym": gym_env,
           "gym_vector": gym_vec_env}[which]()
    allowed = () if which == "gym_vector" else ("layout",)
    options = data.draw(bad_options(allowed))
    rejects(env, lambda: env.reset(seed=0, options=options))


@FUZZ
@given(seed=bad_seeds, options=bad_options(()))
def test_sb3_vector_env_seed_and_options(seed, options):
    pytest.importorskip("stable_baselines3")
    env = vec_env()
    rejects(env, lambda: env.seed(seed), "seed")
    rejects(env, lambda: env.set_options(options))


# ------------------------------------------------------------------------------ constructors
BAD_VALUES = st.one_of(st.integers(-3, 100), st.floats(allow_nan=False), st.text(max_size=6),
                       st.none(), st.booleans(), st.lists(st.integers(0, 3), max_size=3),
                       st.sampled_from([object(), {"a": 1}, np.float64(1.5)]))


def constructor(name):
    if name == "sb3":
        from nertz_env.envs.vector import NertzVecEnv
        return NertzVecEnv
    return {"parallel": nertz_v0.parallel_env, "aec": nertz_v0.env, "raw": nertz_v0.raw_env,
            "gym": NertzGymEnv, "gym_vector": NertzGymVectorEnv}[name]


# per constructor: the arguments fuzzed, and the values among BAD_VALUES that are fine there
ARGUMENTS = {
    "parallel": ["episode", "reward", "observation", "render_mode", "config", "num_teams",
                 "max_ticks", "illegal_move", "colour"],
    "gym": ["learner_seat", "opponents", "reward", "episode", "render_mode", "config",
            "num_teams", "speeds", "colour"],
    "vector": ["num_envs", "seed", "learner_seat", "reward", "opponents", "config",
               "team_sizes", "colour"],
}


def acceptable(kind, name, value) -> bool:
    """The values BAD_VALUES may draw that are valid for that argument."""
    try:
        if name in ("render_mode", "opponents", "config", "seed") and value is None:
            return True
        if name == "learner_seat":
            return type(value) is int and 0 <= value < 2
        if name == "num_envs":
            return type(value) is int and 1 <= value
        if name == "seed":
            return type(value) is int and value >= 0
        if name == "num_teams":
            return type(value) is int and 2 <= value <= 8
        if name == "max_ticks":
            return type(value) is int and value >= 1
        if name in ("team_sizes", "speeds"):                # one entry per team / seat
            ok = (1, 2) if name == "team_sizes" else range(1, 101)
            return value is None or (isinstance(value, list) and len(value) == 2
                                     and all(type(x) is int and x in ok for x in value))
        if name == "opponents" and kind == "gym":
            return False
        if name == "opponents":
            return value == {} or value in ("random", "greedy", "heuristic")
        if name == "illegal_move":
            return value in ("raise", "penalize", "ignore")
        if name == "episode":
            return value in ("hand", "game")
        if name == "reward":
            return value in ("score", "relative")
        if name == "observation":
            return value == "flat"
    except (TypeError, ValueError):
        return False
    return False


@FUZZ
@given(data=st.data(), which=st.sampled_from(["parallel", "aec", "raw", "gym", "sb3",
                                              "gym_vector"]))
def test_bad_constructor_arguments(data, which):
    kind = {"aec": "parallel", "raw": "parallel", "sb3": "vector",
            "gym_vector": "vector"}.get(which, which)
    if which == "sb3":
        pytest.importorskip("stable_baselines3")
    name = data.draw(st.sampled_from(ARGUMENTS[kind]))
    value = data.draw(BAD_VALUES.filter(lambda v: not acceptable(kind, name, v)))
    kwargs = {name: value}
    if kind == "vector" and name != "num_envs":
        kwargs["num_envs"] = 2
    with pytest.raises(ValueError):
        constructor(which)(**kwargs)


@pytest.mark.parametrize("which", ["parallel", "aec", "raw", "gym", "sb3", "gym_vector"])
def test_unknown_keyword_arguments(which):
    """A misspelt keyword (num_team=) is a ValueError naming it and the allowed ones, not
    RulesConfig's TypeError."""
    if which == "sb3":
        pytest.importorskip("stable_baselines3")
    with pytest.raises(ValueError, match="'num_team'.*num_teams"):
        constructor(which)(num_team=3)
