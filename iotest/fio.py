"""fio as sascheck runs it: one job description, its command line, and its JSON read back.

Each phase (sequential write, then sequential read of the same files) is one fio run with
``--output-format=json``; ``--status-interval`` makes fio print the same JSON document
every second while it runs, which drives the progress bar. The last document is the result.
"""

from __future__ import annotations

import contextlib
import dataclasses
import json
import shutil
import subprocess
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import IO, Any

from ..rules.errors import UserInputError

# The files fio lays out are named <job name>.<job number>.<file number>: one name for both
# phases makes the read phase read what the write phase wrote.
JOB_NAME = "sascheck"
PERCENTILES = ("50.000000", "95.000000", "99.000000", "99.900000")
INSTALL_HINT = ("fio is not installed: install it (RHEL: dnf install fio or yum install fio; "
                "Debian and Ubuntu: apt-get install fio) and run again")


class FioError(UserInputError):
    """fio is missing, failed, or wrote something that is not its JSON."""


@dataclass(frozen=True)
class FioJob:
    directory: str
    rw: str  # "write" | "read"
    block_bytes: int
    size_bytes: int  # per job (file)
    jobs: int
    direct: bool = True
    runtime_s: int | None = None  # stop early after this long (the default-size runs)

    def argv(self, fio: str = "fio", in_cwd: bool = False) -> list[str]:
        """The command line; ``in_cwd``: without --directory, for a run whose working
        directory is the test directory (fio splits --directory at ':', so a SAS directory
        named "/P/v:/P/link" would send files to /P/v; and a name can be swapped by a racer,
        a working directory cannot)."""
        where = [] if in_cwd else [f"--directory={_fio_escaped(self.directory)}"]
        argv = [fio, f"--name={JOB_NAME}", *where, f"--rw={self.rw}",
                f"--bs={self.block_bytes}", f"--size={self.size_bytes}",
                f"--numjobs={self.jobs}", f"--direct={int(self.direct)}", "--ioengine=psync",
                "--output-format=json", "--status-interval=1"]
        if self.rw == "write":
            argv.append("--end_fsync=1")  # the data reached the disk, not only the cache
        else:
            # Drop the files' cached pages first (posix_fadvise DONTNEED; fio's default,
            # named so the command says it): a read then comes from the storage.
            argv.append("--invalidate=1")
        if self.runtime_s:
            argv.append(f"--runtime={self.runtime_s}")
        return argv


def _fio_escaped(directory: str) -> str:
    """A directory as fio's --directory reads it: ':' separates directories unless the
    character before it is a backslash, which fio then drops (get_next_name in fio's
    options.c; a backslash anywhere else is kept as it is)."""
    return directory.replace(":", "\\:")


@dataclass(frozen=True)
class PhaseResult:
    rw: str
    bytes_total: int
    bytes_per_job: tuple[int, ...]
    bandwidth_bytes_s: float
    iops: float
    runtime_ms: int
    latency_us: dict[str, float] = field(default_factory=dict)  # percentile -> microseconds

    @property
    def mb_s(self) -> float:
        return self.bandwidth_bytes_s / 1_000_000

    def timed(self, seconds: float) -> PhaseResult:
        """The rate over the phase's whole time, from fio's start to its exit, as SAS's tests
        time dd under /usr/bin/time: the closing fsync (when buffered writes reach the
        storage) is inside whatever fio's own accounting counts."""
        return dataclasses.replace(self, bandwidth_bytes_s=self.bytes_total / seconds,
                                   runtime_ms=round(seconds * 1000))

    def to_dict(self) -> dict[str, Any]:
        return {"rw": self.rw, "mb_s": round(self.mb_s, 2), "iops": round(self.iops, 1),
                "bytes": self.bytes_total, "runtime_ms": self.runtime_ms,
                "latency_us": {key: round(value, 1) for key, value in self.latency_us.items()}}


def fio_command() -> str:
    found = shutil.which("fio")
    if not found:
        raise FioError(INSTALL_HINT)
    return found


def fio_version(fio: str) -> str:
    try:
        done = subprocess.run([fio, "--version"], capture_output=True, text=True, timeout=30,
                              check=False)
    except OSError as exc:
        raise FioError(f"{fio}: {exc.strerror}") from exc
    return done.stdout.strip()


def json_documents(stream: IO[str]) -> Iterator[dict[str, Any]]:
    """The JSON documents fio prints one after another (a status every interval, then the
    result); each ends with a ``}`` alone at the start of a line. Other lines are skipped."""
    lines: list[str] = []
    for line in stream:
        if not lines and not line.startswith("{"):
            continue  # a notice fio printed outside its JSON
        lines.append(line)
        if line.rstrip("\n") == "}":
            try:
                document = json.loads("".join(lines))
            except ValueError:
                document = None
            lines = []
            if isinstance(document, dict):
                yield document


def phase_result(document: dict[str, Any], rw: str) -> PhaseResult:
    """The group's figures for one direction from fio's per-job ones (no --group_reporting:
    the read phase needs to know how much each job wrote). The rate is fio's own group
    aggregate, every job's bytes over the longest job's runtime (``rs->agg`` in
    ``show_run_stats``, fio's stat.c), not a sum of per-job rates: a job that finishes early
    would count its short burst as if it lasted the whole phase."""
    try:
        jobs = document["jobs"]
        errors = [job["error"] for job in jobs if job.get("error")]
        if errors:
            raise FioError(f"fio reported error {errors[0]}")
        stats = [job[rw] for job in jobs]
        per_job = tuple(int(stat["io_bytes"]) for stat in stats)
        # fio counts whole milliseconds: a phase shorter than one lasted at most that.
        runtime = max(1, *(int(stat["runtime"]) for stat in stats))
        latency: dict[str, float] = {}
        for key in PERCENTILES:
            values = [stat["clat_ns"].get("percentile", {}).get(key) for stat in stats]
            known = [v for v in values if isinstance(v, (int, float))]
            if known:
                latency[f"p{float(key):g}"] = max(known) / 1000
        ios = sum(float(stat["iops"]) * int(stat["runtime"]) for stat in stats)
        return PhaseResult(rw, sum(per_job), per_job, sum(per_job) * 1000 / runtime,
                           ios / runtime, runtime, latency)
    except (KeyError, TypeError, ValueError) as exc:
        raise FioError(f"fio's JSON lacks {exc}") from exc


def run_phase(job: FioJob, fio: str, on_status: Callable[[int], None],
              started: Callable[[subprocess.Popen[str]], None], directory_fd: int
              ) -> PhaseResult:
    """Run one phase in the directory open as ``directory_fd`` (fio's working directory:
    whatever happens to the directory's name, fio writes in that very directory);
    ``on_status`` gets the bytes moved so far at every status; ``started`` gets the process
    (so an interrupt can stop it)."""
    # stderr goes to a file: a pipe nobody reads while stdout is followed could fill up.
    with tempfile.TemporaryFile(mode="w+") as errors:
        try:
            # A process group of its own: fio forks a process per job, and an interrupt
            # must reach them all (runner._stop signals the group).
            process = subprocess.Popen(job.argv(fio, in_cwd=True), stdout=subprocess.PIPE,
                                       stderr=errors, text=True, start_new_session=True,
                                       pass_fds=(directory_fd,),
                                       cwd=f"/proc/self/fd/{directory_fd}")
        except OSError as exc:
            raise FioError(f"cannot run {fio}: {exc.strerror}") from exc
        started(process)
        last: dict[str, Any] | None = None
        assert process.stdout is not None
        for document in json_documents(process.stdout):
            last = document
            with contextlib.suppress(KeyError, TypeError, ValueError):  # a partial status
                on_status(sum(int(j[job.rw]["io_bytes"]) for j in document.get("jobs", [])))
        status = process.wait()
        errors.seek(0)
        stderr = errors.read(4096)
    if status != 0 or last is None:
        detail = " ".join(stderr.split())[:400] or f"exit status {status}"
        raise FioError(f"fio failed in {job.directory}: {detail}")
    return phase_result(last, job.rw)
