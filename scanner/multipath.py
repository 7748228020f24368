"""dm-multipath as multipathd configures each map: the path grouping policy decided by
multipath.conf's precedence (multipaths, overrides, devices, the built-in hardware table,
defaults, multipath-tools' own default)."""

from __future__ import annotations

from dataclasses import dataclass

from ..rules.host_layout import (
    MULTIPATH_CONF,
    MULTIPATH_CONF_DIR,
    MULTIPATH_DEFAULT_GROUPING,
    MULTIPATH_HWTABLE,
)
from . import host_regex
from .hostroot import FactError, HostRoot
from .parsers.multipath_conf import MultipathConf, MultipathConfError, parse_multipath_conf
from .unavailable import Unavailable

KEY = "path_grouping_policy"


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


def _matches(pattern: str, value: str) -> bool:
    try:  # multipathd matches vendor and product as unanchored regular expressions
        return host_regex.search(pattern, value)
    except host_regex.HostRegexError:
        return False


def grouping(conf: MultipathConf | None, wwid: str, vendor: str, product: str) -> Grouping:
    """The path_grouping_policy multipathd gives a map, and which setting decides it."""
    conf = conf or MultipathConf()
    for entry in reversed(conf.multipaths):
        if entry.get("wwid") == wwid and KEY in entry:
            return Grouping(entry[KEY], f"{MULTIPATH_CONF} multipaths (wwid {wwid})")
    if KEY in conf.overrides:
        return Grouping(conf.overrides[KEY], f"{MULTIPATH_CONF} overrides")
    for entry in reversed(conf.devices):
        if (_matches(entry.get("vendor", "^$"), vendor)
                and _matches(entry.get("product", ".*"), product) and KEY in entry):
            return Grouping(entry[KEY], f"{MULTIPATH_CONF} devices ({entry.get('vendor')} "
                                        f"{entry.get('product', '')})".rstrip() + ")")
    for table_vendor, table_product, policy in MULTIPATH_HWTABLE:
        if _matches(table_vendor, vendor) and _matches(table_product, product):
            return Grouping(policy, f"multipath-tools' built-in table ({table_vendor} "
                                    f"{table_product})")
    if KEY in conf.defaults:
        return Grouping(None, f"{MULTIPATH_CONF} defaults say {conf.defaults[KEY]}, but the "
                              f"built-in table may hold an entry for {vendor} {product}")
    return Grouping(None, f"the built-in table decides for {vendor} {product} (else "
                          f"{MULTIPATH_DEFAULT_GROUPING})")
