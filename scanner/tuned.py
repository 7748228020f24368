"""tuned: is it installed and enabled at boot, which profiles are active, and what
the active chain sets (loaded and merged as the installed tuned does: tuned_chain.py); and
RHEL 5/6's ktune."""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..rules.host_layout import (
    KTUNE_ENABLES_THP,
    KTUNE_NOBARRIER,
    KTUNE_PMQOS_LATENCY,
    KTUNE_READAHEAD_FACTOR,
    KTUNE_SCRIPTS,
    KTUNE_SYSCONFIG,
    KTUNE_SYSV,
    SYSTEMD_WANTS_DIRS,
    TUNED02_ACTIVE,
    TUNED02_PROFILES,
    TUNED_ACTIVE_FILES,
    TUNED_BINARIES,
    TUNED_PPD_BASE,
    TUNED_SHIPPED_PROFILES,
    TUNED_VERSION_DIRS,
    TUNED_VERSION_PARENT,
)
from .hostroot import FactError, HostRoot
from .parsers.simple import shell_assignments
from .parsers.tuned_conf import parse_active_profile
from .services import sysv_start_links
from .tuned_chain import PROFILE_NAME, HostMatch, LoaderRules, TunedChain, resolve_chain
from .tuned_layout import tuned_layout
from .tuned_ppd import ppd_switch
from .unavailable import Unavailable

__all__ = ["HostMatch", "Ktune", "TunedChain", "TunedFacts", "collect_tuned", "resolve_chain"]

BOOT_LINKS = tuple(f"{wants}/tuned.service" for wants in SYSTEMD_WANTS_DIRS)


@dataclass(frozen=True)
class KtuneThpWrite:
    file: str  # enabled or defrag
    value: str
    source: str  # script:line
    call: str  # the function called (enable_transparent_hugepages writes always), or ""


@dataclass(frozen=True)
class Ktune:
    """RHEL 5/6 ktune: enabled at boot; the scripts in /etc/ktune.d that turn THP on or
    remount file systems nobarrier; the ELEVATOR it sets (/etc/sysconfig/ktune)."""
    enabled: str  # the SysV start link, or ""
    enables_thp: tuple[str, ...]
    nobarrier: tuple[str, ...] = ()
    elevator: str = ""
    # multiply_disk_readahead lines, (script, factor), in the order ktune runs them
    readahead_factors: tuple[tuple[str, float], ...] = ()
    # pmqos-static.py cpu_dma_latency=N in a start(): (script, microseconds), last one wins
    cpu_dma_latency: tuple[str, int] | None = None
    # What the start() functions write to THP, in the order ktune runs them.
    thp_writes: tuple[KtuneThpWrite, ...] = ()
    # start() lines calling a function tuned 0.2's tune-profiles/functions does not define.
    undefined_calls: tuple[str, ...] = ()
    # The last set_cpu_governor in a start(): (governor, script:line).
    governor: tuple[str, str] | None = None



@dataclass
class TunedFacts:
    installed: bool
    installed_evidence: str
    enabled_at_boot: bool
    enabled_evidence: str
    active: list[str] | Unavailable | None  # None: no active-profile file
    active_source: str
    chain: TunedChain
    ktune: Ktune = Ktune("", ())
    # Every profile tuned can load on this host; None where the package's directory is not
    # there to list (tuned missing, or a sosreport, which does not copy it).
    available: tuple[str, ...] | None = None
    new_layout: bool = False  # tuned >= 2.23 (profiles under .../tuned/profiles)
    # (major, minor, patch) from the package's tuned/version.py, and that file; None: unknown
    version: tuple[int, int, int] | None = None
    version_source: str = ""
    legacy: bool = False  # tuned 0.2 (RHEL 5/6): /etc/tune-profiles, no /usr/lib/tuned
    ppd: str = ""  # tuned-ppd sets the profile at boot: what it replaces, and why

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


def collect_tuned(root: HostRoot, virtual: bool | None = None) -> TunedFacts:
    binary = next((path for path in TUNED_BINARIES if root.exists(path)), None)
    installed = binary is not None or root.is_dir(TUNED_SHIPPED_PROFILES)
    installed_evidence = (f"{binary} exists" if binary else
                          f"{TUNED_SHIPPED_PROFILES} exists" if installed else
                          f"none of {', '.join(TUNED_BINARIES)} exists")
    link = next((path for path in BOOT_LINKS if root.exists(path) or root.is_symlink(path)),
                None)
    sysv = next(iter(sysv_start_links(root.listdir, "tuned")), None)
    enabled = link or sysv
    enabled_evidence = (f"{enabled} exists" if enabled else
                        "no tuned.service in multi-user.target.wants and no S??tuned link")

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
    ppd = ppd_switch(root)
    if isinstance(ppd, Unavailable):
        active, active_source = ppd, TUNED_PPD_BASE
    elif ppd is not None and isinstance(active, list):
        ppd_note = f"{' '.join(active) or 'none'} in {active_source}; {ppd.why}"
        active, active_source = [ppd.profile], f"{TUNED_PPD_BASE} (tuned-ppd)"
    # tuned 0.2 (RHEL 6) profiles are /etc/tune-profiles/<name>/ directories whose
    # ktune.sysconfig collect_ktune reads; they have no tuned.conf include chain.
    version, version_source = tuned_version(root)
    layout = tuned_layout(root, version, version_source)
    rules = LoaderRules.for_host(root, version, layout)
    chain = resolve_chain(root, active, host_match(root, virtual), rules) \
        if isinstance(active, list) and active_source != TUNED02_ACTIVE else TunedChain()
    return TunedFacts(installed, installed_evidence, bool(enabled), enabled_evidence,
                      active, active_source, chain, collect_ktune(root),
                      available_profiles(root, rules)
                      if root.is_dir(TUNED_SHIPPED_PROFILES) else None,
                      layout.new, version, version_source,
                      legacy=root.is_dir(TUNED02_PROFILES)
                      and not root.is_dir(TUNED_SHIPPED_PROFILES), ppd=ppd_note)


def _start_function(script: str) -> str:
    """The body of a ktune script's start() (stop() undoes it: multiply_disk_readahead 0.25);
    the whole script when it has none."""
    match = re.search(r"^start\(\)\s*\{\s*$(.*?)^\}", script, re.MULTILINE | re.DOTALL)
    return match.group(1) if match else script


# Seed 003 lists "set_transparent_hugepages never"; no tuned 0.2 release (v0.2.5 to v0.2.22,
# tune-profiles/functions) defines it, so such a line fails in the script and sets nothing.
_SET_GOVERNOR = re.compile(r"^[ \t]*set_cpu_governor[ \t]+([A-Za-z0-9_-]{1,32})[ \t]*$")
_UNDEFINED_THP_CALL = re.compile(r"^[ \t]*(set_transparent_hugepages)\b")
_THP_WRITE = re.compile(
    r"""^[^#]*?(?:echo|printf)\s+(?:-[ne]+\s+)?['"]?([\w.+-]+)['"]?\s*(?:>+\s*|\|\s*tee\s+"""
    r"""(?:-a\s+)?)['"]?/sys/kernel/mm/(?:redhat_)?transparent_hugepage/(enabled|defrag)\b""")


def _start_lines(script: str) -> list[tuple[int, str]]:
    """(line number, line) of a ktune script's start() body, or of the whole script when it
    has none (as _start_function)."""
    lines = script.splitlines()
    begin = next((n for n, line in enumerate(lines) if re.match(r"start\(\)\s*\{\s*$", line)),
                 None)
    if begin is None:
        return list(enumerate(lines, start=1))
    body = []
    for number, line in enumerate(lines[begin + 1:], start=begin + 2):
        if line.startswith("}"):
            break
        body.append((number, line))
    return body


def _thp_writes(path: str, script: str) -> tuple[list[KtuneThpWrite], list[str]]:
    writes: list[KtuneThpWrite] = []
    undefined: list[str] = []
    for number, line in _start_lines(script):
        if re.match(KTUNE_ENABLES_THP, line):
            writes.append(KtuneThpWrite("enabled", "always", f"{path}:{number}",
                                        "enable_transparent_hugepages"))
        elif match := _THP_WRITE.match(line):
            writes.append(KtuneThpWrite(match.group(2), match.group(1), f"{path}:{number}", ""))
        elif match := _UNDEFINED_THP_CALL.match(line):
            undefined.append(f"{path}:{number} calls {match.group(1)}, which tuned 0.2's "
                             "functions do not define: it sets nothing")
    return writes, undefined


def collect_ktune(root: HostRoot) -> Ktune:
    enabled = next(iter(sysv_start_links(root.listdir, KTUNE_SYSV)), "")
    if not enabled:
        return Ktune("", ())
    found: dict[str, list[str]] = {KTUNE_ENABLES_THP: [], KTUNE_NOBARRIER: []}
    factors: list[tuple[str, float]] = []
    latency: tuple[str, int] | None = None
    thp: list[KtuneThpWrite] = []
    governor: tuple[str, str] | None = None
    undefined: list[str] = []
    for path in root.glob_files(KTUNE_SCRIPTS, ".sh"):
        try:
            text = root.read_optional(path, 1024 * 1024) or ""
        except FactError:  # unreadable: it may do either; assume it does
            text = "enable_transparent_hugepages\nremount_partitions nobarrier"
        writes, calls = _thp_writes(path, text)
        thp += writes
        undefined += calls
        for number, line in _start_lines(text):
            if match := _SET_GOVERNOR.match(line):
                governor = (match.group(1), f"{path}:{number}")
        for pattern, scripts in found.items():
            if re.search(pattern, text, re.MULTILINE):
                scripts.append(path)
        factors += [(path, float(match.group(1))) for match in
                    re.finditer(KTUNE_READAHEAD_FACTOR, _start_function(text), re.MULTILINE)]
        for match in re.finditer(KTUNE_PMQOS_LATENCY, _start_function(text), re.MULTILINE):
            latency = (path, int(match.group(1)))
    try:
        config = shell_assignments(root.read_optional(KTUNE_SYSCONFIG, 65536) or "")
    except FactError:
        config = {}
    return Ktune(enabled, tuple(found[KTUNE_ENABLES_THP]), tuple(found[KTUNE_NOBARRIER]),
                 config.get("ELEVATOR", "").strip(), tuple(factors), latency, tuple(thp),
                 tuple(undefined), governor)
