"""A scan's results for Prometheus: node_exporter's textfile-collector format (the text
exposition format), built with prometheus_client so that names, label escaping and types
are the library's, not ours.

Each rule is a state set (one series per possible result, 1 for the one it has), so a rule
that goes from fail to pass changes a value instead of ending one series and starting
another, and alerts can say ``sascheck_rule_result{result="fail"} == 1``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime
from typing import Any

from .model import SEVERITY_ORDER, HostView

RESULTS = ("pass", "fail", "error", "unknown", "notapplicable", "notchecked", "informational")
JUDGED = ("pass", "fail", "error")  # as the reports' score counts them


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


def render_fleet(hosts: Sequence[HostView], version: str) -> str:
    """A fleet's metrics, for the controller's textfile collector: how many hosts have each
    result for each rule, each host's score and failures, and the hosts not scanned (their
    rules count nowhere: they were not judged)."""
    from prometheus_client import CollectorRegistry, Gauge, generate_latest

    registry = CollectorRegistry()

    def gauge(name: str, documentation: str, labels: tuple[str, ...] = ()) -> Gauge:
        return Gauge(name, documentation, labels, registry=registry)

    gauge("sascheck_fleet_info", "The sascheck version that built the fleet's metrics",
          ("version",)).labels(version).set(1)
    scanned = [host for host in hosts if not host.unreachable]
    state = gauge("sascheck_fleet_hosts", "Hosts in the results, scanned or not",
                  ("state",))
    state.labels("scanned").set(len(scanned))
    state.labels("not_scanned").set(len(hosts) - len(scanned))
    counts: dict[tuple[str, str, str], int] = {}
    for host in scanned:
        for rule in host.rules:
            key = (rule.id, rule.severity, rule.result)
            counts[key] = counts.get(key, 0) + 1
    per_rule = gauge("sascheck_fleet_rule_hosts", "Scanned hosts with each result for each rule",
                     ("rule", "severity", "result"))
    for (rule_id, severity, result), count in sorted(counts.items()):
        per_rule.labels(rule_id, severity, result).set(count)
    score = gauge("sascheck_fleet_host_score_ratio", "Each scanned host's share of judged "
                  "rules that pass; NaN when none was judged", ("host",))
    failed = gauge("sascheck_fleet_host_failed_rules", "Each scanned host's rules that "
                   "failed (fail or error), by severity", ("host", "severity"))
    for host in scanned:
        name = host.inventory or host.name
        score.labels(name).set(host.count("pass") / host.judged if host.judged
                               else float("nan"))
        for severity, number in host.failed_by_severity().items():
            failed.labels(name, severity).set(number)
    return generate_latest(registry).decode("utf-8")
