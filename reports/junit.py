"""JUnit XML: one test case per rule, one suite per host, for CI dashboards."""

from __future__ import annotations

from collections.abc import Sequence

from lxml import etree

from .model import HostView


def render_junit(hosts: Sequence[HostView]) -> str:
    suites = etree.Element("testsuites", name="sascheck")
    for host in hosts:
        suite = etree.SubElement(suites, "testsuite", name=host.name,
                                 tests=str(len(host.rules)),
                                 failures=str(host.count("fail")),
                                 errors=str(host.count("error")),
                                 skipped=str(len(host.rules) - host.count("pass")
                                             - host.count("fail") - host.count("error")))
        for rule in host.rules:
            case = etree.SubElement(suite, "testcase", classname=f"sascheck.{host.name}",
                                    name=rule.id)
            detail = rule.actual or rule.message
            if rule.result == "fail":
                failure = etree.SubElement(case, "failure", message=f"expected: {rule.expected}")
                failure.text = detail
            elif rule.result == "error":
                etree.SubElement(case, "error", message=detail or "error")
            elif rule.result != "pass":
                etree.SubElement(case, "skipped", message=f"{rule.result}: {rule.message}")
    return etree.tostring(suites, xml_declaration=True, encoding="UTF-8",
                          pretty_print=True).decode("utf-8")
