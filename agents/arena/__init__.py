"""The arena: matches between agents on duplicate deals. Tournaments (tournament.py) and
treatment-vs-baseline experiments (experiment.py)."""
