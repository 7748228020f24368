"""SAS file systems and their block devices (scanner/checks/storage.py)."""

from __future__ import annotations

import re

from ...rules import Rule
from ...rules.host_layout import (
    BDI_CLASS,
    FSTAB,
    KTUNE_NOBARRIER,
    MOUNTINFO,
    MULTIPATH_UUID_PREFIX,
    NETWORK_FS_TYPES,
    SAS_ROLES,
)
from ..oval import (
    Element,
    all_of,
    any_of,
    capture,
    component,
    concat,
    criterion,
    entity,
    escape_regex,
    none_of,
    var,
)
from ..oval_facts import OvalFacts
from .common import (
    alternatives,
    ktune_script_does,
    ktune_started,
)


def _each_role(facts: OvalFacts, rule: Rule, state: str, check: str) -> Element:
    oval = facts.oval
    return all_of(*(criterion(oval.test(
        "linux:partition", f"{rule.title} ({role})", facts.sas_partitions(role), state,
        check=check, existence="any_exist")) for role in SAS_ROLES))


def mount_option_required(facts: OvalFacts, rule: Rule) -> Element:
    option = rule.params["option"]
    state = facts.oval.state("linux:partition", f"mounted with {option}",
                              entity("linux:mount_options", option,
                                     entity_check="at least one"))
    return _each_role(facts, rule, state, "all")


def mount_option_forbidden(facts: OvalFacts, rule: Rule) -> Element:
    """No SAS file system has the options, but one of WORK or UTILLOC that is throw-away
    scratch (holds a scratch_dirs directory; DATA's test still catches one holding DATA)."""
    oval = facts.oval
    said = " or ".join(rule.params["options"])

    def options() -> Element:  # a new element each time: lxml moves what it appends
        return entity("linux:mount_options", alternatives(rule.params["options"]),
                      op="pattern match", entity_check="at least one")
    state = oval.state("linux:partition", f"mounted with {said}", options())
    not_scratch = oval.state("linux:partition", f"not throw-away scratch, mounted with {said}",
                             entity("linux:mount_point", var=facts.scratch_mounts(),
                                    op="not equal", var_check="all"), options())
    body = all_of(*(criterion(oval.test(
        "linux:partition", f"{rule.title} ({role})", facts.sas_partitions(role),
        state if role == "DATA" else not_scratch, check="none satisfy", existence="any_exist"))
        for role in SAS_ROLES))
    lifted_by = rule.params.get("allowed_when")
    if not lifted_by:
        return body
    declared = oval.state("ind:variable", f"{lifted_by} is true",
                          entity("ind:value", "true", datatype="boolean"))
    lifted = oval.test("ind:variable", f"the site declares {lifted_by}",
                       oval.values_of(lifted_by, facts.external(lifted_by)), declared)
    return any_of(criterion(lifted), body)


def mount_options_at_boot(facts: OvalFacts, rule: Rule) -> Element:
    """Each SAS file system's /etc/fstab line (not noauto) has the required options and none
    of the forbidden ones. OVAL reads fstab only, and finds a mount point by its name as
    written (a line with \\040 for a space is not found): those file systems are skipped."""
    oval = facts.oval
    forbidden = rule.params.get("forbidden", [])
    required_tests, forbidden_tests, found_tests = [], [], []
    for role in SAS_ROLES:
        patterns = oval.local(f"fstab lines of SAS {role} file systems", concat(
            r"^[ \t]*[^#\s]\S*[ \t]+", escape_regex(var(facts.sas_mounts(role))),
            r"/?[ \t]+\S+[ \t]+(?!(?:\S*,)?noauto(?:,|[ \t]|$))(\S+)"))
        lines = oval.obj("ind:textfilecontent54", f"fstab entries of SAS {role} file systems",
                         entity("ind:filepath", FSTAB),
                         entity("ind:pattern", var=patterns, op="pattern match",
                                var_check="at least one"),
                         entity("ind:instance", "1", datatype="int", op="greater than or equal"))
        # A SAS file system no fstab line mounts at boot (a cluster resource, noauto, a
        # mount unit, a name OVAL cannot match) is not judged, so never a pass: the scanner
        # says notchecked (or judges the unit), OVAL fails.
        found_tests.append(any_of(
            criterion(facts.has_sas_role(role), negate=True),
            criterion(oval.test("ind:textfilecontent54", f"an fstab line mounts SAS {role}",
                                lines))))
        for option in rule.params["required"]:
            has = oval.state("ind:textfilecontent54", f"fstab options have {option}",
                             entity("ind:subexpression", rf"(?:^|,){re.escape(option)}(?:,|$)",
                                    op="pattern match"))
            required_tests.append(criterion(oval.test(
                "ind:textfilecontent54", f"SAS {role} fstab entries have {option}", lines, has,
                existence="any_exist")))
        if forbidden and role == "DATA":
            bad = oval.state("ind:textfilecontent54", f"fstab options have {' or '.join(forbidden)}",
                             entity("ind:subexpression",
                                    rf"(?:^|,){alternatives(forbidden)[1:-1]}(?:,|$)",
                                    op="pattern match"))
            forbidden_tests.append(criterion(oval.test(
                "ind:textfilecontent54", f"SAS {role} fstab entries lack {', '.join(forbidden)}",
                lines, bad, check="none satisfy", existence="any_exist")))
        elif forbidden:  # WORK, UTILLOC: a throw-away scratch file system may have them
            forbidden_tests.append(_forbidden_unless_scratch(facts, role, forbidden))
    if "nobarrier" in forbidden:  # RHEL 5/6 enterprise-storage remounts them at every boot
        forbidden_tests.append(none_of(all_of(ktune_started(facts, surely=False), ktune_script_does(
            facts, KTUNE_NOBARRIER, "remounts file systems nobarrier"))))
    lifted_by = rule.params.get("allowed_when")
    barriers = all_of(*forbidden_tests) if forbidden_tests else None
    if barriers is not None and lifted_by:
        declared = oval.state("ind:variable", f"{lifted_by} is true",
                              entity("ind:value", "true", datatype="boolean"))
        barriers = any_of(criterion(oval.test(
            "ind:variable", f"the site declares {lifted_by}",
            oval.values_of(lifted_by, facts.external(lifted_by)), declared)), barriers)
    return all_of(*found_tests, *required_tests, *([barriers] if barriers is not None else []))


def _forbidden_unless_scratch(facts: OvalFacts, role: str, forbidden: list[str]) -> Element:
    """No fstab line of ``role``'s file systems has the forbidden options, but one mounting a
    throw-away scratch file system (scratch_dirs). Each line is captured from its mount point
    to its options; the state's pattern, one per scratch mount point (and one no mount point
    is), must all hold: not that scratch mount point, and a forbidden option."""
    oval = facts.oval
    said = " or ".join(forbidden)
    patterns = oval.local(f"fstab lines of SAS {role} file systems, mount point to options",
                          concat(r"^[ \t]*[^#\s]\S*[ \t]+(",
                                 escape_regex(var(facts.sas_mounts(role))),
                                 r"/?[ \t]+\S+[ \t]+(?!(?:\S*,)?noauto(?:,|[ \t]|$))\S+)"))
    entries = oval.obj("ind:textfilecontent54",
                       f"fstab entries of SAS {role} file systems, mount point to options",
                       entity("ind:filepath", FSTAB),
                       entity("ind:pattern", var=patterns, op="pattern match",
                              var_check="at least one"),
                       entity("ind:instance", "1", datatype="int", op="greater than or equal"))
    unless = facts.once(f"scratch-fstab:{said}", lambda: oval.local(
        f"an fstab entry not of a throw-away scratch mount point, with {said}",
        concat("^(?!", escape_regex(var(facts.scratch_mounts())),
               rf"/?[ \t])\S+[ \t]+\S+[ \t]+(?:\S*,)?{alternatives(forbidden)[1:-1]}(?:,|$)")))
    bad = oval.state("ind:textfilecontent54", f"not throw-away scratch, with {said}",
                     entity("ind:subexpression", var=unless, op="pattern match",
                            var_check="all"))
    return criterion(oval.test(
        "ind:textfilecontent54", f"SAS {role} fstab entries lack {', '.join(forbidden)} "
        "(but on throw-away scratch)", entries, bad, check="none satisfy",
        existence="any_exist"))


def fs_type(facts: OvalFacts, rule: Rule) -> Element:
    """DATA's file systems may also be of a shared type; one that WORK or UTILLOC shares is
    judged in their tests too (scanner.checks.storage.fs_type)."""
    oval = facts.oval
    local = oval.state("linux:partition", "an allowed file system type",
                       entity("linux:fs_type", var=facts.listed("allowed_fs_types"),
                              var_check="at least one"))
    data_types = oval.union_values("file system types for SAS DATA", [
        facts.listed("allowed_fs_types"), facts.listed("allowed_shared_data_fs_types")])
    data = oval.state("linux:partition", "an allowed file system type for SAS DATA",
                      entity("linux:fs_type", var=data_types, var_check="at least one"))
    work_types = oval.union_values("file system types for SAS WORK", [
        facts.listed("allowed_fs_types"), facts.listed("allowed_work_fs_types")])
    work = oval.state("linux:partition", "an allowed file system type for SAS WORK",
                      entity("linux:fs_type", var=work_types, var_check="at least one"))
    # WORK on a WORK-only type (GFS2) must not hold DATA: its mount points are none of DATA's.
    apart_type = oval.state("linux:partition", "a type SAS WORK may have apart from DATA",
                            entity("linux:fs_type", var=facts.listed("allowed_work_fs_types"),
                                   var_check="at least one"))
    apart = oval.obj("linux:partition", "SAS WORK file systems of a WORK-only type",
                     set_of=(facts.sas_partitions("WORK"),), filters=[("include", apart_type)])
    # never empty either: with no DATA named (WORK and UTILLOC only), nothing is DATA's (a
    # word of its own: the same word on both sides would match)
    data_mounts = oval.union_values("SAS DATA's mount points, and a word no mount point is", [
        facts.sas_mounts("DATA"), oval.constant("no SAS DATA mount point", ["(no SAS DATA)"])])
    holds_data = oval.state("ind:variable", "a SAS DATA file system",
                            entity("ind:value", var=data_mounts,
                                   var_check="at least one", entity_check="at least one"))
    # never empty (a variable without a value makes oscap err): a word no mount point is
    apart_mounts = oval.values_of("mount points of SAS WORK's WORK-only file systems",
                                  oval.union_values("SAS WORK's WORK-only mount points", [
                                      oval.local("SAS WORK's WORK-only mount points (found)",
                                                 component(apart, "mount_point")),
                                      oval.constant("no mount point", ["(none)"])]))
    states = {"DATA": data, "WORK": work}
    return all_of(*(criterion(oval.test(
        "linux:partition", f"{rule.title} ({role})", facts.sas_partitions(role),
        states.get(role, local), check="all", existence="any_exist"))
        for role in SAS_ROLES),
        criterion(oval.test("ind:variable", "SAS WORK's GFS2 file systems hold no SAS DATA",
                            apart_mounts, holds_data, check="none satisfy",
                            existence="any_exist")))


def sas_dirs_separate(facts: OvalFacts, rule: Rule) -> Element:
    oval = facts.oval
    parts: list[Element] = []
    for index, role in enumerate(SAS_ROLES):
        mounts = facts.sas_mounts(role)
        on_root = oval.state("ind:variable", "the root file system",
                             entity("ind:value", "/", entity_check="at least one"))
        parts.append(criterion(oval.test("ind:variable", f"SAS {role} is not on /",
                                         oval.values_of(f"SAS {role} mounts", mounts), on_root,
                                         check="none satisfy", existence="any_exist")))
        for other in SAS_ROLES[index + 1:]:
            shared_fs = oval.state("ind:variable", f"a SAS {other} file system",
                                   entity("ind:value", var=facts.sas_mounts(other),
                                          var_check="at least one", entity_check="at least one"))
            overlap = oval.test("ind:variable", f"SAS {role} and {other} share no file system",
                                oval.values_of(f"SAS {role} mounts", mounts), shared_fs,
                                check="none satisfy", existence="any_exist")
            # One device mounted at two places is one file system (a bind mount).
            devices = {name: oval.local(f"SAS {name} devices", component(
                facts.sas_partitions(name), "device")) for name in (role, other)}
            same_device = oval.state("ind:variable", f"a device of a SAS {other} file system",
                                     entity("ind:value", var=devices[other],
                                            var_check="at least one",
                                            entity_check="at least one"))
            twins = oval.test("ind:variable", f"SAS {role} and {other} share no device",
                              oval.values_of(f"SAS {role} devices", devices[role]), same_device,
                              check="none satisfy", existence="any_exist")
            # The site may let this pair share (sas_shared_roles, ROLE+ROLE either way).
            may_share = criterion(oval.has_values(
                f"SAS {role} and {other} may share", facts.listed("sas_shared_roles"),
                rf"^(?:{role}\+{other}|{other}\+{role})$"))
            # A state whose variable has no values would match everything: guard it.
            parts.append(any_of(criterion(facts.has_sas_role(other), negate=True), may_share,
                                all_of(criterion(overlap), criterion(twins))))
    return all_of(*parts)


def block_scheduler(facts: OvalFacts, rule: Rule) -> Element:
    """As scanner.checks.storage.block_scheduler: every device's scheduler in the SAS stacks,
    except the paths of a request-based dm-multipath map there (its own scheduler decides;
    a bio-based map has no scheduler, so its paths are judged)."""
    oval = facts.oval
    allowed = oval.state("ind:textfilecontent54", "an allowed scheduler",
                         entity("ind:subexpression", var=facts.listed("allowed_schedulers"),
                                var_check="at least one"))
    stack = facts.stack_devices()
    # Files without a [selection] (bio-based dm, zram) yield no item: skipped.
    files = facts.queue_files(stack, "scheduler", r"\[([^\]]+)\]",
                              "schedulers in the SAS storage stacks")
    uuids = facts.dm_uuids(stack, f"^{MULTIPATH_UUID_PREFIX}",
                           "multipath maps in the SAS storage stacks")
    maps = facts.queue_files(oval.local(
        "names of multipath maps in the SAS storage stacks",
        capture(r"^/sys/block/([^/]+)/dm$", component(uuids, "path"))),
        "scheduler", r"\[([^\]]+)\]", "request-based multipath maps in the SAS storage stacks")
    path_links = oval.obj("unix:file", "paths of request-based multipath maps",
                          entity("unix:path", var=oval.local(
                              "slaves directories of request-based multipath maps",
                              concat(capture(r"^(/sys/block/[^/]+)/queue$",
                                             component(maps, "path")), "/slaves")),
                              var_check="at least one"),
                          entity("unix:filename", "^[^/]+$", op="pattern match"))
    # Never empty (a state over a variable with no value errs): "/" is no queue directory.
    path_queues = oval.union_values("queue directories of multipath paths, and one no queue "
                                    "is", [oval.local("queue directories of multipath paths",
                                                      concat("/sys/block/", component(
                                                          path_links, "filename"), "/queue")),
                                           oval.constant("no queue directory", ["/"])])
    a_path = oval.state("ind:textfilecontent54", "a multipath path's queue",
                        entity("ind:path", var=path_queues, var_check="at least one"))
    not_paths = oval.obj("ind:textfilecontent54",
                         "schedulers in the SAS storage stacks, multipath paths left out",
                         set_of=(files,), filters=(("exclude", a_path),))
    # No device with a scheduler under the SAS file systems (all on NFS, say) is nothing
    # judged: the scanner says notapplicable; OVAL, which cannot, fails rather than pass.
    return all_of(criterion(oval.test("ind:textfilecontent54", "a SAS device with a scheduler",
                                      files)),
                  criterion(oval.test("ind:textfilecontent54", rule.title, not_paths, allowed,
                                      existence="any_exist")))


def block_read_ahead(facts: OvalFacts, rule: Rule) -> Element:
    oval = facts.oval
    enough = oval.state("ind:textfilecontent54", "read-ahead at least the minimum",
                        entity("ind:subexpression", datatype="int",
                               op="greater than or equal",
                               var=facts.external("read_ahead_min_kb"), var_check="all"))
    mounted = facts.mounted_devices()
    tests = []
    for names, comment in ((mounted, "mounted devices"),
                           (facts.parents(mounted, "mounted devices"), "disks of partitions")):
        files = facts.queue_files(names, "read_ahead_kb", r"^(\d+)", f"read-ahead of {comment}")
        tests.append(criterion(oval.test("ind:textfilecontent54", f"{rule.title} ({comment})",
                                         files, enough, existence="any_exist")))
    # NFS: the bdi named by the mount's major:minor in /proc/self/mountinfo (scanner.facts).
    network = "|".join(re.escape(fstype) for fstype in NETWORK_FS_TYPES)
    for role in SAS_ROLES:
        lines = oval.local(f"mountinfo lines of SAS {role} network mounts", concat(
            r"^\S+ \S+ (\d+:\d+) \S+ ", escape_regex(var(facts.sas_mounts(role))),
            rf" .* - (?:{network}) "))
        numbers = oval.obj("ind:textfilecontent54", f"SAS {role} network mounts' major:minor",
                           entity("ind:filepath", MOUNTINFO),
                           entity("ind:pattern", var=lines, op="pattern match",
                                  var_check="at least one"),
                           entity("ind:instance", "1", datatype="int",
                                  op="greater than or equal"))
        bdi = oval.local(f"SAS {role} network mounts' bdi read-ahead", concat(
            f"{BDI_CLASS}/", component(numbers, "subexpression"), "/read_ahead_kb"))
        files = oval.obj("ind:textfilecontent54", f"read-ahead of SAS {role} network mounts",
                         entity("ind:filepath", var=bdi, var_check="at least one"),
                         entity("ind:pattern", r"^(\d+)", op="pattern match"),
                         entity("ind:instance", "1", datatype="int"))
        tests.append(criterion(oval.test("ind:textfilecontent54",
                                         f"{rule.title} (SAS {role} on NFS)", files, enough,
                                         existence="any_exist")))
    return all_of(*tests)
