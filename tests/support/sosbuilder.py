"""A sosreport of a test root, laid out as sos 4.x on RHEL records one.

Files are copied where sos's plugins copy them (``add_copy_spec`` at sos's main branch,
fetched 2026-11-23): block (``/sys/block`` links, ``/sys/block/*/queue/``), memory
(``/sys/kernel/mm/transparent_hugepage``), kernel (``/proc/cmdline``, sysctl files,
``/proc/modules``), filesys (``/proc/mounts``, ``/proc/self/mountinfo``, ``/etc/fstab``),
processor and numa (``/proc/cpuinfo``, ``/sys/devices/system``), tuned, systemd, udev,
grub2, grub, services (``/etc/rc.d``, ``/etc/rc.local``), lvm2, multipath, libvirt,
release, hardware (``/sys/class/dmi/id``). Commands are rendered from the root's sysfs in
their tools' formats: ``lsblk -O -P`` (util-linux 2.32, RHEL 8; abridged to the columns a
reader might use), ``dmsetup info -c``, ``sysctl -a``, ``uname -a``, ``hostname``, and
``installed-rpms``. What sos never keeps (``dev``, ``slaves/``, ``dm/``, partitions'
directories, ``mq/``, ``device/wwid``, SAS's configuration) is left out.
"""

from __future__ import annotations

import os
import shutil
import tarfile
from pathlib import Path

COPIED = (
    "/proc/cmdline", "/proc/cpuinfo", "/proc/modules", "/proc/meminfo", "/proc/mounts",
    "/proc/self/mountinfo", "/proc/self/mounts", "/sys/kernel/mm/transparent_hugepage",
    "/sys/kernel/mm/redhat_transparent_hugepage", "/sys/devices/system", "/sys/class/dmi/id",
    "/sys/class/bdi", "/etc/sysctl.conf", "/etc/sysctl.d", "/run/sysctl.d", "/usr/lib/sysctl.d",
    "/lib/sysctl.d", "/etc/fstab", "/etc/tuned", "/usr/lib/tuned", "/etc/tune-profiles",
    "/etc/tuned.conf", "/etc/systemd", "/lib/systemd/system", "/usr/lib/systemd/system",
    "/run/systemd/system", "/etc/tmpfiles.d", "/usr/lib/tmpfiles.d", "/run/tmpfiles.d",
    "/etc/udev/rules.d", "/lib/udev/rules.d", "/usr/lib/udev/rules.d", "/etc/default/grub",
    "/boot/grub2/grub.cfg", "/boot/grub2/grubenv", "/boot/loader/entries", "/boot/grub/grub.conf",
    "/etc/grub.conf", "/boot/efi/EFI", "/etc/rc.d", "/etc/rc.local", "/etc/lvm",
    "/etc/multipath.conf", "/etc/multipath", "/etc/libvirt", "/run/libvirt", "/etc/os-release",
    "/etc/redhat-release", "/etc/hostname", "/etc/modprobe.d",
)
NAME = "sosreport-{host}-2026-11-23-xkqzwpd"


def _copy(source: Path, target: Path) -> None:
    if source.is_symlink():
        target.parent.mkdir(parents=True, exist_ok=True)
        target.symlink_to(os.readlink(source))
    elif source.is_dir():
        shutil.copytree(source, target, symlinks=True, dirs_exist_ok=True)
    elif source.is_file():
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, target)


def _attr(path: Path) -> str:
    return path.read_text().strip() if path.is_file() else ""


def _sysfs_devices(root: Path) -> list[tuple[str, Path, str | None]]:
    """(kernel name, resolved directory, the disk of a partition) for every device."""
    devices: list[tuple[str, Path, str | None]] = []
    block = root / "sys/block"
    for link in sorted(block.iterdir()) if block.is_dir() else []:
        directory = (block / os.readlink(link)).resolve() if link.is_symlink() else link
        devices.append((link.name, directory, None))
        devices.extend((entry.name, entry, link.name) for entry in sorted(directory.iterdir())
                       if (entry / "partition").is_file())
    return devices


def _lsblk_type(name: str, directory: Path, disk: str | None) -> str:
    uuid = _attr(directory / "dm/uuid")
    if disk:
        return "part"
    if uuid.startswith("mpath-"):
        return "mpath"
    if uuid.startswith("LVM-"):
        return "lvm"
    if name.startswith("dm-"):
        return "dm"
    return _attr(directory / "md/level") or "disk" if name.startswith("md") else "disk"


def lsblk_pairs(root: Path) -> str:
    """``lsblk -O -P``: a line per device and parent, as lsblk flattens its tree."""
    mounts = {}
    for line in (root / "proc/mounts").read_text().splitlines():
        fields = line.split()
        mounts[os.path.basename(fields[0])] = fields[1]
    lines = []
    for name, directory, disk in _sysfs_devices(root):
        queue = directory / "queue"
        scheduler = _attr(queue / "scheduler")
        selected = scheduler[scheduler.find("[") + 1:scheduler.find("]")] if "[" in scheduler else ""
        dm_name = _attr(directory / "dm/name")
        parents = [disk] if disk else sorted(p.name for p in (directory / "slaves").iterdir()) \
            if (directory / "slaves").is_dir() else []
        columns = {
            "NAME": dm_name or name, "KNAME": name, "MAJ:MIN": _attr(directory / "dev"),
            "MOUNTPOINT": mounts.get(dm_name or name, ""),
            "RA": _attr(queue / "read_ahead_kb"), "MODEL": _attr(directory / "device/model"),
            "MIN-IO": _attr(queue / "minimum_io_size"), "OPT-IO": _attr(queue / "optimal_io_size"),
            "SCHED": selected, "TYPE": _lsblk_type(name, directory, disk),
            "VENDOR": _attr(directory / "device/vendor"), "SERIAL": _attr(directory / "serial"),
        }
        for parent in parents or [""]:
            pairs = {**columns, "PKNAME": parent}
            lines.append(" ".join(f'{key}="{value}"' for key, value in pairs.items()))
    return "\n".join(lines) + "\n"


def lsblk_tree(root: Path, rhel6: bool = False) -> str:
    """Plain ``lsblk`` as sos 3.x records it (LC_ALL=C: ASCII branches; RHEL 7's columns).
    A device is shown under each of its parents, as lsblk does; ``rhel6`` adds a
    device-mapper device's kernel name in parentheses, as RHEL 6's lsblk does."""
    devices = _sysfs_devices(root)
    children: dict[str, list[tuple[str, Path, str | None]]] = {}
    roots = []
    for device in devices:
        _name, directory, disk = device
        slaves = (sorted(p.name for p in (directory / "slaves").iterdir())
                  if (directory / "slaves").is_dir() else [])
        for parent in ([disk] if disk else slaves):
            children.setdefault(parent, []).append(device)
        if not disk and not slaves:
            roots.append(device)
    mounts = {os.path.basename(line.split()[0]): line.split()[1]
              for line in (root / "proc/mounts").read_text().splitlines()}
    rows = [("NAME", "MAJ:MIN", "RM", "SIZE", "RO", "TYPE", "MOUNTPOINT")]

    def walk(device: tuple[str, Path, str | None], prefix: str, branch: str) -> None:
        name, directory, disk = device
        shown = _attr(directory / "dm/name") or name
        if rhel6 and name.startswith("dm-"):
            shown += f" ({name})"
        rows.append((prefix + branch + shown, _attr(directory / "dev"), "0", "100G", "0",
                     _lsblk_type(name, directory, disk), mounts.get(shown.split()[0], "")))
        below = children.get(name, [])
        deeper = prefix + ("" if not branch else "  " if branch == "`-" else "| ")
        for index, child in enumerate(below):
            walk(child, deeper, "`-" if index == len(below) - 1 else "|-")

    for device in roots:
        walk(device, "", "")
    width = max(len(row[0]) for row in rows)
    return "\n".join(f"{row[0]:<{width}} {row[1]:>7} {row[2]:>2} {row[3]:>5} {row[4]:>2} "
                     f"{row[5]:<5} {row[6]}".rstrip() for row in rows) + "\n"


def multipath_ll(root: Path) -> str:
    """``multipath -ll`` (RHEL 7/8 device-mapper-multipath): each map with its paths' SCSI
    vendor and product, padded as the kernel reports them."""
    lines = []
    devices = {name: directory for name, directory, _disk in _sysfs_devices(root)}
    for name, directory in devices.items():
        uuid = _attr(directory / "dm/uuid")
        if not uuid.startswith("mpath-"):
            continue
        paths = sorted(p.name for p in (directory / "slaves").iterdir())
        first = devices[paths[0]]
        vendor = (first / "device/vendor").read_text().rstrip("\n")
        model = (first / "device/model").read_text().rstrip("\n")
        lines += [f"{_attr(directory / 'dm/name')} ({uuid[len('mpath-'):]}) {name} "
                  f"{vendor},{model}",
                  "size=100G features='0' hwhandler='0' wp=rw",
                  "`-+- policy='service-time 0' prio=1 status=active"]
        lines += [f"  {'|' if i < len(paths) - 1 else '`'}- {i + 1}:0:0:1 {path} "
                  f"{_attr(devices[path] / 'dev')} active ready running"
                  for i, path in enumerate(paths)]
    return "\n".join(lines) + "\n"


def dmsetup_info(root: Path) -> str:
    rows = ["Name             Maj Min Stat Open Targ Event  UUID"]
    for name, directory, _disk in _sysfs_devices(root):
        if name.startswith("dm-"):
            major, minor = _attr(directory / "dev").split(":")
            rows.append(f"{_attr(directory / 'dm/name'):<16} {major:>3} {minor:>3} L--w    1    1"
                        f"      0 {_attr(directory / 'dm/uuid')}")
    return "\n".join(rows) + "\n"


def sysctl_a(root: Path) -> str:
    base = root / "proc/sys"
    lines = []
    for path in sorted(base.rglob("*")) if base.is_dir() else []:
        if path.is_file():
            key = ".".join(path.relative_to(base).parts)
            lines.append(f"{key} = {path.read_text().strip()}")
    return "\n".join(lines) + "\n"


def sosreport_tree(root: Path, destination: Path, lsblk: bool = True, tree: bool = True,
                   dmsetup: bool = True, rhel6: bool = False, tuned: str = "2.21.0") -> Path:
    """The unpacked sosreport of ``root`` under ``destination``; its top directory.
    ``lsblk``: sos 4.1+'s ``lsblk -O -P``; ``tree``: the plain ``lsblk`` every sos runs;
    ``tuned``: the release installed-rpms lists where tuned is installed."""
    host = _attr(root / "proc/sys/kernel/hostname") or _attr(root / "etc/hostname") or "host"
    top = destination / NAME.format(host=host)
    for path in COPIED:
        _copy(root / path.lstrip("/"), top / path.lstrip("/"))
    for name, directory, disk in _sysfs_devices(root):
        if disk:
            continue
        link = root / "sys/block" / name
        _copy(link, top / "sys/block" / name)
        sysfs = directory.relative_to(root)
        _copy(directory / "queue", top / sysfs / "queue")
    commands = top / "sos_commands"
    outputs = {"kernel/sysctl_-a": sysctl_a(root),
               "kernel/uname_-a": f"Linux {host} {_attr(root / 'proc/sys/kernel/osrelease')} "
                                  "#1 SMP Tue Nov 7 14:54:22 EST 2023 x86_64 GNU/Linux\n",
               "host/hostname": host + "\n"}
    if lsblk:
        outputs["block/lsblk_-O_-P"] = lsblk_pairs(root)
    if tree:
        outputs["block/lsblk"] = lsblk_tree(root, rhel6)
    if dmsetup:
        outputs["devicemapper/dmsetup_info_-c"] = dmsetup_info(root)
    outputs["multipath/multipath_-ll"] = multipath_ll(root)
    for name, text in outputs.items():
        (commands / name).parent.mkdir(parents=True, exist_ok=True)
        (commands / name).write_text(text)
    (top / "hostname").symlink_to("sos_commands/host/hostname")
    (top / "uname").symlink_to("sos_commands/kernel/uname_-a")
    rpms = ["kernel-4.18.0-513.el8.x86_64                       Tue 05 Dec 2023 10:12:01 AM EST"]
    if (root / "usr/sbin/tuned").exists():
        rpms.append(f"tuned-{tuned}-1.el8_9.noarch                        "
                    "Tue 05 Dec 2023 10:12:44 AM EST")
        (commands / "tuned").mkdir()
        (commands / "tuned/tuned-adm_active").write_text(
            f"Current active profile: {_attr(root / 'etc/tuned/active_profile')}\n")
    (top / "installed-rpms").write_text("\n".join(rpms) + "\n")
    (top / "version.txt").write_text("sosreport: 4.6.0\n")
    return top


def sosreport_archive(root: Path, destination: Path, **options: bool | str) -> Path:
    """The same as sos delivers it: a tar.xz of the top directory."""
    top = sosreport_tree(root, destination / "unpacked", **options)
    archive = destination / f"{top.name}.tar.xz"
    with tarfile.open(archive, "w:xz") as tar:
        tar.add(top, arcname=top.name)
    return archive
