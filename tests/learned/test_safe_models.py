"""Model files that cannot run code: the safe format (agents/learned/weights.py) read under
caps and played in numpy exactly as SB3's predict plays; SB3 zips read without unpickling
(agents/learned/sb3_zip.py) on every path the project controls (make_agent, nertz export,
resume, league snapshots) unless trust=yes; sizes that do not fit refused at load; ONNX."""
from __future__ import annotations

import io
import json
import pathlib
import zipfile

import numpy as np
import pytest

sb3c = pytest.importorskip("sb3_contrib")
th = pytest.importorskip("torch")

from stable_baselines3 import PPO  # noqa: E402

from agents.cli import main  # noqa: E402
from agents.learned.sb3_zip import load_sb3, policy_weights  # noqa: E402
from agents.learned.weights import NumpyPolicy, load_weights, save_weights, weight_files  # noqa: E402
from agents.registry import make_agent  # noqa: E402
from nertz_env import NertzVecEnv  # noqa: E402
from nertz_env.envs.spaces import SpacesOnlyEnv  # noqa: E402

from tests.agents.hostile_files import craft  # noqa: E402


def fresh(cls=None, net=(64, 64), seed=0, **policy_kwargs):
    cls = cls or sb3c.MaskablePPO
    return cls("MlpPolicy", SpacesOnlyEnv(), n_steps=8, batch_size=8, seed=seed, device="cpu",
               policy_kwargs={"net_arch": list(net), **policy_kwargs})


@pytest.fixture(scope="module")
def zips(tmp_path_factory):
    d = tmp_path_factory.mktemp("zips")
    fresh().save(d / "masked.zip")
    fresh(PPO, seed=1).save(d / "plain.zip")
    fresh(net=(16,), seed=2, activation_fn=th.nn.ReLU).save(d / "relu.zip")
    return d


@pytest.fixture(scope="module")
def rows():
    """Real positions (random legal play at 2 and 4 teams) and a random batch: 5,000+ rows."""
    out = []
    for teams in (2, 4):
        env = NertzVecEnv(num_envs=32, num_teams=teams, max_ticks=300, seed=teams,
                          opponents="heuristic")
        obs = env.reset()
        rng = np.random.default_rng(teams)
        for _ in range(70):
            m = env.action_masks()
            out.append((obs.copy(), m.copy()))
            obs, *_ = env.step(np.array([rng.choice(np.flatnonzero(r)) for r in m]))
    rng = np.random.default_rng(9)
    obs = (rng.random((600, 791)) * (rng.random((600, 791)) < 0.1)).astype(np.float32)
    masks = (rng.random((600, 322)) < 0.05).astype(np.int8)
    masks[:, 0] = 1
    out.append((obs, masks))
    return np.concatenate([o for o, _ in out]), np.concatenate([m for _, m in out])


def export(zp, out, trust=False):
    meta, arrays = policy_weights(load_sb3(zp, trust=trust), source=zp)
    return save_weights(out, meta, arrays)[0]


@pytest.mark.parametrize("name, trust", [("masked", False), ("plain", False), ("relu", True)])
def test_numpy_forward_is_predicts_choice_on_every_row(zips, rows, tmp_path, name, trust):
    """The safe format's numpy forward gives SB3 predict's deterministic ids on every one of
    thousands of observations (fresh networks: small logits, near ties included)."""
    obs, masks = rows
    assert len(obs) > 5000
    model = (PPO if name == "plain" else sb3c.MaskablePPO).load(zips / f"{name}.zip",
                                                              device="cpu")
    kw = {} if name == "plain" else {"action_masks": masks.astype(bool)}
    want, _ = model.predict(obs, deterministic=True, **kw)
    npz = export(zips / f"{name}.zip", tmp_path / name, trust=trust)
    got = NumpyPolicy.load(npz).act_batch(obs, masks)
    np.testing.assert_array_equal(got, want)
    agent = make_agent(f"ppo:{npz}")
    np.testing.assert_array_equal(agent.act_batch(obs[:500], masks[:500]), want[:500])


def test_numpy_sampling_is_seeded_and_legal(zips, rows, tmp_path):
    obs, masks = rows
    npz = export(zips / "masked.zip", tmp_path / "m")
    a = make_agent(f"ppo:{npz},deterministic=false", seed=1).act_batch(obs, masks)
    b = make_agent(f"ppo:{npz},deterministic=false", seed=1).act_batch(obs, masks)
    c = make_agent(f"ppo:{npz},deterministic=false", seed=2).act_batch(obs, masks)
    assert (a == b).all() and (a != c).any() and masks[np.arange(len(obs)), a].all()


# ------------------------------------------------------------------ the safe reader's refusals
def _rewrite(npz, js, meta=None, arrays=None, raw_members=None):
    m, a = load_weights(npz)
    meta = meta(m) if meta else m
    arrays = arrays(a) if arrays else a
    js.write_text(json.dumps(meta))
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    data = buf.getvalue()
    if raw_members:
        with zipfile.ZipFile(io.BytesIO(data)) as z:
            members = {n: z.read(n) for n in z.namelist()}
        members.update(raw_members)
        buf = io.BytesIO()
        with zipfile.ZipFile(buf, "w") as z:
            for n, b in members.items():
                z.writestr(n, b)
        data = buf.getvalue()
    npz.write_bytes(data)


def _with(d, **kw):
    d = dict(d)
    d.update(kw)
    return d


def _obj_npy():
    buf = io.BytesIO()
    np.save(buf, np.array([pathlib.Path("x")], dtype=object), allow_pickle=True)
    return buf.getvalue()


CASES = {
    "unknown key": (dict(meta=lambda m: _with(m, extra=1)), "key 'extra'"),
    "other format": (dict(meta=lambda m: _with(m, format="x")), "format/version"),
    "activation": (dict(meta=lambda m: _with(m, architecture=_with(
        m["architecture"], activation="gelu"))), "architecture.activation"),
    "arrays list": (dict(meta=lambda m: _with(m, arrays={})), "arrays must be the shapes"),
    "hidden": (dict(meta=lambda m: _with(m, architecture=_with(
        m["architecture"], hidden=[10**6]))), "architecture.hidden"),
    "table": (dict(meta=lambda m: _with(m, table={"teams": 9, "team_size": 1})), "table"),
    "float64": (dict(arrays=lambda a: _with(a, action_bias=a["action_bias"].astype(np.float64))),
                "action_bias is float64"),
    "shape": (dict(arrays=lambda a: _with(a, action_bias=a["action_bias"][:-1])),
              r"action_bias is float32 \(321,\)"),
    "missing": (dict(arrays=lambda a: {k: v for k, v in a.items() if k != "action_bias"}),
                "hold arrays"),
    "extra": (dict(arrays=lambda a: _with(a, evil=np.zeros(2, np.float32))), "evil.npy"),
    "nan": (dict(arrays=lambda a: _with(a, action_bias=np.full(322, np.nan, np.float32))),
            "NaN"),
    "pickled array": (dict(raw_members={"action_bias.npy": _obj_npy()}), "not a plain array"),
    "bomb member": (dict(raw_members={"action_bias.npy": b"\0" * (4 << 20)}), "over the"),
}


@pytest.mark.parametrize("case", list(CASES))
def test_the_safe_reader_refuses_what_it_does_not_declare(zips, tmp_path, case):
    npz = export(zips / "masked.zip", tmp_path / "m")
    _, js = weight_files(npz)
    kw, words = CASES[case]
    _rewrite(npz, js, **kw)
    with pytest.raises(ValueError, match=words) as err:
        make_agent(f"ppo:{npz}")
    assert "\n" not in str(err.value) and str(tmp_path) in str(err.value)


def test_damaged_missing_or_deep_files_are_one_line(zips, tmp_path):
    npz = export(zips / "masked.zip", tmp_path / "m")
    _, js = weight_files(npz)
    text = js.read_text()
    cases = [(lambda: js.write_text("[" * 5000 + "]" * 5000), "nested"),
             (lambda: js.write_text(text[:50]), "not valid JSON"),
             (lambda: (js.write_text(text), npz.write_bytes(b"junk")), "not an .npz"),
             (lambda: npz.unlink(), "not found")]
    for damage, words in cases:
        damage()
        with pytest.raises(ValueError, match=words) as err:
            make_agent(f"ppo:{js}")
        assert "\n" not in str(err.value)


def test_sizes_that_do_not_fit_are_refused_at_make_agent(tmp_path):
    """A model for another observation or action size is refused when it is loaded, naming the
    agent spec and both sizes (it used to fail at the first tick, naming no agent)."""
    import gymnasium as gym

    class Small(gym.Env):
        observation_space = gym.spaces.Box(-1, 1, (100,), np.float32)
        action_space = gym.spaces.Discrete(5)

    PPO("MlpPolicy", Small(), n_steps=8, batch_size=8, device="cpu").save(tmp_path / "s.zip")
    for spec in (f"ppo:{tmp_path / 's.zip'}", f"ppo:{tmp_path / 's.zip'},trust=yes"):
        with pytest.raises(ValueError, match=r"100 values and chooses among 5 actions.*791 and "
                                             r"322") as err:
            make_agent(spec)
        assert str(err.value).startswith(f"agent {spec!r}")
    from nertz_env.envs.opponents import FrozenPolicy
    with pytest.raises(ValueError, match="100 values"):
        FrozenPolicy(PPO.load(tmp_path / "s.zip", device="cpu"))


# ------------------------------------------------------------------ hostile SB3 zips
def test_a_crafted_zip_runs_nothing_through_make_agent_or_export(zips, tmp_path, rows):
    marker = tmp_path / "pwned"
    evil = craft(zips / "masked.zip", tmp_path / "evil.zip", marker)
    agent = make_agent(f"ppo:{evil}")                    # the stock policy, rebuilt safely
    obs, masks = rows
    good = make_agent(f"ppo:{zips / 'masked.zip'}")
    assert (agent.act_batch(obs[:300], masks[:300]) == good.act_batch(obs[:300], masks[:300])).all()
    assert main(["export", str(evil), str(tmp_path / "out.npz")]) == 0
    assert (tmp_path / "out.npz").is_file() and (tmp_path / "out.json").is_file()
    assert not marker.exists()
    with pytest.raises(Exception):                        # the documented opt-in does run it
        make_agent(f"ppo:{evil},trust=yes")
    assert marker.exists()


def test_what_cannot_be_rebuilt_safely_needs_trust(zips, tmp_path, capsys):
    """A custom activation (pickled policy_kwargs) or a foreign policy class is refused with
    the opt-in named; trust=yes loads it with SB3's own load."""
    with pytest.raises(ValueError, match="policy_kwargs are pickled.*trust=yes"):
        make_agent(f"ppo:{zips / 'relu.zip'}")
    assert make_agent(f"ppo:{zips / 'relu.zip'},trust=yes").policy.direct is not None
    with zipfile.ZipFile(zips / "masked.zip") as z:
        members = {n: z.read(n) for n in z.namelist()}
    data = json.loads(members["data"])
    data["policy_class"]["__module__"] = "someone.elses.policies"
    members["data"] = json.dumps(data).encode()
    with zipfile.ZipFile(tmp_path / "foreign.zip", "w") as z:
        for n, b in members.items():
            z.writestr(n, b)
    with pytest.raises(ValueError, match="someone.elses.policies.*trust=yes"):
        make_agent(f"ppo:{tmp_path / 'foreign.zip'}")
    assert main(["export", str(tmp_path / "foreign.zip"), str(tmp_path / "f")]) == 2
    assert "trust" in capsys.readouterr().err
    for bad, words in (("trust=maybe", "must be yes or no"),):
        with pytest.raises(ValueError, match=words):
            make_agent(f"ppo:{zips / 'masked.zip'},{bad}")


# ------------------------------------------------------------------ ONNX
def test_onnx_export_masks_inside_the_graph(zips, rows, tmp_path):
    pytest.importorskip("onnx")
    obs, masks = rows
    npz = export(zips / "masked.zip", tmp_path / "m")
    assert main(["export", str(npz), "--onnx", str(tmp_path / "m.onnx")]) == 0
    assert not list(tmp_path.glob(".*.part"))
    policy = NumpyPolicy.load(npz)
    feed = {"observation": obs, "action_mask": masks.astype(np.int8)}
    try:
        import onnxruntime as ort
        sess = ort.InferenceSession(str(tmp_path / "m.onnx"), providers=["CPUExecutionProvider"])
        action, log_probs = sess.run(["action", "log_probs"], feed)
    except ImportError:
        from onnx.reference import ReferenceEvaluator
        action, log_probs = ReferenceEvaluator(str(tmp_path / "m.onnx")).run(
            ["action", "log_probs"], feed)
    want = policy.act_batch(obs, masks)
    legal = np.where(masks > 0, log_probs, -np.inf)
    top2 = np.sort(legal, axis=1)[:, -2:]
    clear = (top2[:, 1] - top2[:, 0]) > 1e-5               # no float32 near tie
    assert clear.mean() > 0.95
    np.testing.assert_array_equal(action[clear], want[clear])
    assert masks[np.arange(len(obs)), action].all()        # the mask is inside the graph
    lp = policy.log_probs(obs, masks)
    np.testing.assert_allclose(np.where(masks > 0, log_probs, 0), np.where(masks > 0, lp, 0),
                               atol=1e-4)


# ------------------------------------------------------------------ other loaders
def test_an_rllib_module_of_the_wrong_size_is_refused_at_load():
    """rllib: the loaded module's spaces (nertz_v0's Dict or a flat Box) against a seat's."""
    import gymnasium as gym
    from types import SimpleNamespace

    from agents.learned.rllib import _check_module_sizes

    def module(obs, n):
        space = gym.spaces.Dict({"observation": gym.spaces.Box(0, 1, (obs,), np.float32),
                                 "action_mask": gym.spaces.MultiBinary(n)})
        return SimpleNamespace(observation_space=space, action_space=gym.spaces.Discrete(n))

    _check_module_sizes(module(791, 322), "ok")
    for obs, n in ((100, 322), (791, 5)):
        with pytest.raises(ValueError, match=rf"^ckpt: policy 'p' does not fit.*{obs} values "
                                             rf"and chooses among {n} actions.*791 and 322"):
            _check_module_sizes(module(obs, n), "ckpt: policy 'p'")
    flat = SimpleNamespace(observation_space=gym.spaces.Box(0, 1, (7,), np.float32),
                           action_space=gym.spaces.Discrete(322))
    with pytest.raises(ValueError, match="7 values"):
        _check_module_sizes(flat, "ckpt")


def test_export_for_play_of_a_crafted_zip_runs_nothing(zips, tmp_path):
    from agents.training.checkpoints import export_for_play

    marker = tmp_path / "pwned"
    evil = craft(zips / "masked.zip", tmp_path / "evil.zip", marker)
    export_for_play(evil, tmp_path / "play.zip")
    assert (tmp_path / "play.zip").is_file() and not marker.exists()


def test_an_sb3_zips_weights_are_read_with_weights_only(zips, monkeypatch):
    """The *.pth members go through torch.load(weights_only=True) (SB3's own call; this pins
    it for the SB3 and torch installed), and nothing is unpickled outside it."""
    import pickle

    modes = []
    real = th.load

    def spy(*a, **kw):
        modes.append(kw.get("weights_only"))
        return real(*a, **kw)

    def refuse(*a, **k):
        raise AssertionError("pickle used")

    monkeypatch.setattr(th, "load", spy)
    monkeypatch.setattr(pickle, "loads", refuse)
    monkeypatch.setattr(pickle, "load", refuse)
    import cloudpickle
    monkeypatch.setattr(cloudpickle, "loads", refuse)
    make_agent(f"ppo:{zips / 'masked.zip'}")
    assert modes and all(m is True for m in modes), modes
