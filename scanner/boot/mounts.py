"""What mounts each file system at boot, with which options: /etc/fstab, or a systemd mount
unit in /etc/systemd/system (which hides the unit systemd-fstab-generator makes from fstab
for the same mount point, and counts when a target wants it).

Samples::

    /etc/fstab (anaconda)     /dev/mapper/sasvg-saswork /saswork xfs defaults,noatime 0 0
    /etc/systemd/system/saswork.mount
                              [Mount]
                              What=/dev/mapper/sasvg-saswork
                              Where=/saswork
                              Options=noatime
"""

from __future__ import annotations

from dataclasses import dataclass

from ...rules.host_layout import FSTAB, SYSTEMD_UNIT_DIRS
from ..parsers.mounts import parse_mounts, split_options
from ..sources.hostroot import FactError, HostRoot


@dataclass(frozen=True)
class BootMount:
    mountpoint: str
    options: tuple[str, ...]
    source: str  # /etc/fstab line N, or the unit file
    at_boot: bool  # False: noauto, or a unit no target wants
    why_not: str = ""


def mount_unit_settings(text: str) -> dict[str, str]:
    """[Mount] Key=value pairs of a unit file (the last assignment wins)."""
    settings: dict[str, str] = {}
    section = ""
    for raw in text.replace("\\\n", " ").splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1]
        elif section == "Mount" and "=" in line:
            key, _, value = line.partition("=")
            settings[key.strip()] = value.strip()
    return settings


def _wanted_units(root: HostRoot, directory: str, problems: list[str]) -> set[str]:
    """Names of the units that some target's .wants or .requires directory lists."""
    wanted: set[str] = set()
    try:
        entries = root.listdir(directory)
    except FactError as exc:
        problems.append(str(exc))
        return wanted
    for entry in entries:
        if entry.endswith((".wants", ".requires")):
            try:
                wanted.update(root.listdir(f"{directory}/{entry}"))
            except FactError as exc:
                problems.append(str(exc))
    return wanted


def collect_boot_mounts(root: HostRoot, problems: list[str]) -> dict[str, BootMount]:
    """Mount point -> what mounts it at boot."""
    mounts: dict[str, BootMount] = {}
    try:
        text = root.read_optional(FSTAB, 1024 * 1024)
    except FactError as exc:
        problems.append(str(exc))
        text = None
    if text is not None:
        entries, _ = parse_mounts(text)
        for entry in entries:  # mount -a mounts them in order: a later one stacks on top
            noauto = entry.has_option("noauto")
            mounts[entry.mountpoint] = BootMount(
                entry.mountpoint, entry.options, f"{FSTAB} line {entry.line}", not noauto,
                "noauto: not mounted at boot by fstab" if noauto else "")
    directory = SYSTEMD_UNIT_DIRS[0]
    wanted = _wanted_units(root, directory, problems)
    try:
        units = root.glob_files(directory, ".mount")
    except FactError as exc:
        problems.append(str(exc))
        units = []
    for path in units:
        try:
            settings = mount_unit_settings(root.read_optional(path, 65536) or "")
        except FactError as exc:
            problems.append(str(exc))
            continue
        where = settings.get("Where", "")
        if not where.startswith("/"):
            continue
        name, point = path.rsplit("/", 1)[1], where.rstrip("/") or "/"
        # A unit here replaces the one systemd-fstab-generator makes for the same mount
        # point, which local-fs.target still requires: it starts when fstab has the line.
        from_fstab = point in mounts and mounts[point].at_boot
        at_boot = name in wanted or from_fstab
        options = tuple(option.strip() for option in split_options(settings.get("Options", ""))
                        if option.strip())
        mounts[point] = BootMount(
            where, options, path, at_boot,
            "" if at_boot else "no target wants this unit (systemctl enable it)")
    return mounts
