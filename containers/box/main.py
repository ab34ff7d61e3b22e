"""Which role this process plays: supervisor (serve), forkserver or tester."""

import os
import sys


def main(argv) -> int:
    role = argv[0] if argv else "serve"
    # The supervisor empties /tmp and /dev/shm after every job and kills processes by uid: only ever
    # inside passk's image, which sets this variable. Never on a host.
    if os.environ.get("PASSK_SANDBOX") != "1":
        sys.exit("passk supervisor: refusing to run outside passk's sandbox image (PASSK_SANDBOX is not 1)")
    if role == "forkserver":
        from .forkserver import forkserver_main
        forkserver_main()
        return 0
    if role == "tester":
        from .tester import tester_main
        tester_main(int(argv[1]))
        return 0
    from .supervisor import serve
    # SIGPIPE stays ignored, as Python leaves it: the supervisor writes a program's stdin, and a program
    # that does not read it is EPIPE there, not the supervisor's death. The host going away ends serve().
    return serve()
