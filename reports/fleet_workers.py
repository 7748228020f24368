"""The fleet reports' worker processes: ``parallel_map`` runs a function over a fleet's files
(or hosts) on every core, in order, under scan-snapshots' supervision (scanner.batch_pool).

The workers are forked: they inherit the catalogue (``catalogue_here``) and the set of rule
ids whose texts the process already sent with a host (``INFOS_SENT``).
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable, Iterable, Iterator
from typing import Any, TypeVar

from ..rules import Catalogue
from ..scanner.batch_pool import run_jobs

# Below this many files the work is done here: forking workers costs more than it saves.
PARALLEL_FROM = 64
CHUNK = 16
# A chunk of files taking longer than this is a hostile or broken one (a honest chunk of
# ARF files reads in well under a second each).
READ_SECONDS = 120.0

_catalogue: Catalogue | None = None  # the workers' (inherited at fork)
INFOS_SENT: set[str] = set()  # rule ids whose texts this process already sent

Item = TypeVar("Item")
Outcome = TypeVar("Outcome")


def workers() -> int:
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity")
               else os.cpu_count() or 1)


_LOST = object()  # a chunk's item whose worker ran out of time or died


def parallel_map(work: Callable[[Item], Outcome], items: Iterable[Item], catalogue: Catalogue,
                 failed: Callable[[Item, str], Outcome]) -> Iterator[Outcome]:
    """``work`` over ``items`` in order, on every core where there are enough of them.

    The workers are scan-snapshots' supervised ones (scanner.batch_pool): a file that holds
    a worker past the time limit, or kills it (its memory limit, a crash), is that file's
    failure, ``failed(item, why)``, and the rest go on; no file can hang or end the report.
    Items go in chunks (a message each way per chunk), taken from ``items`` as workers get
    free; a chunk that fails is tried again an item at a time, so that only the culprit
    fails. Each worker holds one chunk, so at most a chunk per worker waits here to be put
    in order."""
    global _catalogue
    _catalogue = catalogue
    INFOS_SENT.clear()
    processes = workers()
    given = iter(items)
    first = list(itertools.islice(given, PARALLEL_FROM))
    if len(first) < PARALLEL_FROM or processes == 1:
        yield from map(work, itertools.chain(first, given))
        return

    # A job is its first index and its items: sent to the worker, which so never reads the
    # controller's copy of them (a read would copy their pages into it).
    def run(job: tuple[int, list[Item]]) -> list[tuple[int, Any]]:
        return [(job[0] + offset, work(item)) for offset, item in enumerate(job[1])]

    def lost(job: tuple[int, list[Item]], why: str) -> list[tuple[int, Any]]:
        return [(job[0] + offset, _LOST) for offset in range(len(job[1]))]

    def alone(job: tuple[int, list[Item]]) -> Iterator[tuple[int, Any]]:
        """A failed chunk's items again, one job each: the culprit fails by itself."""
        for outcome in run_jobs([(job[0] + offset, [item]) for offset, item
                                 in enumerate(job[1])], 1, run,
                                lambda one, why: [(one[0], failed(one[1][0], why))],
                                seconds=READ_SECONDS, doing="reading"):
            yield from outcome

    def chunks() -> Iterator[tuple[int, list[Item]]]:
        rest = itertools.chain(first, given)
        start = 0
        while chunk := list(itertools.islice(rest, CHUNK)):
            sent[start] = chunk  # kept until its outcome comes, to try it again if lost
            yield start, chunk
            start += len(chunk)

    sent: dict[int, list[Item]] = {}
    waiting: dict[int, Any] = {}
    following = 0
    for outcome in run_jobs(chunks(), processes, run, lost, seconds=READ_SECONDS,
                            doing="reading"):
        job = (outcome[0][0], sent.pop(outcome[0][0]))
        if any(result is _LOST for _, result in outcome):
            outcome = list(alone(job))
        waiting.update(outcome)
        while following in waiting:  # in order: each worker's own items come in order
            yield waiting.pop(following)
            following += 1


def catalogue_here() -> Catalogue:
    assert _catalogue is not None, "parallel_map sets the catalogue first"
    return _catalogue
