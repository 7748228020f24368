"""What one fix does to one setting: barriers only turned on, hostile mount names kept as
data, LVM and NFS read-ahead, numa=off taken out of every boot source, sysctl files kept."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from .support.cases import named
from .support.fix_hosts import (
    verdicts,
)
from .support.hosts import BASELINE_SETS, SasFs, sas_host
from .support.remedy import (
    ansible_available,
    generate,
    lint_playbook,
    run_bash,
    run_playbook,
)
from .test_verdicts import CASES


def test_barriers_are_only_ever_turned_on(tmp_path):
    fs = [SasFs("sasdata", "/sasdata", "ext4", "rw,noatime,nobarrier"),
          SasFs("saswork", "/saswork"), SasFs("sasutil", "/sasutil")]
    fstab = ("/dev/mapper/sasvg-sasdata /sasdata ext4 defaults,noatime,nobarrier 0 0\n"
             "/dev/mapper/sasvg-saswork /saswork xfs defaults,noatime 0 0\n")
    for protected, expected in (("false", "defaults,noatime 0 0"),
                                ("true", "defaults,noatime,nobarrier 0 0")):
        root = sas_host(tmp_path / protected, filesystems=fs,
                        extra_files={"/etc/fstab": fstab})
        sets = [*BASELINE_SETS, f"storage_cache_protected={protected}"]
        script = generate("bash", tmp_path / f"fix-{protected}.sh", root, sets,
                          ["--all", "--rule", "barrier_requires_protected_cache"])
        run_bash(script, root)
        lines = (root / "etc/fstab").read_text().splitlines()
        assert lines[0].endswith(expected), lines
        assert "nobarrier" not in lines[1] and "barrier=0" not in lines[1]


HOSTILE_MOUNTS = ["/sas work", "/x$(touch PWNED)", "/q'uote\"d", "/b`touch PWNED2`"]


def _hostile_root(path: Path) -> Path:
    filesystems = [SasFs(f"lv{index}", point) for index, point in enumerate(HOSTILE_MOUNTS)]
    filesystems = [SasFs(f.lv, f.mountpoint, "xfs", "rw,relatime") for f in filesystems]
    fstab = "".join(f"/dev/mapper/sasvg-{f.lv} {f.mountpoint.replace(' ', chr(92) + '040')} "
                    f"xfs defaults,relatime 0 0\n" for f in filesystems)
    return sas_host(path, filesystems=filesystems, sas_local_cfg=None,
                    extra_files={"/etc/fstab": fstab}, tuned_active="balanced")


@pytest.mark.parametrize("fmt", ["bash", "ansible"])
def test_hostile_mount_names_stay_data(tmp_path, fmt, monkeypatch):
    if fmt == "ansible" and not ansible_available():
        pytest.skip("ansible-core not installed")
    root = _hostile_root(tmp_path / "root")
    sets = ["sas_data_dirs=" + ",".join(HOSTILE_MOUNTS)]
    output = generate(fmt, tmp_path / f"fix.{fmt}", root, sets)
    monkeypatch.chdir(tmp_path)
    if fmt == "bash":
        assert subprocess.run(["shellcheck", str(output)]).returncode == 0
        run_bash(output, root)
    else:
        assert lint_playbook(output).returncode == 0
        run_playbook(output, root)
    assert not list(tmp_path.rglob("PWNED*")) and not Path("/PWNED").exists()
    fstab = (root / "etc/fstab").read_text()
    assert fstab.count("defaults,noatime 0 0") == len(HOSTILE_MOUNTS), fstab
    assert "/sas\\040work" in fstab  # escapes kept as the kernel writes them
    rules = (root / "etc/udev/rules.d/99-sascheck-io.rules").read_text()
    assert "sasvg-lv1" in rules


def test_bash_fix_says_how_to_raise_lvm_read_ahead(tmp_path):
    """An LV whose metadata keeps a low read_ahead: offline, the exact lvchange line."""
    changes = named(CASES, "io boot: LVM read_ahead of one LV below the minimum, over udev").changes
    root = sas_host(tmp_path / "root", **changes)
    ran = run_bash(generate("bash", tmp_path / "fix.sh", root, BASELINE_SETS), root)
    assert "lvchange --readahead 4096 sasvg/sasdata" in ran.stderr.replace("\n", " ")
    assert "sasvg/saswork" not in ran.stderr  # read_ahead auto: nothing to raise


def test_numa_off_leaves_every_boot_source_and_other_arguments_stay(tmp_path):
    """numa=off is taken out of the BLS entry, /etc/default/grub and /etc/kernel/cmdline;
    numa=noacpi and the rest of each line are kept; the running kernel's is only reported."""
    root = sas_host(tmp_path / "root",
                    bls_options="root=/dev/mapper/rhel-root ro numa=off transparent_hugepage=never",
                    grub_cmdline="crashkernel=auto numa=off transparent_hugepage=never numa=noacpi",
                    proc_cmdline="BOOT_IMAGE=/vmlinuz ro numa=off",
                    extra_files={"/etc/kernel/cmdline": "root=/dev/mapper/rhel-root numa=off\n"})
    sets = [*BASELINE_SETS]
    assert verdicts(root, sets)["numa_enabled"] == "fail"
    script = generate("bash", tmp_path / "fix.sh", root, sets, ["--rule", "numa_enabled"])
    done = run_bash(script, root)
    assert "reboot for NUMA to take effect" in done.stderr
    entry = next((root / "boot/loader/entries").glob("*.conf")).read_text()
    assert "options root=/dev/mapper/rhel-root ro transparent_hugepage=never\n" in entry
    assert 'GRUB_CMDLINE_LINUX="crashkernel=auto transparent_hugepage=never numa=noacpi"' in (
        root / "etc/default/grub").read_text()
    assert (root / "etc/kernel/cmdline").read_text() == "root=/dev/mapper/rhel-root\n"
    (root / "proc/cmdline").write_text("BOOT_IMAGE=/vmlinuz ro\n")  # after the reboot
    assert verdicts(root, sets)["numa_enabled"] == "pass"
    assert run_bash(script, root).stdout.rstrip().endswith("no changes")


@pytest.mark.parametrize(("read_ahead_kb", "low"), [(128, True), (16384, False)])
def test_nfs_read_ahead_is_found_on_its_bdi(tmp_path, read_ahead_kb, low):
    """The fix finds an NFS SAS mount's bdi through mountinfo (the runtime write itself is
    live-only, as for block devices) and says how to keep the value across mounts."""
    from .support.verdict_hosts import nfs_data

    root = sas_host(tmp_path / "root", filesystems=[
        nfs_data(read_ahead_kb), SasFs("saswork", "/saswork"), SasFs("sasutil", "/sasutil")])
    sets = [*BASELINE_SETS, "allowed_fs_types=xfs,ext4,nfs4"]
    script = generate("bash", tmp_path / "fix.sh", root, sets, ["--rule", "read_ahead", "--all"])
    done = run_bash(script, root)
    assert ("NFS sets read-ahead again at every mount" in done.stderr) == low, done.stderr


def test_persisting_a_sysctl_keeps_the_other_keys_sascheck_persisted(tmp_path):
    """Issue 47: persist_sysctl rewrote 99-zz-sascheck.conf with its one key, so a second
    sysctl rule (fixed in the same run or an earlier one) lost its line. The file an
    earlier run left with vm.swappiness keeps it; vm.dirty_ratio's line is replaced in
    place; a second run changes nothing."""
    root = sas_host(tmp_path / "root", dirty_ratio=20)
    ours = root / "etc/sysctl.d/99-zz-sascheck.conf"
    ours.parent.mkdir(parents=True, exist_ok=True)
    ours.write_text("# Written by sascheck\nvm.swappiness = 10\nvm.dirty_ratio = 20\n")
    script = generate("bash", tmp_path / "fix.sh", root, BASELINE_SETS,
                      ["--rule", "vm_dirty_ratio"])
    run_bash(script, root)
    assert ours.read_text() == "# Written by sascheck\nvm.swappiness = 10\nvm.dirty_ratio = 40\n"
    again = run_bash(script, root)
    assert "no changes" in again.stdout
    assert ours.read_text() == "# Written by sascheck\nvm.swappiness = 10\nvm.dirty_ratio = 40\n"
