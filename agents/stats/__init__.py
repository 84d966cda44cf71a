"""Statistics of matches, the deal as the independent unit: estimators and intervals
(estimators.py), batch Plackett-Luce ratings (ratings.py), tables and plots (report.py)."""
