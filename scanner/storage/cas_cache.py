"""Where each SAS Viya 3.x CAS instance keeps its disk cache (scanner/parsers/cas_config.py).

A CAS instance's configuration is ``/opt/sas/viya/config/etc/cas/<instance>/``. The server
starts from a shell that sources ``cas.settings`` (and from it ``cas_usermods.settings``),
then reads its Lua configuration (``casconfig.lua``, the deployment's
``casconfig_deployment.lua``, the site's ``casconfig_usermods.lua``), whose ``env.`` entries
set its environment: so the last Lua assignment wins, else the last shell one. Where
neither sets it, CAS uses its default, /tmp (the value vars.yml's CAS_CONFIGURATION shows
commented out).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ...rules.host_layout import (
    CAS_DEFAULT_DISK_CACHE,
    CAS_LUA_FILES,
    CAS_ROLE,
    CAS_SHELL_FILES,
    SAS_VIYA_CAS_CONFIG,
)
from ...rules.values import has_control_character
from ..parsers.cas_config import CacheSetting, lua_settings, shell_settings
from ..sources.hostroot import AccountTree, FactError, HostRoot

# The CAS account owns its configuration, and root scans it (sources/hostroot.AccountTree).
CAS_TREE = AccountTree(SAS_VIYA_CAS_CONFIG, "the CAS configuration")


@dataclass
class CacheFound:
    """The CAS disk cache directories of every instance: (path, where it came from)."""
    dirs: list[tuple[str, str]] = field(default_factory=list)
    problems: list[str] = field(default_factory=list)


def _last(root: HostRoot, directory: str, names: tuple[str, ...], lua: bool,
          found: CacheFound) -> tuple[CacheSetting, str] | None:
    """The last assignment in ``names`` read in order, and its FILE:LINE."""
    last = None
    for name in names:
        path = f"{directory}/{name}"
        try:
            text = root.read_optional(path, 1024 * 1024, tree=CAS_TREE)
        except FactError as exc:
            found.problems.append(str(exc))
            continue
        if text is None:
            continue
        settings = lua_settings(text) if lua else shell_settings(text)
        if settings:
            last = (settings[-1], f"{path}:{settings[-1].line}")
    return last


def _installed(root: HostRoot, directory: str) -> bool:
    return any(root.probe(f"{directory}/{name}") for name in CAS_LUA_FILES)


def discover_cas_cache(root: HostRoot) -> CacheFound:
    found = CacheFound()
    try:
        if not root.is_dir(SAS_VIYA_CAS_CONFIG):
            return found
        instances = [name for name in sorted(root.listdir(SAS_VIYA_CAS_CONFIG))
                     if root.is_dir(f"{SAS_VIYA_CAS_CONFIG}/{name}")
                     and _installed(root, f"{SAS_VIYA_CAS_CONFIG}/{name}")]
    except FactError as exc:
        found.problems.append(str(exc))
        return found
    seen: set[str] = set()
    for instance in instances:
        directory = f"{SAS_VIYA_CAS_CONFIG}/{instance}"
        problems_before = len(found.problems)
        chosen = (_last(root, directory, CAS_LUA_FILES, True, found)
                  or _last(root, directory, CAS_SHELL_FILES, False, found))
        if len(found.problems) > problems_before:
            continue  # a file that might set it could not be read: said so, not guessed
        if chosen is None:
            paths: tuple[str, ...] = (CAS_DEFAULT_DISK_CACHE,)
            source = (f"CAS's default: {CAS_ROLE} is set in none of {directory}'s "
                      f"{', '.join((*CAS_LUA_FILES, *CAS_SHELL_FILES))}")
        else:
            setting, source = chosen
            if setting.problem:
                found.problems.append(f"{source}: {CAS_ROLE} is {setting.problem}; name the "
                                      "cache with --set cas_disk_cache_dirs=...")
                continue
            paths = setting.paths
        for path in paths:
            if has_control_character(path) or not path.startswith("/"):
                found.problems.append(f"{source}: {CAS_ROLE} {path!r} is not an absolute "
                                      "path; not used")
            elif path not in seen:
                seen.add(path)
                found.dirs.append((path, source))
    return found
