"""NUMA as the host runs it and will boot it: the running kernel's arguments, sockets and
the nodes the kernel brought online."""

from __future__ import annotations

from dataclasses import dataclass

from ...rules.host_layout import NUMA_NODES_ONLINE, PROC_CMDLINE, PROC_CPUINFO
from .. import linear_re as re
from ..sources.hostroot import FactError, HostRoot
from ..unavailable import Unavailable

_RANGE = re.compile(r"^(\d{1,6})(?:-(\d{1,6}))?$")


@dataclass(frozen=True)
class NumaFacts:
    running_args: tuple[str, ...] | Unavailable  # () where /proc/cmdline is absent
    sockets: int  # distinct "physical id" values in /proc/cpuinfo; 0 when none are shown
    nodes_online: int | None  # None: the kernel shows no node list (no NUMA support)
    nodes_source: str


def cpulist_count(text: str) -> int | None:
    """How many numbers a kernel cpulist ("0-3,8") names; None when it is not one."""
    total = 0
    for part in text.strip().split(","):
        match = _RANGE.match(part.strip())
        if not match:
            return None
        low, high = int(match.group(1)), int(match.group(2) or match.group(1))
        if high < low:
            return None
        total += high - low + 1
    return total


def cpuinfo_sockets(text: str) -> int:
    ids = {value.strip() for name, _, value in (line.partition(":") for line in text.splitlines())
           if name.strip() == "physical id"}
    return len(ids)


def collect_numa(root: HostRoot) -> NumaFacts:
    running: tuple[str, ...] | Unavailable
    try:  # absent from a snapshot or image: nothing to say about a running kernel
        running = tuple((root.read_optional(PROC_CMDLINE, 65536) or "").split())
    except FactError as exc:
        running = Unavailable(str(exc))
    try:
        sockets = cpuinfo_sockets(root.read_optional(PROC_CPUINFO, 1 << 22) or "")
    except FactError:
        sockets = 0
    try:
        online = root.read_optional(NUMA_NODES_ONLINE, 4096)
    except FactError:
        online = None
    nodes = cpulist_count(online) if online is not None else None
    return NumaFacts(running, sockets, nodes, NUMA_NODES_ONLINE)
