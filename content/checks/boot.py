"""What the next boot sets: tuned, THP writers, I/O tuning, CPU latency (scanner/checks/boot.py)."""

from __future__ import annotations

import re
from dataclasses import replace

from ...rules import Rule
from ...rules.host_layout import (
    BLK_MQ_SCHEDULER_ALIASES,
    BLK_MQ_UNKNOWN_SCHEDULERS,
    INIT_SCRIPTS,
    KTUNE_ENABLES_THP,
    LEGACY_DEFAULT_SCHEDULERS,
    RHEL5_KERNEL_PREFIX,
    SATA_VENDOR,
    SURE_WANTS_DIRS,
    SYSTEMD_UNIT_DIRS,
    TMPFILES_DIRS,
    legacy_kernel_regex,
)
from ..oval import (
    Element,
    all_of,
    any_of,
    component,
    concat,
    criterion,
    entity,
    none_of,
    var,
)
from ..oval_facts import OvalFacts
from .common import (
    SETRA,
    Cmdline,
    files_matching,
    kernel_is,
    ktune_defines,
    ktune_elevator,
    ktune_script_does,
    ktune_started,
    runs_at_boot,
    udev_rules,
)
from .sysctl_boot import sysctl_at_boot


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
        kernel_is(facts, "^" + re.escape(RHEL5_KERNEL_PREFIX), "a RHEL 5 kernel (2.6.18)"),
        none_of(facts.tuned_installed()), ktune_started(facts))
    return any_of(all_of(facts.tuned_installed(), facts.tuned_enabled(), matched), rhel5_ktune,
                  _site_profile(facts, rule, levels[0]),
                  comment="a throughput tuned profile, RHEL 5's ktune, or a site profile that "
                          "gives the same, at boot")


def _site_profile(facts: OvalFacts, rule: Rule, active: str) -> Element:
    """As scanner.checks.tuned._gives_throughput: an active profile whose boot gives the
    performance governor, THP never, the site's vm.dirty_ratio, read-ahead and scheduler."""
    governor = any_of(
        facts.tuned_setting("governor", [(r"(performance(?:\|[^\n]*?)?)", None)],
                            "tuned sets the performance governor first"),
        all_of(ktune_started(facts), ktune_script_does(
            facts, r"^[ \t]*set_cpu_governor[ \t]+performance[ \t]*$",
            "sets the performance governor")))
    dirty = replace(rule, params={"key": "vm.dirty_ratio", "value_from": "dirty_ratio"})
    return all_of(facts.tuned_installed(), facts.tuned_enabled(),
                  criterion(facts.oval.has_values("an active tuned profile", active)),
                  governor, thp_at_boot(facts, rule), io_tuning_at_boot(facts, rule),
                  sysctl_at_boot(facts, dirty), comment="a site profile that gives the same")


def _writes_thp(file: str, value: str) -> str:
    """A shell command writing ``value`` (a regex) to the THP ``file`` (boot_writers._WRITE)."""
    return (r"""(?:echo|printf)\s+(?:-[ne]+\s+)?['"]?""" + value + r"""['"]?\s*"""
            r"""(?:>+\s*|\|\s*tee\s+(?:-a\s+)?)['"]?/sys/kernel/mm/"""
            rf"(?:redhat_)?transparent_hugepage/{file}(?![\w.])")


def _thp_written_late(facts: OvalFacts, file: str) -> Element:
    """An executable init script or a systemd unit a boot target wants writes never to the
    THP ``file``: they run last (scanner.boot_writers)."""
    oval = facts.oval
    init = files_matching(facts, f"init scripts writing THP {file} never", INIT_SCRIPTS,
                  r"^[^#\n]*" + _writes_thp(file, "never"))
    # Units a target every boot reaches wants (OVAL cannot follow default.target): one only
    # graphical.target wants does not make the rule pass (scanner/boot/target.py).
    wanted = oval.obj("unix:file", "services boot targets want",
                      entity("unix:path", var=oval.paths("wants directories every boot reaches",
                                                         SURE_WANTS_DIRS),
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
    return any_of(runs_at_boot(facts, f"an init script writes THP {file} never", init),
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


def thp_at_boot(facts: OvalFacts, rule: Rule) -> Element:
    """THP enabled ends at never after boot, in scanner.checks.boot's order: the command
    line, tmpfiles.d, tuned (silent when the command line sets it), RHEL 5/6 ktune's start()
    functions, then init scripts and systemd units. With enabled never no huge page is
    allocated, so defrag, which the scanner reports, never decides the verdict."""
    # ktune: OVAL cannot order a script's lines, so a start() that writes never counts only
    # when no ktune script turns THP on or writes it another value.
    # A call counts where the host's tune-profiles/functions defines it (scanner.ktune).
    sets_thp = ktune_defines(facts, "set_transparent_hugepages")
    ktune_other = all_of(ktune_started(facts, surely=False), any_of(
        all_of(ktune_defines(facts, "enable_transparent_hugepages"),
               ktune_script_does(facts, KTUNE_ENABLES_THP, "turns THP on")),
        all_of(sets_thp, ktune_script_does(
            facts, r"^[ \t]*set_transparent_hugepages[ \t]+(?!never\b)[A-Za-z_]",
            "sets THP to another value")),
        ktune_script_does(facts, r"^[^#\n]*" + _writes_thp("enabled", r"(?!never\b)[\w.+-]+"),
                          "writes THP enabled another value")))
    ktune_never = all_of(ktune_started(facts), any_of(
        ktune_script_does(facts, r"^[^#\n]*" + _writes_thp("enabled", "never"),
                          "writes THP enabled never"),
        all_of(sets_thp, ktune_script_does(
            facts, r"^[ \t]*set_transparent_hugepages[ \t]+never[ \t]*(?:[;#].*)?$",
            "sets THP never"))))
    cmdline = Cmdline(facts)

    def tuned(key: str, value: str, comment: str, surely: bool = True) -> Element:
        return facts.tuned_setting(key, [(value, None)], comment, surely)

    enabled_key = "transparent_hugepages?"
    return any_of(
        _thp_written_late(facts, "enabled"),
        all_of(ktune_never, none_of(ktune_other)),
        all_of(none_of(ktune_other), any_of(
            all_of(cmdline.thp_never(),
                   none_of(_thp_tmpfiles(facts, "enabled", "^(?!never$)", "another value"))),
            all_of(none_of(cmdline.argument("transparent_hugepage", None)), any_of(
                tuned(enabled_key, "(never)", "tuned sets THP never"),
                all_of(none_of(tuned(enabled_key, r"(\S+)", "tuned sets THP", surely=False)),
                       _thp_tmpfiles(facts, "enabled", "^never$", "never")))))),
        comment="THP enabled is never after boot")


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
        # As tuned parses it (scanner.checks.io_boot.tuned_readahead_kib): N, >N, N WORD (KiB
        # unless WORD starts with s: sectors); >N s and Ns are rejected and set nothing.
        facts.tuned_setting("readahead", [(r">[ \t]*(\d+)", kib_ok), (r"(\d+)", kib_ok),
                                          (r"(\d+)[ \t]+[^s \t][^\n]*?", kib_ok),
                                          (r"(\d+)[ \t]+s[^\n]*?", sectors_ok)],
                            "tuned [disk] readahead"),
        some(udev_rules(facts, "udev read_ahead_kb", r'ATTR\{(?:queue|bdi)/read_ahead_kb\}'
                                                 r'[ \t]*[:+]?=[ \t]*"(\d+)"'),
             kib_ok, "a udev rule sets read_ahead_kb"),
        some(udev_rules(facts, "udev RUN blockdev --setra", r'RUN[^"\n]*"[^"\n]*' + SETRA),
             sectors_ok, "a udev rule runs blockdev --setra"),
        runs_at_boot(facts, "an init script runs blockdev --setra enough", oval.obj(
            "ind:textfilecontent54", "init scripts running blockdev --setra enough",
            set_of=(files_matching(facts, "init scripts running blockdev --setra", INIT_SCRIPTS,
                           r"^[^#\n]*" + SETRA),),
            filters=(("include", sectors_ok),))),
        comment="read-ahead is set at boot")
    honours_elevator = kernel_is(facts, legacy_kernel_regex(), "a pre-blk-mq kernel (2.x, 3.x)")
    cmdline = Cmdline(facts)
    refused = "|".join(BLK_MQ_UNKNOWN_SCHEDULERS)

    def scheduler_set(blk_mq: bool) -> Element:
        """As scanner.checks.io_boot.io_tuning_at_boot: on blk-mq a legacy name sets nothing."""
        kind = "blk-mq" if blk_mq else "legacy"
        skip = rf"(?!(?:{refused})\b)" if blk_mq else ""
        udev_scheduler = udev_rules(facts, f"udev scheduler ({kind})",
                                    r'ATTR\{queue/scheduler\}[ \t]*[:+]?=[ \t]*"' + skip +
                                    r'([^"\n]*)"')
        nothing_sets = [
            none_of(facts.tuned_setting("elevator", [(skip + r"(\S+)", None)],
                                        f"tuned sets an elevator ({kind})", surely=False)),
            criterion(oval.test("ind:textfilecontent54", f"a udev rule sets a scheduler ({kind})",
                                udev_scheduler), negate=True)]
        chosen = [
            facts.tuned_setting("elevator", [(skip + r"(\S+)", scheduler_ok)],
                                f"tuned [disk] elevator ({kind})"),
            some(udev_scheduler, scheduler_ok, f"a udev rule sets the scheduler ({kind})")]
        if blk_mq:  # deadline is mq-deadline's alias
            for alias, name in BLK_MQ_SCHEDULER_ALIASES.items():
                said = oval.state("ind:textfilecontent54", f"{alias}",
                                  entity("ind:subexpression", f"^{alias}$", op="pattern match"))
                chosen.append(all_of(_allows(facts, name), any_of(
                    facts.tuned_setting("elevator", [(r"(\S+)", said)],
                                        f"tuned [disk] elevator {alias}"),
                    some(udev_scheduler, said, f"a udev rule sets {alias}"))))
        else:  # elevator= and RHEL 5/6 ktune work on legacy kernels only
            nothing_sets += [none_of(cmdline.argument("elevator", None)),
                             none_of(ktune_elevator(facts, None, surely=False))]
            chosen += [cmdline.argument("elevator", facts.listed("allowed_schedulers")),
                       ktune_elevator(facts, scheduler_ok)]
        return any_of(*chosen, all_of(*nothing_sets, _kernel_default_allowed(facts)),
                      comment=f"an allowed scheduler is set at boot ({kind})")

    scheduler = any_of(all_of(honours_elevator, scheduler_set(blk_mq=False)),
                       all_of(none_of(honours_elevator), scheduler_set(blk_mq=True)))
    return all_of(read_ahead, scheduler)


def _allows(facts: OvalFacts, name: str) -> Element:
    oval = facts.oval
    state = oval.state("ind:variable", f"lists {name}",
                       entity("ind:value", name, entity_check="at least one"))
    return criterion(oval.test(
        "ind:variable", f"allowed_schedulers lists {name}",
        oval.values_of("allowed schedulers", facts.listed("allowed_schedulers")), state))


def _kernel_default_allowed(facts: OvalFacts) -> Element:
    """The scheduler the kernel gives the SAS devices is allowed (scanner.blockdev.
    default_scheduler): blk-mq mq-deadline, none with several hardware queues; RHEL 7
    deadline, cfq for SATA disks; RHEL 5/6 cfq. The default of a plain disk must be allowed
    too (what the scanner judges when no SAS device offers a choice)."""
    oval = facts.oval

    def no_sas_device(path: str, pattern: str | None, comment: str) -> Element:
        """No device at any level of the SAS stacks has /sys/block/NAME/``path`` (matching
        ``pattern``)."""
        files = oval.local(f"{comment}: files in the SAS storage stacks",
                           concat("/sys/block/", var(facts.stack_devices()), f"/{path}"))
        if pattern is None:
            found = oval.obj("unix:file", f"{comment} in the SAS storage stacks",  # a directory
                             entity("unix:path", var=files, var_check="at least one"),
                             entity("unix:filename", nil=True))
            kind = "unix:file"
        else:
            found = oval.obj("ind:textfilecontent54", f"{comment} in the SAS storage stacks",
                             entity("ind:filepath", var=files, var_check="at least one"),
                             entity("ind:pattern", pattern, op="pattern match"),
                             entity("ind:instance", "1", datatype="int"))
            kind = "ind:textfilecontent54"
        return criterion(oval.test(kind, f"no SAS device: {comment}", found,
                                   existence="none_exist"))

    prefixes = dict(LEGACY_DEFAULT_SCHEDULERS)
    rhel7 = prefixes["3."]
    return any_of(
        all_of(kernel_is(facts, r"^(?:[4-9]|[1-9][0-9])\.", "a blk-mq kernel (4.x and later)"),
               _allows(facts, "mq-deadline"),
               any_of(_allows(facts, "none"),
                      no_sas_device("mq/1", None, "several hardware queues"))),
        all_of(kernel_is(facts, r"^3\.", "a 3.x kernel (RHEL 7)"), _allows(facts, rhel7),
               any_of(_allows(facts, "cfq"),
                      no_sas_device("device/vendor", rf"^{SATA_VENDOR}\s*$", "a SATA disk"))),
        all_of(kernel_is(facts, r"^2\.", "a 2.x kernel (RHEL 5, 6)"),
               _allows(facts, prefixes["2."])),
        comment="the kernel's default scheduler is allowed")
