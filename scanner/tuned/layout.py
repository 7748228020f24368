"""Where the installed tuned keeps its profiles: a build-time choice, read from the host.

Upstream moved the profiles to ``/usr/lib/tuned/profiles`` and ``/etc/tuned/profiles`` in
2.23, but tuned.spec (v2.24.1 on, commit 7a41949) keeps ``/usr/lib/tuned`` and ``/etc/tuned``
where ``rhel < 10``, and the Makefile writes the choice into the installed ``consts.py``
(``SYSTEM_PROFILES_DIR``, ``USER_PROFILES_DIR``). So RHEL 9's tuned 2.25 has the old layout
and RHEL 10's the new one. The host's own ``consts.py`` decides; without it (a snapshot of
an older collector, a sosreport), the directories the package made; then the release.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass

from ...rules.host_layout import (
    TUNED_NEW_LAYOUT,
    TUNED_PROFILES_SUBDIR,
    TUNED_SHIPPED_PROFILES,
)
from .. import linear_re as re
from ..sources.hostroot import FactError, HostRoot

Version = tuple[int, int, int]
NEW_LAYOUT_SINCE = (2, 23)
_OLD = (TUNED_SHIPPED_PROFILES, "/etc/tuned")
_NEW = (TUNED_NEW_LAYOUT, f"/etc/tuned/{TUNED_PROFILES_SUBDIR}")
_PATH = r'"(/[^"\n]{0,255})"'
# consts.py as each release writes it: 2.24.1 on (rewritten at install), 2.23 and 2.24.0,
# and before 2.23.
_SYSTEM = re.compile(rf"^SYSTEM_PROFILES?_DIR[ \t]*=[ \t]*{_PATH}", re.MULTILINE)
_USER = re.compile(rf"^USER_PROFILES_DIR[ \t]*=[ \t]*{_PATH}", re.MULTILINE)
_LOAD = re.compile(rf"^LOAD_DIRECTORIES[ \t]*=[ \t]*\[[ \t]*{_PATH}[ \t]*,[ \t]*{_PATH}[ \t]*\]",
                   re.MULTILINE)


@dataclass(frozen=True)
class TunedLayout:
    system: str  # the package's profiles
    user: str  # the site's: a profile here overrides the package's of that name
    source: str  # what decided, for the report

    @property
    def new(self) -> bool:
        return self.system == TUNED_NEW_LAYOUT


def _plain(path: str) -> bool:
    return ".." not in path.split("/") and posixpath.normpath(path) == path


def layout_from_consts(text: str) -> tuple[str, str] | None:
    """(system, user) profile directories consts.py names, or None."""
    load = _LOAD.search(text)
    if load:
        found = (load.group(1), load.group(2))
    else:
        system = _SYSTEM.search(text)
        if not system:
            return None
        user = _USER.search(text)
        found = (system.group(1), user.group(1) if user else _NEW[1])
    return found if all(_plain(path) for path in found) else None


def tuned_layout(root: HostRoot, version: Version | None, version_path: str) -> TunedLayout:
    """The layout of the tuned installed in ``root`` (``version_path``: its version.py,
    beside which consts.py lies)."""
    if version_path:
        consts = posixpath.join(posixpath.dirname(version_path), "consts.py")
        try:
            text = root.read_optional(consts, 256 * 1024)
        except FactError:
            text = None
        found = layout_from_consts(text or "")
        if found:
            return TunedLayout(found[0], found[1], consts)
    if root.is_dir(TUNED_NEW_LAYOUT):
        return TunedLayout(*_NEW, f"{TUNED_NEW_LAYOUT} exists")
    if root.is_dir(TUNED_SHIPPED_PROFILES):
        return TunedLayout(*_OLD, f"{TUNED_SHIPPED_PROFILES} exists, without {TUNED_PROFILES_SUBDIR}/")
    if version is not None and version[:2] >= NEW_LAYOUT_SINCE:
        return TunedLayout(*_NEW, "tuned's release (2.23 moved the profiles)")
    return TunedLayout(*_OLD, "tuned's release" if version else "no tuned found")
