"""A scan's results for Prometheus: node_exporter's textfile-collector format (the text
exposition format), built with prometheus_client so that names, label escaping and types
are the library's, not ours.

Each rule is a state set (one series per possible result, 1 for the one it has), so a rule
that goes from fail to pass changes a value instead of ending one series and starting
another, and alerts can say ``sascheck_rule_result{result="fail"} == 1``.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any

from .model import SEVERITY_ORDER

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
