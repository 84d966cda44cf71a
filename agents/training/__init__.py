"""`nertz train`: imitation warm start, MaskablePPO against a league, evaluations, checkpoints."""
