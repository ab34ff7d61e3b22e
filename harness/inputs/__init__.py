"""Stage 1, inputs: what a run reads and is told. Problems (problem.py; formats/: one module per file
format), samples, languages (commands, images, the tests' wrapping), pinned library environments, and the
run's configuration (config.py: limits, sandbox settings, scoring options, YAML)."""
