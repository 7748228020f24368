"""One fix for a whole fleet (issue 48): each host planned from its own results.

A fix written from one host's results refuses every other host (its planner checks the
target's host name and machine-id). A fleet's fix is therefore one planner per host, each
written from that host's results in the fleet directory the scan playbook filled, and
keyed by the inventory name the controller gave the file (reports.identity), never by a
name the results claim. A host is refused, by name and with the reason, when its results
are missing, unreadable, oscap's ARF (a fix plans from sascheck's results), a failed scan,
or older than the administrator allows; at run time its planner still refuses a host whose
name or machine-id differs from its results.
"""

from __future__ import annotations

import csv
import io
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

from ..reports.failing import LIMIT_SAFE
from ..reports.identity import FLEET_MARKER, RESULT_NAME_SUFFIXES, fleet_inventory_name
from ..reports.resultfile import read_result
from ..rules.errors import UserInputError
from .rendering import FixError, FixInput

PLAYBOOK = "sascheck-fix.yml"
PLANNERS = "planners"
MANIFEST = "manifest.tsv"
REFUSED = "refused.tsv"


@dataclass(frozen=True)
class FleetHost:
    """One inventory host of the fleet: its fix, or why it gets none."""
    name: str
    fix: FixInput | None = None
    scanned_at: str = ""
    refused: str = ""


def _results_by_host(directory: Path) -> dict[str, dict[str, Path]]:
    """Each inventory name in a fleet directory, with its files by kind (suffix)."""
    if not (directory / FLEET_MARKER).is_file():
        raise FixError(f"{directory}: not a fleet results directory (no {FLEET_MARKER}): a "
                       "fleet fix keys each host by the inventory name the controller gave "
                       "its results (fleet-scan.yml or scan-snapshots write them so)")
    hosts: dict[str, dict[str, Path]] = {}
    for path in sorted(directory.iterdir()):
        name = fleet_inventory_name(str(path))
        suffix = next((s for s in RESULT_NAME_SUFFIXES if path.name.endswith(s)), "")
        if name and suffix and path.is_file():
            hosts.setdefault(name, {})[suffix] = path
    return hosts


def _scan_time(result: Mapping[str, Any], path: Path) -> datetime:
    """When the results were made: the older of what they say and when the controller
    wrote the file (a host's own clock may run fast)."""
    written = datetime.fromtimestamp(path.stat().st_mtime, timezone.utc)
    try:
        said = datetime.fromisoformat(str(result.get("scanned_at", "")))
    except ValueError:
        return written
    if said.tzinfo is None:
        said = said.replace(tzinfo=timezone.utc)
    return min(said, written)


def _one_host(name: str, files: Mapping[str, Path], oldest: datetime | None,
              plan: Callable[[Mapping[str, Any]], FixInput]) -> FleetHost:
    if not LIMIT_SAFE.fullmatch(name):
        return FleetHost(name, refused="not a plain inventory name (letters, digits, '.', "
                                       "'_' and '-'): name the host plainly")
    if ".json" not in files:
        if ".arf.xml" in files:
            return FleetHost(name, refused="only oscap results (ARF): a fix plans from "
                                           "sascheck's results; scan it with the snapshot "
                                           "or sascheck engine")
        return FleetHost(name, refused="its last scan failed (see its .failed.json): scan "
                                       "it again first")
    try:
        result = read_result(str(files[".json"]))
        fix = plan(result)
    except UserInputError as exc:
        return FleetHost(name, refused=f"its results cannot be used: {exc}")
    scanned = _scan_time(result, files[".json"])
    shown = scanned.strftime("%Y-%m-%d %H:%M UTC")
    if oldest is not None and scanned < oldest:
        return FleetHost(name, scanned_at=shown,
                         refused=f"its results are from {shown}, older than --max-age "
                                 "allows: scan it again")
    return FleetHost(name, fix, shown)


def read_fleet(directory: str, plan: Callable[[Mapping[str, Any]], FixInput],
               max_age_days: float, now: datetime | None = None) -> list[FleetHost]:
    """Every host of a fleet directory, planned by ``plan`` from its results or refused.
    ``max_age_days`` 0 accepts results of any age."""
    now = now or datetime.now(timezone.utc)
    oldest = now - timedelta(days=max_age_days) if max_age_days > 0 else None
    hosts = [_one_host(name, files, oldest, plan)
             for name, files in sorted(_results_by_host(Path(directory)).items())]
    if not hosts:
        raise FixError(f"{directory}: no results in this fleet directory")
    return hosts


def _tsv(rows: Iterable[Iterable[str]]) -> str:
    out = io.StringIO()
    writer = csv.writer(out, delimiter="\t", lineterminator="\n", quoting=csv.QUOTE_MINIMAL)
    writer.writerows(rows)
    return out.getvalue()


def manifest(hosts: Iterable[FleetHost], script_of: Callable[[str], str]) -> tuple[str, str]:
    """(manifest.tsv: inventory name, script, rules to fix, when scanned, for each planned
    host; refused.tsv: inventory name and why, for each refused one). Names are plain
    (LIMIT_SAFE) or refused, so a shell loop reads the manifest with ``read -r``."""
    planned, refused = [], []
    for host in hosts:
        if host.fix is None:
            refused.append((host.name if LIMIT_SAFE.fullmatch(host.name) else repr(host.name),
                            host.refused))
        else:
            planned.append((host.name, script_of(host.name), ",".join(host.fix.rule_ids) or "-",
                            host.scanned_at))
    return _tsv(planned), _tsv(refused)
