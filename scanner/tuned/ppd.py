"""tuned-ppd (tuned 2.22+): where it starts at boot it sets tuned's profile itself.

``tuned/ppd/controller.py`` initialize(): the base profile is the one saved in
/etc/tuned/ppd_base_profile, else tuned's recommendation, else ppd.conf's [main] default;
it then switches tuned to that PPD profile's tuned profile ([profiles] of ppd.conf, or
[battery] on battery) at every start. A profile set with tuned-adm that ppd.conf does not
map is "unknown" to it and never saved as the base, so the next boot goes back to the base.
Its unit is WantedBy=graphical.target: it starts at boot where that target is the default.
"""

from __future__ import annotations

import configparser
from dataclasses import dataclass

from ...rules.host_layout import (
    TUNED_PPD_BASE,
    TUNED_PPD_BINARY,
    TUNED_PPD_CONF,
    TUNED_PPD_LINK,
)
from ..boot.target import default_target
from ..sources.hostroot import FactError, HostRoot
from ..unavailable import Unavailable


@dataclass(frozen=True)
class PpdSwitch:
    profile: str  # the tuned profile tuned-ppd switches to when it starts
    why: str


def ppd_switch(root: HostRoot) -> PpdSwitch | Unavailable | None:
    """The profile tuned-ppd sets at boot, None where it does not start at boot."""
    if not root.exists(TUNED_PPD_BINARY) or not (root.is_symlink(TUNED_PPD_LINK)
                                                   or root.exists(TUNED_PPD_LINK)):
        return None
    if default_target(root) != "graphical.target":
        return None  # enabled, but only graphical.target pulls it in
    starts = f"tuned-ppd starts at boot ({TUNED_PPD_LINK}, default.target is graphical.target)"
    try:
        text = root.read_optional(TUNED_PPD_CONF, 65536)
        base = (root.read_optional(TUNED_PPD_BASE, 4096) or "").strip()
    except FactError as exc:
        return Unavailable(f"{starts}, but {exc}")
    if text is None:
        return Unavailable(f"{starts}, but {TUNED_PPD_CONF} is missing: it refuses to start")
    config = configparser.ConfigParser()
    config.optionxform = str  # type: ignore[assignment,method-assign]
    try:
        config.read_string(text)
        profiles = dict(config["profiles"])
        default = config.get("main", "default", fallback="")
    except (configparser.Error, KeyError) as exc:
        return Unavailable(f"{starts}, but {TUNED_PPD_CONF} cannot be read as it reads it: "
                           f"{str(exc).splitlines()[0][:160]}")
    source = f"its saved base profile ({TUNED_PPD_BASE})"
    if not base:
        return Unavailable(f"{starts} with no saved base profile ({TUNED_PPD_BASE}): it takes "
                           f"tuned's recommendation, which sascheck does not evaluate, "
                           f"else '{default}'")
    if base not in profiles:
        return Unavailable(f"{starts}; {source} '{base}' is not in [profiles] of "
                           f"{TUNED_PPD_CONF}")
    return PpdSwitch(profiles[base], f"{starts} and switches tuned to '{profiles[base]}', "
                                     f"which {TUNED_PPD_CONF} maps {source} '{base}' to")
