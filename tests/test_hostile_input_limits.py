"""Host data is never code, round 2 (issue 21): a scan of one host must finish, and bad
input is one line or an `error` verdict, never a traceback.

Each test hands sascheck's command line (the real consumer) the hostile input under a hang
guard that only turns a hang into a failure; races run a racer thread for a bounded time
against the kernel's real link semantics."""

from __future__ import annotations

import contextlib
import gzip
import io
import json
import os
import subprocess
import sys
import tarfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from sascheck.scanner.sources.snapshot import SnapshotError
from sascheck.scanner.sources.tree_copy import MAX_DEPTH, copy_tree

from .support.boot_samples import lvm_backup
from .support.hosts import sas_host
from .support.sosbuilder import sosreport_tree

HANG_GUARD = 120  # seconds
RACE_SECONDS = 3.0


def _sascheck(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "sascheck", *args], capture_output=True,
                          text=True, timeout=HANG_GUARD, input=stdin)


def _scan(*source: str) -> dict[str, dict]:
    completed = _sascheck("scan", *source, "--quiet", "--json", "-",
                          "--set", "sas_data_dirs=/sasdata")
    assert "Traceback" not in completed.stderr, completed.stderr[-2000:]
    assert completed.stdout, completed.stderr
    return {r["id"]: r for r in json.loads(completed.stdout)["rules"]}


def _one_line_refusal(completed: subprocess.CompletedProcess[str], words: str) -> None:
    assert completed.returncode == 1, completed.stderr  # EXIT_USAGE
    assert "Traceback" not in completed.stderr
    assert words in completed.stderr
    assert len(completed.stderr.strip().splitlines()) == 1, completed.stderr


def _sos(tmp_path: Path, **changes) -> Path:
    return sosreport_tree(sas_host(tmp_path / "host", **changes), tmp_path / "sos")


# --- hangs --------------------------------------------------------------------------------

def test_a_long_run_of_lsblk_branches_is_not_backtracked(tmp_path):
    """120 KB of "|-" in plain lsblk's output took minutes in one backtracking regex."""
    top = _sos(tmp_path, tuned_active="throughput-performance")
    tree = top / "sos_commands/block/lsblk"
    tree.write_text(tree.read_text() + "|-" * 60_000 + "\n")
    rules = _scan("--sosreport", str(top))
    assert rules["thp_disabled"]["result"] in ("pass", "fail")


def test_a_skipped_member_that_declares_40_gb_is_not_decompressed(tmp_path):
    """A small compressed sosreport whose skipped var/log member declares 40 GB: its declared
    size counts against the limits before the archive is read on, so sascheck stops at its
    header. (The data is cut short here: reading on would say "unexpected end of data".)"""
    top = _sos(tmp_path)
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w") as tar:
        log = tarfile.TarInfo(f"{top.name}/var/log/messages")
        log.size = 40 << 30
        tar.add(top, arcname=top.name)
    header = log.tobuf(tarfile.GNU_FORMAT)
    body = raw.getvalue().rstrip(b"\0")
    body += b"\0" * (-len(body) % 512) + header + b"\0" * (1 << 20)
    archive = tmp_path / "sosreport.tar.gz"
    archive.write_bytes(gzip.compress(body))
    completed = _sascheck("scan", "--sosreport", str(archive), "--quiet", "--json", "-")
    _one_line_refusal(completed, "declare more than 4 GiB in all")


def test_a_tuned_include_chain_of_1500_profiles_ends_at_the_limit(tmp_path):
    profiles = {f"p{i}": f"[main]\ninclude=p{i + 1}\n\n[vm]\ntransparent_hugepages=never\n"
                for i in range(1500)}
    root = sas_host(tmp_path / "root", tuned_active="p0", tuned_custom=profiles)
    rules = _scan("--root", str(root))
    assert rules["tuned_profile"]["result"] in ("fail", "error")
    assert "more than 32 profiles" in json.dumps(rules["tuned_profile"])


def test_a_1500_deep_device_mapper_stack_is_walked_without_recursion(tmp_path):
    """lsblk -O -P of a sosreport saying SAS DATA's LV sits on 1,500 stacked dm devices."""
    top = _sos(tmp_path)
    pairs = top / "sos_commands/block/lsblk_-O_-P"
    lines = pairs.read_text().splitlines()
    data = next(line for line in lines if 'MOUNTPOINT="/sasdata"' in line)
    kname = data.split('KNAME="')[1].split('"')[0]
    lines = [line.replace('PKNAME="', 'PKNAME="dm-5000" OLD="') if line == data else line
             for line in lines]
    lines += [f'NAME="deep{i}" KNAME="dm-{5000 + i}" MAJ:MIN="253:{5000 + i}" TYPE="dm" '
              f'PKNAME="dm-{5001 + i}"' for i in range(1500)]
    pairs.write_text("\n".join(lines) + "\n")
    rules = _scan("--sosreport", str(top))
    assert kname.startswith("dm-")
    below = [e["device"] for e in rules["io_scheduler"]["evidence"]]
    assert "dm-6499" in below  # the bottom of the stack was reached


# --- tracebacks ---------------------------------------------------------------------------

def test_5000_digit_numbers_in_a_bls_version_and_sysctl_are_values_not_tracebacks(tmp_path):
    top = _sos(tmp_path)
    sysctl = top / "sos_commands/kernel/sysctl_-a"
    sysctl.write_text(sysctl.read_text().replace("vm.dirty_ratio = ",
                                                 "vm.dirty_ratio = " + "9" * 5000 + "#"))
    rules = _scan("--sosreport", str(top))
    assert rules["vm_dirty_ratio"]["result"] == "error"
    version = "4.18.0-" + "1" * 5000 + ".el8.x86_64"
    root = sas_host(tmp_path / "bls", extra_files={
        f"/boot/loader/entries/0123456789abcdef-{version[:40]}.conf":
            f"title forged\nversion {version}\nlinux /vmlinuz\noptions root=/dev/sda\n"})
    rules = _scan("--root", str(root))
    assert rules["thp_disabled_at_boot"]["result"] in ("pass", "fail")


def test_a_unicode_digit_in_an_lvm_backup_is_not_a_read_ahead(tmp_path):
    """"read_ahead = ²": str.isdigit() says yes, int() says no. Not a number LVM
    wrote, so no read-ahead is read from it (the LV keeps the kernel's default)."""
    backup = lvm_backup("sasvg", {"sasdata": 8192, "saswork": 8192, "sasutil": 8192})
    root = sas_host(tmp_path / "root", tuned_active="balanced", extra_files={
        "/etc/lvm/backup/sasvg": backup.replace("read_ahead = 8192", "read_ahead = \u00b2", 1)})
    rules = _scan("--root", str(root))
    assert rules["io_tuning_at_boot"]["result"] == "fail"


def test_1100_nested_directories_in_an_unpacked_sosreport_are_refused_in_one_line(tmp_path):
    top = _sos(tmp_path)
    deep = top / "etc"
    for _ in range(1100):  # one at a time: pathlib's mkdir(parents=True) recurses too
        deep = deep / "d"
        deep.mkdir()
    try:
        completed = _sascheck("scan", "--sosreport", str(top), "--quiet", "--json", "-")
        _one_line_refusal(completed, f"nested more than {MAX_DEPTH} deep")
    finally:  # pytest's own clean-up (shutil.rmtree) recurses per level
        subprocess.run(["rm", "-rf", str(top / "etc")], check=True)


# --- copying an unpacked sosreport its owner races -------------------------------------------

def _race(action: Callable[[], None]) -> threading.Event:
    stop = threading.Event()

    def run() -> None:
        while not stop.is_set():
            action()

    threading.Thread(target=run, daemon=True).start()
    return stop


def test_copying_an_unpacked_sosreport_never_follows_a_raced_link(tmp_path):
    """The tree's owner flips a file into a link to a root-only secret, a directory into a
    link to the secret's directory, and a file into a link to /dev/zero, as fast as it can,
    while sascheck copies the tree again and again: the secret is never in a copy and no
    copy exceeds what the tree holds."""
    secret_dir = tmp_path / "root-only"
    secret_dir.mkdir(mode=0o700)
    (secret_dir / "hostname").write_text("SECRET-FIRST-LINE\n")
    tree = tmp_path / "tree"
    (tree / "etc").mkdir(parents=True)
    (tree / "etc/hostname").write_text("host\n")
    hostname, etc, big = tree / "hostname", tree / "etc", tree / "big"

    def flip() -> None:
        for path, target, content in ((hostname, secret_dir / "hostname", "host\n"),
                                      (big, Path("/dev/zero"), "small\n")):
            spare = path.with_name(path.name + ".new")
            spare.unlink(missing_ok=True)
            spare.symlink_to(target)
            os.replace(spare, path)
            spare.write_text(content)
            os.replace(spare, path)
        os.rename(etc, tree / "etc.old")
        etc.symlink_to(secret_dir)
        etc.unlink()
        os.rename(tree / "etc.old", etc)

    stop = _race(flip)
    copies = 0
    try:
        deadline = time.monotonic() + RACE_SECONDS
        while time.monotonic() < deadline:
            copy = tmp_path / f"copy{copies}"
            with contextlib.suppress(SnapshotError):  # refused mid-copy: fine
                copy_tree(str(tree), str(copy), lambda relative: "/" + relative)
            copies += 1
            for path in copy.rglob("*"):
                if path.is_file() and not path.is_symlink():
                    assert b"SECRET" not in path.read_bytes(), path
                    assert path.stat().st_size < 64, path
    finally:
        stop.set()
    assert copies > 20


# --- results files --------------------------------------------------------------------------

def _result(tmp_path: Path, name: str = "host.json", **changes) -> dict:
    path = tmp_path / name
    if not path.exists():
        root = sas_host(tmp_path / f"root-{name}")
        completed = _sascheck("scan", "--root", str(root), "--quiet", "--json", str(path),
                              "--set", "sas_data_dirs=/sasdata")
        assert completed.returncode in (0, 1), completed.stderr
    data = json.loads(path.read_text())
    data.update(changes)
    return data


@pytest.mark.parametrize("number", ["NaN", "Infinity", "-Infinity", "1e999"])
def test_a_non_finite_number_in_a_results_file_is_refused(tmp_path, number):
    text = json.dumps(_result(tmp_path)).replace('"schema"', f'"extra": {number}, "schema"', 1)
    hostile = tmp_path / "hostile.json"
    hostile.write_text(text)
    completed = _sascheck("report", str(hostile), "-o", str(tmp_path / "page.html"))
    _one_line_refusal(completed, "not valid JSON")
    assert not (tmp_path / "page.html").exists()


def test_millions_of_empty_lists_are_refused_before_they_are_built(tmp_path):
    data = _result(tmp_path)
    text = json.dumps(data).replace('"values": {', '"values": {"x": [' + "[]," * 3_000_000
                                    + '[]], ', 1)
    hostile = tmp_path / "hostile.json"
    hostile.write_text(text)
    completed = _sascheck("report", str(hostile), "-o", str(tmp_path / "page.html"))
    _one_line_refusal(completed, "lists and objects")


def test_diff_flags_a_forged_newer_file_and_a_second_result_for_one_host(tmp_path):
    """The host regressed (THP now fails), and a forged all-pass copy of the baseline sits
    beside the real result. Dated in the future, it is the one compared, but diff calls it
    suspect and exits 2; dated just after the real scan, diff still lists the host's two
    results so that a reader sees the regression may be masked."""
    old = _result(tmp_path)
    baseline = tmp_path / "old"
    baseline.mkdir()
    (baseline / "host.json").write_text(json.dumps(old))
    regressed = json.loads(json.dumps(old))
    for rule in regressed["rules"]:
        if rule["id"] == "thp_disabled":
            rule["result"] = "fail"
    new = tmp_path / "new"
    new.mkdir()
    (new / "real.json").write_text(json.dumps(regressed))
    (new / "forged.json").write_text(json.dumps({**old, "scanned_at": "2099-01-01T00:00:00Z"}))
    completed = _sascheck("diff", str(baseline), str(new), "--json", "-", "--quiet")
    report = json.loads(completed.stdout)
    assert completed.returncode == 2  # EXIT_FINDINGS: something is worse
    assert not [c for c in report["changes"] if c["rule"] == "thp_disabled"]  # masked...
    suspect = {(c["old"], c["new"], c["worse"]) for c in report["changes"]
               if c["field"] == "suspect"}
    assert ("scanned_at in the new results", "in the future", True) in suspect  # ...but caught
    assert ("2 results in the new results",
            "the latest scanned_at is compared; check the others", False) in suspect


# --- round 3 (issue 34): inputs that held a scan-snapshots worker for minutes -------------

def test_a_400_kb_lsblk_pairs_line_is_refused_not_backtracked(tmp_path):
    """_PAIR over a 400 KB run of column-name letters is quadratic: the line is a problem."""
    top = _sos(tmp_path, tuned_active="throughput-performance")
    pairs = next((top / "sos_commands/block").glob("lsblk_-*P*"))
    pairs.write_text(pairs.read_text() + "A" * 400_000 + "\n")
    rules = _scan("--sosreport", str(top))
    assert rules["thp_disabled"]["result"] in ("pass", "fail")


def test_a_200000_space_configobj_value_is_an_error_not_a_hang(tmp_path):
    """tuned before 2.17 parsed profiles with ConfigObj, whose value expression sascheck
    mirrors; 'a', 200,000 spaces and 'b' backtracked quadratically in it."""
    from .support.boot_samples import tuned_version_file

    profile = "[main]\nsummary=x\n\n[vm]\ntransparent_hugepages=a" + " " * 200_000 + "b\n"
    root = sas_host(tmp_path / "root", tuned_active="evil", tuned_custom={"evil": profile},
                    extra_files=tuned_version_file((2, 10, 0), "python3.6"))
    rules = _scan("--root", str(root))
    assert rules["tuned_profile"]["result"] == "fail"  # tuned applies no profile it cannot parse
    assert "a value longer than 4096 characters at line 5" in json.dumps(rules["tuned_profile"])


def test_a_long_cpuinfo_regex_over_a_4_mib_cpuinfo_is_refused_not_matched(tmp_path):
    """RE2's DFA runs out of memory on such a pair and its NFA takes pattern x subject steps
    (hours here); 3,000 units with the same expression are matched once."""
    units = "\n[vm.long]\ntype=vm\ncpuinfo_regex=" + "(?:a|b|c|d)" * 350 + "\n"
    units += "transparent_hugepages=never\n"
    units += "".join(f"\n[vm.u{i}]\ntype=vm\ncpuinfo_regex=dcba\n" for i in range(3000))
    root = sas_host(tmp_path / "root", tuned_active="evil",
                    tuned_custom={"evil": "[main]\nsummary=hostile\n" + units},
                    bls_options="root=/dev/sda ro", grub_cmdline="",
                    extra_files={"/proc/cpuinfo": "abcd" * (1 << 20)})
    thp = _scan("--root", str(root))["thp_disabled_at_boot"]
    assert "too costly to match" in json.dumps(thp)


def test_a_superscript_digit_in_dmsetup_table_is_not_a_number(tmp_path):
    """'²'.isdigit() is True and int('²') raises: a feature count of '²' in dmsetup's table
    (as round 2's LVM case) is a problem of that map, not a traceback."""
    table = ("mpatha: 0 2097152 multipath ² queue_if_no_path 1 alua 2 1 round-robin 0 2 1 "
             "8:16 1 8:32 1\n")
    root = sas_host(tmp_path / "root", extra_files={"/run/sascheck/dmsetup-table": table})
    rules = _scan("--root", str(root))
    assert rules["multipath_all_paths_active"]["result"] in (
        "notapplicable", "notchecked", "error", "pass", "fail")
