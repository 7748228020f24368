"""JUnit XML: one test case per rule, one suite per host, for CI dashboards."""

from __future__ import annotations

from collections.abc import Sequence

from lxml import etree

from .escaping import for_xml
from .model import HostView


def render_junit(hosts: Sequence[HostView]) -> str:
    """Every string from a host passes through for_xml: lxml refuses (with an exception,
    after the JSON was already written) what XML 1.0 cannot carry."""
    suites = etree.Element("testsuites", name="sascheck")
    for host in hosts:
        name = for_xml(host.name)
        suite = etree.SubElement(suites, "testsuite", name=name,
                                 tests=str(len(host.rules)),
                                 failures=str(host.count("fail")),
                                 errors=str(host.count("error")),
                                 skipped=str(len(host.rules) - host.count("pass")
                                             - host.count("fail") - host.count("error")))
        for rule in host.rules:
            case = etree.SubElement(suite, "testcase", classname=f"sascheck.{name}",
                                    name=for_xml(rule.id))
            detail = for_xml(rule.actual or rule.message)
            if rule.result == "fail":
                failure = etree.SubElement(case, "failure",
                                           message=for_xml(f"expected: {rule.expected}"))
                failure.text = detail
            elif rule.result == "error":
                etree.SubElement(case, "error", message=detail or "error")
            elif rule.result != "pass":
                etree.SubElement(case, "skipped",
                                 message=for_xml(f"{rule.result}: {rule.message}"))
    return etree.tostring(suites, xml_declaration=True, encoding="UTF-8",
                          pretty_print=True).decode("utf-8")
