"""How dm-multipath has grouped each map's paths right now: the kernel's own tables
(``dmsetup table`` and ``dmsetup status`` for the multipath target), which decide over a
model of multipath.conf wherever they were recorded: a snapshot collect.sh made of a running
host (as root), a sosreport's devicemapper plugin, or a live scan of this host as root."""

from __future__ import annotations

import os
import shutil
import subprocess

from ...rules.host_layout import DMSETUP_STATUS, DMSETUP_TABLE
from ..parsers.dm_multipath import DmTableError, MultipathMap, parse_status, parse_tables
from ..sources.hostroot import FactError, HostRoot
from ..unavailable import Unavailable

DMSETUP_TIMEOUT = 10


def _dmsetup(command: str) -> str | None:
    """The running kernel's answer, on a live scan as root; None where it cannot be had."""
    binary = shutil.which("dmsetup")
    if binary is None or os.geteuid() != 0:
        return None
    try:
        done = subprocess.run([binary, command, "--target", "multipath"], capture_output=True,
                              text=True, timeout=DMSETUP_TIMEOUT, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 else None


def collect_runtime_maps(root: HostRoot) -> dict[str, MultipathMap] | Unavailable | None:
    """Each multipath map's groups and failed paths by map name; None: not recorded."""
    try:
        table = root.read_optional(DMSETUP_TABLE, 4 * 1024 * 1024)
        status = root.read_optional(DMSETUP_STATUS, 4 * 1024 * 1024)
    except FactError as exc:
        return Unavailable(str(exc))
    if table is None and root.root == "/" and root.whole_system:
        table, status = _dmsetup("table"), _dmsetup("status")
    if table is None:
        return None
    try:
        maps = parse_tables(table)
        parse_status(status or "", maps)
    except DmTableError as exc:
        return Unavailable(f"{DMSETUP_TABLE}: {exc}")
    return maps
