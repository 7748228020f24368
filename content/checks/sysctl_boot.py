"""sysctl values after the next boot (scanner/checks/kernel.py: sysctl_at_boot and
sysctl_fields_at_boot), as far as OVAL can follow them: it cannot sort files by name, so
every system file that sets the key must agree with the site value; a value in /etc or /run
(which tuned's reapply_sysctl applies last) holds over tuned's, else tuned's must agree too.
"""

from __future__ import annotations

import re

from ...rules import Rule
from ...rules.host_layout import (
    KERNEL_SYSCTL_DEFAULTS,
    KTUNE_SCRIPTS,
    KTUNE_SHIPPED_CONFIG,
    SYSCTL_BYTES_TWINS,
    SYSCTL_CONF,
    SYSCTL_DIRS,
    TUNED_MAIN_CONF,
    TUNED_REAPPLY_SYSCTL_DIRS,
    TUNED_TRUE_WORDS,
)
from ..oval import Element, all_of, any_of, criterion, entity, none_of
from ..oval_facts import OvalFacts
from .common import files_matching, kernel_is
from .kernel import OPS

_PACKAGED_DIRS = tuple(d for d in SYSCTL_DIRS if d not in TUNED_REAPPLY_SYSCTL_DIRS)


class _BootSources:
    """Where a boot takes ``key`` from, each source read with a value pattern of one group:
    sysctl.d in /etc and /run (reapplied by tuned), packaged sysctl.d and ktune.d,
    sysctl.conf and ktune's sysctl.ktune, tuned's [sysctl] (and [vm] for the dirty keys)."""

    def __init__(self, facts: OvalFacts, key: str) -> None:
        self.facts, self.key = facts, key
        self.key_pattern = r"[./]".join(re.escape(part) for part in key.split("."))
        # tuned 2.25+ [vm]: dirty_ratio = N, and (2.26+) dirty_bytes = N% (scanner's
        # _tuned_vm_dirty); OVAL does not read tuned's version.
        self.vm_twin = SYSCTL_BYTES_TWINS.get(key, "").partition(".")[2]

    def line(self, value: str, key_pattern: str = "") -> str:
        return (rf"^[ \t]*-?[ \t]*{key_pattern or self.key_pattern}[ \t]*=[ \t]*{value}"
                r"[ \t]*$")

    def _lines_in(self, directories: tuple[str, ...], comment: str, name: str,
                  pattern: str) -> str:
        oval = self.facts.oval
        return oval.obj("ind:textfilecontent54", f"{name} in {comment}",
                        entity("ind:path", var=oval.paths(comment, directories),
                               var_check="at least one"),
                        entity("ind:filename", r"\.conf$", op="pattern match"),
                        entity("ind:pattern", pattern, op="pattern match"),
                        entity("ind:instance", "1", datatype="int", op="greater than or equal"))

    def files(self, pattern: str, name: str = "") -> tuple[str, str, str]:
        """Objects over the lines matching ``pattern``: (reapplied, packaged, sysctl.conf
        and sysctl.ktune)."""
        name = name or self.key
        return (self._lines_in(TUNED_REAPPLY_SYSCTL_DIRS, "sysctl.d in /etc and /run", name,
                               pattern),
                self._lines_in((*_PACKAGED_DIRS, KTUNE_SCRIPTS), "packaged sysctl.d and ktune.d",
                               name, pattern),
                files_matching(self.facts, f"{name} in sysctl.conf and sysctl.ktune",
                               (SYSCTL_CONF, KTUNE_SHIPPED_CONFIG["SYSCTL"]), pattern))

    def conf(self, pattern: str) -> str:
        return files_matching(self.facts, f"{self.key} in {SYSCTL_CONF}", (SYSCTL_CONF,),
                              pattern)

    def tuned_sets(self, value: str, state: str | None, comment: str,
                   surely: bool = True) -> Element:
        """tuned's [sysctl] key, or its [vm] option, has ``value`` (one group); ``surely``
        as OvalFacts.tuned_enabled (False where it makes the rule fail)."""
        facts, key = self.facts, self.key
        found = [facts.tuned_setting(self.key_pattern.replace("[./]", r"\."),
                                     [(value, state)], comment, surely)]
        if self.vm_twin:
            found += [facts.tuned_setting(re.escape(key.partition(".")[2]), [(value, state)],
                                          f"{comment} ([vm])", surely),
                      facts.tuned_setting(re.escape(self.vm_twin), [(value + "%", state)],
                                          f"{comment} ([vm] {self.vm_twin} as a percentage)",
                                          surely)]
        return any_of(*found)

    def some(self, object_id: str, state: str | None, comment: str) -> Element:
        return criterion(self.facts.oval.test("ind:textfilecontent54", comment, object_id,
                                              state, check="at least one"))

    def sets(self, value: str, comment: str, tuned_value: str = "") -> Element:
        """Some system file sets the key to a value matching ``value``, or tuned (where it
        may be enabled) to one matching ``tuned_value`` (``value`` unless given)."""
        return any_of(*(self.some(object_id, None, comment) for object_id in
                        self.files(self.line(value))),
                      self.tuned_sets(tuned_value or value, None, comment, surely=False))

    def judged(self, value: str, equal: str, other: str, comment: str,
               tuned_value: str = "") -> Element:
        """The value (``value``'s group) after boot is as the site wants: no system file
        sets another; /etc or /run or sysctl.conf sets it and tuned does not re-apply over
        them, or some source sets it and tuned agrees (tuned's value read with
        ``tuned_value``, ``value`` unless given)."""
        oval, key = self.facts.oval, self.key
        tuned_value = tuned_value or value
        reapplied, packaged, files = self.files(self.line(value))
        reapply_off = files_matching(
            self.facts, "tuned's reapply_sysctl turned off", (TUNED_MAIN_CONF,),
            r"^[ \t]*reapply_sysctl[ \t]*=(?![ \t]*(?i:" + "|".join(TUNED_TRUE_WORDS)
            + r")[ \t]*$)")
        return all_of(
            none_of(*(self.some(object_id, other, f"a system file sets {key} to another value")
                      for object_id in (reapplied, packaged, files))),
            any_of(
                all_of(any_of(self.some(reapplied, equal, f"/etc or /run sets {key}"),
                              self.some(self.conf(self.line(value)), equal,
                                        f"{SYSCTL_CONF} sets {key}")),
                       criterion(oval.test("ind:textfilecontent54", "reapply_sysctl is off",
                                           reapply_off), negate=True)),
                all_of(any_of(*(self.some(object_id, equal, f"a system file sets {key}")
                                for object_id in (reapplied, packaged, files)),
                              self.tuned_sets(tuned_value, equal, f"tuned sets {key}")),
                       none_of(self.tuned_sets(tuned_value, other,
                                               f"tuned sets {key} to another value",
                                               surely=False)))),
            comment=comment)

    def kernel_default(self, wanted_var: str, op: str, field: int | None = None
                       ) -> list[Element]:
        """For each kernel release prefix (the first that matches decides), that the site
        value ``op`` the kernel's default (its ``field``-th number, for a value of several)."""
        oval, key = self.facts.oval, self.key
        wanted = oval.values_of(f"site value for {key}", wanted_var)
        defaults: list[Element] = []
        earlier: list[Element] = []
        for prefix, value in KERNEL_SYSCTL_DEFAULTS.get(key, ()):
            kernel = kernel_is(self.facts, "^" + re.escape(prefix), f"kernel {prefix or 'any'}")
            if value is None:  # not known: no default passes there (sascheck says error)
                earlier.append(kernel)
                continue
            # The first prefix that matches decides: stored once per key and prefix, as the
            # fields of a value of several share it.
            decides = oval.extension(f"{key}: the kernel's default is that of "
                                     f"{prefix or 'any'} kernels",
                                     all_of(kernel, *(none_of(e) for e in earlier)))
            number = value if field is None else value.split()[field]
            is_value = oval.state("ind:variable", f"{number}", entity(
                "ind:value", number, datatype="int", op=op))
            defaults.append(all_of(decides, criterion(oval.test(
                "ind:variable", f"the site value is the kernel's {key} default {number}",
                wanted, is_value))))
            earlier.append(kernel)
        return defaults


def _states(facts: OvalFacts, comment: str, wanted_var: str, ops: tuple[str, str, str]
            ) -> tuple[str, str]:
    """The states (value as the site wants it, value not) on a value pattern's group."""
    oval = facts.oval

    def state(op: str, says: str) -> str:
        return oval.state("ind:textfilecontent54", f"{comment} {says}", entity(
            "ind:subexpression", datatype="int", op=op, var=wanted_var, var_check="all"))
    return state(ops[0], "is as the site wants"), state(ops[1], "is not as the site wants")


def sysctl_at_boot(facts: OvalFacts, rule: Rule) -> Element:
    """scanner.checks.kernel.sysctl_at_boot: one value against the site's."""
    key = rule.params["key"]
    sources = _BootSources(facts, key)
    wanted_var = facts.sysctl_wanted(rule.params)
    ops = OPS[rule.params.get("compare", "equal")]
    equal, other = _states(facts, key, wanted_var, ops)
    # A bound: tuned's ">N" (2.10 on) leaves at least N, "<N" at most N, so N is judged
    # (where N is beyond the site value the scanner reads the value before tuned:
    # docs/oval.md)
    tuned_value = {"at_least": r">?(\S*)", "at_most": r"<?(\S*)"}.get(
        rule.params.get("compare", ""), "")
    judged = sources.judged(r"(\S*)", equal, other, f"{key} is the site value after boot",
                            tuned_value)
    # Nothing sets it: the kernel's default must be the site value (scanner.boot.sysctl).
    nothing_sets = none_of(sources.sets(r"(\S*)", f"something sets {key}", r"(\S+)"))
    defaults = sources.kernel_default(wanted_var, ops[2])
    kernel_default = all_of(nothing_sets, any_of(*defaults)) if defaults else None
    twin = SYSCTL_BYTES_TWINS.get(key)
    if twin:  # the site's byte limit, with nothing setting the ratio, is reported
        twin_pattern = r"[./]".join(re.escape(part) for part in twin.split("."))
        positive = r"0*([1-9]\d*)"
        twin_sets = any_of(
            *(sources.some(object_id, None, f"a system file sets {twin}")
              for object_id in sources.files(sources.line(positive, twin_pattern), twin)),
            facts.tuned_setting(twin_pattern.replace("[./]", r"\."), [(positive, None)],
                                f"tuned sets {twin}"),
            facts.tuned_setting(re.escape(sources.vm_twin), [(positive, None)],
                                f"tuned [vm] sets {sources.vm_twin}"))
        bytes_limit = all_of(nothing_sets, twin_sets, comment=f"{twin} is set instead")
        kernel_default = (any_of(kernel_default, bytes_limit) if kernel_default is not None
                          else bytes_limit)
    return any_of(judged, kernel_default) if kernel_default is not None else judged


def sysctl_fields_at_boot(facts: OvalFacts, rule: Rule) -> Element:
    """scanner.checks.kernel.sysctl_fields_at_boot: each field of the value after boot at
    least its site value. A source whose value is not that many numbers fails the rule
    (sascheck says error: docs/oval.md)."""
    key, names = rule.params["key"], rule.params["fields_from"]
    sources = _BootSources(facts, key)
    count = len(names)
    well_formed = rf"\d+(?:[ \t]+\d+){{{count - 1}}}"
    # A value that is not ``count`` numbers (tuned may end it with a comment); the blank
    # after '=' is the line pattern's, so no backtracking into it lets the lookahead pass.
    malformed = rf"(?![ \t]|{well_formed}(?:[ \t]+#[^\n]*)?[ \t]*$)([^\n]*?)"
    nothing_sets = none_of(sources.sets(r"(\S[^\n]*?)", f"something sets {key}"))
    fields = []
    for number, name in enumerate(names):
        wanted_var = facts.external(name)
        ops = OPS["at_least"]
        equal, other = _states(facts, f"{key} field {number + 1}", wanted_var, ops)
        value = rf"(?:\d+[ \t]+){{{number}}}(\d+)(?:[ \t]+\d+){{{count - 1 - number}}}"
        judged = sources.judged(value, equal, other,
                                f"{key} field {number + 1} is at least {name} after boot")
        defaults = sources.kernel_default(wanted_var, ops[2], number)
        fields.append(any_of(judged, all_of(nothing_sets, any_of(*defaults)))
                      if defaults else judged)
    return all_of(none_of(sources.sets(malformed, f"something sets {key} to other than "
                                                  f"{count} numbers")),
                  *fields, comment=f"{key} is at least the site values after boot")
