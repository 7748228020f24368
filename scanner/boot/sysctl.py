"""The sysctl values a boot ends with, applied in the order the host's software applies them.

1. At early boot: systemd-sysctl (RHEL 7+: ``SYSCTL_DIRS`` merged by file name, in name
   order, ``/etc/sysctl.conf`` through the ``99-sysctl.conf`` link or, without it, last),
   or RHEL 5/6 initscripts' ``apply_sysctl`` (``/etc/sysctl.conf``, then ``/etc/sysctl.d``).
2. RHEL 5/6 ktune, when started at boot: its ``SYSCTL`` file, ``/etc/ktune.d/*.conf``, then
   ``SYSCTL_POST`` (``/etc/sysconfig/ktune``; ``/etc/sysctl.conf`` by default).
3. tuned 2.x, when enabled: the active chain's ``[sysctl]``, then, with ``reapply_sysctl``
   (the default, from tuned 2.7), the system files again: ``/run/sysctl.d`` and
   ``/etc/sysctl.d`` (``/run`` hiding ``/etc``; before tuned 2.13 the ``/usr`` and ``/lib``
   directories too) in name order, then ``/etc/sysctl.conf`` (plugin_sysctl.py).

Sample (sysctl.d(5))::

    # /etc/sysctl.d/90-sas.conf
    vm.dirty_ratio = 40
    -vm/dirty_background_ratio=10
"""

from __future__ import annotations

import fnmatch
import posixpath
from dataclasses import dataclass, field

from ...rules.host_layout import (
    KERNEL_SYSCTL_DEFAULTS,
    SYSCTL_CONF,
    SYSCTL_DIRS,
    TUNED_MAIN_CONF,
    TUNED_REAPPLY_DIRECT_SINCE,
    TUNED_REAPPLY_EXCLUDE_SINCE,
    TUNED_REAPPLY_SLASH_SWAP_SINCE,
    TUNED_REAPPLY_SYSCTL_ALL_DIRS,
    TUNED_REAPPLY_SYSCTL_DIRS,
    TUNED_REAPPLY_SYSCTL_ETC_ONLY_SINCE,
    TUNED_REAPPLY_SYSCTL_SINCE,
    TUNED_TRUE_WORDS,
)
from .. import linear_re as re
from ..sources.hostroot import FactError, HostRoot
from ..tuned.active import release_text
from ..tuned.ktune import Ktune
from .dropins import merged
from .loader import BootSource
from .target import boots_with_systemd


@dataclass(frozen=True)
class SysctlLine:
    key: str  # dotted: vm.dirty_ratio
    value: str
    source: str  # file:line
    written: str = ""  # the key as the file writes it ("-vm/dirty_ratio"), for tuned


@dataclass
class SysctlBoot:
    """Each stage's settings in the order applied; a later one overrides an earlier one."""
    systemd: bool
    early: list[SysctlLine] = field(default_factory=list)
    ktune: list[SysctlLine] = field(default_factory=list)  # only when ktune starts at boot
    reapply: list[SysctlLine] = field(default_factory=list)  # tuned's reapply_sysctl files
    reapply_sysctl: bool = True
    reapply_source: str = ""
    # Lines of the reapplied files tuned skips, with why (its release's parsing)
    reapply_skipped: list[tuple[SysctlLine, str]] = field(default_factory=list)


def parse_sysctl(text: str, path: str) -> list[SysctlLine]:
    """``key = value`` lines (sysctl.d(5)): ``#`` and ``;`` comments, ``/`` or ``.`` as the
    separator, a leading ``-`` (ignore a failure) dropped."""
    found = []
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        written, sep, value = line.partition("=")
        written = written.strip()
        key = written.lstrip("-").strip()
        if not sep or not key:
            continue
        # A key written with slashes uses dots for slashes and slashes for dots.
        if "/" in key:
            key = key.replace(".", "\0").replace("/", ".").replace("\0", "/")
        found.append(SysctlLine(key, value.strip(), f"{path}:{number}", written))
    return found


def kernel_default(key: str, kernel: str) -> str | None:
    for prefix, value in KERNEL_SYSCTL_DEFAULTS.get(key, ()):
        if kernel.startswith(prefix):
            return value
    return None


# The kernel writes sysctl.KEY=VALUE (or sysctl/KEY=VALUE) boot parameters to /proc/sys before
# init starts (fs/proc/proc_sysctl.c, process_sysctl_arg and do_sysctl_args, commit
# 3db978d480e2, Linux 5.8): '.' and '/' both separate the key, the last of a key wins, and
# systemd-sysctl, ktune and tuned apply over it. Older kernels ignore them; whether RHEL 8's
# 4.18 carries the backport is not told by any source sascheck has read.
SYSCTL_ARGS_SINCE = (5, 8)


def kernel_line_sysctl(entries: list[BootSource], kernel: str, key: str
                       ) -> tuple[list[SysctlLine], str]:
    """The value the next boot's kernel line sets ``key`` to, as a line applied before every
    other source, and why it cannot be told ("" when it can, or nothing sets it)."""
    found: list[tuple[str, str | None]] = []
    for entry in entries:
        value = None
        for arg in entry.args:
            name, sep, text = arg.partition("=")
            if sep and name[:7] in ("sysctl.", "sysctl/") and name[7:].replace("/", ".") == key:
                value = text[1:-1] if len(text) > 1 and text[0] == text[-1] == '"' else text
        found.append((entry.path, value))
    setting = [(path, value) for path, value in found if value is not None]
    if not setting:
        return [], ""
    match = re.match(r"([0-9]+)\.([0-9]+)", kernel)
    release = (int(match.group(1)), int(match.group(2))) if match else None
    if release is None or ".el8" in kernel:
        return [], (f"the kernel line sets sysctl.{key} ({setting[0][0]}), and whether "
                    f"kernel {kernel or '(unknown)'} applies sysctl.* boot parameters (Linux "
                    "5.8 on; RHEL 8's 4.18 backport unknown) cannot be told")
    if release < SYSCTL_ARGS_SINCE:
        return [], ""  # the kernel ignores them (before Linux 5.8)
    if len({value for _, value in found}) > 1:
        return [], f"the boot entries set sysctl.{key} differently"
    path, value = setting[0]
    return [SysctlLine(key, value or "", f"kernel line sysctl.{key} ({path})")], ""


class _Reader:
    def __init__(self, root: HostRoot, problems: list[str]) -> None:
        self.root = root
        self.problems = problems

    def text(self, path: str) -> str:
        """An optional file's text; '' when missing, noted when unreadable."""
        try:
            return self.root.read_optional(path, 1024 * 1024) or ""
        except FactError as exc:
            self.problems.append(str(exc))
            return ""

    def lines(self, path: str) -> list[SysctlLine]:
        return parse_sysctl(self.text(path), path)

    def merged(self, directories: tuple[str, ...]) -> dict[str, str]:
        return merged(self.root, directories, ".conf", self.problems)

    def in_order(self, files: dict[str, str]) -> list[SysctlLine]:
        return [line for name in sorted(files) for line in self.lines(files[name])]


def _sysctl_post_files(root: HostRoot, words: str, problems: list[str]) -> list[str]:
    """The files ktune.init applies after its own (``for f in $SYSCTL_POST``: the words,
    each glob expanded as the shell does, sorted; RHEL 6's ktune.sysconfig says
    "/etc/sysctl.conf /etc/sysctl.d/*", tuned commit e2b78c6)."""
    files: list[str] = []
    for word in words.split()[:64]:
        if not word.startswith("/") or not any(c in word for c in "*?["):
            files.append(word)
            continue
        directory, pattern = posixpath.split(word)
        if any(c in directory for c in "*?["):
            problems.append(f"SYSCTL_POST {word!r}: a pattern in a directory is not followed")
            continue
        try:
            names = root.listdir(directory)
        except FactError as exc:
            problems.append(str(exc))
            continue
        files += [posixpath.join(directory, name) for name in names
                  if not name.startswith(".") and fnmatch.fnmatchcase(name, pattern)]
    return files


def _links_to_sysctl_conf(root: HostRoot, path: str) -> bool:
    try:
        return root.is_symlink(path) and root.resolve(path) == SYSCTL_CONF
    except FactError:
        return False


def collect_sysctl_boot(root: HostRoot, ktune: Ktune | None, problems: list[str],
                        tuned_version: tuple[int, int, int] | None = None,
                        tuned_version_source: str = "") -> SysctlBoot:
    """What each stage applies; ``tuned_version`` (None: unknown, taken as current) decides
    whether and from where tuned re-applies the system files."""
    reader = _Reader(root, problems)
    boot = SysctlBoot(systemd=boots_with_systemd(root))
    if boot.systemd:
        files = reader.merged(SYSCTL_DIRS)
        linked = any(_links_to_sysctl_conf(root, path) for path in files.values())
        boot.early = reader.in_order(files) + ([] if linked else reader.lines(SYSCTL_CONF))
    else:
        boot.early = reader.lines(SYSCTL_CONF) + reader.in_order(reader.merged(SYSCTL_DIRS[:1]))
    if ktune is not None:  # started at boot (scanner/tuned/ktune.py read what it applies)
        problems.extend(ktune.problems)
        boot.ktune = [line for path in ktune.sysctl_files for line in reader.lines(path)]
        for path in _sysctl_post_files(root, ktune.sysctl_post, problems):
            boot.ktune += reader.lines(path)
    if tuned_version is not None and tuned_version[:2] < TUNED_REAPPLY_SYSCTL_SINCE:
        boot.reapply_sysctl = False
        boot.reapply_source = (f"tuned {release_text(tuned_version)} ({tuned_version_source}) "
                               "re-applies no sysctl files; reapply_sysctl came in 2.7")
        return boot
    main = {line.key: line for line in reader.lines(TUNED_MAIN_CONF)}  # key = value lines
    if "reapply_sysctl" in main:
        boot.reapply_sysctl = main["reapply_sysctl"].value.strip().lower() in TUNED_TRUE_WORDS
        boot.reapply_source = main["reapply_sysctl"].source
    etc_only = (tuned_version is None
                or tuned_version[:2] >= TUNED_REAPPLY_SYSCTL_ETC_ONLY_SINCE)
    directories = TUNED_REAPPLY_SYSCTL_DIRS if etc_only else TUNED_REAPPLY_SYSCTL_ALL_DIRS
    lines = reader.in_order(reader.merged(directories)) + reader.lines(SYSCTL_CONF)
    excluded = main.get("reapply_sysctl_exclude")
    for line in lines:
        why = _reapply_skips(line, tuned_version, excluded)
        if why:
            boot.reapply_skipped.append((line, why))
        else:
            boot.reapply.append(line)
    return boot


def _reapply_skips(line: SysctlLine, version: tuple[int, int, int] | None,
                   excluded: SysctlLine | None) -> str:
    """Why tuned's reapply_sysctl does not apply ``line`` at this release ("" where it
    does); an unknown release is taken as the newest."""
    def since(release: tuple[int, int]) -> bool:
        return version is None or version[:2] >= release

    if since(TUNED_REAPPLY_DIRECT_SINCE) and line.written.startswith("-"):
        return (f"tuned {release_text(version)} re-applies {line.source} as /proc/sys/"
                f"{line.written.replace('.', '/')}, which does not exist (the leading '-' is "
                "systemd-sysctl's, not tuned's): skipped")
    if since(TUNED_REAPPLY_SLASH_SWAP_SINCE) and "/" in line.written:
        swapped = line.written.translate(str.maketrans("./", "/."))
        return (f"tuned {release_text(version)} re-applies {line.source} as /proc/sys/"
                f"{swapped}, which does not exist (it swaps the key's dots and slashes): skipped")
    if excluded is not None and since(TUNED_REAPPLY_EXCLUDE_SINCE):
        # GlobalConfig.get_list: split on ',' or ';', each stripped; fnmatch on the key
        patterns = [p.strip() for p in re.split(r"[,;]", excluded.value) if p.strip()]
        if any(fnmatch.fnmatch(line.written, pattern) for pattern in patterns):
            return (f"tuned-main.conf's reapply_sysctl_exclude ({excluded.source}) keeps "
                    f"{line.source} from being re-applied")
    return ""
