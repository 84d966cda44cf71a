"""`nertz train`: its parser and its command (the training itself is agents/training/)."""
from ..training.run import add_train_parser as add_parser  # noqa: F401
