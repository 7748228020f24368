"""sascheck iotest: fio on loop-device xfs and ext4 file systems the tests make (as root),
refusals that leave nothing behind, and interrupts that remove the test files.

What sascheck measures is checked as data, never against a second timed run: the fio jobs
it runs are those a person runs by hand, and its figures are fio's bytes over fio's time (a
wrong unit or a per-job figure shows). Whether the rates agree with a bare fio run on this
machine is a benchmark's figure (scripts/bench-iotest): loop devices share the host's disk,
so two runs of one job differ by tens of percent when other work runs beside them.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from pathlib import Path

import pytest

from sascheck.iotest.fio import FioJob, json_documents, phase_result
from sascheck.iotest.plan import PlanError, parse_size
from sascheck.scanner.parsers.simple import cpuinfo_physical_cores
from sascheck.scanner.sources.hostroot import HostRoot
from sascheck.scanner.storage.sasdirs import configured_bufsize

from .support.hosts import sas_host
from .support.lab import LAB_HOST_ARGS, LabFs, make_fs, prerequisites_missing

SASCHECK = [sys.executable, "-m", "sascheck"]

# /proc/cpuinfo of a two-socket host, two cores per socket, two threads per core
# (fs/proc's show_cpuinfo on x86: one block per logical CPU, blank line between).
CPUINFO_BLOCK = """processor\t: {n}
vendor_id\t: GenuineIntel
model name\t: Intel(R) Xeon(R) Gold 6248 CPU @ 2.50GHz
physical id\t: {package}
siblings\t: 4
core id\t\t: {core}
cpu cores\t: 2
flags\t\t: fpu vme de pse tsc msr pae mce cx8 apic sep

"""
HYPERTHREADED = "".join(CPUINFO_BLOCK.format(n=n, package=n // 4, core=(n // 2) % 2)
                        for n in range(8))
# A guest whose vCPUs show no topology (s390x and some hypervisors print no core id).
NO_TOPOLOGY = "".join(f"processor\t: {n}\nvendor_id\t: IBM/S390\n\n" for n in range(3))


def test_physical_cores_count_hyperthreads_once():
    assert cpuinfo_physical_cores(HYPERTHREADED)[0] == 4
    cores, basis = cpuinfo_physical_cores(NO_TOPOLOGY)
    assert (cores, basis.split()[0]) == (3, "logical")


@pytest.mark.parametrize(("text", "size"), [("256k", 262144), ("4G", 4 << 30), ("512MiB", 512 << 20),
                                            ("65536", 65536)])
def test_sizes_parse_in_binary_units(text, size):
    assert parse_size(text) == size


@pytest.mark.parametrize("text", ["0", "-1", "1.5G", "4X", ""])
def test_bad_sizes_are_refused(text):
    with pytest.raises(PlanError):
        parse_size(text)


@pytest.mark.parametrize(("local", "expected"), [
    ("-BUFSIZE 128K\n", (131072, "sasv9_local.cfg:1")),
    ("-bufsize=64k\n-BUFSIZE 0\n", None),  # 0: SAS chooses, so sascheck's default applies
    ("-WORK /saswork\n", None),
])
def test_bufsize_comes_from_the_sas_config_chain(tmp_path, local, expected):
    root = sas_host(tmp_path / "root", sas_local_cfg=local)
    found = configured_bufsize(HostRoot(str(tmp_path / "root")), {})
    if expected is None:
        assert found is None
    else:
        assert found is not None and found[0] == expected[0]
        assert found[1].endswith(expected[1]), found
    assert root  # the builder made the host


def test_fio_status_stream_yields_every_document():
    status = {"fio version": "fio-3.33", "jobs": [{"error": 0, "write": {
        "io_bytes": 1, "bw_bytes": 1, "iops": 1, "runtime": 1, "clat_ns": {}}}]}
    text = "fio: a notice outside the JSON\n" + (json.dumps(status, indent=2) + "\n") * 3
    documents = list(json_documents(iter(text.splitlines(keepends=True))))  # type: ignore[arg-type]
    assert len(documents) == 3
    assert phase_result(documents[-1], "write").bytes_total == 1


def _fio_job(io_bytes: int, runtime_ms: int) -> dict:
    """One job's write figures as fio's JSON writes them (bw_bytes and iops over its own
    runtime, show_thread_status_json in fio's stat.c)."""
    return {"error": 0, "write": {
        "io_bytes": io_bytes, "bw_bytes": io_bytes * 1000 // runtime_ms,
        "iops": io_bytes / 262144 * 1000 / runtime_ms, "runtime": runtime_ms, "clat_ns": {}}}


def test_the_rate_of_jobs_that_end_apart_is_fios_group_aggregate():
    """Two direct jobs of 96 MiB on a loop device, one done in 93 ms and one in 447 ms (a CI
    run's figures): the group moved 192 MiB in 447 ms, 450 MB/s, as fio's "Run status group"
    line says; the sum of the two jobs' own rates (1,307 MB/s) counts the short job's burst
    as if it lasted the phase."""
    document = {"jobs": [_fio_job(96 << 20, 447), _fio_job(96 << 20, 93)]}
    phase = phase_result(document, "write")
    assert phase.runtime_ms == 447
    assert phase.mb_s == pytest.approx((192 << 20) / 0.447 / 1e6)
    assert phase.iops == pytest.approx(768 / 0.447)


# -- live: loop devices ----------------------------------------------------------------

lab_only = pytest.mark.skipif(prerequisites_missing() is not None and not os.environ.get("CI"),
                              reason=prerequisites_missing() or "")


@pytest.fixture
def lab(tmp_path):
    with ExitStack() as stack:
        yield stack, tmp_path


def _iotest(*args: str, env: dict[str, str] | None = None,
            user: str | None = None) -> subprocess.CompletedProcess[str]:
    prefix = ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups"] if user else []
    return subprocess.run([*prefix, *SASCHECK, "iotest", "--quiet", *args, *LAB_HOST_ARGS], capture_output=True,
                          text=True, env={**os.environ, **(env or {})}, timeout=600)


def _listing(fs: LabFs) -> list[str]:
    return sorted(str(p.relative_to(fs.mountpoint)) for p in fs.mountpoint.rglob("*"))


def without_directory(argv: list[str]) -> list[str]:
    """A fio command as data, less what differs from run to run: the program's path and the
    private directory (sascheck runs fio inside it; a person names a directory)."""
    return [arg for arg in argv[1:] if not arg.startswith("--directory=")]


def assert_accounted(measured: dict, jobs: int, size: int, wall_seconds: float) -> None:
    """The figures are fio's own, in the right units, with no clock beside fio's: every job
    moved its bytes, each phase lasted no longer than the whole command, and the rate is
    those bytes over that time (fio's group aggregate over the longest job with direct I/O;
    the SAS method's whole phase when buffered)."""
    for rw in ("write", "read"):
        phase = measured[rw]
        assert phase["bytes"] == jobs * size, rw
        seconds = phase["runtime_ms"] / 1000
        assert 0 < seconds <= wall_seconds, (rw, seconds, wall_seconds)
        overall = phase["bytes"] / seconds / 1e6
        assert abs(phase["mb_s"] - overall) <= overall * 0.01 + 0.01, (rw, phase)


@lab_only
@pytest.mark.live
@pytest.mark.parametrize("fstype", ["xfs", "ext4"])
def test_measures_what_fio_measures(lab, fstype):
    stack, base = lab
    fs = make_fs(stack, base, f"saswork-{fstype}", fstype, "noatime", 700, direct_io=True)
    (fs.mountpoint / "keep").write_text("not sascheck's\n")
    before = _listing(fs)
    result_file = base / "iotest.json"
    began = time.monotonic()
    done = _iotest("--dir", str(fs.mountpoint), "--size", "96M", "--jobs", "2",
                   "--method", "fio-direct", "--set", "iotest_min_seconds=0",
                   "--json", str(result_file))
    wall_seconds = time.monotonic() - began
    assert done.returncode in (0, 2), done.stderr
    result = json.loads(result_file.read_text())
    [measured] = result["measurements"]
    assert (measured["mountpoint"], measured["fstype"]) == (str(fs.mountpoint), fstype)
    assert (measured["jobs"], measured["block_bytes"], measured["size_bytes"]) == (2, 262144, 96 << 20)
    assert measured["direct"] is True
    write_argv = measured["fio_commands"][0]
    assert {"--rw=write", "--bs=262144", "--numjobs=2", "--direct=1", f"--size={96 << 20}"} <= set(write_argv)
    assert measured["write"]["bytes"] == measured["read"]["bytes"] == 2 * (96 << 20)
    rule = next(r for r in result["rules"] if r["id"] == "sas_fs_throughput")
    assert rule["result"] in ("pass", "fail") and rule["evidence"][0]["subject"].startswith(str(fs.mountpoint))
    # The test files are gone; what was there stays.
    assert _listing(fs) == before

    # The jobs are those a person runs by hand (SAS paper 479-2013's fio, as the benchmark
    # runs it), compared as data; whether the rates agree is scripts/bench-iotest's figure.
    by_hand = [FioJob("DIR", rw, 256 * 1024, 96 << 20, 2).argv() for rw in ("write", "read")]
    assert [without_directory(argv) for argv in measured["fio_commands"]] == [
        without_directory(argv) for argv in by_hand]
    assert_accounted(measured, 2, 96 << 20, wall_seconds)


@lab_only
@pytest.mark.live
def test_refusals_say_one_line_and_leave_nothing(lab):
    stack, _ = lab
    # A directory "nobody" can reach (pytest's own are private to root).
    base = Path(tempfile.mkdtemp(prefix="sascheck-lab-"))
    stack.callback(shutil.rmtree, base, ignore_errors=True)
    base.chmod(0o755)
    small = make_fs(stack, base, "small", "ext4", "noatime", 48)
    readonly = make_fs(stack, base, "readonly", "ext4", "ro", 48)
    private = small.mountpoint / "private"
    private.mkdir(mode=0o755)  # root's: others may enter, not write
    before = {fs.name: _listing(fs) for fs in (small, readonly)}
    cases = {
        "no space": (["--dir", str(small.mountpoint), "--size", "64M", "--jobs", "1"], {}, None),
        "read-only": (["--dir", str(readonly.mountpoint), "--size", "1M"], {}, None),
        "not writable": (["--dir", str(private), "--size", "1M"], {}, "65534"),  # nobody
        "no fio": (["--dir", str(small.mountpoint), "--size", "1M", "--jobs", "1"],
                   {"PATH": os.path.dirname(sys.executable)}, None),
    }
    expected = {"no space": "twice the test size", "read-only": "read-only file system",
                "not writable": "not writable by this user", "no fio": "fio is not installed"}
    for name, (args, env, user) in cases.items():
        done = _iotest(*args, env=env, user=user)
        assert done.returncode == 1, (name, done.stdout, done.stderr)
        lines = done.stderr.strip().splitlines()
        assert len(lines) == 1 and expected[name] in lines[0], (name, done.stderr)
        assert "Traceback" not in done.stderr
        assert {fs.name: _listing(fs) for fs in (small, readonly)} == before, name


def _interactive_signals() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


@lab_only
@pytest.mark.live
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupted_run_removes_its_files(lab, signum):
    stack, base = lab
    # Sparse: only what fio writes before the signal takes disk space.
    fs = make_fs(stack, base, "big", "xfs", "noatime", 24 * 1024)
    (fs.mountpoint / "keep").write_text("not sascheck's\n")
    before = _listing(fs)
    # As an interactive run gets it: a job started in the background of a script (or by a
    # CI runner) inherits SIGINT ignored, and Python then keeps ignoring it (Ctrl-C is lost).
    process = subprocess.Popen([*SASCHECK, "iotest", "--quiet", "--dir", str(fs.mountpoint),
                                "--size", "4G", "--jobs", "2"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               preexec_fn=_interactive_signals)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        files = [p for p in fs.mountpoint.glob(".sascheck-iotest-*/*") if p.stat().st_size]
        if files:
            break
        time.sleep(0.02)
    else:
        process.kill()
        pytest.fail("fio never started writing")
    process.send_signal(signum)
    _, stderr = process.communicate(timeout=120)
    assert process.returncode == 130, stderr
    assert _listing(fs) == before


@lab_only
@pytest.mark.live
def test_dry_run_prints_the_jobs_and_writes_nothing(lab):
    stack, base = lab
    fs = make_fs(stack, base, "dry", "ext4", "noatime", 96)
    before = _listing(fs)
    done = _iotest("--dir", str(fs.mountpoint), "--size", "8M", "--jobs", "3", "--dry-run")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith(f"{fs.mountpoint} (ext4 on {fs.device})")
    assert "needs 48 MiB free" in lines[0]
    assert [line.split()[3] for line in lines[1:]] == ["--rw=write", "--rw=read"]
    assert all("--numjobs=3" in line and f"--size={8 << 20}" in line for line in lines[1:])
    assert _listing(fs) == before


@lab_only
@pytest.mark.live
def test_benchmark_script_runs_and_prints_the_overhead():
    script = Path(__file__).resolve().parent.parent / "scripts" / "bench-iotest"
    done = subprocess.run([sys.executable, str(script), "--size", "16M", "--runs", "1"],
                          capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    assert "sascheck overhead over bare fio:" in done.stdout
    for method in ("fio-direct", "SAS method"):  # both rates and their ratio, per direction
        assert re.search(rf"^agreement, {method}: .* write [0-9.]+, read [0-9.]+$", done.stdout, re.M), method
