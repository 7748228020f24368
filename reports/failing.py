"""The hosts failing one rule, as names `ansible-playbook --limit @FILE` reads as one host
each (issue 44): a fix day must never reach a host the report did not see fail.

ansible-playbook reads each line of a limit file as a pattern: ``all``, a group name,
``web*``, ``~regex``, ``!name``, ``&group``, ``a:b`` and ``a,b`` each name many hosts or none.
So a name is printed only where it can match nothing but the one host:
- it is plain (LIMIT_SAFE: no pattern characters, no blanks);
- it is neither of ansible's implicit groups nor a group of the fleet's inventory (the
  fleet playbook records each host's groups in .sascheck-groups);
- where that record exists, it names a host of it: a host the controller saw;
- a name the results give (a file outside a fleet directory, whose name is the host's own
  claim) is also never ``localhost`` and never claimed by two hosts.
Everything left out is said, with why, for the terminal.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence

from .model import HostView

# A name ansible-playbook --limit takes as one host, never a pattern (*, ?, [, :, !, &, ~,
# ",", "@" and blanks widen or change a limit).
LIMIT_SAFE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,252}")
IMPLICIT_GROUPS = frozenset({"all", "ungrouped"})
# Ansible's implicit localhost: the controller itself, whatever a host claims
CONTROLLER_NAMES = frozenset({"localhost", "127.0.0.1", "::1"})


def limit_names(hosts: Iterable[HostView], rule_id: str,
                groups: Mapping[str, Sequence[str]]) -> tuple[list[str], list[str]]:
    """(names to print, one a line in order; remarks for the terminal: why each other
    failing host is left out, and whether names are the hosts' own)."""
    failing = [(host.inventory or host.name, bool(host.inventory)) for host in hosts
               if any(rule.id == rule_id and rule.result == "fail" for rule in host.rules)]
    names: set[str] = set()
    remarks: set[str] = set()
    for (name, controllers), why in zip(failing, not_for_limit(failing, groups)):
        if why:
            remarks.add(f"left out {name[:256]!r}: {why}")
            continue
        names.add(name)
        if not controllers:
            remarks.add(f"{name!r} is the name the host gives itself (its results are not in "
                        "a fleet directory): check it against the inventory")
    return sorted(names), sorted(remarks)


def not_for_limit(hosts: Sequence[tuple[str, bool]],
                  groups: Mapping[str, Sequence[str]]) -> list[str]:
    """For each (name, whether the controller gave it) of a fleet, why --limit must not be
    given it ('' where it names that one host)."""
    claims = Counter(name.lower() for name, controllers in hosts if not controllers)
    why = limit_judge(groups, claims)
    return [why(name, controllers) for name, controllers in hosts]


def limit_judge(groups: Mapping[str, Sequence[str]],
                claims: Mapping[str, int]) -> Callable[[str, bool], str]:
    """not_for_limit's judgement of one (name, whether the controller gave it), where
    ``claims`` counts the hosts of the fleet giving each name themselves (lower case)."""
    group_names = IMPLICIT_GROUPS | {group.lower() for names in groups.values()
                                     for group in names}
    return lambda name, controllers: _why_not(name, controllers, group_names, groups, claims)


def _why_not(name: str, controllers: bool, group_names: frozenset[str],
             groups: Mapping[str, Sequence[str]], claims: Mapping[str, int]) -> str:
    if not LIMIT_SAFE.fullmatch(name):
        return "not a plain host name for --limit (it would be read as a pattern)"
    if name.lower() in group_names:
        return "a group name: --limit would take every host in it"
    if groups and name not in groups:
        return "not a host of the fleet's inventory record (.sascheck-groups)"
    if not controllers:
        if name.lower() in CONTROLLER_NAMES:
            return "the host's own name for itself, which --limit reads as the controller"
        if claims.get(name.lower(), 0) > 1:
            return "several hosts' results claim this name"
    return ""
