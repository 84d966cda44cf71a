"""The Recorder (nertz_env/replay/recorder.py) against records kept apart from it: its step
buffer (grown, trimmed) gives back exactly the rows the engine played, and vector-env hands
(re-dealt inside numba) carry the digest of the position their last tick reached, so
Replay.check() sees a recorded action that is not the one played."""
from __future__ import annotations

import numpy as np
import pytest

from nertz_env.actions import FLIP, WAIT
from nertz_env.envs.gym_vector import NertzGymVectorEnv
from nertz_env.envs.selfplay_sb3 import NertzSelfPlayVecEnv
from nertz_env.envs.vector import NertzVecEnv
from nertz_env.replay import HandReplay, Replay, ReplayError, record


def legal(rng, mask):
    return int(rng.choice(np.flatnonzero(mask)))


def play_vec(v, steps, seed, tables):
    """Random legal learner moves for `steps` steps of an SB3 vector env; returns what the
    engine played at `tables` per step, read from the engine itself: (actions int16 [steps,
    n, S], orders [steps, n, S])."""
    rng = np.random.default_rng(seed)
    acts, orders = [], []
    for _ in range(steps):
        v.step_async(np.array([legal(rng, m) for m in v.action_masks()]))
        v.step_wait()
        acts.append(v.engine.actions[tables].copy())
        orders.append(v.engine.scratch.order[tables].copy())
    return np.array(acts), np.array(orders)


def per_table(rep, table):
    """The rows of every hand of one table, in the order it played them, end to end."""
    hands = [h for h in rep.hands if h.label.get("table", 0) == table]
    return (np.concatenate([h.actions for h in hands]),
            np.concatenate([h.priority for h in hands]))


def test_the_step_buffer_grows_and_trims_and_gives_back_the_rows_played():
    """Long recordings of a vector env: the buffer doubles for long hands and drops (shifts
    out) the steps no open hand needs; every recorded action and priority row is the one the
    engine played at that step, and every hand replays to its recorded end and digest."""
    v = NertzVecEnv(num_envs=3, num_teams=2, max_ticks=150, opponents="random", seed=1)
    tables = [1, 2]
    rec = record(v, tables=tables)
    v.reset()
    acts, orders = play_vec(v, 700, 7, tables)
    assert rec._base > 0                                   # rows were dropped
    assert rec._acts.shape[0] <= 512                        # bounded by the longest open hand
    rep = rec.replay()
    assert len(rep.hands) >= 8 and sum(h.ticks for h in rep.hands) == 2 * 700
    for col, e in enumerate(tables):
        got_a, got_p = per_table(rep, e)
        np.testing.assert_array_equal(got_a, acts[:, col])
        np.testing.assert_array_equal(got_p, orders[:, col])
    rep.check()


def _vec_envs():
    """(name, env, step(rng)) for each vector env: SB3 NertzVecEnv, Gymnasium
    NertzGymVectorEnv and the SB3 self-play env; max_ticks small so hands end."""
    def sb3(env):
        def step(rng):
            env.step_async(np.array([legal(rng, m) for m in env.action_masks()]))
            env.step_wait()
        env.reset()
        return step

    def gym(env):
        def step(rng):
            env.step(np.array([legal(rng, m) for m in env.action_masks()]))
        env.reset(seed=3)
        return step
    yield "NertzVecEnv", NertzVecEnv(num_envs=3, num_teams=2, max_ticks=40,
                                     opponents="greedy", seed=2), sb3
    yield "NertzGymVectorEnv", NertzGymVectorEnv(num_envs=3, num_teams=3, max_ticks=40,
                                                 opponents="random"), gym
    yield "self-play", NertzSelfPlayVecEnv(n_tables=2, num_teams=2, max_ticks=40), sb3


def _last_flip(rep):
    """(hand index, seat) of a finished hand whose last tick has an applied flip (a move
    that scores nothing), else None."""
    for i, h in enumerate(rep.hands):
        if h.end["status"] == "open":
            continue
        last = rep.frames(i)[-2]
        for s, a in enumerate(h.actions[-1]):
            if a == FLIP and last["applied"][s]:
                return i, s
    return None


def _altered(rep, i, seat, keep_digest=True):
    """rep with hand i's last recorded action of `seat` turned into a wait."""
    h = rep.hands[i]
    acts = h.actions.copy()
    acts[-1, seat] = WAIT
    end = dict(h.end) if keep_digest else {k: v for k, v in h.end.items() if k != "digest"}
    hands = list(rep.hands)
    hands[i] = HandReplay(h.hand, h.decks, h.layout, acts, h.priority, end, h.label)
    return Replay(rep.config, rep.agents, hands, rep.meta)


@pytest.mark.parametrize("name", ["NertzVecEnv", "NertzGymVectorEnv", "self-play"])
def test_vector_env_hands_carry_the_final_digest_and_check_sees_an_altered_action(name):
    """Every finished hand of a vector env ends with the digest of its final position (the
    kernel re-deals before Python can read it), so check() fails on a hand whose last
    recorded action is not the one played, though the scores, tick and status still match
    (a flip scores nothing): without the digest (the negative control) it passes."""
    env, make_step = next((e, s) for n, e, s in _vec_envs() if n == name)
    rec = record(env)
    step = make_step(env)
    rng = np.random.default_rng(4)
    for _ in range(200):
        step(rng)
    rep = rec.replay(include_open=False)
    assert len(rep.hands) >= 6
    assert all(len(h.end.get("digest", "")) == 16 and "callers" in h.end for h in rep.hands)
    rep.check()
    found = _last_flip(rep)
    assert found is not None, "no hand ended on a flip: pick another seed"
    i, seat = found
    _altered(rep, i, seat, keep_digest=False).check()       # what scores alone could see
    with pytest.raises(ReplayError, match=f"hand {i} of {len(rep.hands)} in the file does "
                                          "not replay to its recorded end: digest"):
        _altered(rep, i, seat).check()
