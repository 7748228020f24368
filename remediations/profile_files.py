"""The files a fix writes for tuned and udev: the sas-performance profile (tuned 2 includes
a profile the host has; tuned 0.2 activates a shipped one) and the udev rules for the
devices under the SAS file systems."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import jinja2

from .. import __version__
from ..rules.host_layout import (
    TUNED02_NOBARRIER_PROFILES,
    TUNED02_THROUGHPUT_PROFILES,
    TUNED_MODIFIERS_SINCE,
    TUNED_ROLE_PROFILES,
    TUNED_STOCK_READAHEAD_KIB,
    TUNED_SYSCTL_MODIFIERS_SINCE,
)
from . import udev
from .rendering import TUNED_PROFILE_NAME, FixError, FixInput, environment


def tuned_include_candidates(role: str, allowed: Iterable[object], site: str = "") -> list[str]:
    """The profiles sas-performance may include, best first: the site's own active profile,
    so its tuning stays (a fix never replaces what it cannot judge), then tuned's own for
    the role (a guest, a KVM host), then the site's allowed ones."""
    return list(dict.fromkeys([*([site] if site else []),
                               *([TUNED_ROLE_PROFILES[role]] if role in TUNED_ROLE_PROFILES
                                 else []), *(str(name) for name in allowed)]))


def included_profile(fix: FixInput) -> str:
    """The profile sas-performance includes: the first candidate the host has. A scan records
    the host's profiles; a results file from before that is assumed to have
    throughput-performance, which every tuned 2 package ships (tuned.spec: the other
    candidates may live in subpackages such as tuned-profiles-compat)."""
    candidates = tuned_include_candidates(fix.role, fix.values["allowed_tuned_profiles"],
                                          fix.tuned_site_profile)
    if fix.tuned_site_profile:  # the scan found it active, loaded from /etc/tuned
        return fix.tuned_site_profile
    if fix.tuned_profiles is None:
        return next((name for name in candidates if name == "throughput-performance"),
                    candidates[0])
    found = next((name for name in candidates if name in fix.tuned_profiles), None)
    if found is None:
        raise FixError("the host has none of the tuned profiles sas-performance could include "
                       f"({', '.join(candidates)}): tuned refuses a profile whose include is "
                       "missing; install one (throughput-performance comes with tuned)")
    return found


def sysv_profile(fix: FixInput) -> str:
    """The tuned 0.2 profile tuned-adm activates on RHEL 5/6 (which cannot include one): the
    first allowed profile tuned 0.2 ships, passing over enterprise-storage, whose ktune
    remounts every file system nobarrier, unless the site declared its cache protected."""
    allowed = [str(name) for name in fix.values["allowed_tuned_profiles"]]
    shipped = [name for name in allowed if name in TUNED02_THROUGHPUT_PROFILES]
    safe = [name for name in shipped if fix.values["storage_cache_protected"]
            or name not in TUNED02_NOBARRIER_PROFILES]
    return (safe or shipped or allowed)[0]


# What tuned.conf.j2 can set, each as a profile's summary names it: [cpu] governor, [vm]
# THP, [disk] read-ahead, and [sysctl] vm.dirty_ratio (the failing sysctl rules' lines come
# whatever the sections).
TUNED_SECTIONS = {"cpu": "the performance governor", "vm": "THP", "disk": "SAS read-ahead",
                  "dirty_ratio": "vm.dirty_ratio"}
# The [sysctl] key tuned.conf.j2 itself sets (the bash library's TUNED_TEMPLATE_SYSCTL).
TUNED_TEMPLATE_SYSCTL = "vm.dirty_ratio"


def tuned_profile(fix: FixInput, env: jinja2.Environment | None = None, *,
                  role: str | None = None, include: str | None = None,
                  values: Mapping[str, str] | None = None, carrier: str = "",
                  sections: tuple[str, ...] = tuple(TUNED_SECTIONS),
                  parts: tuple[str, ...] = ()
                  ) -> str:
    """The sas-performance profile: it includes a profile the host has, never asks for less
    read-ahead than that profile's own floor, and sets each failing sysctl of one value.
    ``values`` may hold placeholders (XCCDF subs, the bash script's run-time values);
    ``carrier`` names what delivers it where no person installs it (a Tuned CR), which
    holds only the ``sections`` its profile's rules ask for, summarised by ``parts``."""
    env = env or environment()
    include = include or included_profile(fix)
    shown = dict(values or {name: str(fix.values[name]) for name in ("read_ahead_min_kb",
                                                                       "dirty_ratio")})
    if not values:
        floor = TUNED_STOCK_READAHEAD_KIB.get(include, 0)
        shown["read_ahead_min_kb"] = str(max(int(shown["read_ahead_min_kb"]), floor))
    modifiers = fix.tuned_version is None or fix.tuned_version[:2] >= TUNED_MODIFIERS_SINCE
    # ">N" and "<N" (a bound: remediations.generate.failing_sysctl) are read in [sysctl]
    # from 2.10
    sysctl_modifiers = (fix.tuned_version is None
                        or fix.tuned_version[:2] >= TUNED_SYSCTL_MODIFIERS_SINCE)
    sysctl = tuple((key, value if sysctl_modifiers else value.lstrip("><"))
                   for key, value in fix.tuned_sysctl)
    return env.get_template("tuned/tuned.conf.j2").render(
        name=TUNED_PROFILE_NAME, version=__version__, profile=fix.profile, include=include,
        role=role or fix.role, user_dir=fix.tuned_user_dir, modifiers=modifiers, carrier=carrier,
        sections=sections, parts=parts,
        force_cpu_latency=bool(fix.values.get("force_cpu_latency")),
        # the bash script adds its [sysctl] lines at run time (lib/sysctl.sh)
        sysctl=() if values else sysctl, **shown)


def _scheduler_to_keep(scheduler: Mapping[str, Any], allowed: list[str]) -> str | None:
    """The scheduler a udev rule sets for a device: none when its scheduler is allowed and
    the kernel's default at boot is too (it is left as it is); the one it has where it is
    allowed but the boot default is not (cfq on RHEL 5 and 6); else the first allowed one it
    offers (bash's persist_sas_io_tuning decides alike)."""
    if scheduler["selected"] in allowed:
        return None if scheduler.get("boot_default") in allowed else scheduler["selected"]
    return next((name for name in allowed if name in scheduler["options"]), None)


def udev_rules(fix: FixInput) -> str:
    """Rules for the devices the scan found under the SAS file systems (the same ones the
    bash script's io_tuning_at_boot block writes at run time), matched only by names udev
    compares byte for byte (remediations.udev)."""
    allowed = list(fix.values["allowed_schedulers"])
    scheduler_rules: dict[str, str] = {}
    read_ahead_rules: dict[str, str] = {}
    notes: list[str] = []
    minimum = str(int(fix.values["read_ahead_min_kb"]))
    for filesystem in fix.storage:
        for layer in filesystem["layers"]:
            match = udev.match_for(layer)
            if match.note and match.note not in notes:
                notes.append(match.note)
            if match.keys is None:
                continue
            scheduler = layer.get("scheduler")
            # A multipath path's scheduler is passed over (its map's works): left alone.
            if scheduler and scheduler.get("selected") and not layer.get("scheduled_by"):
                wanted = _scheduler_to_keep(scheduler, allowed)
                if wanted:
                    scheduler_rules.setdefault(match.keys, wanted)
            if layer["device"] == filesystem.get("queue_device"):
                # Only ever raised: a device that reads ahead more keeps its value.
                current = layer.get("read_ahead_kb")
                value = max(int(minimum), current if isinstance(current, int) else 0)
                read_ahead_rules.setdefault(match.keys, str(value))
    if not scheduler_rules and not read_ahead_rules:
        reason = "; ".join(notes) if notes else (
            "name the SAS directories (--set sas_data_dirs=...) on a host whose storage the "
            "scan can see")
        raise FixError(f"no device under the SAS file systems can be matched: {reason}")
    return environment().get_template("udev/rules.j2").render(
        version=__version__, host=fix.host, notes=notes,
        scheduler_rules=[{"match": m, "value": v} for m, v in scheduler_rules.items()],
        read_ahead_rules=[{"match": m, "value": v} for m, v in read_ahead_rules.items()])
