"""Compile the catalogue into the SCAP 1.3 data stream, deterministically."""

from __future__ import annotations

import os
from collections.abc import Mapping
from datetime import datetime, timezone
from pathlib import Path

from lxml import etree

from .. import __version__
from ..rules import Catalogue
from ..rules.check_kinds import KINDS
from .checks import GENERATORS
from .datastream import cpe_dictionary, data_stream
from .judgeable import sas_dirs_judgeable
from .oval import OvalDocument, criteria
from .oval_facts import OvalFacts
from .platforms import build_facts
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
    seconds = int(epoch) if epoch.isascii() and epoch.isdigit() else DEFAULT_EPOCH
    return datetime.fromtimestamp(seconds, tz=timezone.utc)


Fixes = Mapping[str, list[tuple[str, str]]]


def compile_catalogue(catalogue: Catalogue, when: datetime | None = None,
                      fixes: Fixes | None = None, shared: Mapping[str, str] | None = None
                      ) -> bytes:
    """The data stream; ``fixes`` (rule id -> [(fix system, text)]) become <fix> elements,
    and the ``shared`` pieces of their text they name <plain-text> elements."""
    when = when or build_time()
    timestamp = when.strftime("%Y-%m-%dT%H:%M:%S")
    oval = OvalDocument()
    oval_facts = OvalFacts(oval, catalogue.variables)
    definitions: dict[str, str] = {}
    for rule in catalogue.rules.values():
        if not KINDS[rule.kind].has_oval:
            continue  # judged by sascheck iotest, or beyond OVAL: the XCCDF rule has no check
        body = GENERATORS[rule.kind](oval_facts, rule)
        if rule.sas_filesystems:
            # Judged only where SAS directories are named and there: XOR with the negated
            # body is the body where the first holds, and an error where it errs.
            body = criteria("XOR", sas_dirs_judgeable(oval_facts), criteria("AND", body, negate=True),
                            comment="the rule, where its SAS directories can be judged")
        definitions[rule.id] = oval.definition(
            rule.title, rule.description, body,
            references=[("sascheck", rule.id)])
    # Each rule exports the site values its kind reads (rules/check_kinds.py).
    exports = {rule.id: sorted((oval_facts.external(name), name) for name in rule.values)
               if rule.id in definitions else [] for rule in catalogue.rules.values()}
    oval.share_repeated_criteria()
    oval_root = oval.root(timestamp)
    cpe_oval = OvalDocument(namespace="org.sascheck.cpe")
    cpe_facts = build_facts(cpe_oval)
    xccdf = benchmark(catalogue, __version__, when.strftime("%Y-%m-%d"), definitions, exports,
                      fixes, shared)
    dictionary = cpe_dictionary(cpe_facts, timestamp)
    cpe_oval.share_repeated_criteria()
    stream = data_stream(xccdf, oval_root, dictionary, cpe_oval.root(timestamp), timestamp)
    return etree.tostring(stream, xml_declaration=True, encoding="UTF-8", pretty_print=True)


def build(catalogue: Catalogue, output: Path, fixes: Fixes | None = None,
          shared: Mapping[str, str] | None = None) -> Path:
    output.mkdir(parents=True, exist_ok=True)
    target = output / DATASTREAM_FILE
    data = compile_catalogue(catalogue, fixes=fixes, shared=shared)
    temporary = target.with_suffix(".xml.tmp")
    temporary.write_bytes(data)
    temporary.replace(target)
    return target
