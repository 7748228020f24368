"""The SAS accounts and what sets their resource limits: pam_limits' files, the systemd
services that run as them (and systemd's defaults), and their running processes."""

from __future__ import annotations

import posixpath
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...rules.host_layout import (
    GROUP,
    LIMITS_CONF,
    LIMITS_D,
    NR_OPEN,
    NR_OPEN_DEFAULT,
    PAM_LIMITS_MODULES,
    PAM_NR_OPEN_MARK,
    PASSWD,
    PROC,
    SYSTEMD_SYSTEM_CONF,
    SYSTEMD_SYSTEM_CONF_DIRS,
    SYSTEMD_UNIT_DIRS,
)
from .. import linear_re as re
from ..boot.dropins import merged
from ..parsers.simple import ascii_int
from ..sources.hostroot import FactError, HostRoot

MAX_PROCESSES = 65536  # /proc entries looked at: a bound on a host with a huge process table
ACCOUNT_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,31}")  # sas_accounts' pattern


@dataclass(frozen=True)
class Account:
    name: str
    uid: int | None  # None: not in /etc/passwd (a directory service account)
    gid: int | None
    groups: frozenset[str] = frozenset()  # every group naming it, and its primary group


@dataclass(frozen=True)
class PamLine:
    domain: str
    type: str  # soft | hard | -
    item: str
    value: str
    source: str  # FILE:LINE
    # "DOMAIN -" (two words, the second starting with "-"): for an account it names,
    # pam_limits stops reading and sets no limit at all (parse_config_file's PAM_IGNORE)
    no_limit: bool = False


@dataclass(frozen=True)
class ServiceLimits:
    unit: str
    user: str
    settings: dict[str, tuple[str, str]]  # directive -> (value, FILE:LINE), the last set


@dataclass(frozen=True)
class ProcessLimits:
    pid: int
    name: str
    user: str
    rows: dict[str, tuple[str, str]]  # "Max open files" -> (soft, hard)


@dataclass
class LimitsFacts:
    accounts: list[Account] = field(default_factory=list)
    accounts_source: str = ""
    pam: list[PamLine] = field(default_factory=list)
    services: list[ServiceLimits] = field(default_factory=list)
    defaults: dict[str, tuple[str, str]] = field(default_factory=dict)  # DefaultLimit*=
    processes: list[ProcessLimits] | None = None  # None: no running system to read
    # /proc/1/limits: what systemd's services and so sessions inherit where nothing sets a
    # limit (nproc: the kernel sizes init's from memory). Empty: not a running system.
    init: dict[str, tuple[str, str]] = field(default_factory=dict)
    problems: list[str] = field(default_factory=list)
    # fs.nr_open now and where it was read; the kernel's default where not a running system
    nr_open: tuple[int, str] = (NR_OPEN_DEFAULT, "the kernel's default (fs/file.c)")
    # Whether the host's pam_limits.so gives an unlimited nofile as fs.nr_open (True) or asks
    # the kernel for unlimited (False: refused, and the session with it); a str: why it
    # cannot be told
    nofile_unlimited_as_nr_open: bool | str = "pam_limits.so was not read"


def _read(root: HostRoot, path: str, problems: list[str]) -> str | None:
    try:
        return root.read_optional(path, 4 * 1024 * 1024)
    except FactError as exc:
        problems.append(str(exc))
        return None


def _passwd(root: HostRoot, problems: list[str]) -> dict[str, tuple[int | None, int | None]]:
    """/etc/passwd: account name -> (uid, gid), the first line of a name."""
    users: dict[str, tuple[int | None, int | None]] = {}
    for line in (_read(root, PASSWD, problems) or "").splitlines():
        fields = line.split(":")
        if len(fields) >= 4:
            users.setdefault(fields[0], (ascii_int(fields[2]), ascii_int(fields[3])))
    return users


def _accounts(root: HostRoot, names: Sequence[str],
              users: Mapping[str, tuple[int | None, int | None]],
              problems: list[str]) -> list[Account]:
    groups: dict[str, set[str]] = {name: set() for name in names}
    group_ids: dict[int, str] = {}
    for line in (_read(root, GROUP, problems) or "").splitlines():
        fields = line.split(":")
        if len(fields) < 4:
            continue
        gid = ascii_int(fields[2])
        if gid is not None:
            group_ids.setdefault(gid, fields[0])
        for member in fields[3].split(","):
            if member.strip() in groups:
                groups[member.strip()].add(fields[0])
    found = []
    for name in names:
        uid, gid = users.get(name, (None, None))
        primary = {group_ids[gid]} if gid is not None and gid in group_ids else set()
        found.append(Account(name, uid, gid, frozenset(groups[name] | primary)))
    return found


def owners(root: HostRoot, paths: Sequence[str],
           users: Mapping[str, tuple[int | None, int | None]]) -> list[str]:
    """The accounts (not root) owning ``paths``: SAS's configuration is its account's."""
    names: dict[int, str] = {}
    for name, (uid, _) in users.items():
        if uid is not None:
            names.setdefault(uid, name)
    found: list[str] = []
    for path in paths:
        try:
            uid = root.owner(path)
        except FactError:
            continue
        if uid and uid in names and names[uid] not in found and ACCOUNT_NAME.fullmatch(
                names[uid]):
            found.append(names[uid])
    return found


def parse_limits(text: str, path: str) -> list[PamLine]:
    """The lines pam_limits acts on, as parse_config_file reads them (linux-pam 1.3.1 to
    1.5.1, modules/pam_limits/pam_limits.c lines 806-955 at v1.5.1): '#' starts a comment
    anywhere; sscanf takes up to four words (more are ignored), the type in lower case;
    four words are a limit (item and value in lower case too), two whose second starts
    with '-' a no-limit line; other shapes are skipped."""
    found = []
    for number, raw in enumerate(text.splitlines(), start=1):
        words = raw.split("#", 1)[0].split()
        if len(words) >= 4:
            domain, kind, item, value = words[:4]
            found.append(PamLine(domain, kind.lower(), item.lower(), value.lower(),
                                 f"{path}:{number}"))
        elif len(words) == 2 and words[1].startswith("-"):
            found.append(PamLine(words[0], "-", "", "", f"{path}:{number}", no_limit=True))
    return found


def _pam_lines(root: HostRoot, problems: list[str]) -> list[PamLine]:
    lines = parse_limits(_read(root, LIMITS_CONF, problems) or "", LIMITS_CONF)
    files = merged(root, (LIMITS_D,), ".conf", problems)
    for name in sorted(files):
        lines += parse_limits(_read(root, files[name], problems) or "", files[name])
    return lines


def unit_settings(text: str, path: str, section: str,
                  settings: dict[str, tuple[str, str]]) -> None:
    """``Key=value`` lines of one section of a unit file, into ``settings`` (a later one
    wins; an empty value resets the key)."""
    current, pending, start = "", "", 0
    for number, raw in enumerate(text.splitlines(), start=1):
        if raw.endswith("\\"):  # continued on the next line (systemd.syntax(7))
            pending, start = pending + raw[:-1] + " ", start or number
            continue
        line, pending = (pending + raw).strip(), ""
        first, start = start or number, 0
        if not line or line[0] in "#;":
            continue
        if line.startswith("["):
            current = line.strip("[]").strip()
            continue
        key, sep, value = line.partition("=")
        if sep and current == section:
            if value.strip():
                settings[key.strip()] = (value.strip(), f"{path}:{first}")
            else:
                settings.pop(key.strip(), None)


def _services(root: HostRoot, accounts: Sequence[str], problems: list[str]
              ) -> list[ServiceLimits]:
    """Each service unit that runs as a SAS account, with its settings, drop-ins applied."""
    found = []
    units = merged(root, SYSTEMD_UNIT_DIRS, ".service", problems)
    for name in sorted(units):
        text = _read(root, units[name], problems)
        dropins = merged(root, tuple(f"{d}/{name}.d" for d in SYSTEMD_UNIT_DIRS), ".conf", [])
        if not text or ("User" not in text and not dropins):  # User= may be a drop-in's
            continue
        settings: dict[str, tuple[str, str]] = {}
        unit_settings(text, units[name], "Service", settings)
        for dropin in sorted(dropins):
            unit_settings(_read(root, dropins[dropin], problems) or "", dropins[dropin],
                          "Service", settings)
        user = settings.get("User", ("", ""))[0]
        if user in accounts:
            found.append(ServiceLimits(name, user, settings))
    return found


def _defaults(root: HostRoot, problems: list[str]) -> dict[str, tuple[str, str]]:
    settings: dict[str, tuple[str, str]] = {}
    unit_settings(_read(root, SYSTEMD_SYSTEM_CONF, problems) or "", SYSTEMD_SYSTEM_CONF,
                  "Manager", settings)
    dropins = merged(root, SYSTEMD_SYSTEM_CONF_DIRS, ".conf", problems)
    for name in sorted(dropins):
        unit_settings(_read(root, dropins[name], problems) or "", dropins[name], "Manager",
                      settings)
    return settings


_LIMIT_ROW = re.compile(r"^(Max [a-z ]+?)\s{2,}(\S+)\s+(\S+)")


def limit_rows(text: str) -> dict[str, tuple[str, str]]:
    """/proc/PID/limits: row name -> (soft, hard)."""
    return {match[1]: (match[2], match[3]) for line in text.splitlines()
            if (match := _LIMIT_ROW.match(line))}


def _processes(root: HostRoot, accounts: Sequence[Account]) -> list[ProcessLimits] | None:
    """The running processes of the SAS accounts and their limits; None where the root has
    no process table (an image, or a snapshot)."""
    if not root.exists(f"{PROC}/self") and not root.exists(f"{PROC}/1"):
        return None
    by_uid = {account.uid: account.name for account in accounts if account.uid is not None}
    found: list[ProcessLimits] = []
    try:
        pids = [name for name in root.listdir(PROC) if name.isdigit()][:MAX_PROCESSES]
    except FactError:
        return None
    for pid in sorted(pids, key=int):
        try:
            status = root.read_text(f"{PROC}/{pid}/status", 65536)
            limits = root.read_text(f"{PROC}/{pid}/limits", 65536)
        except FactError:
            continue  # gone, or not ours to read
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        uid = ascii_int((fields.get("Uid", "").split() or [""])[0])
        if uid not in by_uid:
            continue
        found.append(ProcessLimits(int(pid), fields.get("Name", "").strip(), by_uid[uid],
                                   limit_rows(limits)))
    return found


def collect_limits(root: HostRoot, values: Mapping[str, Any], config_files: Sequence[str]
                   ) -> LimitsFacts:
    facts = LimitsFacts()
    users = _passwd(root, facts.problems)
    named = [name for name in values.get("sas_accounts") or [] if name]
    if named:
        names, facts.accounts_source = named, "site value sas_accounts"
    else:
        names = owners(root, config_files, users)
        shown = (", ".join(posixpath.basename(path) for path in config_files[:3])
                 or "none found: name the accounts with sas_accounts")
        facts.accounts_source = f"owner of the SAS configuration ({shown})"
    if not names:
        return facts
    facts.accounts = _accounts(root, names, users, facts.problems)
    facts.pam = _pam_lines(root, facts.problems)
    facts.services = _services(root, names, facts.problems)
    facts.defaults = _defaults(root, facts.problems)
    facts.processes = _processes(root, facts.accounts)
    facts.init = limit_rows(_read(root, f"{PROC}/1/limits", facts.problems) or "")
    nr_open = ascii_int(_read(root, NR_OPEN, facts.problems) or "")
    if nr_open is not None:
        facts.nr_open = (nr_open, NR_OPEN)
    facts.nofile_unlimited_as_nr_open = _pam_module_maps_nr_open(root)
    return facts


def _pam_module_maps_nr_open(root: HostRoot) -> bool | str:
    """Whether the host's pam_limits.so reads fs.nr_open for an unlimited nofile."""
    for path in PAM_LIMITS_MODULES:
        try:
            if not root.probe(path):
                continue
            return PAM_NR_OPEN_MARK in root.read_bytes(path, 4 * 1024 * 1024)
        except FactError as exc:
            return f"{path} cannot be read ({exc})"
    return f"pam_limits.so is not in {', '.join(PAM_LIMITS_MODULES[:2])}"
