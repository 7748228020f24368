"""Read oscap's ARF (--results-arf) for the sascheck data stream: rule results per host.

Streaming (lxml iterparse, elements cleared as they are read) so a fleet of large ARF
files stays within memory.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from lxml import etree

NS_XCCDF = "{http://checklists.nist.gov/xccdf/1.2}"
RULE_PREFIX = "xccdf_org.sascheck.content_rule_"
PROFILE_PREFIX = "xccdf_org.sascheck.content_profile_"
FACT_PREFIX = "urn:xccdf:fact:"


class ArfError(Exception):
    """Not a readable ARF report from the sascheck content."""


@dataclass
class ArfHost:
    target: str = ""
    profile: str = ""
    start_time: str = ""
    facts: dict[str, str] = field(default_factory=dict)
    results: dict[str, str] = field(default_factory=dict)  # rule id -> XCCDF result


def read_arf(path: str) -> ArfHost:
    host = ArfHost()
    try:
        for _, element in etree.iterparse(path, events=("end",), resolve_entities=False,
                                          no_network=True, huge_tree=True):
            tag = element.tag
            if tag == f"{NS_XCCDF}rule-result":
                idref = element.get("idref", "")
                result = element.find(f"{NS_XCCDF}result")
                if idref.startswith(RULE_PREFIX) and result is not None and result.text:
                    host.results[idref[len(RULE_PREFIX):]] = result.text.strip()
                element.clear()
            elif tag == f"{NS_XCCDF}target":
                host.target = (element.text or "").strip()
            elif tag == f"{NS_XCCDF}fact":
                name = element.get("name", "")
                if name.startswith(FACT_PREFIX):
                    host.facts[name[len(FACT_PREFIX):]] = (element.text or "").strip()
            elif tag == f"{NS_XCCDF}TestResult":
                host.start_time = element.get("start-time", "")
                profile = element.find(f"{NS_XCCDF}profile")
                if profile is not None:
                    idref = profile.get("idref", "")
                    host.profile = idref[len(PROFILE_PREFIX):] if idref.startswith(
                        PROFILE_PREFIX) else idref
            elif tag in (f"{NS_XCCDF}Benchmark",):
                element.clear()  # the benchmark copy in the report is not needed
    except (OSError, etree.XMLSyntaxError) as exc:
        raise ArfError(f"{path}: {exc}") from exc
    if not host.results:
        raise ArfError(f"{path}: no sascheck rule results (is it ARF from sascheck-ds.xml?)")
    return host
