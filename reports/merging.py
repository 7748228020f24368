"""Several results files that are one host: its scan and iotest results, both engines'
results; and the names hosts claim, which a hostile host chooses."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Protocol, TypeVar

from .model import THROUGHPUT_RULE, HostView


def merge_measured(hosts: list[HostView]) -> list[HostView]:
    """A host's scan and iotest results read together become one host: its newest results,
    with the measurements (and sas_fs_throughput) of its newest iotest. Hosts without
    measurements are left as they are."""
    groups: dict[str, list[HostView]] = {}
    for host in hosts:
        if host.source == "sascheck":
            groups.setdefault(host.key, []).append(host)
    superseded: set[int] = set()
    for group in groups.values():
        measured = [host for host in group if host.measurements]
        if len(group) < 2 or not measured:
            continue
        newest = max(group, key=lambda host: host.scanned_at)
        latest = max(measured, key=lambda host: host.scanned_at)
        if latest is not newest:
            newest.measurements = latest.measurements
            newest.rules = [r for r in newest.rules if r.id != THROUGHPUT_RULE] + [
                r for r in latest.rules if r.id == THROUGHPUT_RULE]
            newest.path = f"{newest.path} + {latest.path}"
        superseded.update(id(host) for host in group if host is not newest)
    return [host for host in hosts if id(host) not in superseded]


class Named(Protocol):
    """What pairing and claimed names read of a host: a HostView, or a fleet_read.Header."""
    name: str
    inventory: str
    claimed: str
    scanned_at: str

    @property
    def key(self) -> str: ...


N = TypeVar("N", bound=Named)


def pairs_of(ours: list[N], theirs: list[N]) -> list[tuple[N, N]]:
    """(sascheck host, oscap host) that are one host. Hosts the inventory names meet on that
    name alone: what a host calls itself never joins it to another host's results. Files a
    person passed meet on the host name, or, where one of the two names has no domain, the
    one host whose name starts with it (db1 and db1.example.com); two hosts of one short
    name in different domains are never paired."""
    def full(host: N) -> str:
        return host.name.strip().lower()

    by_key: dict[str, list[N]] = {}
    by_short: dict[str, list[N]] = {}
    for host in ours:
        by_key.setdefault(host.key, []).append(host)
        if not host.inventory:
            by_short.setdefault(full(host).split(".", 1)[0], []).append(host)
    pairs = []
    for other in theirs:
        candidates = by_key.get(other.key, [])
        if not candidates and not other.inventory:
            name = full(other)
            candidates = [host for host in by_short.get(name.split(".", 1)[0], [])
                          if "." not in name or "." not in full(host)]
        if len({host.key for host in candidates}) == 1:
            pairs.append((max(candidates, key=lambda host: host.scanned_at), other))
    return pairs


def flag_claimed_names(hosts: list[HostView]) -> list[HostView]:
    """Say where a host's own name differs from its inventory name, and where results of
    different hosts claim one host name (a cloned image, or a host posing as another)."""
    claimants = claimants_of(hosts)
    for host in hosts:
        host.problems.extend(claim_problems(host, claimants))
    return hosts


def claimants_of(hosts: Iterable[Named]) -> dict[str, int]:
    """Each host name claimed, lower case -> how many hosts (keys) claim it."""
    claimants: dict[str, set[str]] = {}
    for host in hosts:
        claimed = (host.claimed or host.name).strip().lower()
        if claimed:
            claimants.setdefault(claimed, set()).add(host.key)
    return {claimed: len(keys) for claimed, keys in claimants.items()}


class Claimant(Protocol):
    """What claim_problems reads of a host."""
    name: str
    inventory: str
    claimed: str


def claim_problems(host: Claimant, claimants: Mapping[str, int]) -> list[str]:
    problems = []
    claimed = (host.claimed or host.name).strip()
    if host.inventory and claimed and _short(claimed) != _short(host.inventory):
        problems.append(f"the host calls itself {claimed!r}; it is reported under "
                        f"its inventory name {host.inventory!r}")
    others = claimants.get(claimed.lower(), 1) - 1
    if others > 0:
        problems.append(f"{others} other host(s) of this report also call themselves "
                        f"{claimed!r}: their results are kept apart")
    return problems


def _short(name: str) -> str:
    return name.strip().lower().split(".", 1)[0]


def merge_engines(hosts: list[HostView]) -> list[HostView]:
    """A host scanned by sascheck and by oscap is one host: sascheck's newest results (they
    carry the evidence), with a line per oscap result saying where the two agree and where
    they differ. Hosts scanned by one engine are left as they are."""
    ours = [host for host in hosts if host.source == "sascheck"]
    theirs = [host for host in hosts if host.source == "oscap"]
    dropped: set[int] = set()
    for kept, other in pairs_of(ours, theirs):
        verdicts = {rule.id: rule.result for rule in kept.rules}
        differ = [f"{rule.id} (sascheck {verdicts[rule.id]}, oscap {rule.result})"
                  for rule in other.rules
                  if rule.id in verdicts and rule.result != verdicts[rule.id]]
        same = sum(1 for rule in other.rules if verdicts.get(rule.id) == rule.result)
        kept.other_engines.append(
            f"{other.path} ({other.scanned_at or 'time unknown'}): the engines agree on "
            f"{same} rules" + (f"; differ on {', '.join(differ)}" if differ else ""))
        dropped.add(id(other))
    return [host for host in hosts if id(host) not in dropped]
