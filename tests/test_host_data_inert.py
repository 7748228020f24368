"""Host data is never code: each attack of issue 9 performed against the real consumer
(bash runs the script, ansible-playbook runs the playbook, udev's rule grammar reads the
rules, tarfile extraction is attempted) and shown inert."""

from __future__ import annotations

import io
import json
import os
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest
from lxml import etree

from sascheck.cli import main
from sascheck.remediations.generate import generate
from sascheck.remediations.rendering import FixInput
from sascheck.scanner.sources.hostroot import HostRoot
from tests.support.rootbuilder import RootBuilder

from .support.hosts import HostSpec, SasFs, build_host, sas_host, tree_digest
from .support.remedy import ansible_available, run_playbook

HOSTILE_NAME = 'x", RUN+="/bin/touch /tmp/sascheck-pwned'
MARKER = "sascheck-pwned"


# -- udev: the rules as udev's own grammar reads them ---------------------------------------
# systemd's udev-rules.c: KEY or KEY{ATTR}, an operator, a double-quoted value in which only
# \" does not end it; pairs separated by commas. Anything else makes the line invalid.
_UDEV_PAIR = re.compile(r'\s*([A-Z_]+(?:\{[^}]*\})?)\s*(==|!=|\+=|-=|:=|=)\s*"((?:\\"|[^"])*)"\s*')
SAFE_KEYS = {"ACTION", "SUBSYSTEM", "ENV{DEVTYPE}", "KERNEL", "ENV{DM_NAME}", "ENV{DM_UUID}",
             "ATTRS{wwid}", "ENV{ID_SERIAL}",
             "ATTR{queue/scheduler}", "ATTR{queue/read_ahead_kb}"}


def udev_keys(text: str) -> list[list[tuple[str, str, str]]]:
    """Every rule line as (key, operator, value) triples, as udev parses it."""
    rules = []
    for number, line in enumerate(text.splitlines(), 1):
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        pairs, position = [], 0
        while position < len(line):
            match = _UDEV_PAIR.match(line, position)
            assert match, f"line {number} is not valid udev syntax: {line!r}"
            pairs.append(match.groups())
            position = match.end()
            if position < len(line):
                assert line[position] == ",", f"line {number}: {line!r}"
                position += 1
        rules.append(pairs)
    return rules


def assert_udev_inert(text: str) -> None:
    rules = udev_keys(text)
    assert rules, text
    for pairs in rules:
        keys = {key for key, _, _ in pairs}
        assert keys <= SAFE_KEYS, f"unexpected keys {keys - SAFE_KEYS} in {pairs}"
        assert all("RUN" not in value and '"' not in value for _, _, value in pairs)


def _hostile_storage_host(path: Path) -> Path:
    """A SAS file system on an LV whose device-mapper name would close the udev match, over
    a SCSI disk whose wwid (supplied by the storage) does the same."""
    root = build_host(path, HostSpec(filesystems=[SasFs("sasdata", "/sasdata")]))
    builder = RootBuilder(path)
    builder.disk("sdx", wwid=f"naa.{HOSTILE_NAME}", scheduler="[none] mq-deadline")
    builder.dm("dm-9", HOSTILE_NAME.replace("/", "_"), ["sdx"], uuid="LVM-safeuuid0123")
    root.mount(f"/dev/mapper/{HOSTILE_NAME.replace('/', '_')}", "/saswork", "xfs", "rw,relatime")
    root.write_mounts()
    return path


def test_udev_rules_never_carry_hostile_names(tmp_path):
    root = _hostile_storage_host(tmp_path / "root")
    sets = ["--set", "sas_data_dirs=/sasdata", "--set", "sas_work_dirs=/saswork"]
    rules = tmp_path / "99.rules"
    assert main(["fix", "--format", "udev", "--root", str(root), "--all", *sets,
                 "-o", str(rules)]) == 0
    text = rules.read_text()
    assert_udev_inert(text)
    # The hostile LV still gets its settings, matched by its device-mapper UUID instead.
    assert 'ENV{DM_UUID}=="LVM-safeuuid0123"' in text
    assert "cannot carry safely" in text


def test_udev_rules_from_a_doctored_results_file(tmp_path):
    root = sas_host(tmp_path / "root")
    results = tmp_path / "r.json"
    main(["scan", "--root", str(root), "--set", "sas_data_dirs=/sasdata", "--quiet",
          "--json", str(results)])
    data = json.loads(results.read_text())
    for filesystem in data["storage"]:
        for layer in filesystem["layers"]:
            layer["dm_name"] = HOSTILE_NAME
            layer["dm_uuid"] = "a*b"  # a glob would match other devices
            layer["wwid"] = "\nRUN+=\"/bin/sh\""
            layer["device"] = 'sd"b'
    results.write_text(json.dumps(data))
    rules = tmp_path / "99.rules"
    status = main(["fix", "--format", "udev", "--from", str(results), "--all", "-o", str(rules)])
    assert status == 1 and not rules.exists()  # nothing safe to match: refused, said why


def test_bash_script_writes_only_inert_udev_rules(tmp_path):
    root = _hostile_storage_host(tmp_path / "root")
    script = tmp_path / "fix.sh"
    assert main(["fix", "--format", "bash", "--root", str(root), "--rule", "io_tuning_at_boot",
                 "--all", "--set", "sas_data_dirs=/sasdata", "--set", "sas_work_dirs=/saswork",
                 "-o", str(script)]) == 0
    completed = subprocess.run(["bash", str(script)], env={**os.environ,
                               "SASCHECK_ROOT": str(root)}, capture_output=True, text=True,
                               timeout=120)
    assert completed.returncode == 0, completed.stderr
    assert "cannot carry safely" in completed.stderr
    assert_udev_inert((root / "etc/udev/rules.d/99-sascheck-io.rules").read_text())


# -- fix --from: results files are untrusted ---------------------------------------------
@pytest.fixture
def results(tmp_path):
    root = sas_host(tmp_path / "root", thp_enabled="[always] madvise never",
                    read_ahead_kb=128)
    path = tmp_path / "results.json"
    main(["scan", "--root", str(root), "--set", "sas_data_dirs=/sasdata", "--quiet",
          "--json", str(path)])
    return path, root


@pytest.mark.parametrize("field, value", [
    (("profile",), f"default\ntouch {MARKER}"),
    (("role", "name"), "bare_metal; touch x"),
    (("values", "allowed_schedulers"), ["deadline\n[script]\nscript=/tmp/x.sh"]),
    (("values", "allowed_schedulers"), ["{{ lookup('pipe', 'touch x') }}"]),
    (("values", "read_ahead_min_kb"), "4096; touch x"),
    (("values", "unknown_value"), 1),
    (("rules",), "not a list"),
    (("storage",), 5),
])
def test_fix_from_refuses_malformed_results(results, tmp_path, capsys, field, value):
    path, _ = results
    data = json.loads(path.read_text())
    target = data
    for key in field[:-1]:
        target = target[key]
    target[field[-1]] = value
    path.write_text(json.dumps(data))
    for fmt in ("bash", "ansible", "tuned"):
        output = tmp_path / f"fix.{fmt}"
        assert main(["fix", "--format", fmt, "--from", str(path), "-o", str(output)]) == 1
        assert not output.exists()
        error = capsys.readouterr().err
        assert error.count("\n") == 1 and "Traceback" not in error, error


def test_deeply_nested_results_are_one_line(tmp_path, capsys):
    path = tmp_path / "deep.json"
    path.write_text('{"schema": "sascheck-result/1", "host": ' + "[" * 100000 + "]" * 100000 + "}")
    assert main(["fix", "--format", "bash", "--from", str(path), "-o", str(tmp_path / "x")]) == 1
    assert main(["report", str(path), "-o", str(tmp_path / "r.html")]) == 1
    assert "Traceback" not in capsys.readouterr().err


def _hostile_fix_input(root_values: dict[str, object]) -> FixInput:
    """A FixInput whose free-text fields hold commands, as if validation had been bypassed:
    the templates' own escaping must still keep them inert."""
    values = {"sas_data_dirs": ["/sasdata"], "sas_work_dirs": [], "sas_utilloc_dirs": [],
              "sas_config_files": [], "read_ahead_min_kb": 2048,
              "allowed_schedulers": ["mq-deadline", "none"], "allowed_fs_types": ["xfs"],
              "allowed_tuned_profiles": ["throughput-performance"],
              "storage_cache_protected": False, "dirty_ratio": 40, **root_values}
    return FixInput(host=f"evil\ntouch {MARKER}\u2028touch {MARKER}\x85touch {MARKER}",
                    role="bare_metal", profile=f"default\ntouch {MARKER}",
                    kernel="4.18.0", values=values,
                    rule_ids=("thp_disabled", "vm_dirty_ratio", "io_tuning_at_boot"))


def test_bash_comments_carry_no_commands(catalogue, tmp_path):
    root = sas_host(tmp_path / "root", dirty_ratio=20)
    script = tmp_path / "fix.sh"
    script.write_text(generate("bash", catalogue, _hostile_fix_input({})))
    completed = subprocess.run(["bash", str(script)], cwd=tmp_path, capture_output=True,
                               text=True, env={**os.environ, "SASCHECK_ROOT": str(root)},
                               timeout=120)
    assert completed.returncode == 0, completed.stderr
    assert not list(tmp_path.rglob(f"*{MARKER}*"))
    assert "changes made" in completed.stdout


def test_tuned_profile_has_only_its_own_sections(catalogue):
    text = generate("tuned", catalogue, _hostile_fix_input({}))
    sections = re.findall(r"^\[(\w+)\]", text, re.MULTILINE)
    assert sections == ["main", "cpu", "vm", "disk", "sysctl"]
    assert all(line.startswith("#") or MARKER not in line for line in text.splitlines())


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
