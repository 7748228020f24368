"""What the next boot starts (issue 50). Under systemd, a unit enabled in a target's
``.wants`` starts only when the boot target pulls that target in: a RHEL server boots
multi-user.target, and graphical.target requires multi-user.target, not the reverse, so a
unit enabled only in graphical.target.wants never starts on it. Under SysV init (RHEL 5 and
6), an ``S<NN>name`` link starts its service only in the run level the boot enters."""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from dataclasses import dataclass

from ...rules.host_layout import (
    DEFAULT_TARGET_LINKS,
    INITTAB,
    SYSTEMD_UNIT_DIRS,
    SYSTEMD_WANTS_DIRS,
    SYSV_RUNLEVEL_DIRS,
)
from ..sources.hostroot import FactError, HostRoot
from .dropins import merged
from .services import sysv_start_links

# What each target pulls in (Requires= or Wants=) among the targets whose .wants sascheck
# reads, as systemd ships them (units/*.target; the same from systemd 219, RHEL 7, to 257):
# graphical Requires=multi-user, multi-user Requires=basic, basic Requires=sysinit and
# Wants=sockets.target, rescue Requires=sysinit. Used where the host has no file of its own.
TARGET_PULLS = {"graphical.target": ("multi-user.target",),
                "multi-user.target": ("basic.target",),
                "basic.target": ("sysinit.target", "sockets.target"),
                "rescue.target": ("sysinit.target",)}
# systemd's kernel-command-line words for a target (systemd(1)): rescue mode, emergency
# mode, and the SysV run levels, whose runlevelN.target links name multi-user (2 to 4) and
# graphical (5).
_WORD_TARGETS = {**dict.fromkeys(("1", "s", "S", "single", "rescue"), "rescue.target"),
                 **dict.fromkeys(("emergency", "-b"), "emergency.target"),
                 **dict.fromkeys(("2", "3", "4"), "multi-user.target"), "5": "graphical.target"}
# SysV init's words on the kernel line (init(8) of RHEL 5/6's upstart and sysvinit): a run
# level, or single-user mode.
_WORD_RUNLEVELS = {**dict.fromkeys(("1", "s", "S", "single"), "1"),
                   **{level: level for level in "2345"}}
# The dependencies that pull a unit in at start (systemd.unit(5)); Requisite= and
# PartOf= do not start anything.
_PULLING = ("Wants", "Requires", "BindsTo", "Upholds")
_UNIT_LIMIT = 256 * 1024


def default_target(root: HostRoot) -> str:
    """The unit default.target names (/etc first, then the package's), or ""."""
    for link in DEFAULT_TARGET_LINKS:
        try:
            if root.is_symlink(link) or root.exists(link):
                name = posixpath.basename(root.resolve(link))
                return "" if name == "default.target" else name  # a file, not a link
        except FactError:
            return ""
    return ""


def boot_target(root: HostRoot, kernel_args: Sequence[str] = ()) -> tuple[str, str]:
    """(target, where it was named): systemd.unit= on the kernel line, else default.target;
    ("", "") where neither says."""
    for arg in reversed(kernel_args):
        name, separator, value = arg.partition("=")
        if name == "systemd.unit" and value:
            return value, "systemd.unit= on the kernel line"
        if not separator and arg in _WORD_TARGETS:
            return _WORD_TARGETS[arg], f"'{arg}' on the kernel line"
    target = default_target(root)
    return (target, "default.target") if target else ("", "")


def _unit_pulls(text: str) -> list[str] | None:
    """The units a unit file's [Unit] section pulls in, or None where it sets none (an
    empty assignment resets the list, as systemd's config parser does)."""
    pulls: list[str] | None = None
    section = ""
    for line in text.replace("\\\n", " ").splitlines():
        line = line.strip()
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1]
            continue
        key, separator, value = line.partition("=")
        if section != "Unit" or not separator or key.strip() not in _PULLING:
            continue
        pulls = [] if not value.strip() else [*(pulls or []), *value.split()]
    return pulls


def target_pulls(root: HostRoot, target: str, problems: list[str] | None = None
                 ) -> tuple[str, ...]:
    """The targets ``target`` pulls in, as this host's systemd reads it: its unit file (the
    first of /etc, /run, /usr/lib, /lib) and drop-ins, and target links in its ``.wants``
    and ``.requires``; systemd's shipped dependencies where the host has no file for it."""
    notes = problems if problems is not None else []
    found = list(TARGET_PULLS.get(target, ()))  # no file of its own (a snapshot has none)
    for directory in SYSTEMD_UNIT_DIRS:
        try:
            text = root.read_optional(f"{directory}/{target}", _UNIT_LIMIT)
        except FactError as exc:
            notes.append(str(exc))
            continue
        if text is not None:
            found = _unit_pulls(text) or []
            break
    # Drop-ins add to the unit file (or to the shipped dependencies) in name order.
    dropins = merged(root, tuple(f"{d}/{target}.d" for d in SYSTEMD_UNIT_DIRS), ".conf", notes)
    for name in sorted(dropins):
        try:
            pulls = _unit_pulls(root.read_optional(dropins[name], _UNIT_LIMIT) or "")
        except FactError as exc:
            notes.append(str(exc))
            continue
        if pulls is not None:
            found = pulls if not pulls else [*found, *pulls]
    links = merged(root, tuple(f"{d}/{target}.{kind}" for d in SYSTEMD_UNIT_DIRS
                               for kind in ("wants", "requires")), ".target", notes)
    return tuple(dict.fromkeys(name for name in (*found, *sorted(links))
                               if name.endswith(".target")))


def reached(target: str, root: HostRoot | None = None,
            problems: list[str] | None = None) -> set[str]:
    """The targets a boot to ``target`` reaches (systemd's shipped graph without a root)."""
    found, pending = set(), [target]
    while pending:
        name = pending.pop()
        if name not in found:
            found.add(name)
            pending.extend(target_pulls(root, name, problems) if root is not None
                           else TARGET_PULLS.get(name, ()))
    return found


def boot_wants_dirs(root: HostRoot, kernel_args: Sequence[str] = (),
                    problems: list[str] | None = None) -> tuple[str, ...]:
    """The /etc .wants and .requires directories whose units start at the next boot: those
    of the targets the boot target reaches (a site's own targets too); every shipped one
    where the boot target cannot be told."""
    target, _ = boot_target(root, kernel_args)
    return _wants_dirs(reached(target, root, problems)) if target else SYSTEMD_WANTS_DIRS


def _wants_dirs(targets: set[str]) -> tuple[str, ...]:
    shipped = [directory for directory in SYSTEMD_WANTS_DIRS
               if posixpath.basename(directory).removesuffix(".wants") in targets]
    own = [f"/etc/systemd/system/{name}.{kind}" for name in sorted(targets)
           for kind in ("wants", "requires")]
    return tuple(dict.fromkeys([*shipped, *own]))


def boot_runlevel(root: HostRoot, kernel_args: Sequence[str] = ()) -> tuple[str, str]:
    """(run level, where it was named) of a SysV boot: a run-level word on the kernel line,
    else /etc/inittab's initdefault; ("", "") where neither says (init then asks)."""
    for arg in reversed(kernel_args):
        if arg in _WORD_RUNLEVELS:
            return _WORD_RUNLEVELS[arg], f"'{arg}' on the kernel line"
    try:
        text = root.read_optional(INITTAB, 64 * 1024) or ""
    except FactError:
        return "", ""
    for line in text.splitlines():
        # As RHEL 6's upstart reads it (/etc/init/rcS.conf: awk -F ':' '$3 == "initdefault"
        # && $1 !~ "^#" { print $2 }'); RHEL 5's sysvinit reads the same id:level:action.
        fields = line.split(":")
        if len(fields) >= 3 and fields[2] == "initdefault" and not fields[0].startswith("#"):
            level = _WORD_RUNLEVELS.get(fields[1], "")
            return (level, f"{INITTAB} initdefault") if level else ("", "")
    return "", ""


def runlevel_dirs(level: str) -> tuple[str, ...]:
    """The directories whose S links a run level starts (RHEL's /etc/rc.d/rcN.d, and the
    /etc/rcN.d links to them)."""
    return (f"/etc/rc.d/rc{level}.d", f"/etc/rc{level}.d")


@dataclass(frozen=True)
class BootStarts:
    """Where the next boot starts services from: the .wants directories of the targets it
    reaches (systemd), the run level's rc directories (SysV), and whether rc.local runs."""
    wants_dirs: tuple[str, ...] = SYSTEMD_WANTS_DIRS
    rc_dirs: tuple[str, ...] = SYSV_RUNLEVEL_DIRS
    boot: str = ""  # "multi-user.target (default.target)", "run level 3 (/etc/inittab ...)"
    rc_local_skipped: str = ""  # why rc.local does not run at that boot, or ""


def boot_starts(root: HostRoot, kernel_args: Sequence[str] = (),
                problems: list[str] | None = None) -> BootStarts:
    """What the next boot starts, as its init reads the host: systemd's boot target and the
    targets it pulls in, or SysV's run level; untold, every shipped directory counts."""
    if boots_with_systemd(root):
        target, named = boot_target(root, kernel_args)
        if not target:
            return BootStarts()
        boot = f"{target} ({named})"
        targets = reached(target, root, problems)
        # systemd's rc-local-generator hooks rc-local.service into multi-user.target
        skipped = "" if "multi-user.target" in targets else (
            f"rc-local.service runs in multi-user.target, which the next boot, to {boot}, "
            "does not reach")
        return BootStarts(_wants_dirs(targets), boot=boot, rc_local_skipped=skipped)
    level, named = boot_runlevel(root, kernel_args)
    if not level:
        return BootStarts()
    boot = f"run level {level} ({named})"
    local = sysv_start_links(lambda directory: _listed(root, directory), "local",
                             runlevel_dirs(level))
    return BootStarts(SYSTEMD_WANTS_DIRS, runlevel_dirs(level), boot,
                      "" if local else f"no S??local link starts rc.local in {boot}")


def _listed(root: HostRoot, directory: str) -> list[str]:
    try:
        return root.listdir(directory)
    except FactError:
        return []


def boots_with_systemd(root: HostRoot) -> bool:
    """RHEL 7+ ship systemd's unit directory; RHEL 5 and 6 boot with SysV init."""
    return any(root.is_dir(directory) for directory in SYSTEMD_UNIT_DIRS[2:])
