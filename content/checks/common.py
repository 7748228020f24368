"""Shared OVAL pieces of the check kinds: command-line sources, udev and init-script
readers, ktune and kernel-release tests."""

from __future__ import annotations

import re
from collections.abc import Callable

from ...rules import Rule
from ...rules.host_layout import (
    BLS_ENTRIES,
    EFI_VENDOR_DIRS,
    GRUB2_CFG,
    GRUB_DEFAULTS,
    GRUBENV,
    KERNEL_CMDLINE,
    KTUNE_SCRIPTS,
    KTUNE_SYSCONFIG,
    KTUNE_SYSV,
    LEGACY_GRUB_CONFS,
    SURE_RUNLEVEL_DIRS,
    SYSTEMD_UNIT_DIRS,
    TUNED02_FUNCTIONS,
    TUNED_1_0_FUNCTIONS,
    UDEV_RULES_DIRS,
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
    none_of,
    unique,
)
from ..oval_facts import OvalFacts
from ..oval_tuned import sysv_start_link

BLOCK_RULE = r'(?=[^#\n]*SUBSYSTEM=="(?:[^"\n]*\|)?block(?:\|[^"\n]*)?")'


SETRA = r"blockdev\s+(?:[^\n]*\s)?--setra\s+(\d+)"


# The last NAME= argument (the kernel takes the last); quotes may surround the line.
LAST_ARG = r"(?:^|[ \t\"']){name}=([^\s\"']*)(?![^\n]*[ \t\"']{name}=)"


Generator = Callable[[OvalFacts, Rule], Element]


def alternatives(values: list[str]) -> str:
    return "^(?:" + "|".join(re.escape(v) for v in values) + ")$"


def files_matching(facts: OvalFacts, comment: str, paths: tuple[str, ...], pattern: str) -> str:
    return facts.oval.obj(
        "ind:textfilecontent54", comment,
        entity("ind:filepath", var=facts.oval.paths(f"{comment}: files", paths),
               var_check="at least one"),
        entity("ind:pattern", pattern, op="pattern match"),
        entity("ind:instance", "1", datatype="int", op="greater than or equal"))


def udev_rules(facts: OvalFacts, comment: str, assignment: str) -> str:
    return facts.oval.obj(
        "ind:textfilecontent54", comment,
        entity("ind:path", var=facts.oval.paths("udev rules directories", UDEV_RULES_DIRS),
               var_check="at least one"),
        entity("ind:filename", r"\.rules$", op="pattern match"),
        entity("ind:pattern", rf"^{BLOCK_RULE}[^#\n]*{assignment}", op="pattern match"),
        entity("ind:instance", "1", datatype="int", op="greater than or equal"))


class Cmdline:
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
        self.legacy = files_matching(facts, "GRUB 0.97 kernel lines", LEGACY_GRUB_CONFS[:1],
                             r"^[ \t]*kernel[ \t]+\S+(.*)$")
        # Every menu entry's linux line (the scanner judges the default entry alone).
        self.grub2 = files_matching(facts, "GRUB 2 menu linux lines",
                            (GRUB2_CFG, *(f"{d}/grub.cfg" for d in EFI_VENDOR_DIRS)),
                            r"^[ \t]*linux(?:16|efi)?[ \t]+\S+(.*)$")
        self.grub = files_matching(facts, f"GRUB_CMDLINE_LINUX in {GRUB_DEFAULTS}", (GRUB_DEFAULTS,),
                           r"^[ \t]*(?:export[ \t]+)?GRUB_CMDLINE_LINUX(?:_DEFAULT)?=(.*)$")
        self.kernel = files_matching(facts, KERNEL_CMDLINE, (KERNEL_CMDLINE,),
                             r"^([^#\n].*)$")
        self.grubenv = files_matching(facts, "grubenv kernelopts and tuned_params",
                              (GRUBENV,), r"^(?:kernelopts|tuned_params)=(.*)$")
        # RHEL 8's grub.cfg (10_linux with BLS) sets $kernelopts where grubenv has none:
        # if [ -z "${kernelopts}" ]; then set kernelopts="..."; fi
        self.grubenv_kernelopts = files_matching(facts, "grubenv kernelopts", (GRUBENV,),
                                                 r"^kernelopts=(.*)$")
        self.kernelopts_fallback = files_matching(
            facts, "grub.cfg's fallback kernelopts",
            (GRUB2_CFG, *(f"{d}/grub.cfg" for d in EFI_VENDOR_DIRS)),
            r'^[ \t]*set kernelopts="([^"]*)"')

    def grubenv_sets(self, state: str, comment: str) -> Element:
        """grubenv's kernelopts or tuned_params match ``state``, or, where grubenv has no
        kernelopts, grub.cfg's fallback does (what $kernelopts expands to)."""
        oval = self.facts.oval
        return any_of(
            criterion(oval.test("ind:textfilecontent54", f"grubenv {comment}", self.grubenv,
                                state, check="at least one")),
            all_of(none_of(self.exists(self.grubenv_kernelopts, "grubenv sets kernelopts")),
                   criterion(oval.test("ind:textfilecontent54", f"grub.cfg's fallback "
                                       f"kernelopts {comment}", self.kernelopts_fallback,
                                       state, check="at least one"))))

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
                   self.grubenv_sets(has, "sets THP never")))
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

    def any_argument(self, name: str, value: str, flag: bool = False,
                     shown: str | None = None) -> Element:
        """Some ``name=`` argument of the command line that boots starts with ``value`` (a
        regex, titled ``shown`` where it is not plain text), wherever it stands (numa=off:
        the kernel never clears it); ``flag``: the bare ``name``, with or without a value
        (nosmt, nosmt=force)."""
        oval = self.facts.oval
        said = value if shown is None else shown
        argument = (rf"{re.escape(name)}(?:=\S*)?(?=[\s\"']|$)" if flag
                    else rf"{re.escape(name)}={value}")
        has = oval.state("ind:textfilecontent54", f"some {name}" + ("" if flag else f"={said}"),
                         entity("ind:subexpression", rf"(?:^|[ \t\"']){argument}",
                                op="pattern match"))

        def sets(object_id: str, source: str) -> Element:
            return criterion(oval.test("ind:textfilecontent54", f"{source} sets {name}={said}",
                                       object_id, has, check="at least one"))

        bls = self.exists(self.bls, "BLS entries exist")
        grub2 = self.exists(self.grub2, "GRUB 2 menu entries exist")
        legacy = self.exists(self.legacy, "GRUB 0.97 entries exist")
        return any_of(
            all_of(bls, any_of(sets(self.bls, "BLS"),
                               self.grubenv_sets(has, f"sets {name}={said}"))),
            all_of(none_of(bls), grub2, sets(self.grub2, "GRUB 2 menu")),
            all_of(none_of(bls), none_of(grub2), legacy, sets(self.legacy, "GRUB 0.97")),
            all_of(none_of(bls), none_of(grub2), none_of(legacy),
                   any_of(sets(self.grub, GRUB_DEFAULTS), sets(self.kernel, KERNEL_CMDLINE))))

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
            values = oval.local(f"{name}= in {source}", capture_last(name, object_id))
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


def capture_last(name: str, object_id: str) -> Element:
    return capture(LAST_ARG.format(name=name), component(object_id, "subexpression"))


def runs_at_boot(facts: OvalFacts, comment: str, scripts: str) -> Element:
    """Some init script among the items of ``scripts`` is a regular file its owner may
    execute: systemd's rc-local.service and SysV's rc run nothing else (a link's own mode
    does not count; the file it points at is among the items too). Under SysV it runs from
    an S??local link: one in the server run level's directory counts (OVAL does not read
    inittab's initdefault, scanner/boot/target.py does)."""
    oval = facts.oval
    systemd = oval.obj("unix:file", "systemd's unit directories",
                       entity("unix:path", var=oval.paths("systemd's packaged unit directories",
                                                          SYSTEMD_UNIT_DIRS[2:]),
                              var_check="at least one"),
                       entity("unix:filename", nil=True))
    local = oval.obj("unix:file", "rc.local's SysV start link in the server run level",
                     entity("unix:path", var=oval.paths("SysV server run-level directories",
                                                        SURE_RUNLEVEL_DIRS),
                            var_check="at least one"),
                     entity("unix:filename", r"^S[0-9]{2}local$", op="pattern match"))
    started = any_of(criterion(oval.test("unix:file", "the host boots with systemd", systemd)),
                     criterion(oval.test("unix:file", "rc.local starts in the server run level",
                                         local)))
    paths = oval.local(f"{comment}: files", component(scripts, "filepath"))
    files = oval.obj("unix:file", f"{comment}: the files",
                     entity("unix:filepath", var=paths, var_check="at least one"))
    runnable = oval.state("unix:file", "a regular file its owner may execute",
                          entity("unix:type", "regular"),
                          entity("unix:uexec", "true", datatype="boolean"))
    return all_of(started, criterion(oval.test(
        "unix:file", f"{comment} and runs at boot", files, runnable, check="at least one",
        existence="at_least_one_exists")))


def kernel_is(facts: OvalFacts, pattern: str, comment: str) -> Element:
    oval = facts.oval
    release = oval.obj("ind:textfilecontent54", comment,
                       entity("ind:filepath", "/proc/sys/kernel/osrelease"),
                       entity("ind:pattern", pattern, op="pattern match"),
                       entity("ind:instance", "1", datatype="int"))
    return criterion(oval.test("ind:textfilecontent54", comment, release))


def ktune_started(facts: OvalFacts, surely: bool = True) -> Element:
    """RHEL 5/6: ktune has a SysV start link (chkconfig ktune on) and its
    /etc/sysconfig/ktune exists (without it ktune.init exits at once, status 5).
    ``surely``: linked in the server run level (what makes a setting pass); else in any
    run level (what makes one fail)."""
    oval = facts.oval
    started = sysv_start_link(oval, KTUNE_SYSV, "ktune started at boot (SysV)", surely)
    config = oval.obj("unix:file", "ktune's configuration",
                      entity("unix:filepath", KTUNE_SYSCONFIG))
    return all_of(criterion(oval.test("unix:file", "ktune runs at boot", started)),
                  criterion(oval.test("unix:file", "ktune's configuration exists", config)))


def ktune_scripts(facts: OvalFacts) -> str:
    """The scripts in /etc/ktune.d that ktune.init runs: X.sh beside each X.conf, when its
    owner may execute it (call_script "${file%.conf}.sh"; scanner.ktune.ktune_scripts)."""
    def build() -> str:
        oval = facts.oval
        confs = oval.obj("unix:file", "ktune.d's .conf files", entity("unix:path", KTUNE_SCRIPTS),
                         entity("unix:filename", r"\.conf$", op="pattern match"))
        beside = oval.local("ktune.d: the script beside each .conf",
                            unique(concat(capture(r"^(.*)\.conf$",
                                                  component(confs, "filepath")), ".sh")))
        # ktune.init's [ -x ] follows a link; oscap's file probe reports a link's own mode,
        # so a link counts through its target (the symlink probe's canonical_path).
        executable = oval.state("unix:file", "a regular file its owner may execute",
                                entity("unix:type", "regular"),
                                entity("unix:uexec", "true", datatype="boolean"))
        direct = oval.obj("unix:file", "ktune.d scripts beside a .conf, executable",
                          entity("unix:filepath", var=beside, var_check="at least one"),
                          filters=(("include", executable),))
        links = oval.obj("unix:symlink", "ktune.d scripts beside a .conf that are links",
                         entity("unix:filepath", var=beside, var_check="at least one"))
        targets = oval.local("what those links point at",
                             component(links, "canonical_path"))
        linked = oval.obj("unix:file", "ktune.d links to an executable script",
                          entity("unix:filepath", var=targets, var_check="at least one"),
                          filters=(("include", executable),))
        scripts = oval.obj("unix:file", "ktune.d scripts that ktune runs",
                           set_of=(direct, linked))
        return oval.local("ktune.d scripts that ktune runs", component(scripts, "filepath"))
    return facts.once("ktune scripts", build)


def ktune_script_does(facts: OvalFacts, pattern: str, what: str) -> Element:
    oval = facts.oval
    scripts = oval.obj("ind:textfilecontent54", f"ktune scripts that {what}",
                       entity("ind:filepath", var=ktune_scripts(facts), var_check="at least one"),
                       entity("ind:pattern", pattern, op="pattern match"),
                       entity("ind:instance", "1", datatype="int"))
    return criterion(oval.test("ind:textfilecontent54", f"a ktune script {what}", scripts))


def ktune_defines(facts: OvalFacts, name: str) -> Element:
    """The host's tune-profiles/functions defines ``name``; where that file is missing, the
    1.0 branch's functions stand in (scanner.ktune.ktune_functions)."""
    oval = facts.oval
    defined = criterion(oval.test(
        "ind:textfilecontent54", f"tune-profiles/functions defines {name}",
        files_matching(facts, f"tune-profiles/functions: {name}()", (TUNED02_FUNCTIONS,),
                       rf"^[ \t]*({re.escape(name)})[ \t]*\(\)"),
        existence="at_least_one_exists"))
    if name not in TUNED_1_0_FUNCTIONS:
        return defined
    functions = files_matching(facts, "tune-profiles/functions", (TUNED02_FUNCTIONS,), r"^(.*)$")
    return any_of(defined, none_of(criterion(oval.test(
        "ind:textfilecontent54", "tune-profiles/functions exists", functions,
        existence="at_least_one_exists"))))


def ktune_elevator(facts: OvalFacts, state: str | None, surely: bool = True) -> Element:
    """ktune starts at boot (``surely`` as ktune_started) and its ELEVATOR
    (/etc/sysconfig/ktune) is set (matches ``state``)."""
    oval = facts.oval
    elevator = files_matching(facts, "ktune's ELEVATOR", (KTUNE_SYSCONFIG,),
                      r"""^[ \t]*ELEVATOR=["']?([A-Za-z0-9_-]+)["']?[ \t]*$""")
    sets = criterion(oval.test("ind:textfilecontent54", "ktune sets an elevator" if state is None
                               else "ktune sets an allowed elevator", elevator, state))
    # ktune.init skips it when the booting command line holds "elevator=".
    return all_of(ktune_started(facts, surely), sets,
                  none_of(Cmdline(facts).any_argument("elevator", "")))
