"""Self-contained HTML reports (jinja2 with autoescaping): one host, or a fleet.

Inline CSS and JavaScript only, no network fetches, and a Content-Security-Policy that
allows exactly the one script sascheck wrote (by its hash). Everything that came from a
host or a results file is escaped by the template engine or, in the SVG, by html.escape.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path

import jinja2
from markupsafe import Markup

from .. import __version__
from .drift import Change, marked
from .fleet import FleetWriter
from .model import HostView
from .section import host_section, to_html

TEMPLATES = Path(__file__).resolve().parent / "templates"
Snippets = Mapping[str, Mapping[str, str]]


def _environment() -> jinja2.Environment:
    env = jinja2.Environment(loader=jinja2.FileSystemLoader(str(TEMPLATES)),
                             autoescape=True, undefined=jinja2.StrictUndefined,
                             trim_blocks=True, lstrip_blocks=True)
    return env


def _assets() -> dict[str, object]:
    script = (TEMPLATES / "report.js").read_text(encoding="utf-8")
    digest = base64.b64encode(hashlib.sha256(script.encode("utf-8")).digest()).decode()
    return {"css": Markup((TEMPLATES / "report.css").read_text(encoding="utf-8")),
            "script": Markup(script), "script_hash": f"sha256-{digest}",
            "version": __version__}


def render_host(host: HostView, snippets: Snippets) -> str:
    return _environment().get_template("host.html.j2").render(
        title=f"sascheck: {host.name}", subtitle="SAS tuning report",
        section=to_html(host_section(host, snippets)), **_assets())


def render_drift(changes: Sequence[Change], old: str, new: str) -> str:
    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    return _environment().get_template("drift.html.j2").render(
        title="sascheck: what changed", subtitle=f"{old} \u2192 {new}, built {stamp}",
        changes=changes, worse=sum(change.worse for change in changes),
        hosts=len({change.host for change in changes}), marked=marked, **_assets())


def render_fleet(hosts: Iterable[HostView], snippets: Snippets,
                 regressed: Mapping[str, set[str]] | None = None) -> Iterator[str]:
    """The fleet page, in pieces: summary, rule counts and the host x rule matrix at once;
    each host's section built by the page's script when opened (reports/fleet.py)."""
    writer = FleetWriter(snippets, regressed or {})
    for host in hosts:
        writer.add(host)
    return fleet_page(writer, regressed is not None)


def fleet_page(writer: FleetWriter, baseline: bool) -> Iterator[str]:
    """The fleet page of the hosts ``writer`` holds (reports/fleet_read.fill_fleet fills
    it, one host at a time); ``baseline``: the page says which got worse."""
    from ..rules import load_catalogue
    from ..scanner.fix_order import catalogue_ranks

    stamp = datetime.now(timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    page = writer.page()
    # The rule table in the order a window fixes them (issue 48); rules this release does
    # not know (older results) after those, by id.
    ranks = catalogue_ranks(load_catalogue(), writer.columns)
    rules_by_fix = sorted(page["rules"], key=lambda rule: (ranks.get(rule["id"], 1 << 30),
                                                          rule["id"]))
    return _environment().get_template("fleet.html.j2").generate(
        title="sascheck: fleet report", subtitle=f"{page['host_count']} hosts, built {stamp}",
        baseline=baseline, rules_by_fix=rules_by_fix, **page, **_assets())
