"""How the benchmark scripts measure the machine: its busy CPU (and what the hypervisor took), and the CPU
spent inside Docker's containers. One home for what bench.py and agreement_languages.py both read."""

from __future__ import annotations

import os
from pathlib import Path


def busy_cpu_s() -> tuple[float, float]:
    """CPU seconds the whole machine has spent busy since boot (every core; /proc/stat), and the seconds
    the hypervisor gave its cores to something else (steal: a noisy neighbour, not ours)."""
    fields = Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]
    ticks = [int(x) for x in fields]
    hz = os.sysconf("SC_CLK_TCK")
    busy = ticks[0] + ticks[1] + ticks[2] + ticks[5] + ticks[6]   # user, nice, system, irq, softirq
    return busy / hz, (ticks[7] if len(ticks) > 7 else 0) / hz


CONTAINERS_CPU = ("/sys/fs/cgroup/cpuacct/docker/cpuacct.usage",      # cgroup v1, cgroupfs driver
                  "/sys/fs/cgroup/system.slice/cpu.stat")              # cgroup v2, systemd driver (approximate)


def containers_cpu_s() -> float | None:
    """CPU seconds spent inside every Docker container so far (the parent cgroup keeps the usage of
    containers already removed); None where this machine's layout is not known."""
    for path in CONTAINERS_CPU:
        try:
            text = Path(path).read_text()
        except OSError:
            continue
        if path.endswith("cpuacct.usage"):
            return int(text) / 1e9
        for line in text.splitlines():
            if line.startswith("usage_usec "):
                return int(line.split()[1]) / 1e6
    return None
