"""A scan's results for Prometheus: node_exporter's textfile-collector format (the text
exposition format), built with prometheus_client so that names, label escaping and types
are the library's, not ours.

Each rule is a state set (one series per possible result, 1 for the one it has), so a rule
that goes from fail to pass changes a value instead of ending one series and starting
another, and alerts can say ``sascheck_rule_result{result="fail"} == 1``.
"""

from __future__ import annotations

import contextlib
import tempfile
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from ..scanner.results import JUDGED
from .model import SEVERITY_ORDER, HostView
from .scratch import blob, scratch_db

RESULTS = ("pass", "fail", "error", "unknown", "notapplicable", "notchecked", "informational")


def render(data: Mapping[str, Any], duration_seconds: float, version: str) -> str:
    """The metrics of one scan (``sascheck-result/1`` data) as exposition text."""
    from prometheus_client import CollectorRegistry, Gauge, generate_latest

    registry = CollectorRegistry()

    def gauge(name: str, documentation: str, labels: tuple[str, ...] = ()) -> Gauge:
        return Gauge(name, documentation, labels, registry=registry)

    rules = list(data["rules"])
    gauge("sascheck_info", "The sascheck version, profile and host role of the last scan",
          ("version", "profile", "role")).labels(
        version, str(data["profile"]), str(data["role"]["name"])).set(1)
    result = gauge("sascheck_rule_result",
                   "1 for the result each rule had in the last scan, 0 for the others",
                   ("rule", "severity", "result"))
    for rule in rules:
        for name in RESULTS:
            result.labels(rule["id"], rule["severity"], name).set(rule["result"] == name)
    judged = [rule for rule in rules if rule["result"] in JUDGED]
    gauge("sascheck_score_ratio", "Share of the judged rules (pass, fail, error) that pass; "
          "NaN when none was judged").set(
        sum(rule["result"] == "pass" for rule in judged) / len(judged) if judged
        else float("nan"))
    failed = gauge("sascheck_failed_rules", "Rules that failed (fail or error), by severity",
                   ("severity",))
    for severity in SEVERITY_ORDER:
        failed.labels(severity).set(sum(rule["severity"] == severity
                                        and rule["result"] in ("fail", "error")
                                        for rule in rules))
    gauge("sascheck_scan_timestamp_seconds", "When the last scan ran (Unix time)").set(
        datetime.fromisoformat(str(data["scanned_at"])).timestamp())
    gauge("sascheck_scan_duration_seconds", "How long the last scan took").set(
        duration_seconds)
    return generate_latest(registry).decode("utf-8")


@dataclass(frozen=True)
class HostMetrics:
    """What a fleet's metrics take from one host: a few numbers and its verdicts."""
    name: str  # the inventory's name for it, else its own
    scanned: bool
    score: float  # the share of judged rules that pass; NaN when none was judged
    failed: tuple[int, ...]  # rules failed (fail or error), by SEVERITY_ORDER
    verdicts: tuple[tuple[str, str, str], ...]  # (rule, severity, result)


def host_metrics(host: HostView) -> HostMetrics:
    failed = host.failed_by_severity()
    return HostMetrics(host.inventory or host.name, not host.unreachable,
                       host.count("pass") / host.judged if host.judged else float("nan"),
                       tuple(failed[severity] for severity in SEVERITY_ORDER),
                       tuple((rule.id, rule.severity, rule.result) for rule in host.rules))


def render_fleet(hosts: Sequence[HostView], version: str) -> str:
    """A fleet's metrics from hosts in memory (render_fleet_stream's, at once)."""
    return "".join(render_fleet_stream(map(host_metrics, hosts), version))


_SCORE = ("sascheck_fleet_host_score_ratio",
          "Each scanned host's share of judged rules that pass; NaN when none was judged")
_FAILED = ("sascheck_fleet_host_failed_rules",
           "Each scanned host's rules that failed (fail or error), by severity")


def render_fleet_stream(hosts: Iterable[HostMetrics], version: str) -> Iterator[str]:
    """A fleet's metrics, for the controller's textfile collector: how many hosts have each
    result for each rule, each host's score and failures, and the hosts not scanned (their
    rules count nowhere: they were not judged). Hosts come one at a time: the counts are
    kept, each host's own series go to scratch files (a family's samples are written
    together), so memory does not grow with the fleet (issue 52). A name two hosts give
    has the first one's series (a series is one host's)."""
    from prometheus_client import CollectorRegistry, Gauge, generate_latest
    from prometheus_client.utils import floatToGoString as untyped_number

    def number_text(value: float) -> str:  # the library's numbers, as generate_latest's
        return str(untyped_number(value))  # type: ignore[no-untyped-call]

    counts: dict[tuple[str, str, str], int] = {}
    scanned = not_scanned = 0
    # the names given a series so far: on disk, as a fleet's names are many (scratch.py)
    named = scratch_db("CREATE TABLE named (name BLOB PRIMARY KEY) WITHOUT ROWID;")
    with contextlib.closing(named), tempfile.TemporaryFile("w+", encoding="utf-8", errors="surrogatepass") as scores, \
            tempfile.TemporaryFile("w+", encoding="utf-8", errors="surrogatepass") as failed:
        for host in hosts:
            if not host.scanned:
                not_scanned += 1
                continue
            scanned += 1
            for key in host.verdicts:
                counts[key] = counts.get(key, 0) + 1
            if not named.execute("INSERT OR IGNORE INTO named VALUES (?)",
                                 (blob(host.name),)).rowcount:
                continue  # a second host of this name
            label = _label_value(host.name)
            scores.write(f'{_SCORE[0]}{{host="{label}"}} {number_text(host.score)}\n')
            failed.writelines(f'{_FAILED[0]}{{host="{label}",severity="{severity}"}} '
                              f"{number_text(number)}\n"
                              for severity, number in zip(SEVERITY_ORDER, host.failed))
        # The families of a few series each, by the library.
        registry = CollectorRegistry()

        def gauge(name: str, documentation: str, labels: tuple[str, ...] = ()) -> Gauge:
            return Gauge(name, documentation, labels, registry=registry)

        gauge("sascheck_fleet_info", "The sascheck version that built the fleet's metrics",
              ("version",)).labels(version).set(1)
        state = gauge("sascheck_fleet_hosts", "Hosts in the results, scanned or not",
                      ("state",))
        state.labels("scanned").set(scanned)
        state.labels("not_scanned").set(not_scanned)
        per_rule = gauge("sascheck_fleet_rule_hosts",
                         "Scanned hosts with each result for each rule",
                         ("rule", "severity", "result"))
        for (rule_id, severity, result), count in sorted(counts.items()):
            per_rule.labels(rule_id, severity, result).set(count)
        yield generate_latest(registry).decode("utf-8")
        # Each host's, as generate_latest writes a family (HELP, TYPE, samples).
        for (name, documentation), scratch in ((_SCORE, scores), (_FAILED, failed)):
            yield f"# HELP {name} {documentation}\n# TYPE {name} gauge\n"
            scratch.seek(0)
            while piece := scratch.read(1 << 20):
                yield piece


def _label_value(text: str) -> str:
    """A label value as the exposition format escapes it (prometheus_client's own rule)."""
    return text.replace("\\", r"\\").replace("\n", r"\n").replace('"', r'\"')
