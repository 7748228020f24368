"""The OVAL half of each check kind: the same semantics as scanner/checks, as criteria.

Where OVAL cannot say exactly what the scanner says, the README lists the difference
and tests/test_parity.py asserts it.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from ..rules import Rule
from ..rules.host_layout import (
    BDI_CLASS,
    BLS_ENTRIES,
    EFI_VENDOR_DIRS,
    FSTAB,
    GRUB2_CFG,
    GRUB_DEFAULTS,
    GRUBENV,
    INIT_SCRIPTS,
    KERNEL_CMDLINE,
    KERNEL_SYSCTL_DEFAULTS,
    KTUNE_ENABLES_THP,
    KTUNE_NOBARRIER,
    KTUNE_PMQOS_LATENCY,
    KTUNE_SCRIPTS,
    KTUNE_SYSCONFIG,
    KTUNE_SYSCTL_DEFAULTS,
    KTUNE_SYSV,
    LEGACY_DEFAULT_SCHEDULERS,
    LEGACY_GRUB_CONFS,
    LIBVIRT_DEFINED_DOMAINS,
    MOUNTINFO,
    MULTIPATH_ALL_PATHS,
    MULTIPATH_CONF,
    MULTIPATH_CONF_DIR,
    MULTIPATH_UUID_PATTERN,
    MULTIPATH_UUID_PREFIX,
    NETWORK_FS_TYPES,
    NUMA_NODES_ONLINE,
    PROC_CMDLINE,
    PROC_CPUINFO,
    QUEUE_IO_MIN,
    RHEL5_KERNEL_PREFIX,
    SAS_DEFAULT_PAGE_STEP,
    SAS_ROLES,
    SATA_VENDOR,
    SYSCTL_CONF,
    SYSCTL_DIRS,
    SYSTEMD_UNIT_DIRS,
    SYSTEMD_WANTS_DIRS,
    SYSV_RUNLEVEL_DIRS,
    THP_DIRS,
    TMPFILES_DIRS,
    TUNED_MAIN_CONF,
    TUNED_REAPPLY_SYSCTL_DIRS,
    UDEV_RULES_DIRS,
    legacy_kernel_regex,
)
from .oval import (
    Element,
    all_of,
    any_of,
    arithmetic,
    capture,
    component,
    concat,
    count,
    criterion,
    entity,
    escape_regex,
    literal,
    none_of,
    unique,
    var,
)
from .oval_facts import OvalFacts

BLOCK_RULE = r'(?=[^#\n]*SUBSYSTEM=="(?:[^"\n]*\|)?block(?:\|[^"\n]*)?")'
SETRA = r"blockdev\s+(?:[^\n]*\s)?--setra\s+(\d+)"
# The last NAME= argument (the kernel takes the last); quotes may surround the line.
LAST_ARG = r"(?:^|[ \t\"']){name}=([^\s\"']*)(?![^\n]*[ \t\"']{name}=)"

Generator = Callable[[OvalFacts, Rule], Element]


def _alternatives(values: list[str]) -> str:
    return "^(?:" + "|".join(re.escape(v) for v in values) + ")$"


def thp_mode(facts: OvalFacts, rule: Rule) -> Element:
    oval = facts.oval
    setting = rule.params["setting"]
    files = oval.obj("ind:textfilecontent54", f"THP {setting} selection",
                     entity("ind:path", var=oval.paths("THP directories", THP_DIRS),
                            var_check="at least one"),
                     entity("ind:filename", setting),
                     entity("ind:pattern", r"\[([^\]]+)\]", op="pattern match"),
                     entity("ind:instance", "1", datatype="int"))
    allowed = oval.state("ind:textfilecontent54", f"THP {setting} is allowed",
                         entity("ind:subexpression", _alternatives(rule.params["allowed"]),
                                op="pattern match"))
    return criterion(oval.test("ind:textfilecontent54", rule.title, files, allowed))


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


def sysctl_value(facts: OvalFacts, rule: Rule) -> Element:
    oval = facts.oval
    key = rule.params["key"]
    # Offline (OSCAP_PROBE_ROOT) the sysctl probe is not supported: read /proc/sys.
    value = oval.obj("ind:textfilecontent54", key,
                     entity("ind:filepath", "/proc/sys/" + key.replace(".", "/")),
                     entity("ind:pattern", r"^\s*(\d+)", op="pattern match"),
                     entity("ind:instance", "1", datatype="int"))
    wanted = oval.state("ind:textfilecontent54", f"{key} equals the site value",
                        entity("ind:subexpression", datatype="int", op="equals",
                               var=facts.external(rule.params["value_from"]),
                               var_check="all"))
    return criterion(oval.test("ind:textfilecontent54", rule.title, value, wanted))


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
    equal = oval.state("ind:textfilecontent54", f"{key} is the site value",
                       entity("ind:subexpression", datatype="int", op="equals",
                              var=wanted_var, var_check="all"))
    other = oval.state("ind:textfilecontent54", f"{key} is another value",
                       entity("ind:subexpression", datatype="int", op="not equal",
                              var=wanted_var, var_check="all"))

    def lines_in(directories: tuple[str, ...], comment: str) -> str:
        return oval.obj("ind:textfilecontent54", f"{key} in {comment}",
                        entity("ind:path", var=oval.paths(comment, directories),
                               var_check="at least one"),
                        entity("ind:filename", r"\.conf$", op="pattern match"),
                        entity("ind:pattern", line, op="pattern match"),
                        entity("ind:instance", "1", datatype="int", op="greater than or equal"))

    reapplied = lines_in(TUNED_REAPPLY_SYSCTL_DIRS, "sysctl.d in /etc and /run")
    packaged_dirs = [d for d in SYSCTL_DIRS if d not in TUNED_REAPPLY_SYSCTL_DIRS]
    packaged = lines_in((*packaged_dirs, KTUNE_SCRIPTS), "packaged sysctl.d and ktune.d")
    files = _files(facts, f"{key} in sysctl.conf and sysctl.ktune",
                   (SYSCTL_CONF, KTUNE_SYSCTL_DEFAULTS["SYSCTL"]), line)
    conf = _files(facts, f"{key} in {SYSCTL_CONF}", (SYSCTL_CONF,), line)

    def some(object_id: str, state: str, comment: str) -> Element:
        return criterion(oval.test("ind:textfilecontent54", comment, object_id, state,
                                   check="at least one"))

    reapply_off = _files(facts, "tuned's reapply_sysctl turned off", (TUNED_MAIN_CONF,),
                         r"^[ \t]*reapply_sysctl[ \t]*=[ \t]*(?i:0|false|no|off)[ \t]*$")
    tuned_key = key_pattern.replace("[./]", r"\.")
    # Nothing sets it: the kernel's default must be the site value (scanner.sysctl_boot).
    nothing_sets = none_of(
        *(criterion(oval.test("ind:textfilecontent54", f"a system file sets {key}", object_id))
          for object_id in (reapplied, packaged, files)),
        facts.tuned_setting(tuned_key, [(r"(\S+)", None)], f"tuned sets {key}"))
    wanted = oval.values_of(f"site value for {key}", wanted_var)
    defaults = []
    earlier: list[Element] = []
    for prefix, value in KERNEL_SYSCTL_DEFAULTS.get(key, ()):
        kernel = _kernel_is(facts, "^" + re.escape(prefix), f"kernel {prefix or 'any'}")
        is_value = oval.state("ind:variable", f"{value}", entity(
            "ind:value", value, datatype="int", op="equals"))
        defaults.append(all_of(kernel, *(none_of(e) for e in earlier), criterion(oval.test(
            "ind:variable", f"the site value is the kernel's {key} default {value}", wanted,
            is_value))))
        earlier.append(kernel)
    kernel_default = all_of(nothing_sets, any_of(*defaults)) if defaults else None
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
                          facts.tuned_setting(tuned_key, [(r"(\d+)", equal)],
                                              f"tuned sets {key}")),
                   none_of(facts.tuned_setting(tuned_key, [(r"(\d+)", other)],
                                               f"tuned sets {key} to another value")))),
        comment=f"{key} is the site value after boot")
    return any_of(judged, kernel_default) if kernel_default is not None else judged


# -- SAS file systems ------------------------------------------------------------------
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
    oval = facts.oval
    state = oval.state("linux:partition", f"mounted with {' or '.join(rule.params['options'])}",
                       entity("linux:mount_options", _alternatives(rule.params["options"]),
                              op="pattern match", entity_check="at least one"))
    body = _each_role(facts, rule, state, "none satisfy")
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
    required_tests, forbidden_tests = [], []
    for role in SAS_ROLES:
        patterns = oval.local(f"fstab lines of SAS {role} file systems", concat(
            r"^[ \t]*[^#\s]\S*[ \t]+", escape_regex(var(facts.sas_mounts(role))),
            r"/?[ \t]+\S+[ \t]+(?!(?:\S*,)?noauto(?:,|[ \t]|$))(\S+)"))
        lines = oval.obj("ind:textfilecontent54", f"fstab entries of SAS {role} file systems",
                         entity("ind:filepath", FSTAB),
                         entity("ind:pattern", var=patterns, op="pattern match",
                                var_check="at least one"),
                         entity("ind:instance", "1", datatype="int", op="greater than or equal"))
        for option in rule.params["required"]:
            has = oval.state("ind:textfilecontent54", f"fstab options have {option}",
                             entity("ind:subexpression", rf"(?:^|,){re.escape(option)}(?:,|$)",
                                    op="pattern match"))
            required_tests.append(criterion(oval.test(
                "ind:textfilecontent54", f"SAS {role} fstab entries have {option}", lines, has,
                existence="any_exist")))
        if forbidden:
            bad = oval.state("ind:textfilecontent54", f"fstab options have {' or '.join(forbidden)}",
                             entity("ind:subexpression",
                                    rf"(?:^|,){_alternatives(forbidden)[1:-1]}(?:,|$)",
                                    op="pattern match"))
            forbidden_tests.append(criterion(oval.test(
                "ind:textfilecontent54", f"SAS {role} fstab entries lack {', '.join(forbidden)}",
                lines, bad, check="none satisfy", existence="any_exist")))
    if "nobarrier" in forbidden:  # RHEL 5/6 enterprise-storage remounts them at every boot
        forbidden_tests.append(none_of(all_of(_ktune_started(facts), _ktune_script_does(
            facts, KTUNE_NOBARRIER, "remounts file systems nobarrier"))))
    lifted_by = rule.params.get("allowed_when")
    barriers = all_of(*forbidden_tests) if forbidden_tests else None
    if barriers is not None and lifted_by:
        declared = oval.state("ind:variable", f"{lifted_by} is true",
                              entity("ind:value", "true", datatype="boolean"))
        barriers = any_of(criterion(oval.test(
            "ind:variable", f"the site declares {lifted_by}",
            oval.values_of(lifted_by, facts.external(lifted_by)), declared)), barriers)
    return all_of(*required_tests, *([barriers] if barriers is not None else []))


def fs_type(facts: OvalFacts, rule: Rule) -> Element:
    state = facts.oval.state("linux:partition", "an allowed file system type",
                              entity("linux:fs_type", var=facts.listed("allowed_fs_types"),
                                     var_check="at least one"))
    return _each_role(facts, rule, state, "all")


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
    oval = facts.oval
    allowed = oval.state("ind:textfilecontent54", "an allowed scheduler",
                         entity("ind:subexpression", var=facts.listed("allowed_schedulers"),
                                var_check="at least one"))
    tests = []
    for depth, names in enumerate(facts.device_levels()):
        # Files without a [selection] (bio-based dm, zram) yield no item: skipped.
        files = facts.queue_files(names, "scheduler", r"\[([^\]]+)\]",
                                   f"schedulers at stack level {depth}")
        tests.append(criterion(oval.test("ind:textfilecontent54",
                                         f"{rule.title} (level {depth})", files, allowed,
                                         existence="any_exist")))
    return all_of(*tests)


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


# -- tuned and boot ----------------------------------------------------------------------
def tuned_profile(facts: OvalFacts, rule: Rule) -> Element:
    oval = facts.oval
    levels = facts.tuned_levels()
    allowed = oval.state("ind:variable", "an allowed tuned profile",
                         entity("ind:value", var=facts.listed("allowed_tuned_profiles"),
                                var_check="at least one", entity_check="at least one"))
    matched = any_of(*(criterion(oval.test(
        "ind:variable", f"an allowed profile at level {depth}",
        oval.values_of(f"tuned profiles at level {depth}", names), allowed,
        check="at least one", existence="at_least_one_exists"))
        for depth, names in enumerate(levels)))
    rhel5_ktune = all_of(
        _kernel_is(facts, "^" + re.escape(RHEL5_KERNEL_PREFIX), "a RHEL 5 kernel (2.6.18)"),
        none_of(facts.tuned_installed()), _ktune_started(facts))
    return any_of(all_of(facts.tuned_installed(), facts.tuned_enabled(), matched), rhel5_ktune,
                  comment="a throughput tuned profile, or RHEL 5's ktune, at boot")


def _files(facts: OvalFacts, comment: str, paths: tuple[str, ...], pattern: str) -> str:
    return facts.oval.obj(
        "ind:textfilecontent54", comment,
        entity("ind:filepath", var=facts.oval.paths(f"{comment}: files", paths),
               var_check="at least one"),
        entity("ind:pattern", pattern, op="pattern match"),
        entity("ind:instance", "1", datatype="int", op="greater than or equal"))


def _udev(facts: OvalFacts, comment: str, assignment: str) -> str:
    return facts.oval.obj(
        "ind:textfilecontent54", comment,
        entity("ind:path", var=facts.oval.paths("udev rules directories", UDEV_RULES_DIRS),
               var_check="at least one"),
        entity("ind:filename", r"\.rules$", op="pattern match"),
        entity("ind:pattern", rf"^{BLOCK_RULE}[^#\n]*{assignment}", op="pattern match"),
        entity("ind:instance", "1", datatype="int", op="greater than or equal"))


class _Cmdline:
    """Kernel command-line sources in the order the scanner picks them."""

    def __init__(self, facts: OvalFacts) -> None:
        self.facts = facts
        oval = facts.oval
        self.bls = oval.obj("ind:textfilecontent54", "BLS entry options",
                            entity("ind:path", BLS_ENTRIES),
                            entity("ind:filename", r"\.conf$", op="pattern match"),
                            entity("ind:pattern", r"^options[ \t]+(.*)$", op="pattern match"),
                            entity("ind:instance", "1", datatype="int",
                                   op="greater than or equal"))
        self.legacy = _files(facts, "GRUB 0.97 kernel lines", LEGACY_GRUB_CONFS[:1],
                             r"^[ \t]*kernel[ \t]+\S+(.*)$")
        # Every menu entry's linux line (the scanner judges the default entry alone).
        self.grub2 = _files(facts, "GRUB 2 menu linux lines",
                            (GRUB2_CFG, *(f"{d}/grub.cfg" for d in EFI_VENDOR_DIRS)),
                            r"^[ \t]*linux(?:16|efi)?[ \t]+\S+(.*)$")
        self.grub = _files(facts, f"GRUB_CMDLINE_LINUX in {GRUB_DEFAULTS}", (GRUB_DEFAULTS,),
                           r"^[ \t]*(?:export[ \t]+)?GRUB_CMDLINE_LINUX(?:_DEFAULT)?=(.*)$")
        self.kernel = _files(facts, KERNEL_CMDLINE, (KERNEL_CMDLINE,),
                             r"^([^#\n].*)$")
        self.grubenv = _files(facts, "grubenv kernelopts and tuned_params",
                              (GRUBENV,), r"^(?:kernelopts|tuned_params)=(.*)$")

    def exists(self, object_id: str, comment: str) -> Element:
        return criterion(self.facts.oval.test("ind:textfilecontent54", comment, object_id,
                                               existence="at_least_one_exists"))

    def none_lack(self, object_id: str, has_it: str, comment: str,
                  extra: tuple[tuple[str, str], ...] = ()) -> Element:
        """No line of ``object_id`` lacks the argument (exclude those that have it)."""
        oval = self.facts.oval
        subject = oval.obj("ind:textfilecontent54", f"{comment}: lacking", set_of=(object_id,),
                           filters=(("exclude", has_it), *extra))
        return criterion(oval.test("ind:textfilecontent54", comment, subject,
                                   existence="none_exist"))

    def thp_never(self) -> Element:
        oval = self.facts.oval
        has = oval.state("ind:textfilecontent54", "transparent_hugepage=never (last one)",
                         entity("ind:subexpression", LAST_ARG.format(name="transparent_hugepage")
                                .replace(r"([^\s\"']*)", r"never(?=[\s\"']|$)"),
                                op="pattern match"))
        grubenv_var = oval.state("ind:textfilecontent54", "uses $kernelopts or $tuned_params",
                                 entity("ind:subexpression", r"\$(kernelopts|tuned_params)",
                                        op="pattern match"))
        bls_ok = all_of(
            self.none_lack(self.bls, has, "every BLS entry sets THP never",
                           (("exclude", grubenv_var),)),
            any_of(self.none_lack(self.bls, has, "no BLS entry relies on grubenv",
                                  (("include", grubenv_var),)),
                   criterion(oval.test("ind:textfilecontent54", "grubenv sets THP never",
                                       self.grubenv, has, check="at least one"))))
        legacy_ok = self.none_lack(self.legacy, has, "every GRUB 0.97 entry sets THP never")
        grub2_ok = self.none_lack(self.grub2, has, "every GRUB 2 menu entry sets THP never")
        grub_ok = self.none_lack(self.grub, has, f"{GRUB_DEFAULTS} sets THP never")
        kernel_ok = self.none_lack(self.kernel, has, f"{KERNEL_CMDLINE} sets THP never")
        bls = self.exists(self.bls, "BLS entries exist")
        legacy = self.exists(self.legacy, "GRUB 0.97 entries exist")
        grub2 = self.exists(self.grub2, "GRUB 2 menu entries exist")
        grub = self.exists(self.grub, f"{GRUB_DEFAULTS} sets the command line")
        kernel = self.exists(self.kernel, f"{KERNEL_CMDLINE} exists")
        # The order scanner.bootloader decides in: BLS, GRUB 2 menu, GRUB 0.97, templates.
        return any_of(
            all_of(bls, bls_ok),
            all_of(none_of(bls), grub2, grub2_ok),
            all_of(none_of(bls), none_of(grub2), legacy, legacy_ok),
            all_of(none_of(bls), none_of(grub2), none_of(legacy), any_of(grub, kernel),
                   any_of(none_of(grub), grub_ok), any_of(none_of(kernel), kernel_ok)),
            comment="the kernel command line that will boot sets transparent_hugepage=never")

    def argument(self, name: str, allowed_var: str | None) -> Element:
        """The command line that boots sets ``name``= to one of ``allowed_var`` (None: to
        anything; under BLS, grubenv's kernelopts or tuned_params count too)."""
        oval = self.facts.oval
        sets: dict[str, Element] = {}
        # One item holds every line's capture, '' where a line lacks the argument.
        if allowed_var is None:
            state = oval.state("ind:variable", "a value", entity(
                "ind:value", ".", op="pattern match", entity_check="at least one"))
            what = f"{name}="
        else:
            state = oval.state("ind:variable", "an allowed value", entity(
                "ind:value", var=allowed_var, var_check="at least one",
                entity_check="at least one"))
            what = f"an allowed {name}"
        sources = [(self.bls, "BLS"), (self.grub2, "GRUB 2 menu"), (self.legacy, "GRUB 0.97"),
                   (self.grub, GRUB_DEFAULTS), (self.kernel, KERNEL_CMDLINE)]
        if allowed_var is None:
            sources.append((self.grubenv, "grubenv"))
        for object_id, source in sources:
            values = oval.local(f"{name}= in {source}", _capture_last(name, object_id))
            sets[source] = criterion(oval.test("ind:variable", f"{source} sets {what}",
                                               oval.values_of(f"{name}= in {source}", values),
                                               state, existence="at_least_one_exists"))
        if allowed_var is None:
            sets["BLS"] = any_of(sets["BLS"], sets["grubenv"])
        bls = self.exists(self.bls, "BLS entries exist")
        grub2 = self.exists(self.grub2, "GRUB 2 menu entries exist")
        legacy = self.exists(self.legacy, "GRUB 0.97 entries exist")
        # Only what decides the next boot counts (scanner.bootloader's order).
        return any_of(
            all_of(bls, sets["BLS"]),
            all_of(none_of(bls), grub2, sets["GRUB 2 menu"]),
            all_of(none_of(bls), none_of(grub2), legacy, sets["GRUB 0.97"]),
            all_of(none_of(bls), none_of(grub2), none_of(legacy),
                   any_of(sets[GRUB_DEFAULTS], sets[KERNEL_CMDLINE])))


def _capture_last(name: str, object_id: str) -> Element:
    return capture(LAST_ARG.format(name=name), component(object_id, "subexpression"))


def _runs_at_boot(facts: OvalFacts, comment: str, scripts: str) -> Element:
    """Some init script among the items of ``scripts`` is a regular file its owner may
    execute: systemd's rc-local.service and SysV's rc run nothing else (a link's own mode
    does not count; the file it points at is among the items too)."""
    oval = facts.oval
    paths = oval.local(f"{comment}: files", component(scripts, "filepath"))
    files = oval.obj("unix:file", f"{comment}: the files",
                     entity("unix:filepath", var=paths, var_check="at least one"))
    runnable = oval.state("unix:file", "a regular file its owner may execute",
                          entity("unix:type", "regular"),
                          entity("unix:uexec", "true", datatype="boolean"))
    return criterion(oval.test("unix:file", f"{comment} and runs at boot", files, runnable,
                               check="at least one", existence="at_least_one_exists"))


def _writes_thp(file: str, value: str) -> str:
    """A shell command writing ``value`` (a regex) to the THP ``file`` (boot_writers._WRITE)."""
    return (r"""(?:echo|printf)\s+(?:-[ne]+\s+)?['"]?""" + value + r"""['"]?\s*"""
            r"""(?:>+\s*|\|\s*tee\s+(?:-a\s+)?)['"]?/sys/kernel/mm/"""
            rf"(?:redhat_)?transparent_hugepage/{file}(?![\w.])")


def _thp_written_late(facts: OvalFacts, file: str) -> Element:
    """An executable init script or a systemd unit a boot target wants writes never to the
    THP ``file``: they run last (scanner.boot_writers)."""
    oval = facts.oval
    init = _files(facts, f"init scripts writing THP {file} never", INIT_SCRIPTS,
                  r"^[^#\n]*" + _writes_thp(file, "never"))
    wanted = oval.obj("unix:file", "services boot targets want",
                      entity("unix:path", var=oval.paths("systemd target wants directories",
                                                         SYSTEMD_WANTS_DIRS),
                             var_check="at least one"),
                      entity("unix:filename", r"\.service$", op="pattern match"))
    names = oval.local("names of wanted services", component(wanted, "filename"))
    unit_files = oval.union_values("unit files of wanted services", [
        oval.local(f"wanted services in {directory}", concat(f"{directory}/", var(names)))
        for directory in SYSTEMD_UNIT_DIRS])
    # An Exec line, continued with backslash-newline, as systemd joins it.
    units = oval.obj("ind:textfilecontent54", f"wanted services writing THP {file} never",
                     entity("ind:filepath", var=unit_files, var_check="at least one"),
                     entity("ind:pattern", r"^[ \t]*Exec(?:Start|StartPre|StartPost)[ \t]*="
                                           r"(?:[^\n]|\\\n)*?" + _writes_thp(file, "never"),
                            op="pattern match"),
                     entity("ind:instance", "1", datatype="int", op="greater than or equal"))
    return any_of(_runs_at_boot(facts, f"an init script writes THP {file} never", init),
                  criterion(oval.test("ind:textfilecontent54",
                                      f"a wanted service writes THP {file} never", units)))


def _thp_tmpfiles(facts: OvalFacts, file: str, value: str, comment: str) -> Element:
    """A tmpfiles.d w line writes a value matching ``value`` to the THP ``file``."""
    oval = facts.oval
    lines = oval.obj("ind:textfilecontent54", f"tmpfiles.d lines writing THP {file}",
                     entity("ind:path", var=oval.paths("tmpfiles.d directories", TMPFILES_DIRS),
                            var_check="at least one"),
                     entity("ind:filename", r"\.conf$", op="pattern match"),
                     entity("ind:pattern", r"^w\+?!?[ \t]+/sys/kernel/mm/(?:redhat_)?"
                                           rf"transparent_hugepage/{file}(?:[ \t]+\S+){{4}}"
                                           r"[ \t]+(\S+)", op="pattern match"),
                     entity("ind:instance", "1", datatype="int", op="greater than or equal"))
    state = oval.state("ind:textfilecontent54", f"writes {comment}",
                       entity("ind:subexpression", value, op="pattern match"))
    return criterion(oval.test("ind:textfilecontent54", f"tmpfiles.d writes THP {file} {comment}",
                               lines, state, check="at least one"))


def _ktune_started(facts: OvalFacts) -> Element:
    """RHEL 5/6: ktune has a SysV start link (chkconfig ktune on)."""
    oval = facts.oval
    started = oval.obj("unix:file", "ktune started at boot (SysV)",
                       entity("unix:path", var=oval.paths("SysV run-level directories",
                                                          SYSV_RUNLEVEL_DIRS),
                              var_check="at least one"),
                       entity("unix:filename", rf"^S[0-9]{{2}}{KTUNE_SYSV}$", op="pattern match"))
    return criterion(oval.test("unix:file", "ktune runs at boot", started))


def _ktune_script_does(facts: OvalFacts, pattern: str, what: str) -> Element:
    oval = facts.oval
    scripts = oval.obj("ind:textfilecontent54", f"ktune scripts that {what}",
                       entity("ind:path", KTUNE_SCRIPTS),
                       entity("ind:filename", r"\.sh$", op="pattern match"),
                       entity("ind:pattern", pattern, op="pattern match"),
                       entity("ind:instance", "1", datatype="int"))
    return criterion(oval.test("ind:textfilecontent54", f"a ktune script {what}", scripts))


def _ktune_elevator(facts: OvalFacts, state: str | None) -> Element:
    """ktune starts at boot and its ELEVATOR (/etc/sysconfig/ktune) is set (matches
    ``state``)."""
    oval = facts.oval
    elevator = _files(facts, "ktune's ELEVATOR", (KTUNE_SYSCONFIG,),
                      r"""^[ \t]*ELEVATOR=["']?([A-Za-z0-9_-]+)["']?[ \t]*$""")
    sets = criterion(oval.test("ind:textfilecontent54", "ktune sets an elevator" if state is None
                               else "ktune sets an allowed elevator", elevator, state))
    return all_of(_ktune_started(facts), sets)


def thp_at_boot(facts: OvalFacts, rule: Rule) -> Element:
    """THP enabled and defrag end at never after boot, in scanner.checks.boot's order: the
    command line (enabled only), tmpfiles.d, tuned (silent on enabled when the command line
    sets it), RHEL 5/6 ktune, then init scripts and systemd units."""
    ktune_enables = all_of(_ktune_started(facts),
                           _ktune_script_does(facts, KTUNE_ENABLES_THP, "turns THP on"))
    cmdline = _Cmdline(facts)

    def tuned(key: str, value: str, comment: str) -> Element:
        return facts.tuned_setting(key, [(value, None)], comment)

    enabled_key, defrag_key = "transparent_hugepages?", r"transparent_hugepage\.defrag"
    enabled = any_of(
        _thp_written_late(facts, "enabled"),
        all_of(none_of(ktune_enables), any_of(
            all_of(cmdline.thp_never(),
                   none_of(_thp_tmpfiles(facts, "enabled", "^(?!never$)", "another value"))),
            all_of(none_of(cmdline.argument("transparent_hugepage", None)), any_of(
                tuned(enabled_key, "(never)", "tuned sets THP never"),
                all_of(none_of(tuned(enabled_key, r"(\S+)", "tuned sets THP")),
                       _thp_tmpfiles(facts, "enabled", "^never$", "never")))))),
        comment="THP enabled is never after boot")
    defrag = any_of(
        _thp_written_late(facts, "defrag"),
        tuned(defrag_key, "(never)", "tuned sets THP defrag never"),
        all_of(none_of(tuned(defrag_key, r"(\S+)", "tuned sets THP defrag")),
               _thp_tmpfiles(facts, "defrag", "^never$", "never")),
        comment="THP defrag is never after boot")
    return all_of(enabled, defrag)


def multipath_all_paths(facts: OvalFacts, rule: Rule) -> Element:
    """Stricter than scanner.checks.multipath (which follows the precedence per SAS map): no
    line of multipath.conf or its conf.d sets another path_grouping_policy."""
    oval = facts.oval
    allowed = "|".join(MULTIPATH_ALL_PATHS)
    conf = oval.obj("ind:textfilecontent54", "multipath.conf path_grouping_policy",
                    entity("ind:filepath", MULTIPATH_CONF),
                    entity("ind:pattern", r'^[ \t]*path_grouping_policy[ \t]+"?([A-Za-z_]+)',
                           op="pattern match"),
                    entity("ind:instance", "1", datatype="int", op="greater than or equal"))
    drop_ins = oval.obj("ind:textfilecontent54", "multipath conf.d path_grouping_policy",
                        entity("ind:path", MULTIPATH_CONF_DIR),
                        entity("ind:filename", r"\.conf$", op="pattern match"),
                        entity("ind:pattern", r'^[ \t]*path_grouping_policy[ \t]+"?([A-Za-z_]+)',
                               op="pattern match"),
                        entity("ind:instance", "1", datatype="int", op="greater than or equal"))
    other = oval.state("ind:textfilecontent54", "a policy that leaves paths idle",
                       entity("ind:subexpression", f"^(?!(?:{allowed})$)", op="pattern match"))
    # As the scanner, only where a SAS file system sits on a multipath map.
    maps = [criterion(oval.test(
        "ind:textfilecontent54", f"a multipath map at SAS stack level {depth}", facts.dm_uuids(
            names, f"^{MULTIPATH_UUID_PREFIX}", f"multipath maps at SAS stack level {depth}")))
        for depth, names in enumerate(facts.device_levels())]
    return any_of(none_of(*maps, comment="no SAS file system is on a multipath map"),
                  none_of(*(criterion(oval.test("ind:textfilecontent54", comment, object_id,
                                                other, check="at least one"))
                            for object_id, comment in ((conf, "multipath.conf idles paths"),
                                                       (drop_ins, "a conf.d file idles paths"))),
                          comment="multipath uses all paths"))


def tuned_cpu_latency(facts: OvalFacts, rule: Rule) -> Element:
    at_most = facts.oval.state("ind:textfilecontent54", f"at most {rule.params['max_us']} us",
                               entity("ind:subexpression", str(rule.params["max_us"]),
                                      datatype="int", op="less than or equal"))
    # RHEL 5/6: a ktune script's pmqos-static.py (scanner.tuned.Ktune.cpu_dma_latency).
    oval = facts.oval
    pmqos = oval.obj("ind:textfilecontent54", "ktune scripts' pmqos-static.py cpu_dma_latency",
                     entity("ind:path", KTUNE_SCRIPTS),
                     entity("ind:filename", r"\.sh$", op="pattern match"),
                     entity("ind:pattern", KTUNE_PMQOS_LATENCY, op="pattern match"),
                     entity("ind:instance", "1", datatype="int", op="greater than or equal"))
    return any_of(facts.tuned_setting("force_latency", [(r"(\d+)", at_most)],
                                      "tuned [cpu] force_latency"),
                  all_of(_ktune_started(facts), criterion(oval.test(
                      "ind:textfilecontent54", "ktune holds cpu_dma_latency low", pmqos,
                      at_most, check="all"))))


# A defined guest's block-device disk off the direct path (scanner.checks.guests).
UNDIRECT_DISKS = ("//devices/disk[@type='block' and (not(@device) or @device='disk')]"
                  "[not(driver/@cache='none') or not(target/@bus='virtio' or "
                  "(target/@bus='scsi' and ../controller[@type='scsi' and "
                  "@model='virtio-scsi']))]/@type")


def kvm_guest_disks_direct(facts: OvalFacts, rule: Rule) -> Element:
    oval = facts.oval
    undirect = oval.obj("ind:xmlfilecontent", "guest block disks without virtio or cache=none",
                        entity("ind:path", LIBVIRT_DEFINED_DOMAINS),
                        entity("ind:filename", r"\.xml$", op="pattern match"),
                        entity("ind:xpath", UNDIRECT_DISKS))
    return none_of(criterion(oval.test("ind:xmlfilecontent", "a guest block disk is not direct",
                                       undirect)), comment="guests' block disks are direct")


def numa_enabled(facts: OvalFacts, rule: Rule) -> Element:
    """As scanner.checks.kernel.numa_enabled: no last numa=off running or booting next, and
    several sockets (distinct physical ids) mean several nodes online."""
    oval = facts.oval
    running_off = oval.obj("ind:textfilecontent54", "the running kernel's last numa= is off",
                           entity("ind:filepath", PROC_CMDLINE),
                           entity("ind:pattern", r"(?:^|\s)numa=off(?:\s+(?!numa=)\S+)*\s*$",
                                  op="pattern match"),
                           entity("ind:instance", "1", datatype="int"))
    off = oval.constant("numa=off", ["off"])
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
    return all_of(
        none_of(criterion(oval.test("ind:textfilecontent54", "running with numa=off",
                                    running_off))),
        none_of(_Cmdline(facts).argument("numa", off)),
        any_of(none_of(multi_socket),
               criterion(oval.test("ind:textfilecontent54", "several nodes online",
                                   several_nodes))),
        comment="NUMA is on")


def io_tuning_at_boot(facts: OvalFacts, rule: Rule) -> Element:
    oval = facts.oval
    minimum = facts.external("read_ahead_min_kb")
    sectors = facts.doubled("read_ahead_min_kb")

    def at_least(variable: str, comment: str) -> str:
        return oval.state("ind:textfilecontent54", comment,
                          entity("ind:subexpression", datatype="int",
                                 op="greater than or equal", var=variable, var_check="all"))

    kib_ok = at_least(minimum, "at least the minimum in KiB")
    sectors_ok = at_least(sectors, "at least the minimum in sectors")
    scheduler_ok = oval.state("ind:textfilecontent54", "an allowed scheduler",
                              entity("ind:subexpression", var=facts.listed("allowed_schedulers"),
                                     var_check="at least one"))

    def some(object_id: str, state: str, comment: str) -> Element:
        return criterion(oval.test("ind:textfilecontent54", comment, object_id, state,
                                   check="at least one"))

    read_ahead = any_of(
        # As tuned parses it (scanner.checks.boot.tuned_readahead_kib): N, >N, N WORD (KiB
        # unless WORD starts with s: sectors); >N s and Ns are rejected and set nothing.
        facts.tuned_setting("readahead", [(r">[ \t]*(\d+)", kib_ok), (r"(\d+)", kib_ok),
                                          (r"(\d+)[ \t]+[^s \t][^\n]*?", kib_ok),
                                          (r"(\d+)[ \t]+s[^\n]*?", sectors_ok)],
                            "tuned [disk] readahead"),
        some(_udev(facts, "udev read_ahead_kb", r'ATTR\{(?:queue|bdi)/read_ahead_kb\}'
                                                 r'[ \t]*[:+]?=[ \t]*"(\d+)"'),
             kib_ok, "a udev rule sets read_ahead_kb"),
        some(_udev(facts, "udev RUN blockdev --setra", r'RUN[^"\n]*"[^"\n]*' + SETRA),
             sectors_ok, "a udev rule runs blockdev --setra"),
        _runs_at_boot(facts, "an init script runs blockdev --setra enough", oval.obj(
            "ind:textfilecontent54", "init scripts running blockdev --setra enough",
            set_of=(_files(facts, "init scripts running blockdev --setra", INIT_SCRIPTS,
                           r"^[^#\n]*" + SETRA),),
            filters=(("include", sectors_ok),))),
        comment="read-ahead is set at boot")
    honours_elevator = _kernel_is(facts, legacy_kernel_regex(), "a pre-blk-mq kernel (2.x, 3.x)")
    udev_scheduler = _udev(facts, "udev scheduler", r'ATTR\{queue/scheduler\}[ \t]*[:+]?=[ \t]*'
                                                     r'"([^"\n]*)"')
    cmdline = _Cmdline(facts)
    nothing_sets = all_of(
        none_of(facts.tuned_setting("elevator", [(r"(\S+)", None)], "tuned sets an elevator")),
        criterion(oval.test("ind:textfilecontent54", "a udev rule sets a scheduler",
                            udev_scheduler), negate=True),
        none_of(all_of(honours_elevator, cmdline.argument("elevator", None))),
        none_of(_ktune_elevator(facts, None)),
        comment="nothing configures a scheduler")
    scheduler = any_of(
        facts.tuned_setting("elevator", [(r"(\S+)", scheduler_ok)], "tuned [disk] elevator"),
        some(udev_scheduler, scheduler_ok, "a udev rule sets the scheduler"),
        all_of(honours_elevator, cmdline.argument("elevator", facts.listed("allowed_schedulers"))),
        _ktune_elevator(facts, scheduler_ok),
        all_of(nothing_sets, _kernel_default_allowed(facts)),
        comment="an allowed scheduler is set at boot")
    return all_of(read_ahead, scheduler)


def _kernel_is(facts: OvalFacts, pattern: str, comment: str) -> Element:
    oval = facts.oval
    release = oval.obj("ind:textfilecontent54", comment,
                       entity("ind:filepath", "/proc/sys/kernel/osrelease"),
                       entity("ind:pattern", pattern, op="pattern match"),
                       entity("ind:instance", "1", datatype="int"))
    return criterion(oval.test("ind:textfilecontent54", comment, release))


def _kernel_default_allowed(facts: OvalFacts) -> Element:
    """The scheduler the kernel gives the SAS devices is allowed (scanner.blockdev.
    default_scheduler): blk-mq mq-deadline, none with several hardware queues; RHEL 7
    deadline, cfq for SATA disks; RHEL 5/6 cfq. The default of a plain disk must be allowed
    too (what the scanner judges when no SAS device offers a choice)."""
    oval = facts.oval

    def allows(name: str) -> Element:
        state = oval.state("ind:variable", f"lists {name}",
                           entity("ind:value", name, entity_check="at least one"))
        return criterion(oval.test(
            "ind:variable", f"allowed_schedulers lists {name}",
            oval.values_of("allowed schedulers", facts.listed("allowed_schedulers")), state))

    def no_sas_device(path: str, pattern: str | None, comment: str) -> Element:
        """No device at any level of the SAS stacks has /sys/block/NAME/``path`` (matching
        ``pattern``)."""
        tests = []
        for depth, names in enumerate(facts.device_levels()):
            files = oval.local(f"{comment}: level {depth} files",
                               concat("/sys/block/", var(names), f"/{path}"))
            if pattern is None:
                found = oval.obj("unix:file", f"{comment} (level {depth})",  # a directory
                                 entity("unix:path", var=files, var_check="at least one"),
                                 entity("unix:filename", nil=True))
                kind = "unix:file"
            else:
                found = oval.obj("ind:textfilecontent54", f"{comment} (level {depth})",
                                 entity("ind:filepath", var=files, var_check="at least one"),
                                 entity("ind:pattern", pattern, op="pattern match"),
                                 entity("ind:instance", "1", datatype="int"))
                kind = "ind:textfilecontent54"
            tests.append(criterion(oval.test(kind, f"no SAS device: {comment} (level {depth})",
                                             found, existence="none_exist")))
        return all_of(*tests)

    prefixes = dict(LEGACY_DEFAULT_SCHEDULERS)
    rhel7 = prefixes["3."]
    return any_of(
        all_of(_kernel_is(facts, r"^(?:[4-9]|[1-9][0-9])\.", "a blk-mq kernel (4.x and later)"),
               allows("mq-deadline"),
               any_of(allows("none"), no_sas_device("mq/1", None, "several hardware queues"))),
        all_of(_kernel_is(facts, r"^3\.", "a 3.x kernel (RHEL 7)"), allows(rhel7),
               any_of(allows("cfq"), no_sas_device("device/vendor", rf"^{SATA_VENDOR}\s*$",
                                                   "a SATA disk"))),
        all_of(_kernel_is(facts, r"^2\.", "a 2.x kernel (RHEL 5, 6)"), allows(prefixes["2."])),
        comment="the kernel's default scheduler is allowed")


# -- striping ----------------------------------------------------------------------------
def _no_multipath_mounted(facts: OvalFacts) -> Element:
    oval = facts.oval
    maps = facts.dm_uuids(facts.mounted_devices(), MULTIPATH_UUID_PATTERN,
                          "SAS file systems mounted on a multipath map")
    return criterion(oval.test("ind:textfilecontent54", "no SAS file system mounts a multipath "
                               "map (one LUN's paths)", maps, existence="none_exist"))


def volume_striped(facts: OvalFacts, rule: Rule) -> Element:
    """As scanner.checks.striping.volume_striped, less its ratio test: OVAL cannot pair one
    device's minimum and optimal I/O sizes, so any published optimal size counts."""
    oval = facts.oval
    # One item per device that exists (the mounted names hold empty values where a capture
    # did not match); /sys/class/block has partitions too, which are never striped.
    mounted = oval.obj("ind:textfilecontent54", "devices SAS file systems mount",
                       entity("ind:path", var=oval.local(
                           "class directories of mounted SAS devices",
                           concat("/sys/class/block/", var(facts.mounted_devices()))),
                           var_check="at least one"),
                       entity("ind:filename", "dev"),
                       entity("ind:pattern", r"^([0-9]+:[0-9]+)", op="pattern match"),
                       entity("ind:instance", "1", datatype="int"))
    striped = oval.state("ind:textfilecontent54", "a striped SAS volume",
                         entity("ind:path", var=oval.local(
                             "class directories of striped SAS volumes",
                             concat("/sys/class/block/", var(facts.striped_devices()))),
                             var_check="at least one"))
    return all_of(criterion(oval.test("ind:textfilecontent54", rule.title, mounted, striped,
                                      existence="any_exist")),
                  _no_multipath_mounted(facts))


# BUFSIZE / stripe unit ratios OVAL can recognise (it has no division): k * unit for k up to
# this many, and stripe units below 2**PAIR_SHIFT bytes (32 MiB).
BUFSIZE_MULTIPLES = 1024
PAIR_SHIFT = 25


def bufsize_matches_stripe(facts: OvalFacts, rule: Rule) -> Element:
    """As scanner.checks.striping.bufsize_matches_stripe. OVAL arithmetic keeps values paired
    only while one multi-valued input takes part, so each unit u is paired with its own
    multiples in one number: u * (k * 2**25 + 1) = (k * u) * 2**25 + u, and BUFSIZE B is a
    multiple of u when B * 2**25 + u is among them."""
    oval = facts.oval
    units_object = facts.queue_files(facts.striped_devices(), QUEUE_IO_MIN, r"^([0-9]+)\s*$",
                                     "stripe units of striped SAS volumes")
    units = oval.local("stripe units of striped SAS volumes (bytes)",
                       component(units_object, "subexpression"), datatype="int")
    bufsize = facts.external("sas_bufsize_bytes")
    default_divisors = [str(d) for d in range(1, SAS_DEFAULT_PAGE_STEP + 1)
                        if SAS_DEFAULT_PAGE_STEP % d == 0]
    divides_default = oval.state("ind:textfilecontent54", "a unit every default SAS page spans",
                                 entity("ind:subexpression", f"^(?:{'|'.join(default_divisors)})$",
                                        op="pattern match"))
    shift = literal(str(1 << PAIR_SHIFT), datatype="int")
    wanted = oval.local("BUFSIZE x 2^25 + each stripe unit", arithmetic(
        "add", arithmetic("multiply", var(bufsize), shift), var(units)), datatype="int")
    tags = oval.constant("k x 2^25 + 1 for each multiple k", [
        str((k << PAIR_SHIFT) + 1) for k in range(1, BUFSIZE_MULTIPLES + 1)], datatype="int")
    multiples = oval.local("each stripe unit's multiples, paired with it", arithmetic(
        "multiply", var(units), var(tags)), datatype="int")
    paired = oval.state("ind:variable", "BUFSIZE is a multiple of its unit",
                        entity("ind:value", datatype="int", var=multiples,
                               var_check="at least one", entity_check="all"))
    return any_of(
        all_of(criterion(oval.has_values("sas_bufsize_bytes is 0: SAS picks each page",
                                         bufsize, "^0$")),
               criterion(oval.test("ind:textfilecontent54", f"{rule.title} (SAS's own pages)",
                                   units_object, divides_default, existence="any_exist"))),
        all_of(criterion(oval.has_values("sas_bufsize_bytes is set", bufsize, "^[1-9]")),
               criterion(oval.test("ind:variable", f"{rule.title} (sas_bufsize_bytes)",
                                   oval.values_of("stripe units paired with BUFSIZE", wanted),
                                   paired, existence="any_exist"))),
        comment="BUFSIZE spans whole stripe units")


GENERATORS: dict[str, Generator] = {
    "thp_mode": thp_mode,
    "cpu_governor": cpu_governor,
    "sysctl_value": sysctl_value,
    "sysctl_at_boot": sysctl_at_boot,
    "block_scheduler": block_scheduler,
    "block_read_ahead": block_read_ahead,
    "mount_option_forbidden": mount_option_forbidden,
    "mount_option_required": mount_option_required,
    "mount_options_at_boot": mount_options_at_boot,
    "sas_dirs_separate": sas_dirs_separate,
    "fs_type": fs_type,
    "tuned_profile": tuned_profile,
    "thp_at_boot": thp_at_boot,
    "io_tuning_at_boot": io_tuning_at_boot,
    "numa_enabled": numa_enabled,
    "multipath_all_paths": multipath_all_paths,
    "tuned_cpu_latency": tuned_cpu_latency,
    "kvm_guest_disks_direct": kvm_guest_disks_direct,
    "volume_striped": volume_striped,
    "bufsize_matches_stripe": bufsize_matches_stripe,
}
