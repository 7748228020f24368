"""What sos's plugins record by running commands, as plain data.

``lsblk -O -P`` (sos >= 4.1, block plugin), one line per device and parent, every column
as KEY="value" with odd bytes escaped as \\xNN::

    KNAME="dm-3" NAME="sasvg-saswork" MAJ:MIN="253:3" PKNAME="dm-0" TYPE="lvm" ...

util-linux 2.37+ may spell MAJ:MIN as MAJ_MIN. Plain ``lsblk`` (block plugin, every sos
release), a tree whose branches are ASCII under LC_ALL=C (sos 3.x) or box-drawing under
C.UTF-8; RHEL 6's lsblk adds the kernel name of a device-mapper device (insights-core's
``LSBlock`` samples)::

    NAME                      MAJ:MIN RM  SIZE RO TYPE  MOUNTPOINT
    sdb                         8:16   0  500G  0 disk
    `-mpatha                  253:0    0  500G  0 mpath
      `-sasvg-saswork (dm-3)  253:3    0  250G  0 lvm   /saswork

``dmsetup info -c`` (devicemapper plugin)::

    Name             Maj Min Stat Open Targ Event  UUID
    sasvg-saswork    253   3 L--w    1    2      0 LVM-gy9uAwD7...

``sysctl -a`` (kernel plugin): ``vm.dirty_ratio = 20``. ``installed-rpms`` (rpm plugin):
``tuned-2.21.0-1.el9_3.noarch   Mon 04 Mar 2024 ...``.
"""

from __future__ import annotations

from dataclasses import dataclass

from .. import linear_re as re

_PAIR = re.compile(r'([A-Z0-9:_%.-]+)="((?:[^"\\]|\\.)*)"')
_ESCAPE = re.compile(r"\\x([0-9a-fA-F]{2})")
MAX_PAIRS_LINE = 4096  # lsblk -P rows as sos records them are a few hundred characters


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
        if len(line) > MAX_PAIRS_LINE:  # _PAIR is quadratic in a long run of name letters
            problems.append(f"line {number}: longer than {MAX_PAIRS_LINE} characters")
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


_TREE_BRANCH = " \t|`\u251c\u2514\u2500\u2502-"
_TREE_COLUMNS = re.compile(r"\s(?P<number>\d+:\d+)\s+\d+\s+\S+\s+\d+\s+(?P<kind>[a-z0-9]+)\b")
MAX_TREE_LINE = 4096
_DM_KERNEL_NAME = re.compile(r"(.*\S)\s+\((dm-\d+)\)$")
# lsblk TYPEs of device-mapper devices: their kernel name is dm-<minor>.
DM_TYPES = frozenset({"lvm", "mpath", "dm", "crypt"})


def _tree_row(line: str) -> tuple[str, str, str, str] | None:
    """(branch, name, MAJ:MIN, TYPE) of one row, or None. The branch drawing is cut by a
    plain scan and the columns found by one left-to-right search: a single regular
    expression over both backtracks quadratically on a long run of "|-"."""
    if len(line) > MAX_TREE_LINE:
        return None
    rest = line.lstrip(_TREE_BRANCH)
    branch = line[:len(line) - len(rest)]
    columns = _TREE_COLUMNS.search(rest)
    if columns is None or not rest[:columns.start()].strip():
        return None
    return branch, rest[:columns.start()].strip(), columns["number"], columns["kind"]


def parse_lsblk_tree(text: str) -> tuple[list[LsblkEntry], list[str]]:
    """Entries of plain ``lsblk``: each row's parent is the row above it one branch level
    up. A device-mapper device shows its dm name; its kernel name is dm-<minor> (or given
    in parentheses by RHEL 6's lsblk)."""
    entries: list[LsblkEntry] = []
    problems: list[str] = []
    ancestry: list[str] = []
    for number, line in enumerate(text.splitlines(), 1):
        if number == 1 or not line.strip():
            continue  # the heading
        row = _tree_row(line)
        if row is None:
            problems.append(f"line {number}: not an lsblk row")
            continue
        branch, name, device_number, kind = row
        depth = len(branch) // 2
        given = _DM_KERNEL_NAME.match(name)
        del ancestry[depth:]
        parent = ancestry[-1] if ancestry else ""
        if given:
            name, kname = given.group(1), given.group(2)
        elif kind in DM_TYPES or (kind == "part" and parent.startswith("dm-")):  # kpartx
            kname = f"dm-{device_number.split(':')[1]}"
        else:
            kname = name
        ancestry.append(kname)
        entries.append(LsblkEntry(kname=kname, name=name, number=device_number, kind=kind,
                                  parent=parent, vendor="", model="", serial=""))
    return entries, problems


_MAP_HEAD = re.compile(r"^(?:\S+ \(\S+\)|\S+) (dm-\d+) ([^,]*),(.*)$")
_MAP_PATH = re.compile(r"[\s|`+-]\d+:\d+:\d+:\d+ (\S+) \d+:\d+ ")


def parse_multipath_ll(text: str) -> dict[str, tuple[str, str, list[str]]]:
    """``multipath -ll`` (multipath plugin): map kernel name -> (vendor, product, paths)::

        mpatha (3600508b400105e210000900000490000) dm-1 XtremIO ,XtremApp
        size=100G features='0' hwhandler='0' wp=rw
        `-+- policy='queue-length 0' prio=1 status=active
          |- 1:0:0:1 sdb 8:16 active ready running
    """
    maps: dict[str, tuple[str, str, list[str]]] = {}
    current: list[str] | None = None
    for line in text.splitlines():
        head = _MAP_HEAD.match(line)
        if head:
            current = []
            maps[head.group(1)] = (head.group(2).strip(), head.group(3).strip(), current)
            continue
        path = _MAP_PATH.search(line)
        if path and current is not None:
            current.append(path.group(1))
    return maps


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
        if not all(row[k].isascii() and row[k].isdigit() for k in ("Maj", "Min")):
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


def installed_versions(text: str) -> dict[str, str]:
    """Package name -> version in sos's ``installed-rpms`` (name-version-release.arch, then
    the date)."""
    versions: dict[str, str] = {}
    for line in text.splitlines():
        nvra = line.split()[0] if line.split() else ""
        parts = nvra.rsplit("-", 2)
        if len(parts) == 3 and parts[0]:
            versions[parts[0]] = parts[1]
    return versions
