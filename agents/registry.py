"""make_agent(spec): agents from short strings (the CLI's and the tournament's names).

    random                                   uniform legal moves
    greedy                                   Lake first, then Nertz to River, then flip
    heuristic                                heuristic:style=balanced
    heuristic:style=cautious,withhold_stream=when-useful,flip=20
    ppo:PATH.npz                             a model in the safe format (PATH.npz + PATH.json,
                                             `nertz export`): no code runs, numpy only
    ppo:PATH                                 a saved MaskablePPO (or PPO) zip (needs [train]),
                                             rebuilt without unpickling anything
    ppo:PATH,deterministic=false,device=cpu  its options, after the path
    ppo:PATH,trust=yes                       SB3's own load, pickles and all (a custom policy):
                                             it runs code stored in the file
    ppo:PATH,constraint=useful-shifts        its moves under a constraint (agents/constraints.py;
                                             constraint=none plays a constrained model free)
    learned                                  the shipped family: at each table the model its
                                             rules pick (agents/learned/family.py), or without
                                             a family the generalist, or without one the model
                                             for the table it sits at (numpy only)
    learned:model=generalist                 one model of the family (generalist, lake-race-4 ..
                                             lake-race-8: one file, stacking) at every table
    learned:family=PATH.json                 a family file of your own (its models beside it)
    learned:teams=4                          the shipped 4-team model, at any table
    learned:model=per-table                  each table's own shipped model (2 or 4 teams),
                                             the nearest elsewhere, with a warning
    rllib:PATH                               an RLlib checkpoint (train/rllib_ppo.py --out DIR:
                                             DIR/checkpoint), greedy; needs ray[rllib]
    rllib:PATH,policy=team0,deterministic=false   one policy of several; sampled moves
    pair:learned&heuristic                   a two-player team (R4) of two agents by role: the
                                             first holds the Nertz pile, the second the
                                             Stream, whichever seat has them (agents/base.py Pair)
    search                                   decision-time search over river-builder with the
                                             core as simulator (agents/search, docs/search.md)
    search:worlds=64,horizon=10,belief=uniform,margin=0.5,base=cautious,opp=base,seed=3
    search:belief=oracle,cheat=yes           reads the true hidden cards: a ceiling, refused
                                             without cheat=yes

Grammar: KIND[:OPTIONS]. For heuristic, OPTIONS is KEY=VALUE pairs separated by commas
(style=S and the knobs of docs/heuristics.md, nertz_env/bot_specs.py STYLES). For ppo, OPTIONS is
the model's path (SB3 also tries PATH.zip), then optionally ",KEY=VALUE" pairs:
deterministic=true|false (default true), device=cpu|cuda|cuda:N|auto (default cpu; SB3 zips
only), trust=yes|no (default no; SB3 zips only) and constraint=NAME|none (default: the one
the model's file names, if any); the path itself may not contain a comma.

Model files are code's way in: an SB3 zip holds pickled objects that SB3's load would run, an
RLlib checkpoint is unpickled by RLlib itself. `ppo:` reads SB3 zips without unpickling
(trust=yes is the opt-in for the rest); `rllib:` cannot avoid it: load only checkpoints you
made or trust. The safe format runs no code (docs/models.md). A model whose observation or
action size does not fit this game is refused here, at make_agent, naming both sizes. A
safe-format model that reads the v1 observation (its JSON's "observation": "v1") is a
seat-view agent: it plays where a seat view is passed (agents/learned/v1.py).

For rllib, the same: the checkpoint's path, then policy=ID (needed when it holds several
policies) and deterministic=true|false (agents/learned/rllib.py; loaded without starting
Ray). Unknown kinds, options and values are ValueErrors naming the spec, one line each: an
unknown name with the nearest one (learned:Teams=2: did you mean 'teams'?), integers in ASCII
digits only ('²', '٣', '５' and '1_0' refused, never read as numbers), teams= and model= not
together, an empty family= or constraint= refused (tests/test_cleanup_spec_hygiene.py). In
a list of specs (split_specs), a comma-separated part KEY=VALUE whose KEY is a plain name
belongs to the agent before it.

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
from .specs import AGENT_KINDS, ascii_int, checked_options, nearest, path_options, split_specs

KINDS = AGENT_KINDS
MODELS_DIR = Path(__file__).resolve().parent / "learned" / "models"    # the shipped models (docs/models.md)
LEARNED_OPTIONS = ("teams", "deterministic", "device", "model", "family")
PPO_OPTIONS = ("deterministic", "device", "trust", "constraint")
_TRUST = {"yes": True, "true": True, "no": False, "false": False}
_DEVICE = re.compile(r"cpu|auto|cuda(:[0-9]+)?")      # ASCII digits: \d takes '٣
_TRAILING_OPTION = re.compile(r"^(.+?):([A-Za-z_]\w*=.*)$")     # ppo:m.zip:deterministic=true


def _ppo_agent(spec: str, rest: str, seed=None):
    path, opts, det = path_options(spec, rest, "ppo", PPO_OPTIONS,
                                   "path/to/model.zip[,deterministic=false]")
    opts_text = rest.partition(",")[2]
    device = opts.get("device", "cpu")
    if not _DEVICE.fullmatch(device):
        raise ValueError(f"agent {spec!r}: device={device!r} must be cpu, cuda, cuda:N or auto"
                         + nearest(device, ("cpu", "cuda", "auto")))
    trust = opts.get("trust", "no").lower()
    if trust not in _TRUST:
        raise ValueError(f"agent {spec!r}: trust={opts['trust']!r} must be yes or no (yes: "
                         "SB3's own load, which runs code stored in the file)")
    if opts.get("constraint") == "":     # left out: the model file's own; none: free
        raise ValueError(f"agent {spec!r}: constraint= needs a constraint's name, or none to "
                         "play the model free; leave it out for the one its file names")
    trailing = _TRAILING_OPTION.match(path)
    if trailing and not Path(path).exists() and not Path(f"{path}.zip").exists():
        raise ValueError(f"agent {spec!r}: ppo options follow the path after a comma: "
                         f"ppo:{trailing.group(1)},{trailing.group(2)}")
    from .learned.ppo import PPOAgent
    try:
        agent = PPOAgent(path, deterministic=det, device=device, trust=_TRUST[trust], seed=seed,
                         constraint=opts.get("constraint"))
    except ValueError as err:           # the spec names the model: its name once, not twice
        msg = str(err).removeprefix(f"model {path!r}: ")
        raise ValueError(f"agent {spec!r}: {msg}") from err.__cause__
    if opts_text.strip():
        agent.name = spec
    return agent


def shipped_models() -> dict:
    """{teams: path of the .npz} of the models shipped in agents/learned/models/
    (learned_<T>teams.npz with its .json: the safe format)."""
    from .learned.shipped import shipped_models as found
    return found(MODELS_DIR)


def _learned_agent(spec: str, rest: str, seed=None):
    opts = checked_options(spec, rest, "learned", LEARNED_OPTIONS)
    models = shipped_models()
    have = ", ".join(map(str, models)) or "none (reinstall the package)"
    teams = opts.get("teams")
    if not models or teams is not None and ascii_int(teams) not in models:
        raise ValueError(f"agent {spec!r}: teams={teams!r}: shipped models are for teams "
                         f"{have} (docs/models.md)")
    det = opts.get("deterministic", "true").lower()
    if det not in ("true", "false"):
        raise ValueError(f"agent {spec!r}: deterministic={opts['deterministic']!r} must be "
                         "true or false")
    if opts.get("device", "cpu") != "cpu":
        raise ValueError(f"agent {spec!r}: device={opts['device']!r}: the shipped models play "
                         "in numpy on the CPU; device= takes only cpu")
    if opts.get("family") == "":
        raise ValueError(f"agent {spec!r}: family= needs the path of a family JSON "
                         "(python -m agents.learned.family writes one)")
    if "teams" in opts and "model" in opts:      # teams= picks the model: model= would be lost
        raise ValueError(f"agent {spec!r}: teams= plays that team count's model at every "
                         "table; it takes no model=")
    from .learned.family import read_family, read_family_file
    from .learned.shipped import LearnedAgent, generalist_model
    try:
        family = read_family(MODELS_DIR) if "family" not in opts else \
            read_family_file(opts["family"])
    except ValueError as err:
        raise ValueError(f"agent {spec!r}: {err}") from None
    if "family" in opts and ("teams" in opts or "model" in opts):
        raise ValueError(f"agent {spec!r}: family= plays that family at every table; it "
                         "takes no teams= or model=")
    general = generalist_model(MODELS_DIR)
    members = {m.name: m for m in family or ()}
    default = "family" if family else "generalist"
    model = opts.get("model", default)
    picks = ["per-table"] + (["family"] if family else []) + \
        sorted(set(members) | {"generalist"})
    if model not in picks:
        raise ValueError(f"agent {spec!r}: model={model!r}{nearest(model, picks)} must be one "
                         f"of {', '.join(picks)}: "
                         "family (the member each table's rules pick), per-table (each "
                         "table's own model, the nearest elsewhere) or a model of the family "
                         "at every table (docs/models.md)")
    if model in members:
        general = members[model].path
    try:
        return LearnedAgent(models, None if teams is None else ascii_int(teams),
                            deterministic=det == "true", seed=seed, name=spec,
                            generalist=general if model not in ("per-table", "family")
                            else None, family=family if model == "family" else None)
    except ValueError as err:
        raise ValueError(f"agent {spec!r}: {err}") from err.__cause__


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
    try:
        return _make(spec, seed)
    except OSError as err:              # a model file the system refuses: still exit 1
        raise spec_os_error(err, spec) from err


def spec_os_error(err: OSError, spec: str) -> OSError:
    """`err` (an OSError met making agent `spec`: a model file the system will not let be
    read) naming the spec as a bad file's ValueError does ("agent 'SPEC': ..."), its errno,
    class (PermissionError, ...) and file kept: the same one line, exit 1."""
    why = " ".join(str(err.strerror or err).split())
    if why.startswith("agent "):        # a member's (pair:, search:): it names its own spec
        return err
    if err.errno is None:
        return OSError(f"agent {spec!r}: {why}")
    return OSError(err.errno, f"agent {spec!r}: {why}", err.filename, None, err.filename2)


def _make(spec: str, seed):
    kind, _, rest = spec.partition(":")
    if kind in CORE_KINDS:
        return _core_agent(spec, seed)
    if kind == "ppo":
        return _ppo_agent(spec, rest, seed)
    if kind == "learned":
        return _learned_agent(spec, rest, seed)
    if kind == "rllib":
        from .learned.rllib import from_spec
        return from_spec(spec, rest, seed)
    if kind == "pair":
        from .base import parse_pair
        return parse_pair(spec, rest, seed, make_agent)
    if kind == "search":
        from .search import parse_search
        return parse_search(spec, rest, seed, make_agent)
    raise ValueError(f"agent {spec!r}: unknown kind {kind!r}{nearest(kind, KINDS)}; kinds are "
                     f"{', '.join(KINDS)}")


__all__ = ["KINDS", "Agent", "GreedyAgent", "HeuristicAgent", "RandomAgent", "ScoredAgent",
           "make_agent", "path_options", "shipped_models", "split_specs"]
