"""Kernel settings: THP, CPU governor, sysctl now and after boot, NUMA (scanner/checks/kernel.py)."""

from __future__ import annotations

import re

from ...rules import Rule
from ...rules.host_layout import (
    KERNEL_SYSCTL_DEFAULTS,
    KTUNE_SCRIPTS,
    KTUNE_SHIPPED_CONFIG,
    NUMA_NODES_ONLINE,
    PROC_CMDLINE,
    PROC_CPUINFO,
    SYSCTL_BYTES_TWINS,
    SYSCTL_CONF,
    SYSCTL_DIRS,
    THP_DIRS,
    TUNED_MAIN_CONF,
    TUNED_REAPPLY_SYSCTL_DIRS,
    TUNED_TRUE_WORDS,
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
    kernel_is,
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
_OPS = {"equal": ("equals", "not equal", "equals"),
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
                        entity("ind:subexpression", datatype="int", op=_OPS[compare][0],
                               var=facts.external(rule.params["value_from"]),
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


def sysctl_at_boot(facts: OvalFacts, rule: Rule) -> Element:
    """scanner.checks.kernel.sysctl_at_boot, as far as OVAL can follow it: it cannot sort
    files by name, so every system file that sets the key must agree with the site value; a
    value in /etc or /run (which tuned's reapply_sysctl applies last) holds over tuned's,
    else tuned's must agree too."""
    oval = facts.oval
    key = rule.params["key"]
    key_pattern = r"[./]".join(re.escape(part) for part in key.split("."))
    line = rf"^[ \t]*-?[ \t]*{key_pattern}[ \t]*=[ \t]*(\S*)[ \t]*$"
    wanted_var = facts.external(rule.params["value_from"])
    ops = _OPS[rule.params.get("compare", "equal")]
    equal = oval.state("ind:textfilecontent54", f"{key} is as the site wants",
                       entity("ind:subexpression", datatype="int", op=ops[0],
                              var=wanted_var, var_check="all"))
    other = oval.state("ind:textfilecontent54", f"{key} is not as the site wants",
                       entity("ind:subexpression", datatype="int", op=ops[1],
                              var=wanted_var, var_check="all"))

    def lines_in(directories: tuple[str, ...], comment: str, name: str = key,
                 pattern: str = line) -> str:
        return oval.obj("ind:textfilecontent54", f"{name} in {comment}",
                        entity("ind:path", var=oval.paths(comment, directories),
                               var_check="at least one"),
                        entity("ind:filename", r"\.conf$", op="pattern match"),
                        entity("ind:pattern", pattern, op="pattern match"),
                        entity("ind:instance", "1", datatype="int", op="greater than or equal"))

    reapplied = lines_in(TUNED_REAPPLY_SYSCTL_DIRS, "sysctl.d in /etc and /run")
    packaged_dirs = [d for d in SYSCTL_DIRS if d not in TUNED_REAPPLY_SYSCTL_DIRS]
    packaged = lines_in((*packaged_dirs, KTUNE_SCRIPTS), "packaged sysctl.d and ktune.d")
    files = files_matching(facts, f"{key} in sysctl.conf and sysctl.ktune",
                   (SYSCTL_CONF, KTUNE_SHIPPED_CONFIG["SYSCTL"]), line)
    conf = files_matching(facts, f"{key} in {SYSCTL_CONF}", (SYSCTL_CONF,), line)

    def some(object_id: str, state: str, comment: str) -> Element:
        return criterion(oval.test("ind:textfilecontent54", comment, object_id, state,
                                   check="at least one"))

    reapply_off = files_matching(facts, "tuned's reapply_sysctl turned off", (TUNED_MAIN_CONF,),
                         r"^[ \t]*reapply_sysctl[ \t]*=(?![ \t]*(?i:"
                         + "|".join(TUNED_TRUE_WORDS) + r")[ \t]*$)")
    tuned_key = key_pattern.replace("[./]", r"\.")
    # tuned 2.25+ [vm]: dirty_ratio = N, and (2.26+) dirty_bytes = N% (scanner's
    # _tuned_vm_dirty); OVAL does not read tuned's version.
    vm_twin = SYSCTL_BYTES_TWINS.get(key, "").partition(".")[2]

    def tuned_sets(value: str, state: str | None, comment: str, surely: bool = True) -> Element:
        """tuned's [sysctl] key, or its [vm] option, has ``value`` (one group); ``surely``
        as OvalFacts.tuned_enabled (False where it makes the rule fail)."""
        found = [facts.tuned_setting(tuned_key, [(value, state)], comment, surely)]
        if vm_twin:
            found += [facts.tuned_setting(re.escape(key.partition(".")[2]), [(value, state)],
                                          f"{comment} ([vm])", surely),
                      facts.tuned_setting(re.escape(vm_twin), [(value + "%", state)],
                                          f"{comment} ([vm] {vm_twin} as a percentage)", surely)]
        return any_of(*found)
    # Nothing sets it: the kernel's default must be the site value (scanner.sysctl_boot).
    nothing_sets = none_of(
        *(criterion(oval.test("ind:textfilecontent54", f"a system file sets {key}", object_id))
          for object_id in (reapplied, packaged, files)),
        tuned_sets(r"(\S+)", None, f"tuned sets {key}", surely=False))
    wanted = oval.values_of(f"site value for {key}", wanted_var)
    defaults = []
    earlier: list[Element] = []
    for prefix, value in KERNEL_SYSCTL_DEFAULTS.get(key, ()):
        kernel = kernel_is(facts, "^" + re.escape(prefix), f"kernel {prefix or 'any'}")
        if value is None:  # not known: no default passes there (sascheck says error)
            earlier.append(kernel)
            continue
        is_value = oval.state("ind:variable", f"{value}", entity(
            "ind:value", value, datatype="int", op=ops[2]))
        defaults.append(all_of(kernel, *(none_of(e) for e in earlier), criterion(oval.test(
            "ind:variable", f"the site value is the kernel's {key} default {value}", wanted,
            is_value))))
        earlier.append(kernel)
    kernel_default = all_of(nothing_sets, any_of(*defaults)) if defaults else None
    twin = SYSCTL_BYTES_TWINS.get(key)
    if twin:  # the site's byte limit, with nothing setting the ratio, is reported
        twin_pattern = r"[./]".join(re.escape(part) for part in twin.split("."))
        twin_line = rf"^[ \t]*-?[ \t]*{twin_pattern}[ \t]*=[ \t]*0*[1-9]\d*[ \t]*$"
        twin_sets = any_of(
            *(criterion(oval.test("ind:textfilecontent54", f"a system file sets {twin}",
                                  object_id))
              for object_id in (
                  lines_in(TUNED_REAPPLY_SYSCTL_DIRS, "sysctl.d in /etc and /run", twin,
                           twin_line),
                  lines_in((*packaged_dirs, KTUNE_SCRIPTS), "packaged sysctl.d and ktune.d",
                           twin, twin_line),
                  files_matching(facts, f"{twin} in sysctl.conf and sysctl.ktune",
                                 (SYSCTL_CONF, KTUNE_SHIPPED_CONFIG["SYSCTL"]), twin_line))),
            facts.tuned_setting(twin_pattern.replace("[./]", r"\."), [(r"0*([1-9]\d*)", None)],
                                f"tuned sets {twin}"),
            facts.tuned_setting(re.escape(vm_twin), [(r"0*([1-9]\d*)", None)],
                                f"tuned [vm] sets {vm_twin}"))
        bytes_limit = all_of(nothing_sets, twin_sets, comment=f"{twin} is set instead")
        kernel_default = (any_of(kernel_default, bytes_limit) if kernel_default is not None
                          else bytes_limit)
    judged = all_of(
        none_of(*(some(object_id, other, f"a system file sets {key} to another value")
                  for object_id in (reapplied, packaged, files))),
        any_of(
            all_of(any_of(some(reapplied, equal, f"/etc or /run sets {key}"),
                          some(conf, equal, f"{SYSCTL_CONF} sets {key}")),
                   criterion(oval.test("ind:textfilecontent54", "reapply_sysctl is off",
                                       reapply_off), negate=True)),
            all_of(any_of(*(some(object_id, equal, f"a system file sets {key}")
                            for object_id in (reapplied, packaged, files)),
                          tuned_sets(r"(\d+)", equal, f"tuned sets {key}")),
                   none_of(tuned_sets(r"(\d+)", other, f"tuned sets {key} to another value",
                                      surely=False)))),
        comment=f"{key} is the site value after boot")
    return any_of(judged, kernel_default) if kernel_default is not None else judged


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
