"""Tournaments and experiments on Ray (executor="ray", --ray): deals in blocks of Ray tasks on
a local Ray instance, merged in deal order, give the same files as a local run."""
from __future__ import annotations

import os

import pytest

try:
    import ray
except ImportError:                      # .ci/run (NERTZ_REQUIRE_CLIENTS=1) never skips these
    if os.environ.get("NERTZ_REQUIRE_CLIENTS") == "1":
        raise
    pytest.skip("ray is not installed: pip install -e '.[ray]'", allow_module_level=True)

from agents.cli import main  # noqa: E402
from agents.arena.experiment import run_experiment, spec_from_dict  # noqa: E402
from agents.arena.tournament import run_tournament  # noqa: E402

AGENTS = ["random", "greedy", "heuristic:style=river-builder"]


@pytest.fixture(scope="module")
def local_ray():
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def test_tournament_on_ray_writes_the_local_files_byte_for_byte(local_ray, tmp_path):
    local = run_tournament(AGENTS, teams=3, deals=11, seed=4, mode="games", max_game_hands=3,
                           progress=False)
    far = run_tournament(AGENTS, teams=3, deals=11, seed=4, mode="games", max_game_hands=3,
                         progress=False, executor="ray", block_deals=3)     # 4 blocks, uneven
    for res, name in ((local, "local"), (far, "ray")):
        res.write(tmp_path / name, plot=False)
    for f in ("leaderboard.csv", "pairs.csv", "results.json", "hands.csv"):
        assert (tmp_path / "local" / f).read_bytes() == (tmp_path / "ray" / f).read_bytes(), f


def test_precision_runs_and_the_cli_on_ray(local_ray, tmp_path, capsys):
    kw = dict(teams=2, deals=6, seed=2, progress=False, precision=3.0, max_deals=40)
    local = run_tournament(AGENTS[1:], **kw)
    far = run_tournament(AGENTS[1:], executor="ray", block_deals=5, **kw)
    assert far.deal_blocks == local.deal_blocks and far.pairs == local.pairs
    args = ["tournament", "--agents", "greedy,heuristic", "--teams", "2", "--deals", "4",
            "--quiet", "--no-plot"]
    assert main(args + ["--out", str(tmp_path / "a")]) == 0
    assert main(args + ["--out", str(tmp_path / "b"), "--ray", "--block-deals", "3"]) == 0
    assert (tmp_path / "a" / "hands.csv").read_bytes() == (tmp_path / "b" / "hands.csv").read_bytes()


def test_experiment_on_ray_gives_the_local_rows(local_ray):
    spec = spec_from_dict({"baseline": "greedy", "treatments": {"h": "heuristic"},
                           "opponents": ["baseline", "half"], "teams": [2, 3], "deals": 7,
                           "seed": 5})
    local = run_experiment(spec, progress=False)
    far = run_experiment(spec, progress=False, executor="ray", block_deals=2)
    assert far.rows == local.rows and far.cells == local.cells


def test_ray_needs_spec_strings_and_a_known_executor():
    from agents import make_agent

    with pytest.raises(ValueError, match="spec strings"):
        run_tournament([make_agent("greedy"), "random"], deals=2, executor="ray")
    with pytest.raises(ValueError, match="executor 'dask'"):
        run_tournament(AGENTS, deals=2, executor="dask")
    with pytest.raises(ValueError, match="block_deals=0"):
        run_tournament(AGENTS, deals=2, executor="ray", block_deals=0)


def test_a_worker_that_dies_is_replaced_and_the_result_does_not_change(local_ray, tmp_path):
    """The first task to run kills its worker process (os._exit); Ray retries the block on
    another worker, and the columns equal a local run's."""
    import numpy as np

    from agents.registry import make_agent
    from agents.arena.distributed import play_deals_ray
    from agents.arena.play import MatchPlan, Roster, play_deals
    from agents.arena.progress import NoBar
    from agents.arena.seatings import seatings
    from nertz_env import RulesConfig

    marker = str(tmp_path / "die-once")
    open(marker, "w").close()

    def dies_once(*args):
        import os

        from agents.arena.distributed import ray_block
        try:
            os.remove(marker)              # the one task that removes it dies
        except FileNotFoundError:
            return ray_block(*args)
        os._exit(1)                        # the worker process is gone mid-task

    specs = ["greedy", "heuristic"]
    plan = MatchPlan(RulesConfig(num_teams=2), [seatings((0, 1))], 8, "hands", 1, 64)
    want = play_deals(plan, Roster.of([make_agent(s) for s in specs]), 0, 9, NoBar())
    got = play_deals_ray(plan, specs, 0, 9, NoBar(), block_deals=3, task_body=dies_once)
    assert not os.path.exists(marker)                      # the kill did happen
    for a, b in zip(want, got.sorted()):
        assert np.array_equal(a, b)


def test_a_busy_worker_killed_from_outside_changes_nothing(local_ray, tmp_path):
    """The driver kills (SIGKILL) the process of a worker that is inside a task, as an
    operator or the OOM killer would; Ray retries the block and the columns equal a local
    run's."""
    import signal
    import threading
    import time

    import numpy as np

    from agents.registry import make_agent
    from agents.arena.distributed import play_deals_ray
    from agents.arena.play import MatchPlan, Roster, play_deals
    from agents.arena.progress import NoBar
    from agents.arena.seatings import seatings
    from nertz_env import RulesConfig

    pidfile = str(tmp_path / "busy-worker.pid")

    def busy_once(*args):
        import os
        import time

        from agents.arena.distributed import ray_block
        try:
            fd = os.open(pidfile, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
        except FileExistsError:            # the retry, and every other block
            return ray_block(*args)
        os.write(fd, str(os.getpid()).encode())
        os.close(fd)
        time.sleep(120)                    # busy until the driver kills this process
        return ray_block(*args)

    specs = ["greedy", "heuristic"]
    plan = MatchPlan(RulesConfig(num_teams=2), [seatings((0, 1))], 9, "hands", 1, 64)
    want = play_deals(plan, Roster.of([make_agent(s) for s in specs]), 0, 8, NoBar())
    got = []
    run = threading.Thread(target=lambda: got.append(play_deals_ray(
        plan, specs, 0, 8, NoBar(), block_deals=2, task_body=busy_once)))
    run.start()
    deadline = time.time() + 60
    while not (os.path.exists(pidfile) and os.path.getsize(pidfile)) and time.time() < deadline:
        time.sleep(0.05)
    pid = int(open(pidfile).read())
    assert pid != os.getpid()
    os.kill(pid, signal.SIGKILL)
    run.join(120)
    assert not run.is_alive() and got, "the run did not finish after the kill"
    for a, b in zip(want, got[0].sorted()):
        assert np.array_equal(a, b)


def test_search_agents_on_ray_write_the_local_files(local_ray, tmp_path):
    """A `search:` agent (a seat view, played by the arena's Python loop, its draws seeded
    from the run's seed and each table's deal key) built again on every worker: records and
    files equal a local run's, byte for byte; and it is not its base bot's run."""
    search = ["search:worlds=2,horizon=5", "heuristic:style=river-builder"]
    kw = dict(teams=2, deals=4, seed=6, progress=False)
    local = run_tournament(search, **kw)
    far = run_tournament(search, executor="ray", block_deals=1, **kw)      # 4 blocks
    base = run_tournament(search[1:] * 2, **kw)
    for res, name in ((local, "local"), (far, "ray")):
        res.write(tmp_path / name, plot=False)
    for f in ("leaderboard.csv", "pairs.csv", "results.json", "hands.csv"):
        assert (tmp_path / "local" / f).read_bytes() == (tmp_path / "ray" / f).read_bytes(), f
    assert not (local.records.score == base.records.score).all()
    spec = spec_from_dict({"baseline": "heuristic:style=river-builder",
                           "treatments": {"s": search[0]}, "opponents": ["baseline"],
                           "teams": [2], "deals": 3, "seed": 2})
    local = run_experiment(spec, progress=False)
    far = run_experiment(spec, progress=False, executor="ray", block_deals=2)
    assert far.rows == local.rows and far.cells == local.cells
