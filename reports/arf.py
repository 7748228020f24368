"""Read oscap's ARF (--results-arf) for the sascheck data stream: rule results per host.

Streaming (lxml iterparse, elements cleared as they are read) so a fleet of large ARF
files stays within memory.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from lxml import etree

from ..rules.errors import UserInputError
from .arf_oval import NS_ARF, OvalItem, OvalReader, parent_tag

NS_XCCDF = "{http://checklists.nist.gov/xccdf/1.2}"
RULE_PREFIX = "xccdf_org.sascheck.content_rule_"
PROFILE_PREFIX = "xccdf_org.sascheck.content_profile_"
FACT_PREFIX = "urn:xccdf:fact:"
# A sascheck rule id, as the results schema has it: the ARF is written on the host, and its
# ids reach the page, CSV cells and terminals
RULE_ID = re.compile(r"[a-z][a-z0-9_]{0,63}")


class ArfError(UserInputError):
    """Not a readable ARF report from the sascheck content."""


@dataclass
class ArfHeader:
    target: str = ""
    start_time: str = ""
    facts: dict[str, str] = field(default_factory=dict)


def _took_identity(tag: str, element: etree._Element, into: ArfHeader | ArfHost) -> bool:
    """The TestResult's target or one of its target facts, taken into ``into``; False for
    any other element."""
    if tag == f"{NS_XCCDF}target":
        into.target = (element.text or "").strip()
    elif tag == f"{NS_XCCDF}fact":
        name = element.get("name", "")
        if name.startswith(FACT_PREFIX):
            into.facts[name[len(FACT_PREFIX):]] = (element.text or "").strip()
    else:
        return False
    return True


@dataclass
class ArfHost:
    target: str = ""
    profile: str = ""
    start_time: str = ""
    facts: dict[str, str] = field(default_factory=dict)
    results: dict[str, str] = field(default_factory=dict)  # rule id -> XCCDF result
    # What oscap's OVAL saw: the system's facts (os_name, os_version, architecture,
    # primary_host_name) and, per rule, the items its check compared.
    system: dict[str, str] = field(default_factory=dict)
    items: dict[str, list[OvalItem]] = field(default_factory=dict)


MAX_ARF_BYTES = 512 << 20


def read_arf(path: str) -> ArfHost:
    """Rule results of one ARF file. Every element is dropped once read, so memory stays
    flat however large (or hostile: millions of empty elements) the file is."""
    try:
        size = os.stat(path).st_size
    except OSError as exc:
        raise ArfError(f"{path}: {exc.strerror}") from exc
    if size > MAX_ARF_BYTES:
        raise ArfError(f"{path}: larger than {MAX_ARF_BYTES >> 20} MiB; not an ARF report "
                       "of the sascheck data stream")
    host = ArfHost()
    oval = OvalReader()
    checks: dict[str, str] = {}  # rule id -> the OVAL definition its check names
    report = ""
    rule = ["", "", ""]  # the rule-result being read: rule id, its result, its check's name
    try:
        for event, element in etree.iterparse(path, events=("start", "end"),
                                              resolve_entities=False, no_network=True,
                                              huge_tree=True):
            tag = element.tag
            if event == "start":
                if tag == f"{NS_XCCDF}rule-result":
                    idref = element.get("idref", "")
                    rule[:] = [idref[len(RULE_PREFIX):] if idref.startswith(RULE_PREFIX)
                               else "", "", ""]
                elif tag == f"{NS_XCCDF}TestResult":
                    host.start_time = element.get("start-time", "")
                elif tag == f"{NS_ARF}report":
                    report = str(element.get("id", ""))
                continue
            # What a rule-result holds is taken from its children as each ends, so that
            # nothing of it is kept whole (millions of empty children cost nothing).
            if tag == f"{NS_XCCDF}result" and parent_tag(element) == f"{NS_XCCDF}rule-result":
                rule[1] = (element.text or "").strip()
            elif tag == f"{NS_XCCDF}check-content-ref" and rule[0] and not rule[2]:
                rule[2] = str(element.get("name", ""))
            elif tag == f"{NS_XCCDF}rule-result":
                if rule[0] and not RULE_ID.fullmatch(rule[0]):
                    raise ArfError(f"{path}: a rule-result for {rule[0][:64]!r}, not a "
                                   "sascheck rule id ([a-z][a-z0-9_]*, at most 64)")
                if rule[0] and rule[1]:
                    host.results[rule[0]] = rule[1]
                    if rule[2]:
                        checks[rule[0]] = rule[2]
                rule[:] = ["", "", ""]
            elif _took_identity(tag, element, host):
                pass
            elif tag == f"{NS_XCCDF}profile" and parent_tag(element) == f"{NS_XCCDF}TestResult":
                idref = element.get("idref", "")
                host.profile = idref[len(PROFILE_PREFIX):] if idref.startswith(
                    PROFILE_PREFIX) else idref
            else:
                oval.ended(report, element)
            # Read: free it and its read siblings.
            element.clear()
            parent = element.getparent()
            while parent is not None and element.getprevious() is not None:
                del parent[0]
    except (OSError, etree.XMLSyntaxError) as exc:
        raise ArfError(f"{path}: {exc}") from exc
    if not host.results:
        raise ArfError(f"{path}: no sascheck rule results (is it ARF from sascheck-ds.xml?)")
    host.system = oval.system
    host.items = {rule: found for rule, definition in checks.items()
                  if (found := oval.items_of(definition))}
    return host


def read_arf_header(path: str) -> ArfHeader:
    """Only what names the host and dates the scan (the TestResult's start time, target and
    target facts), for deciding which files are one host; read_arf reads the rest. Stops at
    the TestResult's end, and drops each data stream copy and request as it ends."""
    try:
        if os.stat(path).st_size > MAX_ARF_BYTES:
            raise ArfError(f"{path}: larger than {MAX_ARF_BYTES >> 20} MiB; not an ARF "
                           "report of the sascheck data stream")
    except OSError as exc:
        raise ArfError(f"{path}: {exc.strerror}") from exc
    header = ArfHeader()
    dropped = (f"{NS_ARF}report-request", f"{NS_ARF}asset", f"{NS_ARF}report")
    try:
        for event, element in etree.iterparse(
                path, events=("start", "end"), resolve_entities=False, no_network=True,
                huge_tree=True, tag=(f"{NS_XCCDF}TestResult", f"{NS_XCCDF}target",
                                     f"{NS_XCCDF}fact", *dropped)):
            tag = element.tag
            if event == "start":
                if tag == f"{NS_XCCDF}TestResult":
                    header.start_time = element.get("start-time", "")
                continue
            if tag == f"{NS_XCCDF}TestResult":
                break
            if not _took_identity(tag, element, header) and tag in dropped:
                element.clear()
    except (OSError, etree.XMLSyntaxError) as exc:
        raise ArfError(f"{path}: {exc}") from exc
    return header
