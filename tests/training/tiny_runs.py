"""The tiny training run that the training tests share (test_training.py,
test_train_progress.py): SB3 (the lean PPO where a test says so), 8 tables, hands cut at
150 ticks, a 32x32 net, 256 steps, with no warm start, evaluation, checkpoint, bar or
TensorBoard unless a test switches them on."""
from agents.training.config import TrainConfig

TINY = {"learner": "sb3", "num_envs": 8, "max_ticks": 150, "net_arch": [32, 32], "bc_rows": 0,
        "n_steps": 16, "batch_size": 64, "n_epochs": 2, "timesteps": 256, "checkpoint_every": 0,
        "torch_threads": 1, "eval_every": 0, "eval_deals": 4, "progress": False,
        "tensorboard": False}


def tiny(tmp_path, **kw) -> TrainConfig:
    """TINY with `kw` over it, its run folder tmp_path/run."""
    return TrainConfig(**{"out": str(tmp_path / "run"), **TINY, **kw})
