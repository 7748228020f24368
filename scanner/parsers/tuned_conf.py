"""tuned profile files (``tuned.conf``), an INI dialect.

Sample (RHEL 8 ``/usr/lib/tuned/enterprise-storage/tuned.conf``)::

    [main]
    summary=Legacy profile for RHEL6, for RHEL7, please use throughput-performance profile
    include=throughput-performance

    [disk]
    readahead=>4096

Keys before any section belong to ``main``; ``#`` and ``;`` start comments;
later keys override earlier ones, as in tuned.
"""

from __future__ import annotations

import re

Sections = dict[str, dict[str, str]]

_SECTION = re.compile(r"^\[([^\]]*)\]\s*$")


def parse_tuned_conf(text: str) -> Sections:
    sections: Sections = {}
    current = sections.setdefault("main", {})
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        header = _SECTION.match(line)
        if header:
            current = sections.setdefault(header.group(1).strip(), {})
            continue
        key, sep, value = line.partition("=")
        if sep and key.strip():
            current[key.strip()] = value.strip()
    return sections


def includes(sections: Sections) -> list[str]:
    """Profiles named by ``[main] include=``, comma or space separated."""
    value = sections.get("main", {}).get("include", "")
    return [name for name in re.split(r"[,\s]+", value) if name]


def parse_active_profile(text: str) -> list[str]:
    """``/etc/tuned/active_profile`` may name several profiles, space separated."""
    return text.split()
