"""The fleet page's data, compact enough for 10,000 hosts.

What the page shows at once (the host x rule matrix) is an index of one short row per host.
Each host's section is data the page's script builds when the host is opened. Rule texts
(rationale, sources, fix snippets) are kept once per rule, and each distinct rule result
(verdict, values, evidence) and diagram once per fleet, so identical hosts cost a few
numbers each. Both are JSON in ``<script type="application/json">`` elements: inert data
that the page's one script reads with JSON.parse and shows with textContent, never as
markup.
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Iterator, Mapping
from typing import Any

from markupsafe import Markup

from . import storage_svg, throughput_svg
from .fix_command import fix_command_parts
from .model import HostView

# One letter per XCCDF result in the matrix row; "-" where the host has no result.
RESULT_CODES = {"pass": "p", "fail": "f", "error": "e", "notapplicable": "n",
                "notchecked": "c", "unknown": "u", "informational": "i",
                "notselected": "s", "fixed": "x"}


class _Pool:
    """Each distinct value once; a value's number is its place."""

    def __init__(self) -> None:
        self.items: list[Any] = []
        self._numbers: dict[bytes, int] = {}

    def add(self, value: Any) -> int:
        # Keyed by digest, so that a diagram's text is not held twice.
        key = hashlib.sha256(json.dumps(value, sort_keys=True, separators=(",", ":"))
                             .encode("utf-8", "surrogatepass")).digest()
        number = self._numbers.get(key)
        if number is None:
            number = self._numbers[key] = len(self.items)
            self.items.append(value)
        return number


_SCRIPT_SAFE = {ord(c): f"\\u{ord(c):04x}" for c in "<>&\u2028\u2029"}


def script_json(value: Any) -> Iterator[Markup]:
    """JSON that cannot end its <script> element or open a comment (<, > and & escaped, as
    JSON allows; U+2028/2029 for old parsers), in pieces of about a megabyte: a 10,000-host
    page is never held as one string."""
    pending: list[str] = []
    size = 0
    for piece in _ENCODER.iterencode(value):
        pending.append(piece)
        size += len(piece)
        if size >= 1 << 20:
            yield Markup("".join(pending).translate(_SCRIPT_SAFE))
            pending, size = [], 0
    yield Markup("".join(pending).translate(_SCRIPT_SAFE))


_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)


def _svg_uri(svg: str) -> str:
    """An SVG as an image address: shown by <img>, where no script in it can run."""
    return "data:image/svg+xml;base64," + base64.b64encode(svg.encode("utf-8")).decode()


class FleetData:
    """Hosts added one at a time, then the page's index and details."""

    def __init__(self, snippets: Mapping[str, Mapping[str, str]],
                 regressed: Mapping[str, set[str]]) -> None:
        self._snippets = snippets
        self._regressed = regressed
        self._rule_texts: dict[str, dict[str, Any]] = {}
        self.columns: dict[str, tuple[str, str]] = {}  # rule id -> (title, severity)
        self._results = _Pool()
        self._images = _Pool()
        self._rows: list[dict[str, Any]] = []
        self._hosts: list[dict[str, Any]] = []

    def add(self, host: HostView) -> None:
        for rule in host.rules:
            if rule.id not in self.columns:
                self.columns[rule.id] = (rule.title, rule.severity)
                self._rule_texts[rule.id] = self._rule_text(rule)
        failed = host.failed_by_severity()
        slowest = host.slowest_per_core()
        self._rows.append({"n": host.name, "s": host.source, "sc": host.score,
                           "f": [failed["high"], failed["medium"], failed["low"]],
                           "r": {rule.id: rule.result for rule in host.rules},
                           "w": sorted(self._regressed.get(host.name, ())),
                           "m": round(slowest, 1) if slowest is not None else None,
                           **({"x": host.unreachable[:300]} if host.unreachable else {})})
        self._hosts.append(self._section(host))

    def _rule_text(self, rule: Any) -> dict[str, Any]:
        snippet = self._snippets.get(rule.id) or {}
        return {"rationale": rule.rationale,
                "refs": [ref.get("citation") or f"{ref.get('document', '')} \u00a7"
                         f"{ref.get('section', '')}" for ref in rule.references],
                "bash": snippet.get("bash", ""), "ansible": snippet.get("ansible", ""),
                "manual": snippet.get("manual", "")}

    def _section(self, host: HostView) -> dict[str, Any]:
        verdicts = storage_svg.device_verdicts(host.rules)
        storage = [[f"{fs.get('mountpoint', '')} on {fs.get('device', '')}",
                    self._images.add(_svg_uri(svg))]
                   for fs, svg in zip(host.storage,
                                      storage_svg.render_all(host.storage, verdicts))]
        chart = self._images.add(_svg_uri(throughput_svg.render(
            host.measurements, host.io_targets))) if host.measurements else None
        rules = [[rule.id, self._results.add([
            rule.result, rule.severity, rule.title, rule.expected, rule.actual, rule.message,
            [[str(e.get("subject", "")), str(e.get("actual", "")), str(e.get("note", "")),
              str(e.get("result", "")), str(e.get("source", ""))] for e in rule.evidence]])]
            for rule in host.sorted_rules()]
        return {"path": host.path, "profile": host.profile, "os": host.os,
                "kernel": host.kernel, "role": host.role, "reasons": host.role_reasons,
                "cpus": host.cpus, "mem": host.memory_kib, "root": host.root,
                "at": host.scanned_at,
                "problems": [*(["Problem", p] for p in host.problems),
                             *(["SAS directories", n] for n in host.discovery_notes),
                             *(["Also scanned by oscap", n] for n in host.other_engines)],
                "dirs": [[d.get("role", ""), d.get("path", ""), d.get("source", "")]
                         for d in host.sas_dirs],
                "storage": storage, "chart": chart,
                "measured": [_measurement_row(m) for m in host.measurements],
                # the copy button's command, around each rule's id (sascheck results only:
                # an ARF's host has no sascheck scan to repeat)
                "fix": fix_command_parts(host) if host.source == "sascheck" else None,
                "cores": _cores(host.measurements[0]) if host.measurements else "",
                "rules": rules}

    def page(self) -> dict[str, Any]:
        """What the template needs: columns, counts, and the two JSON blocks. Hosts are
        ordered worst first (most high, then medium, then low failures, then the lowest
        score; a host with nothing judged after those with a score), then by name."""
        ids = sorted(self.columns)
        column_of = {rule_id: index for index, rule_id in enumerate(ids)}
        counts = {rule_id: {"fail": 0, "error": 0, "pass": 0, "other": 0} for rule_id in ids}
        ranked = sorted(range(len(self._rows)), key=lambda i: (
            [-n for n in self._rows[i]["f"]], self._rows[i]["sc"] is None,
            self._rows[i]["sc"] or 0, self._rows[i]["n"]))
        rows = []
        for i in ranked:
            row = dict(self._rows[i])
            codes = ["-"] * len(ids)
            for rule_id, result in row["r"].items():
                codes[column_of[rule_id]] = RESULT_CODES.get(result, "u")
                if "x" not in row:  # a host not scanned adds nothing to a rule's counts
                    counts[rule_id][result if result in ("fail", "error", "pass")
                                    else "other"] += 1
            row["r"] = "".join(codes)
            row["w"] = [column_of[r] for r in row["w"] if r in column_of]
            rows.append(row)
        rules = [{"id": rule_id, "title": self.columns[rule_id][0],
                  "severity": self.columns[rule_id][1]} for rule_id in ids]
        return {
            "rules": rules, "counts": counts, "host_count": len(rows),
            "high_failing": sum(1 for row in rows if row["f"][0]),
            "unreachable": sum(1 for row in rows if "x" in row),
            "from_oscap": sum(1 for row in rows if row["s"] == "oscap"),
            "regressed_hosts": sum(1 for row in rows if row["w"]),
            "measured": any(row["m"] is not None for row in rows),
            "index_json": script_json({"rules": rules, "hosts": rows}),
            "details_json": script_json({"rules": self._rule_texts,
                                         "results": self._results.items,
                                         "images": self._images.items,
                                         "hosts": [self._hosts[i] for i in ranked]}),
        }


def _number(value: Any, digits: int = 1) -> str:
    """A measured number as the host page shows it; '-' for anything else (untrusted)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return "-"
    return f"{value:.{digits}f}"


def _cores(m: Mapping[str, Any]) -> str:
    basis = "physical cores" if str(m.get("cores_basis", "")).startswith("physical") else "CPUs"
    return f"{m.get('cores', '-')} {basis}"


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, dict) else {}


def _measurement_row(m: Mapping[str, Any]) -> list[str]:
    """One row of the measurements table, as the host page writes it (the values come from
    a results file: anything odd shows as '-', and the page is still built)."""
    write, read = _mapping(m.get("write")), _mapping(m.get("read"))
    p99 = [_mapping(side.get("latency_us")).get("p99", "-") for side in (write, read)]
    size, block = m.get("size_bytes"), m.get("block_bytes")
    job = (f"{m.get('jobs', '-')} \u00d7 "
           f"{_number(size / 1048576 if isinstance(size, (int, float)) else None, 0)} MiB, "
           f"{_number(block / 1024 if isinstance(block, (int, float)) else None, 0)} KiB "
           f"blocks, {'direct' if m.get('direct') else 'buffered'}"
           + (f", {m['fio_version']}" if m.get("fio_version") else ""))
    roles = m.get("roles")
    return [f"{m.get('mountpoint', '')}", f"{m.get('fstype', '')} on {m.get('device', '')}",
            "/".join(str(r) for r in roles) if isinstance(roles, list) and roles else "-",
            _number(write.get("mb_s")), _number(read.get("mb_s")),
            f"{_number(write.get('iops'), 0)} / {_number(read.get('iops'), 0)}",
            f"{p99[0]} / {p99[1]}", job]
