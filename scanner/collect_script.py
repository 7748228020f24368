"""The standalone collector script, for hosts without sascheck (sascheck collect --script).

Its lists of paths come from the host layout (rules/host_layout.py), rendered into a marked
block of the committed ``collect.sh`` by ``scripts/update-generated``; a test fails when the
committed block is stale.
"""

from pathlib import Path

from ..rules.host_layout import shell_layout

SCRIPT_FILE = Path(__file__).resolve().parent / "collect.sh"
LAYOUT_BEGIN = "# ---- host layout: generated from rules/host_layout.py (scripts/update-generated) ----\n"
LAYOUT_END = "# ---- end of host layout\n"


def with_current_layout(text: str) -> str:
    """``text`` with the block between the markers replaced by the current layout."""
    head, begin, rest = text.partition(LAYOUT_BEGIN)
    _, end, tail = rest.partition(LAYOUT_END)
    if not begin or not end:
        raise ValueError(f"{SCRIPT_FILE.name}: the host layout markers are missing")
    return head + begin + shell_layout() + end + tail


SCRIPT = SCRIPT_FILE.read_text(encoding="utf-8")
