"""Whether a SysV service starts at boot: an ``S<NN><name>`` link in a run-level directory
(what ``chkconfig NAME on`` makes on RHEL 5 and 6)."""

from __future__ import annotations

from collections.abc import Callable

from ...rules.host_layout import SYSV_RUNLEVEL_DIRS


def sysv_start_links(listdir: Callable[[str], list[str]], service: str,
                     directories: tuple[str, ...] = SYSV_RUNLEVEL_DIRS) -> list[str]:
    """The start links of ``service`` in ``directories`` (the boot's run level, where it
    is known: boot.target.boot_starts); ``listdir`` lists a directory inside the root (and
    decides what an unreadable one means)."""
    return [f"{directory}/{name}" for directory in directories
            for name in listdir(directory)
            if name[:1] == "S" and name[1:3].isascii() and name[1:3].isdigit() and name[3:] == service]
