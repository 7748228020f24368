"""The standalone collector script, for hosts without sascheck (sascheck collect --script).

Its lists of paths come from the host layout (rules/host_layout/) and the catalogue (the
/proc/sys keys its rules read), rendered into a marked block of the committed ``collect.sh``
by ``scripts/update-generated``; a test fails when the committed block is stale.
"""

from __future__ import annotations

from pathlib import Path

from ...rules import Catalogue
from ...rules.check_kinds import proc_sys_keys
from ...rules.host_layout import shell_assignment, shell_layout

SCRIPT_FILE = Path(__file__).resolve().parent / "collect.sh"
LAYOUT_BEGIN = "# ---- host layout: generated from rules/host_layout/ (scripts/update-generated) ----\n"
LAYOUT_END = "# ---- end of host layout\n"


def catalogue_layout(catalogue: Catalogue) -> str:
    """What the catalogue's rules read beyond the host layout: the /proc/sys files."""
    keys = proc_sys_keys((rule.kind, rule.params) for rule in catalogue.rules.values())
    return shell_assignment("CATALOGUE_PROC_SYS", " ".join(
        "sys/" + key.replace(".", "/") for key in keys))


def with_current_layout(text: str, catalogue: Catalogue | None = None) -> str:
    """``text`` with the block between the markers replaced by the current layout and
    ``catalogue``'s (by default the one sascheck ships)."""
    if catalogue is None:
        from ...rules import load_catalogue
        catalogue = load_catalogue()
    head, begin, rest = text.partition(LAYOUT_BEGIN)
    _, end, tail = rest.partition(LAYOUT_END)
    if not begin or not end:
        raise ValueError(f"{SCRIPT_FILE.name}: the host layout markers are missing")
    return head + begin + shell_layout() + catalogue_layout(catalogue) + end + tail


SCRIPT = SCRIPT_FILE.read_text(encoding="utf-8")
