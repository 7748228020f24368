"""What sos's plugins record by running commands, as plain data.

``lsblk -O -P`` (sos >= 4.1, block plugin), one line per device and parent, every column
as KEY="value" with odd bytes escaped as \\xNN::

    KNAME="dm-3" NAME="sasvg-saswork" MAJ:MIN="253:3" PKNAME="dm-0" TYPE="lvm" ...

util-linux 2.37+ may spell MAJ:MIN as MAJ_MIN. ``dmsetup info -c`` (devicemapper plugin)::

    Name             Maj Min Stat Open Targ Event  UUID
    sasvg-saswork    253   3 L--w    1    2      0 LVM-gy9uAwD7...

``sysctl -a`` (kernel plugin): ``vm.dirty_ratio = 20``. ``installed-rpms`` (rpm plugin):
``tuned-2.21.0-1.el9_3.noarch   Mon 04 Mar 2024 ...``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_PAIR = re.compile(r'([A-Z0-9:_%.-]+)="((?:[^"\\]|\\.)*)"')
_ESCAPE = re.compile(r"\\x([0-9a-fA-F]{2})")


@dataclass(frozen=True)
class LsblkEntry:
    kname: str
    name: str
    number: str  # major:minor
    kind: str  # lsblk TYPE: disk, part, lvm, mpath, dm, raid0, loop, crypt, ...
    parent: str  # PKNAME; "" for a top-level device
    vendor: str
    model: str
    serial: str


def _unescape(value: str) -> str:
    return _ESCAPE.sub(lambda match: chr(int(match.group(1), 16)), value)


def parse_lsblk_pairs(text: str) -> tuple[list[LsblkEntry], list[str]]:
    """Entries of ``lsblk -O -P`` (or any -P output with KNAME); lines without KNAME are
    reported, not guessed at."""
    entries: list[LsblkEntry] = []
    problems: list[str] = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        fields = {key: _unescape(value) for key, value in _PAIR.findall(line)}
        if not fields.get("KNAME"):
            problems.append(f"line {number}: no KNAME column")
            continue
        entries.append(LsblkEntry(
            kname=fields["KNAME"], name=fields.get("NAME", ""),
            number=fields.get("MAJ:MIN", fields.get("MAJ_MIN", "")),
            kind=fields.get("TYPE", ""), parent=fields.get("PKNAME", ""),
            vendor=fields.get("VENDOR", "").strip(), model=fields.get("MODEL", "").strip(),
            serial=fields.get("SERIAL", "").strip()))
    return entries, problems


@dataclass(frozen=True)
class DmInfo:
    name: str
    number: str  # major:minor
    uuid: str


def parse_dmsetup_info(text: str) -> list[DmInfo]:
    """Rows of ``dmsetup info -c``; the header names the columns, so their order may vary.
    A dm name never holds blanks (dmsetup refuses them), so the row splits on blanks."""
    lines = text.splitlines()
    header = next((i for i, line in enumerate(lines) if line.split()[:1] == ["Name"]), None)
    if header is None:
        return []
    columns = lines[header].split()
    wanted = {"Name", "Maj", "Min"}
    if not wanted <= set(columns):
        return []
    rows: list[DmInfo] = []
    for line in lines[header + 1:]:
        values = line.split()
        if len(values) < len(columns) - ("UUID" in columns):
            continue
        row = dict(zip(columns, values))
        if not (row["Maj"].isdigit() and row["Min"].isdigit()):
            continue
        rows.append(DmInfo(row["Name"], f"{row['Maj']}:{row['Min']}", row.get("UUID", "")))
    return rows


def parse_sysctl_a(text: str) -> dict[str, str]:
    """``key = value`` lines of ``sysctl -a``; other lines (permission errors) skipped."""
    values: dict[str, str] = {}
    for line in text.splitlines():
        key, sep, value = line.partition(" = ")
        if sep and key and " " not in key:
            values[key] = value
    return values


def installed_packages(text: str) -> set[str]:
    """Package names in sos's ``installed-rpms`` (name-version-release.arch, then the date)."""
    names: set[str] = set()
    for line in text.splitlines():
        nvra = line.split()[0] if line.split() else ""
        parts = nvra.rsplit("-", 2)
        if len(parts) == 3 and parts[0]:
            names.add(parts[0])
    return names
