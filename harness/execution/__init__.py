"""Stage 4, execution: candidates run. Jobs (jobs.py), the executor seam (executor.py) with this
machine's Evaluator (evaluator.py, over pool.py) and a Ray cluster's (ray_executor.py), the loop that runs
a list of jobs (dispatch.py), the sandbox backends (sandbox/), EvalPlus's ground truth (groundtruth.py),
BigCodeBench's calibration (calibrate.py), the machine check (doctor.py)."""
