"""A fact that could not be collected, with the reason a person can act on."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Unavailable:
    reason: str
    # What a report shows as the actual value: "unreadable" only where reading failed; a
    # file that was read but says nothing usable is "not understood" or "empty".
    what: str = "unreadable"

    def __str__(self) -> str:
        return self.reason
