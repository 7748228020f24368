"""sascheck iotest the SAS way (issue 26): SAS's viya-perf-tool method by default (a writer
per physical core, 64 KiB blocks, buffered writes closed by fsync, the cache dropped before
reading), every file system at once with --concurrent, and runs too short to say anything
about the storage left notchecked."""

from __future__ import annotations

import json
import subprocess
import time
from contextlib import ExitStack

import pytest

from sascheck.iotest.command import Request, dry_run_text, make_plans
from sascheck.iotest.plan import GIB
from sascheck.scanner.facts import collect
from sascheck.scanner.parsers.simple import cpuinfo_physical_cores
from sascheck.scanner.sources.hostroot import HostRoot

from .support.hosts import sas_host
from .support.lab import LAB_HOST_ARGS, make_fs, prerequisites_missing
from .test_iotest import SASCHECK, assert_accounted, without_directory

lab_only = pytest.mark.skipif(bool(prerequisites_missing()),
                              reason=prerequisites_missing() or "")

# /proc/cpuinfo of a two-socket host with 32 cores a socket and two threads a core, as
# fs/proc's show_cpuinfo prints it on x86 (one block per logical CPU).
CPU_BLOCK = ("processor\t: {n}\nvendor_id\t: GenuineIntel\nphysical id\t: {package}\n"
             "siblings\t: 64\ncore id\t\t: {core}\ncpu cores\t: 32\n\n")
CPUINFO_64_CORES = "".join(CPU_BLOCK.format(n=n, package=n // 64, core=(n % 64) // 2)
                           for n in range(128))


def test_sas_method_plans_one_writer_per_physical_core_of_a_64_core_host(tmp_path):
    cores, basis = cpuinfo_physical_cores(CPUINFO_64_CORES)
    assert (cores, basis.startswith("physical")) == (64, True)
    root = sas_host(tmp_path / "root")
    facts = collect(HostRoot(root), {"sas_data_dirs": [], "sas_work_dirs": [],
                                     "sas_utilloc_dirs": [], "sas_config_files": []}, {},
                    "auto", [])
    facts.discovery.dirs = []  # only the directory named below, and no -BUFSIZE
    facts.discovery.bufsize = None
    target = tmp_path / "target"
    target.mkdir(mode=0o700)
    ram = 1 * GIB
    [plan] = make_plans(Request(dirs=[str(target)]), facts, cores, ram)
    assert (plan.method, plan.jobs, plan.jobs_source) == ("sas", 64, "one per physical core")
    assert (plan.block_bytes, plan.direct) == (64 * 1024, False)
    assert plan.total_bytes >= 2 * ram and plan.size_source == "2 x RAM in all"
    text = dry_run_text([plan])
    write, read = text.splitlines()[1:]
    assert {"--numjobs=64", "--bs=65536", "--direct=0", "--end_fsync=1"} <= set(write.split())
    assert "--invalidate=1" in read.split() and "--direct=0" in read.split()
    assert "2.0 x RAM" in text.splitlines()[0]
    # fio-direct keeps the earlier cap and block
    [direct] = make_plans(Request(dirs=[str(target)], method="fio-direct"), facts, cores, ram)
    assert (direct.jobs, direct.block_bytes, direct.direct) == (16, 256 * 1024, True)


def _iotest(*args: str) -> dict:
    done = subprocess.run([*SASCHECK, "iotest", "--quiet", *args, *LAB_HOST_ARGS, "--json", "-"],
                          capture_output=True, text=True, timeout=900)
    assert done.returncode in (0, 2), done.stderr
    return json.loads(done.stdout)


def _rule(result: dict) -> dict:
    return next(r for r in result["rules"] if r["id"] == "sas_fs_throughput")


@lab_only
@pytest.mark.live
def test_sas_method_runs_the_fio_jobs_its_dry_run_prints(tmp_path):
    """What a person copies from --dry-run is what sascheck runs, compared as data (the
    options, sizes and order); the rates are fio's bytes over each phase's whole time. How
    close they come to the same jobs run by hand is scripts/bench-iotest's figure."""
    with ExitStack() as stack:
        # direct_io: the loop device does not cache in the host's page cache, which
        # would serve the reads from memory whatever the test does
        fs = make_fs(stack, tmp_path, "saswork-sas", "xfs", "noatime", 700, direct_io=True)
        request = ("--dir", str(fs.mountpoint), "--size", "96M", "--jobs", "2",
                   "--set", "iotest_min_seconds=0")
        printed = subprocess.run([*SASCHECK, "iotest", *request, "--dry-run"],
                                 capture_output=True, text=True, timeout=300, check=True)
        copied = [line.split() for line in printed.stdout.splitlines()[1:]]
        began = time.monotonic()
        result = _iotest(*request)
        wall_seconds = time.monotonic() - began
    [measured] = result["measurements"]
    assert (measured["method"], measured["direct"], measured["block_bytes"]) == ("sas", False, 65536)
    assert "posix_fadvise DONTNEED" in measured["cache"]
    assert measured["ram_bytes"] == result["host"]["memory_kib"] * 1024
    assert [without_directory(argv) for argv in measured["fio_commands"]] == [
        without_directory(argv) for argv in copied]
    assert [argv[3] for argv in copied] == ["--rw=write", "--rw=read"]
    assert_accounted(measured, 2, 96 << 20, wall_seconds)
    assert _rule(result)["result"] in ("pass", "fail")


@lab_only
@pytest.mark.live
def test_concurrent_mode_runs_every_file_system_at_once_and_sums_them(tmp_path):
    with ExitStack() as stack:
        work = make_fs(stack, tmp_path, "saswork-c", "xfs", "noatime", 300)
        data = make_fs(stack, tmp_path, "sasdata-c", "ext4", "noatime", 300)
        result = _iotest("--dir", str(work.mountpoint), "--dir", str(data.mountpoint),
                         "--concurrent", "--size", "32M", "--jobs", "1",
                         "--set", "iotest_min_seconds=0")
    first, second = result["measurements"]
    assert first["concurrent"] and second["concurrent"]
    # every write ran while the other's did, then every read while the other's did
    for rw in ("write", "read"):
        (a0, a1), (b0, b1) = first["phases"][rw], second["phases"][rw]
        assert a0 < b1 and b0 < a1, rw
    assert max(first["phases"]["write"][1], second["phases"]["write"][1]) <= min(
        first["phases"]["read"][0], second["phases"]["read"][0]) + 0.5
    total = next(e for e in _rule(result)["evidence"]
                 if e["subject"] == "all file systems at once")
    write_sum = first["write"]["mb_s"] + second["write"]["mb_s"]
    assert total["result"] == "informational"
    assert total["actual"].startswith(f"write {write_sum:.0f} MB/s")


@lab_only
@pytest.mark.live
def test_a_run_too_short_to_measure_the_storage_is_notchecked(tmp_path):
    with ExitStack() as stack:
        fs = make_fs(stack, tmp_path, "sasutil-short", "ext4", "noatime", 200)
        result = _iotest("--dir", str(fs.mountpoint), "--size", "16M", "--jobs", "1")
    rule = _rule(result)
    assert rule["result"] == "notchecked"
    assert "too short to judge" in rule["message"] and "iotest_min_seconds (30 s)" in (
        rule["message"])


@lab_only
@pytest.mark.live
def test_an_interrupted_concurrent_run_removes_every_file_systems_files(tmp_path):
    import signal

    with ExitStack() as stack:
        # Sparse: only what fio writes before the signal takes disk space.
        systems = [make_fs(stack, tmp_path, f"big{n}", "xfs", "noatime", 24 * 1024)
                   for n in range(2)]
        before = [sorted(fs.mountpoint.rglob("*")) for fs in systems]
        process = subprocess.Popen(
            [*SASCHECK, "iotest", "--quiet", "--concurrent", "--size", "4G", "--jobs", "1",
             *[arg for fs in systems for arg in ("--dir", str(fs.mountpoint))]],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        deadline = time.monotonic() + 60
        while not all(any(p.stat().st_size for p in fs.mountpoint.glob(".sascheck-iotest-*/*"))
                      for fs in systems):
            if time.monotonic() > deadline:
                process.kill()
                pytest.fail("fio never started writing on both")
            time.sleep(0.02)
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=120)
        assert process.returncode == 130, stderr
        assert [sorted(fs.mountpoint.rglob("*")) for fs in systems] == before
