"""SELinux's mode now (selinuxfs) and the one the next boot sets (its config)."""

from __future__ import annotations

from dataclasses import dataclass

from ...rules.host_layout import SELINUX_CONFIG, SELINUX_ENFORCE
from ..sources.hostroot import FactError, HostRoot
from ..unavailable import Unavailable


@dataclass(frozen=True)
class SelinuxFacts:
    # /sys/fs/selinux/enforce: "1" enforcing, "0" permissive; None where there is none (not
    # a running system, or SELinux off)
    running: str | Unavailable | None = None
    # The mode /etc/selinux/config gives (config_mode): "enforcing", "permissive",
    # "disabled", or "" where no line gives one; None where the file is missing
    configured: str | Unavailable | None = None


MODES = ("enforcing", "permissive", "disabled")


def config_mode(text: str) -> str:
    """The mode as libselinux reads it (selinux_getenforcemode, libselinux 3.6
    src/selinux_config.c lines 89-131, which selinux_init_load_policy uses at boot): the
    first line that begins "SELINUX=" exactly (no blank before it, none before "="),
    blanks after "=" skipped, whose value begins with a mode's name in any case; a line
    whose value names none (a quoted value among them) is passed over. "" where no line
    gives a mode."""
    for line in text.splitlines():
        if line.startswith("SELINUX="):
            value = line[len("SELINUX="):].lstrip(" \t\v\f\r").lower()
            mode = next((mode for mode in MODES if value.startswith(mode)), "")
            if mode:
                return mode
    return ""


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
        configured = config_mode(config) if config is not None else None
    except FactError as exc:
        configured = Unavailable(str(exc))
    return SelinuxFacts(running, configured)
