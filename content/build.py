"""Compile the catalogue into the SCAP 1.3 data stream, deterministically."""

from __future__ import annotations

import os
from collections.abc import Mapping
from datetime import datetime, timezone
from pathlib import Path

from lxml import etree

from .. import __version__
from ..rules import Catalogue
from .checks import GENERATORS
from .datastream import cpe_dictionary, data_stream
from .oval import OvalDocument
from .platforms import build_facts
from .shared import Shared
from .xccdf import benchmark

DATASTREAM_FILE = "sascheck-ds.xml"
DEFAULT_EPOCH = 1767225600  # 2026-01-01T00:00:00Z: fixed, so builds are reproducible
CONTENT_DIR = Path(__file__).resolve().parent


def default_output() -> Path:
    """content/ in a source checkout (where the data stream is kept), else the current
    directory: an installed package is no place to write."""
    if (CONTENT_DIR.parent / "pyproject.toml").exists() and (CONTENT_DIR.parent / "rules").is_dir():
        return CONTENT_DIR
    return Path.cwd()


def build_time() -> datetime:
    epoch = os.environ.get("SOURCE_DATE_EPOCH", "").strip()
    seconds = int(epoch) if epoch.isdigit() else DEFAULT_EPOCH
    return datetime.fromtimestamp(seconds, tz=timezone.utc)


def _external_dependencies(oval: etree._Element, definition_id: str) -> list[tuple[str, str]]:
    """(external variable id, site value name) pairs a definition depends on."""
    by_id = {element.get("id"): element for element in oval.iter() if element.get("id")}
    seen: set[str] = set()
    pending = [definition_id]
    externals: list[tuple[str, str]] = []
    while pending:
        current = pending.pop()
        if current in seen or current not in by_id:
            continue
        seen.add(current)
        element = by_id[current]
        if etree.QName(element).localname == "external_variable":
            externals.append((current, element.get("comment", "")))
            continue
        for node in element.iter():
            for attribute in ("test_ref", "object_ref", "state_ref", "var_ref"):
                reference = node.get(attribute)
                if reference:
                    pending.append(reference)
            if node.text and node.text.startswith("oval:") and etree.QName(node).localname in (
                    "object_reference", "filter", "var_ref"):
                pending.append(node.text)
    return sorted(externals)


Fixes = Mapping[str, list[tuple[str, str]]]


def compile_catalogue(catalogue: Catalogue, when: datetime | None = None,
                      fixes: Fixes | None = None) -> bytes:
    """The data stream; ``fixes`` (rule id -> [(fix system, text)]) become <fix> elements."""
    when = when or build_time()
    timestamp = when.strftime("%Y-%m-%dT%H:%M:%S")
    oval = OvalDocument()
    shared = Shared(oval, catalogue.variables)
    definitions: dict[str, str] = {}
    for rule in catalogue.rules.values():
        body = GENERATORS[rule.kind](shared, rule)
        definitions[rule.id] = oval.definition(
            rule.title, rule.description, body,
            references=[("sascheck", rule.id)])
    oval_root = oval.root(timestamp)
    exports = {rule_id: _external_dependencies(oval_root, definition)
               for rule_id, definition in definitions.items()}
    cpe_oval = OvalDocument(namespace="org.sascheck.cpe")
    facts = build_facts(cpe_oval)
    xccdf = benchmark(catalogue, __version__, when.strftime("%Y-%m-%d"), definitions, exports,
                      fixes)
    stream = data_stream(xccdf, oval_root, cpe_dictionary(facts, timestamp),
                         cpe_oval.root(timestamp), timestamp)
    return etree.tostring(stream, xml_declaration=True, encoding="UTF-8", pretty_print=True)


def build(catalogue: Catalogue, output: Path, fixes: Fixes | None = None) -> Path:
    output.mkdir(parents=True, exist_ok=True)
    target = output / DATASTREAM_FILE
    data = compile_catalogue(catalogue, fixes=fixes)
    temporary = target.with_suffix(".xml.tmp")
    temporary.write_bytes(data)
    temporary.replace(target)
    return target
