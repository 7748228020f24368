"""Host data is never code: each attack of issue 9 performed against the real consumer
(bash runs the script, ansible-playbook runs the playbook, udev's rule grammar reads the
rules, tarfile extraction is attempted) and shown inert."""

from __future__ import annotations

import io
import json
import os
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
from lxml import etree

from sascheck.cli import main
from sascheck.scanner.sources.hostroot import HostRoot

from .support.hosts import sas_host, tree_digest
from .support.remedy import ansible_available, run_playbook


@pytest.mark.skipif(not ansible_available(), reason="ansible-playbook not installed")
def test_playbook_never_templates_host_values(tmp_path):
    """A SAS directory named like a Jinja expression (in a results file: a list, so the
    comma survives) is data to Ansible, not a lookup that runs on the controller."""
    marker = tmp_path / "templated"
    # no tuned at boot: the fix keeps the value in /etc/sysctl.d, which shows that it ran
    root = sas_host(tmp_path / "root", dirty_ratio=20, tuned_enabled=False)
    results = tmp_path / "r.json"
    _scan_to(root, "--json", str(results))
    data = json.loads(results.read_text())
    evil_dir = "/sasdata/{{ lookup('pipe', 'touch " + str(marker) + "') }}"
    data["sas_dirs"] = [{"role": "DATA", "path": evil_dir, "source": "--set"}]
    results.write_text(json.dumps(data))
    playbook = tmp_path / "fix.yml"
    assert main(["fix", "--format", "ansible", "--from", str(results), "--rule",
                 "vm_dirty_ratio", "-o", str(playbook)]) == 0
    assert "lookup" in playbook.read_text()
    run_playbook(playbook, root)
    assert not marker.exists()
    assert (root / "etc/sysctl.d/99-zz-sascheck.conf").exists()  # and the fix itself ran


# -- the terminal and JUnit ------------------------------------------------------------
def test_terminal_shows_escape_sequences_as_text(tmp_path):
    """The kernel's release string is read as the host gives it (the host name is cleaned
    as systemd cleans it: test_fix_target's host-name cases), so it carries the attack."""
    root = sas_host(tmp_path / "root")
    title = "\x1b]0;owned\x07\x1b[2J"
    (root / "proc/sys/kernel/osrelease").write_text(f"4.18.0{title}\n")
    completed = subprocess.run([sys.executable, "-m", "sascheck", "scan", "--root", str(root),
                                "--set", "sas_data_dirs=/sasdata"], capture_output=True,
                               text=True, env={**os.environ, "TERM": "xterm", "COLUMNS": "200"})
    output = completed.stdout + completed.stderr
    assert "4.18.0" in output
    assert "\x1b" not in output and "\x07" not in output
    assert "\\x1b]0;owned" in output


def test_junit_carries_control_characters(tmp_path):
    """A results file is untrusted: a host name in it with controls reaches JUnit escaped."""
    root = sas_host(tmp_path / "root")
    junit, report = tmp_path / "j.xml", tmp_path / "r.json"
    assert main(["scan", "--root", str(root), "--set", "sas_data_dirs=/sasdata", "--quiet",
                 "--json", str(report)]) in (0, 2)
    data = json.loads(report.read_text())
    data["host"]["hostname"] = "host\x01\x1b"
    report.write_text(json.dumps(data))
    assert main(["report", str(report), "-o", str(tmp_path / "r.html"),
                 "--junit", str(junit)]) in (0, 2)
    suite = etree.parse(str(junit)).find("testsuite")
    assert suite is not None and suite.get("name") == "host\\x01\\x1b"


# -- outputs that must not be replaced -------------------------------------------------------
def _scan_to(root: Path, *outputs: str) -> int:
    return main(["scan", "--root", str(root), "--set", "sas_data_dirs=/sasdata", "--quiet",
                 *outputs])


def test_only_dev_null_and_descriptors_are_written_in_place(tmp_path, capfd):
    """A FIFO at an output name is refused at once (it used to block the scan for ever), a
    device node of our own making is refused; /dev/null and /dev/stdout are written."""
    root = sas_host(tmp_path / "root")
    fifo = tmp_path / "fifo"
    os.mkfifo(fifo)
    assert _scan_to(root, "--json", str(fifo)) == 1
    assert fifo.is_fifo()
    assert _scan_to(root, "--html", "/dev/null") == 0
    assert Path("/dev/null").is_char_device()
    refusals = capfd.readouterr().err
    assert _scan_to(root, "--json", "/dev/stdout") == 0
    assert json.loads(capfd.readouterr().out)["schema"] == "sascheck-result/1"
    # /dev/fd/N is a descriptor; /dev/fd/../.. is the file system's root.
    assert _scan_to(root, "--json", "/dev/fd/../../" + str(tmp_path / "x.json")) == 1
    assert not (tmp_path / "x.json").exists()
    if os.geteuid() == 0:
        null = tmp_path / "null"
        os.mknod(null, 0o666 | 0o020000, os.makedev(1, 3))
        assert _scan_to(root, "--html", str(null)) == 1
        assert null.is_char_device()
    assert "not a regular file" in refusals


def test_links_and_directories_are_refused(tmp_path, capsys):
    root = sas_host(tmp_path / "root")
    victim = tmp_path / "victim"
    victim.write_text("keep\n")
    link = tmp_path / "report.html"
    link.symlink_to(victim)
    assert _scan_to(root, "--html", str(link)) == 1
    assert _scan_to(root, "--json", str(tmp_path)) == 1
    assert victim.read_text() == "keep\n" and link.is_symlink()
    errors = capsys.readouterr().err
    assert "symbolic link" in errors and "directory" in errors


def test_colliding_outputs_are_refused(tmp_path, capsys):
    root = sas_host(tmp_path / "root")
    assert _scan_to(root, "--json", "-", "--html", "-") == 1
    results = tmp_path / "r.json"
    assert _scan_to(root, "--json", str(results)) == 0
    before = results.read_bytes()
    assert main(["report", str(results), "-o", str(results)]) == 1
    assert main(["fix", "--format", "bash", "--from", str(results), "-o", str(results)]) == 1
    assert results.read_bytes() == before
    assert "same file as the input" in capsys.readouterr().err


def test_collect_never_writes_through_a_planted_name(tmp_path):
    root = sas_host(tmp_path / "root")
    victim = tmp_path / "victim"
    victim.write_text("keep\n")
    output = tmp_path / "host.tar.gz"
    (tmp_path / "host.tar.gz.partial").symlink_to(victim)
    assert main(["collect", "--root", str(root), "-o", str(output)]) == 0
    assert victim.read_text() == "keep\n"
    assert tarfile.is_tarfile(output)


# -- escapes from the root or the extraction directory -------------------------------------
def _archive(path: Path, members: list[tarfile.TarInfo]) -> Path:
    with tarfile.open(path, "w:gz") as archive:
        manifest = json.dumps({"schema": "sascheck-snapshot/1"}).encode()
        info = tarfile.TarInfo("manifest.json")
        info.size = len(manifest)
        archive.addfile(info, io.BytesIO(manifest))
        for member in members:
            archive.addfile(member, io.BytesIO(b"x" * member.size) if member.isreg() else None)
    return path


def _member(name: str, kind: bytes = tarfile.DIRTYPE, link: str = "") -> tarfile.TarInfo:
    info = tarfile.TarInfo(name)
    info.type, info.linkname = kind, link
    return info


def test_snapshot_links_that_resolve_outside_are_not_followed(tmp_path, monkeypatch, capsys):
    temporary = tmp_path / "tmp"
    temporary.mkdir()
    monkeypatch.setenv("TMPDIR", str(temporary))
    monkeypatch.setattr("tempfile.tempdir", None)
    archive = _archive(tmp_path / "evil.tar.gz", [
        _member("root"), _member("root/a/b/c", tarfile.DIRTYPE),
        _member("root/a/b/c/y", tarfile.SYMTYPE, "../../.."),
        _member("root/w", tarfile.SYMTYPE, "a/b/c/y/../../.."),
        _member("root/w/x"), _member("root/w/x/file", tarfile.REGTYPE)])
    assert main(["scan", "--snapshot", str(archive), "--quiet"]) == 1
    assert "through a link" in capsys.readouterr().err
    assert list(temporary.iterdir()) == []  # nothing escaped, nothing left behind


@pytest.mark.parametrize("manifest", [b"[1, 2]", b'"text"', b"[" * 200000 + b"]" * 200000])
def test_snapshot_manifest_of_the_wrong_shape(tmp_path, capsys, manifest):
    path = tmp_path / "m.tar.gz"
    with tarfile.open(path, "w:gz") as archive:
        info = tarfile.TarInfo("manifest.json")
        info.size = len(manifest)
        archive.addfile(info, io.BytesIO(manifest))
    assert main(["scan", "--snapshot", str(path), "--quiet"]) == 1
    error = capsys.readouterr().err
    assert "manifest" in error and error.count("\n") == 1


def test_hostroot_link_checks_stay_inside_the_root(tmp_path):
    outside = tmp_path / "outside"
    (outside / "system/multi-user.target.wants").mkdir(parents=True)
    (outside / "system/multi-user.target.wants/tuned.service").symlink_to("/dev/null")
    root = tmp_path / "root"
    (root / "etc").mkdir(parents=True)
    (root / "etc/systemd").symlink_to(outside)  # absolute: means <root>/<outside> inside
    host = HostRoot(root)
    assert not host.is_symlink("/etc/systemd/system/multi-user.target.wants/tuned.service")
    assert not host.exists("/etc/systemd/system/multi-user.target.wants/tuned.service")


def test_offline_fix_refuses_links_out_of_the_image(tmp_path):
    outside = tmp_path / "host-sysctl.d"
    outside.mkdir()
    root = sas_host(tmp_path / "image", dirty_ratio=20)
    (root / "etc/sysctl.d").symlink_to(outside)
    (root / "etc/fstab").unlink()  # the image's own fstab, replaced by a link out of it
    (root / "etc/fstab").symlink_to(tmp_path / "host-fstab")
    (tmp_path / "host-fstab").write_text("/dev/sda1 /sasdata xfs defaults 0 0\n")
    before = tree_digest(tmp_path / "host-sysctl.d"), (tmp_path / "host-fstab").read_text()
    script = tmp_path / "fix.sh"
    assert main(["fix", "--format", "bash", "--root", str(root), "--all",
                 "--rule", "vm_dirty_ratio", "--rule", "sas_fs_noatime",
                 "--set", "sas_data_dirs=/sasdata", "-o", str(script)]) == 0
    completed = subprocess.run(["bash", str(script)], capture_output=True, text=True,
                               env={**os.environ, "SASCHECK_ROOT": str(root)}, timeout=120)
    assert completed.returncode == 1 and "refused" in completed.stderr
    assert (tree_digest(outside), (tmp_path / "host-fstab").read_text()) == before
    assert not list(tmp_path.glob("host-fstab.sascheck-*"))


# -- one line for malformed input ------------------------------------------------------
def _arf(path: Path, results: dict[str, str]) -> Path:
    rules = "".join(f'<rule-result idref="xccdf_org.sascheck.content_rule_{rule}">'
                    f"<result>{result}</result></rule-result>" for rule, result in results.items())
    path.write_text('<asset-report-collection><TestResult xmlns="http://checklists.nist.gov/'
                    f'xccdf/1.2" start-time="2026-01-01T00:00:00">{rules}</TestResult>'
                    "</asset-report-collection>")
    return path


def test_arf_with_unknown_rules_reports_and_unknown_results_refuse(tmp_path, capsys):
    known = _arf(tmp_path / "a.xml", {"thp_disabled": "fail", "from_the_future": "pass"})
    assert main(["report", str(known), "-o", str(tmp_path / "a.html")]) == 0
    assert "from_the_future" in (tmp_path / "a.html").read_text()
    capsys.readouterr()  # what the first report said it wrote
    odd = _arf(tmp_path / "b.xml", {"thp_disabled": "exploded"})
    assert main(["report", str(odd), "-o", str(tmp_path / "b.html")]) == 1
    error = capsys.readouterr().err
    assert "exploded" in error and error.count("\n") == 1


def test_arf_over_the_size_cap_is_refused_before_parsing(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr("sascheck.reports.arf.MAX_ARF_BYTES", 1024)
    path = tmp_path / "big.xml"
    path.write_text("<a>" + "<b/>" * 1000 + "</a>")
    assert main(["report", str(path), "-o", str(tmp_path / "r.html")]) == 1
    assert "larger than" in capsys.readouterr().err


def test_empty_scheduler_list_and_empty_root(tmp_path, capsys):
    root = sas_host(tmp_path / "root")
    assert main(["fix", "--format", "tuned", "--root", str(root), "--all",
                 "--set", "allowed_schedulers=", "-o", str(tmp_path / "t.conf")]) == 1
    assert main(["scan", "--root", "", "--quiet"]) == 1
    errors = capsys.readouterr().err.splitlines()
    assert len(errors) == 2 and "at least 1" in errors[0] and "--root" in errors[1]


def test_error_messages_do_not_drive_the_terminal(tmp_path, capsys):
    path = tmp_path / "r.json"
    path.write_text(json.dumps({"schema": "sascheck-result/1", "profile": "\x1b]0;x\x07"}))
    assert main(["fix", "--format", "bash", "--from", str(path), "-o", str(tmp_path / "x")]) == 1
    assert "\x1b" not in capsys.readouterr().err


# -- unreadable evidence is an error, not absence ----------------------------------------
def test_unreadable_modules_leave_the_role_open(tmp_path, scan):
    root = sas_host(tmp_path / "root")
    (root / "proc/modules").unlink(missing_ok=True)
    os.mkfifo(root / "proc/modules")
    result = scan(root, role="auto")
    assert result["role"]["name"] == "bare_metal"
    assert any("/proc/modules" in reason for reason in result["role"]["reasons"])
    # THP off (bare metal) or on (KVM host): cannot be judged without knowing which.
    assert result["by_id"]["thp_disabled"]["result"] == "error"
    assert "--role" in result["by_id"]["thp_disabled"]["message"]
    # Rules that hold for both are judged as usual.
    assert result["by_id"]["read_ahead"]["result"] == "pass"


def test_container_environ_is_nul_separated(tmp_path, scan):
    root = sas_host(tmp_path / "root")
    (root / "proc/1").mkdir(parents=True, exist_ok=True)
    (root / "proc/1/environ").write_bytes(b"PATH=/usr/bin\0container=podman\0HOME=/\0")
    result = scan(root, role="auto")
    assert result["role"]["name"] == "container"
    assert "container=podman" in result["role"]["reasons"][0]


def test_unsearchable_sas_home_is_an_error(tmp_path, scan):
    root = sas_host(tmp_path / "root")
    shutil.rmtree(root / "opt/sas/SASHome")
    (root / "opt/sas/SASHome").symlink_to("SASHome")  # a loop: cannot be searched
    result = scan(root, baseline_sets=False)
    assert result["by_id"]["sas_fs_type"]["result"] == "error"
    assert "SASHome" in result["by_id"]["sas_fs_type"]["message"]


def test_unreadable_tuned_profile_is_an_error(tmp_path, scan):
    root = sas_host(tmp_path / "root")
    profile = root / "etc/tuned/sas-performance"
    shutil.rmtree(profile)
    profile.symlink_to("sas-performance")
    assert scan(root)["by_id"]["tuned_profile"]["result"] == "error"


@pytest.mark.parametrize("text, reason", [("\u0664\u0660\u0669\u0666\n", "not a number"),
                                          ("\u00b2\n", "not a number")])
def test_non_ascii_digits_are_not_numbers(tmp_path, scan, text, reason):
    root = sas_host(tmp_path / "root")
    for queue in root.glob("sys/devices/**/queue/read_ahead_kb"):
        queue.write_text(text)
    result = scan(root)["by_id"]["read_ahead"]
    assert result["result"] == "error"
    assert any(reason in evidence.get("note", "") for evidence in result["evidence"])


def test_two_selected_values_are_an_error(tmp_path, scan):
    root = sas_host(tmp_path / "root", thp_enabled="[always] madvise [never]")
    result = scan(root)["by_id"]["thp_disabled"]
    assert result["result"] == "error" and "two selected values" in result["message"]


def test_control_characters_in_sas_configuration_are_not_used(tmp_path):
    """A -WORK path XML cannot carry: noted, not used, and every output still written."""
    root = sas_host(tmp_path / "root", sas_local_cfg="-WORK /sas\x01work\n-UTILLOC /sasutil\n")
    assert main(["tailor", "--root", str(root), "-o", str(tmp_path / "t.xml")]) == 0
    outputs = ["--html", str(tmp_path / "r.html"), "--junit", str(tmp_path / "j.xml"),
               "--json", str(tmp_path / "r.json")]
    assert _scan_to(root, *outputs) in (0, 2)
    notes = json.loads((tmp_path / "r.json").read_text())["sas_discovery_notes"]
    assert any("control character" in note for note in notes)
    assert main(["fix", "--format", "bash", "--from", str(tmp_path / "r.json"),
                 "-o", str(tmp_path / "f.sh")]) == 0

