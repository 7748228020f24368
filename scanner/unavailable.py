"""A fact that could not be collected, with the reason a person can act on."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Unavailable:
    reason: str

    def __str__(self) -> str:
        return self.reason
