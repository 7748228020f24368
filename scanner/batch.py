"""Scan many snapshot archives on the controller, the agentless fleet scan's second half:
one process per core (a scan is CPU-bound Python, so threads would share one core), one
results file per host. A snapshot that cannot be opened or scanned becomes that host's
failure record (reports.failure), never the end of the batch."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass

from ..reports import json_output
from ..reports.failure import failure_record
from ..rules import Catalogue, load_catalogue
from ..rules.errors import UserInputError
from .hostroot import FactError
from .scan import run_scan
from .snapshot import SnapshotError, opened_snapshot

SNAPSHOT_SUFFIXES = (".tar.gz", ".tgz", ".tar")
SHARED_MEMORY = "/dev/shm"


def scratch_directory() -> str | None:
    """Where archives are extracted: $TMPDIR when set, else /dev/shm where it is writable.
    A scan takes about 15 ms; extracting the archive's hundred small files onto a disk file
    system took ten times that here (each mkdir and create a journal write), in memory a
    fraction. None: the system's temporary directory."""
    if os.environ.get("TMPDIR"):
        return None
    if os.path.isdir(SHARED_MEMORY) and os.access(SHARED_MEMORY, os.W_OK | os.X_OK):
        return SHARED_MEMORY
    return None


@dataclass(frozen=True)
class BatchJob:
    snapshot: str
    output: str  # the results file to write
    profile: str
    assignments: tuple[str, ...]
    scratch: str | None = None  # where to extract (scratch_directory())


@dataclass(frozen=True)
class BatchOutcome:
    snapshot: str
    output: str
    status: str  # "pass", "findings" or "failed"
    message: str = ""


def host_stem(snapshot: str) -> str:
    """The archive's name without its suffix: the playbook names each <inventory host>.tar.gz."""
    name = os.path.basename(snapshot)
    for suffix in SNAPSHOT_SUFFIXES:
        if name.endswith(suffix) and len(name) > len(suffix):
            return name[:-len(suffix)]
    return name


def plan(snapshots: Sequence[str], directory: str, profile: str,
         assignments: Sequence[str]) -> list[BatchJob]:
    """One job per archive; two archives of one name would write one file, so that is an
    error before anything is scanned."""
    jobs: dict[str, BatchJob] = {}
    scratch = scratch_directory()
    for snapshot in snapshots:
        output = os.path.join(directory, host_stem(snapshot) + ".json")
        if output in jobs:
            raise UserInputError(f"{snapshot} and {jobs[output].snapshot} would both write "
                                 f"{output}: rename one")
        jobs[output] = BatchJob(snapshot, output, profile, tuple(assignments), scratch)
    return list(jobs.values())


_CATALOGUE: Catalogue | None = None


def _catalogue() -> Catalogue:
    global _CATALOGUE  # one load per worker process
    if _CATALOGUE is None:
        _CATALOGUE = load_catalogue()
    return _CATALOGUE


def scan_one(job: BatchJob) -> BatchOutcome:
    """Scan one archive and write its results, or its failure record; never raises for
    what the archive holds."""
    from ..outputs import write_output

    try:
        with opened_snapshot(job.snapshot, job.scratch) as snapshot:
            result = run_scan(_catalogue(), job.profile,
                              [*snapshot.sets, *job.assignments], snapshot.root)
            data = snapshot.named(result.to_dict())
    except (SnapshotError, FactError, UserInputError, KeyError) as exc:
        message = str(exc.args[0]) if isinstance(exc, KeyError) else str(exc)
    except Exception as exc:  # one host's bug must not end the fleet's scan
        message = f"internal error ({type(exc).__name__}: {exc}); please report it"
    else:
        write_output(job.output, json_output.dumps(data))
        return BatchOutcome(job.snapshot, job.output,
                            "findings" if result.exit_status else "pass")
    record = failure_record(host_stem(job.snapshot), "scan", message, job.snapshot,
                            job.profile)
    write_output(job.output, json_output.dumps(record))
    return BatchOutcome(job.snapshot, job.output, "failed", message)


def scan_all(jobs: Sequence[BatchJob], processes: int,
             done: Callable[[BatchOutcome], None] = lambda outcome: None
             ) -> list[BatchOutcome]:
    """Every job, across ``processes`` worker processes (1: in this process)."""
    if processes <= 1 or len(jobs) <= 1:
        outcomes = []
        for job in jobs:
            outcomes.append(scan_one(job))
            done(outcomes[-1])
        return outcomes
    outcomes = []
    with ProcessPoolExecutor(max_workers=min(processes, len(jobs))) as pool:
        futures = [pool.submit(scan_one, job) for job in jobs]
        for future in as_completed(futures):
            outcomes.append(future.result())
            done(outcomes[-1])
    return outcomes
