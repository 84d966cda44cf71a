"""Statistics of matches, the deal as the independent unit: the records they read
(records.py), Student-t intervals, tests and Holm (student_t.py), estimators over deals
(estimators.py), batch Plackett-Luce ratings (ratings.py), tables and plots (report.py)."""
