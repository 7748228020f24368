"""Worker processes for scan-snapshots, each host's scan under a wall-clock and a memory
limit: no snapshot can hold a worker for longer than the limit, or the controller's memory.

A worker takes one job at a time over its own pipe, so the supervisor always knows which
host a worker holds. A job past its time is ended by killing its worker, which is replaced;
a worker that dies (its memory limit, a crash) is replaced too. Either way that host gets a
failure record naming why, and the batch goes on.
"""

from __future__ import annotations

import contextlib
import gc
import resource
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # multiprocessing is loaded by the pool, not by `sascheck --help`
    from multiprocessing.connection import Connection
    from multiprocessing.process import BaseProcess
from typing import TypeVar

Job = TypeVar("Job")
Outcome = TypeVar("Outcome")

# One host's scan takes about 15 ms; a minute is far past any honest snapshot.
DEFAULT_SECONDS = 60.0
# Address space per worker: a scan needs about 150 MiB; what goes beyond is a hostile input.
DEFAULT_MEMORY = 2 << 30


@dataclass
class _Worker:
    process: BaseProcess
    connection: Connection
    job: Any = None  # the job it holds (None: none)
    started: float = 0.0


def _serve(connection: Connection, work: Callable[[Job], Outcome], memory: int) -> None:
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    while True:
        job = connection.recv()
        if job is None:
            return
        connection.send(work(job))


def run_jobs(jobs: Iterable[Job], processes: int, work: Callable[[Job], Outcome],
             failed: Callable[[Job, str], Outcome], seconds: float = DEFAULT_SECONDS,
             memory: int = DEFAULT_MEMORY, doing: str = "scan") -> Iterator[Outcome]:
    """Each job's outcome, in the order they end: ``work(job)`` in a worker, or
    ``failed(job, reason)`` (called here) when its worker ran out of time or died. Jobs are
    taken from ``jobs`` as workers get free: an iterator of them is never held whole."""
    import multiprocessing
    from multiprocessing.connection import wait

    context = multiprocessing.get_context("fork")  # workers share the loaded rules
    pending = iter(jobs)
    idle = object()
    workers: list[_Worker] = []

    def start() -> _Worker:
        ours, theirs = context.Pipe()
        process = context.Process(target=_serve, args=(theirs, work, memory), daemon=True)
        process.start()
        theirs.close()
        return _Worker(process, ours)

    def give(worker: _Worker, job: object) -> None:
        """Hand the worker ``job``, or mark it free where there is none (idle)."""
        worker.job = None if job is idle else job
        if worker.job is not None:
            worker.started = time.monotonic()
            worker.connection.send(worker.job)

    def replace(worker: _Worker) -> int | None:
        """End the worker (a dying one's own exit status is kept), start its successor."""
        worker.process.join(timeout=1)
        code = worker.process.exitcode
        worker.process.kill()
        worker.process.join()
        worker.connection.close()
        workers.remove(worker)
        job = next(pending, idle)
        if job is not idle:
            workers.append(start())
            give(workers[-1], job)
        return code

    # What the controller holds stays shared with the forked workers: frozen, their
    # collections never write to it, so its pages are not copied into each (the gc
    # module's advice for fork without exec).
    gc.freeze()
    try:
        for _ in range(processes):
            job = next(pending, idle)
            if job is idle:
                break
            workers.append(start())
            give(workers[-1], job)
        while any(worker.job is not None for worker in workers):
            busy = [worker for worker in workers if worker.job is not None]
            deadline = min(worker.started for worker in busy) + seconds
            ready = wait([worker.connection for worker in busy],
                         timeout=max(0.0, deadline - time.monotonic()))
            for worker in busy:
                held = worker.job
                if worker.connection in ready:
                    try:
                        outcome = worker.connection.recv()
                    except (EOFError, OSError):
                        yield failed(held, _death(replace(worker), doing))
                        continue
                    give(worker, next(pending, idle))
                    yield outcome
                elif time.monotonic() - worker.started >= seconds:
                    replace(worker)
                    yield failed(held, f"its {doing} took longer than {seconds:g} s and was "
                                      "stopped")
    finally:
        for worker in workers:
            _end(worker)
        gc.unfreeze()


def _end(worker: _Worker) -> None:
    if worker.process.is_alive():
        with contextlib.suppress(OSError):
            worker.connection.send(None)
    worker.process.join(timeout=5)
    if worker.process.is_alive():
        worker.process.kill()
    worker.connection.close()


def _death(code: int | None, doing: str = "scan") -> str:
    if code is not None and code < 0:
        return (f"its {doing} process was ended by signal {-code} (memory limit or crash); "
                "please report it")
    return f"its {doing} process ended unexpectedly (exit status {code}); please report it"
