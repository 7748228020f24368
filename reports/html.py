"""Self-contained HTML reports (jinja2 with autoescaping): one host, or a fleet.

Inline CSS and JavaScript only, no network fetches, and a Content-Security-Policy that
allows exactly the one script sascheck wrote (by its hash). Everything that came from a
host or a results file is escaped by the template engine or, in the SVG, by html.escape.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path

import jinja2
from markupsafe import Markup

from .. import __version__
from . import storage_svg, throughput_svg
from .drift import Change
from .model import HostView

TEMPLATES = Path(__file__).resolve().parent / "templates"
Snippets = Mapping[str, Mapping[str, str]]


def _environment() -> jinja2.Environment:
    return jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)),
                              autoescape=True, undefined=jinja2.StrictUndefined,
                              trim_blocks=True, lstrip_blocks=True)


def _assets() -> dict[str, object]:
    script = (TEMPLATES / "report.js").read_text(encoding="utf-8")
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode()
    return {"css": Markup((TEMPLATES / "report.css").read_text(encoding="utf-8")),
            "script": Markup(script), "script_hash": f"sha256-{digest}",
            "version": __version__}


def _svgs(host: HostView) -> list[Markup]:
    verdicts = storage_svg.device_verdicts(host.rules)
    return [Markup(storage_svg.render(fs, verdicts)) for fs in host.storage]


def _chart(host: HostView) -> Markup:
    return Markup(throughput_svg.render(host.measurements, host.io_targets))


def render_host(host: HostView, snippets: Snippets) -> str:
    return _environment().get_template("host.html.j2").render(
        title=f"sascheck: {host.name}", subtitle="SAS tuning report",
        host=host, snippets=snippets, svgs=[_svgs(host)], charts=[_chart(host)], **_assets())


def render_drift(changes: Sequence[Change], old: str, new: str) -> str:
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return _environment().get_template("drift.html.j2").render(
        title="sascheck: what changed", subtitle=f"{old} \u2192 {new}, built {stamp}",
        changes=changes, worse=sum(change.worse for change in changes),
        hosts=len({change.host for change in changes}), **_assets())


def render_fleet(hosts: Sequence[HostView], snippets: Snippets,
                 regressed: Mapping[str, set[str]] | None = None) -> str:
    ordered = sorted(hosts, key=lambda h: (h.badness, h.name))
    marks = regressed or {}  # host -> rules worse than the baseline
    rule_ids: dict[str, object] = {}
    for host in ordered:
        for rule in host.rules:
            rule_ids.setdefault(rule.id, rule)
    rules = sorted(rule_ids.values(), key=lambda r: r.id)  # type: ignore[attr-defined]
    counts = {rule.id: {"fail": 0, "error": 0, "pass": 0, "other": 0}  # type: ignore[attr-defined]
              for rule in rules}
    results = []
    for host in ordered:
        by_id = {rule.id: rule.result for rule in host.rules}
        results.append(by_id)
        for rule_id, result in by_id.items():
            counts[rule_id][result if result in ("fail", "error", "pass") else "other"] += 1
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return _environment().get_template("fleet.html.j2").render(
        title="sascheck: fleet report", subtitle=f"{len(ordered)} hosts, built {stamp}",
        hosts=ordered, rules=rules, counts=counts, results=results, snippets=snippets,
        high_failing=sum(1 for h in ordered if h.failed_by_severity()["high"]),
        svgs=[_svgs(host) for host in ordered], charts=[_chart(host) for host in ordered],
        measured=any(host.measurements for host in ordered),
        baseline=regressed is not None, regressed=marks,
        regressed_hosts=sum(1 for host in ordered if marks.get(host.name)),
        **_assets())
