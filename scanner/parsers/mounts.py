"""/proc/mounts (also /etc/fstab syntax).

Real sample (RHEL 8, LVM on multipath, a mount point with a space)::

    /dev/mapper/rhel-root / xfs rw,relatime,attr2,inode64,noquota 0 0
    /dev/mapper/sasvg-saswork /sas\\040work xfs rw,noatime,attr2,inode64 0 0

The kernel escapes space, tab, newline and backslash in the device and mount
point as three-digit octal (``\\040``, ``\\011``, ``\\012``, ``\\134``).
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import linear_re as re

_OCTAL = re.compile(r"\\([01][0-7]{2})")
_FIELDS = re.compile(r"[ \t]+")


def unescape(field: str) -> str:
    """Decode the kernel's octal escapes: it writes only ASCII ones (space, tab, newline,
    backslash), so \\001 to \\177 are decoded and anything else (``\\000``, ``\\351``,
    ``\\777``) stays as written. The bash fix's ``unescape`` decodes exactly the same, so
    both find the same mount for a SAS directory."""
    return _OCTAL.sub(lambda match: chr(int(match.group(1), 8)) if match.group(1) != "000"
                      else match.group(0), field)


def mount_point(field: str) -> str:
    """A mount point as sascheck compares it: decoded, without trailing slashes (the kernel
    never writes one; a doctored file may, and the bash fix strips them alike)."""
    return unescape(field).rstrip("/") or "/"


@dataclass(frozen=True)
class MountEntry:
    device: str
    mountpoint: str
    fstype: str
    options: tuple[str, ...]
    line: int

    def has_option(self, option: str) -> bool:
        """Whole-token match: ``atime`` is not found in ``noatime``."""
        return option in self.options

    def option_value(self, name: str) -> str | None:
        for option in reversed(self.options):
            key, sep, value = option.partition("=")
            if sep and key == name:
                return value
        return None


_OPTION = re.compile(r'(?:[^,"]|"[^"]*"?)+')  # an unclosed quote runs to the end


def split_options(field: str) -> tuple[str, ...]:
    """Comma-separated options; a quoted value keeps its commas, as the kernel writes
    SELinux contexts: ``context="system_u:object_r:tmp_t:s0:c127,c456"``."""
    return tuple(match.group(0) for match in _OPTION.finditer(unescape(field)))


def parse_mounts(text: str) -> tuple[list[MountEntry], list[str]]:
    """Entries in file order, and a note per line that could not be understood."""
    entries: list[MountEntry] = []
    problems: list[str] = []
    # Only space, tab, newline and backslash are escaped by the kernel: any other character,
    # \r or \x0b included, may stand raw in a mount point. So lines end at \n only and
    # fields are separated by spaces and tabs only.
    for number, line in enumerate(text.split("\n"), start=1):
        stripped = line.strip(" \t")
        if not stripped or stripped.startswith("#"):
            continue
        if "\0" in stripped:
            problems.append(f"line {number}: binary content")
            continue
        fields = _FIELDS.split(stripped)
        if len(fields) < 4:
            problems.append(f"line {number}: expected at least 4 fields, got {len(fields)}")
            continue
        mountpoint = mount_point(fields[1]) if fields[1].startswith("/") else unescape(fields[1])
        if not mountpoint.startswith("/") and mountpoint not in ("none", "swap"):
            problems.append(f"line {number}: mount point {mountpoint!r} is not absolute")
            continue
        entries.append(MountEntry(unescape(fields[0]), mountpoint, fields[2],
                                  split_options(fields[3]), number))
    return entries, problems


def parse_mountinfo(text: str) -> dict[str, str]:
    """/proc/self/mountinfo (proc(5)): mount point -> the major:minor of its device; the
    last mount on a mount point wins, as in /proc/mounts. Sample (RHEL 8)::

        98 1 253:3 / /saswork rw,noatime shared:55 - xfs /dev/mapper/sasvg-saswork rw,attr2
    """
    found: dict[str, str] = {}
    for line in text.split("\n"):
        fields = line.split(" ")
        if len(fields) >= 10 and re.fullmatch(r"[0-9]+:[0-9]+", fields[2]):
            found[mount_point(fields[4])] = fields[2]
    return found
