"""Memory of the replay views in hand length, and the refusal time of a gzip bomb.

    python -m benchmarks.replay_memory                 # a 3,000-tick hand against a 100-tick one
    python -m benchmarks.replay_memory --long 1000 --short 50

Each job runs in a fresh Python process of its own and reports that process's peak RSS
(resource.getrusage(RUSAGE_SELF).ru_maxrss; for the mp4 also the ffmpeg process's, which
imageio-ffmpeg starts): `import` (the modules alone, the floor), `read`
(Replay.load and check), `html` (write_html), `gif` and `mp4` (write_animation to a .gif, every
tick asked for but sampled to at most 200 pictures; to an .mp4, every tick), each for the
short and the long hand, both 4 teams of random legal moves (max_ticks reached). Then a
gzip replay that inflates to 2 GiB is read in this process: the seconds until its refusal and
the peak RSS growth. Prints a markdown table and one JSON line.
"""
from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
import zlib

import numpy as np

JOBS = ("import", "read", "html", "gif", "mp4")


def make_hand(path: str, ticks: int, seed: int = 0) -> str:
    """A hand of `ticks` ticks at 4 teams, random legal moves (never a Nertz call), saved."""
    from nertz_env import RulesConfig, Table
    from nertz_env.replay import record
    table = Table.deal(RulesConfig(num_teams=4, max_ticks=ticks, auto_nertz=False), seed=seed)
    rec = record(table)
    rng = np.random.default_rng(seed)
    while not table.hand_over:
        moves = {}
        for s in range(4):
            legal = [str(m) for m in table.legal_moves(s) if str(m) != "call"]
            moves[s] = legal[int(rng.integers(len(legal)))] if legal else "wait"
        table.step(moves)
    return str(rec.replay().save(path))


def child(job: str, path: str, out: str) -> None:
    """One job in this process, then its peak RSS in KiB on stdout."""
    from nertz_env.replay import Replay
    from nertz_env.replay.html import write_html
    from nertz_env.replay.video import write_animation
    if job != "import":
        rep = Replay.load(path)
        if job == "read":
            rep.check()
        elif job == "html":
            write_html(rep, out)
        elif job in ("gif", "mp4"):
            write_animation(rep, out)
    print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,      # and ffmpeg's, for an mp4
          resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)


def measure(job: str, path: str, folder: str) -> tuple:
    """(peak RSS MiB, the largest child's peak RSS MiB, seconds, output bytes) of one job
    in a fresh process."""
    ext = job if job in ("gif", "mp4") else "html"
    out = os.path.join(folder, f"{job}-{os.path.basename(path)}.{ext}")
    t0 = time.perf_counter()
    res = subprocess.run([sys.executable, "-m", "benchmarks.replay_memory", "--child", job,
                          path, out], capture_output=True, text=True, check=True)
    dt = time.perf_counter() - t0
    size = os.path.getsize(out) if os.path.exists(out) else 0
    own, kids = res.stdout.split()[-2:]
    return int(own) / 1024, int(kids) / 1024, dt, size


def bomb(folder: str, gib: int = 2) -> tuple:
    """(gzip bytes, seconds to refuse, RSS growth MiB) of a replay inflating to `gib` GiB."""
    from nertz_env.replay import Replay, ReplayError
    path = os.path.join(folder, "bomb.nertz.json.gz")
    comp = zlib.compressobj(9, zlib.DEFLATED, 31)
    zeros = b" " * (1 << 24)
    with open(path, "wb") as fh:
        fh.write(comp.compress(b'{"format": "nertz-replay", "x": "'))
        for _ in range(gib * 64):
            fh.write(comp.compress(zeros))
        fh.write(comp.compress(b'"}') + comp.flush())
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    t0 = time.perf_counter()
    try:
        Replay.load(path)
    except ReplayError as err:
        message = str(err)
    dt = time.perf_counter() - t0
    grew = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before) / 1024
    return os.path.getsize(path), dt, grew, message


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--long", type=int, default=3000)
    ap.add_argument("--short", type=int, default=100)
    ap.add_argument("--child", nargs=3, metavar=("JOB", "FILE", "OUT"), help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        child(*args.child)
        return {}
    result = {}
    with tempfile.TemporaryDirectory() as folder:
        hands = {n: make_hand(os.path.join(folder, f"h{n}.nertz.json.gz"), n)
                 for n in (args.short, args.long)}
        print(f"| job | {args.short} ticks: peak RSS MiB, s, output | {args.long} ticks: "
              "peak RSS MiB, s, output |")
        print("|---|---|---|")
        for job in JOBS:
            row = []
            for n, path in hands.items():
                rss, kid, dt, size = measure(job, path, folder)
                result[f"{job}_{n}"] = {"rss_mib": round(rss, 1), "s": round(dt, 2),
                                        "bytes": size}
                if job == "mp4":
                    result[f"{job}_{n}"]["ffmpeg_rss_mib"] = round(kid, 1)
                row.append(f"{rss:.0f} MiB" + (f" (ffmpeg {kid:.0f} MiB)" if job == "mp4"
                                                else "") + f", {dt:.1f} s"
                           + (f", {size / 1024:.0f} KiB" if size else ""))
            print(f"| {job} | " + " | ".join(row) + " |")
        size, dt, grew, message = bomb(folder)
        result["bomb"] = {"gzip_bytes": size, "refused_s": round(dt, 3),
                          "rss_growth_mib": round(grew, 1)}
        print(f"\ngzip bomb: {size / 2**20:.1f} MiB inflating to 2 GiB, refused in {dt:.3f} s, "
              f"peak RSS +{grew:.0f} MiB: {message}")
    print(json.dumps(result))
    return result


if __name__ == "__main__":
    main()
