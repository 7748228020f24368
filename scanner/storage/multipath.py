"""dm-multipath as multipathd configures each map: the path grouping policy decided by
multipath.conf's precedence (multipaths, overrides, devices, the built-in hardware table,
defaults, multipath-tools' own default), after detect_pgpolicy (multipath-tools 0.9.6), which
groups by priority wherever every path of a map uses the ALUA prioritizer."""

from __future__ import annotations

import zlib
from dataclasses import dataclass

from ...rules.host_layout import (
    MULTIPATH_CONF,
    MULTIPATH_CONF_DIR,
    MULTIPATH_DEFAULT_GROUPING,
    MULTIPATH_MANPAGES,
)
from .. import host_regex
from ..parsers.multipath_conf import MultipathConf, MultipathConfError, parse_multipath_conf
from ..sources.hostroot import FactError, HostRoot
from ..unavailable import Unavailable
from .multipath_hwtable import HwTable, table_setting

KEY = "path_grouping_policy"
DETECT = "detect_pgpolicy"
DETECT_TPG = "detect_pgpolicy_use_tpg"
MANPAGE_LIMIT = 4 << 20  # bytes of the manual page read, before and after decompression


@dataclass(frozen=True)
class Grouping:
    policy: str | None  # None: only the built-in table decides, and sascheck cannot see it
    source: str


def collect_multipath(root: HostRoot) -> MultipathConf | Unavailable | None:
    """multipath.conf and its config_dir files merged; None where multipath.conf is absent."""
    try:
        text = root.read_optional(MULTIPATH_CONF, 1024 * 1024)
        if text is None:
            return None
        conf = parse_multipath_conf(text)
        directory = conf.defaults.get("config_dir", MULTIPATH_CONF_DIR)
        if directory.startswith("/"):
            for path in root.glob_files(directory, ".conf"):
                conf.merge(parse_multipath_conf(root.read_text(path, 1024 * 1024)))
    except FactError as exc:
        return Unavailable(str(exc))
    except MultipathConfError as exc:
        return Unavailable(f"{MULTIPATH_CONF}: {exc}")
    return conf


def knows_detect_pgpolicy(root: HostRoot) -> tuple[bool | None, str]:
    """Whether the installed multipath-tools has detect_pgpolicy (0.9.6, or a backport): its
    multipath.conf(5) documents the option. (None, why) where no manual page is installed
    (tsflags=nodocs) or it cannot be read."""
    for path in MULTIPATH_MANPAGES:
        try:
            if not root.exists(path):
                continue
            data = root.read_bytes(path, MANPAGE_LIMIT)
            if path.endswith(".gz"):
                data = zlib.decompressobj(wbits=31).decompress(data, MANPAGE_LIMIT)
        except (FactError, zlib.error) as exc:
            return None, f"{path}: {exc}"
        return DETECT.encode() in data, path
    return None, f"no {' or '.join(MULTIPATH_MANPAGES)}"


@dataclass(frozen=True)
class PathPriorities:
    """What detect_pgpolicy needs to know of a map's paths."""
    detects: bool | None  # the installed multipath-tools has detect_pgpolicy
    alua: bool | None  # every path reports ALUA (TPGS) in its INQUIRY data; None: not shown
    source: str  # where detects was read


def _device_entry(conf: MultipathConf, key: str, vendor: str,
                  product: str) -> dict[str, str] | None:
    """The last devices entry that matches the paths' vendor and product and sets ``key``
    (multipathd reads later entries over earlier ones)."""
    for entry in reversed(conf.devices):
        if (_matches(entry.get("vendor", "^$"), vendor)
                and _matches(entry.get("product", ".*"), product) and key in entry):
            return entry
    return None


def _setting(conf: MultipathConf, key: str, vendor: str, product: str) -> str | None:
    """A per-map option as select_detect_pgpolicy takes it (propsel.c): overrides, a
    matching devices entry, defaults (multipaths entries do not set it)."""
    if key in conf.overrides:
        return conf.overrides[key]
    entry = _device_entry(conf, key, vendor, product)
    return entry[key] if entry is not None else conf.defaults.get(key)


def _site_setting(conf: MultipathConf, key: str, wwid: str, vendor: str,
                  product: str) -> tuple[str, str] | None:
    """``key`` as multipath.conf sets it above the built-in table (propsel.c's mp_set_mpe,
    mp_set_ovr, mp_set_hwe for the user's entries): the multipaths entry for the wwid,
    overrides, a devices entry matching the paths; with where it was read."""
    for entry in reversed(conf.multipaths):
        if entry.get("wwid") == wwid and key in entry:
            return entry[key], f"{MULTIPATH_CONF} multipaths (wwid {wwid})"
    if key in conf.overrides:
        return conf.overrides[key], f"{MULTIPATH_CONF} overrides"
    device = _device_entry(conf, key, vendor, product)
    if device is not None:
        named = f"{device.get('vendor')} {device.get('product', '')}".rstrip()
        return device[key], f"{MULTIPATH_CONF} devices ({named})"
    return None


def _configured_prio(conf: MultipathConf, wwid: str, vendor: str, product: str,
                     table: HwTable | str) -> tuple[str, str] | None:
    """The prioritizer select_prio (propsel.c) takes from the configuration when detect_prio
    picks none: a multipaths entry, overrides, a devices entry (the user's, then the built-in
    table's), defaults; with where it was read. None: not known."""
    found = _site_setting(conf, "prio", wwid, vendor, product)
    if found is not None:
        return found
    if isinstance(table, str):
        return None  # the built-in table's prioritizer is not known
    built_in = table_setting(table, "prio", vendor, product)
    if built_in.unsure:
        return None
    if built_in.value is not None:
        return built_in.value, built_in.source
    if "prio" in conf.defaults:
        return conf.defaults["prio"], f"{MULTIPATH_CONF} defaults"
    return None


def _every_path_alua_or_sysfs(conf: MultipathConf, wwid: str, vendor: str, product: str,
                              paths: PathPriorities, table: HwTable | str) -> str | None:
    """Why every path of the map uses the alua or sysfs prioritizer (verify_alua_prio), or
    None where they do not or sascheck cannot tell. detect_prio (on by default) gives a path
    with TPGS in its INQUIRY data alua (or sysfs); any other path takes the configured
    prioritizer, and a configured alua on a path without TPGS falls back to const."""
    detect_prio = (_setting(conf, "detect_prio", vendor, product) or "yes") == "yes"
    if detect_prio and paths.alua:
        return ("every path reports ALUA in its SCSI INQUIRY data (TPGS), so detect_prio "
                "gives each the alua prioritizer")
    configured = _configured_prio(conf, wwid, vendor, product, table)
    if configured is None:
        return None
    prio, where = configured
    if prio == "sysfs":
        return f"every path uses prio sysfs ({where})"
    if prio == "alua" and paths.alua:
        return f"every path uses prio alua ({where}) and reports ALUA (TPGS)"
    return None


def _detected(conf: MultipathConf, wwid: str, vendor: str, product: str,
              paths: PathPriorities, table: HwTable | str) -> Grouping | None:
    """select_pgpolicy's first step (propsel.c, 0.9.6): with detect_pgpolicy on (its default)
    and every path using the alua or sysfs prioritizer, group_by_prio (group_by_tpg with
    detect_pgpolicy_use_tpg), whatever path_grouping_policy says."""
    if not paths.detects:
        return None
    if (_setting(conf, DETECT, vendor, product) or "yes") != "yes":
        return None
    why = _every_path_alua_or_sysfs(conf, wwid, vendor, product, paths, table)
    if why is None:
        return None
    tpg = (_setting(conf, DETECT_TPG, vendor, product) or "no") == "yes"
    return Grouping("group_by_tpg" if tpg else "group_by_prio",
                    f"detect_pgpolicy ({paths.source} documents it; on unless set to no): "
                    f"{why}, so multipathd groups by priority whatever "
                    "path_grouping_policy says")


def _matches(pattern: str, value: str) -> bool:
    try:  # multipathd matches vendor and product as unanchored regular expressions
        return host_regex.search(pattern, value)
    except host_regex.HostRegexError:
        return False


def grouping(conf: MultipathConf | None, wwid: str, vendor: str, product: str,
             paths: PathPriorities | None = None,
             table: HwTable | str = "no built-in table is known") -> Grouping:
    """The path_grouping_policy multipathd gives a map, and which setting decides it:
    multipath.conf above the built-in table, which is above the defaults section and
    multipath-tools' own default (propsel.c's select_pgpolicy)."""
    conf = conf or MultipathConf()
    detected = _detected(conf, wwid, vendor, product, paths, table) if paths else None
    if detected is not None:
        return detected
    site = _site_setting(conf, KEY, wwid, vendor, product)
    if site is not None:
        return Grouping(*site)
    if isinstance(table, str):
        return Grouping(None, f"the built-in table decides for {vendor} {product}, and {table}")
    built_in = table_setting(table, KEY, vendor, product)
    if built_in.unsure:
        return Grouping(None, f"{built_in.source}: {built_in.unsure}")
    if built_in.value is not None:
        return Grouping(built_in.value, built_in.source)
    if KEY in conf.defaults:
        return Grouping(conf.defaults[KEY], f"{MULTIPATH_CONF} defaults ({built_in.source})")
    return Grouping(MULTIPATH_DEFAULT_GROUPING,
                    f"multipath-tools' default ({built_in.source})")
