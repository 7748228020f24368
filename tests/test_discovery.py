"""Where SAS directories come from, how they are placed on mounts, and which role a host has."""

from __future__ import annotations

import pytest

from sascheck.scanner.hostroot import FactError, HostRoot
from sascheck.scanner.role import detect_role
from tests.rootbuilder import RootBuilder

SASROOT = "/opt/sas/SASHome/SASFoundation/9.4"
SAS_RULES = ("io_scheduler", "read_ahead", "barrier_requires_protected_cache", "sas_fs_noatime",
             "sas_dirs_separate", "sas_fs_type")


def _dirs(result):
    return {(d["role"], d["path"]): d["source"] for d in result["sas_dirs"]}


def test_local_config_overrides_the_shipped_work_tmp(host, scan):
    result = scan(host())
    dirs = _dirs(result)
    assert dirs[("WORK", "/saswork")] == f"{SASROOT}/sasv9_local.cfg:1"
    assert dirs[("UTILLOC", "/sasutil")] == f"{SASROOT}/sasv9_local.cfg:2"
    assert ("WORK", "/tmp") not in dirs
    assert dirs[("DATA", "/sasdata")] == "--set"


def test_shipped_default_work_is_used_without_a_local_config(host, scan):
    dirs = _dirs(scan(host(sas_local_cfg=None)))
    assert ("WORK", "/tmp") in dirs
    assert dirs[("WORK", "/tmp")] == f"{SASROOT}/nls/en/sasv9.cfg:2"


def test_setting_data_alone_still_discovers_work_and_utilloc(host, scan):
    dirs = _dirs(scan(host()))
    assert {role for role, _ in dirs} == {"DATA", "WORK", "UTILLOC"}


def test_set_work_overrides_discovery(host, scan):
    dirs = _dirs(scan(host(), "sas_work_dirs=/sasutil/w"))
    assert ("WORK", "/sasutil/w") in dirs and ("WORK", "/saswork") not in dirs


def test_config_cycle_and_includes_in_order(tmp_path, scan):
    root = RootBuilder(tmp_path)
    root.file(f"{SASROOT}/sasv9.cfg", '-CONFIG "!SASROOT/a.cfg"\n-WORK /first\n')
    root.file(f"{SASROOT}/a.cfg", f"-CONFIG {SASROOT}/sasv9.cfg\n-WORK /from_a\n")
    root.file(f"{SASROOT}/sasv9_local.cfg", "-utilloc '/u tl'\n")
    root.mount("/dev/sda", "/", "xfs", "rw").write_mounts()
    result = scan(tmp_path)
    dirs = _dirs(result)
    assert ("WORK", "/first") in dirs and ("WORK", "/from_a") not in dirs  # last read wins
    assert ("UTILLOC", "/u tl") in dirs
    assert any("cycle" in note for note in result["sas_discovery_notes"])


def test_sas_config_files_value(tmp_path, scan):
    root = RootBuilder(tmp_path)
    root.file("/srv/sas/site.cfg", "-WORK /srv/work\n")
    root.mount("/dev/sda", "/", "xfs", "rw").write_mounts()
    result = scan(tmp_path, "sas_config_files=/srv/sas/site.cfg,/missing.cfg",
                  baseline_sets=False)
    assert ("WORK", "/srv/work") in _dirs(result)
    assert any("/missing.cfg" in note for note in result["sas_discovery_notes"])


def test_no_sas_directories_means_notchecked_never_pass(tmp_path, scan):
    RootBuilder(tmp_path).mount("/dev/sda", "/", "xfs", "rw").write_mounts()
    result = scan(tmp_path, baseline_sets=False)
    for rule_id in SAS_RULES:
        rule = result["by_id"][rule_id]
        assert rule["result"] == "notchecked"
        assert "--set sas_data_dirs" in rule["message"]


def test_sas_dir_through_symlinks_inside_the_root(host, scan, tmp_path):
    path = host()
    # An absolute link in the root must resolve inside the root, not on this machine.
    (path / "sas").mkdir()
    (path / "sas" / "data").symlink_to("/sasdata")
    result = scan(path, "sas_data_dirs=/sas/data")
    subjects = [e["subject"] for e in result["by_id"]["sas_fs_type"]["evidence"]]
    assert "/sasdata (DATA)" in subjects


def test_mount_point_with_escaped_space(tmp_path, scan):
    root = RootBuilder(tmp_path)
    root.disk("sdb", read_ahead_kb=4096)
    root.mount("/dev/sda", "/", "xfs", "rw").mount("/dev/sdb", "/sas work", "xfs", "rw,noatime")
    root.write_mounts()
    assert "\\040" in (tmp_path / "proc/mounts").read_text()
    result = scan(tmp_path, "sas_data_dirs=/sas work/data", baseline_sets=False)
    rule = result["by_id"]["read_ahead"]
    assert rule["result"] == "pass"
    assert rule["evidence"][0]["subject"].startswith("/sas work (DATA)")


def test_resolve_stays_inside_the_root(tmp_path):
    (tmp_path / "etc").mkdir()
    (tmp_path / "a").symlink_to("../../../../etc")
    (tmp_path / "b").symlink_to("/etc")
    (tmp_path / "loop1").symlink_to("loop2")
    (tmp_path / "loop2").symlink_to("loop1")
    root = HostRoot(tmp_path)
    assert root.resolve("/a") == "/etc"
    assert root.resolve("/b/passwd") == "/etc/passwd"
    assert root.read_optional("/b/passwd") is None  # not the host's /etc/passwd
    with pytest.raises(FactError, match="symbolic links"):
        root.resolve("/loop1/x")


# /proc/modules as the kernel writes it: name, size, use count, users, state, address.
# A KVM host idles with kvm_intel at 0; each running guest (and each open /dev/kvm) adds one.
MODULES_IDLE = ("kvm_intel 344064 0 - Live 0xffffffffc0b6e000\n"
                "kvm 1028096 1 kvm_intel, Live 0xffffffffc0a3b000\n"
                "irqbypass 16384 1 kvm, Live 0xffffffffc0a30000\n")
MODULES_RUNNING = MODULES_IDLE.replace("kvm_intel 344064 0 -", "kvm_intel 344064 6 -")
# A libvirt domain definition (virsh dumpxml), abridged; /run/libvirt/qemu/NAME.xml is the
# running guest's status file, /etc/libvirt/qemu/NAME.xml its persistent definition.
DOMAIN = "<domain type='kvm'>\n  <name>sasguest01</name>\n  <memory unit='KiB'>67108864</memory>\n</domain>\n"
LIBVIRT_INSTALLED = {"/usr/sbin/libvirtd": "", "/usr/libexec/qemu-kvm": "",
                     "/etc/libvirt/qemu.conf": "# Master configuration file for the QEMU driver.\n"}
WANTS = "/etc/systemd/system/multi-user.target.wants"
ROLE_CASES = {
    "no evidence": ({}, {}, "bare_metal"),
    "hypervisor flag": ({"/proc/cpuinfo": "processor\t: 0\nflags\t\t: fpu vme hypervisor\n"}, {},
                        "kvm_guest"),
    "QEMU DMI vendor": ({"/sys/class/dmi/id/sys_vendor": "QEMU\n"}, {}, "kvm_guest"),
    "oVirt guest": ({"/sys/class/dmi/id/sys_vendor": "oVirt\n",
                     "/sys/class/dmi/id/product_name": "oVirt Node\n"}, {}, "kvm_guest"),
    "Hyper-V guest": ({"/sys/class/dmi/id/sys_vendor": "Microsoft Corporation\n",
                       "/sys/class/dmi/id/product_name": "Virtual Machine\n"}, {}, "kvm_guest"),
    "Microsoft laptop": ({"/sys/class/dmi/id/sys_vendor": "Microsoft Corporation\n",
                          "/sys/class/dmi/id/product_name": "Surface Laptop 4\n"}, {},
                         "bare_metal"),
    "Parallels guest": ({"/sys/class/dmi/id/sys_vendor": "Parallels Software International Inc.\n"},
                        {}, "kvm_guest"),
    "KVM host running guests": ({"/proc/modules": MODULES_RUNNING, **LIBVIRT_INSTALLED}, {},
                                "kvm_host"),
    "running libvirt guest": ({"/run/libvirt/qemu/sasguest01.xml": DOMAIN,
                               "/proc/modules": MODULES_IDLE, **LIBVIRT_INSTALLED}, {},
                              "kvm_host"),
    "defined guest, libvirtd enabled": (
        {"/etc/libvirt/qemu/sasguest01.xml": DOMAIN, **LIBVIRT_INSTALLED},
        {f"{WANTS}/libvirtd.service": "/usr/lib/systemd/system/libvirtd.service"}, "kvm_host"),
    "defined guest, RHEL 9 modular daemon": (
        {"/etc/libvirt/qemu/sasguest01.xml": DOMAIN, **LIBVIRT_INSTALLED},
        {"/etc/systemd/system/sockets.target.wants/virtqemud.socket":
         "/usr/lib/systemd/system/virtqemud.socket"}, "kvm_host"),
    "defined guest, RHEL 6 SysV": (
        {"/etc/libvirt/qemu/sasguest01.xml": DOMAIN, **LIBVIRT_INSTALLED},
        {"/etc/rc.d/rc3.d/S97libvirtd": "../init.d/libvirtd"}, "kvm_host"),
    "defined guest, libvirt not enabled": (
        {"/etc/libvirt/qemu/sasguest01.xml": DOMAIN, **LIBVIRT_INSTALLED}, {}, "bare_metal"),
    # "Server with GUI": KVM modules loaded, libvirt installed and enabled, no guest at all.
    "workstation with libvirt, no guests": (
        {"/proc/modules": MODULES_IDLE, **LIBVIRT_INSTALLED},
        {f"{WANTS}/libvirtd.service": "/usr/lib/systemd/system/libvirtd.service"}, "bare_metal"),
    "docker": ({"/.dockerenv": ""}, {}, "container"),
    "podman": ({"/run/.containerenv": ""}, {}, "container"),
}


@pytest.mark.parametrize("case", sorted(ROLE_CASES))
def test_role_detection(tmp_path, case):
    files, links, role = ROLE_CASES[case]
    root = RootBuilder(tmp_path)
    for path, text in files.items():
        root.file(path, text)
    for path, target in links.items():
        root.symlink(path, target)
    decision = detect_role(HostRoot(tmp_path))
    assert decision.name == role, decision.reasons
    assert decision.reasons and decision.source == "auto"


def test_loaded_kvm_without_guests_says_why_it_is_not_a_kvm_host(tmp_path):
    root = RootBuilder(tmp_path)
    root.file("/proc/modules", MODULES_IDLE)
    decision = detect_role(HostRoot(tmp_path))
    assert decision.name == "bare_metal"
    assert any("kvm_intel loaded but no guest runs" in reason for reason in decision.reasons)


def test_role_is_reported_and_gates_rules(host, scan):
    result = scan(host(extra_files={"/sys/class/dmi/id/product_name": "KVM\n"}), role="auto")
    assert result["role"]["name"] == "kvm_guest"
    assert "DMI product_name is 'KVM'" in result["role"]["reasons"]
    assert result["by_id"]["cpu_governor_performance"]["result"] == "notapplicable"
