"""train: see README.md."""
