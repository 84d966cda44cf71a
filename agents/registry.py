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
are ValueErrors naming the spec. In a list of specs (split_specs), a comma-separated part KEY=VALUE whose
KEY is a plain name belongs to the agent before it.
"""
from __future__ import annotations

import numbers
import re
from pathlib import Path

from nertz_env.bot_specs import spec_options as _options

from .base import Agent, SupportsAct
from .bots import GreedyAgent, HeuristicAgent, RandomAgent, ScoredAgent

KINDS = ("random", "greedy", "heuristic", "ppo", "learned", "rllib")
MODELS_DIR = Path(__file__).resolve().parent / "learned" / "models"    # the shipped models (docs/models.md)
LEARNED_OPTIONS = ("teams", "deterministic", "device")
PPO_OPTIONS = ("deterministic", "device")
_DEVICE = re.compile(r"cpu|auto|cuda(:\d+)?")
_TRAILING_OPTION = re.compile(r"^(.+?):([A-Za-z_]\w*=.*)$")     # ppo:m.zip:deterministic=true


def _is_option(part: str) -> bool:
    """'flip=20' or 'device=cuda:0' (KEY a plain name), not 'heuristic:style=cautious'."""
    key, eq, _ = part.partition("=")
    return bool(eq) and key.strip().isidentifier()


def split_specs(text) -> list:
    """'random,heuristic:style=cautious,flip=20,greedy' -> ['random',
    'heuristic:style=cautious,flip=20', 'greedy']: a KEY=VALUE part (KEY a plain name)
    belongs to the agent before it."""
    if not isinstance(text, str):
        raise ValueError(f"agents {text!r} must be a string of comma-separated agent specs, "
                         "e.g. 'random,greedy,heuristic'")
    out = []
    for part in (p.strip() for p in text.split(",")):
        if not part:
            continue
        if _is_option(part):
            if not out:
                raise ValueError(f"agents {text!r}: option {part!r} follows no agent")
            out[-1] += "," + part
        else:
            out.append(part)
    if not out:
        raise ValueError(f"agents {text!r}: name at least one agent, e.g. random,greedy,heuristic")
    return out


def path_options(spec: str, rest: str, kind: str, allowed: tuple, example: str):
    """PATH[,KEY=VALUE...] of a model agent (ppo:, rllib:) -> (path, options, deterministic):
    an empty path, an option not in `allowed` or a deterministic other than true/false is a
    ValueError naming the spec."""
    path, _, opts_text = rest.partition(",")
    path = path.strip()
    if not path:
        raise ValueError(f"agent {spec!r}: write {kind}:{example}")
    opts = _options(spec, opts_text)
    unknown = sorted(set(opts) - set(allowed))
    if unknown:
        raise ValueError(f"agent {spec!r}: unknown option {unknown[0]!r}; {kind} options are "
                         + ", ".join(allowed))
    det = opts.get("deterministic", "true").lower()
    if det not in ("true", "false"):
        raise ValueError(f"agent {spec!r}: deterministic={opts['deterministic']!r} must be "
                         "true or false")
    return path, opts, det == "true"


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
    opts = _options(spec, rest)
    unknown = sorted(set(opts) - set(LEARNED_OPTIONS))
    if unknown:
        raise ValueError(f"agent {spec!r}: unknown option {unknown[0]!r}; learned options are "
                         + ", ".join(LEARNED_OPTIONS))
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
    if kind == "random":
        if rest:
            raise ValueError(f"agent {spec!r}: random takes no options")
        return RandomAgent(seed)
    if kind == "greedy":
        if rest:
            raise ValueError(f"agent {spec!r}: greedy takes no options (use heuristic:... knobs)")
        return GreedyAgent()
    if kind == "heuristic":
        opts = _options(spec, rest)
        style = opts.pop("style", "balanced")
        try:
            return HeuristicAgent(style, name=spec if rest else "heuristic", **opts)
        except ValueError as err:
            raise ValueError(f"agent {spec!r}: {err}") from None
    if kind == "ppo":
        return _ppo_agent(spec, rest)
    if kind == "learned":
        return _learned_agent(spec, rest)
    if kind == "rllib":
        from .learned.rllib import from_spec
        return from_spec(spec, rest, seed)
    raise ValueError(f"agent {spec!r}: unknown kind {kind!r}; kinds are {', '.join(KINDS)}")


__all__ = ["KINDS", "Agent", "GreedyAgent", "HeuristicAgent", "RandomAgent", "ScoredAgent",
           "make_agent", "split_specs"]
