"""make_agent(spec): agents from short strings (the CLI's and the tournament's names).

    random                                   uniform legal moves
    greedy                                   Lake first, then Nertz to River, then flip
    heuristic                                heuristic:style=balanced
    heuristic:style=cautious,withhold_stream=when-useful,flip=20
    ppo:PATH                                 a saved MaskablePPO (or PPO) model (needs [train])
    ppo:PATH,deterministic=false,device=cpu  its options, after the path
    learned                                  the shipped 2-team model (agents/learned/models/, needs [train])
    learned:teams=4                          the shipped 4-team model (deterministic, device too)
    rllib:PATH                               an RLlib checkpoint (train/rllib_ppo.py --out DIR:
                                             DIR/checkpoint), greedy; needs ray[rllib]
    rllib:PATH,policy=team0,deterministic=false   one policy of several; sampled moves

Grammar: KIND[:OPTIONS]. For heuristic, OPTIONS is KEY=VALUE pairs separated by commas
(style=S and the knobs of docs/heuristics.md, nertz_env/bot_specs.py STYLES). For ppo, OPTIONS is
the model's path (SB3 also tries PATH.zip), then optionally ",KEY=VALUE" pairs:
deterministic=true|false (default true) and device=cpu|cuda|cuda:N|auto (default cpu);
the path itself may not contain a comma. For rllib, the same: the checkpoint's path,
then policy=ID (needed when it holds several policies) and deterministic=true|false
(agents/learned/rllib.py; loaded without starting Ray). Unknown kinds, options and values
are ValueErrors naming the spec. In a list of specs (split_specs), a comma-separated part
KEY=VALUE whose KEY is a plain name belongs to the agent before it.

Core bot specs are parsed by nertz_env/bot_specs.py (parse_bot) and the model kinds' options by
agents/specs.py (path_options); this module only turns parsed specs into Agent objects.
"""
from __future__ import annotations

import numbers
import re
from pathlib import Path

from nertz_env.bot_specs import CORE_KINDS, parse_bot

from .base import Agent, SupportsAct
from .bots import GreedyAgent, HeuristicAgent, RandomAgent, ScoredAgent
from .specs import checked_options, path_options, split_specs

KINDS = (*CORE_KINDS, "ppo", "learned", "rllib")
MODELS_DIR = Path(__file__).resolve().parent / "learned" / "models"    # the shipped models (docs/models.md)
LEARNED_OPTIONS = ("teams", "deterministic", "device")
PPO_OPTIONS = ("deterministic", "device")
_DEVICE = re.compile(r"cpu|auto|cuda(:\d+)?")
_TRAILING_OPTION = re.compile(r"^(.+?):([A-Za-z_]\w*=.*)$")     # ppo:m.zip:deterministic=true


def _ppo_agent(spec: str, rest: str):
    path, opts, det = path_options(spec, rest, "ppo", PPO_OPTIONS,
                                   "path/to/model.zip[,deterministic=false]")
    opts_text = rest.partition(",")[2]
    device = opts.get("device", "cpu")
    if not _DEVICE.fullmatch(device):
        raise ValueError(f"agent {spec!r}: device={device!r} must be cpu, cuda, cuda:N or auto")
    trailing = _TRAILING_OPTION.match(path)
    if trailing and not Path(path).exists() and not Path(f"{path}.zip").exists():
        raise ValueError(f"agent {spec!r}: ppo options follow the path after a comma: "
                         f"ppo:{trailing.group(1)},{trailing.group(2)}")
    from .learned.ppo import PPOAgent
    try:
        agent = PPOAgent(path, deterministic=det, device=device)
    except ValueError as err:
        raise ValueError(f"agent {spec!r}: {err}") from err.__cause__
    if opts_text.strip():
        agent.name = spec
    return agent


def shipped_models() -> dict:
    """{teams: path} of the models shipped in agents/learned/models/ (learned_<T>teams.zip)."""
    out = {}
    for p in sorted(MODELS_DIR.glob("learned_*teams.zip")):
        t = p.stem[len("learned_"):-len("teams")]
        if t.isdigit():
            out[int(t)] = p
    return out


def _learned_agent(spec: str, rest: str):
    opts = checked_options(spec, rest, "learned", LEARNED_OPTIONS)
    models = shipped_models()
    teams = opts.pop("teams", "2")
    if not teams.isdigit() or int(teams) not in models:
        have = ", ".join(map(str, models)) or "none (reinstall the package)"
        raise ValueError(f"agent {spec!r}: teams={teams!r}: shipped models are for teams "
                         f"{have} (docs/models.md)")
    path = models[int(teams)]
    extra = "".join(f",{k}={v}" for k, v in opts.items())
    agent = _ppo_agent(spec, f"{path}{extra}")
    agent.name = spec
    return agent


def _core_agent(spec: str, seed):
    """random, greedy or heuristic:... as a Python Agent (the spec parsed by bot_specs)."""
    bot = parse_bot(spec)
    if bot.kind == "random":
        return RandomAgent(seed)
    return ScoredAgent(bot.style, name=bot.name, **bot.knobs)


def make_agent(spec, seed=None):
    """An agent from a spec string (see the module docstring); Agent objects pass through.
    seed: the generator seed of a random agent (None or an int >= 0)."""
    if isinstance(spec, type):
        raise ValueError(f"agent {spec!r} is a class; pass an instance or a spec string")
    if isinstance(spec, SupportsAct):
        return spec
    if not isinstance(spec, str) or not spec.strip():
        raise ValueError(f"agent spec {spec!r} must be a non-empty string such as "
                         "'random', 'greedy', 'heuristic:style=balanced', 'ppo:model.zip'")
    if seed is not None and (isinstance(seed, bool) or not isinstance(seed, numbers.Integral)
                             or seed < 0):
        raise ValueError(f"seed={seed!r} must be None or an int >= 0")
    spec = spec.strip()
    kind, _, rest = spec.partition(":")
    if kind in CORE_KINDS:
        return _core_agent(spec, seed)
    if kind == "ppo":
        return _ppo_agent(spec, rest)
    if kind == "learned":
        return _learned_agent(spec, rest)
    if kind == "rllib":
        from .learned.rllib import from_spec
        return from_spec(spec, rest, seed)
    raise ValueError(f"agent {spec!r}: unknown kind {kind!r}; kinds are {', '.join(KINDS)}")


__all__ = ["KINDS", "Agent", "GreedyAgent", "HeuristicAgent", "RandomAgent", "ScoredAgent",
           "make_agent", "path_options", "shipped_models", "split_specs"]
