"""tuned: is it installed and enabled at boot, which profiles are active, and what
the active chain (profiles and their includes, merged as tuned merges them) sets.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..rules.host_layout import (
    SYSTEMD_WANTS_DIRS,
    SYSV_RUNLEVEL_DIRS,
    TUNED_ACTIVE_FILES,
    TUNED_BINARIES,
    TUNED_PROFILE_DIRS,
    TUNED_SHIPPED_PROFILES,
)
from .hostroot import FactError, HostRoot
from .parsers.tuned_conf import Sections, includes, parse_active_profile, parse_tuned_conf
from .unavailable import Unavailable

BOOT_LINKS = tuple(f"{wants}/tuned.service" for wants in SYSTEMD_WANTS_DIRS)
MAX_PROFILES = 32


@dataclass
class TunedChain:
    """Profiles in the order tuned applies them; later ones override earlier ones."""
    profiles: list[tuple[str, str]] = field(default_factory=list)  # (name, file)
    settings: dict[tuple[str, str], tuple[str, str]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    unreadable: bool = False  # a profile exists but could not be read

    @property
    def names(self) -> list[str]:
        return [name for name, _ in self.profiles]

    def setting(self, plugin: str, key: str) -> tuple[str, str] | None:
        """(value, profile that set it) for a plugin option, e.g. ('disk', 'readahead')."""
        return self.settings.get((plugin, key))


@dataclass
class TunedFacts:
    installed: bool
    installed_evidence: str
    enabled_at_boot: bool
    enabled_evidence: str
    active: list[str] | Unavailable | None  # None: no active-profile file
    active_source: str
    chain: TunedChain


def _profile_file(root: HostRoot, name: str) -> str | None:
    if "/" in name or name in ("", ".", ".."):
        return None
    for directory in TUNED_PROFILE_DIRS:
        path = f"{directory}/{name}/tuned.conf"
        if root.probe(path):  # FactError when a profile directory cannot be searched
            return path
    return None


def _plugin_of(section: str, options: dict[str, str]) -> str:
    return options.get("type", section)


def resolve_chain(root: HostRoot, active: list[str]) -> TunedChain:
    chain = TunedChain()

    def apply(name: str, stack: tuple[str, ...]) -> None:
        if name in stack:
            chain.problems.append("include cycle: " + " -> ".join((*stack, name)))
            return
        if len(chain.profiles) >= MAX_PROFILES:
            chain.problems.append(f"more than {MAX_PROFILES} profiles in the chain")
            return
        try:
            path = _profile_file(root, name)
        except FactError as exc:
            chain.problems.append(str(exc))
            chain.unreadable = True
            return
        if path is None:
            chain.problems.append(f"profile '{name}' not found in {' or '.join(TUNED_PROFILE_DIRS)}")
            return
        try:
            sections: Sections = parse_tuned_conf(root.read_text(path, 1024 * 1024))
        except FactError as exc:
            chain.problems.append(str(exc))
            chain.unreadable = True
            return
        for included in includes(sections):
            apply(included, (*stack, name))
        chain.profiles.append((name, path))
        for section, options in sections.items():
            plugin = _plugin_of(section, options)
            for key, value in options.items():
                if section == "main" or key == "type":
                    continue
                chain.settings[(plugin, key)] = (value, name)

    for name in active:
        apply(name, ())
    return chain


def collect_tuned(root: HostRoot) -> TunedFacts:
    binary = next((path for path in TUNED_BINARIES if root.exists(path)), None)
    installed = binary is not None or root.is_dir(TUNED_SHIPPED_PROFILES)
    installed_evidence = (f"{binary} exists" if binary else
                          f"{TUNED_SHIPPED_PROFILES} exists" if installed else
                          f"none of {', '.join(TUNED_BINARIES)} exists")
    link = next((path for path in BOOT_LINKS if root.exists(path) or root.is_symlink(path)),
                None)
    sysv = next((f"{d}/{n}" for d in SYSV_RUNLEVEL_DIRS for n in root.listdir(d)
                 if n.startswith("S") and n[1:3].isdigit() and n[3:] == "tuned"), None)
    enabled = link or sysv
    enabled_evidence = (f"{enabled} exists" if enabled else
                        "no tuned.service in multi-user.target.wants and no S??tuned link")

    active: list[str] | Unavailable | None = None
    active_source = ""
    for path in TUNED_ACTIVE_FILES:
        try:
            text = root.read_optional(path, 64 * 1024)
        except FactError as exc:
            active, active_source = Unavailable(str(exc)), path
            break
        if text is not None:
            active, active_source = parse_active_profile(text), path
            break
    chain = resolve_chain(root, active) if isinstance(active, list) else TunedChain()
    return TunedFacts(installed, installed_evidence, bool(enabled), enabled_evidence,
                      active, active_source, chain)
