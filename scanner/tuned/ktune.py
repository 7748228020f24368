"""RHEL 5 and 6 ktune: the scripts in /etc/ktune.d that its init script runs at boot, read as
the shell runs them.

A script sources /etc/tune-profiles/functions (tuned 0.2's), so what a call does is what
that file on the host defines. RHEL 6's tuned is tuned's 1.0 branch, whose functions
replaced enable_transparent_hugepages with set_transparent_hugepages VALUE and
remount_partitions with disable_disk_barriers (which leaves a file system whose disks report
a write-back cache alone); tags v0.2.5 to v0.2.22 have the old names. Where the host's file
cannot be read, the 1.0 branch's functions stand in (rules/host_layout.TUNED_1_0_FUNCTIONS).
"""

from __future__ import annotations

from dataclasses import dataclass

from ...rules.host_layout import (
    KTUNE_DISABLES_BARRIERS,
    KTUNE_ENABLES_THP,
    KTUNE_NOBARRIER,
    KTUNE_PMQOS_LATENCY,
    KTUNE_READAHEAD_FACTOR,
    KTUNE_SCRIPTS,
    KTUNE_SETS_THP,
    KTUNE_SHIPPED_CONFIG,
    KTUNE_SYSCONFIG,
    KTUNE_SYSV,
    SCSI_CACHE_TYPE,
    SYSV_RUNLEVEL_DIRS,
    TUNED02_FUNCTIONS,
    TUNED_1_0_FUNCTIONS,
)
from .. import linear_re as re
from ..boot.services import sysv_start_links
from ..parsers.simple import shell_assignments
from ..sources.hostroot import FactError, HostRoot


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
    nobarrier: tuple[str, ...] = ()  # remount_partitions nobarrier: every file system
    elevator: str = ""
    # multiply_disk_readahead lines, (script, factor), in the order ktune runs them
    readahead_factors: tuple[tuple[str, float], ...] = ()
    # pmqos-static.py cpu_dma_latency=N in a start(): (script, microseconds), last one wins
    cpu_dma_latency: tuple[str, int] | None = None
    # What the start() functions write to THP, in the order ktune runs them.
    thp_writes: tuple[KtuneThpWrite, ...] = ()
    # start() lines calling a function the host's tune-profiles/functions does not define.
    undefined_calls: tuple[str, ...] = ()
    # The last set_cpu_governor in a start(): (governor, script:line).
    governor: tuple[str, str] | None = None
    # disable_disk_barriers: every file system but / and /boot whose disks report no
    # write-back cache; the disks that do (their cache_type says "write back").
    nobarrier_unless_write_back: tuple[str, ...] = ()
    write_back_disks: frozenset[str] = frozenset()
    # What ktune.init applies with sysctl: its KTUNE_FILES, then SYSCTL_POST's words.
    sysctl_files: tuple[str, ...] = ()
    sysctl_post: str = ""
    problems: tuple[str, ...] = ()  # /etc/sysconfig/ktune unreadable: taken as shipped


def _start_function(script: str) -> str:
    """The body of a ktune script's start() (stop() undoes it: multiply_disk_readahead 0.25);
    the whole script when it has none."""
    match = re.search(r"^start\(\)\s*\{\s*$(.*?)^\}", script, re.MULTILINE | re.DOTALL)
    return match.group(1) if match else script


_SET_GOVERNOR = re.compile(r"^[ \t]*set_cpu_governor[ \t]+([A-Za-z0-9_-]{1,32})[ \t]*$")
_THP_WRITE = re.compile(
    r"""^[^#]*?(?:echo|printf)\s+(?:-[ne]+\s+)?['"]?([\w.+-]+)['"]?\s*(?:>+\s*|\|\s*tee\s+"""
    r"""(?:-a\s+)?)['"]?/sys/kernel/mm/(?:redhat_)?transparent_hugepage/(enabled|defrag)\b""")
_FUNCTION = re.compile(r"^[ \t]*([A-Za-z_][A-Za-z0-9_]{0,63})[ \t]*\(\)[ \t]*\{?", re.MULTILINE)


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


def ktune_functions(root: HostRoot) -> tuple[frozenset[str], str]:
    """The functions the host's tune-profiles/functions defines, and what said so."""
    try:
        text = root.read_optional(TUNED02_FUNCTIONS, 1024 * 1024)
    except FactError:
        text = None
    if text is None:
        return TUNED_1_0_FUNCTIONS, (f"tuned's 1.0 branch (RHEL 6), {TUNED02_FUNCTIONS} being "
                                     "unreadable or missing")
    return frozenset(_FUNCTION.findall(text)), TUNED02_FUNCTIONS


def _thp_writes(path: str, script: str, functions: frozenset[str], source: str
                ) -> tuple[list[KtuneThpWrite], list[str]]:
    writes: list[KtuneThpWrite] = []
    undefined: list[str] = []

    def call(name: str, line: int, value: str) -> None:
        if name in functions:
            writes.append(KtuneThpWrite("enabled", value, f"{path}:{line}", name))
        else:
            undefined.append(f"{path}:{line} calls {name}, which {source} does not define: "
                             "it sets nothing")

    for number, line in _start_lines(script):
        if re.match(KTUNE_ENABLES_THP, line):
            call("enable_transparent_hugepages", number, "always")
        elif match := re.match(KTUNE_SETS_THP, line):
            call("set_transparent_hugepages", number, match.group(1))
        elif re.match(r"^[ \t]*set_transparent_hugepages\b", line):
            undefined.append(f"{path}:{number}: set_transparent_hugepages without a plain "
                             "value: not counted")
        elif match := _THP_WRITE.match(line):
            writes.append(KtuneThpWrite(match.group(2), match.group(1), f"{path}:{number}", ""))
    return writes, undefined


def _write_back_disks(root: HostRoot) -> frozenset[str]:
    """Disks whose SCSI cache_type says "write back" (_devices_no_write_back_cache)."""
    found = set()
    for disk in root.listdir("/sys/block"):
        base = f"/sys/block/{disk}/{SCSI_CACHE_TYPE}"
        try:
            for address in root.listdir(base):
                text = root.read_optional(f"{base}/{address}/cache_type", 4096) or ""
                if "write back" in text:
                    found.add(disk)
        except FactError:
            continue
    return frozenset(found)


def ktune_sysctl_files(root: HostRoot, config: dict[str, str]) -> list[str]:
    """ktune.init's KTUNE_FILES: $SYSCTL when it exists, then, with USE_KTUNE_D="yes", each
    /etc/ktune.d/*.conf as ``LANG=C ls`` lists them (tuned branch 1.0, ktune/ktune.init
    lines 57-67)."""
    files = [config["SYSCTL"]] if config.get("SYSCTL") and root.exists(config["SYSCTL"]) else []
    if config.get("USE_KTUNE_D") == "yes":
        files += sorted(root.glob_files(KTUNE_SCRIPTS, ".conf"))
    return files


def ktune_scripts(root: HostRoot, sysctl_files: list[str]) -> list[str]:
    """The scripts ktune.init runs, in its order: for each of KTUNE_FILES,
    ``call_script "${file%.conf}.sh" start``, which runs the script only when it is
    executable (ktune/ktune.init lines 128-143, 160-165). A script with no .conf beside it
    never runs."""
    scripts = [(path[:-len(".conf")] if path.endswith(".conf") else path) + ".sh"
               for path in sysctl_files]
    return [script for script in scripts if root.is_executable(script)]


def ktune_config(root: HostRoot) -> tuple[dict[str, str] | None, str]:
    """/etc/sysconfig/ktune's assignments, and a problem reading it; None where it is
    missing, when ktune.init exits at once ("does not exist", exit 5). Unreadable: taken as
    the shipped file, and said."""
    try:
        text = root.read_optional(KTUNE_SYSCONFIG, 65536)
    except FactError as exc:
        return {**KTUNE_SHIPPED_CONFIG}, f"{exc}: ktune's settings taken as shipped"
    return (None if text is None else shell_assignments(text)), ""


def collect_ktune(root: HostRoot, rc_dirs: tuple[str, ...] = SYSV_RUNLEVEL_DIRS) -> Ktune:
    """What ktune does at boot, where the boot's run level (``rc_dirs``) starts it."""
    enabled = next(iter(sysv_start_links(root.listdir, KTUNE_SYSV, rc_dirs)), "")
    config, problem = ktune_config(root) if enabled else (None, "")
    if config is None:
        return Ktune("", ())
    sysctl_files = ktune_sysctl_files(root, config)
    functions, source = ktune_functions(root)
    found: dict[str, list[str]] = {KTUNE_ENABLES_THP: [], KTUNE_NOBARRIER: [],
                                   KTUNE_DISABLES_BARRIERS: []}
    defines = {KTUNE_ENABLES_THP: "enable_transparent_hugepages",
               KTUNE_NOBARRIER: "remount_partitions",
               KTUNE_DISABLES_BARRIERS: "disable_disk_barriers"}
    factors: list[tuple[str, float]] = []
    latency: tuple[str, int] | None = None
    thp: list[KtuneThpWrite] = []
    governor: tuple[str, str] | None = None
    undefined: list[str] = []
    for path in ktune_scripts(root, sysctl_files):
        try:
            text = root.read_optional(path, 1024 * 1024) or ""
        except FactError:  # unreadable: it may do either; assume it does
            text = "set_transparent_hugepages always\nenable_transparent_hugepages\n" \
                   "remount_partitions nobarrier\ndisable_disk_barriers"
        writes, calls = _thp_writes(path, text, functions, source)
        thp += writes
        undefined += calls
        for number, line in _start_lines(text):
            if match := _SET_GOVERNOR.match(line):
                governor = (match.group(1), f"{path}:{number}")
        for pattern, scripts in found.items():
            if defines[pattern] in functions and re.search(pattern, text, re.MULTILINE):
                scripts.append(path)
        factors += [(path, float(match.group(1))) for match in
                    re.finditer(KTUNE_READAHEAD_FACTOR, _start_function(text), re.MULTILINE)]
        for match in re.finditer(KTUNE_PMQOS_LATENCY, _start_function(text), re.MULTILINE):
            latency = (path, int(match.group(1)))
    conditional = tuple(found[KTUNE_DISABLES_BARRIERS])
    return Ktune(enabled, tuple(found[KTUNE_ENABLES_THP]), tuple(found[KTUNE_NOBARRIER]),
                 config.get("ELEVATOR", "").strip(), tuple(factors), latency, tuple(thp),
                 tuple(undefined), governor, conditional,
                 _write_back_disks(root) if conditional else frozenset(),
                 tuple(sysctl_files), config.get("SYSCTL_POST", ""),
                 (problem,) if problem else ())
