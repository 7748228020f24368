"""Run a plan: fio writes then reads files in a private directory, which is removed on
success, failure, Ctrl-C and SIGTERM alike."""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import stat
import subprocess
import threading
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
    concurrent: bool = False  # measured while the other file systems were
    spans: tuple[tuple[float, float], ...] = ()  # each phase's start and end (epoch s)

    def to_dict(self, fio_version: str) -> dict[str, Any]:
        target = self.plan.target
        return {"directory": target.directory, "mountpoint": target.mountpoint,
                "fstype": target.fstype, "device": target.device, "roles": list(target.roles),
                "fio_version": fio_version, "jobs": self.plan.jobs,
                "block_bytes": self.plan.block_bytes, "block_source": self.plan.block_source,
                "size_bytes": self.plan.size_bytes, "size_source": self.plan.size_source,
                "runtime_limit_s": self.plan.runtime_s, "direct": self.plan.direct,
                "method": self.plan.method, "jobs_source": self.plan.jobs_source,
                "ram_bytes": self.plan.ram_bytes, "cache": self.plan.cache,
                "concurrent": self.concurrent,
                "phases": {rw: [round(start, 3), round(end, 3)]
                           for rw, (start, end) in zip(("write", "read"), self.spans)},
                "write": self.write.to_dict(), "read": self.read.to_dict(),
                "fio_commands": self.commands}


def stop_process(process: subprocess.Popen[str]) -> None:
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


class PrivateDirectory:
    """The run's own directory, made with mkdir (mode 0700, never an existing name) and held
    open: fio runs in it through the descriptor, its identity is checked after each phase,
    and it is emptied and removed through descriptors, so a racer who renames it away and
    plants a directory of its own under the name redirects nothing."""

    def __init__(self, parent: str, device: int | None = None) -> None:
        # The parent is opened once and checked before anything is made in it: a SAS
        # directory swapped for a link to another file system gets nothing written there.
        self.parent_fd = os.open(parent, os.O_RDONLY | os.O_DIRECTORY)
        self.fd = -1
        self.identity = (-1, -1, -1, -1)
        if device is not None and os.fstat(self.parent_fd).st_dev != device:
            self.close()
            raise FioError(f"{parent} is not on the file system planned for it (its "
                           "directory was swapped for a link); nothing was measured")
        self.name = self._made_in_parent()
        self.path = os.path.join(parent, self.name)
        try:  # a racer may have renamed it away, or put a link in its place, already
            self.fd = os.open(self.name, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW,
                              dir_fd=self.parent_fd)
            self.identity = self._identity(os.fstat(self.fd))
        except OSError:
            self.close()
            raise FioError(f"{self.path} was replaced or changed as it was made; nothing was "
                           "measured") from None
        if self.identity[2:] != (os.geteuid(), 0o700) or (
                device is not None and self.identity[0] != device):
            self.close()
            raise FioError(f"{self.path} was replaced or changed as it was made; nothing was "
                           "measured")

    def _made_in_parent(self) -> str:
        """A new directory of a random name (never an existing one), mode 0700."""
        for _ in range(100):
            name = PRIVATE_PREFIX + secrets.token_hex(6)
            try:
                os.mkdir(name, 0o700, dir_fd=self.parent_fd)
            except FileExistsError:
                continue
            return name
        self.close()
        raise FioError("could not make a private directory: every name tried exists")

    @staticmethod
    def _identity(status: os.stat_result) -> tuple[int, int, int, int]:
        return status.st_dev, status.st_ino, status.st_uid, stat.S_IMODE(status.st_mode)

    def verify(self) -> None:
        """FioError when the directory changed or its name now points elsewhere."""
        now = self._identity(os.fstat(self.fd))
        try:
            named = self._identity(os.lstat(self.name, dir_fd=self.parent_fd))
        except OSError:
            named = None
        if now != self.identity or named != self.identity:
            raise FioError(f"{self.path} was replaced or changed during the test; its "
                           "figures are not reported")

    def close(self) -> None:
        """Remove the files fio made, then the directory if its name is still ours."""
        if self.fd >= 0:
            with contextlib.suppress(OSError):
                for name in os.listdir(self.fd):
                    with contextlib.suppress(OSError):
                        os.unlink(name, dir_fd=self.fd)
            with contextlib.suppress(OSError):
                if self._identity(os.lstat(self.name, dir_fd=self.parent_fd)) == self.identity:
                    os.rmdir(self.name, dir_fd=self.parent_fd)
            with contextlib.suppress(OSError):
                os.close(self.fd)
            self.fd = -1
        with contextlib.suppress(OSError):
            os.close(self.parent_fd)


def measure(plan: Plan, fio: str, progress: Progress,
            together: threading.Barrier | None = None,
            started: Callable[[subprocess.Popen[str]], None] | None = None) -> Measurement:
    """Write then read one file system. ``together``: the barrier every concurrently
    measured file system meets before each phase, so that all write, then all read;
    ``started`` is told each fio process (so the main thread can stop them all)."""
    try:
        return _measure(plan, fio, progress, together, started)
    except BaseException:
        if together is not None:
            together.abort()  # the others stop waiting for this one
        raise


def _measure(plan: Plan, fio: str, progress: Progress, together: threading.Barrier | None,
             started: Callable[[subprocess.Popen[str]], None] | None) -> Measurement:
    running: list[subprocess.Popen[str]] = []

    def start(process: subprocess.Popen[str]) -> None:
        running.append(process)
        if started is not None:
            started(process)
    private = PrivateDirectory(plan.target.directory, plan.target.st_dev)
    try:
        results: list[PhaseResult] = []
        commands: list[list[str]] = []
        spans: list[tuple[float, float]] = []
        size = plan.size_bytes
        for phase, rw in enumerate(("write", "read")):
            job = FioJob(private.path, rw, plan.block_bytes, size, plan.jobs, plan.direct,
                         plan.runtime_s)
            commands.append(job.argv("fio"))
            if together is not None:
                together.wait()
            began, began_at = time.monotonic(), time.time()

            def status(moved: int, phase: int = phase, began: float = began,
                       job: FioJob = job) -> None:
                done = moved / (job.size_bytes * job.jobs)
                if job.runtime_s:
                    done = max(done, (time.monotonic() - began) / job.runtime_s)
                progress((phase + min(done, 1.0)) / 2)
            result = run_phase(job, fio, status, start, private.fd)
            running.clear()  # finished and reaped: its process group is gone
            # Buffered (the SAS method): timed as a whole, fsync included, as dd is timed.
            results.append(result if plan.direct else result.timed(time.monotonic() - began))
            spans.append((began_at, time.time()))
            private.verify()
            # Read what every job wrote (a runtime limit may have cut the writes short):
            # past it lie only allocated blocks, which read as zeroes without touching disk.
            size = min(results[0].bytes_per_job) // plan.block_bytes * plan.block_bytes
            if size == 0:
                raise FioError(f"fio wrote less than one block in {plan.target.directory}")
        progress(1.0)
        return Measurement(plan, results[0], results[1], commands, together is not None,
                           tuple(spans))
    finally:
        for process in running:
            stop_process(process)
        private.close()
