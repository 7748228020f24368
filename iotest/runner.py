"""Run a plan: fio writes then reads files in a private directory, which is removed on
success, failure, Ctrl-C and SIGTERM alike."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from types import FrameType
from typing import Any

from .fio import FioError, FioJob, PhaseResult, run_phase
from .plan import Plan

PRIVATE_PREFIX = ".sascheck-iotest-"
Progress = Callable[[float], None]  # fraction of this file system's run done, 0..1


class Interrupted(KeyboardInterrupt):
    """SIGTERM, handled as Ctrl-C is: stop fio, remove the test files, exit 130."""


@contextlib.contextmanager
def sigterm_interrupts() -> Iterator[None]:
    def interrupt(signum: int, frame: FrameType | None) -> None:
        raise Interrupted()
    previous = signal.signal(signal.SIGTERM, interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@dataclass
class Measurement:
    plan: Plan
    write: PhaseResult
    read: PhaseResult
    commands: list[list[str]]

    def to_dict(self, fio_version: str) -> dict[str, Any]:
        target = self.plan.target
        return {"directory": target.directory, "mountpoint": target.mountpoint,
                "fstype": target.fstype, "device": target.device, "roles": list(target.roles),
                "fio_version": fio_version, "jobs": self.plan.jobs,
                "block_bytes": self.plan.block_bytes, "block_source": self.plan.block_source,
                "size_bytes": self.plan.size_bytes, "size_source": self.plan.size_source,
                "runtime_limit_s": self.plan.runtime_s, "direct": self.plan.direct,
                "write": self.write.to_dict(), "read": self.read.to_dict(),
                "fio_commands": self.commands}


def _stop(process: subprocess.Popen[str]) -> None:
    """Let fio and its job processes stop cleanly (SIGINT to its group), then insist: a
    job process left running would keep writing to files already removed."""
    for signum, patience in ((signal.SIGINT, 10.0), (signal.SIGKILL, 10.0)):
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signum)
        with contextlib.suppress(subprocess.TimeoutExpired):
            process.wait(timeout=patience)
            if not _group_alive(process.pid):
                return


def _group_alive(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def measure(plan: Plan, fio: str, progress: Progress) -> Measurement:
    running: list[subprocess.Popen[str]] = []
    private = tempfile.mkdtemp(prefix=PRIVATE_PREFIX, dir=plan.target.directory)
    try:
        results: list[PhaseResult] = []
        commands: list[list[str]] = []
        size = plan.size_bytes
        for phase, rw in enumerate(("write", "read")):
            job = FioJob(private, rw, plan.block_bytes, size, plan.jobs, plan.direct,
                         plan.runtime_s)
            commands.append(job.argv("fio"))
            began = time.monotonic()

            def status(moved: int, phase: int = phase, began: float = began,
                       job: FioJob = job) -> None:
                done = moved / (job.size_bytes * job.jobs)
                if job.runtime_s:
                    done = max(done, (time.monotonic() - began) / job.runtime_s)
                progress((phase + min(done, 1.0)) / 2)
            results.append(run_phase(job, fio, status, running.append))
            running.clear()  # finished and reaped: its process group is gone
            # Read what every job wrote (a runtime limit may have cut the writes short):
            # past it lie only allocated blocks, which read as zeroes without touching disk.
            size = min(results[0].bytes_per_job) // plan.block_bytes * plan.block_bytes
            if size == 0:
                raise FioError(f"fio wrote less than one block in {plan.target.directory}")
        progress(1.0)
        return Measurement(plan, results[0], results[1], commands)
    finally:
        for process in running:
            _stop(process)
        shutil.rmtree(private, ignore_errors=True)
