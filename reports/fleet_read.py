"""Reading a fleet's results files on every core, holding a few bytes per host.

A fleet report reads each file twice, in worker processes: first for what decides which
files are one host (its names, engine, scan time: a ``Header``), then, one host at a time,
for everything its row and section show. Between the two passes the controller holds only
the headers, so 20,000 hosts cost little more than 10,000. ``read_slim`` serves what needs
every host's verdicts at once (diff, --baseline, --csv, --failing, --prometheus, JUnit): each host
without its evidence, storage or rule texts.
"""

from __future__ import annotations

import itertools
import json
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from ..rules import Catalogue
from ..scanner.batch_pool import run_jobs
from .arf import ArfError, read_arf_header
from .drift import DiffHost, diff_host
from .failure import is_unreadable_file, unreadable_file
from .fleet import EncodedSection, FleetWriter, encode_section, host_row, rule_info
from .fleet_plan import FleetPlan, Unit, plan_units
from .identity import FLEET_MARKER, fleet_inventory_name
from .merging import claim_problems, claimants_of, merge_engines, merge_measured
from .model import (
    FAILURE_SCHEMA,
    HostView,
    ReportInputError,
    arf_host_name,
    host_key,
    load,
    load_decoded,
    read_json_or_arf,
)
from .prometheus import HostMetrics, host_metrics

# Below this many files the work is done here: forking workers costs more than it saves.
PARALLEL_FROM = 64
CHUNK = 16
# A chunk of files taking longer than this is a hostile or broken one (a honest chunk of
# ARF files reads in well under a second each).
READ_SECONDS = 120.0

_catalogue: Catalogue | None = None  # the workers' (inherited at fork)
_infos_sent: set[str] = set()  # rule ids whose texts this process already sent

Item = TypeVar("Item")
Outcome = TypeVar("Outcome")
View = TypeVar("View")  # what read_hosts keeps of each host


@dataclass(slots=True)
class Header:
    """What decides which files are one host (model.merge_measured, merge_engines and
    flag_claimed_names read nothing else)."""
    path: str
    source: str
    name: str
    inventory: str = ""
    claimed: str = ""
    scanned_at: str = ""
    measured: bool = False
    unreadable: str = ""  # why the file cannot be read

    @property
    def key(self) -> str:
        return host_key(self.inventory, self.name)


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
    _infos_sent.clear()
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


def _catalogue_here() -> Catalogue:
    assert _catalogue is not None, "parallel_map sets the catalogue first"
    return _catalogue


def load_or_error_row(path: str, catalogue: Catalogue) -> HostView:
    try:
        return load(path, catalogue)
    except ReportInputError as exc:
        return unreadable_file(path, str(exc), catalogue)


def read_header(path: str) -> Header:
    """What decides which files are one host, read cheaply: a JSON file decoded but not
    validated, an ARF's TestResult only. A file whose full reading fails later is an error
    row then (hosts_of); here only what cannot even be decoded is."""
    try:
        data = read_json_or_arf(path)
    except ReportInputError as exc:
        return Header(path, "sascheck", Path(path).name, unreadable=str(exc))
    return _header(path, data)


def _header(path: str, data: Any) -> Header:
    """read_header's, from the file's content as read_json_or_arf gave it."""
    try:
        if data is None:
            arf = read_arf_header(path)
            claimed = arf_host_name(arf.facts, arf.target, path)
            inventory = fleet_inventory_name(path)
            return Header(path, "oscap", inventory or claimed, inventory, claimed,
                          arf.start_time)
    except (ReportInputError, ArfError) as exc:
        return Header(path, "sascheck", Path(path).name, unreadable=str(exc))
    if not isinstance(data, dict):
        return Header(path, "sascheck", Path(path).name)  # an error row, from hosts_of

    def text(mapping: Any, key: str) -> str:
        value = mapping.get(key, "") if isinstance(mapping, dict) else ""
        return value if isinstance(value, str) else ""
    host = data.get("host")
    inventory = fleet_inventory_name(path)  # the controller's word (identity.py)
    if data.get("schema") == FAILURE_SCHEMA:  # as failure.from_failure names the host
        name = inventory or text(host, "hostname") or Path(path).name.split(".")[0]
        return Header(path, "sascheck", name, inventory, "", text(data, "recorded_at"))
    claimed = text(host, "hostname")  # as model.from_json names the host
    return Header(path, "sascheck", inventory or claimed or Path(path).stem, inventory,
                  claimed, text(data, "scanned_at"), bool(data.get("measurements")))


def hosts_of(unit: Unit, catalogue: Catalogue) -> list[HostView]:
    """The unit's files read in full and merged: one host (several only where a file
    changed between the two readings)."""
    if unit.unreadable:
        hosts = [unreadable_file(path, unit.unreadable, catalogue) for path in unit.files]
    else:
        hosts = merge_engines(merge_measured([load_or_error_row(path, catalogue)
                                              for path in unit.files]))
    for host in hosts:
        host.problems.extend(unit.problems)
    return hosts


def _slim(path: str) -> HostView:
    """A host without what only its own section shows (evidence, storage, SAS directories,
    rule texts: the catalogue's again on the controller, as pickled per host they would be
    copied per host)."""
    host = load_or_error_row(path, _catalogue_here())
    host.storage, host.sas_dirs, host.role_reasons, host.discovery_notes = [], [], [], []
    for rule in host.rules:
        rule.evidence, rule.rationale, rule.description, rule.references = [], "", "", []
        rule.impact = None
    return host


class _Shared(dict[Any, Any]):
    """One copy of each equal text or value across hosts (titles, verdicts, expected values,
    site values): thousands of hosts' results say much the same."""

    def one(self, value: Any) -> Any:
        if isinstance(value, list):  # stays a list (diff compares it with full reads')
            return [self.one(item) for item in value]
        try:
            return self.setdefault(value, value)
        except TypeError:  # a mapping: left as it is
            return value


def read_slim(paths: Sequence[str], catalogue: Catalogue,
              unreadable: list[str] | None = None) -> list[HostView]:
    """Every host of ``paths``, merged as the page merges them, slim."""
    hosts = []
    shared = _Shared()
    for host in parallel_map(_slim, paths, catalogue,
                             lambda path, why: unreadable_file(path, why, catalogue)):
        if is_unreadable_file(host) and unreadable is not None:
            unreadable.append(host.path)
        for rule in host.rules:  # titles and severities were filled in by the worker
            for name in ("id", "title", "severity", "result", "expected", "actual", "message"):
                setattr(rule, name, shared.one(getattr(rule, name)))
        host.values = {shared.one(name): shared.one(value)
                       for name, value in host.values.items()}
        host.profile, host.os, host.kernel = (shared.one(host.profile), shared.one(host.os),
                                              shared.one(host.kernel))
        hosts.append(host)
    merged = merge_engines(merge_measured(hosts))
    claimants = claimants_of(merged)
    for host in merged:
        host.problems.extend(claim_problems(host, claimants))
    return merged


def read_hosts(paths: Sequence[str], catalogue: Catalogue, unreadable: list[str],
               view: Callable[[HostView], View]) -> Iterator[View]:
    """Every host of ``paths`` as ``view`` makes it, merged as the page merges them, read
    on every core and given one at a time (issue 52): the controller holds only what
    ``view`` keeps. The paths of files found unreadable are added to ``unreadable``."""
    def views(unit: Unit) -> list[tuple[View, str]]:
        return [(view(host), host.path if is_unreadable_file(host) else "")
                for host in hosts_of(unit, _catalogue_here())]

    def failed(unit: Unit, why: str) -> list[tuple[View, str]]:
        return [(view(unreadable_file(path, why, catalogue)), path) for path in unit.files]
    plan = units_of(paths, catalogue, unreadable)
    try:
        for built in parallel_map(views, plan.units(), catalogue, failed):
            for value, path in built:
                if path:
                    unreadable.append(path)
                yield value
    finally:
        plan.close()


def fleet_metrics(paths: Sequence[str], catalogue: Catalogue,
                  unreadable: list[str]) -> Iterator[HostMetrics]:
    """Every host for `report --prometheus`: nothing of the fleet is held."""
    return read_hosts(paths, catalogue, unreadable, host_metrics)


def diff_side(paths: Sequence[str], catalogue: Catalogue,
              unreadable: list[str]) -> Iterator[DiffHost]:
    """Every host as diff compares it, one at a time (drift.diff keeps them on disk)."""
    return read_hosts(paths, catalogue, unreadable, diff_host)


def units_of(paths: Sequence[str], catalogue: Catalogue,
             unreadable: list[str]) -> FleetPlan:
    """Which files are one host (fleet_plan.py); the paths of files whose header cannot be
    read are added to ``unreadable``. The caller closes the plan."""
    def noted(headers: Iterable[Header]) -> Iterator[Header]:
        for header in headers:
            if header.unreadable:
                unreadable.append(header.path)
            yield header
    return plan_units(noted(parallel_map(read_header, paths, catalogue, lambda path, why:
                                         Header(path, "sascheck", Path(path).name,
                                                unreadable=why))))


Built = tuple[dict[str, Any], EncodedSection, dict[str, tuple[str, str, str, list[str]]], str]


def _build(unit: Unit) -> list[Built]:
    """Each host of the unit as the page takes it: its row, its section encoded here (the
    workers, not the controller, turn it into JSON and digests), the texts of rules this
    process has not sent before (each worker's items come in order, so the controller has a
    rule's texts by the first row that needs them), and the path of a file found unreadable."""
    return [_built(host) for host in hosts_of(unit, _catalogue_here())]


def _built(host: HostView) -> Built:
    infos = {rule.id: rule_info(rule) for rule in host.rules if rule.id not in _infos_sent}
    _infos_sent.update(infos)
    unreadable = host.path if is_unreadable_file(host) else ""
    return host_row(host), encode_section(host), infos, unreadable


def _header_and_build(path: str) -> tuple[Header, list[Built]]:
    """A file's header, and the file built as a host by itself (what most files are), from
    one reading of it."""
    try:
        data = read_json_or_arf(path)
    except ReportInputError as exc:
        header = Header(path, "sascheck", Path(path).name, unreadable=str(exc))
    else:
        header = _header(path, data)
    if header.unreadable:
        return header, _build(Unit([path], unreadable=header.unreadable))
    try:
        host = load_decoded(path, data, _catalogue_here())
    except ReportInputError as exc:
        host = unreadable_file(path, str(exc), _catalogue_here())
    return header, [_built(host)]


def fill_fleet(writer: FleetWriter, paths: Sequence[str], catalogue: Catalogue,
               unreadable: list[str]) -> FleetPlan:
    """Every host of ``paths`` into the fleet page's writer, each file read once where it is
    a host by itself: the first pass builds each file alone while noting its header; the
    plan (fleet_plan.py) then names the hosts of several files or with something the fleet
    says of them (a claimed name), whose rows are taken out and built again from all their
    files. The paths of files found unreadable are added to ``unreadable``; the caller
    closes the plan."""
    plan = FleetPlan()

    def add(built: list[Built], seq: int) -> None:
        for row, section, infos, path in built:
            if path:
                unreadable.append(path)
            writer.add_built(row, section, infos, seq)

    def failed_file(path: str, why: str) -> tuple[Header, list[Built]]:
        return (Header(path, "sascheck", Path(path).name, unreadable=why),
                _failed_rows(Unit([path]), why, catalogue))
    for header, built in parallel_map(_header_and_build, paths, catalogue, failed_file):
        add(built, plan.count)
        plan.add(header)
    plan.plan()

    def again() -> Iterator[Unit]:
        for unit in plan.units():
            if len(unit.files) > 1 or unit.problems:
                for place in unit.places:
                    writer.remove(place)
                yield unit
    for first, built in parallel_map(lambda unit: (min(unit.places), _build(unit)), again(),
                                     catalogue, lambda unit, why: (
                                         min(unit.places), _failed_rows(unit, why, catalogue))):
        add(built, first)
    return plan


def _failed_rows(unit: Unit, why: str, catalogue: Catalogue) -> list[Built]:
    """The rows of a unit whose reading ran out of time or killed its worker."""
    return [(host_row(host), encode_section(host),
             {rule.id: rule_info(rule) for rule in host.rules}, host.path)
            for host in (unreadable_file(path, why, catalogue) for path in unit.files)]


GROUPS_FILE = ".sascheck-groups"  # the fleet playbook's: inventory name -> its groups
GROUPS_LIMIT = 16 << 20


def inventory_groups(paths: Sequence[str]) -> dict[str, list[str]]:
    """The inventory groups of each host, from the file the fleet playbook writes beside
    the results (fleet directories only). The file is as untrusted as the results: anything
    but a mapping of names to lists of names is left out."""
    groups: dict[str, list[str]] = {}
    for directory in sorted({os.path.dirname(path) or "." for path in paths}):
        if not os.path.isfile(os.path.join(directory, FLEET_MARKER)):
            continue
        try:
            with open(os.path.join(directory, GROUPS_FILE), "rb") as handle:
                data = json.loads(handle.read(GROUPS_LIMIT + 1)[:GROUPS_LIMIT])
        except (OSError, ValueError):
            continue
        if not isinstance(data, dict):
            continue
        for name, names in data.items():
            if isinstance(name, str) and isinstance(names, list):
                groups[name[:256]] = [str(group)[:128] for group in names[:64]
                                      if isinstance(group, str)]
    return groups
