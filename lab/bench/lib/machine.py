"""The machine's CPU as the bench scripts read it: one reading, so that their figures count the same seconds."""

from __future__ import annotations

import os


def machine_cpu_seconds() -> float:
    """CPU-seconds every process of the machine has used since boot (/proc/stat's first line: user, nice, system,
    irq, softirq, steal; not idle or I/O wait)."""
    with open("/proc/stat") as stat:
        fields = [int(value) for value in stat.readline().split()[1:]]
    return (sum(fields[:3]) + sum(fields[5:8])) / os.sysconf("SC_CLK_TCK")
