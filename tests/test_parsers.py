"""Parsers on real-world samples of the kernel's and RHEL's formats, odd ones included."""

from __future__ import annotations

import pytest

from sascheck.scanner.boot.mounts import collect_boot_mounts, mount_unit_settings
from sascheck.scanner.boot.sysctl import parse_sysctl
from sascheck.scanner.boot.writers import EARLY, tmpfiles_writes, writes_in_shell
from sascheck.scanner.checks.io_boot import tuned_readahead_kib
from sascheck.scanner.parsers.boot import (
    arg_value,
    bls_entry_args,
    expand_grubenv,
    grub2_menu,
    grub_defaults_args,
    grubenv_vars,
    legacy_grub_menu,
    rpm_version_key,
)
from sascheck.scanner.parsers.mounts import parse_mounts, unescape
from sascheck.scanner.parsers.sas_config import parse_sas_config
from sascheck.scanner.parsers.selection import parse_selection
from sascheck.scanner.parsers.simple import cpuinfo_flags, meminfo_kib, shell_assignments
from sascheck.scanner.parsers.tuned_conf import parse_active_profile
from sascheck.scanner.parsers.udev_rules import is_block_rule, parse_udev_rules
from sascheck.scanner.sources.hostroot import HostRoot
from sascheck.scanner.tuned.active import resolve_chain
from sascheck.scanner.tuned.chain import include_names
from sascheck.scanner.tuned.tuned_conf import LoaderRules, TunedConfError, parse_profile
from tests.support.boot_samples import (
    RHEL6_GRUB_CONF,
    RHEL7_GRUB_CFG,
    RHEL7_RESCUE_TITLE,
    RHEL7_TITLE,
)
from tests.support.rootbuilder import RootBuilder


@pytest.mark.parametrize(("text", "selected", "choice"), [
    ("[mq-deadline] kyber bfq none\n", "mq-deadline", True),
    ("noop anticipatory deadline [cfq]\n", "cfq", True),
    ("[none] mq-deadline kyber bfq", "none", True),
    ("none\n", None, False),  # zram, bio-based dm
    ("always madvise [never]\n", "never", True),
    ("always defer defer+madvise [madvise] never\n", "madvise", True),
    ("", None, False),
])
def test_selection_files(text, selected, choice):
    selection = parse_selection(text)
    assert selection.selected == selected
    assert selection.offers_choice is choice
    if text.strip():
        assert len(selection.options) == len(text.split())


def test_mounts_decode_escapes_and_tokenise_options():
    text = ("/dev/mapper/rhel-root / xfs rw,relatime,attr2,inode64,noquota 0 0\n"
            "/dev/mapper/sasvg-saswork /sas\\040work xfs rw,noatime,nobarrier 0 0\n"
            "/dev/sdb1 /odd\\011tab\\012newline\\134back ext4 rw,barrier=0 0 0\n"
            "garbage\n")
    entries, problems = parse_mounts(text)
    assert [e.mountpoint for e in entries] == ["/", "/sas work", "/odd\ttab\nnewline\\back"]
    assert entries[1].options == ("rw", "noatime", "nobarrier")
    assert entries[1].has_option("noatime") and not entries[1].has_option("atime")
    assert entries[2].option_value("barrier") == "0"
    assert problems == ["line 4: expected at least 4 fields, got 1"]
    assert unescape("\\040\\999") == " \\999"


def test_tuned_conf_sections_includes_and_active_profiles():
    sections = parse_profile(
        "[main]\ninclude = throughput-performance, sap\n"
        "# comment\n[disk]\nreadahead=>4096\n[my_disk]\ntype=disk\nelevator=none\n[vm]\n"
        "transparent_hugepages=never\n")
    assert include_names(sections["main"]["include"], LoaderRules()) == [
        "throughput-performance", "sap"]
    assert sections["disk"] == {"readahead": ">4096"}
    assert sections["my_disk"]["type"] == "disk"
    assert parse_active_profile("virtual-guest sas-performance\n") == ["virtual-guest",
                                                                        "sas-performance"]


@pytest.mark.parametrize("text", ["summary=before any section\n[main]\n",
                                  "[main]\n[vm]\nbroken line without equals\n"])
def test_tuned_conf_that_tuneds_parser_refuses_is_an_error(text):
    # ConfigParser: MissingSectionHeaderError, ParsingError; ConfigObj (tuned < 2.17) and
    # loader.py at v2.16.0: "Error parsing section", ParseError.
    for rules in (LoaderRules(), LoaderRules(configobj=True)):
        with pytest.raises(TunedConfError):
            parse_profile(text, rules)


def test_sas_config_options_quotes_lists_and_comments():
    options = parse_sas_config(
        "/* multi-line\n   comment -WORK /not/this */\n"
        '-config "/opt/sas/SASHome/SASFoundation/9.4/nls/en/sasv9.cfg"\n'
        "-WORK '/sas work'\n"
        '-UTILLOC ("/sasutil1" "/sasutil2")\n'
        "-MEMSIZE 2G -SORTSIZE=256M\n"
        "-work /saswork   /* trailing */\n")
    names = [(o.name, o.values, o.line) for o in options]
    assert names == [
        ("CONFIG", ("/opt/sas/SASHome/SASFoundation/9.4/nls/en/sasv9.cfg",), 3),
        ("WORK", ("/sas work",), 4),
        ("UTILLOC", ("/sasutil1", "/sasutil2"), 5),
        ("MEMSIZE", ("2G",), 6),
        ("SORTSIZE", ("256M",), 6),
        ("WORK", ("/saswork",), 7),
    ]


def test_kernel_command_line_sources():
    grub = ('GRUB_CMDLINE_LINUX="crashkernel=auto rd.lvm.lv=rhel/root '
            'transparent_hugepage=never"\nGRUB_CMDLINE_LINUX_DEFAULT="quiet"\n')
    args = grub_defaults_args(grub)
    assert arg_value(args, "transparent_hugepage") == "never"
    assert "quiet" in args
    assert grub_defaults_args('GRUB_CMDLINE_LINUX="unbalanced\n') == ["unbalanced"]
    assert bls_entry_args("title x\noptions root=/dev/sda ro elevator=deadline\n")[-1] == \
        "elevator=deadline"
    assert legacy_grub_menu("title RHEL\n\tkernel /vmlinuz ro root=/dev/sda2 rhgb\n").entries == \
        [("RHEL", ["ro", "root=/dev/sda2", "rhgb"])]
    env = grubenv_vars("# GRUB Environment Block\nkernelopts=root=/dev/sda ro "
                       "transparent_hugepage=never\n#####")
    assert expand_grubenv(["$kernelopts", "$tuned_params"], env) == \
        ["root=/dev/sda", "ro", "transparent_hugepage=never", "$tuned_params"]
    assert arg_value(["a=1", "a=2"], "a") == "2"  # the kernel takes the last


def test_udev_rules_from_seed_003():
    rules = parse_udev_rules(
        'ACTION=="add|change", SUBSYSTEM=="block",ENV{ID_VENDOR}=="XtremIO",'
        'ATTR{queue/scheduler}="noop"\n'
        '# a comment\n'
        'ACTION=="add|change", SUBSYSTEM=="block", \\\n'
        '  ENV{ID_VENDOR}=="XtremIO", ATTR{bdi/read_ahead_kb}="16384"\n'
        'SUBSYSTEM=="net", ACTION=="add", RUN+="/bin/true"\n')
    assert len(rules) == 3
    assert rules[0].assigned_attr("queue/scheduler") == "noop"
    assert rules[1].assigned_attr("bdi/read_ahead_kb") == "16384"
    assert rules[1].line == 3
    assert [is_block_rule(r) for r in rules] == [True, True, False]


def test_small_formats():
    assert "hypervisor" in cpuinfo_flags("processor : 0\nflags : fpu hypervisor\n")
    assert meminfo_kib("MemTotal:       49283116 kB\n") == 49283116
    assert shell_assignments('PRETTY_NAME="Red Hat Enterprise Linux 8.9 (Ootpa)"\n') == \
        {"PRETTY_NAME": "Red Hat Enterprise Linux 8.9 (Ootpa)"}


@pytest.mark.parametrize(("value", "kib"), [
    ("4096", 4096), (">4096", 4096), ("> 4096", 4096), ("8192 s", 4096),
    ("8192 sectors", 4096), ("4096 KiB", 4096),  # tuned reads a suffix as sectors only if 's...'
    (">8192 s", None), ("8192s", None), ("<4096", None), ("", None), ("lots", None),
])
def test_tuned_readahead_as_tuned_parses_it(value, kib):
    # tuned 2.x plugin_disk._parse_ra after base._process_assignment_modifiers
    assert tuned_readahead_kib(value) == kib


@pytest.mark.parametrize(("value", "kib"), [("4096", 4096), (">4096", None), ("<4096", None)])
def test_tuned_2_3_readahead_has_no_modifiers(value, kib):
    # tuned 2.3's plugin_disk._parse_ra: int(">4096") raises; the modifiers come in v2.4.0's
    # base._check_and_save_value
    assert tuned_readahead_kib(value, modifiers=False) == kib


def test_tuned_units_merge_by_name_with_replace_and_drop(tmp_path):
    root = RootBuilder(tmp_path)
    root.file("/usr/lib/tuned/base/tuned.conf",
              "[main]\n[vm]\ntransparent_hugepages=always\n[disk]\nreadahead=>4096\n"
              "elevator=deadline\n")
    root.file("/etc/tuned/site/tuned.conf",
              "[main]\ninclude=base\n[disk]\ndrop=elevator\n[vm]\nreplace=true\n")
    chain = resolve_chain(HostRoot(tmp_path), ["site"])
    assert chain.setting("disk", "readahead") == (">4096", "base")
    assert chain.setting("disk", "elevator") is None  # dropped by the including profile
    assert chain.setting("vm", "transparent_hugepages") is None  # replaced by an empty unit


def test_grub2_menu_as_grub2_mkconfig_writes_it():
    menu = grub2_menu(RHEL7_GRUB_CFG)
    assert menu.default == "${saved_entry}"
    assert [title for title, _ in menu.entries] == [RHEL7_TITLE, RHEL7_RESCUE_TITLE]
    assert menu.entries[0][1][:3] == ["root=/dev/mapper/rhel-root", "ro", "crashkernel=auto"]
    assert menu.find(RHEL7_TITLE) == 0  # grubby's saved_entry: the title
    assert menu.find("gnulinux-3.10.0-1160.el7.x86_64-advanced-"
                     "6f9a2a3e-8f41-4d39-8c3f-1a2b3c4d5e6f") == 0  # or the id
    assert menu.find("1") == 1 and menu.find("7") is None and menu.find("") == 0
    assert grub2_menu(RHEL7_GRUB_CFG.replace('"${saved_entry}"', '"1"')).default == "1"


def test_legacy_grub_menu_default_picks_the_title():
    menu = legacy_grub_menu(RHEL6_GRUB_CONF)
    assert menu.default == "1"
    title, args = menu.entries[menu.find(menu.default)]
    assert title == "Red Hat Enterprise Linux 6 (2.6.32-71.el6.x86_64)"
    assert "transparent_hugepage=never" not in args
    assert "root=/dev/mapper/vg_sas-lv_root" in args  # '=' inside arguments kept


def test_mount_options_keep_the_commas_of_a_quoted_selinux_context():
    # /proc/mounts of a RHEL 8 host with an SELinux context mount option (mount(8) context=)
    line = ('/dev/mapper/sasvg-saswork /saswork xfs rw,noatime,'
            'context="system_u:object_r:tmp_t:s0:c127,c456",attr2,inode64,noquota 0 0\n')
    (entry,), problems = parse_mounts(line)
    assert problems == []
    assert entry.options == ("rw", "noatime", 'context="system_u:object_r:tmp_t:s0:c127,c456"',
                             "attr2", "inode64", "noquota")
    assert entry.option_value("context") == '"system_u:object_r:tmp_t:s0:c127,c456"'


@pytest.mark.parametrize(("line", "writes"), [
    # Red Hat's THP solution (rc.local), and the shapes sites use around it.
    ("echo never > /sys/kernel/mm/transparent_hugepage/enabled",
     [("/sys/kernel/mm/transparent_hugepage/enabled", "never")]),
    ("echo 'never' >/sys/kernel/mm/redhat_transparent_hugepage/defrag",
     [("/sys/kernel/mm/redhat_transparent_hugepage/defrag", "never")]),
    ("echo never | tee /sys/kernel/mm/transparent_hugepage/enabled >/dev/null",
     [("/sys/kernel/mm/transparent_hugepage/enabled", "never")]),
    ("printf never > /sys/block/sdb/queue/scheduler; echo 8192 > /sys/block/sdb/queue/"
     "read_ahead_kb", [("/sys/block/sdb/queue/scheduler", "never"),
                       ("/sys/block/sdb/queue/read_ahead_kb", "8192")]),
    ("if test -f /sys/kernel/mm/transparent_hugepage/enabled; then echo never > "
     "/sys/kernel/mm/transparent_hugepage/enabled; fi",
     [("/sys/kernel/mm/transparent_hugepage/enabled", "never")]),
    ("#echo never > /sys/kernel/mm/transparent_hugepage/enabled", []),
    ("touch /var/lock/subsys/local  # echo never > /sys/kernel/mm/transparent_hugepage/enabled",
     []),
    ("echo never > /tmp/enabled", []),
])
def test_sysfs_writes_in_shell(line, writes):
    found = writes_in_shell(f"#!/bin/sh\n{line}\n", "/etc/rc.d/rc.local")
    assert [(w.path, w.value) for w in found] == writes
    assert all(w.source == "/etc/rc.d/rc.local:2" for w in found)


def test_tmpfiles_w_lines():
    # tmpfiles.d(5): type path mode user group age argument; only w lines under /sys write.
    text = ("# THP off\n"
            "w /sys/kernel/mm/transparent_hugepage/defrag - - - - never\n"
            "w+ /sys/kernel/mm/transparent_hugepage/enabled - - - - madvise\n"
            "d /run/sas 0755 sas sas -\n"
            "w /etc/motd - - - - hello\n"
            "w /sys/kernel/mm/transparent_hugepage/khugepaged/defrag\n")
    found = tmpfiles_writes(text, "/etc/tmpfiles.d/thp.conf")
    assert [(w.path.rsplit("/", 1)[1], w.value, w.source, w.stage) for w in found] == [
        ("defrag", "never", "/etc/tmpfiles.d/thp.conf:2", EARLY),
        ("enabled", "madvise", "/etc/tmpfiles.d/thp.conf:3", EARLY)]


def test_bls_entries_sort_as_rpmvercmp():
    # blscfg boots the newest: 5.14.0-427 after 5.14.0-70 (numbers, not text), the rescue
    # entry ("0-rescue-<machine id>") last.
    versions = ["5.14.0-70.13.1.el9_0.x86_64", "0-rescue-0123456789abcdef",
                "5.14.0-427.13.1.el9_4.x86_64", "5.14.0-362.8.1.el9_3.x86_64"]
    assert sorted(versions, key=rpm_version_key, reverse=True) == [
        "5.14.0-427.13.1.el9_4.x86_64", "5.14.0-362.8.1.el9_3.x86_64",
        "5.14.0-70.13.1.el9_0.x86_64", "0-rescue-0123456789abcdef"]


def test_sysctl_d_lines():
    # sysctl.d(5): '#' and ';' comments, '/' separators (dots then stand for slashes), a
    # leading '-' that only silences errors.
    text = ("# /etc/sysctl.d/90-sas.conf\n; old\nvm.dirty_ratio = 40\n"
            "-vm/dirty_background_ratio=10\nnet/ipv4/conf/enp3s0.200/forwarding = 1\n"
            "not a setting\n")
    assert [(line.key, line.value, line.source) for line in parse_sysctl(text, "f")] == [
        ("vm.dirty_ratio", "40", "f:3"), ("vm.dirty_background_ratio", "10", "f:4"),
        ("net.ipv4.conf.enp3s0/200.forwarding", "1", "f:5")]


def test_mount_units_override_fstab(tmp_path):
    # systemd.mount(5): the [Mount] section; a line continued with a backslash is joined
    # (with a space). A unit in /etc/systemd/system replaces fstab's for its mount point.
    unit = ("[Unit]\nDescription=SAS WORK\nWhere=/not/this\n\n[Mount]\nWhat=/dev/mapper/"
            "sasvg-saswork\nWhere=/saswork\nType=xfs\nOptions=defaults,\\\nnoatime\n")
    assert mount_unit_settings(unit)["Where"] == "/saswork"
    root = RootBuilder(tmp_path)
    root.fstab([("/dev/mapper/sasvg-saswork", "/saswork", "xfs", "defaults"),
                ("/dev/mapper/sasvg-sasdata", "/sas data", "xfs", "noauto,noatime")])
    root.file("/etc/systemd/system/saswork.mount", unit)
    problems: list[str] = []
    mounts = collect_boot_mounts(HostRoot(str(tmp_path)), problems)
    work, data = mounts["/saswork"], mounts["/sas data"]
    assert (work.options, work.source, work.at_boot) == (
        ("defaults", "noatime"), "/etc/systemd/system/saswork.mount", True)
    assert (data.at_boot, data.source) == (False, "/etc/fstab line 9") and problems == []
