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
import contextlib
import hashlib
import json
import tempfile
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import IO, Any

from markupsafe import Markup

from ..scanner.fix_order import FIX_STEPS, impact_line
from . import storage_svg, throughput_svg
from .failing import not_for_limit
from .fix_command import fix_command_parts
from .model import HostView

# One letter per XCCDF result in the matrix row; "-" where the host has no result.
RESULT_CODES = {"pass": "p", "fail": "f", "error": "e", "notapplicable": "n",
                "notchecked": "c", "unknown": "u", "informational": "i",
                "notselected": "s", "fixed": "x"}


class _SpooledPool:
    """Each distinct value once, written to a file as it first comes (JSON safe inside a
    <script>, comma separated); a value's number is its place. Only digests are held."""

    def __init__(self, handle: IO[str]) -> None:
        self._handle = handle
        self._numbers: dict[bytes, int] = {}

    def add(self, pooled: Pooled) -> int:
        text, key = pooled
        number = self._numbers.get(key)
        if number is None:
            number = self._numbers[key] = len(self._numbers)
            self._handle.write(("," if number else "") + text)
        return number


# A value for a pool, encoded where it was built (a worker): its JSON text, script-safe,
# and the digest that tells it apart.
Pooled = tuple[str, bytes]


def pooled(value: Any) -> Pooled:
    text = _ENCODER.encode(value).translate(_SCRIPT_SAFE)
    return text, hashlib.sha256(text.encode("utf-8", "surrogatepass")).digest()[:16]


@dataclass(frozen=True)
class EncodedSection:
    """A host's section as JSON text, but for the numbers of its pooled values: the head
    (every other field, an object left open), then rule results, diagrams and the chart."""
    head: str
    rules: list[tuple[str, Pooled]]
    storage: list[tuple[str, Pooled]]
    chart: Pooled | None


def encode_section(section: dict[str, Any]) -> EncodedSection:
    rest = {key: value for key, value in section.items()
            if key not in ("rules", "storage", "chart")}
    return EncodedSection(
        _ENCODER.encode(rest)[:-1].translate(_SCRIPT_SAFE),
        [(rule_id, pooled(value)) for rule_id, value in section["rules"]],
        [(_ENCODER.encode(label).translate(_SCRIPT_SAFE), pooled(uri))
         for label, uri in section["storage"]],
        pooled(section["chart"]) if section["chart"] is not None else None)


_SCRIPT_SAFE = {ord(c): f"\\u{ord(c):04x}" for c in "<>&\u2028\u2029"}


def script_json(value: Any, prefix: str = "") -> Iterator[Markup]:
    """JSON that cannot end its <script> element or open a comment (<, > and & escaped, as
    JSON allows; U+2028/2029 for old parsers), in pieces of about a megabyte: a 10,000-host
    page is never held as one string."""
    pending: list[str] = [prefix]
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


def rule_info(rule: Any) -> tuple[str, str, str, list[str]]:
    """A rule as its column and its texts show it: title, severity, rationale, references."""
    return (rule.title, rule.severity, rule.rationale,
            [ref.get("citation") or f"{ref.get('document', '')} \u00a7{ref.get('section', '')}"
             for ref in rule.references])


def tuned_shown(host: HostView) -> str:
    """The fleet's tuned column: the active profile, with the tuned release beside it."""
    version = f"tuned {host.tuned_version}" if host.tuned_version else ""
    if host.tuned_active:
        return f"{host.tuned_active} ({version})" if version else host.tuned_active
    return f"none active ({version})" if version else ""


def host_row(host: HostView) -> dict[str, Any]:
    """The host's row of the matrix, before the fleet numbers it: verdicts by rule id."""
    failed = host.failed_by_severity()
    slowest = host.slowest_per_core()
    return {"n": host.name, "s": host.source, "sc": host.score,
            # what the score is of: it is shown beside it, everywhere (issue 48)
            "j": host.judged, "nj": host.not_judged,
            "i": bool(host.inventory),  # named by the controller (identity.py)
            # what an administrator sorts a fleet by, cut to what a column shows
            "o": host.os[:80], "k": host.kernel[:80], "t": tuned_shown(host)[:80],
            "ro": host.role[:40],
            "f": [failed["high"], failed["medium"], failed["low"]],
            "r": {rule.id: rule.result for rule in host.rules},
            "m": round(slowest, 1) if slowest is not None else None,
            **({"x": host.unreachable[:300]} if host.unreachable else {})}


def _fix_place(host: HostView, rule: Any) -> list[str]:
    """A failing rule's place in the host's window, as the host page shows it: its step,
    why it sits there, and what the papers measured ("" where it has none; a failing rule of
    sascheck's results only)."""
    if rule.result != "fail" or host.source != "sascheck":
        return []
    step = rule.fix_step if rule.fix_step in FIX_STEPS else ""
    measured = impact_line(rule.impact) if isinstance(rule.impact, dict) else ""
    return [step, rule.fix_reason or FIX_STEPS.get(step, ""), measured]


def host_section(host: HostView) -> dict[str, Any]:
    """The host's section, its rule results and images inline (FleetWriter pools them)."""
    verdicts = storage_svg.device_verdicts(host.rules)
    storage = [[f"{fs.get('mountpoint', '')} on {fs.get('device', '')}", _svg_uri(svg)]
               for fs, svg in zip(host.storage, storage_svg.render_all(host.storage, verdicts))]
    chart = _svg_uri(throughput_svg.render(host.measurements, host.io_targets)) \
        if host.measurements else None
    rules = [[rule.id, [
        rule.result, rule.severity, rule.title, rule.expected, rule.actual, rule.message,
        [[str(e.get("subject", "")), str(e.get("actual", "")), str(e.get("note", "")),
          str(e.get("result", "")), str(e.get("source", ""))] for e in rule.evidence],
        *_fix_place(host, rule)]]
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


class FleetWriter:
    """Hosts added one at a time: each row kept (a few bytes per host and rule), each
    section, distinct rule result and image written to a scratch file at once; then the
    page's index and details, the details read back from there as they are written out."""

    def __init__(self, snippets: Mapping[str, Mapping[str, str]],
                 regressed: Mapping[str, set[str]],
                 groups: Mapping[str, list[str]] | None = None) -> None:
        self._snippets = snippets
        self._regressed = regressed
        self._groups = groups or {}
        self._rule_texts: dict[str, dict[str, Any]] = {}
        self.columns: dict[str, tuple[str, str]] = {}  # rule id -> (title, severity)
        # Unnamed scratch files (gone with the process, whatever happens to it), held
        # open from here to the page's last piece: close() ends them.
        self._scratch = contextlib.ExitStack()
        self._files = {part: self._scratch.enter_context(tempfile.TemporaryFile(  # noqa: SIM115
            "w+", encoding="utf-8", errors="surrogatepass", prefix="sascheck-fleet-"))
            for part in ("results", "images", "hosts")}
        self._results = _SpooledPool(self._files["results"])
        self._images = _SpooledPool(self._files["images"])
        self._rows: list[dict[str, Any]] = []
        self._seen: dict[str, int] = {}  # rule id -> its letter's place in a row's codes

    def add(self, host: HostView) -> None:
        self.add_built(host_row(host), encode_section(host_section(host)),
                       {rule.id: rule_info(rule) for rule in host.rules
                        if rule.id not in self.columns})

    def add_built(self, row: dict[str, Any], section: EncodedSection,
                  infos: Mapping[str, tuple[str, str, str, list[str]]]) -> None:
        for rule_id in row["r"]:
            if rule_id not in self.columns and rule_id in infos:
                title, severity, rationale, refs = infos[rule_id]
                self.columns[rule_id] = (title, severity)
                snippet = self._snippets.get(rule_id) or {}
                self._rule_texts[rule_id] = {
                    "rationale": rationale, "refs": refs, "bash": snippet.get("bash", ""),
                    "ansible": snippet.get("ansible", ""), "manual": snippet.get("manual", "")}
        rules = ",".join(f"[{_ENCODER.encode(rule_id).translate(_SCRIPT_SAFE)},"
                         f"{self._results.add(value)}]" for rule_id, value in section.rules)
        storage = ",".join(f"[{label},{self._images.add(uri)}]"
                           for label, uri in section.storage)
        chart = "null" if section.chart is None else str(self._images.add(section.chart))
        self._files["hosts"].write(("," if self._rows else "") + section.head
                                   + f',"rules":[{rules}],"storage":[{storage}],'
                                   f'"chart":{chart}}}')
        # The row, compact: verdicts as one letter per rule in the order rules were first
        # seen (page() puts them in column order), the rest short.
        for rule_id in row["r"]:
            self._seen.setdefault(rule_id, len(self._seen))
        codes = ["-"] * len(self._seen)
        for rule_id, result in row["r"].items():
            codes[self._seen[rule_id]] = RESULT_CODES.get(result, "u")
        row["r"] = "".join(codes)
        row["d"] = len(self._rows)  # the section's place in details.hosts
        row["w"] = sorted(self._regressed.get(row["n"], ()))
        row["g"] = ", ".join(self._groups.get(row["n"], ()))[:200]
        self._rows.append(row)

    def page(self) -> dict[str, Any]:
        """What the template needs: columns, counts, and the two JSON blocks. Hosts are
        ordered worst first (most high, then medium, then low failures, then the lowest
        score; a host with nothing judged after those with a score), then by name."""
        ids = sorted(self.columns)
        column_of = {rule_id: index for index, rule_id in enumerate(ids)}
        counts = {rule_id: {"fail": 0, "error": 0, "pass": 0, "other": 0} for rule_id in ids}
        self._rows.sort(key=lambda row: ([-n for n in row["f"]], row["sc"] is None,
                                         row["sc"] or 0, row["n"]))
        # each column's letter in the rows' codes (first seen order)
        places = [self._seen[rule_id] for rule_id in ids]
        counted = {"f": "fail", "e": "error", "p": "pass"}
        for row in self._rows:
            letters = row["r"]
            codes = "".join(letters[place] if place < len(letters) else "-"
                            for place in places)
            if "x" not in row:  # a host not scanned adds nothing to a rule's counts
                for rule_id, code in zip(ids, codes):
                    if code != "-":
                        counts[rule_id][counted.get(code, "other")] += 1
            row["r"] = codes
            row["w"] = [column_of[r] for r in row["w"] if r in column_of]
        rows = self._rows
        # the rule view lists only names --limit reads as that one host (failing.py)
        for row, why in zip(rows, not_for_limit([(row["n"], row.pop("i", False)) for row in rows],
                                                self._groups)):
            if why:
                row["nl"] = why
        rules = [{"id": rule_id, "title": self.columns[rule_id][0],
                  "severity": self.columns[rule_id][1]} for rule_id in ids]
        return {
            "rules": rules, "counts": counts, "host_count": len(rows),
            "high_failing": sum(1 for row in rows if row["f"][0]),
            "unreachable": sum(1 for row in rows if "x" in row),
            "from_oscap": sum(1 for row in rows if row["s"] == "oscap"),
            "regressed_hosts": sum(1 for row in rows if row["w"]),
            "measured": any(row["m"] is not None for row in rows),
            "grouped": any(row["g"] for row in rows),
            "index_json": script_json({"rules": rules, "hosts": rows, "steps": FIX_STEPS}),
            "details_json": self._details(),
        }

    def _details(self) -> Iterator[Markup]:
        """{"rules": ..., "results": [...], "images": [...], "hosts": [...]}, the lists read
        back from the scratch files in pieces; the scratch is removed once written."""
        try:
            yield from script_json(self._rule_texts, prefix='{"rules":')
            for part in ("results", "images", "hosts"):
                yield Markup(f',"{part}":[')
                handle = self._files[part]
                handle.seek(0)
                while piece := handle.read(1 << 20):
                    yield Markup(piece)
                yield Markup("]")
            yield Markup("}")
        finally:
            self.close()

    def close(self) -> None:
        self._scratch.close()


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
