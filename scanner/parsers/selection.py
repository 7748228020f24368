"""Kernel "selection" files: one word in brackets is the active choice.

Samples::

    [mq-deadline] kyber bfq none          (queue/scheduler, blk-mq)
    noop anticipatory deadline [cfq]      (queue/scheduler, RHEL 5/6)
    none                                  (zram, bio-based dm: no choice)
    always madvise [never]                (transparent_hugepage/enabled)
    [always] madvise never                (redhat_transparent_hugepage/enabled, RHEL 6)
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Selection:
    options: tuple[str, ...]
    selected: str | None

    @property
    def offers_choice(self) -> bool:
        """True when the kernel shows a bracketed choice among alternatives."""
        return self.selected is not None


def parse_selection(text: str) -> Selection:
    """ValueError for two bracketed words: the kernel never writes that, so the file is
    not what it claims to be (and taking either word would be a guess)."""
    options: list[str] = []
    selected: str | None = None
    for word in text.split():
        if len(word) > 2 and word.startswith("[") and word.endswith("]"):
            word = word[1:-1]
            if selected is not None:
                raise ValueError(f"two selected values, [{selected}] and [{word}]")
            selected = word
        options.append(word)
    return Selection(tuple(options), selected)
