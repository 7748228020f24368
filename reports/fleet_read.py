"""Reading a fleet's results files on every core (fleet_workers.py), holding nothing per
host (issue 52).

The page (fill_fleet), --prometheus and diff (read_hosts) read each file once, in worker
processes, as a host by itself, noting what decides which files are one host (its names,
engine, scan time: a ``Header``) in the plan (fleet_plan.py); the few hosts of several
files, or with something the fleet says of them, are read again once the plan is known.
``read_slim`` serves what needs every host's verdicts at once (--baseline, --csv,
--failing, JUnit): each host without its evidence, storage or rule texts.
"""

from __future__ import annotations

import json
import os
import pickle
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from ..rules import Catalogue
from .arf import ArfError, read_arf_header
from .drift import PackedHost, packed_host
from .failure import is_unreadable_file, unreadable_file
from .fleet import EncodedSection, FleetWriter, encode_section, host_row, rule_info
from .fleet_plan import FleetPlan, Unit
from .fleet_workers import INFOS_SENT, catalogue_here, parallel_map
from .identity import FLEET_MARKER, fleet_inventory_name
from .loading import arf_host_name, load, load_decoded, read_json_or_arf
from .merging import claim_problems, claimants_of, merge_engines, merge_measured
from .model import FAILURE_SCHEMA, HostView, ReportInputError, host_key
from .prometheus import HostMetrics, host_metrics
from .scratch import scratch_db

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


def load_or_error_row(path: str, catalogue: Catalogue) -> HostView:
    try:
        return load(path, catalogue)
    except ReportInputError as exc:
        return unreadable_file(path, str(exc), catalogue)


def _header(path: str, data: Any) -> Header:
    """What decides which files are one host, from the file's content as read_json_or_arf
    gave it (an ARF's TestResult read on its own): a JSON file's names as decoded, not yet
    validated; one whose full reading fails is an error row then."""
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
    host = load_or_error_row(path, catalogue_here())
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
    on every core and given one at a time (issue 52), in the order of each host's first
    file. As for the page (fill_fleet), each file is read once as a host by itself; the
    hosts of several files, or with something the fleet says of them, are read again. What
    ``view`` keeps waits in a scratch database (scratch.py) until the plan is known. The
    paths of files found unreadable are added to ``unreadable``."""
    def views(hosts: list[HostView]) -> bytes:
        """What ``view`` makes of the hosts, with the path of each unreadable one, pickled
        where they were read: kept as it comes."""
        return pickle.dumps([(view(host), host.path if is_unreadable_file(host) else "")
                             for host in hosts])

    def alone(path: str) -> tuple[Header, bytes]:
        header, hosts = _header_and_hosts(path)
        return header, views(hosts)

    def failed(path: str, why: str) -> tuple[Header, bytes]:
        return (Header(path, "sascheck", Path(path).name, unreadable=why),
                views([unreadable_file(path, why, catalogue)]))

    plan = FleetPlan()
    kept = scratch_db("CREATE TABLE kept (first INTEGER PRIMARY KEY, body BLOB NOT NULL);")
    try:
        pending: list[tuple[int, bytes]] = []
        for header, built in parallel_map(alone, paths, catalogue, failed):
            pending.append((plan.count, built))
            plan.add(header)
            if len(pending) >= 512:
                kept.executemany("INSERT INTO kept VALUES (?, ?)", pending)
                pending = []
        kept.executemany("INSERT INTO kept VALUES (?, ?)", pending)
        plan.plan()

        def take_out(place: int) -> None:
            kept.execute("DELETE FROM kept WHERE first = ?", (place,))
        for first, built in parallel_map(
                lambda unit: (unit.first, views(hosts_of(unit, catalogue_here()))),
                plan.read_again(take_out), catalogue, lambda unit, why: (unit.first, views(
                    [unreadable_file(path, why, catalogue) for path in unit.files]))):
            kept.execute("INSERT INTO kept VALUES (?, ?)", (first, built))
        # our own pickles, in a file only this process holds
        for (body,) in kept.execute("SELECT body FROM kept ORDER BY first"):
            for value, path in pickle.loads(body):
                if path:
                    unreadable.append(path)
                yield value
    finally:
        kept.close()
        plan.close()


def fleet_metrics(paths: Sequence[str], catalogue: Catalogue,
                  unreadable: list[str]) -> Iterator[HostMetrics]:
    """Every host for `report --prometheus`: nothing of the fleet is held."""
    return read_hosts(paths, catalogue, unreadable, host_metrics)


def diff_side(paths: Sequence[str], catalogue: Catalogue,
              unreadable: list[str]) -> Iterator[PackedHost]:
    """Every host as diff compares it, packed by the worker that read it, one at a time
    (drift.diff keeps them on disk)."""
    return read_hosts(paths, catalogue, unreadable, packed_host)


Built = tuple[dict[str, Any], EncodedSection, dict[str, tuple[str, str, str, list[str]]], str]


def _build(unit: Unit) -> list[Built]:
    """Each host of the unit as the page takes it: its row, its section encoded here (the
    workers, not the controller, turn it into JSON and digests), the texts of rules this
    process has not sent before (each worker's items come in order, so the controller has a
    rule's texts by the first row that needs them), and the path of a file found unreadable."""
    return [_built(host) for host in hosts_of(unit, catalogue_here())]


def _built(host: HostView) -> Built:
    infos = {rule.id: rule_info(rule) for rule in host.rules if rule.id not in INFOS_SENT}
    INFOS_SENT.update(infos)
    unreadable = host.path if is_unreadable_file(host) else ""
    return host_row(host), encode_section(host), infos, unreadable


def _header_and_hosts(path: str) -> tuple[Header, list[HostView]]:
    """A file's header, and the file read as a host by itself (what most files are), from
    one reading of it."""
    try:
        data = read_json_or_arf(path)
    except ReportInputError as exc:
        header = Header(path, "sascheck", Path(path).name, unreadable=str(exc))
    else:
        try:
            host = load_decoded(path, data, catalogue_here())
        except ReportInputError as exc:
            # what its TestResult alone says (an ARF) or its decoded names (JSON) still
            # place it; its row says why it cannot be read
            header = _header(path, data)
            broken = [unreadable_file(path, header.unreadable or str(exc), catalogue_here())]
            return header, broken
        if data is None:  # an ARF's full reading names the host as its header would
            return Header(path, "oscap", host.name, host.inventory, host.claimed,
                          host.scanned_at), [host]
        return _header(path, data), [host]
    return header, hosts_of(Unit([path], unreadable=header.unreadable), catalogue_here())


def _header_and_build(path: str) -> tuple[Header, list[Built]]:
    header, hosts = _header_and_hosts(path)
    return header, [_built(host) for host in hosts]


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

    for first, built in parallel_map(lambda unit: (unit.first, _build(unit)),
                                     plan.read_again(writer.remove), catalogue,
                                     lambda unit, why: (unit.first,
                                                        _failed_rows(unit, why, catalogue))):
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
