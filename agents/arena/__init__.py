"""The arena: matches between agents on duplicate deals. Tournaments (tournament.py) and
treatment-vs-baseline experiments (experiment.py; its spec experiment_spec.py, its effects
effects.py), built on one set of parts: lineups and balanced seatings (seatings.py), deal
keys (deals.py), the play loops (play.py), Ray (distributed.py), records and replays
(records.py), the precision loop (precision.py) and the terminal's progress (progress.py)."""
