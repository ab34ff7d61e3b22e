"""Stage 3, scoring: pure functions of the recorded rows, no Docker. pass@k and the score (score.py),
comparison of runs (compare.py), the summary and the report (report.py)."""
