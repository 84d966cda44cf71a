"""Search labels for expert iteration: the network plays, search judges.

A labelling run plays duplicate deals with a safe-format network (agents/learned/weights.py)
in its seat(s), as `ppo:NET.npz` plays it (its moves, its constraint), through the arena's
Python loop (agents/arena/seat_loop.py play_python) with a seat-view agent (agents/base.py SeatView)
that plays the net's move and records, for each of the net's decisions where its constrained
mask leaves two or more moves (elsewhere there is nothing to learn):
- the observation the net reads (OBSERVATIONS): `nertz_v0` (OBS_DIM floats) for a v0 net;
  `nertz_v1` (V1_OBS_DIM floats: v0's, then the memory block, agents/learned/v1.py view_rows)
  for a v1 net (a widened or v1 model; its shards also hold `observation`, and labels.json
  names the version for both), the net's legal mask (its constraint applied; packed bits)
  and its move;
- search's evaluation of the same position (agents/search/agent.py SearchAgent.evaluate):
  the candidates (the base move first), their mean paired gains over the base move, their
  standard errors over the worlds, search's chosen move and whether it searched;
- where: deal, seating, seat, hand and tick (rows sorted by them, so the order never depends
  on how the deals were batched).
Rows search did not search (one candidate) carry no target, only the net's own policy to keep:
`stride` keeps one in `stride` of them (those with (tick + seat) % stride == 0).
The positions are the ones the network visits (DAgger: each generation labels its own play).

Formats (FORMATS): `2teams` (the net against OPP, default `learned`, both seatings), `4teams`
(the net as one seat among river-builders, its 4 rotations), `4teams-self` (the net in every
seat, all labelled). Deals d_lo..d_hi-1 are cut into fixed blocks of `block` deals, one shard
each (FORMAT_dLO-dHI.npz): a shard depends on (net, search spec, seed, format, its deals) only,
so one process, several processes (`workers`) or Ray tasks write the same bytes. Same seed,
same labels: the deals' keys come from the seed (agents/arena/deals.py) and the search's
worlds from (seed, deal key, hand, tick, seat).

The folder (run_folder: whole or not at all, never over another run) holds the shards and
labels.json (the net's sha256, the search spec, the seed, the formats, counts). No torch here:
a Ray worker needs numpy and numba only.
"""
from __future__ import annotations

import hashlib
import io
import multiprocessing
import os
import zipfile
from pathlib import Path
from typing import NamedTuple

import numpy as np

from nertz_env.actions import N_ACTIONS
from nertz_env.config import RulesConfig
from nertz_env.core.observe import OBS_DIM
from nertz_env.core.observe_memory import V1_OBS_DIM
from nertz_env.files import read_capped, write_bytes, write_json
from nertz_env.files.bounded import (ZIP_ERRORS, json_loads_strict, open_regular, read_fault,
                                     system_fault, zip_error_text, zip_member_capped)

from ..arena.deals import DealKeys, policy_keys
from ..arena.outdir import run_folder
from ..arena.play import HandResults, MatchPlan, Roster, make_tables, play_python
from ..arena.seatings import seatings
from ..base import Agent
from ..constraints import check_constraint, constrain
from ..learned.ppo import load_weights_policy
from ..learned.v1 import reads_v1, view_rows
from ..registry import make_agent

OBSERVATION = "nertz_v0"               # a v0 net's labels (the shards name no version)
OBSERVATION_V1 = "nertz_v1"            # a v1 net's: the shards hold `observation` too
OBSERVATIONS = {OBSERVATION: OBS_DIM, OBSERVATION_V1: V1_OBS_DIM}
LABELS_FILE = "labels.json"
FORMAT, VERSION = "nertz-search-labels", 1
SEARCH = "search"                      # the expert: search with its default options
RIVER_BUILDER = "heuristic:style=river-builder"
FORMATS = {"2teams": 2, "4teams": 4, "4teams-self": 4}
MAX_SHARD_BYTES = 1 << 30


def lineup(fmt: str, opponent: str) -> tuple:
    """(teams, agent specs after the net, the lineup: agent indices at team positions 0..T-1;
    0 is the net)."""
    if fmt == "2teams":
        return 2, [opponent], (0, 1)
    if fmt == "4teams":
        return 4, [RIVER_BUILDER], (0, 1, 1, 1)
    if fmt == "4teams-self":
        return 4, [], (0, 0, 0, 0)
    raise ValueError(f"labels format {fmt!r} is unknown; formats are {', '.join(FORMATS)}")


class LabelPlan(NamedTuple):
    """What every block of a labelling run shares (picklable: worker processes get it)."""
    net: str                 # the network's safe-format .npz
    search: str              # the expert's agent spec (a `search:` spec)
    opponent: str            # the 2teams opponent's spec
    seed: int
    block: int               # deals per shard
    stride: int = 1          # an unsearched row is kept when (tick + seat) % stride == 0


class LabellingAgent(Agent):
    """The net's move at every seat it holds (as `ppo:NET` plays it), and a label per decision
    with two or more moves (module docstring). `where`: per table of the batch being played,
    (deal, seating), set before each batch."""

    seat_view = True

    def __init__(self, net: str, search, stride: int = 1):
        self.stride = stride
        self.policy = load_weights_policy(net)
        self.v1 = reads_v1(self.policy)
        self.observation = OBSERVATION_V1 if self.v1 else OBSERVATION
        self.cid = check_constraint(self.policy.meta.get("constraint"))
        self.search = search
        self.name = f"label:{net}"
        self.where = None
        self.rows = []

    def legal(self, obs, masks):
        return constrain(obs, masks, self.cid) if self.cid else np.asarray(masks, bool)

    def net_moves(self, view) -> tuple:
        """(the rows the net reads: v0 or v1, its legal masks: the constraint reads the v0
        prefix, its moves) on the view's rows, as `ppo:NET` plays them."""
        obs, masks = np.asarray(view.observations), np.asarray(view.masks)
        legal = self.legal(obs, masks)
        rows = view_rows(view) if self.v1 else obs
        return rows, legal, self.policy.act_batch(rows, legal)

    def act_view(self, view) -> np.ndarray:
        masks = np.asarray(view.masks)
        obs, legal, moves = self.net_moves(view)
        pick = np.flatnonzero(legal.sum(axis=1) >= 2)
        if pick.size:
            sub = view._replace(rows=view.rows[pick], seats=view.seats[pick],
                                observations=np.asarray(view.observations)[pick],
                                masks=masks[pick])
            st = view.state
            for k, res in zip(pick, self.search.evaluate(sub)):
                t = int(view.rows[k])
                if not res.searched and (int(st.tick[t]) + int(view.seats[k])) % self.stride:
                    continue
                self.rows.append((*self.where[t], int(view.seats[k]), int(st.hand[t]),
                                  int(st.tick[t]), obs[k], legal[k], int(moves[k]), res))
        return moves


_WORKER: dict = {}            # plan -> (agents): a process builds its agents once


def _agents(plan: LabelPlan, fmt: str):
    key = (plan, fmt)
    if key not in _WORKER:
        _, others, _ = lineup(fmt, plan.opponent)
        search = make_agent(plan.search, seed=plan.seed)
        if not hasattr(search, "evaluate"):
            raise ValueError(f"search={plan.search!r} must be a search: agent spec")
        labeller = LabellingAgent(plan.net, search, plan.stride)
        _WORKER[key] = [labeller] + [make_agent(s, seed=plan.seed) for s in others]
    return _WORKER[key]


def label_block(plan: LabelPlan, fmt: str, d_lo: int, d_hi: int) -> dict:
    """The shard of deals d_lo..d_hi-1 of format fmt (module docstring): its arrays."""
    T, _, lu = lineup(fmt, plan.opponent)
    config = RulesConfig(num_teams=T)
    agents = _agents(plan, fmt)
    labeller = agents[0]
    roster = Roster.of(agents).for_table(config)
    labeller = roster.agents[0]
    seats = list(dict.fromkeys(seatings(lu)))
    mplan = MatchPlan(config, [seats], plan.seed, "hands", 1)
    deals = d_hi - d_lo
    keys = DealKeys.of(plan.seed, d_lo, d_hi, 1)
    dd = np.repeat(np.arange(d_lo, d_hi), len(seats))
    rr = np.tile(np.arange(len(seats)), deals)
    agent_at = np.tile(np.array(seats, np.int64), (deals, 1))
    pol = policy_keys(plan.seed, 0, d_hi, len(seats))[d_lo:].reshape(-1).copy()
    tables = make_tables(mplan, roster.core, keys, agent_at, dd, pol)
    out = HandResults.zeros(len(dd), 1, T)
    labeller.where = list(zip(dd.tolist(), rr.tolist()))
    labeller.rows = []
    play_python(config, roster, tables, False, out)
    rows, labeller.rows = labeller.rows, []
    net_seats = agent_at == 0
    points = out.scores[:, 0, :][net_seats]
    return pack(rows, fmt, d_lo, d_hi, points, labeller.observation)


def pack(rows, fmt, d_lo, d_hi, points, observation: str = OBSERVATION) -> dict:
    """The shard's arrays from the recorded rows, sorted by (deal, seating, tick, seat); a
    v1 shard names its observation (`observation`), a v0 one is as it always was."""
    rows = sorted(rows, key=lambda r: (r[0], r[1], r[4], r[2]))
    n = len(rows)
    K = max([len(r[8].candidates) for r in rows] + [1])
    cand = np.full((n, K), -1, np.int16)
    gain = np.zeros((n, K), np.float32)
    se = np.zeros((n, K), np.float32)
    for i, r in enumerate(rows):
        res = r[8]
        c = len(res.candidates)
        cand[i, :c] = res.candidates
        gain[i, :c] = res.gains
        se[i, :c] = np.nan_to_num(res.se, nan=np.inf)
    col = lambda j, dt: np.array([r[j] for r in rows], dt)  # noqa: E731
    width = OBSERVATIONS[observation]
    out = {"obs": np.array([r[5] for r in rows], np.float32).reshape(n, width),
           "legal": np.packbits(np.array([r[6] for r in rows], bool).reshape(n, N_ACTIONS),
                                axis=1),
           "net_move": col(7, np.int16), "deal": col(0, np.int64), "seating": col(1, np.int16),
           "seat": col(2, np.int8), "hand": col(3, np.int16), "tick": col(4, np.int32),
           "candidates": cand, "gains": gain, "se": se,
           "search_move": np.array([r[8].move for r in rows], np.int16),
           "searched": np.array([r[8].searched for r in rows], bool),
           "net_points": np.asarray(points, np.int16),
           "range": np.array([d_lo, d_hi], np.int64)}
    if observation != OBSERVATION:
        out["observation"] = np.array(observation)
    return out


def shard_bytes(arrays: dict) -> bytes:
    buf = io.BytesIO()
    np.savez_compressed(buf, **arrays)
    return buf.getvalue()


def shard_name(fmt: str, d_lo: int, d_hi: int) -> str:
    return f"{fmt}_d{d_lo:07d}-{d_hi:07d}.npz"


def blocks(formats, deals: int, block: int) -> list:
    """(format, d_lo, d_hi) of every shard, in the order they are listed."""
    return [(f, a, min(deals, a + block)) for f in formats for a in range(0, deals, block)]


def _run_local(plan, jobs, workers: int):
    if workers <= 1:
        for fmt, a, b in jobs:
            yield (fmt, a, b), label_block(plan, fmt, a, b)
        return
    ctx = multiprocessing.get_context("spawn")
    with ctx.Pool(workers) as pool:
        args = [(plan, *j) for j in jobs]
        for job, arrays in zip(jobs, pool.imap(_star, args)):
            yield job, arrays


def _star(args):
    return label_block(*args)


def _run_ray(plan, jobs, address=None):
    from ..arena.distributed import RAY_PURPOSE, _connect
    from nertz_env.optional import require
    ray = require("ray", "ray", RAY_PURPOSE)
    if not ray.is_initialized():
        _connect(ray, address)
    task = ray.remote(max_retries=3)(label_block)
    refs = [task.remote(plan, *j) for j in jobs]
    for job, ref in zip(jobs, refs):
        yield job, ray.get(ref)


def check_net(net) -> str:
    """The net's .npz path, refused in one line unless it is a safe-format model."""
    p = Path(net)
    if p.suffix != ".npz" or not p.is_file() or not p.with_suffix(".json").is_file():
        raise ValueError(f"net {str(net)!r} must be a safe-format model: NAME.npz with "
                         "NAME.json beside it (agents/learned/weights.py)")
    load_weights_policy(p)
    return str(p)


def net_observation(net) -> str:
    """The observation a safe-format net reads: OBSERVATION (v0) or OBSERVATION_V1."""
    return OBSERVATION_V1 if reads_v1(load_weights_policy(net)) else OBSERVATION


def sha256_file(path) -> str:
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def write_labels(out, net: str, *, formats=("2teams", "4teams"), deals: int = 100,
                 seed: int = 0, search: str = SEARCH, opponent: str = "learned",
                 block: int = 16, stride: int = 1, workers: int = 1, executor: str = "local",
                 ray_address=None, overwrite: bool = False, log=None) -> dict:
    """Label `deals` deals of each format with the net in its seat(s) into the fresh folder
    `out` (module docstring); returns labels.json's content. Everything checked first."""
    formats = list(formats)
    for f in formats:
        lineup(f, opponent)
    for name, v, lo in (("deals", deals, 1), ("block", block, 1), ("workers", workers, 1),
                        ("seed", seed, 0), ("stride", stride, 1)):
        if isinstance(v, bool) or not isinstance(v, int) or v < lo:
            raise ValueError(f"{name}={v!r} must be an int >= {lo}")
    if executor not in ("local", "ray"):
        raise ValueError(f"executor {executor!r} is unknown; executors are local, ray")
    net = check_net(net)
    observation = net_observation(net)
    make_agent(search, seed=seed)
    make_agent(opponent, seed=seed)
    plan = LabelPlan(str(Path(net).resolve()), search, opponent, int(seed), int(block),
                     int(stride))
    jobs = blocks(formats, deals, block)
    run = _run_ray(plan, jobs, ray_address) if executor == "ray" else \
        _run_local(plan, jobs, workers)
    info = {"format": FORMAT, "version": VERSION, "observation": observation,
            "obs_dim": OBSERVATIONS[observation], "net": net, "net_sha256": sha256_file(net),
            "search": search,
            "opponent": opponent, "seed": int(seed), "deals": int(deals), "block": int(block),
            "stride": int(stride),
            "formats": formats, "shards": {}}
    with run_folder(out, overwrite=overwrite, command="expert-iteration labels") as staging:
        for (fmt, a, b), arrays in run:
            name = shard_name(fmt, a, b)
            write_bytes(Path(staging) / name, shard_bytes(arrays))
            info["shards"][name] = {"rows": int(len(arrays["net_move"])),
                                    "searched": int(arrays["searched"].sum()),
                                    "deviates": int((arrays["search_move"]
                                                     != arrays["net_move"]).sum()),
                                    "net_points": float(arrays["net_points"].mean())}
            if log:
                log(f"labels: {name} {info['shards'][name]['rows']} rows")
        info["rows"] = sum(s["rows"] for s in info["shards"].values())
        write_json(Path(staging) / LABELS_FILE, info)
    return info


def read_labels(folder) -> tuple:
    """(labels.json's content, the shards' arrays concatenated); ValueError naming the file
    for anything but a labels folder of this version, of either observation (OBSERVATIONS):
    its shards' `obs` must be that observation's width, and a v1 folder's shards name it. A
    file there the system will not let be read (permission, an I/O error) is an OSError
    naming it (exit 1; bounded.read_fault), not a ValueError."""
    folder = Path(folder)
    what = f"labels {str(folder / LABELS_FILE)!r}"
    try:               # a path naming no file: ValueError; one the system refuses: OSError
        raw = read_capped(folder / LABELS_FILE, 1 << 22, "labels")
    except ValueError as err:
        raise ValueError(f"{err}; a folder write_labels wrote is read") from None
    info = json_loads_strict(raw, what)
    if not isinstance(info, dict) or info.get("format") != FORMAT \
            or info.get("version") != VERSION or info.get("observation") not in OBSERVATIONS \
            or info.get("obs_dim") != OBSERVATIONS[info["observation"]]:
        allowed = " or ".join(f"{k!r} / {v}" for k, v in OBSERVATIONS.items())
        raise ValueError(f"{what}: format/version/observation/obs_dim must be {FORMAT!r} / "
                         f"{VERSION} / {allowed}")
    observation = info["observation"]
    shards = info.get("shards")
    if not isinstance(shards, dict):
        raise ValueError(f"{what}: 'shards' must be an object naming the folder's shards")
    parts = []
    for name in sorted(shards):
        if Path(name).name != name or name in ("", ".."):
            raise ValueError(f"{what}: shard {name!r} is not a file name in its folder")
        q = read_shard(folder / name, what)
        named = str(q.pop("observation", OBSERVATION))
        if named != observation or q["obs"].ndim != 2 \
                or q["obs"].shape[1] != OBSERVATIONS[observation]:
            raise ValueError(f"{what}: shard {name!r} holds {named!r} rows of shape "
                             f"{q['obs'].shape}; labels.json says {observation!r} "
                             f"({OBSERVATIONS[observation]} floats)")
        parts.append(q)
    keys = [k for k in parts[0] if k not in ("candidates", "gains", "se", "range",
                                             "net_points")] if parts else []
    out = {k: np.concatenate([q[k] for q in parts]) for k in keys}
    K = max([q["candidates"].shape[1] for q in parts] + [1])
    for k, fill in (("candidates", -1), ("gains", 0), ("se", 0)):
        out[k] = np.concatenate([np.pad(q[k], ((0, 0), (0, K - q[k].shape[1])),
                                        constant_values=fill) for q in parts]) if parts \
            else np.zeros((0, K))
    return info, out


def read_shard(path, what: str) -> dict:
    """One shard's arrays, each member inflated under a cap (no pickles). A path naming no
    file, over MAX_SHARD_BYTES or not an npz is a ValueError; a shard the system will not let
    be read (permission, an I/O error) an OSError naming it (bounded.read_fault)."""
    path = Path(path)
    out = {}
    with open_regular(path, "labels shard") as fh:       # no FIFO swapped in can hang it
        if os.fstat(fh.fileno()).st_size > MAX_SHARD_BYTES:
            raise ValueError(f"{what}: shard {path.name!r} is larger than "
                             f"{MAX_SHARD_BYTES >> 20} MiB; refused unread")
        try:
            with zipfile.ZipFile(fh) as zf:
                for name in zf.namelist():
                    raw = zip_member_capped(zf, name, MAX_SHARD_BYTES, f"{what} {path.name}")
                    arr = np.load(io.BytesIO(raw), allow_pickle=False)
                    if not isinstance(arr, np.ndarray):
                        raise ValueError(f"{what}: shard {path.name!r} member {name[:80]!r}"
                                         " is not an .npy array")
                    out[name[:-4] if name.endswith(".npy") else name] = arr
        except (*ZIP_ERRORS, ValueError) as err:
            if system_fault(err):                        # the disk's, not the file's: exit 1
                raise read_fault(err, path, "labels shard") from None
            if isinstance(err, ValueError) and str(path.name) in str(err):
                raise                                    # already names the shard
            raise ValueError(f"{what}: shard {path.name!r} is not a readable npz "
                             f"({zip_error_text(err)})") from None
    missing = SHARD_KEYS - set(out)
    if missing:
        raise ValueError(f"{what}: shard {path.name!r} lacks {sorted(missing)[0]!r}")
    return out


SHARD_KEYS = {"obs", "legal", "net_move", "deal", "seating", "seat", "hand", "tick",
              "candidates", "gains", "se", "search_move", "searched", "net_points", "range"}


def targets_free_rows(labels: dict) -> int:
    """Rows search did not search (one candidate): the net's policy to keep, no target."""
    return int((~labels["searched"]).sum())


def merge_labels(parts) -> tuple:
    """(arrays, infos) of several read_labels results (e.g. one per format): the arrays
    concatenated in order, the candidate-wide ones (candidates, gains, se) padded to the
    widest with -1 / 0 / 0; infos: each folder's formats, deals, rows, seed, net_sha256 and
    observation."""
    infos = [{k: i[k] for k in ("formats", "deals", "rows", "seed", "net_sha256",
                                "observation")} for i, _ in parts]
    K = max(p["candidates"].shape[1] for _, p in parts)
    fill = {"candidates": -1, "gains": 0, "se": 0}
    out = {k: np.concatenate([np.pad(p[k], ((0, 0), (0, K - p[k].shape[1])),
                                     constant_values=fill[k]) if k in fill else p[k]
                              for _, p in parts]) for k in parts[0][1]}
    return out, infos
