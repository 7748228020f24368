"""Scan a sosreport as support engineers receive it: a tar archive or an unpacked directory.

sos keeps many files at their real paths (``proc/mounts``, ``proc/cmdline``, ``etc/...``,
``sys/block/*/queue/``, ``sys/kernel/mm/transparent_hugepage/``), so they are copied into a
private root and scanned like any other. It does not keep what sysfs says of the storage
stack (``dev``, ``slaves/``, ``dm/``, partitions), /proc/sys or programs, so those are
rebuilt from what its plugins ran, each said in the results' ``source.notes``:

- block plugin ``lsblk -O -P`` (sos 4.1+), else its plain ``lsblk`` tree: devices,
  partitions, parents, numbers;
- devicemapper plugin ``dmsetup info -c``: device-mapper UUIDs (mpath-, LVM-);
- kernel plugin ``sysctl -a``: /proc/sys/kernel and /proc/sys/vm;
- rpm plugin ``installed-rpms``: whether tuned is installed, and its release (written as
  the ``tuned/version.py`` the package would hold, which decides what that tuned honours).

Nothing of the sosreport is changed; the copy is removed afterwards. A rule that errs
because the sosreport lacks a file it reads is ``notchecked``, naming the file.
"""

from __future__ import annotations

import os
import posixpath
import tarfile
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace

from ...rules.errors import UserInputError
from ...rules.host_layout import (
    DMSETUP_STATUS,
    DMSETUP_TABLE,
    MULTIPATH_CONFIG_DUMP,
    TUNED02_PROFILES,
    TUNED_BINARIES,
    TUNED_VERSION_DIRS,
    TUNED_VERSION_PARENT,
)
from .. import linear_re as re
from ..parsers.sos_commands import (
    LsblkEntry,
    installed_versions,
    parse_dmsetup_info,
    parse_lsblk_pairs,
    parse_lsblk_tree,
    parse_multipath_ll,
    parse_sysctl_a,
)
from ..results import RuleResult, Verdict
from .hostroot import FactError, HostRoot, mark_partial_root
from .snapshot import SnapshotError, add_link, extract_members, make_directories
from .tree_copy import copy_tree
from .tree_remove import remove_tree

LSBLK = "/sos_commands/block/lsblk_-O_-P"
LSBLK_TREE = "/sos_commands/block/lsblk"
DMSETUP = "/sos_commands/devicemapper/dmsetup_info_-c"
# The devicemapper plugin's "dmsetup table" and "dmsetup status" (all targets: the parser
# keeps the multipath lines).
DMSETUP_TABLES = {"/sos_commands/devicemapper/dmsetup_table": DMSETUP_TABLE,
                  "/sos_commands/devicemapper/dmsetup_status": DMSETUP_STATUS}
# The multipath plugin's "multipath -t" (sos 3.7 on): the installed build's own table.
MULTIPATH_T = "/sos_commands/multipath/multipath_-t"
SYSCTL = "/sos_commands/kernel/sysctl_-a"
RPMS = "/installed-rpms"
TUNED_PLUGIN = "/sos_commands/tuned"
MULTIPATH_LL = "/sos_commands/multipath/multipath_-ll"
HOSTNAME = "/hostname"  # the host plugin's `hostname` output, linked at the top
UNAME = "/uname"
# Only what a scan reads, or what rebuilds it, is copied: logs and the journal can be GBs.
_KEPT_COMMANDS = ("block", "devicemapper", "kernel", "tuned", "host", "multipath")
_SKIPPED = re.compile(
    r"(var/log|var/cache|var/spool|usr/share|sos_logs|sos_reports|sos_strings)(/|$)")
_SYSCTL_KEPT = ("kernel.", "vm.")
_SYSCTL_PART = re.compile(r"[A-Za-z0-9_-]+")
# A kernel device name as lsblk prints it; anything else is not made into a path.
_KNAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.:+-]{0,63}")
_TRAILING_NUMBER = re.compile(r"(\d+)$")
_COLLECTED = ("/proc/", "/sys/", "/etc/", "/dev/", "/boot/", "/usr/", "/lib/", "/run/",
              "/var/run/")
_PATH_IN_TEXT = re.compile(r"(/(?:[A-Za-z0-9_.@:+-]+/?)+)")


class SosreportError(UserInputError):
    """A sosreport that cannot be used, with the reason; nothing is left behind."""


@dataclass
class Sosreport:
    path: str  # as the user named it
    root: str  # the private copy the scan reads
    notes: list[str] = field(default_factory=list)  # what was rebuilt, and from what
    gaps: list[str] = field(default_factory=list)  # what sos did not record
    stack_unknown: bool = False  # no lsblk listing at all

    def source(self) -> dict[str, object]:
        return {"kind": "sosreport", "path": self.path, "notes": list(self.notes)}

    def reframe(self, result: RuleResult) -> RuleResult:
        """An error caused by a file the sosreport lacks becomes notchecked, naming it."""
        if result.result is not Verdict.ERROR:
            return result
        texts = [result.message, *(f"{e.source} {e.note}" for e in result.evidence)]
        root = HostRoot(self.root)
        # Only where sos collects: a SAS mount point named in the message is no gap.
        mentioned = {path.rstrip("/:.,") for text in texts
                     for path in _PATH_IN_TEXT.findall(text) if path.startswith(_COLLECTED)}
        missing = sorted(path for path in mentioned if not _present(root, path))
        if not missing:
            return result
        why = f"not in the sosreport: {', '.join(missing[:4])} (sos did not record it)"
        if self.stack_unknown and any(p.startswith(("/dev/", "/sys/block/")) for p in missing):
            why += "; lsblk's listings are missing too, so the device stack is unknown"
        return replace(result, result=Verdict.NOTCHECKED, message=why,
                       actual=result.actual or "not recorded")


def _present(root: HostRoot, path: str) -> bool:
    try:
        return os.path.lexists(root.host_path(root.resolve(path)))
    except FactError:
        return True  # a link loop is the sosreport's own problem, not a gap


@contextmanager
def opened(path: str) -> Iterator[Sosreport]:
    """The sosreport at ``path`` copied into a private root and rebuilt; removed after."""
    destination = tempfile.mkdtemp(prefix="sascheck-sosreport-")
    try:
        root = os.path.join(destination, "root")
        try:
            materialize(path, root)
        except SnapshotError as exc:
            raise SosreportError(str(exc)) from exc
        report = Sosreport(path=path, root=root)
        mark_partial_root(root)
        rebuild(report)
        yield report
    finally:
        remove_tree(destination)


def _place(relative: str) -> str | None:
    relative = relative.strip("/")
    if not relative or _SKIPPED.match(relative):
        return None
    parts = relative.split("/", 2)
    if parts[0] == "sos_commands" and len(parts) > 1 and parts[1] not in _KEPT_COMMANDS:
        return None
    return "/" + relative


def materialize(path: str, root: str) -> None:
    """Copy the parts of the sosreport a scan reads into ``root`` (which must not exist)."""
    if os.path.isdir(path):
        top = _sos_top(path)
        copy_tree(top, root, _place)
    elif os.path.isfile(path):
        tops: set[str] = set()

        def place(_archive: tarfile.TarFile, member: tarfile.TarInfo) -> str | None:
            parts = member.name.strip("/").split("/", 1)
            if parts[0] in ("", ".", "..") or member.name.startswith("/"):
                raise SnapshotError(f"member {member.name!r}: not under one sosreport "
                                    "directory")
            tops.add(parts[0])
            if len(tops) > 1:
                raise SnapshotError(f"{path}: more than one top directory "
                                    f"({', '.join(sorted(tops))}); not a sosreport")
            if ".." in parts[-1].split("/"):
                raise SnapshotError(f"member {member.name!r}: climbs out with '..'")
            return _place(parts[1]) if len(parts) > 1 else None

        extract_members(path, root, place)
    else:
        raise SosreportError(f"{path}: no such file or directory")
    if not os.path.isdir(os.path.join(root, "sos_commands")):
        remove_tree(os.path.dirname(root))
        raise SosreportError(f"{path}: not a sosreport (no sos_commands/ directory)")


def _sos_top(path: str) -> str:
    """The directory holding sos_commands/: ``path`` or its only sosreport-* entry."""
    if os.path.isdir(os.path.join(path, "sos_commands")):
        return path
    inner = [e for e in os.listdir(path) if e.startswith("sosreport")
             and os.path.isdir(os.path.join(path, e, "sos_commands"))]
    if len(inner) == 1:
        return os.path.join(path, inner[0])
    raise SosreportError(f"{path}: not a sosreport (no sos_commands/ directory)")


# -- rebuilding what sos does not keep ------------------------------------------------------
class _Writer:
    """Adds files to the private root: never through a link, never over what sos kept."""

    def __init__(self, root: str) -> None:
        self.host = HostRoot(root)

    def text(self, path: str) -> str | None:
        try:
            return self.host.read_optional(path, 16 * 1024 * 1024)
        except FactError:
            return None

    def resolved(self, path: str) -> str:
        return self.host.resolve(path)

    def exists(self, path: str) -> bool:
        return _present(self.host, path)

    def directory(self, path: str) -> str:
        resolved = self.host.resolve(path)
        make_directories(self.host.root, resolved)
        return resolved

    def put(self, path: str, content: str) -> bool:
        resolved = self.host.resolve(path)
        if os.path.lexists(self.host.host_path(resolved)):
            return False
        make_directories(self.host.root, posixpath.dirname(resolved))
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
        with os.fdopen(os.open(self.host.host_path(resolved), flags, 0o644), "w") as handle:
            handle.write(content)
        return True

    def link(self, path: str, target_path: str) -> None:
        """A link at ``path`` to the in-root ``target_path``, relative as sysfs makes them."""
        resolved = posixpath.join(self.directory(posixpath.dirname(path)),
                                  posixpath.basename(path))
        if os.path.lexists(self.host.host_path(resolved)):
            return
        target = posixpath.relpath(self.host.resolve(target_path), posixpath.dirname(resolved))
        add_link(self.host.root, resolved, target)


def rebuild(report: Sosreport) -> None:
    writer = _Writer(report.root)
    try:
        _rebuild_block(writer, report)
        _rebuild_proc_sys(writer, report)
        _rebuild_programs(writer, report)
    except (FactError, SnapshotError, OSError) as exc:
        raise SosreportError(f"{report.path}: cannot rebuild its facts: {exc}") from exc
    # sos has no plugin for SAS: its configuration chain, and what it names, is never there.
    report.gaps.append("SAS's configuration files are not in sosreports: name the SAS "
                       "directories with --set sas_data_dirs=, sas_work_dirs=, "
                       "sas_utilloc_dirs= and BUFSIZE with sas_bufsize_bytes=")
    if writer.exists(TUNED02_PROFILES):
        report.gaps.append("tuned 0.2's ktune files (/etc/sysconfig/ktune, /etc/ktune.d) are "
                           "not in sosreports: verdicts that depend on ktune assume none")


def _rebuild_block(writer: _Writer, report: Sosreport) -> None:
    text, source = writer.text(LSBLK), LSBLK
    if text is not None:
        entries, problems = parse_lsblk_pairs(text)
    else:  # sos before 4.1: only the tree, without vendor and model
        text, source = writer.text(LSBLK_TREE), LSBLK_TREE
        if text is None:
            report.stack_unknown = True
            report.gaps.append(f"{LSBLK} and {LSBLK_TREE} are missing: partitions and the "
                               "devices below a device-mapper or md volume are unknown; whole "
                               "disks are judged from /sys/block")
            return
        entries, problems = parse_lsblk_tree(text)
    report.gaps.extend(f"{source}: {problem}" for problem in problems)
    dm_uuids: dict[str, str] = {}
    dmsetup = writer.text(DMSETUP)
    if dmsetup is not None:
        dm_uuids = {info.number: info.uuid for info in parse_dmsetup_info(dmsetup)}
    devices: dict[str, LsblkEntry] = {}
    parents: dict[str, list[str]] = {}
    for entry in entries:
        names = [entry.kname, *([entry.parent] if entry.parent else [])]
        if not all(_KNAME.fullmatch(name) for name in names):  # no ".", "..", "/"
            report.gaps.append(f"{source}: device name {entry.kname!r} refused")
            continue
        devices.setdefault(entry.kname, entry)
        if entry.parent and entry.parent not in parents.setdefault(entry.kname, []):
            parents[entry.kname].append(entry.parent)
    sysfs = {kname: _device_dir(writer, entry, devices) for kname, entry in devices.items()}
    for kname, entry in devices.items():
        base = sysfs[kname]
        writer.put(f"{base}/dev", f"{entry.number}\n")
        if entry.kind == "part":
            number = _TRAILING_NUMBER.search(kname)
            writer.put(f"{base}/partition", f"{number.group(1) if number else 1}\n")
            continue
        if kname.startswith("dm-"):
            writer.put(f"{base}/dm/name", f"{entry.name}\n")
            if entry.number in dm_uuids:
                writer.put(f"{base}/dm/uuid", f"{dm_uuids[entry.number]}\n")
        if entry.kind == "disk":
            if entry.vendor:
                writer.put(f"{base}/device/vendor", f"{entry.vendor}\n")
            if entry.model:
                writer.put(f"{base}/device/model", f"{entry.model}\n")
            if entry.serial and kname.startswith("vd"):  # virtio-blk's sysfs serial
                writer.put(f"{base}/serial", f"{entry.serial}\n")
        writer.directory(f"{base}/slaves")
        for parent in parents.get(kname, []):
            if parent in sysfs:
                writer.link(f"{base}/slaves/{parent}", sysfs[parent])
    report.notes.append(f"devices, partitions and their parents from {source}")
    _path_identities(writer, report, sysfs)
    for command, kept_as in DMSETUP_TABLES.items():
        if (output := writer.text(command)) is not None:
            writer.put(kept_as, output)
            report.notes.append(f"the kernel's multipath groups from {command}")
    if (output := writer.text(MULTIPATH_T)) is not None:
        writer.put(MULTIPATH_CONFIG_DUMP, output)
        report.notes.append(f"multipath-tools' built-in hardware table from {MULTIPATH_T}")
    if any(k.startswith("dm-") for k in devices):
        if dmsetup is not None:
            report.notes.append(f"device-mapper UUIDs from {DMSETUP}")
        else:
            report.gaps.append(f"{DMSETUP} is missing: without device-mapper UUIDs, "
                               "multipath maps and LVM volumes are not told apart")


def _path_identities(writer: _Writer, report: Sosreport, sysfs: dict[str, str]) -> None:
    """The SCSI vendor and product of multipath paths (what multipath.conf's device
    sections match), from ``multipath -ll`` where lsblk did not give them."""
    text = writer.text(MULTIPATH_LL)
    if text is None:
        return
    written = False
    for vendor, product, paths in parse_multipath_ll(text).values():
        for path in paths:
            if path in sysfs:  # a name lsblk gave, already checked
                written |= writer.put(f"{sysfs[path]}/device/vendor", f"{vendor}\n")
                written |= writer.put(f"{sysfs[path]}/device/model", f"{product}\n")
    if written:
        report.notes.append(f"the vendor and product of multipath paths from {MULTIPATH_LL}")


def _device_dir(writer: _Writer, entry: LsblkEntry, devices: dict[str, LsblkEntry]) -> str:
    """Where the device lives: /sys/block/NAME (sos kept its queue/ there, through the
    kernel's link), or for a partition its disk's directory."""
    if entry.kind == "part" and entry.parent in devices:
        disk = writer.resolved(f"/sys/block/{entry.parent}")
        return writer.directory(f"{disk}/{entry.kname}")
    return writer.directory(f"/sys/block/{entry.kname}")


def _rebuild_proc_sys(writer: _Writer, report: Sosreport) -> None:
    text = writer.text(SYSCTL)
    if text is not None:
        written = 0
        for key, value in parse_sysctl_a(text).items():
            parts = key.split(".")
            if key.startswith(_SYSCTL_KEPT) and all(_SYSCTL_PART.fullmatch(p) for p in parts):
                written += writer.put("/proc/sys/" + "/".join(parts), value + "\n")
        if written:
            report.notes.append(f"/proc/sys/kernel and /proc/sys/vm from {SYSCTL}")
    else:
        report.gaps.append(f"{SYSCTL} is missing: kernel settings in /proc/sys are unknown")
    hostname = (writer.text(HOSTNAME) or "").strip()
    if hostname and writer.put("/proc/sys/kernel/hostname", hostname.splitlines()[0] + "\n"):
        report.notes.append(f"host name from {HOSTNAME}")
    uname = (writer.text(UNAME) or "").split()
    if len(uname) > 2 and writer.put("/proc/sys/kernel/osrelease", uname[2] + "\n"):
        report.notes.append(f"kernel release from {UNAME}")


# tuned 2's release as its package's tuned/version.py says it (tuned 0.2 has none).
_TUNED2_RELEASE = re.compile(r"([2-9]|[1-9][0-9]{1,3})\.([0-9]{1,4})\.([0-9]{1,4})")
_TUNED_VERSION_PY = f"{TUNED_VERSION_PARENT}/python3/{TUNED_VERSION_DIRS[0]}/tuned/version.py"


def _rebuild_programs(writer: _Writer, report: Sosreport) -> None:
    rpms = writer.text(RPMS)
    packages = installed_versions(rpms) if rpms is not None else {}
    if "tuned" in packages or writer.exists(TUNED_PLUGIN):
        source = RPMS if "tuned" in packages else f"{TUNED_PLUGIN}/ (sos runs it for tuned)"
        if any([writer.put(binary, "") for binary in TUNED_BINARIES]):
            report.notes.append(f"tuned installed: from {source}")
    release = _TUNED2_RELEASE.fullmatch(packages.get("tuned", ""))
    if release and writer.put(_TUNED_VERSION_PY, "".join(
            f"TUNED_VERSION_{part} = {int(number)}\n"
            for part, number in zip(("MAJOR", "MINOR", "PATCH"), release.groups()))):
        report.notes.append(f"tuned {release.group(0)}: from {RPMS}")
