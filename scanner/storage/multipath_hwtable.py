"""multipath-tools' built-in hardware table as the host has it: the host's own
``multipath -t`` where a snapshot, a sosreport or a live scan recorded it (it holds the
table the installed build carries, backports included), else the table of the
multipath-tools version the host's RHEL release ships (rules/multipath_hwtable.json, from
libmultipath/hwtable.c at that version's tag)."""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from typing import Any

from ...rules.host_layout import (
    MULTIPATH_CONFIG_DUMP,
    MULTIPATH_HWTABLE_FILE,
    OS_RELEASE,
    REDHAT_RELEASE,
    release_key,
)
from ...rules.loader import RULES_DIR
from .. import host_regex
from .. import linear_re as re
from ..parsers.multipath_conf import MultipathConfError, parse_multipath_conf
from ..parsers.simple import shell_assignments
from ..sources.hostroot import FactError, HostRoot

DUMP_LIMIT = 4 << 20
# multipath-tools' own table holds 59 to 123 entries (0.4.9 to 0.9.9); a recorded one with
# many times that is no build's, and each entry is two host expressions run per lookup
MAX_DEVICES = 512
COMMAND_TIMEOUT = 10
# Rebuilds carry RHEL's multipath-tools; ID or ID_LIKE names the family (os-release(5)).
RHEL_FAMILY = {"rhel", "centos", "rocky", "almalinux", "ol", "redhat"}


@dataclass(frozen=True)
class HwEntry:
    vendor: str
    product: str
    revision: str | None  # sascheck does not read a path's revision: such an entry is unsure
    settings: tuple[tuple[str, str], ...]  # path_grouping_policy, prio as the entry sets them

    def get(self, key: str) -> str | None:
        return dict(self.settings).get(key)


@dataclass(frozen=True)
class HwTable:
    entries: tuple[HwEntry, ...]
    # find_hwe: "first" (0.4.9: the first matching entry decides, all its options) or
    # "last_setting" (0.7 on: of every matching entry, the last that sets the option).
    match: str
    source: str
    # Entries of the tables of later multipath-tools versions: RHEL backports table entries,
    # so an array only a later table knows cannot be judged from an upstream tag.
    later: tuple[HwEntry, ...] = ()


@dataclass(frozen=True)
class TableSetting:
    value: str | None  # None: no entry sets it (the defaults section, then the default, do)
    source: str
    unsure: str = ""  # why the table's answer may not be the host's


def _matches(pattern: str, value: str) -> bool:
    try:  # find_hwe matches vendor and product as unanchored POSIX extended expressions
        return host_regex.search(pattern, value)
    except host_regex.HostRegexError:
        return False


def _matching(entries: tuple[HwEntry, ...], vendor: str, product: str) -> list[HwEntry]:
    return [entry for entry in entries
            if _matches(entry.vendor, vendor) and _matches(entry.product, product)]


def table_setting(table: HwTable, key: str, vendor: str, product: str) -> TableSetting:
    """What the built-in table gives a map of ``vendor`` ``product`` paths for ``key``."""
    matching = _matching(table.entries, vendor, product)
    if table.match == "first":
        matching = matching[:1]
    setting = next((entry for entry in reversed(matching) if entry.get(key)), None)
    if any(entry.revision for entry in matching):
        return TableSetting(None, table.source, "an entry of the table also matches the "
                                                "paths' revision, which sascheck does not read")
    if setting is not None:
        return TableSetting(setting.get(key), f"{table.source}: {setting.vendor} "
                                              f"{setting.product}")
    later = next((entry for entry in reversed(_matching(table.later, vendor, product))
                  if entry.get(key)), None)
    if later is not None:
        return TableSetting(None, table.source,
                            f"a later multipath-tools' table sets {key} {later.get(key)} for "
                            f"{later.vendor} {later.product}, and RHEL backports such entries: "
                            f"record the host's own table (multipath -t)")
    return TableSetting(None, f"{table.source}: no entry for {vendor} {product}")


@functools.cache
def _shipped() -> dict[str, Any]:
    with open(RULES_DIR / MULTIPATH_HWTABLE_FILE, encoding="utf-8") as handle:
        data: dict[str, Any] = json.load(handle)
    return data


def _entries(rows: list[dict[str, str | None]]) -> tuple[HwEntry, ...]:
    return tuple(HwEntry(row["vendor"] or "", row["product"] or ".*", row["revision"],
                         tuple((key, value) for key, value in
                               (("path_grouping_policy", row["pgpolicy"]),
                                ("prio", row["prio"])) if value))
                 for row in rows)


def shipped_table(release: str) -> HwTable | None:
    """The table of the multipath-tools RHEL ``release`` (its major number) ships."""
    data = _shipped()
    releases: dict[str, str] = data["releases"]
    tables: dict[str, dict[str, Any]] = data["tables"]
    version = releases.get(release)
    if version is None:
        return None
    later = tuple(entry for other, table in tables.items()
                  if _version(other) > _version(version) for entry in _entries(table["entries"]))
    table = tables[version]
    return HwTable(_entries(table["entries"]), table["match"],
                   f"multipath-tools {version}'s built-in table (RHEL {release} ships it; "
                   f"hwtable.c at {table['commit'][:12]})", later)


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in text.split("."))


def rhel_release(root: HostRoot) -> str | None:
    """The RHEL major release of the host or of the rebuild it is: os-release (RHEL 7 on),
    else redhat-release (RHEL 6 has no os-release)."""
    try:
        text = root.read_optional(OS_RELEASE, 64 * 1024)
        if text is None:
            legacy = root.read_optional(REDHAT_RELEASE, 4096) or ""
            found = re.match(r"(?:Red Hat Enterprise Linux|CentOS|Scientific Linux|Oracle "
                             r"Linux)\b.* release ([0-9]+)", legacy)
            return found.group(1) if found else None
    except FactError:
        return None
    fields = shell_assignments(text)
    family = {fields.get("ID", "")} | set(fields.get("ID_LIKE", "").split())
    # VERSION_ID, or RHEL_VERSION on RHEL CoreOS, whose VERSION_ID is OpenShift's release
    major = fields.get(release_key(fields.get("ID", "")), "").split(".")[0]
    return major if family & RHEL_FAMILY and major.isdigit() else None


def _live_dump() -> str | None:
    binary = shutil.which("multipath")
    if binary is None or os.geteuid() != 0:
        return None
    try:
        done = subprocess.run([binary, "-t"], capture_output=True, text=True,
                              timeout=COMMAND_TIMEOUT, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return done.stdout if done.returncode == 0 and done.stdout.strip() else None


def host_table(root: HostRoot) -> HwTable | str:
    """The built-in table that decides on this host, or why none is known."""
    problem = ""
    try:
        dump = root.read_optional(MULTIPATH_CONFIG_DUMP, DUMP_LIMIT)
        source = f"{MULTIPATH_CONFIG_DUMP} (multipath -t)"
        if dump is None and root.root == "/" and root.whole_system:
            dump, source = _live_dump(), "multipath -t on this host"
        if dump is not None:
            conf = parse_multipath_conf(dump)
            if len(conf.devices) > MAX_DEVICES:
                raise MultipathConfError(
                    f"{len(conf.devices)} devices, more than any multipath-tools build's "
                    f"table (at most {MAX_DEVICES} are read)")
            rows = [HwEntry(device.get("vendor", ""), device.get("product", ".*"),
                            device.get("revision"),
                            tuple((key, device[key]) for key in ("path_grouping_policy",
                                                                 "prio") if key in device))
                    for device in conf.devices if device.get("vendor")]
            if rows:
                # find_hwe as the release's multipath-tools does it (0.4.9: first match)
                release = rhel_release(root)
                shipped = shipped_table(release) if release else None
                return HwTable(tuple(rows), shipped.match if shipped else "last_setting",
                               source)
            problem = f"{source} lists no devices; "
    except (FactError, MultipathConfError) as exc:
        problem = f"{MULTIPATH_CONFIG_DUMP}: {exc}; "
    release = rhel_release(root)
    table = shipped_table(release) if release else None
    if table is None:
        return (f"{problem}no multipath -t was recorded, and {OS_RELEASE} names no RHEL "
                "release whose multipath-tools sascheck knows")
    # A recorded table that could not be read is said where the release's is used instead.
    return dataclasses.replace(table, source=problem + table.source) if problem else table
