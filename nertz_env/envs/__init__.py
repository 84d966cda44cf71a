"""The RL faces of the engine, thin views of `Engine`: the PettingZoo ParallelEnv
(`pettingzoo.py`) and AEC form with the entry points `nertz_env.nertz_v0` re-exports
(`aec.py`; nothing here imports `nertz_v0`), the single-seat Gymnasium env
(`gym.py`), the batched vector envs for SB3 and Gymnasium (`vector.py`, `gym_vector.py`
over `learner_batch.py`), self-play with every seat a learner row (`selfplay.py`,
`selfplay_sb3.py`), and what they share: episodes and rewards (`episode.py`),
opponents (`opponents.py`, SB3 models as opponents in `frozen_policy.py`; seat-view
opponents such as `search:` get a SeatView), the public memory behind the v1 observation and
the seat views (`memory_keeper.py`, kept only where read) and the `rgb_array` picture
(`render.py`). `aec.py` also holds nertz_v1's entry points (`nertz_env.nertz_v1`).

Modules that need SB3 (vector.py, selfplay_sb3.py) are imported on first use of their names.
"""
from .episode import EPISODES, REWARDS
from .pettingzoo import NertzParallelEnv


def __getattr__(name):
    if name == "NertzGymEnv":
        from .gym import NertzGymEnv
        return NertzGymEnv
    if name == "NertzVecEnv":
        from .vector import NertzVecEnv
        return NertzVecEnv
    if name == "NertzGymVectorEnv":
        from .gym_vector import NertzGymVectorEnv
        return NertzGymVectorEnv
    if name == "NertzSelfPlayVecEnv":
        from .selfplay_sb3 import NertzSelfPlayVecEnv
        return NertzSelfPlayVecEnv
    if name == "NertzSelfPlayGymVectorEnv":
        from .selfplay import NertzSelfPlayGymVectorEnv
        return NertzSelfPlayGymVectorEnv
    raise AttributeError(f"module 'nertz_env.envs' has no attribute {name!r}")


__all__ = ["NertzParallelEnv", "NertzGymEnv", "NertzVecEnv", "NertzGymVectorEnv",
           "NertzSelfPlayVecEnv", "NertzSelfPlayGymVectorEnv", "EPISODES", "REWARDS"]
