"""Which files are one host, decided in a scratch database for a fleet of any size (issue 52),
gives what merging.py's rules give for the same files held in memory: a host's scan and
iotest results together, both engines' results together, and the word on claimed names.

The oracle below is those rules applied as the in-memory planner applied them before the
planner moved to SQLite (merging.pairs_of and claimants_of over the headers); random fleets
of clashing names, domains, inventory names, engines, scan times and measurements must be
planned alike, unit for unit, file order and problems included."""

from __future__ import annotations

import random

import pytest

from sascheck.reports.fleet_plan import plan_units
from sascheck.reports.fleet_read import Header
from sascheck.reports.merging import claim_problems, claimants_of, pairs_of

# A name or path may hold any byte (os.listdir's surrogate escapes; a results file's text).
NAMES = ["db1", "db1.example.com", "DB1.example.com ", "db1.other.org", "web2", "web2.example.com",
         "app3", "localhost", "app3\udcff.example.com", "\u00e9t\u00e9", ""]
INVENTORY = ["", "", "", "db1", "web2.example.com", "app3"]
TIMES = ["2026-11-20T10:00:00", "2026-11-21T10:00:00", "2026-11-21T10:00:00",
         "2026-11-22T09:00:00", ""]


def oracle(headers: list[Header]) -> list[tuple[list[str], list[str], str]]:
    """(files, problems, unreadable) per unit, by merging.py's rules over the headers."""
    by_key: dict[str, list[Header]] = {}
    for header in headers:
        if header.source == "sascheck" and not header.unreadable:
            by_key.setdefault(header.key, []).append(header)
    units: list[list[Header]] = []
    unit_of: dict[int, list[Header]] = {}
    grouped: set[int] = set()
    for group in by_key.values():
        if len(group) >= 2 and any(header.measured for header in group):
            units.append(list(group))
            unit_of[id(max(group, key=lambda header: header.scanned_at))] = units[-1]
            grouped.update(id(header) for header in group)
    for header in headers:
        if id(header) not in grouped:
            units.append([header])
            unit_of[id(header)] = units[-1]
    ours = [header for header in headers if header.source == "sascheck"
            and not header.unreadable and id(header) in unit_of]
    for kept, other in pairs_of(ours, [h for h in headers if h.source == "oscap"]):
        unit_of[id(kept)].extend(unit_of[id(other)])
        unit_of[id(other)].clear()
    place = {id(header): index for index, header in enumerate(headers)}
    units = sorted((unit for unit in units if unit),
                   key=lambda unit: min(place[id(header)] for header in unit))
    shown = [max(unit, key=lambda header: (header.source == "sascheck", header.scanned_at))
             for unit in units]
    claimants = claimants_of(shown)
    return [([header.path for header in unit], claim_problems(host, claimants),
             unit[0].unreadable if len(unit) == 1 else "") for unit, host in zip(units, shown)]


def random_fleet(seed: int, size: int) -> list[Header]:
    chosen = random.Random(seed)
    headers = []
    for index in range(size):
        source = chosen.choice(["sascheck", "sascheck", "oscap"])
        name = chosen.choice(NAMES) or f"h{index}"
        unreadable = "cannot be read" if source == "sascheck" and chosen.random() < 0.08 else ""
        headers.append(Header(
            f"/results/{index}\udcfe.{'json' if source == 'sascheck' else 'arf.xml'}", source, name,
            inventory=chosen.choice(INVENTORY), claimed=chosen.choice(["", name, "localhost"]),
            scanned_at=chosen.choice(TIMES),
            measured=source == "sascheck" and chosen.random() < 0.3, unreadable=unreadable))
    return headers


@pytest.mark.parametrize("seed", range(60))
def test_the_scratch_plan_is_the_rules_plan(seed):
    headers = random_fleet(seed, 4 + seed % 37)
    plan = plan_units(headers)
    try:
        planned = [(unit.files, unit.problems, unit.unreadable) for unit in plan.units()]
        assert plan.units_count == len(planned)
    finally:
        plan.close()
    assert planned == oracle(headers)


def test_a_fleet_of_both_engines_pairs_every_host():
    """Every host scanned by both engines (oscap's results under the short name): one unit
    each, sascheck's file first, nothing said of claimed names."""
    headers = []
    for index in range(500):
        headers.append(Header(f"/r/{index}.json", "sascheck", f"sas{index:04d}.example.com",
                              scanned_at="2026-11-21T10:00:00"))
        headers.append(Header(f"/r/{index}.arf.xml", "oscap", f"sas{index:04d}",
                              scanned_at="2026-11-21T11:00:00"))
    plan = plan_units(headers)
    try:
        units = list(plan.units())
    finally:
        plan.close()
    assert len(units) == plan.units_count == 500
    assert units[7].files == ["/r/7.json", "/r/7.arf.xml"]
    assert not any(unit.problems for unit in units)


def test_a_path_list_is_a_list_of_paths():
    """The fleet's paths as the controller holds them (one string and its ends): indexed,
    sliced and iterated as the list they came from, any byte of a name kept."""
    from sascheck.cli_reports import PathList

    given = ["/r/a.json", "", "/r/\udcff\u00e9.arf.xml", "/r/" + "x" * 300 + ".json"]
    paths = PathList(given)
    assert list(paths) == given and len(paths) == 4
    assert [paths[-1], paths[1], paths[2]] == [given[-1], "", given[2]]
    assert paths[1:3] == given[1:3] and paths[::-2] == given[::-2]
    with pytest.raises(IndexError):
        paths[4]
    assert list(PathList([])) == []
