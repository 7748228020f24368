"""What writes sysfs files at every boot, and when: systemd-tmpfiles early (before tuned),
init scripts and systemd units late (after the kernel command line and, for the THP files
RHEL's guides name, after tuned).

The shapes sites use, as Red Hat's solutions show them::

    /etc/rc.d/rc.local        echo never > /sys/kernel/mm/transparent_hugepage/enabled
    a systemd unit            ExecStart=/bin/sh -c 'echo never > /sys/kernel/mm/...'
    /etc/tmpfiles.d/thp.conf  w /sys/kernel/mm/transparent_hugepage/defrag - - - - never
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ...rules.host_layout import SYSTEMD_UNIT_DIRS, TMPFILES_DIRS
from .. import linear_re as re
from ..sources.hostroot import FactError, HostRoot
from .dropins import merged
from .target import BootStarts

# echo/printf VALUE > /sys/...; echo VALUE | tee [-a] /sys/...
_WRITE = re.compile(
    r"""(?:echo|printf)\s+(?:-[ne]+\s+)?['"]?([\w.+-]+)['"]?\s*"""
    r"""(?:>+\s*|\|\s*tee\s+(?:-a\s+)?)['"]?(/sys/[^\s'";&|)]+)""")
_EXEC = re.compile(r"^[ \t]*Exec(?:Start|StartPre|StartPost)[ \t]*=(.*)$", re.MULTILINE)
EARLY, LATE = "tmpfiles", "late"
NOT_EXECUTABLE = ("not executable, so it does not run at boot (RHEL 7+ ships rc.local that way; "
                  "systemd's rc-local.service and SysV's rc skip it): chmod +x it")


@dataclass(frozen=True)
class SysfsWrite:
    """One write of ``value`` to ``path`` at boot."""
    path: str
    value: str
    source: str  # file:line
    stage: str  # EARLY (systemd-tmpfiles, before tuned) or LATE (init script, unit)
    runs: bool = True
    why_not: str = ""


def writes_in_shell(text: str, source: str, stage: str = LATE, runs: bool = True,
                    why_not: str = "") -> list[SysfsWrite]:
    """The sysfs writes of uncommented shell lines."""
    found = []
    for number, line in enumerate(text.splitlines(), start=1):
        code = line.split("#", 1)[0] if not line.lstrip().startswith("#") else ""
        for match in _WRITE.finditer(code):
            found.append(SysfsWrite(match.group(2), match.group(1), f"{source}:{number}",
                                    stage, runs, why_not))
    return found


def tmpfiles_writes(text: str, source: str) -> list[SysfsWrite]:
    """``w`` / ``w+`` lines of a tmpfiles.d file (tmpfiles.d(5): type path mode user
    group age argument) whose path is under /sys."""
    found = []
    for number, line in enumerate(text.splitlines(), start=1):
        fields = line.split(None, 6)
        if len(fields) == 7 and fields[0] in ("w", "w+", "w!", "w+!") and (
                fields[1].startswith("/sys/")):
            found.append(SysfsWrite(fields[1], fields[6].strip(), f"{source}:{number}", EARLY))
    return found


def _enabled_units(root: HostRoot, problems: list[str], wants_dirs: Sequence[str]
                   ) -> list[tuple[str, str]]:
    """(unit name, in-root file) of every unit a target the next boot reaches wants."""
    units = merged(root, tuple(wants_dirs), ".service", problems)
    found = []
    for name, link in sorted(units.items()):
        # The link's target inside the root, else the unit by name, as systemd looks it up.
        for candidate in (link, *(f"{directory}/{name}" for directory in SYSTEMD_UNIT_DIRS)):
            if root.exists(candidate):
                found.append((name, candidate))
                break
    return found


def collect_boot_writes(root: HostRoot, init_scripts: dict[str, tuple[str, str]],
                        problems: list[str], starts: BootStarts | None = None
                        ) -> list[SysfsWrite]:
    """Every sysfs write that runs (or would, if it ran) at boot. ``init_scripts`` maps
    each init script read to (text, why it does not run at the next boot or ""); ``starts``
    says which targets' units that boot starts."""
    starts = starts or BootStarts()
    writes: list[SysfsWrite] = []
    files = merged(root, TMPFILES_DIRS, ".conf", problems)  # /etc hides /usr/lib
    for name in sorted(files):  # systemd-tmpfiles reads them in file-name order
        try:
            text = root.read_optional(files[name], 1024 * 1024) or ""
        except FactError as exc:
            problems.append(str(exc))
            continue
        writes.extend(tmpfiles_writes(text, files[name]))
    for path, (text, why_not) in init_scripts.items():
        writes.extend(writes_in_shell(text, path, runs=not why_not, why_not=why_not))
    for name, path in _enabled_units(root, problems, starts.wants_dirs):
        try:
            text = root.read_optional(path, 1024 * 1024) or ""
        except FactError as exc:
            problems.append(str(exc))
            continue
        text = text.replace("\\\n", " ")  # systemd joins a line ending in a backslash
        for match in _EXEC.finditer(text):
            writes.extend(SysfsWrite(write.path, write.value, f"{path} ({name})", LATE)
                          for write in writes_in_shell(match.group(1), path))
    return writes
