"""The tuned and udev fix formats: what they write agrees with what the bash script writes,
keeps what the host has, and says what to run next."""

from __future__ import annotations

import re

import pytest

from tests.support.example_roots import EXAMPLE_VALUES, EXAMPLES

from .support.fix_hosts import (
    rhel6_tuned02,
    verdicts,
)
from .support.hosts import BASELINE_SETS, sas_host
from .support.remedy import (
    generate,
    run_bash,
)


def test_tuned_format_keeps_thp_on_a_kvm_host(tmp_path):
    EXAMPLES["kvm-host"](tmp_path / "kvm")
    text = generate("tuned", tmp_path / "kvm.conf", tmp_path / "kvm", [], ["--all"]).read_text()
    assert "transparent_hugepages=always" in text and "=never" not in text
    assert "include=virtual-host\n" in text  # tuned's own profile for the role, shipped there
    EXAMPLES["rhel6-defaults"](tmp_path / "rhel6")
    text = generate("tuned", tmp_path / "r6.conf", tmp_path / "rhel6",
                    EXAMPLE_VALUES["rhel6-defaults"], ["--all"]).read_text()
    assert "transparent_hugepages=never" in text
    # No elevator: tuned would give it to every disk, allowed ones included.
    assert not re.search(r"^\s*elevator", text, re.MULTILINE)
    # tuned 0.2 keeps no /usr/lib/tuned to list: the profile every tuned 2 package ships,
    # and never less read-ahead than its readahead=>4096.
    assert "include=throughput-performance\n" in text
    assert "readahead=>4096" in text and "vm.dirty_ratio=40" in text


@pytest.mark.parametrize(("sets", "include", "read_ahead"), [
    (["read_ahead_min_kb=16384"], "enterprise-storage", ">16384"),
    # A site's own profile may not exist here: the first one tuned ships is included.
    (["allowed_tuned_profiles=sas-site,throughput-performance"], "throughput-performance",
     ">4096"),
])
def test_tuned_profile_follows_the_site_values(tmp_path, sets, include, read_ahead):
    """The tuned format and the profile the bash script writes agree: the first allowed
    shipped profile included, read-ahead the larger of the site minimum and its own."""
    root = sas_host(tmp_path / "root", tuned_active="balanced")
    sets = [*BASELINE_SETS, *sets]
    text = generate("tuned", tmp_path / "p.conf", root, sets, ["--all"]).read_text()
    run_bash(generate("bash", tmp_path / "fix.sh", root, sets), root)
    written = (root / "etc/tuned/sas-performance/tuned.conf").read_text()
    for profile in (text, written):
        assert f"include={include}\n" in profile and f"readahead={read_ahead}\n" in profile
    assert verdicts(root, sets)["tuned_profile"] == "pass"


# Every multipath map and path runs bfq, which the site does not allow: each gets a rule.
NOT_ALLOWED_SCHEDULERS = {"mpath_scheduler": "mq-deadline kyber [bfq] none",
                          "path_scheduler": "mq-deadline kyber [bfq] none"}


def test_udev_format_matches_what_the_script_writes(tmp_path):
    root = sas_host(tmp_path / "root", read_ahead_kb=128, tuned_active="balanced",
                    **NOT_ALLOWED_SCHEDULERS)
    rules = generate("udev", tmp_path / "99.rules", root, BASELINE_SETS).read_text()
    script = generate("bash", tmp_path / "fix.sh", root, BASELINE_SETS)
    run_bash(script, root)
    written = (root / "etc/udev/rules.d/99-sascheck-io.rules").read_text()

    def body(text: str) -> list[str]:
        return [line for line in text.splitlines() if line.startswith("ACTION")]

    # Schedulers: the two multipath maps (their paths' are passed over); read-ahead: the
    # three LVs.
    assert body(rules) == body(written) and len(body(rules)) == 2 + 3
    # Disks only (a partition has no queue/), as udev matches them.
    assert all('SUBSYSTEM=="block", ENV{DEVTYPE}=="disk", ' in line for line in body(rules))
    # The header says how to apply them to the running devices (udevadm's own options).
    assert "#   udevadm control --reload && udevadm trigger --subsystem-match=block " \
           "--action=change" in rules


def test_udev_rules_never_lower_read_ahead(tmp_path):
    root = sas_host(tmp_path / "root", read_ahead_kb=8192, tuned_active="balanced")
    rules = generate("udev", tmp_path / "99.rules", root, BASELINE_SETS).read_text()
    run_bash(generate("bash", tmp_path / "fix.sh", root, BASELINE_SETS), root)
    written = (root / "etc/udev/rules.d/99-sascheck-io.rules").read_text()
    for text in (rules, written):
        assert 'ATTR{queue/read_ahead_kb}="8192"' in text and '"2048"' not in text


def test_tuned_format_refuses_a_tuned_02_host(tmp_path, capsys):
    """RHEL 6's tuned 0.2 reads /etc/tune-profiles and no tuned.conf of tuned 2: a
    sas-performance profile written there would never load."""
    from sascheck.cli import main

    root = rhel6_tuned02(tmp_path / "root", "throughput-performance")
    assert main(["fix", "--format", "tuned", "--root", str(root), "-o",
                 str(tmp_path / "tuned.conf"), *[f"--set={v}" for v in BASELINE_SETS]]) == 1
    assert "runs tuned 0.2" in capsys.readouterr().err
    assert not (tmp_path / "tuned.conf").exists()


def test_fix_says_what_it_wrote_what_to_run_and_what_it_would_replace(tmp_path, capsys):
    from sascheck.cli import main

    root = sas_host(tmp_path / "root", tuned_active="balanced", extra_files={
        "/etc/tuned/sas-performance/tuned.conf": "[main]\nsummary=the site's own\n"})
    output = tmp_path / "tuned.conf"
    assert main(["fix", "--format", "tuned", "--root", str(root), "-o", str(output),
                 *[f"--set={v}" for v in BASELINE_SETS]]) == 0
    err = capsys.readouterr().err.splitlines()
    assert err[0].startswith(f"{output}: tuned fix for ")
    assert err[1].startswith("warning: the host already has a tuned profile named "
                             "sas-performance")
    assert err[2] == (f"next: install -D -m 0644 {output} /etc/tuned/sas-performance/"
                      "tuned.conf && tuned-adm profile sas-performance")
    assert main(["fix", "--format", "udev", "--root", str(root), "-o",
                 str(tmp_path / "99.rules"), *[f"--set={v}" for v in BASELINE_SETS]]) == 0
    err = capsys.readouterr().err
    assert "warning" not in err and "udevadm trigger --subsystem-match=block" in err


def test_udev_matches_by_serial_where_there_is_no_wwid(tmp_path):
    """A disk without a SCSI wwid but with a serial (virtio-blk: udev's ID_SERIAL comes from
    it) is matched by ENV{ID_SERIAL}, in the udev format and in the script alike; a serial a
    rule cannot carry falls back to the kernel name, with a note."""
    # Bio-based maps (queue_mode bio: no scheduler of their own) leave it to their paths.
    root = sas_host(tmp_path / "root", read_ahead_kb=128, tuned_active="balanced",
                    mpath_scheduler="none", path_scheduler="mq-deadline kyber [bfq] none")
    (root / "sys/block/sdb/serial").write_text("QM00005-sas-01\n")
    (root / "sys/block/sdc/serial").write_text('x", RUN+="/bin/sh\n')
    rules = generate("udev", tmp_path / "99.rules", root, BASELINE_SETS).read_text()
    ran = run_bash(generate("bash", tmp_path / "fix.sh", root, BASELINE_SETS), root)
    written = (root / "etc/udev/rules.d/99-sascheck-io.rules").read_text()
    # the script says, as the udev format's note does, that a kernel name may change
    assert "can change at the next boot" in rules
    assert "sdc: no device-mapper name or UUID, wwid or serial a rule can carry: matched" \
        in ran.stderr
    for text in (rules, written):
        assert 'ENV{ID_SERIAL}=="QM00005-sas-01", ATTR{queue/scheduler}' in text
        assert 'KERNEL=="sdc", ATTR{queue/scheduler}' in text and "RUN" not in text
