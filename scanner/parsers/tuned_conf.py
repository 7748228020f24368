"""tuned's active profile file; tuned.conf itself is parsed as the installed tuned parses
it (scanner/tuned/chain.py)."""

from __future__ import annotations


def parse_active_profile(text: str) -> list[str]:
    """``/etc/tuned/active_profile`` may name several profiles, space separated."""
    return text.split()
