"""Stage 5, runs: one run from its configuration to its run directory (runner.py: `evaluate`), a run
again from its manifest (reproduce.py), a run's limits put to the test (audit.py)."""
