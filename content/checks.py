"""The OVAL half of each check kind: the same semantics as scanner/checks, as criteria.

Where OVAL cannot say exactly what the scanner says, the README lists the difference
and tests/test_parity.py asserts it.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from ..rules import Rule
from ..rules.host_layout import INIT_SCRIPTS, THP_DIRS, legacy_kernel_regex
from .oval import Element, all_of, any_of, criterion, entity, none_of
from .shared import SAS_ROLES, Shared

UDEV_DIRS = ("/etc/udev/rules.d", "/usr/lib/udev/rules.d", "/lib/udev/rules.d", "/run/udev/rules.d")
BLOCK_RULE = r'(?=[^#\n]*SUBSYSTEM=="(?:[^"\n]*\|)?block(?:\|[^"\n]*)?")'
SETRA = r"blockdev\s+(?:[^\n]*\s)?--setra\s+(\d+)"
# The last NAME= argument (the kernel takes the last); quotes may surround the line.
LAST_ARG = r"(?:^|[ \t\"']){name}=([^\s\"']*)(?![^\n]*[ \t\"']{name}=)"

Generator = Callable[[Shared, Rule], Element]


def _alternatives(values: list[str]) -> str:
    return "^(?:" + "|".join(re.escape(v) for v in values) + ")$"


def thp_mode(shared: Shared, rule: Rule) -> Element:
    oval = shared.oval
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


def cpu_governor(shared: Shared, rule: Rule) -> Element:
    oval = shared.oval
    files = oval.obj("ind:textfilecontent54", "CPU frequency governors",
                     entity("ind:path", r"^/sys/devices/system/cpu/cpu[0-9]+/cpufreq$",
                            op="pattern match"),
                     entity("ind:filename", "scaling_governor"),
                     entity("ind:pattern", r"^(\S+)", op="pattern match"),
                     entity("ind:instance", "1", datatype="int"))
    wanted = oval.state("ind:textfilecontent54", "the wanted governor",
                        entity("ind:subexpression", rule.params["governor"]))
    return criterion(oval.test("ind:textfilecontent54", rule.title, files, wanted))


def sysctl_value(shared: Shared, rule: Rule) -> Element:
    oval = shared.oval
    key = rule.params["key"]
    # Offline (OSCAP_PROBE_ROOT) the sysctl probe is not supported: read /proc/sys.
    value = oval.obj("ind:textfilecontent54", key,
                     entity("ind:filepath", "/proc/sys/" + key.replace(".", "/")),
                     entity("ind:pattern", r"^\s*(\d+)", op="pattern match"),
                     entity("ind:instance", "1", datatype="int"))
    wanted = oval.state("ind:textfilecontent54", f"{key} equals the site value",
                        entity("ind:subexpression", datatype="int", op="equals",
                               var=shared.external(rule.params["value_from"]),
                               var_check="all"))
    return criterion(oval.test("ind:textfilecontent54", rule.title, value, wanted))


# -- SAS file systems ------------------------------------------------------------------
def _each_role(shared: Shared, rule: Rule, state: str, check: str) -> Element:
    oval = shared.oval
    return all_of(*(criterion(oval.test(
        "linux:partition", f"{rule.title} ({role})", shared.sas_partitions(role), state,
        check=check, existence="any_exist")) for role in SAS_ROLES))


def mount_option_required(shared: Shared, rule: Rule) -> Element:
    option = rule.params["option"]
    state = shared.oval.state("linux:partition", f"mounted with {option}",
                              entity("linux:mount_options", option,
                                     entity_check="at least one"))
    return _each_role(shared, rule, state, "all")


def mount_option_forbidden(shared: Shared, rule: Rule) -> Element:
    oval = shared.oval
    state = oval.state("linux:partition", f"mounted with {' or '.join(rule.params['options'])}",
                       entity("linux:mount_options", _alternatives(rule.params["options"]),
                              op="pattern match", entity_check="at least one"))
    body = _each_role(shared, rule, state, "none satisfy")
    lifted_by = rule.params.get("allowed_when")
    if not lifted_by:
        return body
    declared = oval.state("ind:variable", f"{lifted_by} is true",
                          entity("ind:value", "true", datatype="boolean"))
    lifted = oval.test("ind:variable", f"the site declares {lifted_by}",
                       oval.values_of(lifted_by, shared.external(lifted_by)), declared)
    return any_of(criterion(lifted), body)


def fs_type(shared: Shared, rule: Rule) -> Element:
    state = shared.oval.state("linux:partition", "an allowed file system type",
                              entity("linux:fs_type", var=shared.listed("allowed_fs_types"),
                                     var_check="at least one"))
    return _each_role(shared, rule, state, "all")


def sas_dirs_separate(shared: Shared, rule: Rule) -> Element:
    oval = shared.oval
    parts: list[Element] = []
    for index, role in enumerate(SAS_ROLES):
        mounts = shared.sas_mounts(role)
        on_root = oval.state("ind:variable", "the root file system",
                             entity("ind:value", "/", entity_check="at least one"))
        parts.append(criterion(oval.test("ind:variable", f"SAS {role} is not on /",
                                         oval.values_of(f"SAS {role} mounts", mounts), on_root,
                                         check="none satisfy", existence="any_exist")))
        for other in SAS_ROLES[index + 1:]:
            shared_fs = oval.state("ind:variable", f"a SAS {other} file system",
                                   entity("ind:value", var=shared.sas_mounts(other),
                                          var_check="at least one", entity_check="at least one"))
            overlap = oval.test("ind:variable", f"SAS {role} and {other} share no file system",
                                oval.values_of(f"SAS {role} mounts", mounts), shared_fs,
                                check="none satisfy", existence="any_exist")
            # A state whose variable has no values would match everything: guard it.
            parts.append(any_of(criterion(shared.has_sas_role(other), negate=True),
                                criterion(overlap)))
    return all_of(*parts)


def block_scheduler(shared: Shared, rule: Rule) -> Element:
    oval = shared.oval
    allowed = oval.state("ind:textfilecontent54", "an allowed scheduler",
                         entity("ind:subexpression", var=shared.listed("allowed_schedulers"),
                                var_check="at least one"))
    tests = []
    for depth, names in enumerate(shared.device_levels()):
        # Files without a [selection] (bio-based dm, zram) yield no item: skipped.
        files = shared.queue_files(names, "scheduler", r"\[([^\]]+)\]",
                                   f"schedulers at stack level {depth}")
        tests.append(criterion(oval.test("ind:textfilecontent54",
                                         f"{rule.title} (level {depth})", files, allowed,
                                         existence="any_exist")))
    return all_of(*tests)


def block_read_ahead(shared: Shared, rule: Rule) -> Element:
    oval = shared.oval
    enough = oval.state("ind:textfilecontent54", "read-ahead at least the minimum",
                        entity("ind:subexpression", datatype="int",
                               op="greater than or equal",
                               var=shared.external("read_ahead_min_kb"), var_check="all"))
    mounted = shared.mounted_devices()
    tests = []
    for names, comment in ((mounted, "mounted devices"),
                           (shared.parents(mounted, "mounted devices"), "disks of partitions")):
        files = shared.queue_files(names, "read_ahead_kb", r"^(\d+)", f"read-ahead of {comment}")
        tests.append(criterion(oval.test("ind:textfilecontent54", f"{rule.title} ({comment})",
                                         files, enough, existence="any_exist")))
    return all_of(*tests)


# -- tuned and boot ----------------------------------------------------------------------
def tuned_profile(shared: Shared, rule: Rule) -> Element:
    oval = shared.oval
    levels = shared.tuned_levels()
    allowed = oval.state("ind:variable", "an allowed tuned profile",
                         entity("ind:value", var=shared.listed("allowed_tuned_profiles"),
                                var_check="at least one", entity_check="at least one"))
    matched = any_of(*(criterion(oval.test(
        "ind:variable", f"an allowed profile at level {depth}",
        oval.values_of(f"tuned profiles at level {depth}", names), allowed,
        check="at least one", existence="at_least_one_exists"))
        for depth, names in enumerate(levels)))
    return all_of(shared.tuned_installed(), shared.tuned_enabled(), matched)


def _files(shared: Shared, comment: str, paths: tuple[str, ...], pattern: str) -> str:
    return shared.oval.obj(
        "ind:textfilecontent54", comment,
        entity("ind:filepath", var=shared.oval.paths(f"{comment}: files", paths),
               var_check="at least one"),
        entity("ind:pattern", pattern, op="pattern match"),
        entity("ind:instance", "1", datatype="int", op="greater than or equal"))


def _udev(shared: Shared, comment: str, assignment: str) -> str:
    return shared.oval.obj(
        "ind:textfilecontent54", comment,
        entity("ind:path", var=shared.oval.paths("udev rules directories", UDEV_DIRS),
               var_check="at least one"),
        entity("ind:filename", r"\.rules$", op="pattern match"),
        entity("ind:pattern", rf"^{BLOCK_RULE}[^#\n]*{assignment}", op="pattern match"),
        entity("ind:instance", "1", datatype="int", op="greater than or equal"))


class _Cmdline:
    """Kernel command-line sources in the order the scanner picks them."""

    def __init__(self, shared: Shared) -> None:
        self.shared = shared
        oval = shared.oval
        self.bls = oval.obj("ind:textfilecontent54", "BLS entry options",
                            entity("ind:path", "/boot/loader/entries"),
                            entity("ind:filename", r"\.conf$", op="pattern match"),
                            entity("ind:pattern", r"^options[ \t]+(.*)$", op="pattern match"),
                            entity("ind:instance", "1", datatype="int",
                                   op="greater than or equal"))
        self.legacy = _files(shared, "GRUB 0.97 kernel lines", ("/boot/grub/grub.conf",),
                             r"^[ \t]*kernel[ \t]+\S+(.*)$")
        self.grub = _files(shared, "GRUB_CMDLINE_LINUX in /etc/default/grub",
                           ("/etc/default/grub",),
                           r"^[ \t]*(?:export[ \t]+)?GRUB_CMDLINE_LINUX(?:_DEFAULT)?=(.*)$")
        self.kernel = _files(shared, "/etc/kernel/cmdline", ("/etc/kernel/cmdline",),
                             r"^([^#\n].*)$")
        self.grubenv = _files(shared, "grubenv kernelopts and tuned_params",
                              ("/boot/grub2/grubenv",), r"^(?:kernelopts|tuned_params)=(.*)$")

    def exists(self, object_id: str, comment: str) -> Element:
        return criterion(self.shared.oval.test("ind:textfilecontent54", comment, object_id,
                                               existence="at_least_one_exists"))

    def none_lack(self, object_id: str, has_it: str, comment: str,
                  extra: tuple[tuple[str, str], ...] = ()) -> Element:
        """No line of ``object_id`` lacks the argument (exclude those that have it)."""
        oval = self.shared.oval
        subject = oval.obj("ind:textfilecontent54", f"{comment}: lacking", set_of=(object_id,),
                           filters=(("exclude", has_it), *extra))
        return criterion(oval.test("ind:textfilecontent54", comment, subject,
                                   existence="none_exist"))

    def thp_never(self) -> Element:
        oval = self.shared.oval
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
        grub_ok = self.none_lack(self.grub, has, "/etc/default/grub sets THP never")
        kernel_ok = self.none_lack(self.kernel, has, "/etc/kernel/cmdline sets THP never")
        bls = self.exists(self.bls, "BLS entries exist")
        legacy = self.exists(self.legacy, "GRUB 0.97 entries exist")
        grub = self.exists(self.grub, "/etc/default/grub sets the command line")
        kernel = self.exists(self.kernel, "/etc/kernel/cmdline exists")
        return any_of(
            all_of(bls, bls_ok),
            all_of(none_of(bls), legacy, legacy_ok),
            all_of(none_of(bls), none_of(legacy), any_of(grub, kernel),
                   any_of(none_of(grub), grub_ok), any_of(none_of(kernel), kernel_ok)),
            comment="the kernel command line that will boot sets transparent_hugepage=never")

    def elevator(self, allowed_var: str) -> Element:
        oval = self.shared.oval
        tests = []
        for object_id, name in ((self.bls, "BLS"), (self.legacy, "GRUB 0.97"),
                                (self.grub, "/etc/default/grub"),
                                (self.kernel, "/etc/kernel/cmdline")):
            values = oval.local(f"elevator= in {name}", _capture_last("elevator", object_id))
            allowed = oval.state("ind:variable", "an allowed elevator",
                                 entity("ind:value", var=allowed_var, var_check="at least one",
                                        entity_check="at least one"))
            tests.append(criterion(oval.test("ind:variable", f"{name} sets an allowed elevator",
                                             oval.values_of(f"elevator= in {name}", values),
                                             allowed, check="all",
                                             existence="at_least_one_exists")))
        return any_of(*tests)


def _capture_last(name: str, object_id: str) -> Element:
    from .oval import capture, component
    return capture(LAST_ARG.format(name=name), component(object_id, "subexpression"))


def thp_at_boot(shared: Shared, rule: Rule) -> Element:
    oval = shared.oval
    init = _files(shared, "init scripts writing THP never", INIT_SCRIPTS,
                  r"^[^#\n]*echo\s+['\"]?never['\"]?\s*>+\s*['\"]?/sys/kernel/mm/"
                  r"(?:redhat_)?transparent_hugepage/enabled")
    return any_of(
        criterion(oval.test("ind:textfilecontent54", "an init script disables THP", init)),
        _Cmdline(shared).thp_never(),
        shared.tuned_setting("transparent_hugepages?", [("(never)", None)],
                             "tuned sets THP never"))


def io_tuning_at_boot(shared: Shared, rule: Rule) -> Element:
    oval = shared.oval
    minimum = shared.external("read_ahead_min_kb")
    sectors = shared.doubled("read_ahead_min_kb")

    def at_least(variable: str, comment: str) -> str:
        return oval.state("ind:textfilecontent54", comment,
                          entity("ind:subexpression", datatype="int",
                                 op="greater than or equal", var=variable, var_check="all"))

    kib_ok = at_least(minimum, "at least the minimum in KiB")
    sectors_ok = at_least(sectors, "at least the minimum in sectors")
    scheduler_ok = oval.state("ind:textfilecontent54", "an allowed scheduler",
                              entity("ind:subexpression", var=shared.listed("allowed_schedulers"),
                                     var_check="at least one"))

    def some(object_id: str, state: str, comment: str) -> Element:
        return criterion(oval.test("ind:textfilecontent54", comment, object_id, state,
                                   check="at least one"))

    read_ahead = any_of(
        shared.tuned_setting("readahead", [(r">?[ \t]*(\d+)", kib_ok),
                                           (r">?[ \t]*(\d+)[ \t]*s", sectors_ok)],
                             "tuned [disk] readahead"),
        some(_udev(shared, "udev read_ahead_kb", r'ATTR\{(?:queue|bdi)/read_ahead_kb\}'
                                                 r'[ \t]*[:+]?=[ \t]*"(\d+)"'),
             kib_ok, "a udev rule sets read_ahead_kb"),
        some(_udev(shared, "udev RUN blockdev --setra", r'RUN[^"\n]*"[^"\n]*' + SETRA),
             sectors_ok, "a udev rule runs blockdev --setra"),
        some(_files(shared, "init scripts running blockdev --setra", INIT_SCRIPTS,
                    r"^[^#\n]*" + SETRA), sectors_ok, "an init script runs blockdev --setra"),
        comment="read-ahead is set at boot")
    old_kernel = oval.obj("ind:textfilecontent54", "a pre-blk-mq kernel (2.x, 3.x)",
                          entity("ind:filepath", "/proc/sys/kernel/osrelease"),
                          entity("ind:pattern", legacy_kernel_regex(), op="pattern match"),
                          entity("ind:instance", "1", datatype="int"))
    scheduler = any_of(
        shared.tuned_setting("elevator", [(r"(\S+)", scheduler_ok)], "tuned [disk] elevator"),
        some(_udev(shared, "udev scheduler", r'ATTR\{queue/scheduler\}[ \t]*[:+]?=[ \t]*'
                                             r'"([^"\n]*)"'),
             scheduler_ok, "a udev rule sets the scheduler"),
        all_of(criterion(oval.test("ind:textfilecontent54", "the kernel honours elevator=",
                                   old_kernel)),
               _Cmdline(shared).elevator(shared.listed("allowed_schedulers"))),
        comment="an allowed scheduler is set at boot")
    return all_of(read_ahead, scheduler)


GENERATORS: dict[str, Generator] = {
    "thp_mode": thp_mode,
    "cpu_governor": cpu_governor,
    "sysctl_value": sysctl_value,
    "block_scheduler": block_scheduler,
    "block_read_ahead": block_read_ahead,
    "mount_option_forbidden": mount_option_forbidden,
    "mount_option_required": mount_option_required,
    "sas_dirs_separate": sas_dirs_separate,
    "fs_type": fs_type,
    "tuned_profile": tuned_profile,
    "thp_at_boot": thp_at_boot,
    "io_tuning_at_boot": io_tuning_at_boot,
}
