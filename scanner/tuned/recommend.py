"""The profile tuned starts at boot when its profile mode is auto: the recommended one, not
the one in active_profile (tuned 2.9+, daemon.py ``_get_startup_profile``).

``commands.get_active_profile`` reads /etc/tuned/profile_mode: ``auto`` or ``manual``;
missing or empty, the mode is manual exactly when active_profile names a profile. In auto
mode ``ProfileRecommender.recommend`` (tuned/utils/profile_recommender.py) reads
/etc/tuned/recommend.conf, then every file of /usr/lib/tuned/recommend.d and
/etc/tuned/recommend.d (a name in /etc hides its namesake, in name order), and takes the
first section all of whose conditions match (``re.match``, DOTALL), else ``balanced``.
A configuration-management tool that writes active_profile without ``tuned-adm profile``
leaves the mode auto, and the recommended profile is what boots.

Conditions read from the host: ``virt`` (virt-what's output: empty on bare metal, else the
hypervisor, told here from the DMI vendor), ``system`` (/etc/system-release-cpe), a file
path, ``chassis_type`` (the DMI chassis type's name, case-blind) and ``syspurpose_role``.
``process`` (running processes) cannot be told from files: a section that needs it, or a
hypervisor the DMI data does not name, leaves the recommendation unknown, said as such.
Patterns are the host's, so they run under RE2 (scanner/host_regex.py).
"""

from __future__ import annotations

import configparser
import json
import posixpath
from dataclasses import dataclass

from ...rules.host_layout import (
    DMI_CHASSIS_TYPE,
    DMI_FILES,
    SYSPURPOSE_FILE,
    SYSTEM_RELEASE_CPE,
    TUNED_PROFILE_MODE_FILE,
    TUNED_RECOMMEND_CONF,
    TUNED_RECOMMEND_DIRS,
)
from ..host_regex import HostRegexError, search
from ..sources.hostroot import FactError, HostRoot

PROFILE_MODE_FILE = TUNED_PROFILE_MODE_FILE
DEFAULT_PROFILE = "balanced"
TUNED_PROFILE_MODE_SINCE = (2, 9)  # commit bc8ffcf, "manually vs automatically set profile"
# profile_recommender.py _get_chassis_type: SMBIOS 3.3.0's chassis types by number.
DMI_CHASSIS_TYPES = (
    "", "Other", "Unknown", "Desktop", "Low Profile Desktop", "Pizza Box", "Mini Tower",
    "Tower", "Portable", "Laptop", "Notebook", "Hand Held", "Docking Station", "All In One",
    "Sub Notebook", "Space-saving", "Lunch Box", "Main Server Chassis", "Expansion Chassis",
    "Sub Chassis", "Bus Expansion Chassis", "Peripheral Chassis", "RAID Chassis",
    "Rack Mount Chassis", "Sealed-case PC", "Multi-system", "CompactPCI", "AdvancedTCA",
    "Blade", "Blade Enclosing", "Tablet", "Convertible", "Detachable", "IoT Gateway",
    "Embedded PC", "Mini PC", "Stick PC")
# virt-what's name for a hypervisor, from words in the DMI vendor or product name.
VIRT_WHAT = (("kvm", "kvm"), ("qemu", "kvm"), ("vmware", "vmware"),
             ("microsoft", "hyperv"), ("xen", "xen"), ("virtualbox", "virtualbox"))
MAX_FILES = 64
MAX_FILE = 64 * 1024


@dataclass(frozen=True)
class StartupProfile:
    """What tuned loads at boot in auto mode: ``profile`` with the file and section that
    chose it, or ``unknown`` saying why it cannot be told (profile then "")."""
    profile: str
    source: str
    unknown: str = ""


def profile_mode_auto(root: HostRoot, active: list[str]) -> tuple[bool, str]:
    """Whether tuned starts the recommended profile at boot, and what says so. Raises
    FactError for a profile_mode tuned itself refuses."""
    text = root.read_optional(PROFILE_MODE_FILE, 4096)
    mode = (text or "").strip()
    if mode not in ("", "auto", "manual"):
        raise FactError(f"{PROFILE_MODE_FILE}: {mode[:32]!r} is neither auto nor manual: "
                        "tuned refuses it")
    if mode:
        return mode == "auto", f"{PROFILE_MODE_FILE}: {mode}"
    if active:
        return False, "no profile_mode: manual, as active_profile names a profile"
    return True, "no profile_mode and no active profile: tuned starts the recommended one"


class _Host:
    """The host facts a condition reads, each read once."""

    def __init__(self, root: HostRoot, virtual: bool | None) -> None:
        self.root = root
        self.virtual = virtual

    def text(self, path: str) -> str | None:
        try:
            return self.root.read_optional(path, MAX_FILE)
        except FactError:
            return None

    def virt_what(self) -> str | None:
        if self.virtual is False:
            return ""
        if self.virtual is None:
            return None
        words = " ".join((self.text(path) or "") for path in DMI_FILES).lower()
        return next((name + "\n" for word, name in VIRT_WHAT if word in words), None)

    def chassis(self) -> str | None:
        text = (self.text(DMI_CHASSIS_TYPE) or "").strip()
        if not text.isascii() or not text.isdigit():
            return None
        number = int(text)
        return DMI_CHASSIS_TYPES[number] if number < len(DMI_CHASSIS_TYPES) else None

    def syspurpose_role(self) -> str:
        try:
            data = json.loads(self.text(SYSPURPOSE_FILE) or "{}")
        except ValueError:
            return ""
        role = data.get("role", "") if isinstance(data, dict) else ""
        return role if isinstance(role, str) else ""


def _matches(pattern: str, subject: str, ignore_case: bool = False) -> bool:
    return search(f"(?s{'i' if ignore_case else ''})\\A(?:{pattern})", subject)


def _condition(host: _Host, option: str, value: str) -> bool | None:
    """One option of a section, as process_config judges it; None: cannot be told."""
    value = value or "^$"
    if option == "virt":
        output = host.virt_what()
        return None if output is None else _matches(value, output)
    if option == "system":
        return _matches(value, host.text(SYSTEM_RELEASE_CPE) or "")
    if option.startswith("/"):
        text = host.text(option)
        return text is not None and _matches(value, text)
    if option.startswith("process"):
        return None
    if option == "chassis_type":
        chassis = host.chassis()
        return None if chassis is None else _matches(value, chassis, ignore_case=True)
    if option == "syspurpose_role":
        return _matches(value, host.syspurpose_role(), ignore_case=True)
    return True  # tuned passes over an option it does not know


def _files(root: HostRoot) -> list[str]:
    files = [TUNED_RECOMMEND_CONF] if root.exists(TUNED_RECOMMEND_CONF) else []
    named: dict[str, str] = {}
    for directory in TUNED_RECOMMEND_DIRS:
        try:
            names = root.listdir(directory)
        except FactError:
            continue
        for name in names:
            named[name] = posixpath.join(directory, name)
    return (files + [named[name] for name in sorted(named)])[:MAX_FILES]


def recommended_profile(root: HostRoot, virtual: bool | None) -> StartupProfile:
    host = _Host(root, virtual)
    for path in _files(root):
        text = host.text(path)
        if text is None:
            continue
        parser = configparser.ConfigParser(delimiters=("=",), inline_comment_prefixes=("#",),
                                           strict=False, interpolation=None)
        parser.optionxform = str  # type: ignore[assignment,method-assign]
        try:
            parser.read_string(text, path)
        except configparser.Error:
            continue  # process_config logs the error and takes nothing from the file
        for section in parser.sections():
            try:
                results = [_condition(host, option, parser.get(section, option, raw=True))
                           for option in parser.options(section)]
            except HostRegexError as exc:
                return StartupProfile("", path, f"{path} [{section}]: a pattern sascheck "
                                      f"cannot run safely ({exc})")
            if False in results:
                continue
            if None in results:
                return StartupProfile("", path, f"{path} [{section}] needs what files do not "
                                      "show (running processes, or which hypervisor this is)")
            profile = section.rsplit(",", 1)[0] if "," in section else section
            return StartupProfile(profile, f"{path} [{section}]")
    return StartupProfile(DEFAULT_PROFILE, "no recommend.d section matched: tuned's default")
