"""The XCCDF 1.2 benchmark: values, profiles, rules with their OVAL checks and platforms."""

from __future__ import annotations

import re
from collections.abc import Mapping

from lxml import etree

from ..rules import Catalogue, Rule, Variable
from ..rules.check_kinds import GROUPS, fix_traits
from ..rules.host_layout import SAS_ROLE_VALUES
from .platforms import CPE_PREFIX, facts_for, os_platform_names

NS_XCCDF = "http://checklists.nist.gov/xccdf/1.2"
NS_CPE_LANG = "http://cpe.mitre.org/language/2.0"
NS_DC = "http://purl.org/dc/elements/1.1/"
NS_XHTML = "http://www.w3.org/1999/xhtml"
OVAL_SYSTEM = "http://oval.mitre.org/XMLSchema/oval-definitions-5"
ID_PREFIX = "xccdf_org.sascheck.content_"
OVAL_HREF = "sascheck-oval.xml"
SEVERITY = {"low": "low", "medium": "medium", "high": "high"}
VALUE_TYPES = {"paths": "string", "strings": "string", "integer": "number", "boolean": "boolean"}


def rule_id(name: str) -> str:
    return f"{ID_PREFIX}rule_{name}"


def profile_id(name: str) -> str:
    return f"{ID_PREFIX}profile_{name}"


# A rule's stable identifier, kept when its title or check changes (XCCDF ident, as SSG
# gives each rule its CCE). A URN: the project holds no web domain to name it by.
IDENT_SYSTEM = "urn:sascheck:rules"
NOTICE = ("sascheck: Copyright the sascheck developers. Licensed under the Apache License, "
          "Version 2.0 (https://www.apache.org/licenses/LICENSE-2.0); distributed on an "
          "\"AS IS\" basis, without warranties or conditions of any kind. The rules restate, "
          "in the project's own words, recommendations of the Red Hat and SAS documents each "
          "rule cites.")


def benchmark_status(version: str) -> str:
    """accepted for a release (1.2.3), draft for anything else (1.2.3.dev4, 1.3.0rc1)."""
    return "accepted" if re.fullmatch(r"[0-9]+(\.[0-9]+)*", version) else "draft"


def value_id(name: str) -> str:
    return f"{ID_PREFIX}value_{name}"


def value_text(variable: Variable, value: object) -> str:
    """A site value as XCCDF text: lists comma-separated, booleans lower-case. An empty
    list is a lone comma: oscap cannot substitute an empty Value into a fix."""
    if isinstance(value, list):
        return ",".join(str(v) for v in value) or ","
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def x(tag: str, text: str | None = None, **attrs: str) -> etree._Element:
    element = etree.Element(f"{{{NS_XCCDF}}}{tag}")
    for key, value in attrs.items():
        element.set(key, value)
    if text is not None:
        element.text = text
    return element


def _sub(parent: etree._Element, tag: str, text: str | None = None,
         **attrs: str) -> etree._Element:
    child = x(tag, text, **attrs)
    parent.append(child)
    return child


def _platform_spec(catalogue: Catalogue) -> etree._Element:
    spec = etree.Element(f"{{{NS_CPE_LANG}}}platform-specification",
                         nsmap={"cpe-lang": NS_CPE_LANG})
    for rule in catalogue.rules.values():
        roles, extras = facts_for(rule)
        platform = etree.SubElement(spec, f"{{{NS_CPE_LANG}}}platform",
                                    id=f"sascheck_platform_{rule.id}")
        etree.SubElement(platform, f"{{{NS_CPE_LANG}}}title").text = \
            f"Where {rule.id} applies"
        test = etree.SubElement(platform, f"{{{NS_CPE_LANG}}}logical-test",
                                operator="AND", negate="false")
        any_role = etree.SubElement(test, f"{{{NS_CPE_LANG}}}logical-test", operator="OR",
                                    negate="false")
        for role in roles:
            etree.SubElement(any_role, f"{{{NS_CPE_LANG}}}fact-ref", name=CPE_PREFIX + role)
        for extra in extras:
            etree.SubElement(test, f"{{{NS_CPE_LANG}}}fact-ref", name=CPE_PREFIX + extra)
    return spec


def _check(definition: str, exports: list[tuple[str, str]], selector: str | None
           ) -> etree._Element:
    check = x("check", system=OVAL_SYSTEM)
    if selector:
        check.set("selector", selector)
    for oval_variable, name in exports:
        _sub(check, "check-export", **{"export-name": oval_variable, "value-id": value_id(name)})
    _sub(check, "check-content-ref", href=OVAL_HREF, name=definition)
    return check


SUB_MARK = "\x00"  # text between two marks names the site value of an XCCDF <sub>
# Text between two marks names a shared piece of fix text: an XCCDF <plain-text>, stored
# once in the benchmark, that a <sub> brings into each fix naming it.
PLAIN_TEXT_MARK = "\x01"
_MARKS = re.compile("(\x00[^\x00]*\x00|\x01[^\x01]*\x01)")


def plain_text_id(name: str) -> str:
    return f"{ID_PREFIX}text_{name}"


def fix_element(rule: Rule, system: str, text: str) -> etree._Element:
    """An XCCDF <fix>; marked site values and shared pieces become <sub> elements."""
    kind = system.rsplit(":", 1)[-1]
    element = x("fix", system=system, id=f"{rule.id}_{kind}", **fix_traits(rule.kind).xccdf())
    parts = _MARKS.split(text)
    element.text = parts[0]
    for index in range(1, len(parts), 2):
        name = parts[index][1:-1]
        sub = _sub(element, "sub", idref=value_id(name), use="value") \
            if parts[index][0] == SUB_MARK else _sub(element, "sub", idref=plain_text_id(name))
        sub.tail = parts[index + 1]
    return element


def named_pieces(fixes: Mapping[str, list[tuple[str, str]]]) -> set[str]:
    """The shared pieces the fixes name."""
    return {match[1:-1] for texts in fixes.values() for _, text in texts
            for match in _MARKS.findall(text) if match[0] == PLAIN_TEXT_MARK}


def _rule(rule: Rule, definition: str | None, exports: list[tuple[str, str]],
          fixes: list[tuple[str, str]]) -> etree._Element:
    element = x("Rule", id=rule_id(rule.id), selected="true", severity=SEVERITY[rule.severity],
                weight="10.000000", role="full")
    _sub(element, "title", rule.title)
    _sub(element, "description", rule.description)
    for reference in rule.references:
        if reference.source.url:
            _sub(element, "reference", reference.citation, href=reference.source.url)
        else:  # a seed paper with no public address: said, not left to be guessed
            _sub(element, "reference", f"{reference.citation} (not published online)")
    _sub(element, "rationale", rule.rationale)
    _sub(element, "platform", idref=f"#sascheck_platform_{rule.id}")
    _sub(element, "ident", f"SASCHECK-{rule.id}", system=IDENT_SYSTEM)
    if rule.manual_fix:  # work for a person: told, with no script (as SSG's manual rules)
        _sub(element, "fixtext", rule.manual_fix)  # its traits vary with the site: unknown
    element.extend(fix_element(rule, system, text) for system, text in fixes)
    if definition is None:
        return element  # no OVAL check (measured, or beyond OVAL): oscap says notchecked
    # SAS file-system rules too: their OVAL is an error where no SAS directory is named or
    # one named is missing (content/judgeable.py), so values set by any tailoring
    # tool take effect without selecting a check.
    element.append(_check(definition, exports, None))
    return element


def benchmark(catalogue: Catalogue, version: str, date: str,
              definitions: Mapping[str, str], exports: Mapping[str, list[tuple[str, str]]],
              fixes: Mapping[str, list[tuple[str, str]]] | None = None,
              shared: Mapping[str, str] | None = None) -> etree._Element:
    """``exports[rule]`` lists the (OVAL external variable, site value) pairs its check needs;
    ``shared`` holds the pieces of fix text the fixes name (PLAIN_TEXT_MARK), by name."""
    namespaces = {None: NS_XCCDF, "xhtml": NS_XHTML, "dc": NS_DC, "cpe-lang": NS_CPE_LANG}
    root = etree.Element(f"{{{NS_XCCDF}}}Benchmark", nsmap=namespaces)  # type: ignore[arg-type]
    root.set("id", f"{ID_PREFIX}benchmark_sascheck")
    root.set("resolved", "1")
    root.set("style", "SCAP_1.3")
    root.set("{http://www.w3.org/XML/1998/namespace}lang", "en-US")
    _sub(root, "status", benchmark_status(version), date=date)
    _sub(root, "title", "sascheck: Linux tuning for SAS analytics on RHEL")
    _sub(root, "description", "Checks the operating-system tuning that Red Hat and SAS "
                              "published for SAS on Red Hat Enterprise Linux: Transparent Huge "
                              "Pages, I/O schedulers, read-ahead, write barriers, noatime, file "
                              "systems, tuned, the CPU governor and persistence across reboots.")
    _sub(root, "notice", NOTICE, id="sascheck-licence")
    named = named_pieces(fixes or {})
    if named - set(shared or {}):
        raise ValueError(f"fix text names pieces never given: {sorted(named - set(shared or {}))}")
    for name in sorted(named):
        # CDATA: oscap reads a plain-text's inner XML (remediations/bash_library.py, SHARED)
        _sub(root, "plain-text", id=plain_text_id(name)).text = etree.CDATA((shared or {})[name])
    root.append(_platform_spec(catalogue))
    for name in os_platform_names():  # any one applies (XCCDF 1.2 section 6.2.5)
        _sub(root, "platform", idref=name)
    _sub(root, "version", version, time=f"{date}T00:00:00")
    metadata = _sub(root, "metadata")
    for tag, text in (("creator", "sascheck"), ("publisher", "sascheck"),
                      ("contributor", "sascheck developers"),
                      # SCAP 1.3 asks for a source (SRC-8-1); no web address is the project's
                      ("source", "urn:sascheck:content")):
        etree.SubElement(metadata, f"{{{NS_DC}}}{tag}").text = text
    for profile in catalogue.profiles.values():
        element = _sub(root, "Profile", id=profile_id(profile.name))
        _sub(element, "title", profile.title)
        _sub(element, "description", profile.description)
        for name in catalogue.rules:  # every rule, so that none is selected by default
            _sub(element, "select", idref=rule_id(name),
                 selected="true" if name in profile.rule_ids else "false")
        for name, value in profile.values.items():
            _sub(element, "set-value", value_text(catalogue.variables[name], value),
                 idref=value_id(name))
    for variable in catalogue.variables.values():
        root.append(_value(variable))
    for name, (title, kinds) in GROUPS.items():
        group = _sub(root, "Group", id=f"{ID_PREFIX}group_{name}")
        _sub(group, "title", title)
        _sub(group, "description", f"The rules that judge {title[0].lower()}{title[1:]}.")
        for rule in catalogue.rules.values():
            if rule.kind in kinds:
                group.append(_rule(rule, definitions.get(rule.id), exports[rule.id],
                                   (fixes or {}).get(rule.id, [])))
    return root


# oscap reads the SAS directories from these values only: it cannot follow sasv9.cfg.
_OSCAP_NAMES_SAS = ("Under oscap, name them here (sascheck tailor writes the directories it "
                    "discovers): with none named, or one named that the host lacks, the SAS "
                    "rules are error.")


def _value(variable: Variable) -> etree._Element:
    """An XCCDF Value an administrator can set from its title and description alone."""
    element = x("Value", id=value_id(variable.name), type=VALUE_TYPES[variable.type])
    summary = variable.description.split(". ")[0].rstrip(".")
    _sub(element, "title", f"{variable.name}: {summary}")
    how = {"paths": "Absolute paths, separated by commas; a lone comma means none.",
           "strings": "Words separated by commas.",
           "integer": "A whole number.", "boolean": "true or false."}[variable.type]
    text = variable.description
    if variable.name in SAS_ROLE_VALUES.values():
        text = f"{text} {_OSCAP_NAMES_SAS}"
    elif variable.name == "sas_config_files":
        text = f"{text} sascheck only: OVAL reads no SAS configuration, so oscap needs the " \
               "directories named in the three SAS directory values."
    _sub(element, "description", f"{text} {how}")
    _sub(element, "value", value_text(variable, variable.default))
    if variable.minimum is not None:
        _sub(element, "lower-bound", str(variable.minimum))
    if variable.maximum is not None:
        _sub(element, "upper-bound", str(variable.maximum))
    return element
