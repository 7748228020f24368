"""The targets the next boot reaches (issue 50): a unit enabled in a target's ``.wants``
starts at boot only when the default target pulls that target in. A RHEL server boots
multi-user.target, and graphical.target requires multi-user.target, not the reverse, so a
unit enabled only in graphical.target.wants never starts on it."""

from __future__ import annotations

import posixpath
from collections.abc import Sequence

from ...rules.host_layout import DEFAULT_TARGET_LINKS, SYSTEMD_WANTS_DIRS
from ..sources.hostroot import FactError, HostRoot

# What each target pulls in (Requires= or Wants=) among the targets whose .wants sascheck
# reads, as systemd ships them (units/*.target; the same from systemd 219, RHEL 7, to 257):
# graphical Requires=multi-user, multi-user Requires=basic, basic Requires=sysinit and
# Wants=sockets.target, rescue Requires=sysinit.
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


def reached(target: str) -> set[str]:
    """The targets a boot to ``target`` reaches."""
    found, pending = set(), [target]
    while pending:
        name = pending.pop()
        if name not in found:
            found.add(name)
            pending.extend(TARGET_PULLS.get(name, ()))
    return found


def boot_wants_dirs(root: HostRoot, kernel_args: Sequence[str] = ()) -> tuple[str, ...]:
    """The .wants directories whose units start at the next boot: those of the targets the
    boot target reaches; every one where the boot target cannot be told."""
    target, _ = boot_target(root, kernel_args)
    if not target:
        return SYSTEMD_WANTS_DIRS
    targets = reached(target)
    return tuple(directory for directory in SYSTEMD_WANTS_DIRS
                 if posixpath.basename(directory).removesuffix(".wants") in targets)
