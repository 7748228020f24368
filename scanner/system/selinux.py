"""SELinux's mode now (selinuxfs) and the one the next boot sets (its config)."""

from __future__ import annotations

from dataclasses import dataclass

from ...rules.host_layout import SELINUX_CONFIG, SELINUX_ENFORCE
from ..parsers.simple import shell_assignments
from ..sources.hostroot import FactError, HostRoot
from ..unavailable import Unavailable


@dataclass(frozen=True)
class SelinuxFacts:
    # /sys/fs/selinux/enforce: "1" enforcing, "0" permissive; None where there is none (not
    # a running system, or SELinux off)
    running: str | Unavailable | None = None
    # SELINUX= of /etc/selinux/config, lower case; None where the file is missing
    configured: str | Unavailable | None = None


def collect_selinux(root: HostRoot) -> SelinuxFacts:
    running: str | Unavailable | None
    configured: str | Unavailable | None
    try:
        text = root.read_optional(SELINUX_ENFORCE, 64)
        running = text.strip() if text is not None else None
    except FactError as exc:
        running = Unavailable(str(exc))
    try:
        config = root.read_optional(SELINUX_CONFIG, 1024 * 1024)
        configured = (shell_assignments(config).get("SELINUX", "").strip().lower()
                      if config is not None else None)
    except FactError as exc:
        configured = Unavailable(str(exc))
    return SelinuxFacts(running, configured)
