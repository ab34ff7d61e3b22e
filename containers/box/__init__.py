"""passk's in-container package (standard library only). It runs inside passk's image, started by
/opt/passk/start.py; the host reads its contract (protocol) from the same files, shipped as
harness.containers.box.

    supervisor (root)          reads jobs from the host (its socket, or stdin), writes one result line
      │                        per job; holds job data, watches each candidate's output and limits
      │                        (watch.py), but never forks a candidate                 supervisor.py
      ├─ tester (uid 10002)    a warm zygote; it forks test workers that run jobs'     tester.py
      │   └─ test worker       tests (channels/proxy.py) until a job may have left state behind
      └─ forkserver (root)     a clean interpreter that never sees candidate code or data; per job it
           │                   forks the candidate, waits (touching nothing) for its end or the
           │                   supervisor's stop, then kills every process it left     forkserver.py
           └─ candidate (uid 10001)  runs the candidate's code, then serves calls     candidate.py

The verdict comes from a process the candidate cannot reach (the test worker for the proxy channel,
the supervisor for the io channel), never from the candidate's exit code or output.
"""
