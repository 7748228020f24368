"""Kernel settings: THP, CPU governor, sysctl now, NUMA (scanner/checks/kernel.py)."""

from __future__ import annotations

from ...rules import Rule
from ...rules.host_layout import (
    NUMA_NODES_ONLINE,
    PROC_CMDLINE,
    PROC_CPUINFO,
    SYSCTL_BYTES_TWINS,
    THP_DIRS,
)
from ..oval import (
    Element,
    all_of,
    any_of,
    component,
    count,
    criterion,
    entity,
    none_of,
    unique,
)
from ..oval_facts import OvalFacts
from .common import (
    Cmdline,
    alternatives,
    files_matching,
)


def _thp_selects(facts: OvalFacts, setting: str, allowed: list[str], comment: str) -> Element:
    oval = facts.oval
    files = oval.obj("ind:textfilecontent54", f"THP {setting} selection",
                     entity("ind:path", var=oval.paths("THP directories", THP_DIRS),
                            var_check="at least one"),
                     entity("ind:filename", setting),
                     entity("ind:pattern", r"\[([^\]]+)\]", op="pattern match"),
                     entity("ind:instance", "1", datatype="int"))
    state = oval.state("ind:textfilecontent54", f"THP {setting} is {' or '.join(allowed)}",
                       entity("ind:subexpression", alternatives(allowed), op="pattern match"))
    return criterion(oval.test("ind:textfilecontent54", comment, files, state))


def thp_mode(facts: OvalFacts, rule: Rule) -> Element:
    setting = rule.params["setting"]
    selects = _thp_selects(facts, setting, rule.params["allowed"], rule.title)
    if setting != "defrag":
        return selects
    # As scanner.checks.kernel.thp_mode: with enabled never no huge page is allocated.
    return any_of(selects, _thp_selects(facts, "enabled", ["never"], "THP enabled is never"))


def cpu_governor(facts: OvalFacts, rule: Rule) -> Element:
    oval = facts.oval
    files = oval.obj("ind:textfilecontent54", "CPU frequency governors",
                     entity("ind:path", r"^/sys/devices/system/cpu/cpu[0-9]+/cpufreq$",
                            op="pattern match"),
                     entity("ind:filename", "scaling_governor"),
                     entity("ind:pattern", r"^(\S+)", op="pattern match"),
                     entity("ind:instance", "1", datatype="int"))
    wanted = oval.state("ind:textfilecontent54", "the wanted governor",
                        entity("ind:subexpression", rule.params["governor"]))
    return criterion(oval.test("ind:textfilecontent54", rule.title, files, wanted))


# A sysctl rule's compare (rules/check_kinds.py) as OVAL operations: the value against the
# site's, its negation, and the site value against a kernel default the value would keep.
OPS = {"equal": ("equals", "not equal", "equals"),
        "at_most": ("less than or equal", "greater than", "greater than or equal"),
        "at_least": ("greater than or equal", "less than", "less than or equal")}
_SAYS = {"equal": "equals", "at_most": "is at most", "at_least": "is at least"}


def sysctl_value(facts: OvalFacts, rule: Rule) -> Element:
    oval = facts.oval
    key = rule.params["key"]
    # Offline (OSCAP_PROBE_ROOT) the sysctl probe is not supported: read /proc/sys.
    value = oval.obj("ind:textfilecontent54", key,
                     entity("ind:filepath", "/proc/sys/" + key.replace(".", "/")),
                     entity("ind:pattern", r"^\s*(\d+)", op="pattern match"),
                     entity("ind:instance", "1", datatype="int"))
    compare = rule.params.get("compare", "equal")
    wanted = oval.state("ind:textfilecontent54", f"{key} {_SAYS[compare]} the site value",
                        entity("ind:subexpression", datatype="int", op=OPS[compare][0],
                               var=facts.sysctl_wanted(rule.params),
                               var_check="all"))
    judged = criterion(oval.test("ind:textfilecontent54", rule.title, value, wanted))
    twin = SYSCTL_BYTES_TWINS.get(key)
    if twin is None:
        return judged

    def reads(name: str, pattern: str, comment: str) -> Element:
        found = oval.obj("ind:textfilecontent54", f"{name} {comment}",
                         entity("ind:filepath", "/proc/sys/" + name.replace(".", "/")),
                         entity("ind:pattern", pattern, op="pattern match"),
                         entity("ind:instance", "1", datatype="int"))
        return criterion(oval.test("ind:textfilecontent54", f"{name} {comment}", found))

    # As scanner.checks.kernel.sysctl_value: the site's byte limit is reported, not failed.
    return any_of(judged, all_of(reads(key, r"^\s*0\s*$", "reads 0"),
                                 reads(twin, r"^\s*[1-9]\d*\s*$", "is set")))


def sysctl_fields(facts: OvalFacts, rule: Rule) -> Element:
    """As scanner.checks.kernel.sysctl_fields: the value is exactly as many numbers as the
    rule names site values, and field n (the n-th number, whatever blanks part them) is at
    least the n-th site value."""
    oval = facts.oval
    key, names = rule.params["key"], rule.params["fields_from"]
    path = "/proc/sys/" + key.replace(".", "/")
    shape = oval.obj("ind:textfilecontent54", f"{key} as {len(names)} numbers",
                     entity("ind:filepath", path),
                     entity("ind:pattern", rf"^\s*\d+(?:\s+\d+){{{len(names) - 1}}}\s*$",
                            op="pattern match"),
                     entity("ind:instance", "1", datatype="int"))
    tests = [criterion(oval.test("ind:textfilecontent54", f"{key} holds {len(names)} numbers",
                                 shape))]
    for number, name in enumerate(names):
        field = oval.obj("ind:textfilecontent54", f"{key} field {number + 1}",
                         entity("ind:filepath", path),
                         entity("ind:pattern", rf"^\s*(?:\d+\s+){{{number}}}(\d+)",
                                op="pattern match"),
                         entity("ind:instance", "1", datatype="int"))
        least = oval.state("ind:textfilecontent54", f"{key} field {number + 1} is at least {name}",
                           entity("ind:subexpression", datatype="int",
                                  op="greater than or equal", var=facts.external(name),
                                  var_check="all"))
        tests.append(criterion(oval.test("ind:textfilecontent54",
                                         f"{key} field {number + 1} is at least {name}",
                                         field, least)))
    return all_of(*tests)


def numa_enabled(facts: OvalFacts, rule: Rule) -> Element:
    """As scanner.checks.kernel.numa_enabled: no last numa=off running or booting next, and
    several sockets (distinct physical ids) mean several nodes online."""
    oval = facts.oval
    running_off = oval.obj("ind:textfilecontent54", "the running kernel has a numa=off",
                           entity("ind:filepath", PROC_CMDLINE),
                           entity("ind:pattern", r"(?:^|\s)numa=off", op="pattern match"),
                           entity("ind:instance", "1", datatype="int"))
    socket_ids = oval.obj("ind:textfilecontent54", "CPU socket ids",
                          entity("ind:filepath", PROC_CPUINFO),
                          entity("ind:pattern", r"^physical id[ \t]*:[ \t]*(\d+)",
                                 op="pattern match"),
                          entity("ind:instance", "1", datatype="int",
                                 op="greater than or equal"))
    sockets = oval.local("distinct sockets",
                         count(unique(component(socket_ids, "subexpression"))), datatype="int")
    several = oval.state("ind:variable", "more than one", entity(
        "ind:value", "1", datatype="int", op="greater than"))
    multi_socket = criterion(oval.test("ind:variable", "several sockets",
                                       oval.values_of("distinct sockets", sockets), several))
    several_nodes = oval.obj("ind:textfilecontent54", "several NUMA nodes online",
                             entity("ind:filepath", NUMA_NODES_ONLINE),
                             entity("ind:pattern", r"[-,]", op="pattern match"),
                             entity("ind:instance", "1", datatype="int"))
    # Nothing to judge (no command line, boot entry or CPU data) is never a pass: scanner
    # says notchecked, OVAL fails.
    boot = Cmdline(facts)
    something = any_of(*(criterion(oval.test("ind:textfilecontent54", comment, obj))
                         for comment, obj in (
                             ("the running kernel's command line", files_matching(
                                 facts, "the running command line", (PROC_CMDLINE,), r"^(.*)$")),
                             ("CPUs in cpuinfo", socket_ids), ("a BLS entry", boot.bls),
                             ("a GRUB 0.97 kernel line", boot.legacy),
                             ("a GRUB 2 menu entry", boot.grub2),
                             ("GRUB_CMDLINE_LINUX", boot.grub))),
                       comment="something to judge NUMA by")
    return all_of(
        something,
        none_of(criterion(oval.test("ind:textfilecontent54", "running with numa=off",
                                    running_off))),
        none_of(boot.any_argument("numa", "off")),
        any_of(none_of(multi_socket), facts.guest(),
               criterion(oval.test("ind:textfilecontent54", "several nodes online",
                                   several_nodes))),
        comment="NUMA is on")
