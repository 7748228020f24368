"""Scan many snapshot archives on the controller, the agentless fleet scan's second half:
one process per core (a scan is CPU-bound Python, so threads would share one core), one
results file per host. A snapshot that cannot be opened or scanned becomes that host's
failure record (reports.failure), never the end of the batch."""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from urllib.parse import unquote

from .reports import json_output
from .reports.failure import failure_record
from .rules import Catalogue, load_catalogue
from .rules.errors import UserInputError
from .scanner.batch_pool import DEFAULT_SECONDS, run_jobs
from .scanner.scan import run_scan
from .scanner.sources.hostroot import FactError
from .scanner.sources.snapshot import SnapshotError, opened_snapshot

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


def inventory_name(snapshot: str) -> str:
    """The inventory's name for the host, the fleet's key for it: the playbook writes each
    archive as the name percent-encoded (a '/' in it cannot make a path), so it is decoded
    here. It is the name the controller chose, not the one the host claims."""
    return unquote(host_stem(snapshot))


def plan(snapshots: Sequence[str], directory: str, profile: str,
         assignments: Sequence[str], profiles: Mapping[str, str] | None = None
         ) -> list[BatchJob]:
    """One job per archive, under the profile ``profiles`` gives its inventory name, else
    ``profile``; two archives of one name would write one file, so that is an error before
    anything is scanned."""
    jobs: dict[str, BatchJob] = {}
    scratch = scratch_directory()
    for snapshot in snapshots:
        output = os.path.join(directory, host_stem(snapshot) + ".json")
        if output in jobs:
            raise UserInputError(f"{snapshot} and {jobs[output].snapshot} would both write "
                                 f"{output}: rename one")
        chosen = (profiles or {}).get(inventory_name(snapshot), profile)
        jobs[output] = BatchJob(snapshot, output, chosen, tuple(assignments), scratch)
    return list(jobs.values())


_CATALOGUE: Catalogue | None = None


def _catalogue() -> Catalogue:
    global _CATALOGUE  # one load per worker process
    if _CATALOGUE is None:
        _CATALOGUE = load_catalogue()
    return _CATALOGUE


def scan_one(job: BatchJob) -> BatchOutcome:
    """Scan one archive and write its results, or its failure record; never raises for
    what the archive holds, whatever the exception."""
    from .outputs import write_output

    try:
        with opened_snapshot(job.snapshot, job.scratch) as snapshot:
            result = run_scan(_catalogue(), job.profile,
                              [*snapshot.sets, *job.assignments], snapshot.root)
            data = snapshot.named(result.to_dict())
        data["host"]["inventory_name"] = inventory_name(job.snapshot)
        write_output(job.output, json_output.dumps(data))
    except (SnapshotError, FactError, UserInputError, KeyError) as exc:
        message = str(exc.args[0]) if isinstance(exc, KeyError) else str(exc)
    except Exception as exc:  # one host's bug must not end the fleet's scan
        message = f"internal error ({type(exc).__name__}: {exc}); please report it"
    else:
        return BatchOutcome(job.snapshot, job.output,
                            "findings" if result.exit_status else "pass")
    return failed(job, message)


def failed(job: BatchJob, message: str) -> BatchOutcome:
    """The host's failure record in place of its results."""
    from .outputs import write_output

    record = failure_record(inventory_name(job.snapshot), "scan", message, job.snapshot,
                            job.profile)
    try:
        write_output(job.output, json_output.dumps(record))
    except Exception as exc:  # the record cannot be written: said on the terminal
        message = f"{message} (and its failure record could not be written: {exc})"
    return BatchOutcome(job.snapshot, job.output, "failed", message)


def scan_all(jobs: Sequence[BatchJob], processes: int,
             done: Callable[[BatchOutcome], None] = lambda outcome: None,
             seconds: float = DEFAULT_SECONDS) -> list[BatchOutcome]:
    """Every job, across ``processes`` worker processes, each host's scan under the
    wall-clock and memory limits of scanner.batch_pool."""
    outcomes = []
    for outcome in run_jobs(jobs, max(processes, 1), scan_one, failed, seconds):
        outcomes.append(outcome)
        done(outcome)
    return outcomes
