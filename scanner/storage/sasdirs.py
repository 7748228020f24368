"""Where SAS keeps DATA, WORK, UTILLOC and the CAS disk cache on a host: site values first,
else sasv9.cfg (WORK, UTILLOC) and the CAS configuration (cas_cache.py).

SAS reads ``!SASROOT/sasv9.cfg`` (which pulls in ``nls/<lang>/sasv9.cfg`` with
``-CONFIG``) and then ``!SASROOT/sasv9_local.cfg``; for a repeated option the
last value read wins. So the shipped ``-WORK /tmp`` is overridden by a site's
``sasv9_local.cfg``.
"""

from __future__ import annotations

import posixpath
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ...rules.host_layout import (
    CAS_ROLE,
    SAS_CONFIG_DIRS,
    SAS_FOUNDATIONS,
    SAS_HOMES,
    SAS_INSTALL_DIRS,
    SAS_PATH_VALUES,
    SAS_ROLE_VALUES,
    SAS_ROLES,
    SAS_USERMODS,
    SAS_VIYA_SASROOT,
    SAS_VIYA_SPRE_CONFIG,
)
from ...rules.values import has_control_character
from ..parsers.sas_config import parse_sas_config, sas_size_bytes
from ..sources.hostroot import AccountTree, FactError, HostRoot
from .cas_cache import discover_cas_cache

MAX_CONFIG_FILES = 64
HOW_TO_NAME_SAS_DIRS = ("no SAS directory is known: name them with --set sas_data_dirs=..., "
                        "sas_work_dirs=..., sas_utilloc_dirs=..., cas_disk_cache_dirs=... or "
                        "point sas_config_files at a sasv9.cfg")


@dataclass(frozen=True)
class SasDir:
    role: str  # DATA | WORK | UTILLOC | CAS_DISK_CACHE
    path: str
    source: str  # where the path came from, for the report


@dataclass
class Discovery:
    dirs: list[SasDir]
    notes: list[str]
    files_read: list[str]
    # Configuration that exists but could not be read: with it, SAS directories may have
    # been missed, so "none found" would be a guess.
    problems: list[str] = field(default_factory=list)
    # -BUFSIZE in the config chain (bytes, FILE:LINE); None where unset or 0 (SAS picks).
    bufsize: tuple[int, str] | None = None
    # The roles a problem above may have hidden (their configuration was read in part).
    unreadable_roles: frozenset[str] = frozenset()


def include_places(root: HostRoot, values: Mapping[str, Any]) -> tuple[str, ...]:
    """The resolved in-root places a -CONFIG include is read from: the SAS installation,
    the SAS directories and the files the site names. The SAS account writes sasv9.cfg,
    so an include elsewhere (``-CONFIG /etc/shadow``) must not make a collector running as
    root copy that file; it is named instead."""
    named = [path for name in SAS_PATH_VALUES for path in values.get(name) or []
             if isinstance(path, str) and path.startswith("/")]
    places = []
    for path in (*SAS_INSTALL_DIRS, *named):
        try:
            places.append(root.resolve(path))
        except FactError:
            continue
    return tuple(places)


def _inside(path: str, places: Sequence[str]) -> bool:
    return any(place == "/" or path == place or path.startswith(place + "/")
               for place in places)


class _ConfigReader:
    def __init__(self, root: HostRoot, sasroot: str | None,
                 places: Sequence[str] = (), tree: AccountTree | None = None) -> None:
        self.root = root
        self.sasroot = sasroot
        self.places = places
        self.tree = tree  # where the chain's own files lie (None: named by the site)
        self.found: dict[str, tuple[list[str], str]] = {}
        self.bufsize: tuple[int, str] | None = None
        self.notes: list[str] = []
        self.problems: list[str] = []
        self.files_read: list[str] = []

    def read(self, path: str, chain: tuple[str, ...] = ()) -> None:
        if path in chain:
            self.notes.append(f"{path}: -CONFIG cycle ({' -> '.join((*chain, path))}), skipped")
            return
        if len(self.files_read) >= MAX_CONFIG_FILES:
            self.notes.append(f"{path}: more than {MAX_CONFIG_FILES} config files, skipped")
            return
        tree = self.tree
        if chain:
            place = self._may_include(path, chain[-1])
            if place is None:
                return
            tree = AccountTree(place, "the SAS installation and the SAS directories")
        try:
            text = self.root.read_optional(path, 1024 * 1024, tree=tree)
        except FactError as exc:
            self.problems.append(str(exc))
            return
        if text is None:
            if chain:
                self.notes.append(f"{path}: named by -CONFIG in {chain[-1]} but missing")
            return
        self.files_read.append(path)
        for option in parse_sas_config(text):
            if option.name == "CONFIG":
                for include in option.values:
                    self.read(self._expand(include), (*chain, path))
            elif option.name == "BUFSIZE" and option.values:
                size = sas_size_bytes(option.values[0])  # a later one wins, as in SAS
                self.bufsize = (size, f"{path}:{option.line}") if size else None
            elif option.name in ("WORK", "UTILLOC") and option.values:
                paths = [self._expand(v) for v in option.values if v.upper() != "WORK"]
                for bad in [p for p in paths if has_control_character(p)]:
                    self.problems.append(f"{path}:{option.line}: -{option.name} {bad!r} has a "
                                         "control character; not used")
                paths = [p for p in paths if p.startswith("/") and not has_control_character(p)]
                if paths:
                    self.found[option.name] = (paths, f"{path}:{option.line}")

    def _may_include(self, path: str, parent: str) -> str | None:
        """The SAS place an include lies in (the read then holds it there, and refuses a
        second hard link: hostroot.AccountTree); None where it is outside them all."""
        try:
            resolved = self.root.resolve(path)
        except FactError as exc:
            self.problems.append(str(exc))
            return None
        place = next((place for place in self.places if _inside(resolved, [place])), None)
        if place is None:
            self.notes.append(f"{path}: named by -CONFIG in {parent}, outside the SAS "
                              "installation and the SAS directories; not read")
        return place

    def _expand(self, value: str) -> str:
        if self.sasroot and value.upper().startswith("!SASROOT"):
            value = self.sasroot + value[len("!SASROOT"):]
        return posixpath.normpath(value) if value.startswith("/") else value


def _standard_sasroots(root: HostRoot, problems: list[str]) -> list[str]:
    found = []
    for home in SAS_HOMES:
        for foundation in SAS_FOUNDATIONS:
            try:
                if root.probe(f"{home}/{foundation}"):
                    found.append(f"{home}/{foundation}")
            except FactError as exc:
                problems.append(str(exc))
    return found


def _server_contexts(root: HostRoot, problems: list[str]) -> list[tuple[str, str]]:
    """SAS 9.4 server contexts: (<config dir>, <config dir>/Lev<N>/<context>), each with its
    sasv9.cfg."""
    found = []
    for config in SAS_CONFIG_DIRS:
        try:
            if not root.is_dir(config):
                continue
            for level in sorted(n for n in root.listdir(config) if n.startswith("Lev")):
                if not root.is_dir(f"{config}/{level}"):
                    continue
                for context in sorted(root.listdir(f"{config}/{level}")):
                    if root.probe(f"{config}/{level}/{context}/sasv9.cfg"):
                        found.append((config, f"{config}/{level}/{context}"))
        except FactError as exc:
            problems.append(str(exc))
    return found


def _chain(root: HostRoot, sasroot: str | None, directory: str,
           extra: str, places: Sequence[str], tree: str) -> _ConfigReader:
    """A directory's sasv9.cfg with what it includes, then ``extra`` there unless included.
    The SAS installer account owns ``tree``: its files are read as hostroot.AccountTree's
    (collect.sh's tree_file copies them so)."""
    reader = _ConfigReader(root, sasroot, places, AccountTree(tree, "the SAS installation"))
    reader.read(f"{directory}/sasv9.cfg")
    if f"{directory}/{extra}" not in reader.files_read:
        reader.read(f"{directory}/{extra}")
    return reader


def _read_configs(root: HostRoot, values: Mapping[str, Any], notes: list[str],
                  problems: list[str]) -> list[_ConfigReader]:
    """Each SAS installation's sasv9.cfg chain and sasv9_local.cfg, each SAS 9.4 server
    context's sasv9.cfg and sasv9_usermods.cfg, SAS Viya's SPRE configuration, then
    sas_config_files."""
    sasroots = _standard_sasroots(root, problems)
    places = include_places(root, values)
    readers = [_chain(root, sasroot, sasroot, "sasv9_local.cfg", places, sasroot)
               for sasroot in sasroots]
    readers += [_chain(root, sasroots[0] if sasroots else None, context, SAS_USERMODS, places,
                       config)
                for config, context in _server_contexts(root, problems)]
    try:
        if root.probe(f"{SAS_VIYA_SPRE_CONFIG}/sasv9.cfg"):
            readers.append(_chain(root, SAS_VIYA_SASROOT, SAS_VIYA_SPRE_CONFIG, SAS_USERMODS,
                                  places, SAS_VIYA_SPRE_CONFIG))
    except FactError as exc:
        problems.append(str(exc))
    extra: Sequence[str] = values.get("sas_config_files") or []
    if extra:
        reader = _ConfigReader(root, None, places)
        for path in extra:
            reader.read(path)
            if path not in reader.files_read and not reader.problems:
                notes.append(f"{path}: named by sas_config_files but missing")
        readers.append(reader)
    return readers


def _last_bufsize(readers: list[_ConfigReader]) -> tuple[int, str] | None:
    found = None
    for reader in readers:
        found = reader.bufsize or found
    return found


def configured_bufsize(root: HostRoot, values: Mapping[str, Any]) -> tuple[int, str] | None:
    """The -BUFSIZE the SAS configuration sets (bytes, FILE:LINE), the last one read winning;
    None where none does (or it is 0: SAS chooses)."""
    return _last_bufsize(_read_configs(root, values, [], []))


def discover(root: HostRoot, values: Mapping[str, Any],
             value_origins: Mapping[str, str]) -> Discovery:
    """SAS directories per role: configured values win; unset roles are discovered."""
    dirs: list[SasDir] = []
    notes: list[str] = []
    problems: list[str] = []
    files_read: list[str] = []
    unset = [role for role in SAS_ROLES if not values.get(SAS_ROLE_VALUES[role])]
    for role in SAS_ROLES:
        name = SAS_ROLE_VALUES[role]
        for path in values.get(name) or []:
            dirs.append(SasDir(role, path, value_origins.get(name, f"site value {name}")))
    discoverable = [role for role in unset if role not in ("DATA", CAS_ROLE)]
    unreadable: set[str] = set()
    if CAS_ROLE in unset:
        cache = discover_cas_cache(root)
        dirs.extend(SasDir(CAS_ROLE, path, source) for path, source in cache.dirs)
        problems.extend(cache.problems)
        if cache.problems:
            unreadable.add(CAS_ROLE)
    if not discoverable:
        bufsize = configured_bufsize(root, values)
    else:
        before = len(problems)
        readers = _read_configs(root, values, notes, problems)
        bufsize = _last_bufsize(readers)
        for reader in readers:
            notes.extend(reader.notes)
            problems.extend(reader.problems)
            files_read.extend(reader.files_read)
            for role in discoverable:
                if role in reader.found:
                    paths, source = reader.found[role]
                    dirs.extend(SasDir(role, path, source) for path in paths)
        if len(problems) > before:
            unreadable.update(discoverable)
        if not readers and not problems and not any(d.role == CAS_ROLE for d in dirs):
            notes.append("no SAS installation found under " + ", ".join(SAS_HOMES)
                         + ", in a SAS 9.4 configuration directory ("
                         + ", ".join(SAS_CONFIG_DIRS) + ") or in SAS Viya's "
                         + SAS_VIYA_SPRE_CONFIG)
    if "DATA" in unset:
        notes.append("SAS DATA directories are not discoverable from sasv9.cfg; "
                     "name them with --set sas_data_dirs=/path[,/path]")
    return Discovery(dirs, notes, files_read, problems, bufsize, frozenset(unreadable))
