"""sascheck iotest: fio on loop-device xfs and ext4 file systems the tests make (as root),
refusals that leave nothing behind, and interrupts that remove the test files.

Agreement with a bare fio run is judged within 0.6 to 1.6 of it (TOLERANCE, each
direction; up to three bare runs): loop devices over a file share the host's disk, so two
runs of the same job differ by tens of percent; a wrong unit (KiB/s for bytes/s, per-job for
total) is off by 1,000 or N. The SAS method's agreement: tests/test_iotest_method.py.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from contextlib import ExitStack
from pathlib import Path

import pytest

from sascheck.iotest.fio import FioJob, json_documents, phase_result
from sascheck.iotest.plan import PlanError, parse_size
from sascheck.scanner.hostroot import HostRoot
from sascheck.scanner.parsers.simple import cpuinfo_physical_cores
from sascheck.scanner.sasdirs import configured_bufsize

from .hosts import sas_host
from .lab import LabFs, make_fs, prerequisites_missing

TOLERANCE = (0.6, 1.6)  # ours / bare fio
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
    return subprocess.run([*prefix, *SASCHECK, "iotest", "--quiet", *args], capture_output=True,
                          text=True, env={**os.environ, **(env or {})}, timeout=600)


def _listing(fs: LabFs) -> list[str]:
    return sorted(str(p.relative_to(fs.mountpoint)) for p in fs.mountpoint.rglob("*"))


def _bare_fio(directory: Path, rw: str, size: int, jobs: int) -> float:
    """MB/s of the same job run by hand, as SAS paper 479-2013 runs fio."""
    job = FioJob(str(directory), rw, 256 * 1024, size, jobs)
    done = subprocess.run(job.argv(), capture_output=True, text=True, check=True)
    documents = list(json_documents(iter(done.stdout.splitlines(keepends=True))))  # type: ignore[arg-type]
    return phase_result(documents[-1], rw).mb_s


@lab_only
@pytest.mark.live
@pytest.mark.parametrize("fstype", ["xfs", "ext4"])
def test_measures_what_fio_measures(lab, fstype):
    stack, base = lab
    fs = make_fs(stack, base, f"saswork-{fstype}", fstype, "noatime", 700, direct_io=True)
    (fs.mountpoint / "keep").write_text("not sascheck's\n")
    before = _listing(fs)
    result_file = base / "iotest.json"
    done = _iotest("--dir", str(fs.mountpoint), "--size", "96M", "--jobs", "2",
                   "--method", "fio-direct", "--set", "iotest_min_seconds=0",
                   "--json", str(result_file))
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

    def ours_again() -> dict:
        again = _iotest("--dir", str(fs.mountpoint), "--size", "96M", "--jobs", "2",
                        "--method", "fio-direct", "--set", "iotest_min_seconds=0",
                        "--json", str(result_file))
        assert again.returncode in (0, 2), again.stderr
        return json.loads(result_file.read_text())["measurements"][0]

    assert_agrees(measured, lambda scratch: (_bare_fio(scratch, "write", 96 << 20, 2),
                                             _bare_fio(scratch, "read", 96 << 20, 2)),
                  fs.mountpoint, ours_again)


def disagreement(measured: dict, by_hand: Callable[[Path], tuple[float, float]],
                 under: Path) -> list[tuple[float, float]]:
    """The by-hand rates when ours are not within TOLERANCE of any of them, else []. A loop
    device shares the machine's disk (another process's I/O can halve one run): up to three
    runs by hand, each writing new files as ours did (rewriting allocated blocks is faster);
    agreement with any of them is agreement with fio."""
    theirs: list[tuple[float, float]] = []
    for attempt in range(3):
        scratch = under / f"by-hand{attempt}"
        scratch.mkdir()
        theirs.append(by_hand(scratch))
        shutil.rmtree(scratch)
        if all(TOLERANCE[0] <= measured[rw]["mb_s"] / rate <= TOLERANCE[1]
               for rw, rate in zip(("write", "read"), theirs[-1])):
            return []
    return theirs


def assert_agrees(measured: dict, by_hand: Callable[[Path], tuple[float, float]],
                  under: Path, ours_again: Callable[[], dict] | None = None) -> None:
    """Ours agrees with bare fio. Our own run may be the one another process's I/O
    disturbed (a burst into a cache halves or doubles one run): where ``ours_again`` is
    given, one more run of ours against new runs by hand; a real difference fails both."""
    theirs = disagreement(measured, by_hand, under)
    if theirs and ours_again is not None:
        measured = ours_again()
        theirs = disagreement(measured, by_hand, under)
    if theirs:
        pytest.fail(f"sascheck {measured['write']['mb_s']} / {measured['read']['mb_s']} MB/s, "
                    f"by hand {theirs}")


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


@lab_only
@pytest.mark.live
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_an_interrupted_run_removes_its_files(lab, signum):
    stack, base = lab
    # Sparse: only what fio writes before the signal takes disk space.
    fs = make_fs(stack, base, "big", "xfs", "noatime", 24 * 1024)
    (fs.mountpoint / "keep").write_text("not sascheck's\n")
    before = _listing(fs)
    process = subprocess.Popen([*SASCHECK, "iotest", "--quiet", "--dir", str(fs.mountpoint),
                                "--size", "4G", "--jobs", "2"],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
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
