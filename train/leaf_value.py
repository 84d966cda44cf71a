"""A leaf value for `search:leaf=value`: data from played hands, a small MLP.

    python -m train.leaf_value --out runs/leaf/v2 [--hands-2 6000 --hands-4 4000 --every 8
        --hidden 64,64 --epochs 4 --seed 0]

Data: hands of 2 and 4 solo teams dealt by the engine (seeded), every seat a policy drawn per
table and seat (river-builder half the time, else balanced, lake-rush, cautious, greedy or
`learned`, the shipped net played in the numba rollout kernel), played to the hand's end by
nertz_env/core/fork.py rollout in steps of --every ticks with the true cards and each table's
own priority key (so the real hand, tests/core/test_rollout.py). At every step each playing
seat's nertz_v0 observation (core/observe.py write_table_observations) is recorded with its
target: its team's relative points (scoring.relative_points, the R29 points minus the mean of
the other teams', the quantity the search's rollouts score) at the hand's end minus at that
tick, "the relative points still to come".

Net: 791 -> hidden (tanh) -> 1 (linear), torch, one thread, AdamW (weight decay 0.01) on the mean squared error of
target / SCALE, trained on 80% of the deals and judged on the other 20% (split by deal: no
hand on both sides). Reported: held-out R^2, per team count, and the R^2 of the zero
to-go baseline (predict 0: the leaf today's search uses).

Written into --out (new or empty; staged, renamed whole): leaf_value.npz / leaf_value.json in
the project's safe model format (agents/learned/weights.py: a "nertz-policy" MLP with one
unmasked output, the head multiplied by SCALE so that the output is in points; provenance
"role": "leaf-value"), and report.json (sizes, R^2, seeds, the command). Same arguments,
same files.
"""
from __future__ import annotations

import json
import sys
import time

import numpy as np

DEFAULT_POOL = ("heuristic:style=river-builder",) * 5 + (
    "heuristic:style=balanced", "heuristic:style=lake-rush", "heuristic:style=cautious",
    "greedy", "learned")
SCALE = 20.0             # targets / SCALE in training (points -> about unit variance)
TABLES_PER_BATCH = 256
WEIGHT_DECAY = 0.01       # AdamW's: the targets are mostly noise (held-out R^2 ~0.05)


def shipped_net(config):
    """(NetArrays, int64 [S] each seat's net index) of the shipped `learned` family told
    `config`'s table: the arrays a `search:opp=learned` agent plays in its rollouts, by its
    rollout_net's own function (agents/search/agent.py family_rollout_net), with no search
    agent made. ValueError (one line) where a seat's net cannot be played in the kernel."""
    from agents.registry import make_agent
    from agents.search.agent import family_rollout_net
    return family_rollout_net(make_agent("learned", seed=0), config, "the shipped `learned` net")


def play_hands(teams: int, hands: int, every: int, seed: int):
    """(obs float32 [n, 791], target float32 [n], deal int64 [n], rel_now float32 [n]) of
    `hands` hands at `teams` solo teams (module docstring)."""
    from agents.registry import make_agent
    from nertz_env.config import RulesConfig
    from nertz_env.core.fork import allocate_rollouts, fork_rows, rollout
    from nertz_env.core.net_policy import allocate_net_work
    from nertz_env.core.observe import OBS_DIM, observe_range
    from nertz_env.core.policies import POLICY_NET
    from nertz_env.core.scoring import relative_points
    from nertz_env.encoding import PLAYING
    from nertz_env.engine import Engine

    config = RulesConfig(num_teams=teams)
    S = config.num_seats
    team = np.asarray(config.seat_team)
    net, index = shipped_net(config)
    bots = {spec: (POLICY_NET, None) if spec == "learned"
            else make_agent(spec).core_policy() for spec in set(DEFAULT_POOL)}
    rng = np.random.default_rng([seed, teams])
    out = ([], [], [], [])
    for lo in range(0, hands, TABLES_PER_BATCH):
        n = min(TABLES_PER_BATCH, hands - lo)
        eng = Engine(config, n_tables=n, seed=[seed, teams, lo])
        eng.reset(seed=[seed, teams, lo])
        ro = allocate_rollouts(config, n)
        fork_rows(eng.state, ro.state, np.arange(n), np.arange(n), eng.state.rng[:n])
        picks = rng.integers(0, len(DEFAULT_POOL), size=(n, S))
        for e in range(n):
            for s in range(S):
                kind, knobs = bots[DEFAULT_POOL[picks[e, s]]]
                ro.kinds[e, s] = kind
                ro.knobs[e, s] = 0 if knobs is None else knobs
                if kind == POLICY_NET:
                    ro.knobs[e, s, 0] = index[s]
        ro.policy_rng[:n] = rng.integers(0, 2**63, size=n, dtype=np.uint64)
        work = allocate_net_work(n, net.b0.shape[1])
        obs = np.zeros((n, S, OBS_DIM), np.float32)
        steps = []                               # (playing rows, obs [k, S, D], rel [k, T])
        st = ro.state
        rollout(ro, eng.params, 1, net=net, work=work)     # masks and scores: tick 1
        while (st.status[:n] == PLAYING).any():
            rows = np.flatnonzero(st.status[:n] == PLAYING)
            observe_range(st, eng.params, ro.scratch, obs, 0, n)
            sc = ro.scores[:n].astype(np.float64)
            rel = relative_points(sc, sc.sum(1, keepdims=True), teams)
            steps.append((rows, obs[rows].copy(), rel[rows]))
            rollout(ro, eng.params, every, net=net, work=work)
        sc = ro.scores[:n].astype(np.float64)
        final = relative_points(sc, sc.sum(1, keepdims=True), teams)
        for rows, o, rel in steps:
            out[0].append(o.reshape(-1, OBS_DIM))
            out[1].append((final[rows][:, team] - rel[:, team]).reshape(-1))
            out[2].append(np.repeat(lo + rows, S))
            out[3].append(rel[:, team].reshape(-1))
    return (np.concatenate(out[0]), np.concatenate(out[1]).astype(np.float32),
            np.concatenate(out[2]).astype(np.int64), np.concatenate(out[3]).astype(np.float32))


def r2(y, pred) -> float:
    return float(1.0 - ((y - pred) ** 2).sum() / ((y - y.mean()) ** 2).sum())


def train(x, y, hidden, epochs, seed, lr=1e-3, batch=512):
    """A torch MLP x -> hidden (tanh) -> 1 on y / SCALE; its layers as float32 arrays."""
    import torch
    torch.set_num_threads(1)
    torch.manual_seed(seed)
    layers, width = [], x.shape[1]
    for h in hidden:
        layers += [torch.nn.Linear(width, h), torch.nn.Tanh()]
        width = h
    layers.append(torch.nn.Linear(width, 1))
    net = torch.nn.Sequential(*layers)
    opt = torch.optim.AdamW(net.parameters(), lr=lr, weight_decay=WEIGHT_DECAY)
    xt, yt = torch.from_numpy(x), torch.from_numpy(y / np.float32(SCALE))
    g = torch.Generator().manual_seed(seed)
    for ep in range(epochs):
        for group in opt.param_groups:
            group["lr"] = lr * (0.5 * (1 + np.cos(np.pi * ep / epochs)))
        perm = torch.randperm(len(x), generator=g)
        for i in range(0, len(x), batch):
            b = perm[i:i + batch]
            loss = ((net(xt[b]).squeeze(1) - yt[b]) ** 2).mean()
            opt.zero_grad()
            loss.backward()
            opt.step()
    lin = [m for m in net if isinstance(m, torch.nn.Linear)]
    arrays = {}
    for i, m in enumerate(lin[:-1]):
        arrays[f"hidden{i}_weight"] = m.weight.detach().numpy().astype(np.float32)
        arrays[f"hidden{i}_bias"] = m.bias.detach().numpy().astype(np.float32)
    arrays["action_weight"] = (lin[-1].weight.detach().numpy() * SCALE).astype(np.float32)
    arrays["action_bias"] = (lin[-1].bias.detach().numpy() * SCALE).astype(np.float32)
    return arrays


def forward(arrays, x):
    """The saved net in numpy (float32): points to come, per row."""
    h = x
    i = 0
    while f"hidden{i}_weight" in arrays:
        h = np.tanh(h @ arrays[f"hidden{i}_weight"].T + arrays[f"hidden{i}_bias"])
        i += 1
    return (h @ arrays["action_weight"].T + arrays["action_bias"])[:, 0]


def meta_of(hidden, provenance) -> dict:
    from nertz_env.core.observe import OBS_DIM
    shapes, width = {}, OBS_DIM
    for i, h in enumerate(hidden):
        shapes[f"hidden{i}_weight"], shapes[f"hidden{i}_bias"] = [h, width], [h]
        width = h
    shapes["action_weight"], shapes["action_bias"] = [1, width], [1]
    return {"format": "nertz-policy", "version": 1,
            "architecture": {"type": "mlp", "hidden": list(hidden), "activation": "tanh",
                             "action_net": "unmasked"},
            "observation_size": OBS_DIM, "action_size": 1, "arrays": shapes, "table": None,
            "rules": None, "provenance": provenance}


def parse(argv):
    from train.common import ScriptParser
    p = ScriptParser(prog="python -m train.leaf_value",
                     description=__doc__.split("\n\n")[0])
    p.add_argument("--out", required=True, help="a new or empty folder for the files")
    p.add_argument("--hands-2", type=int, default=6000, help="hands at 2 teams (default 6000)")
    p.add_argument("--hands-4", type=int, default=4000, help="hands at 4 teams (default 4000)")
    p.add_argument("--every", type=int, default=8, help="ticks between records (default 8)")
    p.add_argument("--hidden", default="64,64", help="hidden widths (default 64,64)")
    p.add_argument("--epochs", type=int, default=4, help="training epochs (default 4)")
    p.add_argument("--seed", type=int, default=0, help="deals, seats and training (default 0)")
    a = p.parse_args(argv)
    for name, lo, hi in (("hands_2", 0, 10**6), ("hands_4", 0, 10**6), ("every", 1, 1000),
                         ("epochs", 1, 1000), ("seed", 0, 2**31)):
        if not lo <= getattr(a, name) <= hi:
            p.error(f"--{name.replace('_', '-')}={getattr(a, name)} must be {lo}..{hi}")
    if a.hands_2 + a.hands_4 < 5:
        p.error("--hands-2 plus --hands-4 must be at least 5 (a held-out fifth)")
    try:
        a.hidden = [int(h) for h in a.hidden.split(",")]
        assert a.hidden and all(1 <= h <= 1024 for h in a.hidden)
    except (ValueError, AssertionError):
        p.error(f"--hidden={a.hidden!r} must be widths 1..1024 joined by commas")
    return a


def main(argv=None) -> int:
    from pathlib import Path

    from agents.arena.outdir import run_folder
    from agents.learned.weights import save_weights
    from nertz_env.optional import require
    from train.common import exit_status
    a = parse(sys.argv[1:] if argv is None else argv)
    command = "python -m train.leaf_value " + " ".join(sys.argv[1:] if argv is None else argv)
    t0 = time.time()
    try:
        with run_folder(a.out, command=command) as staging:      # a used --out: refused
            require("torch", "train", "python -m train.leaf_value")  # then before any work
            parts, report = [], {"command": command, "seed": a.seed, "every": a.every,
                                 "hidden": a.hidden, "epochs": a.epochs, "scale": SCALE,
                                 "pool": list(DEFAULT_POOL), "teams": {}}
            for teams, hands in ((2, a.hands_2), (4, a.hands_4)):
                if hands:
                    x, y, deal, _ = play_hands(teams, hands, a.every, a.seed)
                    test = (deal * 7919 % 5) == 0                 # a fifth of the deals
                    parts.append((teams, x, y, test))
            xtr = np.concatenate([x[~t] for _, x, _, t in parts])
            ytr = np.concatenate([y[~t] for _, _, y, t in parts])
            t1 = time.time()
            arrays = train(xtr, ytr, a.hidden, a.epochs, a.seed)
            for teams, x, y, t in parts:
                pred = forward(arrays, x[t])
                report["teams"][str(teams)] = {
                    "records": int(len(y)), "held_out": int(t.sum()),
                    "r2_held_out": r2(y[t], pred), "r2_train": r2(y[~t], forward(arrays, x[~t])),
                    "r2_zero_to_go": r2(y[t], np.zeros_like(y[t])),
                    "target_sd": float(y[t].std())}
            report["seconds"] = {"play": round(t1 - t0, 1), "train": round(time.time() - t1, 1)}
            prov = {"role": "leaf-value", "target": "relative points to come (final minus now)",
                    "script": "train/leaf_value.py", "command": command,
                    "r2_held_out": [report["teams"][k]["r2_held_out"] for k in report["teams"]]}
            save_weights(Path(staging) / "leaf_value", meta_of(a.hidden, prov), arrays)
            (Path(staging) / "report.json").write_text(json.dumps(report, indent=2) + "\n")
    except (ValueError, OSError, KeyboardInterrupt) as err:
        return exit_status(err, "python -m train.leaf_value", "nothing written: --out is "
                           "written whole or not at all")
    print(json.dumps(report["teams"], indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
