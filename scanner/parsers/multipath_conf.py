"""/etc/multipath.conf (multipath.conf(5)): sections of ``keyword value`` lines in braces.

Sample (RHEL 8: what ``mpathconf --enable`` writes, plus a site's settings)::

    # device-mapper-multipath configuration file
    defaults {
            user_friendly_names yes
            find_multipaths yes
    }
    devices {
            device {
                    vendor "XtremIO"
                    product "XtremApp"
                    path_grouping_policy multibus
                    path_selector "queue-length 0"
            }
    }
    multipaths {
            multipath {
                    wwid 3514f0c5a51600001
                    alias mpatha
            }
    }

Comments start with ``#`` or ``!``; values may be double-quoted.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from .. import linear_re as re

_TOKEN = re.compile(r'"([^"\n]*)"|([{}])|([^\s{}"#!]+)|([#!][^\n]*)|(\s+)')
SUBSECTIONS = {"devices": "device", "multipaths": "multipath"}


class MultipathConfError(ValueError):
    """Braces that do not balance."""


@dataclass
class MultipathConf:
    defaults: dict[str, str] = field(default_factory=dict)
    overrides: dict[str, str] = field(default_factory=dict)
    devices: list[dict[str, str]] = field(default_factory=list)
    multipaths: list[dict[str, str]] = field(default_factory=list)

    def merge(self, other: MultipathConf) -> None:
        """A config_dir file read after this one (as multipathd reads them)."""
        self.defaults.update(other.defaults)
        self.overrides.update(other.overrides)
        self.devices += other.devices
        self.multipaths += other.multipaths


def _lines(text: str) -> list[list[str]]:
    """Each line's tokens, braces as their own tokens, comments dropped."""
    lines = []
    for raw in text.splitlines():
        tokens = []
        for match in _TOKEN.finditer(raw):
            quoted, brace, word, comment, _ = match.groups()
            if comment is not None:
                break
            if quoted is not None or brace or word:
                tokens.append(quoted if quoted is not None else brace or word)
        if tokens:
            lines.append(tokens)
    return lines


def parse_multipath_conf(text: str) -> MultipathConf:
    conf = MultipathConf()
    stack: list[str] = []
    current: dict[str, str] | None = None
    for tokens in _lines(text):
        if tokens[-1] == "{":
            name = tokens[0] if len(tokens) > 1 else ""
            stack.append(name)
            if len(stack) == 2 and SUBSECTIONS.get(stack[0]) == name:
                current = {}
                (conf.devices if stack[0] == "devices" else conf.multipaths).append(current)
            continue
        if tokens[0] == "}":
            if not stack:
                raise MultipathConfError("a '}' closes no section")
            stack.pop()
            current = None
            continue
        key, value = tokens[0], " ".join(tokens[1:])
        if len(stack) == 1 and stack[0] in ("defaults", "overrides"):
            (conf.defaults if stack[0] == "defaults" else conf.overrides)[key] = value
        elif len(stack) == 2 and current is not None:
            current[key] = value
    if stack:
        raise MultipathConfError(f"section '{stack[-1]}' is not closed")
    return conf
