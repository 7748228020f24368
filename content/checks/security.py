"""SELinux against what SAS Viya's deployment expects (scanner/checks/security.py)."""

from __future__ import annotations

from ...rules import Rule
from ...rules.host_layout import SELINUX_CONFIG, SELINUX_ENFORCE
from ..oval import Element, all_of, any_of, criterion, entity, none_of
from ..oval_facts import OvalFacts
from .common import Cmdline, files_matching

_WORD_END = r"(?![^\s\"'])"  # the argument's value ends there


def selinux_not_enforcing(facts: OvalFacts, rule: Rule) -> Element:
    """As scanner.checks.security.selinux_not_enforcing: not enforcing now (selinuxfs), nor
    from the next boot (selinux=0, else enforcing=, else the config's SELINUX=), unless the
    site declares the deployment's SELinux configuration done."""
    oval = facts.oval
    boot = Cmdline(facts)

    def found(comment: str, path: str, pattern: str) -> Element:
        return criterion(oval.test("ind:textfilecontent54", comment,
                                   files_matching(facts, comment, (path,), pattern)))

    enforcing_now = found("SELinux enforces now", SELINUX_ENFORCE, r"^\s*1\s*$")
    # libselinux's first "SELINUX=" line (at a line's start) whose value begins with a
    # mode's name, in any case, is enforcing (scanner/system/selinux.config_mode)
    configured = found("the config's first SELINUX= mode is enforcing", SELINUX_CONFIG,
                       r"\A(?:(?!SELINUX=[ \t\v\f\r]*(?i:enforcing|permissive|disabled))"
                       r"[^\n]*\n)*SELINUX=[ \t\v\f\r]*(?i:enforcing)")
    enforcing_at_boot = all_of(
        none_of(boot.any_argument("selinux", "0" + _WORD_END, shown="0")),
        any_of(boot.any_argument("enforcing", "1" + _WORD_END, shown="1"),
               all_of(none_of(boot.any_argument("enforcing", "0" + _WORD_END, shown="0")),
                      configured)),
        comment="SELinux enforces from the next boot")
    body = all_of(none_of(enforcing_now), none_of(enforcing_at_boot),
                  comment="SELinux is not enforcing")
    declared = oval.state("ind:variable", "selinux_configured is true",
                          entity("ind:value", "true", datatype="boolean"))
    done = oval.test("ind:variable", "the site declares the SELinux configuration done",
                     oval.values_of("selinux_configured", facts.external("selinux_configured")),
                     declared)
    return any_of(criterion(done), body)
