"""turbo_and_smt's OVAL (scanner/checks/cpu.py)."""

from __future__ import annotations

from ...rules import Rule
from ...rules.host_layout import (
    CPU_SMT_ACTIVE,
    CPU_SMT_CONTROL,
    CPUFREQ_BOOST,
    INTEL_NO_TURBO,
    PROC_CPUINFO,
)
from ..oval import Element, all_of, any_of, criterion, entity, none_of
from ..oval_facts import OvalFacts
from .common import Cmdline


def _file_says(facts: OvalFacts, path: str, pattern: str, comment: str) -> Element:
    oval = facts.oval
    found = oval.obj("ind:textfilecontent54", comment, entity("ind:filepath", path),
                     entity("ind:pattern", pattern, op="pattern match"),
                     entity("ind:instance", "1", datatype="int"))
    return criterion(oval.test("ind:textfilecontent54", comment, found))


def turbo_and_smt(facts: OvalFacts, rule: Rule) -> Element:
    """SMT active (or not supported by the CPU), no nosmt on the command line that boots,
    turbo not switched off now (intel_pstate, cpufreq boost) nor by tuned at boot. A file
    the kernel does not expose is nothing to judge (the cpu_features platform makes the rule
    notapplicable where none is)."""
    cmdline = Cmdline(facts)
    # notsupported with cpuinfo's ht flag may be Hyper-Threading off in the firmware: the
    # scanner says notchecked, OVAL refuses to pass (README).
    no_smt = all_of(_file_says(facts, CPU_SMT_CONTROL, r"^notsupported\s*$",
                               "the kernel sees no SMT"),
                    none_of(_file_says(facts, PROC_CPUINFO, r"^(?:flags|Features)\s*:.*\sht(?:\s|$)",
                                       "the CPU reports HTT (cpuinfo ht)")),
                    comment="the CPU has no SMT")
    return all_of(
        any_of(none_of(_file_says(facts, CPU_SMT_ACTIVE, r"^0\s*$", "SMT is not active")),
               no_smt),
        any_of(no_smt, none_of(cmdline.any_argument("nosmt", "", flag=True))),
        none_of(_file_says(facts, INTEL_NO_TURBO, r"^1\s*$", "intel_pstate turbo is off")),
        none_of(_file_says(facts, CPUFREQ_BOOST, r"^0\s*$", "cpufreq boost is off")),
        none_of(facts.tuned_setting("no_turbo", [(r"0*([1-9][0-9]*)", None)],
                                    "tuned turns turbo off (no_turbo)", surely=False)),
        none_of(facts.tuned_setting("boost", [(r"(0)", None)], "tuned turns boost off",
                                    surely=False)),
        comment="Hyper-Threading and Turbo Boost on, now and at the next boot")
