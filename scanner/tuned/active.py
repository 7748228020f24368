"""tuned: is it installed and enabled at boot, which profiles are active, and what
the active chain sets (loaded and merged as the installed tuned does: chain.py); and
RHEL 5/6's ktune."""

from __future__ import annotations

from dataclasses import dataclass, field

from ...rules.host_layout import (
    FIX_TUNED_PROFILE,
    SYSTEMD_WANTS_DIRS,
    TUNED02_ACTIVE,
    TUNED02_PROFILES,
    TUNED02_SHIPPED_PROFILES,
    TUNED_ACTIVE_FILES,
    TUNED_BINARIES,
    TUNED_DAEMON_ON_WORDS,
    TUNED_DAEMON_SINCE,
    TUNED_MAIN_CONF,
    TUNED_PPD_BASE,
    TUNED_SHIPPED_PROFILES,
    TUNED_VERSION_DIRS,
    TUNED_VERSION_PARENT,
)
from .. import linear_re as re
from ..boot.services import sysv_start_links
from ..boot.target import BootStarts
from ..parsers.tuned_conf import parse_active_profile
from ..sources.hostroot import FactError, HostRoot
from ..unavailable import Unavailable
from .chain import PROFILE_NAME, HostMatch, TunedChain, resolve_chain
from .ktune import Ktune, collect_ktune
from .layout import tuned_layout
from .ppd import ppd_switch
from .recommend import (
    PROFILE_MODE_FILE,
    TUNED_PROFILE_MODE_SINCE,
    profile_mode_auto,
    recommended_profile,
)
from .tuned_conf import LoaderRules

__all__ = ["HostMatch", "Ktune", "TunedChain", "TunedFacts", "collect_tuned", "resolve_chain"]

BOOT_LINKS = tuple(f"{wants}/tuned.service" for wants in SYSTEMD_WANTS_DIRS)


def _tuned_started(root: HostRoot, starts: BootStarts) -> tuple[str, str]:
    """(the link that starts tuned at the next boot or "", the evidence): tuned.service in
    the .wants of a target that boot reaches, or S??tuned in its run level."""
    def linked(path: str) -> bool:
        return root.exists(path) or root.is_symlink(path)

    link = next((path for wants in starts.wants_dirs
                 if linked(path := f"{wants}/tuned.service")), "")
    sysv = next(iter(sysv_start_links(root.listdir, "tuned", starts.rc_dirs)), "")
    if link or sysv:
        return link or sysv, f"{link or sysv} exists"
    elsewhere = [path for path in (*BOOT_LINKS, *sysv_start_links(root.listdir, "tuned"))
                 if linked(path)]
    if elsewhere and starts.boot:
        return "", (f"{elsewhere[0]} exists, but the next boot, to {starts.boot}, does not "
                    "start what it holds")
    return "", "no tuned.service in multi-user.target.wants and no S??tuned link"


@dataclass
class TunedFacts:
    installed: bool
    installed_evidence: str
    enabled_at_boot: bool
    enabled_evidence: str
    active: list[str] | Unavailable | None  # None: no active-profile file
    active_source: str
    chain: TunedChain
    ktune: Ktune = field(default_factory=lambda: Ktune("", ()))
    # Every profile tuned can load on this host; None where the package's directory is not
    # there to list (tuned missing, or a sosreport, which does not copy it).
    available: tuple[str, ...] | None = None
    new_layout: bool = False  # tuned >= 2.23 (profiles under .../tuned/profiles)
    # (major, minor, patch) from the package's tuned/version.py, and that file; None: unknown
    version: tuple[int, int, int] | None = None
    version_source: str = ""
    legacy: bool = False  # tuned 0.2 (RHEL 5/6): /etc/tune-profiles, no /usr/lib/tuned
    ppd: str = ""  # tuned-ppd sets the profile at boot: what it replaces, and why
    # profile_mode auto: tuned starts its recommended profile at boot: what it replaces
    startup: str = ""
    # tuned-main.conf's daemon line when it turns the daemon off (one-shot mode), or ""
    no_daemon: str = ""

    @property
    def site_profile(self) -> str:
        """The active profile when it is the site's own, which a fix keeps (tuned 2: a
        single profile loaded from /etc/tuned, not sascheck's; tuned 0.2: one it does not
        ship); "" otherwise."""
        if not isinstance(self.active, list) or len(self.active) != 1 \
                or self.active[0] == FIX_TUNED_PROFILE:
            return ""
        name = self.active[0]
        if not re.fullmatch(r"[A-Za-z0-9_.-]{1,128}", name):  # not a name tuned-adm takes
            return ""
        if self.active_source == TUNED02_ACTIVE:
            return "" if name in TUNED02_SHIPPED_PROFILES else name
        own = any(profile == name and path.startswith("/etc/tuned/")
                  for profile, path in self.chain.profiles)
        return name if own else ""

    @property
    def release(self) -> str:
        return release_text(self.version)

    def honours(self, since: tuple[int, int]) -> bool | None:
        """Whether this tuned has a feature added in ``since``; None when the version is
        unknown."""
        return None if self.version is None else self.version[:2] >= since


def release_text(version: tuple[int, ...] | None) -> str:
    """A tuned release as its package names it ("2.21.0"), or "(version unknown)"."""
    return ".".join(map(str, version)) if version else "(version unknown)"


MAX_AVAILABLE = 4096  # more profiles than this on one host is not a real host


def available_profiles(root: HostRoot, rules: LoaderRules) -> tuple[str, ...]:
    """The profiles tuned could load here: a directory holding tuned.conf in one of its
    load directories, named as tuned's loader accepts. Unreadable directories are
    passed over (the chain reports what it cannot read)."""
    names: set[str] = set()
    for directory in rules.load_dirs:
        try:
            entries = root.listdir(directory)
        except FactError:
            continue
        for name in entries:
            if len(names) >= MAX_AVAILABLE:
                break
            if PROFILE_NAME.fullmatch(name) and name not in (".", "..") and name not in names:
                try:
                    if root.probe(f"{directory}/{name}/tuned.conf"):
                        names.add(name)
                except FactError:
                    continue
    return tuple(sorted(names))


def host_match(root: HostRoot, virtual: bool | None = None) -> HostMatch:
    """/proc/cpuinfo and the uname string tuned matches units against (``os.uname()``
    joined: system, node, release, version, machine; the machine read from the kernel's
    release suffix, as RHEL kernels carry it), and whether virt-what would find a virtual
    machine or container (the scan's role decides it)."""
    def first_line(path: str) -> str:
        try:
            return root.read_first_line(path)
        except FactError:
            return ""

    try:
        cpuinfo = root.read_optional("/proc/cpuinfo", 4 * 1024 * 1024)  # None: missing
    except FactError:
        cpuinfo = None
    release = first_line("/proc/sys/kernel/osrelease")
    machine = release.rsplit(".", 1)[-1] if "." in release else ""
    uname = " ".join(part for part in ("Linux", first_line("/proc/sys/kernel/hostname"),
                                       release, first_line("/proc/sys/kernel/version"),
                                       machine) if part)
    return HostMatch(cpuinfo, uname, virtual)


_VERSION_LINE = re.compile(r"^TUNED_VERSION_(MAJOR|MINOR|PATCH)\s*=\s*([0-9]{1,4})\s*$",
                           re.MULTILINE)


def tuned_version(root: HostRoot) -> tuple[tuple[int, int, int] | None, str]:
    """The installed tuned's version and the file that says it, or (None, "")."""
    for name in root.listdir(TUNED_VERSION_PARENT):
        if not re.fullmatch(r"python[23](?:\.[0-9]{1,3})?", name):
            continue
        for packages in TUNED_VERSION_DIRS:
            path = f"{TUNED_VERSION_PARENT}/{name}/{packages}/tuned/version.py"
            try:
                text = root.read_optional(path, 4096)
            except FactError:
                continue
            parts = dict(_VERSION_LINE.findall(text or ""))
            if len(parts) == 3:
                return (int(parts["MAJOR"]), int(parts["MINOR"]), int(parts["PATCH"])), path
    return None, ""


def no_daemon_line(root: HostRoot, version: tuple[int, int, int] | None) -> str:
    """tuned-main.conf's daemon = VALUE where it turns tuned's daemon off (the last such line
    wins, as tuned's config reader keeps the last), or "" (on, or a tuned before 2.5, which
    has no such option: tuned/daemon/application.py run, tuned/utils/commands.py get_bool)."""
    if version is not None and version[:2] < TUNED_DAEMON_SINCE:
        return ""
    try:
        text = root.read_optional(TUNED_MAIN_CONF, 65536) or ""
    except FactError:
        return ""
    values = re.findall(r"^[ \t]*daemon[ \t]*=[ \t]*([^\n#]*?)[ \t]*$", text, re.MULTILINE)
    if not values or values[-1].lower() in TUNED_DAEMON_ON_WORDS:
        return ""
    return f"{TUNED_MAIN_CONF}: daemon = {values[-1][:32]}"


def _startup_profile(root: HostRoot, active: list[str], source: str, virtual: bool | None
                     ) -> tuple[list[str] | Unavailable, str, str]:
    """(profiles, source, note) tuned starts at boot: active_profile's in manual mode, the
    recommended one in auto mode (scanner/tuned/recommend.py)."""
    try:
        auto, why = profile_mode_auto(root, active)
    except FactError as exc:
        return Unavailable(str(exc)), PROFILE_MODE_FILE, ""
    if not auto:
        return active, source, ""
    chosen = recommended_profile(root, virtual)
    if chosen.unknown:
        return Unavailable(f"{why}; which profile tuned recommends cannot be told: "
                           f"{chosen.unknown}"), PROFILE_MODE_FILE, ""
    replaced = " ".join(active) or "none"
    return [chosen.profile], f"{chosen.source} (profile_mode auto)", (
        f"{why}: at boot tuned starts its recommended profile, {chosen.profile}, not "
        f"{replaced} in {source}")


def collect_tuned(root: HostRoot, virtual: bool | None = None,
                  starts: BootStarts | None = None) -> TunedFacts:
    """tuned as the next boot runs it; ``starts`` says where that boot starts services
    (every shipped .wants and run level where not given)."""
    starts = starts or BootStarts()
    binary = next((path for path in TUNED_BINARIES if root.exists(path)), None)
    installed = binary is not None or root.is_dir(TUNED_SHIPPED_PROFILES)
    installed_evidence = (f"{binary} exists" if binary else
                          f"{TUNED_SHIPPED_PROFILES} exists" if installed else
                          f"none of {', '.join(TUNED_BINARIES)} exists")
    enabled, enabled_evidence = _tuned_started(root, starts)

    active: list[str] | Unavailable | None = None
    active_source = ppd_note = ""
    for path in TUNED_ACTIVE_FILES:
        try:
            text = root.read_optional(path, 64 * 1024)
        except FactError as exc:
            active, active_source = Unavailable(str(exc)), path
            break
        if text is not None:
            active, active_source = parse_active_profile(text), path
            break
    version, version_source = tuned_version(root)
    startup = ""
    # tuned 2.9+ at boot: with no active_profile, or profile_mode auto, the recommended one
    if installed and (active is None or isinstance(active, list)) \
            and active_source != TUNED02_ACTIVE and not root.is_dir(TUNED02_PROFILES) \
            and (version is None or version[:2] >= TUNED_PROFILE_MODE_SINCE):
        active, active_source, startup = _startup_profile(
            root, active or [], active_source or TUNED_ACTIVE_FILES[0], virtual)
    ppd = ppd_switch(root)
    if isinstance(ppd, Unavailable):
        active, active_source = ppd, TUNED_PPD_BASE
    elif ppd is not None and isinstance(active, list):
        ppd_note = f"{' '.join(active) or 'none'} in {active_source}; {ppd.why}"
        active, active_source = [ppd.profile], f"{TUNED_PPD_BASE} (tuned-ppd)"
    # tuned 0.2 (RHEL 6) profiles are /etc/tune-profiles/<name>/ directories whose
    # ktune.sysconfig collect_ktune reads; they have no tuned.conf include chain.
    layout = tuned_layout(root, version, version_source)
    rules = LoaderRules.for_host(root, version, layout)
    chain = resolve_chain(root, active, host_match(root, virtual), rules) \
        if isinstance(active, list) and active_source != TUNED02_ACTIVE else TunedChain()
    return TunedFacts(installed, installed_evidence, bool(enabled), enabled_evidence,
                      active, active_source, chain, collect_ktune(root, starts.rc_dirs),
                      available_profiles(root, rules)
                      if root.is_dir(TUNED_SHIPPED_PROFILES) else None,
                      layout.new, version, version_source,
                      legacy=root.is_dir(TUNED02_PROFILES)
                      and not root.is_dir(TUNED_SHIPPED_PROFILES), ppd=ppd_note, startup=startup,
                      no_daemon=no_daemon_line(root, version))
